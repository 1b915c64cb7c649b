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

use std::collections::{BTreeMap, HashMap};

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

/// How often the successes of one tool glob carry each whole-number field.
#[derive(Debug, Default)]
struct Tally {
    successes: u64,
    carrying: BTreeMap<String, u64>,
}

/// Field contrast over one window's calls. The successes of a tool glob are tallied once,
/// on first use, and reused by every cluster of that glob: tallying them per cluster parsed
/// every stored summary of the window once per cluster (most of derive's time on a large
/// store).
pub(crate) struct FieldContrast<'c> {
    calls: &'c [StoredCall],
    by_glob: HashMap<String, Tally>,
}

impl<'c> FieldContrast<'c> {
    pub(crate) fn new(calls: &'c [StoredCall]) -> Self {
        Self {
            calls,
            by_glob: HashMap::new(),
        }
    }

    /// The field contrast of a cluster whose failures' summaries are `failing`, against
    /// the successful calls of `tool_glob`.
    pub(crate) fn unless<'a>(
        &mut self,
        failing: impl Iterator<Item = &'a str>,
        tool_glob: &str,
    ) -> Option<FieldUnless> {
        let mut failures = 0u64;
        let mut in_failures: BTreeMap<String, u64> = BTreeMap::new();
        for f in failing {
            failures += 1;
            for k in number_fields(f) {
                *in_failures.entry(k).or_default() += 1;
            }
        }
        let calls = self.calls;
        let tally = self
            .by_glob
            .entry(tool_glob.to_string())
            .or_insert_with(|| tally(calls, tool_glob));
        tally
            .carrying
            .iter()
            .filter(|(k, n)| **n >= MIN_SUCCESSES && !in_failures.contains_key(*k))
            .max_by(|a, b| a.1.cmp(b.1).then_with(|| b.0.cmp(a.0)))
            .map(|(field, &n)| FieldUnless {
                field: field.clone(),
                in_successes: n,
                successes: tally.successes,
                failures,
            })
            .filter(|_| failures >= MIN_SUCCESSES)
    }
}

/// The successes of `tool_glob` among `calls` and the whole-number fields they carry.
fn tally(calls: &[StoredCall], tool_glob: &str) -> Tally {
    let mut t = Tally::default();
    for c in calls
        .iter()
        .filter(|c| !c.failed && crate::rules::glob::matches(tool_glob, &c.tool))
    {
        t.successes += 1;
        for k in number_fields(&c.command) {
            *t.carrying.entry(k).or_default() += 1;
        }
    }
    t
}

/// The field contrast of one cluster (a [`FieldContrast`] used once).
#[cfg(test)]
fn field_unless<'a>(
    failing: impl Iterator<Item = &'a str>,
    tool_glob: &str,
    calls: &[StoredCall],
) -> Option<FieldUnless> {
    FieldContrast::new(calls).unless(failing, tool_glob)
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

    #[test]
    fn one_contrast_tallies_each_glob_apart_and_answers_every_cluster_alike() {
        let mut calls: Vec<StoredCall> = (0..4)
            .map(|i| read(&format!(r#"{{"file_path":"/a/{i}.md","limit":9}}"#), false))
            .collect();
        calls.extend((0..3).map(|i| {
            StoredCall::new(
                "Edit",
                &format!(r#"{{"file_path":"/e/{i}","offset":1}}"#),
                false,
                0,
            )
        }));
        let mut contrast = FieldContrast::new(&calls);
        let failing = ["/x", "/y", "/z"];
        let read_first = contrast.unless(failing.iter().copied(), "Read").unwrap();
        let edit = contrast.unless(failing.iter().copied(), "Edit").unwrap();
        let read_again = contrast.unless(failing.iter().copied(), "Read").unwrap();
        assert_eq!(read_first, read_again);
        assert_eq!(
            (read_first.field.as_str(), read_first.successes),
            ("limit", 4)
        );
        assert_eq!((edit.field.as_str(), edit.successes), ("offset", 3));
        // The cached tally still meets each cluster's own failures.
        let carrying = [r#"{"file_path":"/q","limit":1}"#, "/y", "/z"];
        assert!(contrast.unless(carrying.iter().copied(), "Read").is_none());
    }
}
