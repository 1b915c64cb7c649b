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
        // The shell tool's own timeout is reported as a result, not an error.
        (None, None) if super::outcome::is_host_timeout(&text) => Status::Failure,
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
    use serde_json::json;

    fn event(host: Host, raw: Value) -> HookEvent {
        let Value::Object(raw) = raw else {
            panic!("not an object")
        };
        HookEvent {
            host,
            event: String::new(),
            session_id: String::new(),
            tool_name: "Bash".into(),
            tool_input: Value::Null,
            tool_use_id: None,
            cwd: None,
            transcript_path: None,
            raw,
        }
    }

    /// Settle `raw` as a post event of `host`: (status, exit code, error, returned text).
    fn settled(
        host: Host,
        failed: bool,
        raw: Value,
    ) -> (Status, Option<i64>, Option<String>, String) {
        let mut call = Call::new("t", "h", "hook", "Bash", Value::Null);
        let text = settle(host, &event(host, raw), failed, &mut call).unwrap();
        (call.status, call.exit_code, call.error, text)
    }

    #[test]
    fn only_the_three_peer_hosts_are_settled_here() {
        for host in [Host::ClaudeCode, Host::Codex] {
            let mut call = Call::new("t", "h", "hook", "Bash", Value::Null);
            assert_eq!(settle(host, &event(host, json!({})), true, &mut call), None);
            assert_eq!(call.status, Status::Pending);
        }
    }

    #[test]
    fn gemini_errors_and_stated_exit_codes_are_failures() {
        let g = |raw| settled(Host::Gemini, false, raw);
        assert_eq!(
            g(json!({"tool_response": {"llmContent": "Output: hello", "error": null}})),
            (Status::Success, None, None, "hello".into())
        );
        let text = "Output: make: *** No rule\nExit Code: 2";
        assert_eq!(
            g(json!({"tool_response": {"llmContent": text}})),
            (
                Status::Failure,
                Some(2),
                Some(text.into()),
                "make: *** No rule\nExit Code: 2".into()
            )
        );
        assert_eq!(
            g(json!({"tool_response": {"llmContent": "Exit Code: 0"}})).0,
            Status::Success
        );
        assert_eq!(
            g(json!({"tool_response": {"llmContent": "x", "error": "boom"}})),
            (Status::Failure, None, Some("boom\nx".into()), "x".into())
        );
        assert_eq!(
            g(json!({"tool_response": {"llmContent": "x", "error": {"message": "m", "code": 3}}}))
                .2,
            Some("m\nx".into())
        );
        assert_eq!(
            g(json!({"tool_response": {"llmContent": "x", "error": {"code": 3}}})).2,
            Some("{\"code\":3}\nx".into())
        );
        // The error is read with the refusal and interruption phrasings.
        assert_eq!(
            g(json!({"tool_response": {"error": "exec command rejected by user"}})).0,
            Status::Denied
        );
        // Without llmContent, the whole response is the text; a non-string one is JSON.
        assert_eq!(
            g(json!({"tool_response": {"returnDisplay": "d"}})).3,
            "{\"returnDisplay\":\"d\"}"
        );
        assert_eq!(
            g(json!({"tool_response": {"llmContent": [1, 2]}})).3,
            "[1,2]"
        );
        assert_eq!(g(json!({})), (Status::Success, None, None, String::new()));
    }

    #[test]
    fn cursor_failures_are_denied_interrupted_or_failed() {
        let c = |raw| settled(Host::Cursor, true, raw);
        assert_eq!(
            c(json!({"error_message": "e", "failure_type": "permission_denied"})).0,
            Status::Denied
        );
        assert_eq!(
            c(json!({"error_message": "e", "failure_type": "error", "is_interrupt": true})).0,
            Status::Interrupted
        );
        assert_eq!(
            c(json!({"error_message": "e", "failure_type": "timeout", "is_interrupt": false})),
            (Status::Failure, None, Some("e".into()), "e".into())
        );
        let mut call = Call::new("t", "h", "hook", "Bash", Value::Null);
        let e = event(
            Host::Cursor,
            json!({"error_message": "e", "duration": 1234}),
        );
        settle(Host::Cursor, &e, true, &mut call);
        assert_eq!(call.duration_ms, Some(1234));
    }

    #[test]
    fn cursor_shell_output_carries_the_exit_code() {
        let c = |raw| settled(Host::Cursor, false, raw);
        assert_eq!(
            c(json!({"tool_output": "{\"exitCode\":0,\"stdout\":\"ok\",\"stderr\":\"\"}"})),
            (Status::Success, Some(0), None, "ok".into())
        );
        assert_eq!(
            c(json!({"tool_output": "{\"exitCode\":1,\"stdout\":\"o\",\"stderr\":\"e\"}"})),
            (Status::Failure, Some(1), Some("o\ne".into()), "o\ne".into())
        );
        assert_eq!(
            c(json!({"output": {"exit_code": 2, "stdout": "o"}})),
            (Status::Failure, Some(2), Some("o".into()), "o".into())
        );
        // Not JSON, or no shell fields: the output as it came, a success.
        assert_eq!(
            c(json!({"tool_output": "plain text"})),
            (Status::Success, None, None, "plain text".into())
        );
        assert_eq!(c(json!({"tool_output": {"a": 1}})).3, "{\"a\":1}");
    }

    #[test]
    fn copilot_result_types_and_stated_exit_codes_decide() {
        let c = |raw| settled(Host::Copilot, false, raw);
        let result = |kind: &str, text: &str| json!({"toolResult": {"resultType": kind, "textResultForLlm": text}});
        assert_eq!(
            c(result("success", "done")),
            (Status::Success, None, None, "done".into())
        );
        for (kind, status) in [
            ("failure", Status::Failure),
            ("error", Status::Failure),
            ("denied", Status::Denied),
            ("rejected", Status::Denied),
        ] {
            assert_eq!(
                c(result(kind, "t")),
                (status, None, Some("t".into()), "t".into()),
                "{kind}"
            );
        }
        let text = "Command failed with exit code 127.";
        assert_eq!(
            c(result("success", text)),
            (Status::Failure, Some(127), Some(text.into()), text.into())
        );
        assert_eq!(
            c(result("success", "completed with exit code 0")).0,
            Status::Success
        );
        // A stated code does not soften a failure the host reported.
        assert_eq!(c(result("failure", "with exit code 0")).0, Status::Failure);
        assert_eq!(
            c(json!({"tool_result": {"result_type": "denied", "text_result_for_llm": "no"}})),
            (Status::Denied, None, Some("no".into()), "no".into())
        );
        let f = |raw| settled(Host::Copilot, true, raw);
        assert_eq!(
            f(json!({"error": "boom"})),
            (Status::Failure, None, Some("boom".into()), "boom".into())
        );
        assert_eq!(
            f(json!({"error": "patch rejected by user"})).0,
            Status::Denied
        );
    }

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
        // The last marker counts; a sign only in front.
        assert_eq!(
            stated_after(
                "with exit code 1, then with exit code -1",
                "with exit code "
            ),
            Some(-1)
        );
        assert_eq!(
            stated_after("with exit code 12-3", "with exit code "),
            Some(12)
        );
        assert_eq!(labelled_exit_code("exit code: 4", "Exit Code: "), Some(4));
        assert_eq!(labelled_exit_code("Exit C€", "Exit Code: "), None);
    }
}
