//! Derive on real published agent history, scored against the labels a reviewer wrote
//! (tests/fixtures/realdata-labels.json). The archives live outside the repo, at
//! `$CALLUS_REALDATA` or `../shared/realdata`; without them this test says so loudly and
//! passes. `scripts/bench real` runs it with its score table shown.
//!
//! Each store of the labels (each archive alone, both in one store, as the README's quick
//! start does) is imported, derived over all dates, and derived again over the file the
//! first run wrote (a merge must never abort). Then: every keeper not marked
//! `known_missing` is proposed as its own candidate with the tier, ceiling and counts its
//! label states; no candidate's signature is one of a refusal or a harness failure; every
//! labelled non-keeper is not proposed and is reported as the finding (environment, guess)
//! its label names; every other candidate is listed with the reason its label gives, or as
//! unlabelled. The report ends with each store's precision and recall.

use std::fmt::Write as _;
use std::path::PathBuf;

use serde_json::Value;

use crate::common::{Env, json, stderr};

fn data_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("CALLUS_REALDATA").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/realdata"),
        PathBuf::from,
    );
    dir.join("README.md").is_file().then_some(dir)
}

fn labels() -> Value {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/realdata-labels.json");
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn s<'a>(v: &'a Value, k: &str) -> &'a str {
    v[k].as_str().unwrap_or_default()
}

/// Does candidate `c` carry the failure `label` describes?
fn matches(c: &Value, label: &Value) -> bool {
    c["tool"] == label["tool"]
        && c["meta"]["error_signature"]
            .as_str()
            .unwrap_or_default()
            .contains(s(label, "signature"))
}

#[test]
fn derive_on_real_history_finds_the_keepers_and_nothing_built_from_non_failures() {
    let Some(data) = data_dir() else {
        // CI sets CALLUS_REALDATA_REQUIRED when the archives are there: losing them then is
        // a failure, not a quiet skip.
        assert!(
            std::env::var_os("CALLUS_REALDATA_REQUIRED").is_none(),
            "CALLUS_REALDATA_REQUIRED is set but there is no real history at $CALLUS_REALDATA \
             or ../shared/realdata"
        );
        eprintln!(
            "SKIPPED derive_on_real_history: no real history at $CALLUS_REALDATA or ../shared/realdata"
        );
        return;
    };
    let labels = labels();
    let mut report = String::new();
    let mut problems = Vec::new();
    for (store, archives) in labels["stores"].as_object().unwrap() {
        let env = Env::new();
        let archives: Vec<&str> = archives
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        let mut args = vec!["record".to_string(), "import".into(), "--json".into()];
        for a in &archives {
            args.push(
                data.join(s(&labels["archives"], a))
                    .to_string_lossy()
                    .into_owned(),
            );
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = env.run(&args, b"");
        assert_eq!(out.status.code(), Some(0), "{store}: {}", stderr(&out));
        let derive = ["derive", "--since", "2000-01-01"];
        let first = env.run(&derive, b"");
        let again = env.run(&derive, b"");
        for (run, out) in [("first", &first), ("second", &again)] {
            if out.status.code() != Some(0) {
                problems.push(format!("{store}: {run} derive aborted: {}", stderr(out)));
            }
        }
        let doc = json(&env.run(&["derive", "--since", "2000-01-01", "--json"], b""));
        let candidates = doc["rules"].as_array().cloned().unwrap_or_default();
        let _ = write!(report, "\n[{store}] {} candidate(s)\n", candidates.len());
        let mut keepers_found = 0;
        for k in labels["keepers"].as_array().unwrap() {
            if !archives.contains(&s(k, "archive")) {
                continue;
            }
            let found: Vec<&Value> = candidates.iter().filter(|c| matches(c, k)).collect();
            let id = s(k, "id");
            match (found.first(), k.get("known_missing")) {
                (None, Some(why)) => {
                    let _ = writeln!(report, "  MISSING (known) {id}: {why}");
                }
                (None, None) => {
                    let _ = writeln!(report, "  MISSING {id}");
                    problems.push(format!("{store}: keeper {id} not proposed"));
                }
                (Some(c), _) => {
                    keepers_found += 1;
                    let m = &c["meta"];
                    let _ = writeln!(
                        report,
                        "  found {id}: {} {} ({} of {} attempts, {} masked), ceiling {}",
                        s(c, "id"),
                        s(m, "tier"),
                        m["fail_count"],
                        m["attempt_count"],
                        m["masked_count"],
                        s(m, "action_ceiling")
                    );
                    if found.len() > 1 {
                        problems.push(format!(
                            "{store}: keeper {id} split over {} candidates",
                            found.len()
                        ));
                    }
                    for (field, meta) in [("tier", "tier"), ("ceiling", "action_ceiling")] {
                        if let Some(want) = k[field].as_str()
                            && s(m, meta) != want
                        {
                            problems.push(format!(
                                "{store}: {id} {field} {} (want {want})",
                                s(m, meta)
                            ));
                        }
                    }
                    for (field, meta) in [
                        ("min_fail_count", "fail_count"),
                        ("min_masked", "masked_count"),
                    ] {
                        if let Some(want) = k[field].as_u64()
                            && m[meta].as_u64().unwrap_or(0) < want
                        {
                            problems
                                .push(format!("{store}: {id} {meta} {} (want >= {want})", m[meta]));
                        }
                    }
                }
            }
        }
        for c in &candidates {
            let sig = c["meta"]["error_signature"].as_str().unwrap_or_default();
            let b = &c["meta"]["backtest"];
            if b["crossfire"].as_u64() > b["failures"].as_u64()
                && !c["meta"]["crossfire_note"]
                    .as_str()
                    .is_some_and(|n| n.contains("more successes than failures"))
            {
                problems.push(format!(
                    "{store}: {} matches more successes than failures and does not say why",
                    s(c, "id")
                ));
            }
            for bad in labels["never_in_a_candidate"].as_array().unwrap() {
                let bad = bad.as_str().unwrap();
                if sig.contains(bad) {
                    problems.push(format!(
                        "{store}: {} is built from a non-failure ({bad})",
                        s(c, "id")
                    ));
                }
            }
            if labels["keepers"]
                .as_array()
                .unwrap()
                .iter()
                .any(|k| matches(c, k))
            {
                continue;
            }
            let why = labels["not_keepers"]
                .as_array()
                .unwrap()
                .iter()
                .find(|n| matches(c, n) && (s(n, "signature").is_empty() == sig.is_empty()))
                .map_or("UNLABELLED", |n| s(n, "why"));
            let _ = writeln!(report, "  not a keeper {} [{sig}]: {why}", s(c, "id"));
        }
        // Every labelled non-keeper of these archives is reported as the finding its label
        // names, never proposed.
        let not_rules = doc["generated"]["not_rules"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for n in labels["not_keepers"].as_array().unwrap() {
            if !archives.contains(&s(n, "archive")) {
                continue;
            }
            let sig = s(n, "signature");
            if candidates.iter().any(|c| matches(c, n)) {
                problems.push(format!("{store}: non-keeper [{sig}] proposed"));
            }
            let Some(want) = n["finding"].as_str() else {
                continue;
            };
            match not_rules
                .iter()
                .find(|f| f["tool"] == n["tool"] && s(f, "error_signature").contains(sig))
            {
                Some(f) if s(f, "finding") == want => {
                    let _ = writeln!(
                        report,
                        "  {want} (not proposed) {} [{sig}]: {} failures, {} of {} matched calls failed",
                        s(f, "id"),
                        f["fail_count"],
                        f["matched_failures"],
                        f["matched"]
                    );
                }
                Some(f) => problems.push(format!(
                    "{store}: [{sig}] reported as {} (want {want})",
                    s(f, "finding")
                )),
                None => problems.push(format!("{store}: [{sig}] not reported as {want}")),
            }
        }
        for e in doc["generated"]["environment"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let _ = writeln!(
                report,
                "  environment: {}: {} call(s), {} program(s), {} session(s)",
                s(e, "kind"),
                e["calls"],
                e["programs"],
                e["sessions"]
            );
        }
        let labelled = labels["keepers"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|k| archives.contains(&s(k, "archive")))
            .count();
        let _ = writeln!(
            report,
            "  precision {keepers_found}/{} proposals are keepers; recall {keepers_found}/{labelled} keepers proposed",
            candidates.len()
        );
    }
    eprintln!("{report}");
    assert!(problems.is_empty(), "{}\n{report}", problems.join("\n"));
}
