//! The measured effect of a rule: the failure rate of the calls it matches before and after
//! the date enforcement began, with attempt counts, a two-proportion test and the change in
//! attempt volume.
//!
//! The populations are re-evaluated with the real matcher ([`crate::rules::backtest`]), so
//! `unless`, `match: segment`, `norm` and flags count and no rule is skipped for lacking an
//! explicit `field` (callusguard's evidence report did both). The test is
//! the pooled two-proportion z-test, two-sided, at [`ALPHA`]; it is only trusted when both
//! sides have [`MIN_SIDE_ATTEMPTS`] attempts. Rates are observational: nothing here controls
//! for what else changed, which is why the attempt counts and the volume note travel with them.

use std::fmt::Write as _;

// The complementary error function, musl's (accurate to about one ulp).
use libm::erfc;
use serde::Serialize;

use crate::rules::Rule;
use crate::rules::backtest::StoredCall;

/// Significance level of the two-sided test.
pub(crate) const ALPHA: f64 = 0.05;
/// Fewest attempts on each side before a difference (or its absence) means anything.
pub(crate) const MIN_SIDE_ATTEMPTS: u64 = 30;
/// Attempts per day after promotion below this share of the rate before is a collapse: the
/// agent stopped reaching for the command, so the remaining attempts are a different crowd.
pub(crate) const VOLUME_COLLAPSE_BELOW: f64 = 0.5;

const DAY_MS: f64 = 86_400_000.0;

/// One side of the split.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub(crate) struct Side {
    /// Matched settled calls.
    pub attempts: u64,
    /// Failures among them.
    pub failures: u64,
    /// Days of recorded history on this side.
    pub days: f64,
}

impl Side {
    /// Failure rate, `None` without attempts.
    #[must_use]
    pub(crate) fn rate(&self) -> Option<f64> {
        (self.attempts > 0).then(|| self.failures as f64 / self.attempts as f64)
    }

    /// Attempts per day of history.
    #[must_use]
    pub(crate) fn per_day(&self) -> f64 {
        self.attempts as f64 / self.days.max(1.0)
    }
}

/// What the numbers say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Outcome {
    /// The failure rate fell significantly.
    Helped,
    /// The failure rate rose significantly with similar volume.
    Harmful,
    /// The failure rate rose, but attempt volume collapsed: behaviour changed, the rate among
    /// the remaining attempts is not comparable (callusguard's bare-psql case).
    VolumeShift,
    /// No significant change with enough attempts on both sides.
    NoEffect,
    /// Too few attempts on a side to say anything.
    TooLittleData,
}

impl Outcome {
    /// The kebab-case label.
    #[must_use]
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Outcome::Helped => "helped",
            Outcome::Harmful => "harmful",
            Outcome::VolumeShift => "volume-shift",
            Outcome::NoEffect => "no-effect",
            Outcome::TooLittleData => "too-little-data",
        }
    }
}

/// The before/after measurement of one rule.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Effect {
    /// The split date (`meta.promoted`, else `meta.added`).
    #[serde(serialize_with = "as_date")]
    pub promoted: chrono::NaiveDate,
    /// Calls before the split.
    pub before: Side,
    /// Calls on or after the split.
    pub after: Side,
    /// z statistic (after − before), when both sides have attempts and the pool varies.
    pub z: Option<f64>,
    /// Two-sided p-value of the z statistic.
    pub p_value: Option<f64>,
    /// Change of attempts per day, after over before, minus one (−0.82 = 82% fewer).
    pub volume_change: Option<f64>,
    /// Attempt volume per day fell below [`VOLUME_COLLAPSE_BELOW`] of what it was.
    pub volume_collapsed: bool,
    /// The reading.
    pub outcome: Outcome,
}

impl Effect {
    /// A one-line account: `19.1% (n=131) → 1.4% (n=142), p=0.000`.
    #[must_use]
    pub(crate) fn summary(&self) -> String {
        let side = |s: &Side| match s.rate() {
            Some(r) => format!("{:.1}% (n={})", r * 100.0, s.attempts),
            None => "n/a (n=0)".to_string(),
        };
        let mut out = format!("{} → {}", side(&self.before), side(&self.after));
        if let Some(p) = self.p_value {
            let _ = write!(out, ", p={p:.3}");
        }
        out
    }

    /// The volume note, when attempt volume collapsed after promotion.
    #[must_use]
    pub(crate) fn volume_note(&self) -> Option<String> {
        self.volume_collapsed.then(|| {
            format!(
                "attempt volume fell {} → {} ({:+.0}% per day) after promotion: the agent stopped reaching for it, so the failure rate of the remaining attempts is not comparable",
                self.before.attempts,
                self.after.attempts,
                self.volume_change.unwrap_or(0.0) * 100.0
            )
        })
    }
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's serialize_with passes a reference
fn as_date<S: serde::Serializer>(d: &chrono::NaiveDate, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(d)
}

/// The recorded history a measurement may use: `[start_ms, end_ms]`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Span {
    /// First recorded call (or the period start).
    pub start_ms: i64,
    /// Last recorded call (or the period end).
    pub end_ms: i64,
}

impl Span {
    /// The span of `calls` (oldest first), `None` when empty.
    #[must_use]
    pub(crate) fn of(calls: &[StoredCall]) -> Option<Self> {
        Some(Span {
            start_ms: calls.first()?.started_ms,
            end_ms: calls.last()?.started_ms,
        })
    }
}

/// Measure `rule` over `calls`, of which it fires on those at indices `matched` (see
/// [`crate::rules::backtest::matching`]), split at its promotion date. `None` when it has no
/// date or the date is not strictly inside `span` (nothing to compare).
#[must_use]
pub(crate) fn measure(
    rule: &Rule,
    calls: &[StoredCall],
    matched: &[usize],
    span: Span,
) -> Option<Effect> {
    let promoted = rule.promoted()?;
    let split_ms = promoted.and_hms_opt(0, 0, 0)?.and_utc().timestamp_millis();
    if split_ms <= span.start_ms || split_ms > span.end_ms {
        return None;
    }
    let mut before = Side {
        days: (split_ms - span.start_ms) as f64 / DAY_MS,
        ..Side::default()
    };
    let mut after = Side {
        days: (span.end_ms - split_ms) as f64 / DAY_MS,
        ..Side::default()
    };
    for call in matched.iter().map(|&i| &calls[i]) {
        if call.started_ms < span.start_ms || call.started_ms > span.end_ms {
            continue;
        }
        let side = if call.started_ms < split_ms {
            &mut before
        } else {
            &mut after
        };
        side.attempts += 1;
        side.failures += u64::from(call.failed);
    }
    Some(judge(promoted, before, after))
}

/// Compare two sides and read the outcome.
#[must_use]
pub(crate) fn judge(promoted: chrono::NaiveDate, before: Side, after: Side) -> Effect {
    let test = two_proportion(
        before.failures,
        before.attempts,
        after.failures,
        after.attempts,
    );
    let volume_change = (before.attempts > 0).then(|| after.per_day() / before.per_day() - 1.0);
    let volume_collapsed = volume_change.is_some_and(|c| c + 1.0 < VOLUME_COLLAPSE_BELOW);
    let enough = before.attempts >= MIN_SIDE_ATTEMPTS && after.attempts >= MIN_SIDE_ATTEMPTS;
    let outcome = match test {
        _ if !enough => Outcome::TooLittleData,
        Some((z, p)) if p < ALPHA && z > 0.0 && volume_collapsed => Outcome::VolumeShift,
        Some((z, p)) if p < ALPHA && z > 0.0 => Outcome::Harmful,
        Some((_, p)) if p < ALPHA => Outcome::Helped,
        _ => Outcome::NoEffect,
    };
    Effect {
        promoted,
        before,
        after,
        z: test.map(|t| t.0),
        p_value: test.map(|t| t.1),
        volume_change,
        volume_collapsed,
        outcome,
    }
}

/// Pooled two-proportion z-test of `f2/n2` against `f1/n1`: `(z, two-sided p)`. `None` when a
/// side is empty; `(0, 1)` when the pooled rate is 0 or 1 (no variation, no difference).
#[must_use]
pub(crate) fn two_proportion(f1: u64, n1: u64, f2: u64, n2: u64) -> Option<(f64, f64)> {
    if n1 == 0 || n2 == 0 {
        return None;
    }
    let (f1, n1, f2, n2) = (f1 as f64, n1 as f64, f2 as f64, n2 as f64);
    let pooled = (f1 + f2) / (n1 + n2);
    let se = (pooled * (1.0 - pooled) * (1.0 / n1 + 1.0 / n2)).sqrt();
    if se == 0.0 || !se.is_finite() {
        return Some((0.0, 1.0));
    }
    let z = (f2 / n2 - f1 / n1) / se;
    Some((z, erfc(z.abs() / std::f64::consts::SQRT_2)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day() -> chrono::NaiveDate {
        chrono::NaiveDate::from_ymd_opt(2026, 6, 1).unwrap()
    }

    fn side(failures: u64, attempts: u64) -> Side {
        Side {
            attempts,
            failures,
            days: 30.0,
        }
    }

    #[test]
    fn erfc_matches_known_values() {
        assert!((erfc(0.0) - 1.0).abs() < 1e-6);
        assert!((erfc(1.0) - 0.157_299_2).abs() < 1e-6);
        assert!((erfc(-1.0) - 1.842_700_8).abs() < 1e-6);
        // The tail a strong effect lands in: z = 4.24 is p = 2.2e-5.
        assert!((erfc(3.0) - 2.209_049_699_858_544e-5).abs() < 1e-15);
        // Two-sided p of z = 1.96 is 0.05.
        assert!((erfc(1.96 / std::f64::consts::SQRT_2) - 0.05).abs() < 1e-3);
    }

    #[test]
    fn z_test_by_hand() {
        // 25/131 vs 2/142: pooled 27/273; se = sqrt(p(1-p)(1/131+1/142)).
        let (z, p) = two_proportion(25, 131, 2, 142).unwrap();
        let pooled: f64 = 27.0 / 273.0;
        let se = (pooled * (1.0 - pooled) * (1.0 / 131.0 + 1.0 / 142.0)).sqrt();
        assert!((z - (2.0 / 142.0 - 25.0 / 131.0) / se).abs() < 1e-12);
        assert!(z < -4.0 && p < 1e-4);
        assert_eq!(two_proportion(0, 10, 0, 10), Some((0.0, 1.0)));
        assert_eq!(two_proportion(1, 0, 0, 10), None);
        assert_eq!(two_proportion(1, 10, 0, 0), None);
        // Every failure on both sides is no variation either.
        assert_eq!(two_proportion(10, 10, 5, 5), Some((0.0, 1.0)));
    }

    #[test]
    fn p_value_is_two_sided_at_known_points() {
        // 10% → 20% of 100 each: z = 1.98, p = 0.0477 (just under ALPHA); the sign of z is the
        // direction, the p-value is the same either way.
        let (z, p) = two_proportion(10, 100, 20, 100).unwrap();
        assert!((z - 1.980_295_085_953_348_8).abs() < 1e-9, "{z}");
        assert!((p - 0.047_670_380_656_161_44).abs() < 1e-9, "{p}");
        let (z2, p2) = two_proportion(20, 100, 10, 100).unwrap();
        assert!((z2 + z).abs() < 1e-12 && (p2 - p).abs() < 1e-12);
        let (_, p) = two_proportion(21, 300, 52, 300).unwrap();
        assert!((p - 1.082_020_142_172_189_2e-4).abs() < 1e-12, "{p}");
    }

    #[test]
    fn a_side_has_a_rate_only_with_attempts_and_a_volume_per_day() {
        assert_eq!(side(0, 0).rate(), None);
        assert_eq!(side(3, 4).rate(), Some(0.75));
        assert_eq!(Some(side(0, 60).per_day()), Some(2.0));
        // Under a day of history counts as one day.
        let short = Side {
            attempts: 5,
            failures: 0,
            days: 0.25,
        };
        assert_eq!(Some(short.per_day()), Some(5.0));
    }

    #[test]
    fn outcome_labels_are_the_serialized_names() {
        for (o, label) in [
            (Outcome::Helped, "helped"),
            (Outcome::Harmful, "harmful"),
            (Outcome::VolumeShift, "volume-shift"),
            (Outcome::NoEffect, "no-effect"),
            (Outcome::TooLittleData, "too-little-data"),
        ] {
            assert_eq!(o.as_str(), label);
            assert_eq!(serde_json::to_value(o).unwrap(), label);
        }
    }

    #[test]
    fn summary_note_and_json_of_an_effect() {
        let e = judge(day(), side(25, 131), side(2, 142));
        assert_eq!(e.summary(), "19.1% (n=131) → 1.4% (n=142), p=0.000");
        assert_eq!(e.volume_note(), None);
        let v = serde_json::to_value(&e).unwrap();
        assert_eq!(v["promoted"], "2026-06-01");
        assert_eq!(v["outcome"], "helped");
        // No attempts before: no rate, no test, no volume change.
        let e = judge(day(), side(0, 0), side(2, 142));
        assert_eq!(e.summary(), "n/a (n=0) → 1.4% (n=142)");
        assert_eq!((e.z, e.p_value, e.volume_change), (None, None, None));
        assert!(!e.volume_collapsed);
        let e = judge(day(), side(74, 980), side(33, 174));
        let note = e.volume_note().unwrap();
        assert!(
            note.starts_with("attempt volume fell 980 → 174 (-82% per day)"),
            "{note}"
        );
    }

    fn per_day_side(attempts: u64) -> Side {
        Side {
            attempts,
            failures: attempts / 10,
            days: 1.0,
        }
    }

    #[test]
    fn volume_collapses_below_half_the_rate_before() {
        let e = judge(day(), per_day_side(100), per_day_side(50));
        assert_eq!(e.volume_change, Some(-0.5));
        assert!(!e.volume_collapsed, "exactly half is not a collapse");
        let e = judge(day(), per_day_side(100), per_day_side(49));
        assert!(e.volume_collapsed);
        let e = judge(day(), per_day_side(100), per_day_side(90));
        assert!((e.volume_change.unwrap() + 0.1).abs() < 1e-12);
        assert!(!e.volume_collapsed);
        let e = judge(day(), per_day_side(50), per_day_side(100));
        assert_eq!(e.volume_change, Some(1.0));
        assert!(!e.volume_collapsed);
    }

    #[test]
    fn enough_needs_min_attempts_on_both_sides() {
        // 0% → 50%: significant at any of these sizes, so only the floor decides.
        let n = MIN_SIDE_ATTEMPTS;
        let half = |n| side(n / 2, n);
        assert_eq!(judge(day(), side(0, n), half(n)).outcome, Outcome::Harmful);
        assert_eq!(
            judge(day(), side(0, n - 1), half(n)).outcome,
            Outcome::TooLittleData
        );
        assert_eq!(
            judge(day(), side(0, n), half(n - 1)).outcome,
            Outcome::TooLittleData
        );
    }

    const SPLIT_MS: i64 = 1_780_272_000_000; // 2026-06-01T00:00:00Z
    const DAY: i64 = 86_400_000;

    fn promoted_rule() -> Rule {
        crate::rules::parse_document(
            "t",
            r#"{"rules":[{"id":"r","tool":"Bash","any":["x"],"action":"block","message":"m",
                "meta":{"promoted":"2026-06-01"}}]}"#,
        )
        .unwrap()
        .rules
        .remove(0)
    }

    fn at(offset_ms: i64, failed: bool) -> StoredCall {
        StoredCall::new("Bash", "x", failed, SPLIT_MS + offset_ms)
    }

    #[test]
    fn measure_splits_the_matched_calls_at_the_promotion_day() {
        assert_eq!(
            chrono::NaiveDate::from_ymd_opt(2026, 6, 1)
                .unwrap()
                .and_hms_opt(0, 0, 0)
                .unwrap()
                .and_utc()
                .timestamp_millis(),
            SPLIT_MS
        );
        let calls = vec![
            at(-20 * DAY, true),
            at(-10 * DAY, true),
            at(-1, false),
            at(0, true), // on the split: after
            at(DAY, false),
            at(2 * DAY, false),
            at(10 * DAY, true),
        ];
        let span = Span {
            start_ms: SPLIT_MS - 15 * DAY,
            end_ms: SPLIT_MS + 5 * DAY,
        };
        // Index 0 is before the span, 6 after it, 5 is not matched.
        let e = measure(&promoted_rule(), &calls, &[0, 1, 2, 3, 4, 6], span).unwrap();
        assert_eq!(e.promoted, day());
        assert_eq!(
            (e.before.attempts, e.before.failures, e.before.days),
            (2, 1, 15.0)
        );
        assert_eq!(
            (e.after.attempts, e.after.failures, e.after.days),
            (2, 1, 5.0)
        );
        assert_eq!(e.outcome, Outcome::TooLittleData);
    }

    #[test]
    fn measure_needs_the_promotion_day_strictly_inside_the_span() {
        let calls = vec![at(-DAY, true), at(0, false), at(DAY, true)];
        let span = |from: i64, to: i64| Span {
            start_ms: SPLIT_MS + from,
            end_ms: SPLIT_MS + to,
        };
        let r = promoted_rule();
        let m = |sp| measure(&r, &calls, &[0, 1, 2], sp);
        assert!(m(span(-DAY, DAY)).is_some());
        // Starting on the split leaves nothing before it; after its end, nothing after.
        assert!(m(span(0, DAY)).is_none());
        assert!(m(span(DAY, 2 * DAY)).is_none());
        assert!(m(span(-2 * DAY, -DAY)).is_none());
        // Ending on the split: the calls on that instant are the after side.
        let e = m(span(-DAY, 0)).unwrap();
        assert_eq!((e.before.attempts, e.after.attempts), (1, 1));
        assert_eq!((e.after.attempts, e.after.days), (1, 0.0));
        // No promotion or added date: nothing to split at.
        let undated = crate::rules::parse_document(
            "t",
            r#"{"rules":[{"id":"r","tool":"Bash","any":["x"],"action":"block","message":"m"}]}"#,
        )
        .unwrap()
        .rules
        .remove(0);
        assert!(measure(&undated, &calls, &[0, 1, 2], span(-DAY, DAY)).is_none());
    }

    #[test]
    fn span_of_calls_runs_first_to_last() {
        assert!(Span::of(&[]).is_none());
        let calls = vec![at(-DAY, true), at(0, false), at(3 * DAY, true)];
        let s = Span::of(&calls).unwrap();
        assert_eq!((s.start_ms, s.end_ms), (SPLIT_MS - DAY, SPLIT_MS + 3 * DAY));
    }

    #[test]
    fn callusguards_published_shapes_read_as_expected() {
        // cli-missing-required-flag: 19.1% → 1.4%, similar volume.
        assert_eq!(
            judge(day(), side(25, 131), side(2, 142)).outcome,
            Outcome::Helped
        );
        // macos-timeout-not-installed: 26.2% → 26.8%.
        assert_eq!(
            judge(day(), side(131, 500), side(134, 500)).outcome,
            Outcome::NoEffect
        );
        // fetch-dead-domain-retry: 7.0% → 17.3%, similar volume.
        assert_eq!(
            judge(day(), side(21, 300), side(52, 300)).outcome,
            Outcome::Harmful
        );
        // bare-psql-no-target: 7.6% → 19.0% but 980 → 174 attempts.
        let e = judge(day(), side(74, 980), side(33, 174));
        assert_eq!(e.outcome, Outcome::VolumeShift);
        assert!(e.volume_note().unwrap().contains("980 → 174"));
        // A big drop on 10 attempts says nothing.
        assert_eq!(
            judge(day(), side(5, 10), side(0, 10)).outcome,
            Outcome::TooLittleData
        );
    }
}
