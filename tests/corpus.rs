//! The regression corpus of issue 4: every dangerous command in `tests/corpus/dangerous.jsonl`
//! must be denied or blocked by the built-in starter policy, and no benign command in
//! `tests/corpus/benign.jsonl` may be. Each line runs through the real `callus guard`.

use serde_json::{Value, json};

use crate::common::Env;

fn load(name: &str) -> Vec<Value> {
    let path = format!("{}/tests/corpus/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| serde_json::from_str(l).unwrap_or_else(|e| panic!("{path}:{}: {e}", i + 1)))
        .collect()
}

/// Run one corpus entry; returns "block", "deny", "nudge" or "allow".
fn decide(env: &Env, entry: &Value) -> String {
    let tool = entry["tool"].as_str().unwrap();
    let input = match entry.get("command") {
        Some(c) => json!({ "command": c }),
        None => json!({ "file_path": entry["file_path"] }),
    };
    crate::common::guard_decision(env, tool, &input)
}

#[test]
fn every_dangerous_command_is_denied_or_blocked() {
    let env = Env::new();
    let entries = load("dangerous.jsonl");
    assert!(entries.len() >= 150, "corpus too small: {}", entries.len());
    let misses: Vec<String> = entries
        .iter()
        .filter_map(|e| {
            let d = decide(&env, e);
            (d != "block" && d != "deny").then(|| format!("{d}: {e}"))
        })
        .collect();
    assert!(
        misses.is_empty(),
        "{} of {} dangerous commands got through:\n{}",
        misses.len(),
        entries.len(),
        misses.join("\n")
    );
}

#[test]
fn no_benign_command_is_denied_or_blocked() {
    let env = Env::new();
    let entries = load("benign.jsonl");
    assert!(entries.len() >= 150, "corpus too small: {}", entries.len());
    let false_positives: Vec<String> = entries
        .iter()
        .filter_map(|e| {
            let d = decide(&env, e);
            (d == "block" || d == "deny").then(|| format!("{d}: {e}"))
        })
        .collect();
    assert!(
        false_positives.is_empty(),
        "{} of {} benign commands were refused:\n{}",
        false_positives.len(),
        entries.len(),
        false_positives.join("\n")
    );
}
