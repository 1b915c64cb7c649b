//! The verdict on a file tool's candidate-to-be (`tool_causes` gave its cluster a cause):
//! a rule only where its learned condition separates its failures from the tool's
//! successes as the guard would enforce it, a lesson for the causes no field or state
//! separates, and never a tool-wide rule beside a keyed one of the same tool (the two would
//! share all of the keyed one's failures: issue 25 item 8).

use std::collections::BTreeSet;

use super::cluster::{Cluster, Kind};
use super::tool_causes::{Cause, is_file_tool};
use super::{Derivation, Derived, FindingKind};
use crate::rules::backtest::Backtest;

/// Why an edit whose old text did not match is a lesson.
pub(crate) const NO_MATCH_LESSON: &str = "the edit's old text did not match the file exactly once (\"string to replace not found\"): re-Read the lines and copy them exactly. Only the tool can check this; no field separates these calls from its successes, so a lesson, not a rule";

/// Why a learned condition that does not separate is a lesson.
pub(crate) const NOT_SEPARATED_LESSON: &str = "the state the error names, replayed over the history as the guard would check it, does not separate these failures from the tool's successes: a lesson, not a rule";

/// Why a tool-wide candidate firing on other causes' failures is a lesson.
pub(crate) const MIXED_LESSON: &str = "a tool-wide rule would fire on the tool's failures of other causes too (mostly theirs, or all of another candidate's), and no field or state separates this cause from them: a lesson, not a rule";

/// The verdict on a candidate, from its cluster's cause and its replay (`own`: its
/// cluster's failures); `model` is the outcome model's verdict (`finding`), asked for a
/// cluster whose cause does not decide (none, or missing paths that did not recur).
pub(crate) fn verdict(
    cause: Option<&Cause>,
    tool_wide: bool,
    tool: &str,
    b: &Backtest,
    own: u64,
    model: impl FnOnce() -> FindingKind,
) -> FindingKind {
    match cause {
        Some(Cause::NoMatch) => FindingKind::Lesson(NO_MATCH_LESSON),
        Some(Cause::Directory | Cause::NotRead | Cause::Stale | Cause::RecurringPath(_)) => {
            if 2 * b.failures >= own && 2 * b.failures >= b.matched {
                FindingKind::Rule
            } else {
                FindingKind::Lesson(NOT_SEPARATED_LESSON)
            }
        }
        Some(Cause::Form(_)) if 2 * b.failures >= own && 2 * b.failures >= b.matched => {
            FindingKind::Rule
        }
        Some(Cause::Form(_) | Cause::Guessed) | None => match model() {
            FindingKind::Rule if tool_wide && is_file_tool(tool) && 2 * own < b.failures => {
                FindingKind::Lesson(MIXED_LESSON)
            }
            k => k,
        },
    }
}

/// Is this a file tool's candidate keyed on nothing (no pattern, no condition): it fires on
/// every failure of its tool, whatever the cause?
fn unkeyed(d: &Derived, clusters: &[Cluster]) -> bool {
    let c = &clusters[d.clusters[0]];
    c.kind == Kind::ToolWide
        && is_file_tool(&c.group.key)
        && d.proposal.any.is_empty()
        && d.proposal.when.is_none()
}

/// A file tool's candidate keyed on nothing fires on every failure another candidate of the
/// same tool fires on, so the two would share all of the other's failures: while the tool
/// has another candidate (proposed or withheld), the unkeyed one is a lesson
/// ([`MIXED_LESSON`]), not a second rule over the same failures.
pub(crate) fn demote_unkeyed(dv: &mut Derivation) {
    let clusters = &dv.clusters;
    let tool_of = |d: &Derived| clusters[d.clusters[0]].group.glob.clone();
    let keyed: BTreeSet<String> = dv
        .candidates
        .iter()
        .chain(&dv.withheld)
        .filter(|d| !unkeyed(d, clusters))
        .map(tool_of)
        .collect();
    for list in [&mut dv.candidates, &mut dv.withheld] {
        let (demoted, kept): (Vec<Derived>, Vec<Derived>) = std::mem::take(list)
            .into_iter()
            .partition(|d| unkeyed(d, clusters) && keyed.contains(&tool_of(d)));
        *list = kept;
        dv.not_rules.extend(
            demoted
                .into_iter()
                .map(|d| (d, FindingKind::Lesson(MIXED_LESSON))),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn backtest(matched: u64, failures: u64) -> Backtest {
        Backtest {
            matched,
            failures,
            ..Backtest::default()
        }
    }

    #[test]
    fn a_condition_is_kept_only_where_the_replay_shows_it_separates() {
        let rule = || FindingKind::Rule;
        let v = |cause: Option<&Cause>, m, f, own| {
            verdict(cause, true, "Read", &backtest(m, f), own, || {
                panic!("the cause decides")
            })
        };
        let dir = Some(&Cause::Directory);
        assert_eq!(v(dir, 5, 5, 5), FindingKind::Rule);
        assert_eq!(
            v(dir, 6, 3, 6),
            FindingKind::Rule,
            "half its failures, half it fires on"
        );
        assert_eq!(
            v(dir, 6, 2, 4),
            FindingKind::Lesson(NOT_SEPARATED_LESSON),
            "fails on too few of what it fires on"
        );
        assert_eq!(
            v(dir, 2, 2, 5),
            FindingKind::Lesson(NOT_SEPARATED_LESSON),
            "fires on too few of its failures"
        );
        assert_eq!(v(Some(&Cause::NotRead), 4, 2, 4), FindingKind::Rule);
        assert_eq!(
            v(Some(&Cause::RecurringPath("/x".into())), 5, 2, 3),
            FindingKind::Lesson(NOT_SEPARATED_LESSON)
        );
        assert_eq!(v(Some(&Cause::Stale), 6, 6, 6), FindingKind::Rule);
        assert_eq!(
            v(Some(&Cause::Stale), 6, 2, 6),
            FindingKind::Lesson(NOT_SEPARATED_LESSON)
        );
        assert_eq!(
            v(Some(&Cause::NoMatch), 9, 9, 9),
            FindingKind::Lesson(NO_MATCH_LESSON)
        );
        // Otherwise the outcome model decides; a rule it keeps that would be a tool-wide
        // rule of a file tool firing mostly on other causes' failures is a lesson.
        let w = |cause: Option<&Cause>, tool_wide, tool, f, own, k: FindingKind| {
            verdict(cause, tool_wide, tool, &backtest(50, f), own, move || k)
        };
        let guessed = Some(&Cause::Guessed);
        assert_eq!(
            w(guessed, true, "Read", 9, 3, FindingKind::Guess),
            FindingKind::Guess
        );
        assert_eq!(
            w(guessed, true, "Read", 7, 3, FindingKind::Rule),
            FindingKind::Lesson(MIXED_LESSON)
        );
        assert_eq!(
            w(guessed, true, "Read", 6, 3, FindingKind::Rule),
            FindingKind::Rule
        );
        assert_eq!(
            w(None, true, "Read", 10, 5, FindingKind::Rule),
            FindingKind::Rule
        );
        assert_eq!(
            w(None, true, "Read", 11, 5, FindingKind::Rule),
            FindingKind::Lesson(MIXED_LESSON)
        );
        assert_eq!(
            w(None, false, "Read", 11, 5, FindingKind::Rule),
            FindingKind::Rule
        );
        assert_eq!(
            w(None, true, "WebFetch", 11, 5, FindingKind::Rule),
            FindingKind::Rule
        );
        assert_eq!(
            verdict(None, true, "Read", &backtest(1, 1), 1, rule),
            FindingKind::Rule
        );
    }

    #[test]
    fn a_path_form_is_a_rule_where_it_separates_and_the_outcome_model_decides_otherwise() {
        let form = Some(&Cause::Form(crate::derive::path_form::Form::GitBashDrive));
        let v = |m, f, own, k: FindingKind| {
            verdict(form, true, "Read", &backtest(m, f), own, move || k)
        };
        assert_eq!(v(6, 3, 6, FindingKind::Guess), FindingKind::Rule);
        assert_eq!(
            v(7, 3, 6, FindingKind::Guess),
            FindingKind::Guess,
            "the tool's successes use the form too"
        );
        assert_eq!(
            v(3, 3, 7, FindingKind::Guess),
            FindingKind::Guess,
            "fires on too few of its failures"
        );
        assert_eq!(v(3, 3, 7, FindingKind::Rule), FindingKind::Rule);
    }

    fn tool_wide() -> crate::derive::pattern::Proposal {
        crate::derive::pattern::Proposal::tool_wide_fixture()
    }

    #[test]
    fn a_form_proposes_its_pattern_on_the_path_field_and_grades_on_min_count() {
        let p = crate::derive::tool_causes::propose(
            &Cause::Form(crate::derive::path_form::Form::Backslash),
            "view",
            tool_wide(),
        );
        assert_eq!(p.kind, "path-form-backslash");
        assert_eq!(p.field, Some("path"));
        assert_eq!(p.any, vec![r"\\".to_string()]);
        assert!(p.unless.is_empty() && p.when.is_none());
        assert!(crate::derive::path_form::keyed(&p));
        assert!(!crate::derive::path_form::keyed(&tool_wide()));
        let options = crate::derive::Options {
            min_count: 3,
            min_attempts: 5,
            ..crate::derive::Options::new(crate::window::Window::last_days(7, 0))
        };
        assert_eq!(crate::derive::attempt_floor(&options, &p), 3);
        assert_eq!(crate::derive::attempt_floor(&options, &tool_wide()), 5);
        let mangled = crate::derive::pattern::Proposal {
            kind: "backslash-path",
            ..tool_wide()
        };
        assert_eq!(crate::derive::attempt_floor(&options, &mangled), 3);
    }
}
