//! Derive's candidates judged as they would be enforced (issue 25): every candidate rule is
//! replayed over the whole window with `guard check --history` (the guard's own matcher,
//! conditions included), and a candidate finds a keeper only when at least two of the
//! failures it fires on are that keeper's and they are at least half of its failures.
//!
//! Histories: the two public archives of `tests/fixtures/realdata-labels.json` (at
//! `$CALLUS_REALDATA` or `../shared/realdata`) and those of
//! `tests/fixtures/realdata-more-labels.json` (each at its `path`, or under
//! `$CALLUS_REALDATA_MORE/<name>`). A history that is not there is reported and skipped (the
//! archive test fails instead when `CALLUS_REALDATA_REQUIRED` is set). The score of each
//! history is printed (`scripts/bench real`) and must not fall below its labels'
//! `rule_level_floor`: a ratchet, raised as derive improves.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::path::PathBuf;

use serde_json::Value;

use crate::common::{Env, json, stderr};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn labels(file: &str) -> Value {
    serde_json::from_slice(&std::fs::read(root().join("tests/fixtures").join(file)).unwrap())
        .unwrap()
}

/// Where each labelled history is: (name, the paths to import, the labels file's value).
fn histories() -> Vec<(String, Option<Vec<PathBuf>>, Value)> {
    let mut out = Vec::new();
    let base = labels("realdata-labels.json");
    let data = std::env::var_os("CALLUS_REALDATA")
        .map_or_else(|| root().join("../shared/realdata"), PathBuf::from);
    for (name, rel) in base["archives"].as_object().unwrap() {
        let dir = data.join(rel.as_str().unwrap());
        out.push((name.clone(), dir.is_dir().then(|| vec![dir]), base.clone()));
    }
    let more = labels("realdata-more-labels.json");
    for (name, h) in more["histories"].as_object().unwrap() {
        let candidates = [
            std::env::var_os("CALLUS_REALDATA_MORE").map(|d| PathBuf::from(d).join(name)),
            h["path"].as_str().map(|p| root().join(p)),
        ];
        let dir = candidates.into_iter().flatten().find(|d| d.is_dir());
        out.push((name.clone(), dir.map(|d| vec![d]), more.clone()));
    }
    out
}

/// The failing calls in the store: id → (tool, error, command).
fn failures(env: &Env) -> HashMap<String, (String, String, String)> {
    let conn = rusqlite::Connection::open(env.db()).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT tool_use_id, tool, coalesce(error, ''), coalesce(command, '') FROM tool_calls \
             WHERE status IN ('failure', 'denied', 'answer', 'harness')",
        )
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?, r.get(3)?))))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

fn keeper_of<'k>(
    keepers: &'k [&Value],
    (tool, error, command): &(String, String, String),
) -> Option<&'k str> {
    keepers.iter().find_map(|k| {
        let re = |key: &str| {
            k[key].as_str().map(|r| {
                regex::RegexBuilder::new(r)
                    .case_insensitive(true)
                    .build()
                    .unwrap()
            })
        };
        // A keeper's tool is an anchored regex on the stored tool name (`Edit|Write`).
        let tool_ok = k["tool"].as_str().is_some_and(|t| {
            regex::Regex::new(&format!("^(?:{t})$"))
                .unwrap()
                .is_match(tool)
        });
        let err_ok = re("error_re").is_some_and(|r| r.is_match(error));
        let cmd_ok = re("command_re").is_none_or(|r| r.is_match(command));
        (tool_ok && err_ok && cmd_ok).then(|| k["id"].as_str().unwrap())
    })
}

#[test]
fn derive_candidates_scored_as_enforced_on_real_histories() {
    let mut report = String::from(
        "\nrule-level score (candidate finds a keeper: >= 2 and >= half of the failures it fires on)\n",
    );
    let mut problems = Vec::new();
    for (name, paths, labels) in histories() {
        let Some(paths) = paths else {
            let _ = writeln!(report, "[{name}] SKIPPED: history not present");
            continue;
        };
        let env = Env::new();
        let mut args = vec!["record".to_string(), "import".into(), "--json".into()];
        args.extend(paths.iter().map(|p| p.to_string_lossy().into_owned()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = env.run(&args, b"");
        assert_eq!(out.status.code(), Some(0), "{name}: {}", stderr(&out));
        let file = env.home_path().join("scored-candidates.json");
        let out = env.run(
            &[
                "derive",
                "--since",
                "2000-01-01",
                "--out",
                file.to_str().unwrap(),
            ],
            b"",
        );
        if out.status.code() != Some(0) {
            problems.push(format!("{name}: derive aborted: {}", stderr(&out)));
            continue;
        }
        let doc: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
        let candidates = doc["rules"].as_array().cloned().unwrap_or_default();
        let replay = env.run(
            &[
                "guard",
                "check",
                file.to_str().unwrap(),
                "--history",
                "2000-01-01",
                "--json",
            ],
            b"",
        );
        assert_eq!(replay.status.code(), Some(0), "{name}: {}", stderr(&replay));
        let replay = json(&replay);
        let keepers: Vec<&Value> = labels["keepers"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|k| k["history"].as_str().or(k["archive"].as_str()) == Some(name.as_str()))
            .collect();
        let failed = failures(&env);
        // Each candidate's failing calls, as replayed.
        let mut fired_failures: HashMap<String, Vec<String>> = HashMap::new();
        for d in replay["decisions"].as_array().into_iter().flatten() {
            if d["failed"] != true {
                continue;
            }
            for f in d["fired"].as_array().into_iter().flatten() {
                fired_failures
                    .entry(f["rule"].as_str().unwrap().to_string())
                    .or_default()
                    .push(d["tool_use_id"].as_str().unwrap().to_string());
            }
        }
        let mut found: HashSet<&str> = HashSet::new();
        let mut good = 0;
        let _ = writeln!(
            report,
            "[{name}] {} candidate(s), {} keeper(s)",
            candidates.len(),
            keepers.len()
        );
        for c in &candidates {
            let id = c["id"].as_str().unwrap();
            let ids = fired_failures.get(id).cloned().unwrap_or_default();
            let mut by_keeper: HashMap<&str, usize> = HashMap::new();
            for call in &ids {
                if let Some(k) = failed.get(call).and_then(|f| keeper_of(&keepers, f)) {
                    *by_keeper.entry(k).or_default() += 1;
                }
            }
            let best = by_keeper
                .iter()
                .max_by_key(|(k, n)| (**n, std::cmp::Reverse(**k)));
            let verdict = match best {
                Some((k, &n)) if n >= 2 && 2 * n >= ids.len() => {
                    found.insert(k);
                    good += 1;
                    format!("finds {k} ({n} of {} failures it fires on)", ids.len())
                }
                Some((k, &n)) => format!("NOT a find: {n} of its {} failures are {k}'s", ids.len()),
                None => format!(
                    "NOT a find: none of its {} failures is a keeper's",
                    ids.len()
                ),
            };
            let _ = writeln!(report, "  {id}: {verdict}");
        }
        for k in &keepers {
            let id = k["id"].as_str().unwrap();
            if !found.contains(id) {
                let _ = writeln!(report, "  MISSED {id}");
            }
        }
        let _ = writeln!(
            report,
            "  precision {good}/{} recall {}/{}",
            candidates.len(),
            found.len(),
            keepers.len()
        );
        if let Some(floor) = labels["rule_level_floor"].get(&name) {
            let want = floor["found"].as_u64().unwrap_or(0) as usize;
            if found.len() < want {
                problems.push(format!(
                    "{name}: {} keepers found at rule level, floor {want}",
                    found.len()
                ));
            }
        }
    }
    eprintln!("{report}");
    assert!(problems.is_empty(), "{}\n{report}", problems.join("\n"));
}
