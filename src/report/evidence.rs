//! What the report names, beyond its totals: the top recurring failures (program and error
//! signature, with counts), the candidates `callus derive` proposes over the whole period
//! (pattern, tier, evidence), and each promoted rule's failure rate week by week around its
//! promotion date.
//!
//! - A recurring failure is a group of failed calls with the same tool, command shape (the
//!   program the failure is blamed on, as the recorder stores it) and normalised error
//!   signature, seen at least twice; attempts are every settled call of that tool and shape.
//! - The candidates are one `derive::derive` run over the period with derive's defaults, so
//!   they are what `callus derive --since <period start> --until <period end>` prints.
//! - A rule's series buckets the calls it matches (the backtest's matcher) into
//!   [`SERIES_WEEKS`] seven-day buckets either side of its promotion date, each with its
//!   attempts and failures: the before/after comparison drawn over time rather than as two
//!   totals.

use rusqlite::Connection;
use serde::Serialize;

use super::funnel::{Proposal, Settings};
use crate::Result;
use crate::rules::backtest::StoredCall;
use crate::window::{DAY_MS, Window, date};

/// How many recurring failures the report lists.
pub(crate) const TOP_FAILURES: usize = 10;
/// How many candidates the report lists.
pub(crate) const TOP_CANDIDATES: usize = 20;
/// Weeks shown either side of a promotion.
pub(crate) const SERIES_WEEKS: i64 = 8;
const WEEK_MS: i64 = 7 * DAY_MS;

/// One recurring failure.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct RecurringFailure {
    /// The tool.
    pub tool: String,
    /// The program the failure is blamed on (the command shape), `None` when not a command.
    pub program: Option<String>,
    /// The normalised error signature (redacted when recorded).
    pub signature: Option<String>,
    /// Failed calls in the group.
    pub failures: u64,
    /// Settled calls (successes and failures) of the same tool and program.
    pub attempts: u64,
    /// Distinct sessions it failed in.
    pub sessions: u64,
}

/// The top recurring failures of `period`, most frequent first.
pub(crate) fn recurring_failures(
    conn: &Connection,
    period: &Window,
) -> Result<Vec<RecurringFailure>> {
    let err = |e| crate::Error::sql("read recurring failures", e);
    let mut stmt = conn
        .prepare(
            "SELECT f.tool, f.shape, f.signature, count(*) AS n, count(DISTINCT f.session_id),
                    (SELECT count(*) FROM tool_calls a
                      WHERE a.tool = f.tool AND a.shape IS f.shape
                        AND a.status IN ('success', 'failure')
                        AND a.started_ms >= ?1 AND a.started_ms < ?2)
             FROM tool_calls f
             WHERE f.status = 'failure' AND f.started_ms >= ?1 AND f.started_ms < ?2
             GROUP BY f.tool, f.shape, f.signature
             HAVING n >= 2
             ORDER BY n DESC, f.tool, f.shape, f.signature
             LIMIT ?3",
        )
        .map_err(err)?;
    let rows = stmt
        .query_map(
            [period.since_ms, period.until_ms, TOP_FAILURES as i64],
            |r| {
                let count = |i| r.get::<_, i64>(i).map(|n| n.max(0) as u64);
                Ok(RecurringFailure {
                    tool: r.get(0)?,
                    program: r.get::<_, Option<String>>(1)?.filter(|s| !s.is_empty()),
                    signature: r.get::<_, Option<String>>(2)?.filter(|s| !s.is_empty()),
                    failures: count(3)?,
                    sessions: count(4)?,
                    attempts: count(5)?,
                })
            },
        )
        .map_err(err)?;
    rows.collect::<std::result::Result<_, _>>().map_err(err)
}

/// The candidates derive proposes over the whole period, largest first.
pub(crate) fn candidates(conn: &Connection, period: &Window) -> Result<Vec<Proposal>> {
    let settings = Settings::default();
    let options = crate::derive::Options {
        min_count: settings.min_count,
        min_attempts: settings.min_attempts,
        ..crate::derive::Options::new(*period)
    };
    let dv = crate::derive::derive(conn, options)?;
    Ok(dv
        .candidates
        .iter()
        .take(TOP_CANDIDATES)
        .map(|d| Proposal::of(d, &dv))
        .collect())
}

/// One week of a rule's series.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Point {
    /// Start of the week, `YYYY-MM-DD`.
    pub start: String,
    /// Weeks from the promotion (0: the week that starts on the promotion date).
    pub week: i64,
    /// Calls the rule matches that week.
    pub attempts: u64,
    /// Of those, failed.
    pub failures: u64,
}

/// The calls at `matched` bucketed by week around `split_ms` (the promotion's midnight),
/// inside `period`.
#[must_use]
pub(crate) fn series(
    calls: &[StoredCall],
    matched: &[usize],
    split_ms: i64,
    period: &Window,
) -> Vec<Point> {
    let week_of = |ms: i64| (ms - split_ms).div_euclid(WEEK_MS);
    let first = week_of(period.since_ms).max(-SERIES_WEEKS);
    let last = week_of(period.until_ms - 1).min(SERIES_WEEKS - 1);
    if first > last {
        return Vec::new();
    }
    let mut points: Vec<Point> = (first..=last)
        .map(|week| Point {
            start: date((split_ms + week * WEEK_MS).max(period.since_ms)),
            week,
            attempts: 0,
            failures: 0,
        })
        .collect();
    for call in matched.iter().filter_map(|&i| calls.get(i)) {
        if call.started_ms < period.since_ms || call.started_ms >= period.until_ms {
            continue;
        }
        let week = week_of(call.started_ms);
        if let Some(p) = usize::try_from(week - first)
            .ok()
            .and_then(|i| points.get_mut(i))
        {
            p.attempts += 1;
            p.failures += u64::from(call.failed);
        }
    }
    points
}

/// `p` for people: `< 0.001` below a thousandth (never `0.000`), else three decimals.
#[must_use]
pub(crate) fn p_text(p: f64) -> String {
    if p < 0.001 {
        "< 0.001".to_string()
    } else {
        format!("{p:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_p_values_are_bounded_not_rounded_to_zero() {
        assert_eq!(p_text(0.000_04), "< 0.001");
        assert_eq!(p_text(0.0), "< 0.001");
        assert_eq!(p_text(0.001), "0.001");
        assert_eq!(p_text(0.0456), "0.046");
    }

    #[test]
    fn a_series_splits_at_the_promotion_and_stays_inside_the_period() {
        let split = 100 * DAY_MS;
        let period = Window::new(split - 20 * DAY_MS, split + 10 * DAY_MS).unwrap();
        let calls = vec![
            StoredCall::new("Bash", "a", true, split - DAY_MS),
            StoredCall::new("Bash", "a", false, split - DAY_MS),
            StoredCall::new("Bash", "a", false, split),
            StoredCall::new("Bash", "a", true, split - 30 * DAY_MS),
        ];
        let s = series(&calls, &[0, 1, 2, 3], split, &period);
        // 20 days before: weeks -3..-1; 10 days after: weeks 0..1.
        assert_eq!(
            s.iter().map(|p| p.week).collect::<Vec<_>>(),
            [-3, -2, -1, 0, 1]
        );
        let w = |k: i64| s.iter().find(|p| p.week == k).unwrap();
        assert_eq!((w(-1).attempts, w(-1).failures), (2, 1));
        assert_eq!((w(0).attempts, w(0).failures), (1, 0));
        // The call outside the period counts nowhere.
        assert_eq!(s.iter().map(|p| p.attempts).sum::<u64>(), 3);
        assert_eq!(s[0].start, date(period.since_ms));
    }

    #[test]
    fn a_long_period_keeps_eight_weeks_each_side() {
        let split = 400 * DAY_MS;
        let period = Window::new(split - 300 * DAY_MS, split + 33 * DAY_MS).unwrap();
        let s = series(&[], &[], split, &period);
        assert_eq!(s.first().unwrap().week, -SERIES_WEEKS);
        assert_eq!(s.last().unwrap().week, 4);
    }
}
