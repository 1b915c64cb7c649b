//! The candidate document (docs/rule-format.md#the-document), built from a derivation.
//!
//! Each candidate is a rule at `action: "monitor"` whose `meta` carries the evidence: the
//! cluster (fail count, signature, shape, redacted sample command and error from the same,
//! latest, failure), the backtest of its pattern, the contrast behind its `unless`, and the
//! tier, basis and ceiling computed on what the pattern matches. `examples` hold a failing
//! call it fires on and, when the contrast exempted something, a successful call it spares —
//! both re-checked here with the real matcher, so `guard check` verifies the candidate
//! against its own evidence.
//!
//! The document is merged into a file by `merge`.

use std::fmt::Write as _;

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

/// The observational caveat shown wherever tiers are.
pub(crate) const CAVEAT: &str = "Rates are observational: they count whatever traffic happened to run in the window, \
not a controlled re-run. Treat each tier as a prior, not a proof.";

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
    let message = draft_message(d, primary, fail_count, &basis, &shown_error, days);
    let (first, last) = span(dv, &clusters);
    let tool_wide_unsigned = primary.kind == Kind::ToolWide && primary.signature.is_empty();
    // The threshold the tier was graded with, so `guard check` grades it the same way.
    let floor = super::attempt_floor(&dv.options, &d.proposal);
    let meta = Meta {
        why: format!("{fail_count} recorded failures in {days}d; auto-surfaced by callus derive."),
        added: date(crate::store::now_ms()),
        telemetry_ref: telemetry_ref(dv, &clusters),
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
        contrast: contrast_meta(d),
        field_contrast: d.proposal.field_unless.clone(),
        crossfire_note: crossfire_note(d, dv.options.min_attempts),
        clusters: folded(&clusters),
        window: WindowSpan::from(dv.options.window),
    };
    Candidate {
        message: Some(message),
        meta: Some(meta),
        examples: examples(dv, d, primary, rule),
        ..skeleton(primary, &d.proposal)
    }
}

/// The draft message: the tool cause's own, or what failed, how often, and how far the
/// evidence lets it be promoted.
fn draft_message(
    d: &Derived,
    primary: &Cluster,
    fail_count: usize,
    basis: &str,
    shown_error: &str,
    days: i64,
) -> String {
    let ceiling = d.tier.ceiling();
    if let Some(m) = super::tool_causes::message(
        &d.proposal,
        &primary.group.glob,
        fail_count,
        d.backtest.sessions,
        basis,
        ceiling,
    ) {
        m
    } else if let Some(m) =
        super::sandbox::message(&d.proposal, primary, fail_count, basis, ceiling)
    {
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
    }
}

/// `callus:SOURCE+…`: where the clusters' failures were recorded from.
fn telemetry_ref(dv: &Derivation, clusters: &[&Cluster]) -> String {
    let mut sources: Vec<&str> = clusters
        .iter()
        .flat_map(|c| c.failures.iter().map(|&i| dv.failures[i].source.as_str()))
        .collect();
    sources.sort_unstable();
    sources.dedup();
    format!("callus:{}", sources.join("+"))
}

/// `meta.contrast`, when enough successes were compared.
fn contrast_meta(d: &Derived) -> Option<ContrastMeta> {
    d.contrast
        .as_ref()
        .filter(|k| k.successes >= super::contrast::MIN_SUCCESSES)
        .map(|k| ContrastMeta {
            successes: k.successes,
            failures: k.failures,
            unless: k.unless.clone(),
            narrow: k.narrow.clone(),
        })
}

/// `meta.clusters`: every cluster folded into the candidate, when more than one.
fn folded(clusters: &[&Cluster]) -> Option<Vec<FoldedCluster>> {
    (clusters.len() > 1).then(|| {
        clusters
            .iter()
            .map(|c| FoldedCluster {
                id: c.id(),
                signature: c.signature.clone(),
                fail_count: c.count(),
            })
            .collect()
    })
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
