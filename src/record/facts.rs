//! Facts a host observed about a call, kept in `tool_calls.facts` (JSON) where they come
//! cheaply with the result: for a Read, the size of what it returned (`bytes`, and `lines`
//! and `total_lines` when the host says), or `over_limit` when the host refused a file too
//! large to read. History replay answers a rule's `file_larger_than` from them. For a
//! shell call, the time limit its input gave the host's shell tool (`timeout_ms`, in
//! milliseconds: Codex's `timeout_ms`, Claude Code's Bash `timeout`, read by
//! [`crate::host::call::time_limit_ms`]), since the stored row keeps only the command, and
//! `unsandboxed` when the call asked to run outside the session's sandbox (an escalated
//! call): replay then answers a `sandbox` condition for it as no sandbox.

use serde_json::{Map, Value, json};

/// The facts of a call of `tool` whose structured result is `result` (Claude Code's
/// `toolUseResult`, a hook's `tool_response`) or whose error is `error`; `None` when there is
/// nothing to keep.
#[must_use]
pub(crate) fn observed(tool: &str, result: Option<&Value>, error: Option<&str>) -> Option<Value> {
    if tool != "Read" {
        return None;
    }
    if error.is_some_and(over_limit) {
        return Some(json!({"over_limit": true}));
    }
    let file = result?.get("file")?;
    let mut facts = Map::new();
    if let Some(content) = file.get("content").and_then(Value::as_str) {
        facts.insert("bytes".into(), json!(content.len()));
    }
    for (from, to) in [("numLines", "lines"), ("totalLines", "total_lines")] {
        if let Some(n) = file.get(from).and_then(Value::as_u64) {
            facts.insert(to.into(), json!(n));
        }
    }
    (!facts.is_empty()).then_some(Value::Object(facts))
}

/// The facts a call of `tool` with `input` gives: the time limit it set (`timeout_ms`, a whole
/// number of milliseconds) and whether it asked to run outside the session's sandbox
/// (`unsandboxed: true`, see [`crate::host::call::unsandboxed`]); `None` when it gives none.
#[must_use]
pub(crate) fn of_input(tool: &str, input: &Value) -> Option<Value> {
    let mut facts = Map::new();
    if let Some(ms) = crate::host::call::time_limit_ms(tool, input) {
        facts.insert("timeout_ms".into(), json!(ms));
    }
    if crate::host::call::unsandboxed(input) {
        facts.insert("unsandboxed".into(), json!(true));
    }
    (!facts.is_empty()).then_some(Value::Object(facts))
}

/// Claude Code's refusal of a file too large to read ("File content (31000 tokens) exceeds
/// maximum allowed tokens (25000)", "… exceeds maximum allowed size (256KB)").
fn over_limit(error: &str) -> bool {
    error
        .to_ascii_lowercase()
        .contains("exceeds maximum allowed")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_keeps_its_size_or_that_it_was_over_the_limit() {
        let result = json!({"type": "text", "file": {"filePath": "/w/a", "content": "héllo\n",
            "numLines": 1, "startLine": 1, "totalLines": 40}});
        assert_eq!(
            observed("Read", Some(&result), None),
            Some(json!({"bytes": 7, "lines": 1, "total_lines": 40}))
        );
        assert_eq!(observed("Write", Some(&result), None), None);
        assert_eq!(observed("Read", Some(&json!({"file": {}})), None), None);
        assert_eq!(observed("Read", Some(&json!("text")), None), None);
        assert_eq!(observed("Read", None, None), None);
        let error = "File content (31000 tokens) Exceeds maximum allowed tokens (25000).";
        assert_eq!(
            observed("Read", Some(&result), Some(error)),
            Some(json!({"over_limit": true}))
        );
        assert_eq!(observed("Read", None, Some("File does not exist.")), None);
    }

    #[test]
    fn a_shell_call_keeps_the_time_limit_its_input_set() {
        assert_eq!(
            of_input(
                "Bash",
                &json!({"command": "git status", "timeout_ms": 1000})
            ),
            Some(json!({"timeout_ms": 1000}))
        );
        assert_eq!(of_input("Bash", &json!({"command": "git status"})), None);
        assert_eq!(of_input("Bash", &json!({"timeout_ms": "1000"})), None);
        assert_eq!(of_input("Bash", &json!({"timeout_ms": -5})), None);
        assert_eq!(
            of_input("Bash", &json!({"command": "make", "timeout": 600_000})),
            Some(json!({"timeout_ms": 600_000}))
        );
        assert_eq!(of_input("WebFetch", &json!({"timeout": 30})), None);
        assert_eq!(
            of_input(
                "shell",
                &json!({"command": "git fetch", "with_escalated_permissions": true,
                "timeout_ms": 5})
            ),
            Some(json!({"timeout_ms": 5, "unsandboxed": true}))
        );
    }
}
