//! The candidate document (docs/rule-format.md#the-document) and its merge into a file.
//!
//! Each candidate is a rule at `action: "monitor"` whose `meta` carries the evidence: the
//! cluster (fail count, signature, shape, redacted sample command and error from the same,
//! latest, failure), the backtest of its pattern, the contrast behind its `unless`, and the
//! tier, basis and ceiling computed on what the pattern matches. `examples` hold a failing
//! call it fires on and, when the contrast exempted something, a successful call it spares —
//! both re-checked here with the real matcher, so `guard check` verifies the candidate
//! against its own evidence.
//!
//! Merging (`$CALLUS_HOME/candidates.json` by default, or `--out FILE`) updates a candidate in
//! place when its id, or the id of any cluster folded into it, is already in the file; it keeps
//! what a human added: meta keys derive does not own (`review`, `note`, …), a message that no
//! longer starts with `DRAFT`, the first `added` date, and rule keys derive does not write
//! (`pinned`). Derive owns the pattern and the evidence: refine a pattern by promoting it.
//! Candidates from earlier runs that did not recur are kept unchanged, except one whose id a
//! reviewed layer now declares: it was promoted, and is retired from the file (see
//! `reviewed`). The merged document must pass `guard check` before it replaces the file
//! (atomically, private to the user).

use std::collections::BTreeMap;
use std::path::Path;

use std::fmt::Write as _;

use serde_json::{Map, Value};

use super::candidate::{
    AlreadyPromoted, BacktestMeta, Candidate, ContrastMeta, Document, Dropped, EnvironmentEntry,
    Examples, FoldedCluster, Generated, Meta, NotRule, WindowSpan,
};
use super::cluster::{Cluster, Kind};
use super::{Derivation, Derived};
use crate::redact::redact_capped;
use crate::rules::backtest::{Backtest, round4};
use crate::rules::check::example_fires;
use crate::rules::{Rule, tier};
use crate::window::{date, iso};
use crate::{Error, Result};

/// The observational caveat shown wherever tiers are.
pub(crate) const CAVEAT: &str = "Rates are observational: they count whatever traffic happened to run in the window, \
not a controlled re-run. Treat each tier as a prior, not a proof.";

/// Meta keys derive writes; any other meta key is a human's and survives a merge. The
/// fields of [`Meta`] (tested in `candidate`).
pub(super) const DERIVED_META: &[&str] = &[
    "why",
    "added",
    "telemetry_ref",
    "kind",
    "fail_count",
    "cluster_fail_count",
    "masked_count",
    "error_signature",
    "distinct_signatures",
    "command_shape",
    "sample_command",
    "sample_error",
    "first_seen",
    "last_seen",
    "tier",
    "tier_basis",
    "attempt_count",
    "failure_sessions",
    "failure_days",
    "threshold_learned",
    "min_attempts",
    "fail_rate",
    "action_ceiling",
    "backtest",
    "contrast",
    "field_contrast",
    "shape_attempts",
    "crossfire_note",
    "clusters",
    "window",
];

/// Longest sample command and error kept in a candidate.
const SAMPLE_CHARS: usize = 300;

/// The rule as the backtest runs it: id, tool and what it matches.
pub(crate) fn skeleton(cluster: &Cluster, p: &super::pattern::Proposal) -> Candidate {
    let (match_mode, field) = if let Some(m) = p.match_mode {
        (Some(m), Some("command".to_string()))
    } else if let Some(u) = &p.field_unless {
        (None, Some(u.field.clone()))
    } else {
        (None, p.field.map(str::to_string))
    };
    Candidate {
        id: cluster.id(),
        tool: cluster.group.glob.clone(),
        match_mode,
        field,
        any: p.any.clone(),
        unless: p.unless.clone(),
        flags: p.flags,
        when: p.when.clone(),
        severity: if cluster.kind == Kind::ToolWide {
            60
        } else {
            40
        },
        action: "monitor",
        message: None,
        meta: None,
        examples: None,
    }
}

/// The full candidate: the skeleton plus message, meta and examples.
// one candidate filled in field by field, in the document's key order
#[allow(clippy::too_many_lines)]
pub(crate) fn candidate(dv: &Derivation, d: &Derived, rule: &Rule) -> Candidate {
    let clusters: Vec<&Cluster> = d.clusters.iter().map(|&i| &dv.clusters[i]).collect();
    let primary = clusters[0];
    let latest = &dv.failures[*primary.failures.last().expect("a cluster has a failure")];
    let days = dv.options.window.days();
    // One source of evidence: with a denominator, the counts are the backtest's (what the
    // pattern matches in the window, masked failures included), the same numbers the tier
    // was computed from and `guard check` re-derives it from.
    let cluster_fails = d.fail_count(&dv.clusters);
    let fail_count = if d.attempts.is_some() {
        d.backtest.failures as usize
    } else {
        cluster_fails
    };
    let ceiling = d.tier.ceiling();
    let basis = tier::describe(d.tier, d.rate, d.attempts.unwrap_or(0));
    let sample_error = redact_capped(&latest.error, SAMPLE_CHARS);
    let shown_error = if sample_error.trim().is_empty() {
        primary.signature.clone()
    } else {
        sample_error.clone()
    };
    let message = if let Some(m) = super::tool_causes::message(
        &d.proposal,
        &primary.group.glob,
        fail_count,
        d.backtest.sessions,
        &basis,
        ceiling,
    ) {
        m
    } else if primary.kind == Kind::ToolWide {
        let sample: String = shown_error.chars().take(140).collect();
        let advice = if ceiling == crate::rules::Action::Monitor {
            "There is too little evidence to arm it yet: keep it at monitor.".to_string()
        } else {
            format!(
                "If this tool is unreliable or misconfigured, consider action={ceiling} (the ceiling for this tier) with a pointer to the working path."
            )
        };
        format!(
            "DRAFT — tool surface '{}' failed {fail_count}x in {days}d across {} method/signature(s) ({basis}), e.g. \"{sample}\". {advice}",
            primary.group.glob,
            primary.signatures.len()
        )
    } else {
        let sample: String = shown_error.chars().take(160).collect();
        format!(
            "DRAFT — recurring {} failure ({fail_count}x in {days}d, {basis}): \"{sample}\". Refine this pattern + write a helpful message, then promote monitor -> at most {ceiling}.",
            what_failed(primary)
        )
    };
    let mut sources: Vec<&str> = clusters
        .iter()
        .flat_map(|c| c.failures.iter().map(|&i| dv.failures[i].source.as_str()))
        .collect();
    sources.sort_unstable();
    sources.dedup();
    let (first, last) = span(dv, &clusters);
    let tool_wide_unsigned = primary.kind == Kind::ToolWide && primary.signature.is_empty();
    // The threshold the tier was graded with, so `guard check` grades it the same way.
    let floor = super::attempt_floor(&dv.options, &d.proposal);
    let meta = Meta {
        why: format!("{fail_count} recorded failures in {days}d; auto-surfaced by callus derive."),
        added: date(crate::store::now_ms()),
        telemetry_ref: format!("callus:{}", sources.join("+")),
        kind: d.proposal.kind,
        fail_count,
        cluster_fail_count: cluster_fails,
        masked_count: d.backtest.masked,
        distinct_signatures: tool_wide_unsigned.then_some(primary.signatures.len()),
        error_signature: (!tool_wide_unsigned).then(|| primary.signature.clone()),
        command_shape: primary.shape.clone(),
        sample_command: redact_capped(&latest.command, SAMPLE_CHARS),
        sample_error,
        first_seen: iso(first),
        last_seen: iso(last),
        tier: d.tier.label(),
        tier_basis: basis,
        attempt_count: d.attempts,
        // The spread the tier was capped by (see `tier::capped_by_spread`), so `guard check`
        // grades it the same way.
        failure_sessions: d.attempts.map(|_| d.backtest.sessions),
        failure_days: d.attempts.map(|_| d.backtest.days),
        min_attempts: (floor != tier::MIN_ATTEMPTS).then_some(floor),
        threshold_learned: d.proposal.threshold_learned().then_some(true),
        fail_rate: d.rate.map(round4),
        action_ceiling: ceiling.as_str(),
        backtest: backtest_meta(&d.backtest, &scope(primary, d.proposal.literal.as_deref())),
        shape_attempts: dv
            .shapes
            .get(&primary.shape)
            .filter(|_| matches!(primary.kind, Kind::Program { .. }))
            .map(|stats| stats.attempts),
        contrast: d
            .contrast
            .as_ref()
            .filter(|k| k.successes >= super::contrast::MIN_SUCCESSES)
            .map(|k| ContrastMeta {
                successes: k.successes,
                failures: k.failures,
                unless: k.unless.clone(),
                narrow: k.narrow.clone(),
            }),
        field_contrast: d.proposal.field_unless.clone(),
        crossfire_note: crossfire_note(d, dv.options.min_attempts),
        clusters: (clusters.len() > 1).then(|| {
            clusters
                .iter()
                .map(|c| FoldedCluster {
                    id: c.id(),
                    signature: c.signature.clone(),
                    fail_count: c.count(),
                })
                .collect()
        }),
        window: WindowSpan::from(dv.options.window),
    };
    Candidate {
        message: Some(message),
        meta: Some(meta),
        examples: examples(dv, d, primary, rule),
        ..skeleton(primary, &d.proposal)
    }
}

/// "Bash" or "Bash poll-loop" etc. for the message.
fn what_failed(c: &Cluster) -> String {
    match &c.kind {
        Kind::PollLoop => "Bash poll loop".into(),
        Kind::DeadHost(h) => format!("Bash call to unresolvable host {h}"),
        _ => c.group.glob.clone(),
    }
}

/// First and last failure of the clusters.
fn span(dv: &Derivation, clusters: &[&Cluster]) -> (i64, i64) {
    let times = clusters
        .iter()
        .flat_map(|c| c.failures.iter().map(|&i| dv.failures[i].started_ms));
    let first = times.clone().min().unwrap_or_default();
    let last = times.max().unwrap_or_default();
    (first, last)
}

/// The backtest as stored in `meta.backtest`, with the scope it ran over.
fn backtest_meta(b: &Backtest, scope: &str) -> BacktestMeta {
    BacktestMeta {
        matched: b.matched,
        failures: b.failures,
        fail_rate: b.fail_rate(),
        crossfire: b.crossfire,
        sessions: b.sessions,
        first_seen: b.first_seen.map(iso),
        last_seen: b.last_seen.map(iso),
        scope: scope.to_string(),
    }
}

/// Which calls the backtest ran over (stored with the evidence): the honesty note that the
/// backtest was restricted to calls containing the candidate's literal.
fn scope(c: &Cluster, literal: Option<&str>) -> String {
    match literal {
        Some(l) => format!(
            "settled {} calls in the window whose text contains '{l}' (every match must)",
            c.group.glob
        ),
        None => format!("settled {} calls in the window", c.group.glob),
    }
}

/// Says so when crossfire lowers the ceiling below what the failures alone would allow.
fn crossfire_note(d: &Derived, min_attempts: u64) -> Option<String> {
    let b = &d.backtest;
    if b.crossfire == 0 || d.attempts.is_none() {
        return None;
    }
    let (alone, _) = tier::classify(b.failures, b.failures, min_attempts);
    let share = round4(b.crossfire as f64 / b.matched as f64) * 100.0;
    let mut note = if d.tier.ceiling() < alone.ceiling() {
        format!(
            "the pattern also matches {} successful call(s) ({share:.0}% of what it matches): that lowers its ceiling from {} to {}",
            b.crossfire,
            alone.ceiling(),
            d.tier.ceiling()
        )
    } else {
        format!(
            "the pattern also matches {} successful call(s) ({share:.0}% of what it matches)",
            b.crossfire
        )
    };
    if b.crossfire > b.failures {
        // A reviewer asks why a rule that mostly fires on working calls is proposed at all.
        let narrowed = d.contrast.as_ref().is_some_and(|k| {
            k.tokens
                .iter()
                .any(|t| t.verdict != super::contrast::Verdict::Neither)
        });
        let separated = match &d.proposal.field_unless {
            Some(u) => format!(
                " (calls that pass `{}` are spared: {} of {} successes carry it and none of the failures; nothing else in the input separates the rest, so what fails is not in the call — the file's size, the remote's state)",
                u.field, u.in_successes, u.successes
            ),
            None if narrowed => String::new(),
            None => " and no flag or argument of the calls separates them from the successes"
                .to_string(),
        };
        let _ = write!(
            note,
            "; more successes than failures ({} vs {}): proposed only because its failures share one error signature over {} session(s){separated} — refine the pattern before promoting it",
            b.crossfire, b.failures, b.sessions,
        );
    }
    Some(note)
}

/// `should_fire`: the first matched failure; `should_not_fire`: a success of the shape the
/// contrast exempts. Each is re-checked on the redacted text exactly as `guard check` will.
fn examples(dv: &Derivation, d: &Derived, primary: &Cluster, rule: &Rule) -> Option<Examples> {
    if d.proposal.any.is_empty() {
        return None;
    }
    let fires = |cmd: &str| example_fires(rule, cmd).unwrap_or(false);
    let mut should_fire = Vec::new();
    if let Some(i) = d.backtest.failure_sample {
        let cmd = redact_capped(&dv.scan.calls[i].command, SAMPLE_CHARS);
        if fires(&cmd) {
            should_fire.push(cmd);
        }
    }
    let mut should_not_fire = Vec::new();
    if d.proposal.kind == "missing-flag" || d.proposal.kind == "narrowed" {
        let spared = dv.shapes.get(&primary.shape).and_then(|s| {
            s.samples.iter().find_map(|&i| {
                let call = &dv.scan.calls[i];
                let cmd = redact_capped(&call.command, SAMPLE_CHARS);
                (!call.failed && !example_fires(rule, &cmd).unwrap_or(true)).then_some(cmd)
            })
        });
        should_not_fire.extend(spared);
    }
    if should_fire.is_empty() && should_not_fire.is_empty() {
        return None;
    }
    Some(Examples {
        should_fire,
        should_not_fire,
    })
}

/// One withheld (anecdotal) cluster as listed in `dropped_anecdotal`.
pub(crate) fn dropped_entry(dv: &Derivation, d: &Derived) -> Dropped {
    let c = &dv.clusters[d.clusters[0]];
    let shape = if c.kind == Kind::ToolWide {
        "(tool-wide)".to_string()
    } else {
        c.shape.clone()
    };
    Dropped {
        tool: c.group.glob.clone(),
        shape,
        id: d.id().to_string(),
        fail_count: d.fail_count(&dv.clusters),
        pattern: d.proposal.any.first().cloned(),
        tier: d.tier.label(),
        tier_basis: tier::describe(d.tier, d.rate, d.attempts.unwrap_or(0)),
        attempt_count: d.attempts,
        fail_rate: d.rate.map(round4),
        action_ceiling: d.tier.ceiling().as_str(),
    }
}

/// One recurring cluster the outcome model judged no rule (`generated.not_rules`).
pub(crate) fn not_rule_entry(dv: &Derivation, d: &Derived, kind: super::FindingKind) -> NotRule {
    let c = &dv.clusters[d.clusters[0]];
    NotRule {
        id: d.id().to_string(),
        tool: c.group.glob.clone(),
        shape: c.shape.clone(),
        finding: kind.label(),
        why: kind.why(),
        error_signature: c.signature.clone(),
        fail_count: d.fail_count(&dv.clusters),
        matched: d.backtest.matched,
        matched_failures: d.backtest.failures,
        sessions: d.backtest.sessions,
    }
}

/// The candidate document of a derivation.
pub(crate) fn document(dv: &Derivation) -> Document {
    let o = &dv.options;
    let days = o.window.days();
    Document {
        ruleset: "derived-candidates",
        bias: "fail-open",
        description: format!(
            "Auto-derived candidate rules from the callus store ({} clusters, >= {} fails in {days}d, >= {} attempts). \
             All action=monitor (log-only). Review, refine the regex + message, then promote — no further than each rule's meta.action_ceiling.",
            dv.candidates.len(),
            o.min_count,
            o.min_attempts
        ),
        rules: dv.candidates.iter().map(|d| d.rule.clone()).collect(),
        dropped_anecdotal: dv.withheld.iter().map(|d| dropped_entry(dv, d)).collect(),
        generated: Generated {
            at: iso(crate::store::now_ms()),
            by: concat!("callus derive ", env!("CARGO_PKG_VERSION")),
            min_count: o.min_count,
            min_attempts: o.min_attempts,
            keep_anecdotal: o.keep_anecdotal,
            excluded_tools: o.excluded.clone(),
            already_promoted: dv
                .promoted
                .iter()
                .map(|(d, layer)| AlreadyPromoted {
                    id: d.id().to_string(),
                    layer: layer.clone(),
                    fail_count: d.fail_count(&dv.clusters),
                })
                .collect(),
            not_rules: dv
                .not_rules
                .iter()
                .map(|(d, k)| not_rule_entry(dv, d, *k))
                .collect(),
            environment: dv
                .environment
                .iter()
                .map(|f| EnvironmentEntry {
                    kind: f.kind,
                    calls: f.calls,
                    programs: f.programs,
                    sessions: f.sessions,
                })
                .collect(),
        },
        window: WindowSpan::from(o.window),
        caveat: CAVEAT,
    }
}

/// What a merge did.
#[derive(Debug)]
pub(crate) struct Written {
    /// The document as written.
    pub document: Value,
    /// Candidates new to the file.
    pub added: usize,
    /// Candidates updated in place.
    pub updated: usize,
    /// Earlier candidates left as they were.
    pub kept: usize,
    /// Earlier candidates removed because a reviewed layer now declares them (promoted).
    pub retired: usize,
    /// Earlier candidates removed because this run judged them no rule (see `finding`).
    pub reclassified: usize,
    /// Earlier candidates removed because they no longer pass `guard check` (written by an
    /// older callus or edited by hand, their evidence no longer agrees with their tier).
    pub stale: usize,
}

/// Merge `doc` into the candidate file at `path` (created if absent) and write it, retiring
/// the candidates whose id is in `promoted` (declared by a reviewed layer).
pub(crate) fn merge_into(
    path: &Path,
    doc: &Value,
    promoted: &BTreeMap<String, String>,
) -> Result<Written> {
    let name = path.display().to_string();
    let existing: Option<Value> = match std::fs::read_to_string(path) {
        Ok(text) => Some(serde_json::from_str(&text).map_err(|e| Error::json(&name, e))?),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(Error::io(path, e)),
    };
    let mut written = merge(existing.as_ref(), doc, &name, promoted)?;
    let mut text = serde_json::to_string_pretty(&written.document).unwrap_or_default() + "\n";
    let mut report = crate::rules::check::check_text(&name, &text);
    if !report.ok {
        // An earlier candidate this run did not re-derive cannot be re-graded (its evidence
        // is not in the window): one that no longer passes the check is retired, never a
        // reason to abort the run.
        let fresh: Vec<&str> = doc["rules"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| r.get("id").and_then(Value::as_str))
            .collect();
        let failing: Vec<String> = report
            .errors
            .iter()
            .chain(&report.example_failures)
            .filter_map(|e| e.split_once(": ").map(|(id, _)| id.to_string()))
            .filter(|id| !fresh.contains(&id.as_str()))
            .collect();
        if let Some(Value::Array(rules)) = written.document.get_mut("rules") {
            let before = rules.len();
            rules.retain(|r| {
                !r.get("id")
                    .and_then(Value::as_str)
                    .is_some_and(|id| failing.iter().any(|f| f == id))
            });
            written.stale = before - rules.len();
            written.kept = written.kept.saturating_sub(written.stale);
        }
        text = serde_json::to_string_pretty(&written.document).unwrap_or_default() + "\n";
        report = crate::rules::check::check_text(&name, &text);
    }
    if !report.ok {
        let mut problems = report.errors;
        problems.extend(report.example_failures);
        return Err(Error::Ruleset {
            file: name,
            rule: None,
            field: None,
            msg: format!(
                "the merged candidates would not pass guard check, nothing written: {}",
                problems.join("; ")
            ),
        });
    }
    write_private(path, &text)?;
    Ok(written)
}

/// Merge the new document into an existing one (pure; see the module docs for the policy).
// the merge policy read top to bottom: retire, reclassify, update, add, keep the rest
#[allow(clippy::too_many_lines)]
pub(crate) fn merge(
    existing: Option<&Value>,
    new: &Value,
    name: &str,
    promoted: &BTreeMap<String, String>,
) -> Result<Written> {
    let mut top = match existing {
        None => Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(_) => {
            return Err(Error::Ruleset {
                file: name.to_string(),
                rule: None,
                field: None,
                msg: "top level is not a JSON object; refusing to overwrite it".into(),
            });
        }
    };
    let mut rules: Vec<Value> = match top.remove("rules") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a,
        Some(_) => {
            return Err(Error::Ruleset {
                file: name.to_string(),
                rule: None,
                field: Some("rules".into()),
                msg: "must be an array; refusing to overwrite it".into(),
            });
        }
    };
    let before = rules.len();
    rules.retain(|old| !cluster_ids(old).iter().any(|id| promoted.contains_key(id)));
    let retired = before - rules.len();
    // An earlier candidate this run judged no rule (an environment finding, a guess) is
    // retired: it recurred, and the outcome model says what it is instead.
    let not_rules: Vec<&str> = new["generated"]["not_rules"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|n| n["id"].as_str())
        .collect();
    let before = rules.len();
    rules.retain(|old| {
        !cluster_ids(old)
            .iter()
            .any(|id| not_rules.contains(&id.as_str()))
    });
    let reclassified = before - rules.len();
    let mut touched = vec![false; rules.len()];
    let (mut added, mut updated) = (0, 0);
    for cand in new["rules"].as_array().into_iter().flatten() {
        let ids = cluster_ids(cand);
        let found = rules.iter().position(|old| {
            old.get("id")
                .and_then(Value::as_str)
                .is_some_and(|id| ids.iter().any(|x| x == id))
        });
        if let Some(j) = found {
            rules[j] = merge_rule(&rules[j], cand);
            touched[j] = true;
            updated += 1;
        } else {
            rules.push(cand.clone());
            touched.push(true);
            added += 1;
        }
    }
    let kept = touched.iter().filter(|t| !**t).count();
    // The new document's keys, in its order (the `Document` type's), its rules merged.
    let mut out = Map::new();
    let mut rules = Some(rules);
    for (key, value) in new.as_object().into_iter().flatten() {
        let value = match key.as_str() {
            "rules" => Value::Array(rules.take().unwrap_or_default()),
            _ => value.clone(),
        };
        out.insert(key.clone(), value);
    }
    // Anything else a human put at the top level stays.
    for (k, v) in top {
        out.entry(k).or_insert(v);
    }
    Ok(Written {
        stale: 0,
        reclassified,
        document: Value::Object(out),
        added,
        updated,
        kept,
        retired,
    })
}

/// The candidate's id and the ids of every cluster folded into it.
fn cluster_ids(cand: &Value) -> Vec<String> {
    let mut ids: Vec<String> = cand["id"]
        .as_str()
        .map(str::to_string)
        .into_iter()
        .collect();
    for c in cand["meta"]["clusters"].as_array().into_iter().flatten() {
        if let Some(id) = c["id"].as_str() {
            ids.push(id.to_string());
        }
    }
    ids
}

/// The new candidate, keeping the old id and what a human added to the old one.
fn merge_rule(old: &Value, new: &Value) -> Value {
    let (Value::Object(old), Value::Object(new)) = (old, new) else {
        return new.clone();
    };
    let mut out = new.clone();
    if let Some(id) = old.get("id") {
        out.insert("id".into(), id.clone());
    }
    if let Some(Value::String(m)) = old.get("message")
        && !m.trim_start().starts_with("DRAFT")
    {
        out.insert("message".into(), Value::String(m.clone()));
    }
    if let (Some(Value::Object(old_meta)), Some(Value::Object(meta))) =
        (old.get("meta"), out.get_mut("meta"))
    {
        for (k, v) in old_meta {
            if k == "added" || !DERIVED_META.contains(&k.as_str()) {
                meta.insert(k.clone(), v.clone());
            }
        }
    }
    for (k, v) in old {
        if !out.contains_key(k) {
            out.insert(k.clone(), v.clone());
        }
    }
    Value::Object(out)
}

/// Write `text` to `path` atomically, in a private directory.
fn write_private(path: &Path, text: &str) -> Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    crate::config::ensure_private_dir(dir)?;
    crate::config::replace_file(path, text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[allow(clippy::needless_pass_by_value)] // call sites read as a literal document
    fn doc(rules: Value) -> Value {
        json!({"ruleset": "derived-candidates", "bias": "fail-open", "description": "d",
               "rules": rules, "dropped_anecdotal": [], "generated": {}, "window": {}, "caveat": "c"})
    }

    #[test]
    fn merge_keeps_human_notes_and_earlier_candidates() {
        let old = doc(json!([
            {"id": "derived-bash-psql-aaaa", "tool": "Bash", "action": "monitor",
             "message": "Bare psql: use scripts/db.py", "pinned": true,
             "meta": {"fail_count": 3, "added": "2026-06-01", "review": "looks right — kai"}},
            {"id": "derived-bash-old-bbbb", "tool": "Bash", "action": "monitor", "meta": {}}
        ]));
        let new = doc(json!([
            {"id": "derived-bash-psql-cccc", "tool": "Bash", "action": "monitor",
             "message": "DRAFT — new", "meta": {"fail_count": 9, "added": "2026-07-08",
             "clusters": [{"id": "derived-bash-psql-aaaa"}, {"id": "derived-bash-psql-cccc"}]}},
            {"id": "derived-bash-new-dddd", "tool": "Bash", "action": "monitor", "message": "DRAFT", "meta": {}}
        ]));
        let w = merge(Some(&old), &new, "f", &BTreeMap::new()).unwrap();
        assert_eq!((w.added, w.updated, w.kept), (1, 1, 1));
        let rules = w.document["rules"].as_array().unwrap();
        assert_eq!(rules.len(), 3);
        let psql = &rules[0];
        assert_eq!(psql["id"], "derived-bash-psql-aaaa");
        assert_eq!(psql["message"], "Bare psql: use scripts/db.py");
        assert_eq!(psql["pinned"], true);
        assert_eq!(psql["meta"]["review"], "looks right — kai");
        assert_eq!(psql["meta"]["added"], "2026-06-01");
        assert_eq!(psql["meta"]["fail_count"], 9);
        assert_eq!(rules[1]["id"], "derived-bash-old-bbbb");
        assert_eq!(rules[2]["id"], "derived-bash-new-dddd");
    }

    /// Every count derive writes is replaced by the new run's: `cluster_fail_count` and
    /// `masked_count` were missing from the list of derive's own keys, so an update kept the
    /// first run's stale numbers as if a human had written them.
    #[test]
    fn merge_replaces_every_count_derive_writes() {
        let old = doc(json!([
            {"id": "derived-bash-psql-aaaa", "tool": "Bash", "action": "monitor",
             "meta": {"fail_count": 3, "cluster_fail_count": 3, "masked_count": 1, "note": "kai"}}
        ]));
        let new = doc(json!([
            {"id": "derived-bash-psql-aaaa", "tool": "Bash", "action": "monitor",
             "meta": {"fail_count": 9, "cluster_fail_count": 12, "masked_count": 0}}
        ]));
        let w = merge(Some(&old), &new, "f", &BTreeMap::new()).unwrap();
        let meta = &w.document["rules"][0]["meta"];
        assert_eq!(meta["fail_count"], 9);
        assert_eq!(meta["cluster_fail_count"], 12);
        assert_eq!(meta["masked_count"], 0);
        assert_eq!(meta["note"], "kai");
    }

    #[test]
    fn merge_retires_candidates_a_reviewed_layer_declares() {
        let old = doc(json!([
            {"id": "derived-bash-psql-aaaa", "tool": "Bash", "action": "monitor", "meta": {}},
            {"id": "derived-bash-git-bbbb", "tool": "Bash", "action": "monitor", "meta": {}}
        ]));
        let promoted: BTreeMap<String, String> =
            [("derived-bash-psql-aaaa".to_string(), "p.json".to_string())].into();
        let w = merge(Some(&old), &doc(json!([])), "f", &promoted).unwrap();
        assert_eq!((w.added, w.updated, w.kept, w.retired), (0, 0, 1, 1));
        let rules = w.document["rules"].as_array().unwrap();
        assert_eq!(rules.len(), 1);
        assert_eq!(rules[0]["id"], "derived-bash-git-bbbb");
    }

    #[test]
    fn merge_refuses_a_file_that_is_not_a_ruleset() {
        assert!(merge(Some(&json!([1, 2])), &doc(json!([])), "f", &BTreeMap::new()).is_err());
        assert!(
            merge(
                Some(&json!({"rules": "x"})),
                &doc(json!([])),
                "f",
                &BTreeMap::new()
            )
            .is_err()
        );
    }
}
