//! Evidence tiers: how often a kind of call failed when tried, and the strongest action that
//! evidence can justify (callusguard's tiers, constants preserved; see
//! docs/rule-format.md#evidence-caps-the-action).
//!
//! `classify` is the single place a (failures, attempts) pair becomes a tier; `ceiling` is
//! the single place a tier becomes a cap. An unrecognised tier label caps at `monitor`: an
//! unknown label must never widen authority.

use serde::Serialize;

use super::Action;

/// Fewest attempts for any tier better than anecdotal.
pub(crate) const MIN_ATTEMPTS: u64 = 5;
/// Failure rate at or above which evidence is deterministic.
pub(crate) const DETERMINISTIC_AT: f64 = 0.95;
/// Failure rate at or above which evidence is reproducible.
pub(crate) const REPRODUCIBLE_AT: f64 = 0.50;
/// Fewest distinct sessions the failures behind a tier above `probabilistic` must come from.
pub(crate) const MIN_SPREAD_SESSIONS: u64 = 2;
/// Fewest distinct UTC days the failures behind a tier above `probabilistic` must fall on.
pub(crate) const MIN_SPREAD_DAYS: u64 = 2;

/// The five evidence tiers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    /// Failed on effectively every attempt (≥95% of ≥5).
    Deterministic,
    /// Failed on most attempts (≥50% of ≥5).
    Reproducible,
    /// Failed on a minority of attempts.
    Probabilistic,
    /// Too few attempts to say anything.
    Anecdotal,
    /// No attempt count available.
    Unknown,
}

impl Tier {
    /// The lowercase label used in `meta.tier`.
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            Tier::Deterministic => "deterministic",
            Tier::Reproducible => "reproducible",
            Tier::Probabilistic => "probabilistic",
            Tier::Anecdotal => "anecdotal",
            Tier::Unknown => "unknown",
        }
    }

    /// Parse a label; `None` for anything unrecognised.
    #[must_use]
    pub fn parse(label: &str) -> Option<Self> {
        Some(match label {
            "deterministic" => Tier::Deterministic,
            "reproducible" => Tier::Reproducible,
            "probabilistic" => Tier::Probabilistic,
            "anecdotal" => Tier::Anecdotal,
            "unknown" => Tier::Unknown,
            _ => return None,
        })
    }

    /// The strongest action this tier allows.
    #[must_use]
    pub fn ceiling(self) -> Action {
        match self {
            Tier::Deterministic => Action::Block,
            Tier::Reproducible => Action::Deny,
            Tier::Probabilistic | Tier::Unknown => Action::Nudge,
            Tier::Anecdotal => Action::Monitor,
        }
    }

    /// The one-line meaning of the tier.
    #[must_use]
    pub fn one_liner(self) -> &'static str {
        match self {
            Tier::Deterministic => "failed on effectively every attempt",
            Tier::Reproducible => "failed on most attempts",
            Tier::Probabilistic => "failed on a minority of attempts; usually works",
            Tier::Anecdotal => "too few attempts to say anything",
            Tier::Unknown => "no attempt count available",
        }
    }

    /// Whether prune may propose arming a monitor rule of this tier.
    #[must_use]
    pub fn promotable(self) -> bool {
        matches!(self, Tier::Deterministic | Tier::Reproducible)
    }
}

/// The ceiling of a `meta.tier` label; unrecognised labels cap at monitor.
#[must_use]
pub(crate) fn ceiling_of(label: &str) -> Action {
    Tier::parse(label).map_or(Action::Monitor, Tier::ceiling)
}

/// Classify `fails` out of `attempts`. The rate is clamped to 1.0.
#[must_use]
pub(crate) fn classify(fails: u64, attempts: u64, min_attempts: u64) -> (Tier, Option<f64>) {
    if attempts == 0 {
        return (Tier::Unknown, None);
    }
    let rate = (fails as f64 / attempts as f64).min(1.0);
    let tier = if attempts < min_attempts {
        Tier::Anecdotal
    } else if rate >= DETERMINISTIC_AT {
        Tier::Deterministic
    } else if rate >= REPRODUCIBLE_AT {
        Tier::Reproducible
    } else {
        Tier::Probabilistic
    };
    (tier, Some(rate))
}

/// How a tier capped at probabilistic, though its rate is higher, is described.
pub(crate) const CAPPED: &str = "capped at probabilistic: its failures come from fewer than 2 sessions or 2 days, or from a learned size threshold";

/// `tier` capped by the spread of the failures behind it: `reproducible` and `deterministic`
/// need failures in at least [`MIN_SPREAD_SESSIONS`] sessions on at least [`MIN_SPREAD_DAYS`]
/// days. A failing test loop in one session or one path bug on one afternoon repeats one
/// cause; promoted at `deny`, it would refuse normal work — so it stays `probabilistic`
/// (a nudge), whatever its rate.
#[must_use]
pub(crate) fn capped_by_spread(tier: Tier, sessions: u64, days: u64) -> Tier {
    if sessions < MIN_SPREAD_SESSIONS || days < MIN_SPREAD_DAYS {
        at_most_probabilistic(tier)
    } else {
        tier
    }
}

/// `reproducible` and `deterministic` become `probabilistic`; any other tier stays.
#[must_use]
pub(crate) fn at_most_probabilistic(tier: Tier) -> Tier {
    match tier {
        Tier::Deterministic | Tier::Reproducible => Tier::Probabilistic,
        t => t,
    }
}

/// The tier a rule's own evidence numbers support: `meta.fail_count` of `meta.attempt_count`
/// (with `meta.min_attempts`, default [`MIN_ATTEMPTS`]), coerced as callusguard does — absent
/// or null counts are 0, a numeric string is its number, anything else is `unknown`.
/// `None` when the rule carries neither count (a hand-written rule).
#[must_use]
pub(crate) fn from_evidence(
    meta: &serde_json::Map<String, serde_json::Value>,
) -> Option<(Tier, Option<f64>)> {
    if !meta.contains_key("attempt_count") && !meta.contains_key("fail_count") {
        return None;
    }
    let (Some(fails), Some(attempts)) = (
        count(meta.get("fail_count")),
        count(meta.get("attempt_count")),
    ) else {
        return Some((Tier::Unknown, None));
    };
    let min = count(meta.get("min_attempts"))
        .filter(|&m| m > 0)
        .map_or(MIN_ATTEMPTS, |m| m as u64);
    if attempts <= 0 {
        return Some((Tier::Unknown, None));
    }
    let (tier, rate) = classify(fails.max(0) as u64, attempts as u64, min);
    // Derive writes the spread of the failures it counted; a rule that states it is graded
    // with it (a hand-written rule without it is governed by review).
    let spread = (
        meta.get("failure_sessions")
            .and_then(serde_json::Value::as_u64),
        meta.get("failure_days").and_then(serde_json::Value::as_u64),
    );
    let tier = match spread {
        (Some(sessions), Some(days)) => capped_by_spread(tier, sessions, days),
        _ => tier,
    };
    // A condition whose threshold derive learned from history (`file_larger_than` the
    // largest success) is a lower bound: calls between it and the real limit may succeed.
    let tier = if meta.get("threshold_learned") == Some(&serde_json::Value::Bool(true)) {
        at_most_probabilistic(tier)
    } else {
        tier
    };
    Some((tier, rate))
}

/// Python's `int(value or 0)`; `None` where that would raise.
fn count(value: Option<&serde_json::Value>) -> Option<i64> {
    use serde_json::Value;
    match value {
        None | Some(Value::Null | Value::Bool(false)) => Some(0),
        Some(Value::Bool(true)) => Some(1),
        Some(Value::Number(n)) => n.as_i64().or_else(|| n.as_f64().map(|f| f.trunc() as i64)),
        Some(Value::String(s)) if s.is_empty() => Some(0),
        Some(Value::String(s)) => s.trim().parse().ok(),
        Some(_) => None,
    }
}

/// `"<one-liner> (<pct>% of <n> attempts)"`, with Python's round-half-even percentage.
#[must_use]
pub(crate) fn describe(tier: Tier, rate: Option<f64>, attempts: u64) -> String {
    match rate {
        Some(rate) if attempts > 0 && tier == Tier::Probabilistic && rate >= REPRODUCIBLE_AT => {
            format!(
                "{CAPPED} ({}% of {attempts} attempts)",
                round_half_even(rate * 100.0)
            )
        }
        Some(rate) if attempts > 0 => format!(
            "{} ({}% of {attempts} attempts)",
            tier.one_liner(),
            round_half_even(rate * 100.0)
        ),
        _ => tier.one_liner().to_string(),
    }
}

/// Round to the nearest integer, ties to even (Python's `round`).
#[must_use]
pub(crate) fn round_half_even(x: f64) -> i64 {
    let floor = x.floor();
    let diff = x - floor;
    let r = if (diff - 0.5).abs() < 1e-9 {
        if (floor as i64) % 2 == 0 {
            floor
        } else {
            floor + 1.0
        }
    } else {
        x.round()
    };
    r as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_reproducible_and_deterministic_are_promotable() {
        use Tier::{Anecdotal, Deterministic, Probabilistic, Reproducible, Unknown};
        assert!(Deterministic.promotable() && Reproducible.promotable());
        for t in [Probabilistic, Anecdotal, Unknown] {
            assert!(!t.promotable(), "{t:?}");
        }
    }

    #[test]
    fn a_probabilistic_tier_at_a_reproducible_rate_says_it_was_capped() {
        let capped = describe(Tier::Probabilistic, Some(0.9), 10);
        assert!(capped.starts_with(CAPPED), "{capped}");
        assert!(capped.ends_with("(90% of 10 attempts)"), "{capped}");
        // Exactly at the reproducible rate: capped too.
        assert!(describe(Tier::Probabilistic, Some(REPRODUCIBLE_AT), 4).starts_with(CAPPED));
        // Below it: an ordinary probabilistic tier.
        assert!(!describe(Tier::Probabilistic, Some(0.49), 10).starts_with(CAPPED));
        // No attempts, or another tier: not the capped wording.
        assert!(!describe(Tier::Probabilistic, Some(0.9), 0).starts_with(CAPPED));
        assert!(!describe(Tier::Reproducible, Some(0.9), 10).starts_with(CAPPED));
    }

    #[test]
    fn a_tier_above_probabilistic_needs_two_sessions_and_two_days() {
        use Tier::{Anecdotal, Deterministic, Probabilistic, Reproducible, Unknown};
        for t in [Deterministic, Reproducible] {
            assert_eq!(capped_by_spread(t, 2, 2), t);
            assert_eq!(capped_by_spread(t, 9, 9), t);
            assert_eq!(capped_by_spread(t, 1, 2), Probabilistic);
            assert_eq!(capped_by_spread(t, 2, 1), Probabilistic);
            assert_eq!(capped_by_spread(t, 0, 0), Probabilistic);
        }
        for t in [Probabilistic, Anecdotal, Unknown] {
            assert_eq!(capped_by_spread(t, 0, 0), t);
            assert_eq!(capped_by_spread(t, 5, 5), t);
        }
    }

    #[test]
    fn stated_spread_caps_the_evidence_tier_and_its_absence_does_not() {
        let meta = |extra: serde_json::Value| {
            let mut m = serde_json::json!({"fail_count": 10, "attempt_count": 10});
            m.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            m.as_object().unwrap().clone()
        };
        let tier = |extra| from_evidence(&meta(extra)).unwrap().0;
        assert_eq!(tier(serde_json::json!({})), Tier::Deterministic);
        assert_eq!(
            tier(serde_json::json!({"failure_sessions": 3, "failure_days": 2})),
            Tier::Deterministic
        );
        assert_eq!(
            tier(serde_json::json!({"failure_sessions": 1, "failure_days": 4})),
            Tier::Probabilistic
        );
        assert_eq!(
            tier(serde_json::json!({"failure_sessions": 4, "failure_days": 1})),
            Tier::Probabilistic
        );
        assert_eq!(
            tier(
                serde_json::json!({"failure_sessions": 3, "failure_days": 3, "threshold_learned": true})
            ),
            Tier::Probabilistic
        );
        assert_eq!(
            tier(serde_json::json!({"threshold_learned": false})),
            Tier::Deterministic
        );
        // Only both numbers together grade the spread.
        assert_eq!(
            tier(serde_json::json!({"failure_sessions": 1})),
            Tier::Deterministic
        );
    }

    #[test]
    fn pinned_classification_cases() {
        let c = |f, a| classify(f, a, MIN_ATTEMPTS);
        assert_eq!(c(20, 20), (Tier::Deterministic, Some(1.0)));
        assert_eq!(c(6, 10).0, Tier::Reproducible);
        assert_eq!(c(3, 30).0, Tier::Probabilistic);
        assert_eq!(c(95, 100).0, Tier::Deterministic);
        assert_eq!(c(50, 100).0, Tier::Reproducible);
        assert_eq!(c(49, 100).0, Tier::Probabilistic);
        assert_eq!(c(99, 0), (Tier::Unknown, None));
        assert_eq!(c(4, 4).0, Tier::Anecdotal);
        assert_eq!(c(5, 5).0, Tier::Deterministic);
        assert_eq!(c(30, 10), (Tier::Deterministic, Some(1.0)));
    }

    #[test]
    fn evidence_in_meta_is_coerced_like_python() {
        let t = |v: serde_json::Value| from_evidence(v.as_object().unwrap()).map(|x| x.0);
        assert_eq!(t(serde_json::json!({"why": "x"})), None);
        assert_eq!(
            t(serde_json::json!({"fail_count": 6, "attempt_count": 10})),
            Some(Tier::Reproducible)
        );
        assert_eq!(
            t(serde_json::json!({"fail_count": "20", "attempt_count": 20.0})),
            Some(Tier::Deterministic)
        );
        assert_eq!(
            t(serde_json::json!({"fail_count": 99, "attempt_count": null})),
            Some(Tier::Unknown)
        );
        assert_eq!(
            t(serde_json::json!({"fail_count": "x", "attempt_count": "y"})),
            Some(Tier::Unknown)
        );
        assert_eq!(
            t(serde_json::json!({"fail_count": 4, "attempt_count": 4})),
            Some(Tier::Anecdotal)
        );
        assert_eq!(
            t(serde_json::json!({"fail_count": 4, "attempt_count": 4, "min_attempts": 3})),
            Some(Tier::Deterministic)
        );
    }

    #[test]
    fn ceilings_and_description() {
        assert_eq!(ceiling_of("deterministic"), Action::Block);
        assert_eq!(ceiling_of("reproducible"), Action::Deny);
        assert_eq!(ceiling_of("probabilistic"), Action::Nudge);
        assert_eq!(ceiling_of("unknown"), Action::Nudge);
        assert_eq!(ceiling_of("anecdotal"), Action::Monitor);
        assert_eq!(ceiling_of("made-up"), Action::Monitor);
        assert_eq!(
            describe(Tier::Reproducible, Some(0.6), 5),
            "failed on most attempts (60% of 5 attempts)"
        );
        assert_eq!(round_half_even(12.5), 12);
        assert_eq!(round_half_even(13.5), 14);
        assert_eq!(round_half_even(12.7), 13);
        assert_eq!(round_half_even(13.2), 13);
        // Whole numbers are not ties, odd or even.
        assert_eq!(round_half_even(13.0), 13);
        assert_eq!(round_half_even(60.0), 60);
    }

    #[test]
    fn every_label_parses_back_to_its_tier() {
        for t in [
            Tier::Deterministic,
            Tier::Reproducible,
            Tier::Probabilistic,
            Tier::Anecdotal,
            Tier::Unknown,
        ] {
            assert_eq!(Tier::parse(t.label()), Some(t), "{t:?}");
            // The label prune and `rules promote` read is the one serde writes.
            assert_eq!(serde_json::to_value(t).unwrap(), t.label());
        }
        assert_eq!(Tier::parse("Deterministic"), None);
        assert_eq!(Tier::parse(""), None);
    }

    #[test]
    fn one_count_without_the_other_is_still_evidence() {
        let t = |v: serde_json::Value| from_evidence(v.as_object().unwrap()).map(|x| x.0);
        // Failures with no attempt count: no attempts known, so unknown (capped at nudge),
        // never "no evidence" (uncapped).
        assert_eq!(t(serde_json::json!({"fail_count": 9})), Some(Tier::Unknown));
        // Attempts with no failure count: none failed.
        assert_eq!(
            t(serde_json::json!({"attempt_count": 9})),
            Some(Tier::Probabilistic)
        );
    }

    #[test]
    fn counts_coerce_like_python_int() {
        let t = |v: serde_json::Value| from_evidence(v.as_object().unwrap());
        // An empty string is 0 (`int("" or 0)`), not an unreadable count.
        assert_eq!(
            t(serde_json::json!({"fail_count": "", "attempt_count": 10})),
            Some((Tier::Probabilistic, Some(0.0)))
        );
        assert_eq!(
            t(serde_json::json!({"fail_count": " 10 ", "attempt_count": "10"})),
            Some((Tier::Deterministic, Some(1.0)))
        );
        assert_eq!(
            t(serde_json::json!({"fail_count": true, "attempt_count": 2, "min_attempts": 1})),
            Some((Tier::Reproducible, Some(0.5)))
        );
        assert_eq!(
            t(serde_json::json!({"fail_count": false, "attempt_count": 10})),
            Some((Tier::Probabilistic, Some(0.0)))
        );
        assert_eq!(
            t(serde_json::json!({"fail_count": 5.9, "attempt_count": 10.9})),
            Some((Tier::Reproducible, Some(0.5)))
        );
        assert_eq!(
            t(serde_json::json!({"fail_count": [1], "attempt_count": 10})),
            Some((Tier::Unknown, None))
        );
        // Negative failures are none; zero or negative attempts are unknown.
        assert_eq!(
            t(serde_json::json!({"fail_count": -3, "attempt_count": 10})),
            Some((Tier::Probabilistic, Some(0.0)))
        );
        for attempts in [0, -1] {
            assert_eq!(
                t(serde_json::json!({"fail_count": 3, "attempt_count": attempts})),
                Some((Tier::Unknown, None)),
                "{attempts}"
            );
        }
        // A zero or negative `min_attempts` falls back to the default.
        for min in [0, -2] {
            assert_eq!(
                t(serde_json::json!({"fail_count": 4, "attempt_count": 4, "min_attempts": min}))
                    .map(|x| x.0),
                Some(Tier::Anecdotal),
                "{min}"
            );
        }
    }

    #[test]
    fn description_without_attempts_has_no_percentage() {
        assert_eq!(
            describe(Tier::Unknown, Some(0.5), 0),
            "no attempt count available"
        );
        assert_eq!(
            describe(Tier::Unknown, None, 7),
            "no attempt count available"
        );
        assert_eq!(
            describe(Tier::Probabilistic, Some(0.125), 8),
            "failed on a minority of attempts; usually works (12% of 8 attempts)"
        );
    }
}
