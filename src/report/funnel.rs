//! The derivation funnel: `callus derive` replayed one 7-day window at a time over the report
//! period, so each window's candidates, tiers and withheld clusters are exactly what a weekly
//! `callus derive` run would have produced then (callusguard's report ran derive without
//! denominators, so every cluster tiered unknown and nothing was withheld).
//!
//! Each window is a call to derive's own per-window function (`derive::derive`) with
//! derive's default thresholds and exclusions: the same failing-segment clustering, the same
//! backtest of each candidate's pattern, the same tier on what the pattern matches. Nothing is
//! written. A candidate's identity is its id, which derive derives from the cluster (tool
//! group, shape, signature) and never from counts, so `unique` counts each recurring failure
//! once however many windows it recurs in. The replay does not skip candidates that were
//! promoted since: a weekly run in that window would have proposed them.

use std::collections::HashSet;

use rusqlite::Connection;
use serde::Serialize;

use crate::Result;
use crate::derive::{self, Options};
use crate::window::{DAY_MS, Window, date};

/// Length of one replayed window.
pub(crate) const WINDOW_DAYS: i64 = 7;

/// Replay settings (derive's defaults).
#[derive(Debug, Clone, Copy, Serialize)]
pub(crate) struct Settings {
    /// Fewest failures a cluster needs.
    pub min_count: u64,
    /// Fewest attempts for a tier better than anecdotal.
    pub min_attempts: u64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            min_count: derive::DEFAULT_MIN_COUNT,
            min_attempts: crate::rules::tier::MIN_ATTEMPTS,
        }
    }
}

/// One candidate a window proposed.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Proposal {
    /// The candidate id, as `callus derive` names it.
    pub id: String,
    /// The rule's tool glob.
    pub tool: String,
    /// Its first pattern (`None` for a tool-wide candidate).
    pub pattern: Option<String>,
    /// Failures in the clusters behind it.
    pub fail_count: u64,
    /// Calls its pattern matches in the window (`None` without a denominator).
    pub attempt_count: Option<u64>,
    /// Evidence tier of what it matches.
    pub tier: &'static str,
    /// `fail_count / attempt_count` of what its pattern matches, when it has attempts.
    pub fail_rate: Option<f64>,
    /// The message derive proposes for it.
    pub message: Option<String>,
}

impl Proposal {
    /// The proposal for one of a derivation's candidates.
    #[must_use]
    pub(crate) fn of(d: &derive::Derived, dv: &derive::Derivation) -> Self {
        Proposal {
            id: d.id().to_string(),
            tool: d.rule.tool.clone(),
            pattern: d.proposal.any.first().cloned(),
            // The candidate's own count (its backtest's, see derive's candidates).
            fail_count: d
                .rule
                .meta
                .as_ref()
                .map_or(d.fail_count(&dv.clusters), |m| m.fail_count)
                as u64,
            attempt_count: d.attempts,
            tier: d.tier.label(),
            fail_rate: d.rate,
            message: d.rule.message.clone(),
        }
    }
}

/// One replayed window.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Week {
    /// Start (inclusive), `YYYY-MM-DD`.
    pub start: String,
    /// Failed calls recorded in the window (every tool, as the totals count them).
    pub failures: u64,
    /// Candidates proposed.
    pub proposed: u64,
    /// Clusters withheld as anecdotal.
    pub withheld: u64,
    /// The three largest proposals.
    pub top: Vec<Proposal>,
}

/// The whole funnel.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Funnel {
    /// Replay settings.
    pub settings: Settings,
    /// Candidates proposed, summed over windows.
    pub proposed: u64,
    /// Distinct candidates.
    pub unique: u64,
    /// Clusters withheld as anecdotal, summed over windows.
    pub withheld: u64,
    /// Windows replayed.
    pub windows: u64,
    /// Windows that proposed nothing.
    pub empty_windows: u64,
    /// Per window.
    pub rows: Vec<Week>,
}

/// Replay derive over `period`, one [`WINDOW_DAYS`]-day window at a time.
pub(crate) fn replay(conn: &Connection, period: &Window, settings: Settings) -> Result<Funnel> {
    let mut funnel = Funnel {
        settings,
        proposed: 0,
        unique: 0,
        withheld: 0,
        windows: 0,
        empty_windows: 0,
        rows: Vec::new(),
    };
    let mut unique: HashSet<String> = HashSet::new();
    for window in period.steps(WINDOW_DAYS * DAY_MS) {
        let options = Options {
            min_count: settings.min_count,
            min_attempts: settings.min_attempts,
            ..Options::new(window)
        };
        let dv = derive::derive(conn, options)?;
        let proposed = dv.candidates.len() as u64;
        let withheld = dv.withheld.len() as u64;
        funnel.windows += 1;
        funnel.proposed += proposed;
        funnel.withheld += withheld;
        if proposed == 0 {
            funnel.empty_windows += 1;
        }
        unique.extend(dv.candidates.iter().map(|d| d.id().to_string()));
        // Derive lists its candidates largest first.
        let top = dv
            .candidates
            .iter()
            .take(3)
            .map(|d| Proposal::of(d, &dv))
            .collect();
        funnel.rows.push(Week {
            start: date(window.since_ms),
            failures: failures_in(conn, &window)?,
            proposed,
            withheld,
            top,
        });
    }
    funnel.unique = unique.len() as u64;
    Ok(funnel)
}

/// Failed calls recorded in `window`.
fn failures_in(conn: &Connection, window: &Window) -> Result<u64> {
    conn.query_row(
        "SELECT count(*) FROM tool_calls
         WHERE status = 'failure' AND started_ms >= ?1 AND started_ms < ?2",
        [window.since_ms, window.until_ms],
        |r| r.get::<_, i64>(0),
    )
    .map(|n| n.max(0) as u64)
    .map_err(|e| crate::Error::sql("count failures per week", e))
}
