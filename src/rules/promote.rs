//! `callus rules promote`: a reviewed candidate becomes an enforced rule, with its evidence.
//!
//! Guarantees: the action never exceeds the ceiling of the evidence behind the rule (refused
//! with exit 1 and the reason); when `--pattern` or `--unless` changes what the rule matches,
//! the backtest derive ran ([`super::backtest`], the one backtest) is re-run over the recorded
//! calls of the candidate's window (`meta.window`, as derive writes it) so the evidence
//! follows the pattern, and the tier and ceiling come from that new population; the rule is
//! stamped with `meta.promoted` (today, UTC) and an evidence snapshot (`meta.evidence`); the
//! target ruleset is written as pretty JSON with a fixed rule-key order and sorted `meta`
//! keys, through a temporary file in the same directory and an atomic rename, and only after
//! the whole resulting document passes `guard check`.

use std::path::{Path, PathBuf};

use chrono::{NaiveDate, Utc};
use serde_json::{Map, Value, json};

use super::backtest::{Backtest, History, Target, backtests_in, load_scan, probe, round4};
use super::check::{check_text, within_ceiling};
use super::tier::{self, Tier};
use super::{Action, RULE_KEYS};
use crate::config::Home;
use crate::window::{DAY_MS, absolute, iso};
use crate::{Error, Exit, Result};

/// Days a candidate's backtest window spans when its document does not say (derive's default).
pub(crate) const DEFAULT_WINDOW_DAYS: i64 = 7;

/// The order rule keys are written in.
const KEY_ORDER: &[&str] = &[
    "id", "tool", "field", "match", "any", "unless", "flags", "norm", "severity", "action",
    "pinned", "message", "meta", "examples",
];

/// What to promote, as `callus rules promote` was asked.
#[derive(Debug, Clone)]
pub(crate) struct Promotion {
    /// The candidate id (from `callus derive`).
    pub id: String,
    /// The action to enforce (capped by the candidate's evidence tier).
    pub action: Action,
    /// The message the agent sees.
    pub message: String,
    /// Replacement patterns (empty: keep the candidate's).
    pub pattern: Vec<String>,
    /// Replacement `unless` patterns (empty: keep the candidate's).
    pub unless: Vec<String>,
    /// Ruleset to write into (default `<repo root>/.callus/rules.json`).
    pub into: Option<std::path::PathBuf>,
}

/// The evidence a promotion rests on.
#[derive(Debug, Clone)]
struct Evidence {
    tier: Tier,
    rate: Option<f64>,
    attempts: Option<u64>,
    failures: Option<u64>,
    /// Present when the backtest was re-run here.
    backtest: Option<Backtest>,
    window: Span,
}

/// `callus rules promote ID --action A --message M [--pattern RE]… [--unless RE]… [--into F]`.
// a promotion read top to bottom: find, check the ceiling, edit, verify, write
#[allow(clippy::too_many_lines)]
pub(crate) fn run(home: &Home, args: &Promotion) -> Result<Exit> {
    let candidates_path = home.candidates_path();
    let text = std::fs::read_to_string(&candidates_path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            Error::Invalid(format!(
                "no candidates at {}: run `callus derive` first",
                candidates_path.display()
            ))
        } else {
            Error::io(&candidates_path, e)
        }
    })?;
    let doc: Value = serde_json::from_str(&text)
        .map_err(|e| Error::json(candidates_path.display().to_string(), e))?;
    let candidate = doc
        .get("rules")
        .and_then(Value::as_array)
        .and_then(|rules| {
            rules
                .iter()
                .find(|r| r.get("id").and_then(Value::as_str) == Some(args.id.as_str()))
        })
        .ok_or_else(|| {
            Error::Invalid(format!(
                "no candidate '{}' in {}",
                args.id,
                candidates_path.display()
            ))
        })?;
    let Value::Object(candidate) = candidate.clone() else {
        return Err(Error::Invalid(format!(
            "candidate '{}' is not an object",
            args.id
        )));
    };

    let action = args.action;
    let mut rule = candidate;
    rule.insert("action".into(), json!(action.as_str()));
    rule.insert("message".into(), json!(args.message));
    let repatterned = !args.pattern.is_empty() || !args.unless.is_empty();
    if !args.pattern.is_empty() {
        rule.insert("any".into(), json!(args.pattern));
    }
    if !args.unless.is_empty() {
        rule.insert("unless".into(), json!(args.unless));
    }
    let mut meta = match rule.remove("meta") {
        Some(Value::Object(m)) => m,
        _ => Map::new(),
    };
    let window = candidate_window(&doc, &meta);
    let evidence = if repatterned {
        rebacktest(home, &rule, &meta, window)?
    } else {
        recorded_evidence(&meta, window)
    };
    let ceiling = evidence.tier.ceiling();
    if !within_ceiling(action, evidence.tier.label()) {
        eprintln!(
            "callus: refusing to promote '{}' at {action}: its evidence is {} — {}; the ceiling for that tier is {ceiling}. Promote at {ceiling} or below, or gather more evidence.",
            args.id,
            evidence.tier.label(),
            tier::describe(evidence.tier, evidence.rate, evidence.attempts.unwrap_or(0)),
        );
        return Ok(Exit::Problem);
    }
    let today = Utc::now().date_naive();
    stamp(&mut meta, &evidence, today);
    rule.insert("meta".into(), Value::Object(meta));
    let rule = ordered(rule);

    let target = match &args.into {
        Some(p) => p.clone(),
        None => default_target()?,
    };
    let (document, replaced) = merge_into(&target, rule)?;
    let body = serde_json::to_string_pretty(&document)
        .map_err(|e| Error::json(target.display().to_string(), e))?
        + "\n";
    let report = check_text(&target.display().to_string(), &body);
    if !report.ok {
        eprintln!(
            "callus: not writing {}: the result would fail guard check:",
            target.display()
        );
        for e in report.errors.iter().chain(&report.example_failures) {
            eprintln!("    {e}");
        }
        return Ok(Exit::Problem);
    }
    write_atomic(&target, body.as_bytes())?;

    println!(
        "{} '{}' in {} as {action} (ceiling {ceiling}; promoted {today})",
        if replaced { "re-promoted" } else { "promoted" },
        args.id,
        target.display()
    );
    println!(
        "  evidence: {} — {}{}",
        evidence.tier.label(),
        tier::describe(evidence.tier, evidence.rate, evidence.attempts.unwrap_or(0)),
        if repatterned {
            " (backtest re-run on the new pattern)"
        } else {
            " (the candidate's backtest)"
        }
    );
    if let Some(b) = &evidence.backtest {
        println!(
            "  backtest: {} matched call(s), {} failed, {} succeeded (crossfire), {} session(s)",
            b.matched, b.failures, b.crossfire, b.sessions
        );
    }
    println!(
        "  ✓ guard check: {} rules{}",
        report.rules,
        if report.rules_with_examples > 0 {
            format!(", {} example assertion(s)", report.examples_passed)
        } else {
            String::new()
        }
    );
    Ok(Exit::Ok)
}

/// A backtest window whose ends may be open: `(since_ms, until_ms)`.
type Span = (Option<i64>, Option<i64>);

/// The candidate's backtest window: `meta.window` (what derive writes for each candidate) or
/// the document's top-level `window` (`{"since", "until"}`, each an RFC 3339 time, a date or
/// Unix ms), else the [`DEFAULT_WINDOW_DAYS`] days up to and including `meta.added`, else all
/// of history.
fn candidate_window(doc: &Value, meta: &Map<String, Value>) -> Span {
    let from_obj = |w: &Value| {
        let since = w.get("since").and_then(point);
        let until = w.get("until").and_then(point);
        (since.is_some() || until.is_some()).then_some((since, until))
    };
    if let Some(w) = meta.get("window").and_then(from_obj) {
        return w;
    }
    if let Some(w) = doc.get("window").and_then(from_obj) {
        return w;
    }
    let added = meta
        .get("added")
        .and_then(Value::as_str)
        .and_then(|s| absolute(s.get(..10)?));
    match added {
        Some(a) => (
            Some(a - (DEFAULT_WINDOW_DAYS - 1) * DAY_MS),
            Some(a + DAY_MS),
        ),
        None => (None, None),
    }
}

/// A window end as JSON: Unix ms, or a string [`absolute`] reads (a longer string whose first
/// ten characters are a date counts from that date).
fn point(v: &Value) -> Option<i64> {
    if let Some(ms) = v.as_i64() {
        return Some(ms);
    }
    let s = v.as_str()?;
    absolute(s).or_else(|| absolute(s.get(..10)?))
}

/// The evidence derive attached to the candidate (`meta.tier`, `attempt_count`, …).
fn recorded_evidence(meta: &Map<String, Value>, window: Span) -> Evidence {
    let num = |k: &str| meta.get(k).and_then(Value::as_u64);
    let attempts = num("attempt_count");
    let failures = num("fail_count");
    // A missing or unrecognised tier is no evidence: unknown, capped at a nudge.
    let tier = meta
        .get("tier")
        .and_then(Value::as_str)
        .and_then(Tier::parse)
        .unwrap_or(Tier::Unknown);
    let rate =
        meta.get("fail_rate")
            .and_then(Value::as_f64)
            .or_else(|| match (failures, attempts) {
                (Some(f), Some(a)) if a > 0 => Some((f as f64 / a as f64).min(1.0)),
                _ => None,
            });
    Evidence {
        tier,
        rate,
        attempts,
        failures,
        backtest: None,
        window,
    }
}

/// Re-run the backtest of the edited rule over the window's recorded calls, graded as
/// `guard check` grades the stamped rule: with the attempt floor and the learned-threshold
/// cap `meta` carries, and the spread of the failures the new pattern matches.
fn rebacktest(
    home: &Home,
    rule: &Map<String, Value>,
    meta: &Map<String, Value>,
    window: Span,
) -> Result<Evidence> {
    // The edited rule, parsed and compiled exactly as the guard will parse it.
    let parsed = probe(rule, "promoted rule")?;
    let target = [Target {
        rule: &parsed,
        tag: None,
    }];
    // The guard's replay, conditions included, answered from the store.
    let b = match crate::store::open_existing(&home.db_path())? {
        Some(conn) => {
            let scan = load_scan(&conn, window.0, window.1)?;
            let history = History::new(&conn, &scan.session_ids);
            backtests_in(&target, &scan.calls, &history).swap_remove(0)
        }
        None => Backtest::default(),
    };
    if b.matched == 0 {
        eprintln!(
            "callus: note: the new pattern matches no recorded call in the candidate's window; its evidence is unknown (ceiling nudge)"
        );
    }
    let mut graded = meta.clone();
    graded.insert("attempt_count".into(), json!(b.matched));
    graded.insert("fail_count".into(), json!(b.failures));
    graded.insert("failure_sessions".into(), json!(b.sessions));
    graded.insert("failure_days".into(), json!(b.days));
    let (tier, rate) = tier::from_evidence(&graded).unwrap_or_else(|| b.tier());
    Ok(Evidence {
        tier,
        rate,
        attempts: Some(b.matched),
        failures: Some(b.failures),
        backtest: Some(b),
        window,
    })
}

/// Write the evidence into `meta`: the tier fields `guard check` enforces, `promoted`, and an
/// `evidence` snapshot of what the promotion rested on.
fn stamp(meta: &mut Map<String, Value>, ev: &Evidence, today: NaiveDate) {
    let rate = ev.rate.map(round4);
    let basis = tier::describe(ev.tier, ev.rate, ev.attempts.unwrap_or(0));
    meta.insert("tier".into(), json!(ev.tier.label()));
    meta.insert("tier_basis".into(), json!(basis));
    meta.insert("action_ceiling".into(), json!(ev.tier.ceiling().as_str()));
    meta.insert("attempt_count".into(), json!(ev.attempts));
    meta.insert("fail_count".into(), json!(ev.failures));
    meta.insert("fail_rate".into(), json!(rate));
    if let Some(b) = &ev.backtest {
        // The spread the new tier was capped by, so `guard check` grades it the same way.
        meta.insert("failure_sessions".into(), json!(b.sessions));
        meta.insert("failure_days".into(), json!(b.days));
    }
    meta.insert(
        "promoted".into(),
        json!(today.format("%Y-%m-%d").to_string()),
    );
    let mut snap = Map::new();
    snap.insert("taken".into(), json!(today.format("%Y-%m-%d").to_string()));
    snap.insert(
        "source".into(),
        json!(if ev.backtest.is_some() {
            "backtest"
        } else {
            "candidate"
        }),
    );
    snap.insert("tier".into(), json!(ev.tier.label()));
    snap.insert("attempt_count".into(), json!(ev.attempts));
    snap.insert("fail_count".into(), json!(ev.failures));
    snap.insert("fail_rate".into(), json!(rate));
    if let Some(b) = &ev.backtest {
        snap.insert("crossfire".into(), json!(b.crossfire));
        snap.insert("sessions".into(), json!(b.sessions));
    }
    snap.insert(
        "window".into(),
        json!({
            "since": ev.window.0.map(iso),
            "until": ev.window.1.map(iso),
        }),
    );
    meta.insert("evidence".into(), Value::Object(sorted(snap)));
    let all = std::mem::take(meta);
    *meta = sorted(all);
}

fn sorted(m: Map<String, Value>) -> Map<String, Value> {
    let mut pairs: Vec<(String, Value)> = m.into_iter().collect();
    pairs.sort_by(|a, b| a.0.cmp(&b.0));
    pairs.into_iter().collect()
}

/// The rule with its keys in [`KEY_ORDER`] (unknown keys, which check rejects, go last).
fn ordered(mut rule: Map<String, Value>) -> Value {
    debug_assert!(KEY_ORDER.iter().all(|k| RULE_KEYS.contains(k)));
    let mut out = Map::new();
    for k in KEY_ORDER {
        if let Some(v) = rule.remove(*k) {
            out.insert((*k).to_string(), v);
        }
    }
    out.extend(rule);
    Value::Object(out)
}

/// `<repo root of cwd>/.callus/rules.json`.
fn default_target() -> Result<PathBuf> {
    let cwd = std::env::current_dir().map_err(|e| Error::io(".", e))?;
    let root = crate::config::repo_root(&cwd).ok_or_else(|| {
        Error::Invalid(format!(
            "{} is not inside a git repository: pass --into FILE",
            cwd.display()
        ))
    })?;
    Ok(root.join(".callus").join("rules.json"))
}

/// The target document with `rule` added (or replacing the rule of the same id).
fn merge_into(target: &Path, rule: Value) -> Result<(Value, bool)> {
    let mut doc = match std::fs::read_to_string(target) {
        Ok(text) => serde_json::from_str::<Value>(&text)
            .map_err(|e| Error::json(target.display().to_string(), e))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => json!({
            "ruleset": "project",
            "description": "Rules promoted from callus candidates, each capped by the evidence in its meta. Checked by `callus guard check`.",
            "rules": [],
        }),
        Err(e) => return Err(Error::io(target, e)),
    };
    let Some(top) = doc.as_object_mut() else {
        return Err(Error::Invalid(format!(
            "{}: top level is not a JSON object",
            target.display()
        )));
    };
    let rules = top.entry("rules").or_insert_with(|| json!([]));
    let Some(rules) = rules.as_array_mut() else {
        return Err(Error::Invalid(format!(
            "{}: \"rules\" is not an array",
            target.display()
        )));
    };
    let id = rule.get("id").cloned();
    let replaced = if let Some(slot) = rules.iter_mut().find(|r| r.get("id") == id.as_ref()) {
        *slot = rule;
        true
    } else {
        rules.push(rule);
        false
    };
    Ok((doc, replaced))
}

/// Write `bytes` to `path` atomically, creating its directory.
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or_else(|| Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    crate::config::replace_file(path, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_keys_are_written_in_a_fixed_order() {
        let mut m = Map::new();
        for k in ["meta", "message", "action", "any", "tool", "id"] {
            m.insert(k.into(), json!(1));
        }
        let v = ordered(m);
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["id", "tool", "any", "action", "message", "meta"]);
    }

    #[test]
    fn window_comes_from_meta_then_document_then_added() {
        let doc = json!({"window": {"since": "2026-01-01", "until": "2026-01-08"}});
        let meta: Map<String, Value> =
            serde_json::from_value(json!({"added": "2026-03-10"})).unwrap();
        let (s, u) = candidate_window(&doc, &meta);
        assert_eq!(iso(s.unwrap()), "2026-01-01T00:00:00Z");
        assert_eq!(iso(u.unwrap()), "2026-01-08T00:00:00Z");
        let (s, u) = candidate_window(&json!({}), &meta);
        assert_eq!(iso(s.unwrap()), "2026-03-04T00:00:00Z");
        assert_eq!(iso(u.unwrap()), "2026-03-11T00:00:00Z");
        // What derive writes: `meta.window` from `Window::to_json`, RFC 3339 with `Z`.
        let w = crate::window::Window::parse("2026-06-01", Some("2026-06-08"), 0).unwrap();
        let meta: Map<String, Value> =
            serde_json::from_value(json!({"added": "2026-03-10", "window": w.to_json()})).unwrap();
        assert_eq!(
            candidate_window(&doc, &meta),
            (Some(w.since_ms), Some(w.until_ms))
        );
    }
}
