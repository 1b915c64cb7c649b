//! Backtest: run each candidate, as the guard would, over the window's recorded calls.
//!
//! Each candidate is parsed into a real [`crate::rules::Rule`] and asked
//! [`Rule::fires`](crate::rules::Rule::fires) on each call, with the call's stored command as
//! `tool_input.command` — the matcher the guard, `guard check` and prune use. The evidence:
//! calls matched, failures among them, the successful calls it would have hit (crossfire),
//! distinct sessions among the matched failures, and when those failures were first and last
//! seen. The tier is then computed on that matched population.
//!
//! The population is restricted, exactly: a candidate only ever fires on calls of its own tool
//! group (its `tool` glob), and a Bash candidate only on calls whose text — lowercased, quotes
//! and backslashes removed — contains its literal (the program, the host, `sleep`), because
//! every pattern derive writes requires that literal in what it matches. So the restriction
//! drops no call the rule could fire on, except a command that spells the program through
//! shell expansion (`$'\x70sql'`, `${P}sql`), which the shell splitter cannot resolve either.

use std::collections::{HashMap, HashSet};

use serde_json::{Value, json};

use super::calls::{Call, Outcome};
use crate::rules::{Rule, Subject};
use crate::{Error, Result};

/// Most crossfire samples kept per candidate.
const MAX_CROSSFIRE_SAMPLES: usize = 5;

/// What one candidate matched.
#[derive(Debug, Clone, Default)]
pub(crate) struct Backtest {
    /// Settled calls the rule fires on.
    pub matched: u64,
    /// Failures among them.
    pub failures: u64,
    /// Successes among them: calls the rule would have hit although they worked.
    pub crossfire: u64,
    /// Distinct sessions among the matched failures.
    pub sessions: u64,
    /// Earliest matched failure (Unix ms).
    pub first_seen: Option<i64>,
    /// Latest matched failure (Unix ms).
    pub last_seen: Option<i64>,
    /// Index of the first matched failure (for `examples.should_fire`).
    pub failure_sample: Option<usize>,
    /// Indices of the first crossfire calls.
    pub crossfire_samples: Vec<usize>,
    /// Calls on which the pattern errored (backtracking budget); counted as no match.
    pub errors: u64,
}

impl Backtest {
    /// The evidence as stored in `meta.backtest`.
    pub(crate) fn to_json(&self, scope: &str) -> Value {
        let rate = (self.matched > 0).then(|| round4(self.failures as f64 / self.matched as f64));
        json!({
            "matched": self.matched,
            "failures": self.failures,
            "fail_rate": rate,
            "crossfire": self.crossfire,
            "sessions": self.sessions,
            "first_seen": self.first_seen.map(super::window::iso),
            "last_seen": self.last_seen.map(super::window::iso),
            "scope": scope,
        })
    }
}

/// Round to 4 decimal places (the spec's `fail_rate` precision).
pub(crate) fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

/// Parse one candidate rule object into a [`Rule`].
pub(crate) fn rule_of(candidate: &Value) -> Result<Rule> {
    let doc =
        crate::rules::document_from_value("derived candidate", &json!({"rules": [candidate]}))?;
    doc.rules
        .into_iter()
        .next()
        .ok_or_else(|| Error::Invalid("derive: a candidate did not parse into a rule".into()))
}

/// Which calls a candidate is tried on.
pub(crate) struct Target<'a> {
    /// The rule.
    pub rule: &'a Rule,
    /// The tool group index of the calls it can fire on.
    pub group: usize,
    /// For Bash candidates, the prefilter literal index every match requires.
    pub literal: Option<u32>,
}

/// Run every target over `calls` (each call is split once and shared by every rule).
pub(crate) fn run(targets: &[Target<'_>], calls: &[Call]) -> Vec<Backtest> {
    let mut out = vec![Backtest::default(); targets.len()];
    let mut sessions: Vec<HashSet<u32>> = vec![HashSet::default(); targets.len()];
    let mut by_literal: HashMap<u32, Vec<usize>> = HashMap::default();
    let mut by_group: HashMap<usize, Vec<usize>> = HashMap::default();
    for (i, t) in targets.iter().enumerate() {
        match t.literal {
            Some(l) => by_literal.entry(l).or_default().push(i),
            None => by_group.entry(t.group).or_default().push(i),
        }
    }
    let mut todo: Vec<usize> = Vec::new();
    for (ci, call) in calls.iter().enumerate() {
        todo.clear();
        if let Some(list) = by_group.get(&call.group) {
            todo.extend(list);
        }
        for l in &call.literals {
            if let Some(list) = by_literal.get(l) {
                todo.extend(list.iter().filter(|&&i| targets[i].group == call.group));
            }
        }
        if todo.is_empty() {
            continue;
        }
        todo.sort_unstable();
        todo.dedup();
        let input = json!({"command": call.command});
        let subject = Subject::new(&call.tool, &input);
        for &i in &todo {
            let b = &mut out[i];
            match targets[i].rule.fires(&subject) {
                Ok(Some(_)) => {}
                Ok(None) => continue,
                Err(_) => {
                    b.errors += 1;
                    continue;
                }
            }
            b.matched += 1;
            match call.outcome {
                Outcome::Failure => {
                    b.failures += 1;
                    if let Some(s) = call.session {
                        sessions[i].insert(s);
                    }
                    b.first_seen = Some(
                        b.first_seen
                            .map_or(call.started_ms, |t| t.min(call.started_ms)),
                    );
                    b.last_seen = Some(
                        b.last_seen
                            .map_or(call.started_ms, |t| t.max(call.started_ms)),
                    );
                    b.failure_sample.get_or_insert(ci);
                }
                Outcome::Success => {
                    b.crossfire += 1;
                    if b.crossfire_samples.len() < MAX_CROSSFIRE_SAMPLES {
                        b.crossfire_samples.push(ci);
                    }
                }
            }
        }
    }
    for (b, s) in out.iter_mut().zip(sessions) {
        b.sessions = s.len() as u64;
    }
    out
}

/// Does `rule` fire on `command` called through `tool`? (Example checks.)
pub(crate) fn fires_on(rule: &Rule, tool: &str, command: &str) -> bool {
    let input = json!({"command": command});
    matches!(rule.fires(&Subject::new(tool, &input)), Ok(Some(_)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(outcome: Outcome, command: &str, literals: Vec<u32>, session: u32) -> Call {
        Call {
            group: 0,
            tool: "Bash".into(),
            outcome,
            command: command.into(),
            session: Some(session),
            started_ms: i64::from(session),
            literals,
        }
    }

    #[test]
    fn counts_matches_failures_crossfire_and_sessions() {
        let rule = rule_of(&json!({"id": "c", "tool": "Bash", "match": "segment",
            "any": [r"^psql\b"], "unless": [r"\s-h(?:[\s=]|$)"], "action": "monitor"}))
        .unwrap();
        let calls = vec![
            call(Outcome::Failure, "cd db && psql -c x", vec![0], 1),
            call(Outcome::Failure, "psql -c y", vec![0], 2),
            call(Outcome::Failure, "psql -c y", vec![0], 2),
            call(Outcome::Success, "psql -c z", vec![0], 3),
            call(Outcome::Success, "psql -h db -c z", vec![0], 3),
            call(Outcome::Failure, "echo psql", vec![0], 4),
        ];
        let t = Target {
            rule: &rule,
            group: 0,
            literal: Some(0),
        };
        let b = &run(&[t], &calls)[0];
        assert_eq!(
            (b.matched, b.failures, b.crossfire, b.sessions),
            (4, 3, 1, 2)
        );
        assert_eq!((b.first_seen, b.last_seen), (Some(1), Some(2)));
        assert_eq!(b.crossfire_samples, vec![3]);
        // A literal the call does not carry keeps the rule from being tried at all.
        let t = Target {
            rule: &rule,
            group: 0,
            literal: Some(7),
        };
        assert_eq!(run(&[t], &calls)[0].matched, 0);
    }
}
