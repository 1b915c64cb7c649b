//! Prune: a lifecycle verdict for every active rule, from its firings and measured outcomes.
//!
//! For each rule of every layer (starter, user, project, env, candidates) prune reads, from
//! the store: its firings in the window (the audit chain, [`firings`]); the outcome of each call
//! it nudged or monitored (joined to `tool_calls` by `tool_use_id`); the evidence tier of the
//! calls it matches in the window, re-evaluated with the real matcher; and, when its promotion
//! date falls inside the recorded history, the failure rate of its matched calls before and
//! after that date ([`effect`]). [`verdict`] turns that into one of `harmful`, `no-effect`,
//! `promote`, `review`, `prune`, `keep`; [`render`] prints it. Prune never edits a ruleset.
//!
//! A missing or empty store is not silence: every rule then reads as `prune` "for lack of
//! evidence", and the rendering says so loudly.

pub(crate) mod age;
pub(crate) mod effect;
pub(crate) mod firings;
pub(crate) mod render;
pub(crate) mod verdict;

use std::collections::{BTreeMap, HashSet};

use chrono::{DateTime, Utc};
use rusqlite::{Connection, OptionalExtension};
use serde::Serialize;

use crate::config::Home;
use crate::rules::backtest::{Backtest, History, Scan, load_scan, matching_in, summarize};
use crate::rules::layers::LayerPaths;
use crate::rules::{Action, RuleSet};
use crate::window::{Window, iso};
use crate::{Error, Exit, Result};
use effect::{Effect, Span};
use firings::Firings;
use verdict::{Facts, TierSource, Verdict};

/// What happened to the calls a rule nudged or only monitored (they ran).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub(crate) struct Followed {
    /// Firings with a nudge or monitor action.
    pub calls: u64,
    /// Of those, calls that succeeded.
    pub success: u64,
    /// Calls that failed.
    pub failure: u64,
    /// Calls interrupted, denied or still pending.
    pub other: u64,
    /// Firings whose call the store has no row for (or no `tool_use_id`).
    pub unrecorded: u64,
}

/// The verdict on one rule, with its evidence.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct RuleVerdict {
    /// Rule id.
    pub id: String,
    /// Layer kind.
    pub layer: &'static str,
    /// Layer file (`starter` for the built-in set).
    pub file: String,
    /// The action the guard applies.
    pub action: Action,
    /// The action as written.
    pub declared_action: Action,
    /// A protective rule prune never cuts.
    pub pinned: bool,
    /// The verdict.
    pub verdict: Verdict,
    /// Why, in one word.
    pub basis: &'static str,
    /// Why, for people.
    pub reason: String,
    /// For `promote`: the strongest action its evidence allows.
    pub promote_to: Option<Action>,
    /// Firings in the window.
    pub count: u64,
    /// Latest dated firing (RFC 3339).
    pub last_seen: Option<String>,
    /// The evidence tier the verdict used.
    pub tier: Option<&'static str>,
    /// Where the tier came from.
    pub tier_source: Option<TierSource>,
    /// The calls it matches in the window.
    pub matched: Backtest,
    /// Outcomes of the calls it nudged or monitored in the window.
    pub followed: Followed,
    /// Before/after its promotion date, over the whole recorded history.
    pub effect: Option<Effect>,
    /// The volume-collapse note, when attempts fell after promotion.
    pub note: Option<String>,
}

/// The whole prune report (also the `--json` document).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Report {
    /// The active layers, in evaluation order.
    pub layers: Vec<String>,
    /// The store read.
    pub store: String,
    /// Window in days.
    pub window_days: u32,
    /// Start of the window (RFC 3339).
    pub since: String,
    /// Audit records in the window (dated in-window plus undated).
    pub events_in_window: u64,
    /// Every decision record in the chain.
    pub events_total: u64,
    /// Records with no parseable `ts`, counted regardless.
    pub undated_events: u64,
    /// Records that did not parse (skipped).
    pub corrupt_events: u64,
    /// False for a missing or empty audit chain.
    pub audit_readable: bool,
    /// Settled calls the store holds (the population effects are measured on).
    pub recorded_calls: u64,
    /// One verdict per active rule.
    pub rules: Vec<RuleVerdict>,
    /// Rules that fired in the window but are not declared in any active layer.
    pub orphan_rule_ids: Vec<String>,
    /// Rules per verdict.
    pub counts: BTreeMap<&'static str, u64>,
}

/// What `callus guard prune` was asked for.
#[derive(Debug, Clone, Default)]
pub(crate) struct Request {
    /// The window, in days back from now (`--days`).
    pub days: u32,
    /// Print the report as JSON (`--json`).
    pub json: bool,
    /// A team store to read instead of the local one (`--db`).
    pub db: Option<String>,
}

/// `callus guard prune [--days N] [--json]`.
pub(crate) fn run(home: &Home, args: &Request) -> Result<Exit> {
    let cwd = std::env::current_dir().ok();
    let rules = RuleSet::load(&LayerPaths::resolve(home, cwd.as_deref()))?;
    let evidence =
        crate::sync::evidence_in(args.db.as_deref(), home, &team_scope(&rules, args.days))?;
    let conn = crate::store::open_existing(evidence.path())?;
    let report = build(
        &rules,
        conn.as_ref(),
        &evidence.label(),
        args.days,
        Utc::now(),
    )?;
    if args.json {
        crate::output::print_json(
            &serde_json::to_value(&report).map_err(|e| Error::json("prune report", e))?,
        );
    } else {
        crate::output::print_text(&render::text(&report));
    }
    Ok(Exit::Ok)
}

/// What prune reads of a team store: the window's firings and calls, and, when a rule has a
/// promotion date, every call (its before/after effect spans the whole recorded history).
fn team_scope(rules: &RuleSet, days: u32) -> crate::sync::Scope {
    let window = Window::last_days(days, crate::store::now_ms());
    let audit = crate::sync::Range {
        since: Some(window.since_ms),
        until: None,
    };
    let promoted = rules.rules().any(|(_, r)| r.promoted().is_some());
    crate::sync::Scope {
        calls: if promoted {
            crate::sync::Range::default()
        } else {
            audit
        },
        audit,
    }
}

/// Build the report for `rules` from the store (`None`: there is no store) at time `now`.
// the prune report assembled in one pass over the rules, with the tallies it shares
#[allow(clippy::too_many_lines)]
pub(crate) fn build(
    rules: &RuleSet,
    conn: Option<&Connection>,
    store: &str,
    days: u32,
    now: DateTime<Utc>,
) -> Result<Report> {
    let window = Window::last_days(days, now.timestamp_millis());
    let (firings, stored) = match conn {
        Some(c) => (
            firings::read(c, window.since_ms)?,
            load_scan(c, None, None)?,
        ),
        None => (Firings::default(), Scan::default()),
    };
    // Conditioned rules are replayed with their conditions, answered from the store.
    let history = conn.map_or_else(History::none, |c| History::new(c, &stored.session_ids));
    let calls = &stored.calls;
    let span = Span::of(calls);
    let first_in_window = calls.partition_point(|c| c.started_ms < window.since_ms);
    // A promoted candidate may still be listed in candidates.json: the first declaration wins.
    let mut seen = HashSet::new();
    let active: Vec<_> = rules
        .rules()
        .filter(|(_, r)| seen.insert(r.id.as_str()))
        .collect();
    let only_rules: Vec<&crate::rules::Rule> = active.iter().map(|(_, r)| *r).collect();
    let matched_all = matching_in(&only_rules, calls, &history);
    let mut out = Vec::new();
    for ((layer, rule), idx) in active.into_iter().zip(&matched_all) {
        let tally = firings.by_rule.get(&rule.id);
        let count = tally.map_or(0, |t| t.count);
        let in_window: Vec<usize> = idx
            .iter()
            .filter(|&&i| i >= first_in_window)
            .copied()
            .collect();
        let matched = summarize(calls, &in_window);
        let followed = match (conn, tally) {
            (Some(c), Some(t)) => followed(c, t)?,
            _ => Followed::default(),
        };
        let effect = span.and_then(|s| effect::measure(rule, calls, idx, s));
        let tier = measured_or_meta_tier(&matched, rule.tier());
        let action = layer.effective_action(rule);
        let j = verdict::classify(&Facts {
            action,
            pinned: rule.pinned,
            count,
            window_days: days,
            tier,
            effect: effect.as_ref(),
        });
        let enforced_ms = rule
            .promoted()
            .and_then(|d| d.and_hms_opt(0, 0, 0))
            .map(|t| t.and_utc().timestamp_millis());
        let age = age::Age {
            days: enforced_ms.map(|ms| (now.timestamp_millis() - ms).div_euclid(86_400_000)),
            attempts: enforced_ms.map_or(0, |ms| {
                idx.iter().filter(|&&i| calls[i].started_ms >= ms).count() as u64
            }),
        };
        let j = age::settle(j, age, days, crate::rules::tier::MIN_ATTEMPTS);
        out.push(RuleVerdict {
            id: rule.id.clone(),
            layer: layer.kind.as_str(),
            file: layer.name(),
            action,
            declared_action: rule.action,
            pinned: rule.pinned,
            verdict: j.verdict,
            basis: j.basis,
            reason: j.reason,
            promote_to: j.promote_to,
            count,
            last_seen: tally.and_then(|t| t.last_seen).map(|t| t.to_rfc3339()),
            tier: tier.map(|t| t.0.label()),
            tier_source: tier.map(|t| t.1),
            matched,
            followed,
            note: effect.as_ref().and_then(Effect::volume_note),
            effect,
        });
    }
    let orphan_rule_ids = firings
        .by_rule
        .keys()
        .filter(|id| !seen.contains(id.as_str()))
        .cloned()
        .collect();
    let mut counts: BTreeMap<&'static str, u64> =
        Verdict::ALL.iter().map(|v| (v.as_str(), 0)).collect();
    for r in &out {
        *counts.entry(r.verdict.as_str()).or_default() += 1;
    }
    Ok(Report {
        layers: rules.layers.iter().map(crate::rules::Layer::name).collect(),
        store: store.to_string(),
        window_days: days,
        since: iso(window.since_ms),
        events_in_window: firings.events_in_window,
        events_total: firings.events_total,
        undated_events: firings.undated,
        corrupt_events: firings.corrupt,
        audit_readable: firings.events_total > 0,
        recorded_calls: calls.len() as u64,
        rules: out,
        orphan_rule_ids,
        counts,
    })
}

/// The tier of what the rule matched in the window when anything was recorded, else the
/// `meta.tier` frozen at derivation.
fn measured_or_meta_tier(
    matched: &Backtest,
    meta: Option<&str>,
) -> Option<(crate::rules::tier::Tier, TierSource, Option<f64>, u64)> {
    if matched.matched > 0 {
        let (t, rate) = matched.tier();
        return Some((t, TierSource::Measured, rate, matched.matched));
    }
    let t = crate::rules::tier::Tier::parse(meta?)?;
    Some((t, TierSource::Meta, None, 0))
}

/// Join the nudge/monitor firings of a rule to the outcome of their calls.
fn followed(conn: &Connection, tally: &firings::Tally) -> Result<Followed> {
    let mut stmt = conn
        .prepare_cached("SELECT status FROM tool_calls WHERE tool_use_id = ?1")
        .map_err(|e| Error::sql("join firings to outcomes", e))?;
    let mut out = Followed::default();
    for f in tally
        .firings
        .iter()
        .filter(|f| f.action == "nudge" || f.action == "monitor")
    {
        out.calls += 1;
        let status: Option<String> = match &f.tool_use_id {
            Some(id) => stmt
                .query_row([id], |r| r.get(0))
                .optional()
                .map_err(|e| Error::sql("join firings to outcomes", e))?,
            None => None,
        };
        match status.as_deref() {
            None => out.unrecorded += 1,
            Some("success") => out.success += 1,
            Some("failure") => out.failure += 1,
            Some(_) => out.other += 1,
        }
    }
    Ok(out)
}
