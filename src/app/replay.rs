//! `callus guard check --history [WINDOW]`: replay rulesets over recorded calls.
//!
//! Every settled call of the window is decided as the guard would have decided it — the
//! rules' patterns by the guard's own matcher, their conditions answered from history
//! (`rules::replay`), the precedence by `guard::resolve` — through the backtest's replay
//! (`rules::backtest::run_in`), the very computation derive's backtest uses.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use serde_json::{Value, json};

use crate::cli::CheckArgs;
use crate::config::Home;
use crate::guard::{Fired, resolve};
use crate::output::{print_json, print_text};
use crate::rules::backtest::{self, History, StoredCall, Target};
use crate::rules::layers::{LayerPaths, read_layer_text};
use crate::rules::{Layer, LayerKind, RuleSet};
use crate::window::{Window, iso};
use crate::{Error, Exit, Result};

/// Examples kept per rule and kind (failed, succeeded).
const EXAMPLES: usize = 3;

/// `callus guard check [FILE…] --history WINDOW`.
// the replay's steps in order (load, window, replay, report); each step is a few lines that share
// the same locals
#[allow(clippy::too_many_lines)]
pub(super) fn check_history(home: &Home, args: &CheckArgs, since: &str) -> Result<Exit> {
    let window = Window::parse(since, None, crate::store::now_ms())?;
    let rules = ruleset(home, &args.files)?;
    let db = home.db_path();
    let Some(conn) = crate::store::open_existing(&db)? else {
        return Err(Error::Invalid(format!(
            "no store at {}: nothing recorded to replay (run `callus record import`)",
            db.display()
        )));
    };
    let scan = backtest::scan(&conn, Some(&window), |_, _, _| true)?;
    let history = History::new(&conn, &scan.session_ids);
    let all: Vec<_> = rules.rules().collect();
    let targets: Vec<Target<'_>> = all
        .iter()
        .map(|(_, rule)| Target { rule, tag: None })
        .collect();
    let matches = backtest::run_in(&targets, &scan.calls, &history);
    // Per call, the rules that fired on it, in evaluation order.
    let mut by_call: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (r, m) in matches.iter().enumerate() {
        for &c in &m.calls {
            by_call.entry(c).or_default().push(r);
        }
    }
    let decisions: Vec<Value> = by_call
        .iter()
        .map(|(&c, fired)| {
            let fired: Vec<Fired> = fired
                .iter()
                .map(|&r| {
                    let (layer, rule) = all[r];
                    Fired {
                        id: rule.id.clone(),
                        layer: layer.kind,
                        layer_file: layer.name(),
                        action: layer.effective_action(rule),
                        severity: rule.severity,
                        pattern: None,
                        segment: None,
                        message: rule.message.clone(),
                        unanswered: None,
                    }
                })
                .collect();
            let d = resolve(fired, Vec::new());
            let call = &scan.calls[c];
            json!({
                "tool_use_id": call.id,
                "started": iso(call.started_ms),
                "failed": call.failed,
                "masked": call.masked,
                "decision": d.kind,
                "rule": d.winning().or(d.fired.first()).map(|f| f.id.clone()),
                "action": d.winning().or(d.fired.first()).map(|f| f.action),
                "fired": d.fired.iter().map(|f| json!({"rule": f.id, "action": f.action}))
                    .collect::<Vec<_>>(),
            })
        })
        .collect();
    let per_rule: Vec<Value> = all
        .iter()
        .zip(&matches)
        .map(|((layer, rule), m)| {
            let calls: Vec<&StoredCall> = m.calls.iter().map(|&c| &scan.calls[c]).collect();
            let failed: Vec<&&StoredCall> = calls.iter().filter(|c| c.failed).collect();
            let succeeded: Vec<&&StoredCall> = calls.iter().filter(|c| !c.failed).collect();
            let example = |c: &&&StoredCall| {
                json!({"tool_use_id": c.id, "tool": c.tool,
                    "call": crate::redact::preview(&c.command)})
            };
            json!({
                "id": rule.id,
                "layer": layer.name(),
                "action": layer.effective_action(rule),
                "conditions": rule.when.as_deref().map(|w| w.keys().collect::<Vec<_>>()),
                "fired": calls.len(),
                "failed": failed.len(),
                "succeeded": succeeded.len(),
                "masked": calls.iter().filter(|c| c.masked).count(),
                "unreplayed": m.unreplayed.values().sum::<u64>(),
                "unreplayed_by_condition": m.unreplayed,
                "pattern_errors": m.errors,
                "examples": {
                    "failed": failed.iter().take(EXAMPLES).map(example).collect::<Vec<_>>(),
                    "succeeded": succeeded.iter().take(EXAMPLES).map(example).collect::<Vec<_>>(),
                },
            })
        })
        .collect();
    if args.json {
        print_json(&json!({
            "window": window.to_json(),
            "calls": scan.calls.len(),
            "rules": per_rule,
            "decisions": decisions,
        }));
    } else {
        print_text(&human(&window, scan.calls.len(), &per_rule, &decisions));
    }
    Ok(Exit::Ok)
}

/// The rulesets replayed: FILEs as given, else every active layer.
fn ruleset(home: &Home, files: &[PathBuf]) -> Result<RuleSet> {
    if files.is_empty() {
        let cwd = std::env::current_dir().ok();
        return RuleSet::load(&LayerPaths::resolve(home, cwd.as_deref()));
    }
    let mut layers = Vec::new();
    for p in files {
        let text = read_layer_text(LayerKind::Env, p)?
            .ok_or_else(|| Error::io(p, std::io::ErrorKind::NotFound.into()))?;
        layers.push(Layer::from_text(LayerKind::Env, Some(p.clone()), text)?.0);
    }
    Ok(RuleSet { layers })
}

fn human(window: &Window, calls: usize, rules: &[Value], decisions: &[Value]) -> String {
    let mut out = format!(
        "replayed {calls} settled call(s) from {} to {} against {} rule(s); {} would have fired\n",
        iso(window.since_ms),
        iso(window.until_ms),
        rules.len(),
        decisions.len(),
    );
    let n = |v: &Value| v.as_u64().unwrap_or_default();
    for r in rules
        .iter()
        .filter(|r| n(&r["fired"]) > 0 || n(&r["unreplayed"]) > 0)
    {
        let _ = writeln!(
            out,
            "\n{} [{}] from {}: fired on {} — {} failed ({} masked), {} succeeded",
            r["id"].as_str().unwrap_or_default(),
            r["action"].as_str().unwrap_or_default(),
            r["layer"].as_str().unwrap_or_default(),
            n(&r["fired"]),
            n(&r["failed"]),
            n(&r["masked"]),
            n(&r["succeeded"]),
        );
        if n(&r["unreplayed"]) > 0 {
            let by: Vec<String> = r["unreplayed_by_condition"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, v)| format!("{k} {}", n(v)))
                .collect();
            let _ = writeln!(
                out,
                "    {} matching call(s) whose conditions history cannot answer, not counted ({})",
                n(&r["unreplayed"]),
                by.join(", ")
            );
        }
        for kind in ["failed", "succeeded"] {
            for e in r["examples"][kind].as_array().into_iter().flatten() {
                let _ = writeln!(
                    out,
                    "    {kind:<9}  {}: {}",
                    e["tool"].as_str().unwrap_or_default(),
                    e["call"].as_str().unwrap_or_default()
                );
            }
        }
    }
    let quiet = rules.iter().filter(|r| n(&r["fired"]) == 0).count();
    if quiet > 0 {
        let _ = writeln!(out, "\n{quiet} rule(s) would have fired on no call");
    }
    out
}
