//! The outcome of a tool call as Gemini CLI, Cursor and Copilot CLI report it in their post
//! events, so a failure is recorded as a failure whichever host ran the call. Sources are
//! named in `host::peers`; the fields read here:
//!
//! - Gemini CLI `AfterTool`: `tool_response` = `{llmContent, returnDisplay, error}`. An
//!   `error` is a failure; the shell tool's `llmContent` states `Exit Code: N` for a
//!   non-zero exit (0.61.0 bundle).
//! - Cursor `postToolUse`: `tool_output` is a JSON string (`{"exitCode":0,"stdout":…}` for
//!   `Shell`), `duration` in ms; `postToolUseFailure`: `error_message`, `failure_type`
//!   (`error`, `timeout`, `permission_denied`), `is_interrupt`.
//! - Copilot CLI `postToolUse`: `toolResult` = `{resultType, textResultForLlm}`, result
//!   types `success`, `failure`, `denied`, `error`; `postToolUseFailure`: `error`.

use serde_json::Value;

use super::classify::{self, Status};
use super::rows::{self, Call};
use crate::host::Host;
use crate::host::wire::HookEvent;

/// Settle a post event of `host` into `call`; returns the result text (for the RECUSE
/// scan). `None` when `host` is not one of these three.
pub(crate) fn settle(
    host: Host,
    event: &HookEvent,
    failed: bool,
    call: &mut Call,
) -> Option<String> {
    match host {
        Host::Gemini => Some(gemini(event, call)),
        Host::Cursor => Some(cursor(event, failed, call)),
        Host::Copilot => Some(copilot(event, failed, call)),
        Host::ClaudeCode | Host::Codex => None,
    }
}

fn gemini(event: &HookEvent, call: &mut Call) -> String {
    let response = event.raw.get("tool_response").unwrap_or(&Value::Null);
    let text = match response.get("llmContent") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => rows::value_text(other).into_owned(),
        None => rows::value_text(response).into_owned(),
    };
    let error = match response.get("error") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(e) => Some(
            e.get("message")
                .and_then(Value::as_str)
                .map_or_else(|| rows::value_text(e).into_owned(), str::to_string),
        ),
    };
    call.exit_code = labelled_exit_code(&text, "Exit Code: ");
    call.status = match (&error, call.exit_code) {
        (Some(e), _) => classify::failed(false, e),
        (None, Some(c)) => classify::from_exit_code(c),
        (None, None) => Status::Success,
    };
    if call.status != Status::Success {
        call.error = Some(error.map_or_else(|| text.clone(), |e| format!("{e}\n{text}")));
    }
    // The shell tool labels what the command printed `Output: `; without the label its
    // first line reads as the program's own (the masked-failure check needs `prog: …`).
    match text.strip_prefix("Output: ") {
        Some(printed) => printed.to_string(),
        None => text,
    }
}

fn cursor(event: &HookEvent, failed: bool, call: &mut Call) -> String {
    call.duration_ms = event.raw.get("duration").and_then(Value::as_i64);
    if failed {
        let text = event.str_field("error_message").unwrap_or("").to_string();
        let interrupt = event.raw.get("is_interrupt").and_then(Value::as_bool) == Some(true);
        call.status = match event.str_field("failure_type") {
            Some("permission_denied") => Status::Denied,
            _ => classify::failed(interrupt, &text),
        };
        call.error = Some(text.clone());
        return text;
    }
    let output = event
        .raw
        .get("tool_output")
        .or_else(|| event.raw.get("output"))
        .unwrap_or(&Value::Null);
    let parsed = match output {
        Value::String(s) => serde_json::from_str::<Value>(s).unwrap_or_else(|_| output.clone()),
        other => other.clone(),
    };
    let text = match (parsed.get("stdout"), parsed.get("stderr")) {
        (Some(Value::String(o)), Some(Value::String(e))) if !e.is_empty() => format!("{o}\n{e}"),
        (Some(Value::String(o)), _) => o.clone(),
        _ => rows::value_text(&parsed).into_owned(),
    };
    call.exit_code = ["exitCode", "exit_code"]
        .iter()
        .find_map(|k| parsed.get(*k).and_then(Value::as_i64));
    call.status = call
        .exit_code
        .map_or(Status::Success, classify::from_exit_code);
    if call.status != Status::Success {
        call.error = Some(text.clone());
    }
    text
}

fn copilot(event: &HookEvent, failed: bool, call: &mut Call) -> String {
    if failed {
        let text = event.str_field("error").unwrap_or("").to_string();
        call.status = classify::failed(false, &text);
        call.error = Some(text.clone());
        return text;
    }
    let result = event
        .raw
        .get("toolResult")
        .or_else(|| event.raw.get("tool_result"))
        .unwrap_or(&Value::Null);
    let field = |a: &str, b: &str| {
        result
            .get(a)
            .or_else(|| result.get(b))
            .and_then(Value::as_str)
            .unwrap_or("")
    };
    let text = field("textResultForLlm", "text_result_for_llm").to_string();
    call.status = match field("resultType", "result_type") {
        "failure" | "error" => Status::Failure,
        "denied" | "rejected" => Status::Denied,
        _ => Status::Success,
    };
    call.exit_code = stated_after(&text, "with exit code ");
    if call.status == Status::Success
        && let Some(code) = call.exit_code
    {
        call.status = classify::from_exit_code(code);
    }
    if call.status != Status::Success {
        call.error = Some(text.clone());
    }
    text
}

/// The number right after the last `marker` in `text` (the 1.0.102 runtime words a shell
/// result `… completed with exit code N` / `Command failed with exit code N`).
fn stated_after(text: &str, marker: &str) -> Option<i64> {
    let at = text.rfind(marker)? + marker.len();
    let digits: String = text[at..]
        .chars()
        .enumerate()
        .take_while(|&(i, c)| c.is_ascii_digit() || (i == 0 && c == '-'))
        .map(|(_, c)| c)
        .collect();
    digits.parse().ok()
}

/// The number after `label` at the start of a line of `text` (case-insensitive label).
fn labelled_exit_code(text: &str, label: &str) -> Option<i64> {
    text.lines().find_map(|line| {
        let line = line.trim().trim_start_matches('[');
        let head = line.get(..label.len())?;
        if !head.eq_ignore_ascii_case(label) {
            return None;
        }
        line[label.len()..]
            .trim_end_matches(']')
            .trim()
            .parse()
            .ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_are_read_from_labelled_lines_only() {
        assert_eq!(
            labelled_exit_code("Output: x\nExit Code: 3", "Exit Code: "),
            Some(3)
        );
        assert_eq!(labelled_exit_code("[Exit Code: 2]", "Exit Code: "), Some(2));
        assert_eq!(
            labelled_exit_code("no Exit Code: 3 here", "Exit Code: "),
            None
        );
        assert_eq!(labelled_exit_code("Exit Code: (none)", "Exit Code: "), None);
        assert_eq!(
            stated_after("x\nCommand failed with exit code 127.", "with exit code "),
            Some(127)
        );
        assert_eq!(stated_after("exit code unknown", "with exit code "), None);
    }
}
