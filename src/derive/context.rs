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

use std::collections::{BTreeSet, HashMap};

use rusqlite::Connection;
use serde_json::{Value, json};

use super::pattern::Proposal;
use crate::rules::backtest::StoredCall;
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
/// `seen` holds at least one failure and [`MIN_SUCCESSES`] successes (see [`learn`]).
pub(crate) fn separating(seen: &[Seen]) -> Option<Separation> {
    let successes = seen.iter().filter(|s| !s.failed).count();
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

/// The separation among the calls `fired` (indices into `calls`) a rule fires on, if it
/// fires on at least one failure and [`MIN_SUCCESSES`] successes; each call's session
/// context is read from the store's `sessions` row (`session_ids` resolves a call's
/// session index), once per session.
pub(crate) fn learn(
    fired: &[usize],
    calls: &[StoredCall],
    conn: &Connection,
    session_ids: &[String],
) -> Option<Separation> {
    let failures = fired.iter().filter(|&&i| calls[i].failed).count();
    if failures == 0 || fired.len() - failures < MIN_SUCCESSES {
        return None;
    }
    let mut sessions: HashMap<u32, [Option<String>; KEYS.len()]> = HashMap::new();
    let seen: Vec<Seen> = fired
        .iter()
        .map(|&i| {
            let call = &calls[i];
            let context = call.session.map_or_else(Default::default, |s| {
                sessions
                    .entry(s)
                    .or_insert_with(|| {
                        session_ids
                            .get(s as usize)
                            .map(|id| context_of(conn, id))
                            .unwrap_or_default()
                    })
                    .clone()
            });
            Seen {
                failed: call.failed,
                context,
            }
        })
        .collect();
    separating(&seen)
}

/// A session's sandbox, originator, shell, OS and host ([`KEYS`] order), lowercase; empty
/// or unreadable values are unknown.
fn context_of(conn: &Connection, id: &str) -> [Option<String>; KEYS.len()] {
    let row = conn
        .query_row(
            "SELECT sandbox, originator, shell, os, host FROM sessions WHERE id = ?1",
            [id],
            |r| Ok([r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?]),
        )
        .unwrap_or_default();
    row.map(|v: Option<String>| {
        v.map(|v| v.trim().to_ascii_lowercase())
            .filter(|v| !v.is_empty())
    })
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
        // Both keys separate; the later one spares more and wins over the earlier.
        let mut calls = vec![seen(true, Some("ro"), Some("pwsh"))];
        calls.push(seen(false, Some("ro"), Some("bash")));
        calls.extend((0..4).map(|_| seen(false, Some("rw"), Some("bash"))));
        let got = separating(&calls).unwrap();
        assert_eq!((got.key, got.spared), ("shell", 5));
    }

    /// Sessions: `ro` (read-only, pwsh, an empty originator) and `rw` (workspace-write,
    /// bash); calls 0-1 fail in `ro`, 2-4 succeed in `rw`, 5 succeeds in `ro`.
    fn history() -> rusqlite::Connection {
        let conn = crate::store::open_in_memory().unwrap();
        conn.execute_batch(
            "INSERT INTO sessions (id, host, source, shell, sandbox, originator) VALUES
                 ('ro', 'codex', 'import', 'pwsh', 'Read-Only', ''),
                 ('rw', 'codex', 'import', 'bash', 'workspace-write', 'x');",
        )
        .unwrap();
        conn
    }

    fn calls() -> Vec<StoredCall> {
        let at = |failed, session| StoredCall {
            session: Some(session),
            ..StoredCall::new("Bash", "npm install", failed, 1)
        };
        vec![
            at(true, 0),
            at(true, 0),
            at(false, 1),
            at(false, 1),
            at(false, 1),
            at(false, 0),
        ]
    }

    #[test]
    fn learn_reads_each_calls_session_context_lowercase_and_skips_empty_values() {
        let conn = history();
        let ids = vec!["ro".to_string(), "rw".to_string()];
        let calls = calls();
        let learn = |fired: &[usize]| learn(fired, &calls, &conn, &ids);
        // Failures 0-1, successes 2-4: the sandbox (lowercased) separates; the empty
        // originator is unknown, so the originator is not learnable.
        let got = learn(&[0, 1, 2, 3, 4]).unwrap();
        assert_eq!(
            (got.key, got.values.as_slice()),
            ("sandbox", &["read-only".to_string()][..])
        );
        assert_eq!(got.spared, 3);
        // One success only: nothing to spare.
        assert_eq!(learn(&[0, 1, 2]), None);
        assert_eq!(learn(&[0, 2]), None);
        // Two successes: enough.
        assert!(learn(&[0, 2, 3]).is_some());
        // No failure: nothing to learn (the successes' sandbox would be learned from
        // nothing).
        assert_eq!(learn(&[2, 3, 4]), None);
        // A success in the failures' session among 4: over a fifth kept, nothing learned.
        assert_eq!(learn(&[0, 1, 2, 3, 4, 5]), None);
        // Sessions the store does not know: nothing is known.
        let unknown = vec!["gone".to_string(), "also-gone".to_string()];
        assert_eq!(
            super::learn(&[0, 1, 2, 3, 4], &calls, &conn, &unknown),
            None
        );
    }

    #[test]
    fn condition_adds_to_the_conditions_the_guard_accepts() {
        let p = || Proposal {
            kind: "program",
            any: vec![r"^npm\b".into()],
            unless: Vec::new(),
            match_mode: Some("segment"),
            flags: None,
            literal: Some("npm".into()),
            field_unless: None,
            when: None,
            field: None,
        };
        let sep = |key, values: &[&str]| Separation {
            key,
            values: values.iter().map(|v| (*v).to_string()).collect(),
            spared: 3,
        };
        let mut a = p();
        assert!(condition(&mut a, &sep("sandbox", &["read-only"])));
        assert_eq!(a.when, Some(json!({"sandbox": ["read-only"]})));
        // Added beside a condition already there.
        let mut b = p();
        b.when = Some(json!({"program_absent": "npm"}));
        assert!(condition(&mut b, &sep("shell", &["pwsh"])));
        assert_eq!(
            b.when,
            Some(json!({"program_absent": "npm", "shell": ["pwsh"]}))
        );
        // A host the rule schema does not know is not learned, and nothing changes.
        let mut c = p();
        c.when = Some(json!({"program_absent": "npm"}));
        assert!(!condition(&mut c, &sep("host", &["some-new-host"])));
        assert_eq!(c.when, Some(json!({"program_absent": "npm"})));
    }
}
