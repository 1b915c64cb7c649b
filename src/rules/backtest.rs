//! Backtest: run a rule's real matcher over the tool calls the store recorded.
//!
//! This is the one place a rule meets recorded history: promote re-runs it when a pattern
//! changes, prune and report split its matched population at a promotion date. Only settled
//! calls count (`success`, `failure`): a pending, interrupted or denied call is neither an
//! attempt nor a failure of its shape. Matching is [`Rule::fires`] itself — `unless`,
//! `match: segment`, `norm`, flags and all — so a backtest can never disagree with the guard.
//!
//! The store keeps a redacted command for Bash and a redacted summary of the input for other
//! tools. A summary that is a JSON object is used as the tool input; any other text is placed
//! at the rule's own `field`, which is where the recorder took it from.

use std::collections::HashSet;

use rusqlite::Connection;
use serde::Serialize;
use serde_json::{Map, Value};

use super::tier::{self, Tier};
use super::{Rule, Subject};
use crate::{Error, Result};

/// One settled tool call as the store holds it.
#[derive(Debug, Clone)]
pub struct StoredCall {
    /// The join key to the audit chain.
    pub tool_use_id: String,
    /// The session, when known.
    pub session_id: Option<String>,
    /// The tool name.
    pub tool: String,
    /// The redacted command (or input summary).
    pub command: String,
    /// Whether the call failed (else it succeeded).
    pub failed: bool,
    /// When it started, Unix milliseconds UTC.
    pub started_ms: i64,
    /// The command as a tool input, when it is a JSON object.
    parsed: Option<Value>,
}

impl StoredCall {
    /// A call built by hand (tests, fixtures).
    #[must_use]
    pub fn new(
        tool_use_id: &str,
        tool: &str,
        command: &str,
        failed: bool,
        started_ms: i64,
    ) -> Self {
        StoredCall {
            tool_use_id: tool_use_id.to_string(),
            session_id: None,
            tool: tool.to_string(),
            command: command.to_string(),
            failed,
            started_ms,
            parsed: parse_object(command),
        }
    }

    /// Does `rule` fire on this call? A pattern that cannot run counts as not firing.
    #[must_use]
    pub fn fired_by(&self, rule: &Rule) -> bool {
        !matching(&[rule], std::slice::from_ref(self))[0].is_empty()
    }

    /// The tool input rules see: the stored JSON object, or the text at each of `fields`.
    fn input(&self, fields: &[&str]) -> Value {
        if let Some(v) = &self.parsed {
            return v.clone();
        }
        let mut input = Value::Object(Map::new());
        for f in fields {
            put(&mut input, f, &self.command);
        }
        input
    }
}

fn parse_object(command: &str) -> Option<Value> {
    if !command.trim_start().starts_with('{') {
        return None;
    }
    serde_json::from_str::<Value>(command)
        .ok()
        .filter(Value::is_object)
}

/// Set `text` at the dotted `field` of `input`, creating objects on the way (an existing
/// non-object on the path is left alone).
fn put(input: &mut Value, field: &str, text: &str) {
    let mut cur = input;
    let parts: Vec<&str> = field.split('.').collect();
    for (i, part) in parts.iter().enumerate() {
        let Value::Object(map) = cur else { return };
        if i + 1 == parts.len() {
            map.entry((*part).to_string())
                .or_insert_with(|| Value::String(text.to_string()));
            return;
        }
        cur = map
            .entry((*part).to_string())
            .or_insert_with(|| Value::Object(Map::new()));
    }
}

/// For each rule, the indices of the calls it fires on. Calls are the outer loop so each
/// call's text, lowercase copy and shell split are computed once and shared by every rule.
#[must_use]
pub fn matching(rules: &[&Rule], calls: &[StoredCall]) -> Vec<Vec<usize>> {
    let mut fields: Vec<&str> = rules.iter().map(|r| r.field.as_str()).collect();
    fields.sort_unstable();
    fields.dedup();
    let mut out = vec![Vec::new(); rules.len()];
    for (i, call) in calls.iter().enumerate() {
        let wanted: Vec<usize> = (0..rules.len())
            .filter(|&r| super::glob::matches(&rules[r].tool, &call.tool))
            .collect();
        if wanted.is_empty() {
            continue;
        }
        let input = call.input(&fields);
        let subject = Subject::new(&call.tool, &input);
        for r in wanted {
            if matches!(rules[r].fires(&subject), Ok(Some(_))) {
                out[r].push(i);
            }
        }
    }
    out
}

/// Every settled call that started in `[from_ms, until_ms)` (either end open when `None`),
/// oldest first. Calls without a start time cannot be placed in time and are left out.
pub fn load_calls(
    conn: &Connection,
    from_ms: Option<i64>,
    until_ms: Option<i64>,
) -> Result<Vec<StoredCall>> {
    let mut stmt = conn
        .prepare(
            "SELECT tool_use_id, session_id, tool, coalesce(command, ''), status, started_ms
             FROM tool_calls
             WHERE status IN ('success', 'failure') AND started_ms IS NOT NULL
               AND started_ms >= ?1 AND started_ms < ?2
             ORDER BY started_ms, tool_use_id",
        )
        .map_err(|e| Error::sql("read tool calls", e))?;
    let rows = stmt
        .query_map(
            [from_ms.unwrap_or(i64::MIN), until_ms.unwrap_or(i64::MAX)],
            |r| {
                let command: String = r.get(3)?;
                Ok(StoredCall {
                    tool_use_id: r.get(0)?,
                    session_id: r.get(1)?,
                    tool: r.get(2)?,
                    parsed: parse_object(&command),
                    command,
                    failed: r.get::<_, String>(4)? == "failure",
                    started_ms: r.get(5)?,
                })
            },
        )
        .map_err(|e| Error::sql("read tool calls", e))?;
    rows.collect::<rusqlite::Result<Vec<_>>>()
        .map_err(|e| Error::sql("read tool calls", e))
}

/// What a rule's pattern matches in a set of recorded calls.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Backtest {
    /// Settled calls the rule fires on (the attempt count).
    pub matched: u64,
    /// Failures among them.
    pub failures: u64,
    /// Successful calls it fires on: what enforcing it would have got in the way of.
    pub crossfire: u64,
    /// Distinct sessions among the matched calls.
    pub sessions: u64,
    /// First matched call, Unix ms.
    pub first_ms: Option<i64>,
    /// Last matched call, Unix ms.
    pub last_ms: Option<i64>,
}

impl Backtest {
    /// The evidence tier of the matched population (spec §5.2) and its failure rate.
    #[must_use]
    pub fn tier(&self) -> (Tier, Option<f64>) {
        tier::classify(self.failures, self.matched, tier::MIN_ATTEMPTS)
    }
}

/// Run `rule` over `calls`.
#[must_use]
pub fn backtest(rule: &Rule, calls: &[StoredCall]) -> Backtest {
    let idx = matching(&[rule], calls).remove(0);
    summarize(calls, &idx)
}

/// Summarise the matched calls `idx` (indices into `calls`).
#[must_use]
pub fn summarize(calls: &[StoredCall], idx: &[usize]) -> Backtest {
    let mut out = Backtest::default();
    let mut sessions = HashSet::new();
    for call in idx.iter().map(|&i| &calls[i]) {
        out.matched += 1;
        if call.failed {
            out.failures += 1;
        } else {
            out.crossfire += 1;
        }
        if let Some(s) = &call.session_id {
            sessions.insert(s.as_str());
        }
        out.first_ms = Some(
            out.first_ms
                .map_or(call.started_ms, |m| m.min(call.started_ms)),
        );
        out.last_ms = Some(
            out.last_ms
                .map_or(call.started_ms, |m| m.max(call.started_ms)),
        );
    }
    out.sessions = sessions.len() as u64;
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::parse_document;

    fn rule(json: &str) -> Rule {
        parse_document("t", json).unwrap().rules.remove(0)
    }

    #[test]
    fn backtest_uses_the_real_matcher_with_unless_and_segments() {
        let r = rule(
            r#"{"rules":[{"id":"p","tool":"Bash","match":"segment","any":["^psql\\b"],
                "unless":["\\s-h\\s"],"action":"monitor"}]}"#,
        );
        let calls = vec![
            StoredCall::new("a", "Bash", "cd db && FOO=1 psql -c 'x'", true, 1),
            StoredCall::new("b", "Bash", "psql -h host -c 'x'", false, 2),
            StoredCall::new("c", "Bash", "psql -c 'y'", false, 3),
            StoredCall::new("d", "Bash", "echo psql", true, 4),
            StoredCall::new("e", "Write", "psql -c 'x'", true, 5),
        ];
        let b = backtest(&r, &calls);
        assert_eq!((b.matched, b.failures, b.crossfire), (2, 1, 1));
        assert_eq!((b.first_ms, b.last_ms), (Some(1), Some(3)));
    }

    #[test]
    fn non_bash_summaries_are_matched_at_the_rules_field() {
        let r = rule(
            r#"{"rules":[{"id":"w","tool":"Write","field":"file_path","any":["\\.env$"],
                "action":"monitor"}]}"#,
        );
        let calls = vec![
            StoredCall::new("a", "Write", "/repo/.env", true, 1),
            StoredCall::new(
                "b",
                "Write",
                r#"{"file_path":"/x/.env","content":"…"}"#,
                true,
                2,
            ),
            StoredCall::new("c", "Write", "/repo/main.rs", false, 3),
        ];
        assert_eq!(backtest(&r, &calls).matched, 2);
    }
}
