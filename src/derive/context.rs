//! Session context that separates a rule's failures from its successes: the same command
//! fails in the read-only sandbox and works elsewhere, fails under one shell or one client
//! and works under another.
//!
//! A rule that fires on successes as well as failures is conditioned on a piece of the
//! session context callus records (sandbox, originator, shell, OS, host) only when the
//! history shows the separation: every failure it fires on has that piece known, the values
//! the failures have leave out all but a fifth of the successes it fires on (a success whose
//! value is unknown counts as kept: the guard would fire there), and at least
//! [`MIN_SUCCESSES`] successes are there to be spared. Of several keys that separate, the
//! one sparing the most successes wins (ties: the order of [`KEYS`], most specific first).
//!
//! Guarantees: a condition is learned only from failures and successes the rule already
//! fires on; it never drops a failure (every failure's value is among the learned values);
//! it never names a value no failure had.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::pattern::Proposal;
use crate::rules::backtest::{History, StoredCall};
use crate::rules::condition::Key;

/// Fewest successes a rule must fire on before a context condition is worth learning.
pub(crate) const MIN_SUCCESSES: usize = 2;

/// The context keys tried, most specific first, with their `when` names.
pub(crate) const KEYS: [(Key, &str); 5] = [
    (Key::Sandbox, "sandbox"),
    (Key::Originator, "originator"),
    (Key::Shell, "shell"),
    (Key::Os, "os"),
    (Key::Host, "host"),
];

/// One call a rule fires on, with its session's context by [`KEYS`] (`None`: unknown).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Seen {
    /// The call failed.
    pub failed: bool,
    /// Its session's value of each key in [`KEYS`], in order, lowercase.
    pub context: [Option<String>; KEYS.len()],
}

/// A learned context condition: `when: {key: values}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Separation {
    /// The `when` key.
    pub key: &'static str,
    /// The values the failures had (sorted).
    pub values: Vec<String>,
    /// Successes the rule fired on that the condition spares.
    pub spared: usize,
}

impl Separation {
    /// The condition as a `when` entry's value.
    pub(crate) fn value(&self) -> Value {
        json!(self.values)
    }
}

/// The context condition that separates `seen`'s failures from its successes, if one does.
pub(crate) fn separating(seen: &[Seen]) -> Option<Separation> {
    let successes = seen.iter().filter(|s| !s.failed).count();
    if successes < MIN_SUCCESSES || !seen.iter().any(|s| s.failed) {
        return None;
    }
    let mut best: Option<Separation> = None;
    for (k, &(_, key)) in KEYS.iter().enumerate() {
        let mut values = BTreeSet::new();
        let mut known = true;
        for s in seen.iter().filter(|s| s.failed) {
            match &s.context[k] {
                Some(v) => {
                    values.insert(v.as_str());
                }
                None => known = false,
            }
        }
        if !known {
            continue;
        }
        let kept = seen
            .iter()
            .filter(|s| !s.failed)
            .filter(|s| s.context[k].as_deref().is_none_or(|v| values.contains(v)))
            .count();
        let spared = successes - kept;
        // At most a fifth of the successes kept.
        if kept * 5 > successes {
            continue;
        }
        if best.as_ref().is_none_or(|b| spared > b.spared) {
            best = Some(Separation {
                key,
                values: values.into_iter().map(str::to_string).collect(),
                spared,
            });
        }
    }
    best
}

/// The separation among the calls `fired` (indices into `calls`) a rule fires on, their
/// sessions' context read from `history`.
pub(crate) fn learn(
    fired: &[usize],
    calls: &[StoredCall],
    history: &History<'_>,
) -> Option<Separation> {
    let failures = fired.iter().filter(|&&i| calls[i].failed).count();
    if failures == 0 || fired.len() - failures < MIN_SUCCESSES {
        return None;
    }
    let seen: Vec<Seen> = fired
        .iter()
        .map(|&i| {
            let call = &calls[i];
            let facts = history.facts(&call.id, call.session, call.started_ms);
            Seen {
                failed: call.failed,
                context: KEYS.map(|(key, _)| {
                    facts
                        .context(key)
                        .map(|v| v.trim().to_ascii_lowercase())
                        .filter(|v| !v.is_empty())
                }),
            }
        })
        .collect();
    separating(&seen)
}

/// Add the separation to `p`'s conditions, if the guard would accept it (an OS or host a
/// rule cannot name is not learned). Returns whether it was added.
pub(crate) fn condition(p: &mut Proposal, sep: &Separation) -> bool {
    let mut when = match &p.when {
        Some(Value::Object(m)) => m.clone(),
        _ => serde_json::Map::new(),
    };
    when.insert(sep.key.to_string(), sep.value());
    let when = Value::Object(when);
    if crate::rules::condition::parse(&when).is_err() {
        return false;
    }
    p.when = Some(when);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A call with only the sandbox (index 0) and shell (index 2) known.
    fn seen(failed: bool, sandbox: Option<&str>, shell: Option<&str>) -> Seen {
        Seen {
            failed,
            context: [
                sandbox.map(str::to_string),
                None,
                shell.map(str::to_string),
                None,
                None,
            ],
        }
    }

    #[test]
    fn the_sandbox_the_failures_share_spares_the_successes() {
        let mut calls = vec![
            seen(true, Some("read-only"), None),
            seen(true, Some("read-only"), None),
        ];
        calls.extend((0..5).map(|_| seen(false, Some("workspace-write"), None)));
        let got = separating(&calls).unwrap();
        assert_eq!(got.key, "sandbox");
        assert_eq!(got.values, ["read-only"]);
        assert_eq!(got.spared, 5);
        assert_eq!(got.value(), json!(["read-only"]));
    }

    #[test]
    fn a_fifth_of_the_successes_may_stay_no_more() {
        // 1 of 5 successes shares the failures' sandbox: a fifth, allowed.
        let mut calls = vec![seen(true, Some("ro"), None)];
        calls.push(seen(false, Some("ro"), None));
        calls.extend((0..4).map(|_| seen(false, Some("rw"), None)));
        assert_eq!(separating(&calls).unwrap().spared, 4);
        // 2 of 6: more than a fifth.
        calls.push(seen(false, Some("ro"), None));
        assert_eq!(separating(&calls), None, "{calls:?}");
    }

    #[test]
    fn an_unknown_success_counts_as_kept_an_unknown_failure_rules_the_key_out() {
        let mut calls = vec![seen(true, Some("ro"), None)];
        calls.extend((0..4).map(|_| seen(false, Some("rw"), None)));
        calls.push(seen(false, None, None));
        // 1 kept (unknown) of 5: a fifth.
        assert_eq!(separating(&calls).unwrap().spared, 4);
        calls.push(seen(false, None, None));
        // 2 of 6 kept: too many.
        assert_eq!(separating(&calls), None);
        // A failure whose sandbox is unknown: the key cannot be learned.
        let calls = vec![
            seen(true, Some("ro"), None),
            seen(true, None, None),
            seen(false, Some("rw"), None),
            seen(false, Some("rw"), None),
        ];
        assert_eq!(separating(&calls), None);
    }

    #[test]
    fn too_few_successes_or_no_failure_learns_nothing() {
        let calls = vec![seen(true, Some("ro"), None), seen(false, Some("rw"), None)];
        assert_eq!(separating(&calls), None, "one success is not a contrast");
        let calls = vec![seen(false, Some("ro"), None), seen(false, Some("rw"), None)];
        assert_eq!(separating(&calls), None);
        assert_eq!(separating(&[]), None);
    }

    #[test]
    fn every_failure_value_is_kept_and_the_key_sparing_most_wins() {
        let calls = vec![
            seen(true, Some("ro"), Some("pwsh")),
            seen(true, Some("none"), Some("pwsh")),
            seen(false, Some("rw"), Some("bash")),
            seen(false, Some("rw"), Some("bash")),
            seen(false, Some("rw"), Some("bash")),
            seen(false, Some("none"), Some("bash")),
        ];
        // sandbox {none, ro} keeps 1 of 4 (over a fifth); shell {pwsh} keeps none.
        let got = separating(&calls).unwrap();
        assert_eq!(
            (got.key, got.values.as_slice()),
            ("shell", &["pwsh".to_string()][..])
        );
        assert_eq!(got.spared, 4);
        // Two keys sparing alike: the more specific (sandbox) wins.
        let calls = vec![
            seen(true, Some("ro"), Some("pwsh")),
            seen(false, Some("rw"), Some("bash")),
            seen(false, Some("rw"), Some("bash")),
        ];
        assert_eq!(separating(&calls).unwrap().key, "sandbox");
        let got = separating(&[
            seen(true, Some("ro"), None),
            seen(true, Some("rw"), None),
            seen(false, Some("x"), None),
            seen(false, Some("x"), None),
        ])
        .unwrap();
        assert_eq!(got.values, ["ro", "rw"], "sorted, all of the failures'");
    }
}
