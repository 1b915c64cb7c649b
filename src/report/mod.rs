//! The evidence report: what was recorded, what derive would have proposed week by week, what
//! was promoted, and whether each promoted rule changed the failure rate of the calls it
//! matches (callusguard's evidence report, with its defects fixed; see
//! README.md#evidence-derive-promote-prune-report).
//!
//! Guarantees: the period is half-open `[since, until)` ([`crate::window`]: a `--since`
//! duration counts back from `--until`) and applies to every total (sessions included); the
//! funnel replays `callus derive` itself, one 7-day window at a time ([`funnel`]); the promotion rate
//! divides by unique candidates; the effect table covers every promoted rule (`meta.promoted`)
//! of every layer, re-evaluated with the real matcher, with attempt counts, a two-proportion
//! test, the change in attempt volume and a reading ([`crate::prune::effect`]). Output is a
//! text summary, `--json`, or one self-contained HTML file ([`html`]).

pub(crate) mod charts;
pub(crate) mod evidence;
pub(crate) mod funnel;
pub(crate) mod html;

use std::fmt::Write as _;

use rusqlite::Connection;
use serde::Serialize;

use crate::config::Home;
use crate::prune::effect::{self, Effect, Span};
use crate::rules::backtest::{History, Scan, load_scan, matching_in};
use crate::rules::layers::{LayerKind, LayerPaths};
use crate::rules::{Action, RuleSet};
use crate::window::{DAY_MS, Window, iso};
use crate::{Error, Exit, Result};
use evidence::{Point, RecurringFailure, p_text};
use funnel::{Funnel, Proposal};

/// The observational caveat printed with every effect table.
pub(crate) const CAVEAT: &str = "Rates are observational: nothing controlled what else changed between before and after. Read every rate with its attempt count and the volume change.";

/// Corpus totals over the period.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct Totals {
    /// Distinct sessions with a call in the period.
    pub sessions: u64,
    /// Every recorded call in the period.
    pub tool_calls: u64,
    /// Calls that failed.
    pub failures: u64,
    /// Calls refused (permission rule, hook, user): not attempts.
    pub denied: u64,
    /// `failures / (successes + failures)`.
    pub fail_rate: Option<f64>,
    /// Guard decisions in the period where a rule fired, by decision.
    pub verdicts: std::collections::BTreeMap<String, u64>,
}

/// Promoted rules and the promotion rate.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct Promoted {
    /// Ids of every rule with `meta.promoted`.
    pub ids: Vec<String>,
    /// Of those, promoted from derived evidence (they carry `meta.tier`).
    pub derived: u64,
    /// Of those, written by hand from principle (no `meta.tier`).
    pub authored: u64,
    /// `derived / funnel.unique`.
    pub rate: Option<f64>,
}

/// One row of the effect table.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct EffectRow {
    /// Rule id.
    pub id: String,
    /// Layer kind.
    pub layer: &'static str,
    /// The rule's tool glob.
    pub tool: String,
    /// Its patterns (`any`), as written.
    pub patterns: Vec<String>,
    /// Its message.
    pub message: Option<String>,
    /// The action the guard applies.
    pub action: Action,
    /// The promotion date.
    pub promoted: String,
    /// The measurement; `None` when the promotion date is outside the period's calls.
    pub effect: Option<Effect>,
    /// `helped`, `harmful`, `volume-shift`, `no-effect`, `too-little-data`, or
    /// `not-measurable` when the date is outside the recorded period.
    pub reading: &'static str,
    /// Significant at the test's level.
    pub significant: bool,
    /// The volume-collapse note.
    pub note: Option<String>,
    /// Its failure rate week by week around the promotion ([`evidence::series`]).
    pub series: Vec<Point>,
}

/// The whole report (also the `--json` document).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Report {
    /// Start of the period (RFC 3339).
    pub since: String,
    /// End of the period, exclusive (RFC 3339).
    pub until: String,
    /// Length in days.
    pub days: f64,
    /// Corpus totals.
    pub totals: Totals,
    /// The top recurring failures.
    pub failures: Vec<RecurringFailure>,
    /// The candidates derive proposes over the whole period.
    pub candidates: Vec<Proposal>,
    /// The derivation funnel.
    pub funnel: Option<Funnel>,
    /// Promoted rules.
    pub promoted: Promoted,
    /// Before/after per promoted rule.
    pub effect: Vec<EffectRow>,
    /// The observational caveat.
    pub caveat: &'static str,
}

/// What `callus report` was asked for: its period, where its evidence is, how to print it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Request {
    /// The period's start (`--since`: a date or a duration back from `until`).
    pub since: Option<String>,
    /// The period's end (`--until`), exclusive.
    pub until: Option<String>,
    /// A team store to read instead of the local one (`--db`).
    pub db: Option<String>,
    /// Write one self-contained HTML page there (`--html FILE`).
    pub html: Option<std::path::PathBuf>,
    /// Print the report as JSON (`--json`).
    pub json: bool,
}

/// What the report reads of a team store: its period (`--since` absent: from the first call
/// on, so everything up to `--until`). The period is resolved again on the copy, the same way.
fn team_scope(args: &Request) -> Result<crate::sync::Scope> {
    let w = Window::resolve(
        args.since.as_deref(),
        args.until.as_deref(),
        crate::store::now_ms(),
        |until_ms| until_ms - 1,
    )?;
    let range = crate::sync::Range {
        since: args.since.is_some().then_some(w.since_ms),
        until: args.until.is_some().then_some(w.until_ms),
    };
    Ok(crate::sync::Scope {
        calls: range,
        audit: range,
    })
}

/// `callus report [--since] [--until] [--json | --html FILE]`.
pub(crate) fn run(home: &Home, args: &Request) -> Result<Exit> {
    let cwd = std::env::current_dir().ok();
    let rules = RuleSet::load(&LayerPaths::resolve(home, cwd.as_deref()))?;
    let evidence = crate::sync::evidence_in(args.db.as_deref(), home, &team_scope(args)?)?;
    let conn = crate::store::open_existing(evidence.path())?;
    let recorded = recorded_span(conn.as_ref())?;
    let now = crate::store::now_ms();
    // With neither bound given, the period is fitted to the data: the first recorded day to
    // the last, stretched to a promotion made since (today's included).
    let until_default = match (&args.since, &args.until, recorded) {
        (None, None, Some((_, last))) => fitted_end(last, latest_promotion(&rules), now),
        _ => now,
    };
    let period = Window::resolve(
        args.since.as_deref(),
        args.until.as_deref(),
        until_default,
        |until_ms| recorded.map_or(until_ms - 30 * DAY_MS, |(first, _)| midnight(first)),
    )?;
    if conn.is_none() {
        eprintln!(
            "callus: no store at {}: the report has nothing recorded to count",
            evidence.label()
        );
    }
    let report = build(&rules, conn.as_ref(), &period)?;
    if let Some(path) = &args.html {
        let page = html::render(&report);
        std::fs::write(path, page).map_err(|e| Error::io(path, e))?;
        eprintln!("wrote {}", path.display());
    } else if args.json {
        crate::output::print_json(
            &serde_json::to_value(&report).map_err(|e| Error::json("report", e))?,
        );
    } else {
        crate::output::print_text(&text(&report));
    }
    Ok(Exit::Ok)
}

/// When the first and the last recorded call started (Unix ms), if anything was recorded.
fn recorded_span(conn: Option<&Connection>) -> Result<Option<(i64, i64)>> {
    let Some(conn) = conn else { return Ok(None) };
    let (first, last): (Option<i64>, Option<i64>) = conn
        .query_row(
            "SELECT min(started_ms), max(started_ms) FROM tool_calls WHERE started_ms IS NOT NULL",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .map_err(|e| Error::sql("read first and last call", e))?;
    Ok(first.zip(last))
}

/// The UTC midnight that starts the day of `ms`.
fn midnight(ms: i64) -> i64 {
    ms.div_euclid(DAY_MS) * DAY_MS
}

/// The latest promotion date of any active rule, as the midnight that starts it.
fn latest_promotion(rules: &RuleSet) -> Option<i64> {
    rules
        .rules()
        .filter(|(l, r)| l.kind != LayerKind::Candidates && r.meta.contains_key("promoted"))
        .filter_map(|(_, r)| r.promoted())
        .filter_map(|d| d.and_hms_opt(0, 0, 0))
        .map(|t| t.and_utc().timestamp_millis())
        .max()
}

/// The end of a fitted period: after the last recorded day, or after the day of a later
/// promotion (never past today).
fn fitted_end(last_call: i64, promotion: Option<i64>, now: i64) -> i64 {
    let after_last = midnight(last_call) + DAY_MS;
    let after_promotion = promotion.map_or(0, |p| p.min(midnight(now)) + DAY_MS);
    after_last.max(after_promotion)
}

/// Build the report over `period`.
pub(crate) fn build(rules: &RuleSet, conn: Option<&Connection>, period: &Window) -> Result<Report> {
    let (s, u) = (period.since_ms, period.until_ms);
    let (totals, funnel, stored) = match conn {
        Some(c) => (
            totals(c, s, u)?,
            Some(funnel::replay(c, period, funnel::Settings::default())?),
            load_scan(c, Some(s), Some(u))?,
        ),
        None => (Totals::default(), None, Scan::default()),
    };
    // Conditioned rules are replayed with their conditions, answered from the store.
    let history = conn.map_or_else(History::none, |c| History::new(c, &stored.session_ids));
    let calls = &stored.calls;
    let (failures, candidates) = match conn {
        Some(c) => (
            evidence::recurring_failures(c, period)?,
            evidence::candidates(c, period)?,
        ),
        None => (Vec::new(), Vec::new()),
    };
    // From the first recorded call to the end of the period: a rule promoted after the last
    // call (today, say) is inside it, with nothing recorded after yet.
    let span = Span::of(calls).map(|sp| Span {
        start_ms: sp.start_ms,
        end_ms: sp.end_ms.max(u - 1),
    });
    let mut promoted = Promoted::default();
    let mut rows = Vec::new();
    let chosen: Vec<_> = rules
        .rules()
        .filter(|(layer, rule)| {
            layer.kind != LayerKind::Candidates && rule.meta.contains_key("promoted")
        })
        .collect();
    let only_rules: Vec<&crate::rules::Rule> = chosen.iter().map(|(_, r)| *r).collect();
    let matched = matching_in(&only_rules, calls, &history);
    for ((layer, rule), idx) in chosen.into_iter().zip(&matched) {
        let Some(date) = rule.promoted() else {
            continue;
        };
        promoted.ids.push(rule.id.clone());
        if rule.tier().is_some() {
            promoted.derived += 1;
        } else {
            promoted.authored += 1;
        }
        rows.push(effect_row(layer, rule, date, calls, idx, span, period));
    }
    promoted.rate = funnel
        .as_ref()
        .filter(|f| f.unique > 0)
        .map(|f| promoted.derived as f64 / f.unique as f64);
    Ok(Report {
        since: iso(s),
        until: iso(u),
        days: (u - s) as f64 / 86_400_000.0,
        totals,
        failures,
        candidates,
        funnel,
        promoted,
        effect: rows,
        caveat: CAVEAT,
    })
}

/// One promoted rule's row of the effect table: its before/after effect over the recorded
/// span and its daily series around the promotion date.
fn effect_row(
    layer: &crate::rules::layers::Layer,
    rule: &crate::rules::Rule,
    date: chrono::NaiveDate,
    calls: &[crate::rules::backtest::StoredCall],
    idx: &[usize],
    span: Option<Span>,
    period: &Window,
) -> EffectRow {
    let effect = span.and_then(|sp| effect::measure(rule, calls, idx, sp));
    let series = date
        .and_hms_opt(0, 0, 0)
        .map(|t| evidence::series(calls, idx, t.and_utc().timestamp_millis(), period))
        .unwrap_or_default();
    EffectRow {
        id: rule.id.clone(),
        layer: layer.kind.as_str(),
        tool: rule.tool.clone(),
        patterns: rule.any.iter().map(|p| p.source().to_string()).collect(),
        message: rule.message.clone(),
        series,
        action: layer.effective_action(rule),
        promoted: date.to_string(),
        reading: effect
            .as_ref()
            .map_or("not-measurable", |e| e.outcome.as_str()),
        significant: effect
            .as_ref()
            .and_then(|e| e.p_value)
            .is_some_and(|p| p < effect::ALPHA),
        note: effect.as_ref().and_then(Effect::volume_note),
        effect,
    }
}

fn totals(conn: &Connection, s: i64, u: i64) -> Result<Totals> {
    let err = |e| Error::sql("count calls", e);
    let (tool_calls, failures, denied, settled): (i64, i64, i64, i64) = conn
        .query_row(
            "SELECT count(*),
                    coalesce(sum(status = 'failure'), 0), coalesce(sum(status = 'denied'), 0),
                    coalesce(sum(status IN ('success', 'failure')), 0)
             FROM tool_calls WHERE started_ms >= ?1 AND started_ms < ?2",
            [s, u],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .map_err(err)?;
    // One definition of a session for every command (`record stats` too).
    let sessions = crate::record::stats::session_count(conn, Some(s), Some(u))?;
    let verdicts = crate::store::audit_query::decision_counts(conn, s, u)?
        .into_iter()
        .collect();
    Ok(Totals {
        sessions: sessions as u64,
        tool_calls: tool_calls as u64,
        failures: failures as u64,
        denied: denied as u64,
        fail_rate: (settled > 0).then(|| failures as f64 / settled as f64),
        verdicts,
    })
}

/// `12.3%`, or `n/a`.
#[must_use]
pub(crate) fn pct(rate: Option<f64>) -> String {
    rate.map_or_else(|| "n/a".to_string(), |r| format!("{:.1}%", r * 100.0))
}

/// The text rendering.
#[must_use]
pub(crate) fn text(r: &Report) -> String {
    let mut out = String::new();
    let t = &r.totals;
    let _ = writeln!(
        out,
        "corpus — {} .. {} ({:.0} days)",
        &r.since[..10],
        &r.until[..10],
        r.days
    );
    let _ = writeln!(
        out,
        "  {} sessions · {} tool calls · {} failures ({}) · {} denied",
        t.sessions,
        t.tool_calls,
        t.failures,
        pct(t.fail_rate),
        t.denied
    );
    let verdicts: Vec<String> = t.verdicts.iter().map(|(k, v)| format!("{v} {k}")).collect();
    if !verdicts.is_empty() {
        let _ = writeln!(
            out,
            "  guard decisions where a rule fired: {}",
            verdicts.join(", ")
        );
    }
    out.push('\n');
    failures_text(&mut out, r);
    funnel_text(&mut out, r);
    effect_text(&mut out, r);
    let _ = writeln!(out, "  {CAVEAT}");
    out
}

/// The recurring failures and the candidates of the period.
fn failures_text(out: &mut String, r: &Report) {
    if !r.failures.is_empty() {
        let _ = writeln!(out, "top recurring failures");
        let mut table =
            crate::output::table(&["failures", "of", "sessions", "tool", "program", "error"]);
        for f in &r.failures {
            table.add_row(vec![
                f.failures.to_string(),
                f.attempts.to_string(),
                f.sessions.to_string(),
                f.tool.clone(),
                f.program.clone().unwrap_or_else(|| "-".into()),
                f.signature.clone().unwrap_or_else(|| "-".into()),
            ]);
        }
        let _ = writeln!(out, "{table}\n");
    }
    if !r.candidates.is_empty() {
        let _ = writeln!(out, "candidates derive proposes over the period");
        let mut table = crate::output::table(&["id", "tool", "pattern", "tier", "evidence"]);
        for c in &r.candidates {
            table.add_row(vec![
                c.id.clone(),
                c.tool.clone(),
                c.pattern.clone().unwrap_or_else(|| "(tool-wide)".into()),
                c.tier.to_string(),
                candidate_evidence(c),
            ]);
        }
        let _ = writeln!(out, "{table}\n");
    }
}

/// The derivation funnel, window by window.
fn funnel_text(out: &mut String, r: &Report) {
    if let Some(f) = &r.funnel {
        let _ = writeln!(
            out,
            "derivation funnel — one {}-day window at a time, min-count {}, min-attempts {}",
            funnel::WINDOW_DAYS,
            f.settings.min_count,
            f.settings.min_attempts
        );
        for w in &f.rows {
            let top: Vec<String> = w
                .top
                .iter()
                .map(|p| {
                    format!(
                        "{}x {} {}",
                        p.fail_count,
                        p.tool,
                        p.pattern.as_deref().unwrap_or("(tool-wide)")
                    )
                })
                .collect();
            let line = format!(
                "  {}  {:>3} candidate(s)  {}",
                w.start,
                w.proposed,
                top.join(", ")
            );
            let _ = writeln!(out, "{}", line.trim_end());
        }
        let _ = writeln!(
            out,
            "  {} proposed ({} unique) across {} windows ({} empty); {} withheld as anecdotal",
            f.proposed, f.unique, f.windows, f.empty_windows, f.withheld
        );
    }
}

/// What was promoted and the effect table of every promoted rule.
fn effect_text(out: &mut String, r: &Report) {
    let p = &r.promoted;
    let _ = writeln!(
        out,
        "  {} promoted, {} of them from derived evidence, {} written from principle",
        p.ids.len(),
        p.derived,
        p.authored
    );
    let _ = writeln!(
        out,
        "  -> {} promotion rate (derived promotions over unique candidates)\n",
        p.rate
            .map_or_else(|| "n/a".to_string(), |x| format!("{:.0}%", x * 100.0))
    );
    let _ = writeln!(
        out,
        "effect of promotion — failure rate among the calls each rule matches"
    );
    let mut table = crate::output::table(&[
        "rule", "action", "promoted", "before", "after", "p", "volume", "reading",
    ]);
    for row in &r.effect {
        let (before, after, p, vol) = match &row.effect {
            Some(e) => (
                format!("{} (n={})", pct(e.before.rate()), e.before.attempts),
                format!("{} (n={})", pct(e.after.rate()), e.after.attempts),
                e.p_value.map_or("-".into(), p_text),
                e.volume_change
                    .map_or("-".into(), |v| format!("{:+.0}%/day", v * 100.0)),
            ),
            None => ("-".into(), "-".into(), "-".into(), "-".into()),
        };
        table.add_row(vec![
            row.id.clone(),
            row.action.to_string(),
            row.promoted.clone(),
            before,
            after,
            p,
            vol,
            row.reading.to_string(),
        ]);
    }
    let _ = writeln!(out, "{table}");
    for row in &r.effect {
        if let Some(n) = &row.note {
            let _ = writeln!(out, "  note {}: {n}", row.id);
        }
    }
}

/// `4 of 6 matched calls failed (67%)`, or the failure count alone without attempts.
#[must_use]
pub(crate) fn candidate_evidence(c: &Proposal) -> String {
    match c.attempt_count {
        Some(n) => format!(
            "{} of {n} matched calls failed ({})",
            c.fail_count,
            pct(c.fail_rate)
        ),
        None => format!("{} failures (no attempt count)", c.fail_count),
    }
}
