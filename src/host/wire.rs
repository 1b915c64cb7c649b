//! The hook wire protocol: reading one event from stdin, telling the hosts apart, reading
//! it in callus's terms whatever the host's spelling, and writing a `PreToolUse` decision
//! the way each host expects (Claude Code's and Codex's shape here; `super::emit_for`
//! picks a host's shape, the others' are in `answer`).
//!
//! Guarantees: reading is capped (by [`crate::runtime`]); parsing never panics and distinguishes
//! malformed JSON from a non-object; the host is detected from the payload first (Codex sends
//! `turn_id` and no `prompt_id`), because environment markers leak between the hosts' shells;
//! output is built from typed structs, and `allow` is never printed (it would skip the
//! user's own permission prompts).

use std::io::Write;

use serde::Serialize;
use serde_json::Value;

use super::Event;
pub(crate) use super::Host;

pub(crate) use crate::runtime::{PayloadError, read_stdin};

/// One hook event, normalised across hosts. Unknown keys stay reachable in `raw`.
#[derive(Debug, Clone)]
pub struct HookEvent {
    /// Which host sent it.
    pub host: Host,
    /// `hook_event_name` (e.g. `PreToolUse`), empty if absent.
    pub event: String,
    /// `session_id`, empty if absent.
    pub session_id: String,
    /// `tool_name`, empty if absent.
    pub tool_name: String,
    /// `tool_input` (`Null` if absent).
    pub tool_input: Value,
    /// `tool_use_id` (Codex: the call id), if present and non-empty.
    pub tool_use_id: Option<String>,
    /// `cwd`, if present and non-empty.
    pub cwd: Option<String>,
    /// `transcript_path`, if present and non-empty.
    pub transcript_path: Option<String>,
    /// The whole payload object.
    pub raw: serde_json::Map<String, Value>,
}

impl HookEvent {
    /// The event, host-neutral ([`Event::Other`] when absent or unknown).
    #[must_use]
    pub fn kind(&self) -> Event {
        self.host.event(&self.event)
    }

    /// A string field of the raw payload, if present and non-empty.
    #[must_use]
    pub fn str_field(&self, key: &str) -> Option<&str> {
        self.raw
            .get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    }
}

/// Parse a payload. Empty or whitespace-only input is an empty object (no opinion).
pub fn parse(bytes: &[u8]) -> Result<HookEvent, PayloadError> {
    let value: Value = if bytes.iter().all(u8::is_ascii_whitespace) {
        Value::Object(serde_json::Map::new())
    } else {
        serde_json::from_slice(bytes).map_err(|e| PayloadError::Malformed(e.to_string()))?
    };
    let Value::Object(raw) = value else {
        return Err(PayloadError::NotObject);
    };
    let host = super::detect(&raw, |k| std::env::var_os(k).is_some_and(|v| !v.is_empty()));
    Ok(normalise(host, raw))
}

/// One payload in callus's terms, whatever the host's spelling: the event name (or the one
/// its fields imply, Copilot CLI), the session (`session_id`, Copilot's `sessionId`,
/// Cursor's `conversation_id`), the tool by the name rules use, its input (a JSON string,
/// as Cursor's MCP events and Copilot's `toolArgs` may send, is parsed), and a Cursor
/// `beforeShellExecution` command (a string, or an argv array: [`super::call`] reads both)
/// as a `Bash` call.
fn normalise(host: Host, raw: serde_json::Map<String, Value>) -> HookEvent {
    let text = |keys: &[&str]| {
        keys.iter().find_map(|k| {
            raw.get(*k)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        })
    };
    let event = text(&["hook_event_name", "hookEventName"])
        .or_else(|| (host.spec().infer_event)(&raw).map(str::to_string))
        .unwrap_or_default();
    let mut tool_name = text(&["tool_name", "toolName"]).unwrap_or_default();
    let mut tool_input = ["tool_input", "toolArgs"]
        .iter()
        .find_map(|k| raw.get(*k))
        .map_or(Value::Null, |v| match v {
            Value::String(s) => serde_json::from_str::<Value>(s)
                .ok()
                .filter(Value::is_object)
                .unwrap_or_else(|| v.clone()),
            other => other.clone(),
        });
    if tool_name.is_empty()
        && matches!(
            event.as_str(),
            "beforeShellExecution" | "afterShellExecution"
        )
        && let Some(command) = raw.get("command").filter(|c| c.is_string() || c.is_array())
    {
        tool_name = "Bash".into();
        tool_input = serde_json::json!({ "command": command });
    }
    if !tool_name.is_empty() {
        tool_name = host.canonical_tool(&tool_name).into_owned();
    }
    HookEvent {
        host,
        event,
        session_id: text(&["session_id", "sessionId", "conversation_id"]).unwrap_or_default(),
        tool_name,
        tool_input,
        tool_use_id: text(&["tool_use_id", "toolCallId"]),
        cwd: text(&["cwd"]),
        transcript_path: text(&["transcript_path", "transcriptPath"]),
        raw,
    }
}

/// What a `PreToolUse` hook answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Response {
    /// No opinion: exit 0, print nothing.
    Silent,
    /// The call runs; the text reaches the model as additional context.
    Nudge(String),
    /// The call is refused; the model sees the reason.
    Deny(String),
    /// The call is refused with exit 2; the reason goes to stderr.
    Block(String),
}

#[derive(Serialize)]
struct Envelope<'a> {
    #[serde(rename = "hookSpecificOutput")]
    output: Specific<'a>,
}

#[derive(Serialize)]
struct Specific<'a> {
    #[serde(rename = "hookEventName")]
    event: &'a str,
    #[serde(rename = "permissionDecision", skip_serializing_if = "Option::is_none")]
    decision: Option<&'a str>,
    #[serde(
        rename = "permissionDecisionReason",
        skip_serializing_if = "Option::is_none"
    )]
    reason: Option<&'a str>,
    #[serde(rename = "additionalContext", skip_serializing_if = "Option::is_none")]
    context: Option<&'a str>,
}

/// Write `response` in the Claude Code / Codex protocol and return the process exit code
/// (0 or 2).
///
/// Both hosts accept the same shapes (measured: Claude Code 2.1.328, Codex 0.169), so the
/// host only matters to callers that word messages differently.
pub(crate) fn emit(response: &Response, out: &mut impl Write, err: &mut impl Write) -> u8 {
    emit_as("PreToolUse", true, response, out, err)
}

/// [`emit`] naming `event` in `hookEventName`; `context` says whether the event reads
/// `additionalContext` (a nudge is no opinion where it does not).
pub(crate) fn emit_as(
    event: &str,
    context: bool,
    response: &Response,
    out: &mut impl Write,
    err: &mut impl Write,
) -> u8 {
    let specific = match response {
        Response::Silent => return 0,
        Response::Nudge(_) if !context => return 0,
        Response::Block(reason) => {
            // A failed write to stderr cannot change the decision: exit 2 still blocks.
            let _ = writeln!(err, "{reason}");
            return 2;
        }
        Response::Nudge(text) => Specific {
            event,
            decision: None,
            reason: None,
            context: Some(text),
        },
        Response::Deny(reason) => Specific {
            event,
            decision: Some("deny"),
            reason: Some(reason),
            context: None,
        },
    };
    let json = serde_json::to_string(&Envelope { output: specific })
        .unwrap_or_else(|_| String::from("{}"));
    // If stdout is gone the host is gone too; nothing better to do than exit normally.
    let _ = out.write_all(json.as_bytes());
    let _ = out.flush();
    0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::{STDIN_CAP, read_capped};
    use serde_json::json;

    fn obj(v: &Value) -> serde_json::Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn codex_is_detected_by_turn_id_without_prompt_id() {
        let none = |_: &str| false;
        assert_eq!(
            crate::host::detect(&obj(&json!({"turn_id": "t"})), none),
            Host::Codex
        );
        assert_eq!(
            crate::host::detect(&obj(&json!({"turn_id": "t", "prompt_id": "p"})), none),
            Host::ClaudeCode
        );
        assert_eq!(
            crate::host::detect(&obj(&json!({})), none),
            Host::ClaudeCode
        );
        assert_eq!(
            crate::host::detect(
                &obj(&json!({"transcript_path": "/h/.codex/sessions/2026/rollout-x.jsonl"})),
                none
            ),
            Host::Codex
        );
        assert_eq!(
            crate::host::detect(&obj(&json!({})), |k| k == "CODEX_HOME"),
            Host::Codex
        );
        // Payload outranks the environment.
        assert_eq!(
            crate::host::detect(&obj(&json!({"prompt_id": "p"})), |k| k == "CODEX_HOME"),
            Host::ClaudeCode
        );
    }

    #[test]
    fn parse_rejects_non_objects_and_garbage() {
        assert_eq!(parse(b"[1]").unwrap_err(), PayloadError::NotObject);
        assert!(matches!(
            parse(b"{not json"),
            Err(PayloadError::Malformed(_))
        ));
        assert!(parse(b"  \n").unwrap().tool_name.is_empty());
    }

    /// Cursor's `beforeShellExecution` names no tool: its `command`, a string or an argv
    /// array, is a `Bash` call; anything else is no call.
    #[test]
    fn a_cursor_shell_event_is_a_bash_call_with_a_string_or_an_argv() {
        let event = |command: Value| {
            normalise(
                Host::Cursor,
                obj(&json!({"hook_event_name": "beforeShellExecution", "command": command})),
            )
        };
        let e = event(json!("ls"));
        assert_eq!(
            (e.tool_name.as_str(), &e.tool_input),
            ("Bash", &json!({"command": "ls"}))
        );
        let e = event(json!(["bash", "-lc", "ls"]));
        assert_eq!(
            (e.tool_name.as_str(), &e.tool_input),
            ("Bash", &json!({"command": ["bash", "-lc", "ls"]}))
        );
        let e = event(json!(3));
        assert_eq!((e.tool_name.as_str(), &e.tool_input), ("", &Value::Null));
    }

    #[test]
    fn read_capped_refuses_oversize() {
        let big = vec![b' '; (STDIN_CAP + 1) as usize];
        assert_eq!(read_capped(&big[..]).unwrap_err(), PayloadError::TooLarge);
    }

    #[test]
    fn emit_never_prints_allow() {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        assert_eq!(emit(&Response::Deny("no".into()), &mut out, &mut err), 0);
        let v: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny");
        assert_eq!(v["hookSpecificOutput"]["permissionDecisionReason"], "no");
        let (mut out, mut err) = (Vec::new(), Vec::new());
        assert_eq!(emit(&Response::Block("stop".into()), &mut out, &mut err), 2);
        assert!(out.is_empty());
        assert_eq!(String::from_utf8(err).unwrap(), "stop\n");
        let (mut out, mut err) = (Vec::new(), Vec::new());
        assert_eq!(emit(&Response::Silent, &mut out, &mut err), 0);
        assert!(out.is_empty() && err.is_empty());
    }
}
