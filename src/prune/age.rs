//! Too young to judge: a rule whose enforcement began less than one evidence window ago, or
//! that has seen fewer than [`MIN_ATTEMPTS`](crate::rules::tier::MIN_ATTEMPTS) matching
//! attempts since, has not had the chance to fire or to show an effect. Prune never cuts
//! such a rule: its verdict is `too-young`, with when it can be judged.

use super::verdict::{Judgement, Verdict};

/// How long a rule has been enforced, and what it has seen since.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Age {
    /// Whole days since `meta.promoted` (else `meta.added`); `None` without a date.
    pub days: Option<i64>,
    /// Matching attempts (successes and failures) since then.
    pub attempts: u64,
}

/// `j`, or `too-young` when `j` would cut a rule too young to judge over a `window_days`
/// window needing `min_attempts` attempts.
#[must_use]
pub(crate) fn settle(j: Judgement, age: Age, window_days: u32, min_attempts: u64) -> Judgement {
    let Some(days) = age.days else {
        return j;
    };
    if j.verdict != Verdict::Prune {
        return j;
    }
    let young = days < i64::from(window_days);
    let thin = age.attempts < min_attempts;
    if !young && !thin {
        return j;
    }
    let why = if young {
        format!(
            "enforced for {days} day(s), less than the {window_days}-day window it is judged over"
        )
    } else {
        format!(
            "only {} matching attempt(s) since it was enforced, fewer than the {min_attempts} a verdict needs",
            age.attempts
        )
    };
    Judgement {
        verdict: Verdict::TooYoung,
        basis: "too-young",
        reason: format!("{why} — not pruned; judge it again later"),
        promote_to: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prune() -> Judgement {
        Judgement {
            verdict: Verdict::Prune,
            basis: "never-fired",
            reason: String::new(),
            promote_to: None,
        }
    }

    #[test]
    fn a_young_or_thin_rule_is_never_pruned() {
        let young = Age {
            days: Some(3),
            attempts: 40,
        };
        assert_eq!(settle(prune(), young, 30, 5).verdict, Verdict::TooYoung);
        let thin = Age {
            days: Some(90),
            attempts: 2,
        };
        let j = settle(prune(), thin, 30, 5);
        assert_eq!(j.verdict, Verdict::TooYoung);
        assert!(
            j.reason.contains("only 2 matching attempt(s)"),
            "{}",
            j.reason
        );
        let old = Age {
            days: Some(90),
            attempts: 50,
        };
        assert_eq!(settle(prune(), old, 30, 5).verdict, Verdict::Prune);
        // No date: nothing to measure age by.
        let undated = Age {
            days: None,
            attempts: 0,
        };
        assert_eq!(settle(prune(), undated, 30, 5).verdict, Verdict::Prune);
        // The window and the attempt floor are reached exactly: old enough, seen enough.
        let at_window = Age {
            days: Some(30),
            attempts: 5,
        };
        assert_eq!(settle(prune(), at_window, 30, 5).verdict, Verdict::Prune);
        // One short of either is too young, and the reason says which.
        let j = settle(
            prune(),
            Age {
                days: Some(29),
                attempts: 5,
            },
            30,
            5,
        );
        assert_eq!(j.verdict, Verdict::TooYoung);
        assert!(
            j.reason
                .starts_with("enforced for 29 day(s), less than the 30-day window"),
            "{}",
            j.reason
        );
        assert_eq!(j.basis, "too-young");
        let j = settle(
            prune(),
            Age {
                days: Some(30),
                attempts: 4,
            },
            30,
            5,
        );
        assert_eq!(j.verdict, Verdict::TooYoung);
        assert!(
            j.reason.contains("only 4 matching attempt(s)"),
            "{}",
            j.reason
        );
        // Other verdicts are left alone.
        let mut keep = prune();
        keep.verdict = Verdict::Keep;
        assert_eq!(settle(keep, young, 30, 5).verdict, Verdict::Keep);
    }
}
