//! `callus derive explain ID`: the evidence behind one candidate — its failing calls
//! (redacted, each with the segment it was blamed on and why), the successful calls of the same shape, the contrast that produced each
//! `unless` or narrowing, and the backtest of the pattern.
//!
//! The candidate is re-derived from the store over the window it was derived in (its
//! `meta.window` in `$CALLUS_HOME/candidates.json`, or in the reviewed ruleset it was promoted
//! into, when it is there, else `--since/--until`),
//! with the thresholds recorded in that file, and anecdotal clusters kept, so an id the
//! summary listed — proposed or withheld — can always be explained while its calls are in the
//! store. Ids are matched against every cluster folded into a candidate.

use serde_json::Value;

use super::candidate::WindowSpan;
use super::cluster::Kind;
use super::contrast::{
    MIN_SUCCESSES, NARROW_FAILURE_SHARE, NARROW_SUCCESS_SHARE, UNLESS_FAILURE_SHARE,
    UNLESS_SUCCESS_SHARE,
};
use super::explanation::{
    BacktestExplained, Blamed, CallSample, ClusterRow, ContrastExplained, ContrastRules,
    Explanation, FailedCall, Failures, FindingExplained, Patterns, ShapeSuccesses, SignatureRow,
};
use super::{Derivation, Derived, Options};
use crate::config::Home;
use crate::output::{print_json, table};
use crate::redact::redact_capped;
use crate::rules::layers::LayerPaths;
use crate::rules::tier;
use crate::window::{Window, iso};
use crate::{Error, Exit, Result};

/// Most failing calls listed.
const MAX_FAILURES: usize = 100;
/// Most successes listed.
const MAX_SUCCESSES: usize = 20;
/// Most characters of a sample command or error line shown (the JSON has them whole). The
/// same whatever the terminal: its width changes where lines wrap, never what they say.
const CELL_CHARS: usize = 100;

/// Run `derive explain ID`.
pub(crate) fn run(
    home: &Home,
    evidence: &crate::sync::Evidence,
    args: &super::Request,
    id: &str,
    json: bool,
    out: Option<&std::path::Path>,
) -> Result<Exit> {
    let mut options = Options::from_request(args)?;
    options.keep_anecdotal = true;
    let cwd = std::env::current_dir().ok();
    let paths = LayerPaths::resolve(home, cwd.as_deref());
    if let Some((window, generated)) = recorded(&paths, out.or(args.out.as_deref()), id) {
        options.window = window;
        // The tools it was derived with (`--include-tool`/`--exclude-tool` at the time).
        if let Some(excluded) = generated["excluded_tools"].as_array() {
            options.excluded = excluded
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect();
        }
        if let Some(n) = generated["min_count"].as_u64().filter(|n| *n > 0) {
            options.min_count = n;
        }
        if let Some(n) = generated["min_attempts"].as_u64() {
            options.min_attempts = n;
        }
    }
    options.reviewed = super::reviewed::load(&paths);
    let conn = super::open_store(evidence)?;
    let dv = super::derive(&conn, options)?;
    // A candidate already promoted into a reviewed layer is explained too, and says where:
    // its evidence in this window is what the reviewed rule now answers for.
    // So is a recurring cluster the outcome model judged no rule: it says what it is instead.
    let Some((d, promoted_in, finding)) = dv
        .candidates
        .iter()
        .map(|d| (d, None, None))
        .chain(
            dv.promoted
                .iter()
                .map(|(d, layer)| (d, Some(layer.as_str()), None)),
        )
        .chain(dv.not_rules.iter().map(|(d, k)| (d, None, Some(*k))))
        .find(|(d, _, _)| d.clusters.iter().any(|&i| dv.clusters[i].id() == id))
    else {
        return Err(not_found(&dv, id));
    };
    let explanation = Explanation {
        promoted_in: promoted_in.map(str::to_string),
        finding: finding.map(|k| FindingExplained {
            kind: k.label(),
            why: k.why(),
        }),
        ..report(&dv, d)
    };
    let report = serde_json::to_value(&explanation).map_err(|e| Error::json("explanation", e))?;
    if json {
        print_json(&report);
    } else {
        crate::output::print_text(&text(&report));
    }
    Ok(Exit::Ok)
}

/// The window `id` was derived in (its `meta.window`) and the `generated` block of the file
/// that records it: the `--out` file when given, the candidate file, then the reviewed layers (a promoted candidate
/// carries its `meta.window` along and is retired from the candidate file).
fn recorded(
    paths: &LayerPaths,
    out: Option<&std::path::Path>,
    id: &str,
) -> Option<(Window, Value)> {
    let out = out.map(std::path::Path::to_path_buf);
    let files = out
        .iter()
        .chain(std::iter::once(&paths.candidates))
        .chain(std::iter::once(&paths.user))
        .chain(paths.project.as_ref())
        .chain(&paths.env);
    files.into_iter().find_map(|file| {
        let text = std::fs::read_to_string(file).ok()?;
        let doc: Value = serde_json::from_str(&text).ok()?;
        let rule = doc["rules"].as_array()?.iter().find(|r| {
            r["id"] == id
                || r["meta"]["clusters"]
                    .as_array()
                    .is_some_and(|cs| cs.iter().any(|c| c["id"] == id))
        });
        let window = match rule {
            Some(rule) => Window::from_json(&rule["meta"]["window"])?,
            // A cluster judged no rule is listed in `generated.not_rules`, in the file's window.
            None => doc["generated"]["not_rules"]
                .as_array()?
                .iter()
                .any(|n| n["id"] == id)
                .then(|| Window::from_json(&doc["window"]))??,
        };
        Some((window, doc["generated"].clone()))
    })
}

/// Why there is nothing to explain.
fn not_found(dv: &Derivation, id: &str) -> Error {
    let w = &dv.options.window;
    let during = format!("in {} .. {}", iso(w.since_ms), iso(w.until_ms));
    match dv.clusters.iter().find(|c| c.id() == id) {
        Some(c) if c.kind == Kind::NoProgram => Error::Invalid(format!(
            "cluster '{id}' ran only shell builtins ({} failure(s) {during}): derive proposes no rule for it",
            c.count()
        )),
        Some(c) => Error::Invalid(format!(
            "cluster '{id}' has {} failure(s) {during}, fewer than --min-count {}",
            c.count(),
            dv.options.min_count
        )),
        None => Error::Invalid(format!(
            "no candidate or cluster '{id}' {during} (ids come from `callus derive`; for a candidate derived over another window, pass the file it was written to: --out FILE)"
        )),
    }
}

/// The explanation as JSON.
fn report(dv: &Derivation, d: &Derived) -> Explanation {
    let primary = &dv.clusters[d.clusters[0]];
    let mut failures: Vec<usize> = d
        .clusters
        .iter()
        .flat_map(|&i| dv.clusters[i].failures.iter().copied())
        .collect();
    failures.sort_by_key(|&i| dv.failures[i].started_ms);
    let sample = |i: usize| {
        let c = &dv.scan.calls[i];
        CallSample {
            at: iso(c.started_ms),
            command: redact_capped(&c.command, 300),
        }
    };
    let meta = d.rule.meta.as_ref();
    Explanation {
        id: d.id().to_string(),
        clusters: d
            .clusters
            .iter()
            .map(|&i| {
                let c = &dv.clusters[i];
                ClusterRow {
                    id: c.id(),
                    tool: c.group.glob.clone(),
                    shape: c.shape.clone(),
                    signature: c.signature.clone(),
                    fail_count: c.count(),
                }
            })
            .collect(),
        window: WindowSpan::from(dv.options.window),
        kind: d.proposal.kind,
        rule: patterns(&d.rule),
        failures: Failures {
            count: failures.len(),
            by_signature: signature_breakdown(dv, &failures),
            calls: failures
                .iter()
                .take(MAX_FAILURES)
                .map(|&i| failed_call(&dv.failures[i]))
                .collect(),
        },
        masked: masked_calls(dv, d),
        successes_of_shape: dv
            .shapes
            .get(&primary.shape)
            .filter(|_| matches!(primary.kind, Kind::Program { .. }))
            .map(|s| ShapeSuccesses {
                shape: primary.shape.clone(),
                attempts: s.attempts,
                successes: s.successes,
                samples: s
                    .samples
                    .iter()
                    .take(MAX_SUCCESSES)
                    .map(|&i| sample(i))
                    .collect(),
            }),
        contrast: d.contrast.as_ref().map(contrast),
        field_contrast: d.proposal.field_unless.clone(),
        backtest: BacktestExplained {
            meta: meta.map(|m| m.backtest.clone()).unwrap_or_default(),
            crossfire_samples: d
                .backtest
                .crossfire_samples
                .iter()
                .map(|&i| sample(i))
                .collect(),
        },
        tier: d.tier.label(),
        tier_basis: tier::describe(d.tier, d.rate, d.attempts.unwrap_or(0)),
        action_ceiling: d.tier.ceiling().as_str(),
        crossfire_note: meta.and_then(|m| m.crossfire_note.clone()),
        caveat: super::candidates::CAVEAT,
        promoted_in: None,
        finding: None,
    }
}

/// What the candidate rule matches.
fn patterns(rule: &super::candidate::Candidate) -> Patterns {
    Patterns {
        tool: rule.tool.clone(),
        field: rule.field.clone(),
        match_mode: rule.match_mode,
        any: (!rule.any.is_empty()).then(|| rule.any.clone()),
        unless: (!rule.unless.is_empty()).then(|| rule.unless.clone()),
        flags: rule.flags,
    }
}

/// The contrast, with the thresholds it applied in words.
fn contrast(k: &super::contrast::Contrast) -> ContrastExplained {
    ContrastExplained {
        successes: k.successes,
        failures: k.failures,
        rules: ContrastRules {
            min_successes: MIN_SUCCESSES,
            unless: format!(
                "a flag in >= {:.0}% of successes and <= {:.0}% of failures",
                UNLESS_SUCCESS_SHARE * 100.0,
                UNLESS_FAILURE_SHARE * 100.0
            ),
            narrow: format!(
                "a token in >= {:.0}% of failures and <= {:.0}% of successes",
                NARROW_FAILURE_SHARE * 100.0,
                NARROW_SUCCESS_SHARE * 100.0
            ),
        },
        tokens: k.tokens.clone(),
    }
}

/// One failed call as the explanation lists it.
fn failed_call(f: &super::calls::Failure) -> FailedCall {
    FailedCall {
        at: iso(f.started_ms),
        tool: f.tool.clone(),
        session: f.session.clone(),
        command: redact_capped(&f.command, 300),
        error: redact_capped(&f.error, 300),
        error_line: error_line(&f.error).map(|l| redact_capped(&l, 300)),
        blamed: blamed(f),
    }
}

/// The failures grouped by signature: count, sessions, days, and the error line of the
/// latest one.
fn signature_breakdown(dv: &Derivation, failures: &[usize]) -> Vec<SignatureRow> {
    use std::collections::{BTreeMap, BTreeSet};
    type Group<'a> = (u64, BTreeSet<&'a str>, BTreeSet<i64>, usize);
    let mut groups: BTreeMap<&str, Group<'_>> = BTreeMap::new();
    for &i in failures {
        let f = &dv.failures[i];
        let g = groups.entry(f.signature.as_str()).or_default();
        g.0 += 1;
        g.1.insert(f.session.as_deref().unwrap_or(""));
        g.2.insert(f.started_ms.div_euclid(86_400_000));
        g.3 = i;
    }
    let mut out: Vec<SignatureRow> = groups
        .into_iter()
        .map(|(sig, (n, sessions, days, last))| SignatureRow {
            signature: sig.to_string(),
            failures: n,
            sessions: sessions.len(),
            days: days.len(),
            error_line: error_line(&dv.failures[last].error).map(|l| redact_capped(&l, 300)),
        })
        .collect();
    out.sort_by_key(|r| std::cmp::Reverse(r.failures));
    out
}

/// The calls the candidate's pattern matches that exited 0 with a known failure's
/// signature in their output (counted as failures by the backtest).
fn masked_calls(dv: &Derivation, d: &Derived) -> Vec<CallSample> {
    let Ok(rule) = crate::rules::backtest::probe(&d.rule.to_map(), "explain") else {
        return Vec::new();
    };
    dv.scan
        .calls
        .iter()
        .filter(|c| c.masked && c.fired_by(&rule))
        .take(MAX_SUCCESSES)
        .map(|c| CallSample {
            at: iso(c.started_ms),
            command: redact_capped(&c.command, 300),
        })
        .collect()
}

/// The segment a Bash failure was blamed on and why (`crate::shell::blame`, as derive
/// clustered it); `None` for other tools or builtins only.
fn blamed(f: &super::calls::Failure) -> Option<Blamed> {
    if !super::cluster::ToolGroup::of(&f.tool).is_bash() {
        return None;
    }
    let split = crate::shell::split(&f.command);
    crate::shell::blame::blame(&split.segments, &f.error).map(|b| Blamed {
        segment: redact_capped(b.text(), 300),
        why: b.why.as_str(),
    })
}

fn error_line(error: &str) -> Option<String> {
    crate::record::error_line::error_line(error)
}

/// `v` on one line, whole: for the prose lines (ids, windows, patterns, tiers), which
/// `output::print_text` wraps to the terminal rather than cut.
fn whole(v: &Value) -> String {
    let s = match v {
        Value::String(s) => s.clone(),
        Value::Null => "-".into(),
        other => other.to_string(),
    };
    s.replace('\n', " ⏎ ")
}

/// `v` on one line, cut to [`CELL_CHARS`]: for sample commands and error lines, in the
/// tables and the sample lines, which can be any length.
fn cell(v: &Value) -> String {
    let one_line = whole(v);
    let width = CELL_CHARS;
    let mut out: String = one_line.chars().take(width).collect();
    if one_line.chars().count() > width {
        out.push('…');
    }
    out
}

/// The explanation for people.
fn text(r: &Value) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    text_head(&mut out, r);
    text_rule(&mut out, r);
    text_failures(&mut out, r);
    text_evidence(&mut out, r);
    text_backtest(&mut out, r);
    let _ = writeln!(out, "\n{}", r["caveat"].as_str().unwrap_or_default());
    out
}

/// The candidate, its finding when no rule, and its clusters.
fn text_head(out: &mut String, r: &Value) {
    use std::fmt::Write as _;
    let _ = writeln!(
        out,
        "candidate {}  ({}, window {} .. {})",
        whole(&r["id"]),
        whole(&r["kind"]),
        whole(&r["window"]["since"]),
        whole(&r["window"]["until"])
    );
    if r["finding"].is_object() {
        let _ = writeln!(
            out,
            "  NOT PROPOSED — {} finding: {}",
            r["finding"]["kind"].as_str().unwrap_or_default(),
            r["finding"]["why"].as_str().unwrap_or_default()
        );
    }
    for c in r["clusters"].as_array().into_iter().flatten() {
        let _ = writeln!(
            out,
            "  cluster {}: {} · shape {} · {} failure(s) · signature \"{}\"",
            whole(&c["id"]),
            whole(&c["tool"]),
            whole(&c["shape"]),
            c["fail_count"],
            whole(&c["signature"])
        );
    }
}

/// What the rule matches, and the field contrast behind it.
fn text_rule(out: &mut String, r: &Value) {
    use std::fmt::Write as _;
    let rule = &r["rule"];
    let _ = writeln!(
        out,
        "\nrule: tool {}  match {}  field {}",
        whole(&rule["tool"]),
        whole(&rule["match"]),
        whole(&rule["field"])
    );
    if let Some(u) = r["field_contrast"].as_object() {
        let _ = writeln!(
            out,
            "  field contrast: `{}` is in {} of {} successes and in none of the {} failures: the rule spares calls that pass it",
            u["field"].as_str().unwrap_or_default(),
            u["in_successes"],
            u["successes"],
            u["failures"]
        );
    }
    for p in rule["any"].as_array().into_iter().flatten() {
        let _ = writeln!(out, "  any    {}", whole(p));
    }
    for p in rule["unless"].as_array().into_iter().flatten() {
        let _ = writeln!(out, "  unless {}", whole(p));
    }
}

/// The failures by signature, the failing calls and the masked ones.
fn text_failures(out: &mut String, r: &Value) {
    use std::fmt::Write as _;
    let _ = writeln!(out, "\nfailures by signature:");
    let mut t = table(&["failures", "sessions", "days", "error line"]);
    for g in r["failures"]["by_signature"]
        .as_array()
        .into_iter()
        .flatten()
    {
        t.add_row(vec![
            g["failures"].to_string(),
            g["sessions"].to_string(),
            g["days"].to_string(),
            cell(&g["error_line"]),
        ]);
    }
    let _ = writeln!(out, "{t}");
    let _ = writeln!(out, "\nfailing calls ({}):", r["failures"]["count"]);
    let mut t = table(&["at", "session", "command", "blamed (why)", "error line"]);
    crate::output::keep_whole(&mut t, 0);
    for f in r["failures"]["calls"].as_array().into_iter().flatten() {
        let b = &f["blamed"];
        let blamed = if b.is_object() {
            format!("{} ({})", cell(&b["segment"]), whole(&b["why"]))
        } else {
            "-".to_string()
        };
        t.add_row(vec![
            cell(&f["at"]),
            cell(&f["session"]),
            cell(&f["command"]),
            blamed,
            cell(&f["error_line"]),
        ]);
    }
    let _ = writeln!(out, "{t}");
    if let Some(masked) = r["masked"].as_array().filter(|m| !m.is_empty()) {
        let _ = writeln!(
            out,
            "\nmasked: {} call(s) exited 0 but printed this failure's error (a pipe or `|| …` hid it); counted as failures:",
            masked.len()
        );
        for c in masked {
            let _ = writeln!(out, "  {}  {}", cell(&c["at"]), cell(&c["command"]));
        }
    }
}

/// The successes of the shape and the contrast with them.
fn text_evidence(out: &mut String, r: &Value) {
    use std::fmt::Write as _;
    if let Some(s) = r["successes_of_shape"].as_object() {
        let _ = writeln!(
            out,
            "\nsuccessful calls of shape '{}': {} of {} attempts",
            whole(&s["shape"]),
            s["successes"],
            s["attempts"]
        );
        let mut t = table(&["at", "command"]);
        crate::output::keep_whole(&mut t, 0);
        for c in s["samples"].as_array().into_iter().flatten() {
            t.add_row(vec![cell(&c["at"]), cell(&c["command"])]);
        }
        let _ = writeln!(out, "{t}");
    }
    if let Some(k) = r["contrast"].as_object() {
        let _ = writeln!(
            out,
            "\ncontrast ({} successes vs {} failures; {}; {}; needs >= {} successes):",
            k["successes"],
            k["failures"],
            whole(&k["rules"]["unless"]),
            whole(&k["rules"]["narrow"]),
            k["rules"]["min_successes"]
        );
        let mut t = table(&["token", "in successes", "in failures", "verdict"]);
        for e in k["tokens"].as_array().into_iter().flatten() {
            t.add_row(vec![
                cell(&e["token"]),
                format!("{} / {}", e["in_successes"], k["successes"]),
                format!("{} / {}", e["in_failures"], k["failures"]),
                cell(&e["verdict"]),
            ]);
        }
        let _ = writeln!(out, "{t}");
    }
}

/// The backtest, the tier, the crossfire note and the layer it was promoted into.
fn text_backtest(out: &mut String, r: &Value) {
    use std::fmt::Write as _;
    let b = &r["backtest"];
    let _ = writeln!(
        out,
        "\nbacktest over {}:\n  matched {}, failures {} (rate {}), crossfire {}, sessions {}, first {} last {}",
        whole(&b["scope"]),
        b["matched"],
        b["failures"],
        whole(&b["fail_rate"]),
        b["crossfire"],
        b["sessions"],
        whole(&b["first_seen"]),
        whole(&b["last_seen"])
    );
    for c in b["crossfire_samples"].as_array().into_iter().flatten() {
        let _ = writeln!(
            out,
            "  crossfire: {}  {}",
            whole(&c["at"]),
            cell(&c["command"])
        );
    }
    let _ = writeln!(
        out,
        "\ntier {} — {}; promote no further than {}",
        whole(&r["tier"]),
        whole(&r["tier_basis"]),
        whole(&r["action_ceiling"])
    );
    if let Some(n) = r["crossfire_note"].as_str() {
        let _ = writeln!(out, "note: {n}");
    }
    if let Some(layer) = r["promoted_in"].as_str() {
        let _ = writeln!(
            out,
            "already promoted: {layer} declares this id, so `callus derive` no longer proposes it"
        );
    }
}
