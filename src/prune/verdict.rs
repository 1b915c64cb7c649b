//! Lifecycle verdicts: one per rule, from its firings in the window, the evidence tier of the
//! calls it matches, and its measured effect.
//!
//! Evaluated in this order (callusguard's prune, extended; see
//! README.md#evidence-derive-promote-prune-report):
//! 1. never fired in the window → `prune`, unless the rule is pinned (a protective rule may
//!    rightly never fire) → `keep`;
//! 2. monitor-only with ≥ [`PROMOTE_AFTER`] firings → `promote` to its tier's ceiling when the
//!    tier is promotable or unknown, else `keep` ("firing often is not the same as failing
//!    reliably"). The tier is measured on the calls the rule matches in the window, and only
//!    falls back to the `meta.tier` frozen at derivation when nothing was recorded (item 44);
//! 3. an acting rule whose failure rate rose significantly after promotion → `harmful`, unless
//!    attempt volume collapsed (then `keep`, with the volume note);
//! 4. an acting rule with no significant change on enough attempts → `no-effect`;
//! 5. an acting rule firing more than [`REVIEW_ABOVE`] times without a measured improvement
//!    → `review` (one that measurably helped is `keep (helped)` however often it fires);
//! 6. otherwise `keep`, saying whether it helped or there is too little data to say.
//!
//! A `prune` of a rule enforced for less than the window, or on fewer attempts than a tier
//! needs, becomes `too-young` (see `age`).

use serde::Serialize;

use super::effect::{Effect, Outcome};
use crate::rules::Action;
use crate::rules::tier::{self, Tier};

/// Firings a monitor rule needs before prune proposes arming it.
pub(crate) const PROMOTE_AFTER: u64 = 5;
/// Firings above which an acting rule is flagged for review.
pub(crate) const REVIEW_ABOVE: u64 = 25;

/// What to do with a rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Verdict {
    /// Made things measurably worse.
    Harmful,
    /// Changed nothing measurable.
    NoEffect,
    /// A monitor rule with evidence: arm it.
    Promote,
    /// Fires so often the workflow needs fixing.
    Review,
    /// Never fired: retire it.
    Prune,
    /// Enforced too briefly (or on too few attempts) to judge; never pruned (see `age`).
    TooYoung,
    /// Leave it as it is.
    Keep,
}

impl Verdict {
    /// Every verdict, in rendering order.
    pub(crate) const ALL: [Verdict; 7] = [
        Verdict::Harmful,
        Verdict::NoEffect,
        Verdict::Promote,
        Verdict::Review,
        Verdict::Prune,
        Verdict::TooYoung,
        Verdict::Keep,
    ];

    /// The kebab-case label.
    #[must_use]
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Verdict::Harmful => "harmful",
            Verdict::NoEffect => "no-effect",
            Verdict::Promote => "promote",
            Verdict::Review => "review",
            Verdict::Prune => "prune",
            Verdict::TooYoung => "too-young",
            Verdict::Keep => "keep",
        }
    }
}

/// Where a rule's tier came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum TierSource {
    /// Measured on the calls the rule matched in the window.
    Measured,
    /// `meta.tier`, frozen when the rule was derived.
    Meta,
}

/// Everything the verdict depends on.
#[derive(Debug, Clone)]
pub(crate) struct Facts<'a> {
    /// The action the guard applies (candidates forced to monitor, tier-capped).
    pub action: Action,
    /// A protective rule that may rightly never fire.
    pub pinned: bool,
    /// Firings in the window.
    pub count: u64,
    /// The window, in days.
    pub window_days: u32,
    /// The tier, with its source and failure rate and attempt count, when there is one.
    pub tier: Option<(Tier, TierSource, Option<f64>, u64)>,
    /// The measured effect, when the rule has a promotion date inside the history.
    pub effect: Option<&'a Effect>,
}

/// A verdict with its explanation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Judgement {
    /// The verdict.
    pub verdict: Verdict,
    /// Why, in one word: `helped`, `too-little-data`, `pinned`, `volume-shift`, …
    pub basis: &'static str,
    /// Why, for people.
    pub reason: String,
    /// For `promote`: the strongest action the evidence allows.
    pub promote_to: Option<Action>,
}

fn judgement(verdict: Verdict, basis: &'static str, reason: String) -> Judgement {
    Judgement {
        verdict,
        basis,
        reason,
        promote_to: None,
    }
}

/// Decide one rule (see the module docs for the order).
#[must_use]
// the verdict table: one ordered list of cases, the first that holds wins
#[allow(clippy::too_many_lines)]
pub(crate) fn classify(f: &Facts<'_>) -> Judgement {
    let c = f.count;
    if c == 0 {
        return if f.pinned {
            judgement(
                Verdict::Keep,
                "pinned",
                format!(
                    "pinned — never fired in the last {} days, which is what a protective rule is for; prune never cuts it",
                    f.window_days
                ),
            )
        } else {
            judgement(
                Verdict::Prune,
                "never-fired",
                format!(
                    "never fired in the last {} days — either the failure was engineered away, or the pattern never matched anything real",
                    f.window_days
                ),
            )
        };
    }
    if f.action == Action::Monitor && c >= PROMOTE_AFTER {
        return monitor_with_evidence(f);
    }
    let effect = f.effect.filter(|_| f.action > Action::Monitor);
    if let Some(e) = effect {
        match e.outcome {
            Outcome::Harmful => {
                return judgement(
                    Verdict::Harmful,
                    "harmful",
                    format!(
                        "the calls it matches fail more since {}: {} — its message may be sending the agent the wrong way; fix it or remove it",
                        e.promoted,
                        e.summary()
                    ),
                );
            }
            Outcome::NoEffect => {
                return judgement(
                    Verdict::NoEffect,
                    "no-effect",
                    format!(
                        "no significant change since {}: {} — it costs the agent context on every firing and changes nothing; rewrite its message or retire it",
                        e.promoted,
                        e.summary()
                    ),
                );
            }
            _ => {}
        }
    }
    // A measured improvement is kept however often the rule fires: `review` is for rules
    // that fire often without a measured effect.
    let helped = effect.is_some_and(|e| e.outcome == Outcome::Helped);
    if f.action > Action::Monitor && c > REVIEW_ABOVE && !helped {
        let reason = format!(
            "fired {c} times without a measured effect — enforcement works, but a guard firing this often is a workflow that has not been fixed; consider making it deterministic instead"
        );
        return judgement(Verdict::Review, "fires-often", reason);
    }
    let settled = format!("fired {c} time(s); settled as {}", f.action);
    match effect {
        Some(e) if e.outcome == Outcome::Helped => judgement(
            Verdict::Keep,
            "helped",
            format!("{settled}; it helped since {}: {}", e.promoted, e.summary()),
        ),
        Some(e) if e.outcome == Outcome::VolumeShift => judgement(
            Verdict::Keep,
            "volume-shift",
            format!(
                "{settled}; the failure rate rose since {} ({}) but attempt volume collapsed — behaviour changed, not harmful on this evidence",
                e.promoted,
                e.summary()
            ),
        ),
        Some(e) => judgement(
            Verdict::Keep,
            "too-little-data",
            format!(
                "{settled}; too little data to measure its effect ({} before, {} after {})",
                e.before.attempts, e.after.attempts, e.promoted
            ),
        ),
        None => judgement(
            Verdict::Keep,
            "too-little-data",
            format!("{settled}; too little data to measure its effect"),
        ),
    }
}

fn monitor_with_evidence(f: &Facts<'_>) -> Judgement {
    let c = f.count;
    match f.tier {
        Some((t, _, rate, attempts)) if !t.promotable() && t != Tier::Unknown => judgement(
            Verdict::Keep,
            "evidence-too-weak",
            format!(
                "fired {c} times, but its evidence is {} ({}) — firing often is not the same as failing reliably; stay at monitor until the failure rate earns more",
                t.label(),
                tier::describe(t, rate, attempts)
            ),
        ),
        tier_info => {
            let (t, rate, attempts) =
                tier_info.map_or((Tier::Unknown, None, 0), |(t, _, r, a)| (t, r, a));
            let to = t.ceiling();
            Judgement {
                verdict: Verdict::Promote,
                basis: "evidence",
                reason: format!(
                    "fired {c} times as monitor-only — it has evidence now; promote to at most {to} ({}: {})",
                    t.label(),
                    tier::describe(t, rate, attempts)
                ),
                promote_to: Some(to),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(action: Action, count: u64, tier: Option<Tier>) -> Facts<'static> {
        Facts {
            action,
            pinned: false,
            count,
            window_days: 30,
            tier: tier.map(|t| (t, TierSource::Meta, None, 0)),
            effect: None,
        }
    }

    #[test]
    fn callusguard_classification_cases() {
        assert_eq!(
            classify(&facts(Action::Nudge, 0, None)).verdict,
            Verdict::Prune
        );
        assert_eq!(
            classify(&facts(Action::Monitor, 5, None)).verdict,
            Verdict::Promote
        );
        assert_eq!(
            classify(&facts(Action::Monitor, 1, None)).verdict,
            Verdict::Keep
        );
        assert_eq!(
            classify(&facts(Action::Nudge, 30, None)).verdict,
            Verdict::Review
        );
        assert_eq!(
            classify(&facts(Action::Block, 3, None)).verdict,
            Verdict::Keep
        );
        let weak = classify(&facts(Action::Monitor, 50, Some(Tier::Probabilistic)));
        assert_eq!(weak.verdict, Verdict::Keep);
        assert!(weak.reason.contains("not the same as failing reliably"));
        let r = classify(&facts(Action::Monitor, 7, Some(Tier::Reproducible)));
        assert_eq!(
            (r.verdict, r.promote_to),
            (Verdict::Promote, Some(Action::Deny))
        );
        assert!(r.reason.contains("deny"));
        let d = classify(&facts(Action::Monitor, 7, Some(Tier::Deterministic)));
        assert_eq!(d.promote_to, Some(Action::Block));
        assert!(d.reason.contains("block"));
        assert_eq!(
            classify(&facts(Action::Monitor, 1, Some(Tier::Deterministic))).verdict,
            Verdict::Keep
        );
    }

    fn effect(outcome: Outcome) -> Effect {
        let side = |attempts, failures| crate::prune::effect::Side {
            attempts,
            failures,
            days: 10.0,
        };
        Effect {
            promoted: chrono::NaiveDate::from_ymd_opt(2026, 11, 1).unwrap(),
            before: side(40, 8),
            after: side(12, 1),
            z: Some(-2.5),
            p_value: Some(0.012),
            volume_change: Some(-0.7),
            volume_collapsed: false,
            outcome,
        }
    }

    fn with_effect(action: Action, count: u64, e: &Effect) -> Facts<'_> {
        Facts {
            effect: Some(e),
            ..facts(action, count, None)
        }
    }

    #[test]
    fn review_starts_above_the_threshold() {
        let at = classify(&facts(Action::Nudge, REVIEW_ABOVE, None));
        assert_eq!((at.verdict, at.basis), (Verdict::Keep, "too-little-data"));
        let above = classify(&facts(Action::Deny, REVIEW_ABOVE + 1, None));
        assert_eq!(
            (above.verdict, above.basis),
            (Verdict::Review, "fires-often")
        );
        assert!(
            above.reason.starts_with("fired 26 times"),
            "{}",
            above.reason
        );
        assert!(!above.reason.contains("did help"), "{}", above.reason);
        // A monitor rule never goes to review, however often it fires below promotion.
        assert_eq!(
            classify(&facts(Action::Monitor, PROMOTE_AFTER - 1, None)).verdict,
            Verdict::Keep
        );
    }

    #[test]
    fn a_rule_that_helped_is_kept_however_often_it_fires() {
        // Issue 13 item 8: `review` is for rules that fire often without a measured effect;
        // one that measurably helped is `keep (helped)`, above the review threshold too.
        let e = effect(Outcome::Helped);
        let j = classify(&with_effect(Action::Nudge, 40, &e));
        assert_eq!((j.verdict, j.basis), (Verdict::Keep, "helped"));
        assert!(j.reason.contains(&e.summary()), "{}", j.reason);
        // Without a measured effect the same firing count goes to review, with no note.
        let e = effect(Outcome::TooLittleData);
        let j = classify(&with_effect(Action::Nudge, 40, &e));
        assert_eq!(j.verdict, Verdict::Review);
        assert!(!j.reason.contains("helped"), "{}", j.reason);
    }

    #[test]
    fn an_acting_rule_is_judged_by_its_effect() {
        let cases = [
            (
                Outcome::Harmful,
                Verdict::Harmful,
                "harmful",
                "fail more since 2026-11-01",
            ),
            (
                Outcome::NoEffect,
                Verdict::NoEffect,
                "no-effect",
                "no significant change since 2026-11-01",
            ),
            (
                Outcome::Helped,
                Verdict::Keep,
                "helped",
                "it helped since 2026-11-01",
            ),
            (
                Outcome::VolumeShift,
                Verdict::Keep,
                "volume-shift",
                "attempt volume collapsed",
            ),
            (
                Outcome::TooLittleData,
                Verdict::Keep,
                "too-little-data",
                "too little data to measure its effect (40 before, 12 after 2026-11-01)",
            ),
        ];
        for (outcome, verdict, basis, says) in cases {
            let e = effect(outcome);
            let j = classify(&with_effect(Action::Deny, 3, &e));
            assert_eq!((j.verdict, j.basis), (verdict, basis), "{outcome:?}");
            assert!(j.reason.contains(says), "{outcome:?}: {}", j.reason);
            assert_eq!(j.promote_to, None);
            if verdict != Verdict::Keep || basis != "too-little-data" {
                assert!(j.reason.contains(&e.summary()), "{outcome:?}: {}", j.reason);
            }
        }
        // Harmful and no-effect win over firing often.
        let e = effect(Outcome::Harmful);
        assert_eq!(
            classify(&with_effect(Action::Block, 99, &e)).verdict,
            Verdict::Harmful
        );
        let e = effect(Outcome::NoEffect);
        assert_eq!(
            classify(&with_effect(Action::Nudge, 99, &e)).verdict,
            Verdict::NoEffect
        );
    }

    #[test]
    fn a_monitor_rule_is_not_judged_by_an_effect() {
        for outcome in [Outcome::Harmful, Outcome::NoEffect, Outcome::Helped] {
            let e = effect(outcome);
            let j = classify(&with_effect(Action::Monitor, 2, &e));
            assert_eq!(
                (j.verdict, j.basis),
                (Verdict::Keep, "too-little-data"),
                "{outcome:?}"
            );
            assert_eq!(
                j.reason,
                "fired 2 time(s); settled as monitor; too little data to measure its effect"
            );
        }
    }

    #[test]
    fn monitor_rules_promote_only_on_promotable_or_unknown_evidence() {
        let u = classify(&facts(Action::Monitor, PROMOTE_AFTER, Some(Tier::Unknown)));
        assert_eq!(
            (u.verdict, u.promote_to),
            (Verdict::Promote, Some(Action::Nudge))
        );
        let a = classify(&facts(Action::Monitor, 9, Some(Tier::Anecdotal)));
        assert_eq!((a.verdict, a.basis), (Verdict::Keep, "evidence-too-weak"));
        assert!(
            a.reason.contains("its evidence is anecdotal"),
            "{}",
            a.reason
        );
        let measured = Facts {
            tier: Some((Tier::Reproducible, TierSource::Measured, Some(0.6), 10)),
            ..facts(Action::Monitor, 6, None)
        };
        let j = classify(&measured);
        assert_eq!(j.promote_to, Some(Action::Deny));
        assert!(
            j.reason
                .ends_with("(reproducible: failed on most attempts (60% of 10 attempts))"),
            "{}",
            j.reason
        );
    }

    #[test]
    fn verdict_labels_are_the_serialised_names() {
        for v in Verdict::ALL {
            assert_eq!(serde_json::to_value(v).unwrap(), v.as_str(), "{v:?}");
        }
    }

    #[test]
    fn pinned_rules_are_never_pruned() {
        let mut f = facts(Action::Block, 0, None);
        f.pinned = true;
        let j = classify(&f);
        assert_eq!((j.verdict, j.basis), (Verdict::Keep, "pinned"));
    }
}
