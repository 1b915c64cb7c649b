//! Field contrast for a non-shell tool's cluster: an input field that the tool's successful
//! calls carry and none of the cluster's failures does becomes the candidate's `unless`
//! (a `Read` that passes `limit` never hits the size limit, so the rule spares it).
//!
//! Only fields with a whole-number value are contrasted (`offset`, `limit`): the recorder
//! keeps them in the stored summary of a ranged read (`record::summary`), and the candidate
//! can say "unless it has one" exactly, with the rule's `field` set to it and `unless`
//! [`NUMBER`] — a call without the field gives the field nothing (live) or its path
//! (stored summary), neither of which is a number, so the rule fires on both. A field
//! needs [`super::contrast::MIN_SUCCESSES`] successes carrying it and no failure carrying it.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use super::contrast::MIN_SUCCESSES;
use crate::rules::backtest::StoredCall;

/// The `unless` of a field-contrast candidate: the field holds a whole number.
pub(crate) const NUMBER: &str = r"^\d+$";

/// The field that separates a cluster's failures from the tool's successes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct FieldUnless {
    /// The input field (`limit`).
    pub field: String,
    /// Successes of the tool that carry it.
    pub in_successes: u64,
    /// Successes of the tool compared.
    pub successes: u64,
    /// Failures of the cluster compared (none carries it).
    pub failures: u64,
}

/// Whole-number fields of a stored summary (a JSON object), if it is one.
fn number_fields(summary: &str) -> Vec<String> {
    if !summary.trim_start().starts_with('{') {
        return Vec::new();
    }
    match serde_json::from_str::<Value>(summary) {
        Ok(Value::Object(m)) => m
            .into_iter()
            .filter(|(_, v)| v.as_u64().is_some())
            .map(|(k, _)| k)
            .collect(),
        _ => Vec::new(),
    }
}

/// The field contrast of a cluster whose failures' summaries are `failing`, against the
/// successful `calls` of `tool_glob`.
pub(crate) fn field_unless<'a>(
    failing: impl Iterator<Item = &'a str>,
    tool_glob: &str,
    calls: &[StoredCall],
) -> Option<FieldUnless> {
    let mut failures = 0u64;
    let mut in_failures: BTreeMap<String, u64> = BTreeMap::new();
    for f in failing {
        failures += 1;
        for k in number_fields(f) {
            *in_failures.entry(k).or_default() += 1;
        }
    }
    let mut successes = 0u64;
    let mut in_successes: BTreeMap<String, u64> = BTreeMap::new();
    for c in calls
        .iter()
        .filter(|c| !c.failed && crate::rules::glob::matches(tool_glob, &c.tool))
    {
        successes += 1;
        for k in number_fields(&c.command) {
            *in_successes.entry(k).or_default() += 1;
        }
    }
    in_successes
        .into_iter()
        .filter(|(k, n)| *n >= MIN_SUCCESSES && !in_failures.contains_key(k))
        .max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.cmp(&a.0)))
        .map(|(field, n)| FieldUnless {
            field,
            in_successes: n,
            successes,
            failures,
        })
        .filter(|_| failures >= MIN_SUCCESSES)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(summary: &str, failed: bool) -> StoredCall {
        StoredCall::new("Read", summary, failed, 0)
    }

    #[test]
    fn a_field_only_successes_carry_becomes_the_unless() {
        let mut calls: Vec<StoredCall> = (0..10)
            .map(|i| read(&format!("/a/{i}.md"), false))
            .collect();
        for i in 0..4 {
            calls.push(read(
                &format!(r#"{{"file_path":"/a/big{i}.md","limit":200}}"#),
                false,
            ));
        }
        calls.push(read(
            r#"{"file_path":"/a/x.md","offset":10,"limit":5}"#,
            false,
        ));
        let failing = ["/a/big.md", "/b/huge.md", "/c/log.txt"];
        let u = field_unless(failing.iter().copied(), "Read", &calls).unwrap();
        assert_eq!(u.field, "limit");
        assert_eq!((u.in_successes, u.successes, u.failures), (5, 15, 3));
        // A field some failure carries separates nothing (and `offset`, in one success,
        // is too thin).
        let failing = [r#"{"file_path":"/a/big.md","limit":9000}"#, "/b", "/c"];
        assert!(field_unless(failing.iter().copied(), "Read", &calls).is_none());
        // Another tool's successes do not count; two failures are too few.
        assert!(field_unless(["/a", "/b", "/c"].into_iter(), "Edit", &calls).is_none());
        assert!(field_unless(["/a", "/b"].into_iter(), "Read", &calls).is_none());
    }
}
