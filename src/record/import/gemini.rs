//! Gemini CLI session logs (`~/.gemini/tmp/<project hash>/chats/session-<time>-<id>.jsonl`),
//! as the 0.61.0 `ChatRecordingService` writes them: a first line of metadata
//! (`sessionId`, `projectHash`, `startTime`), `{"$set": …}` lines updating it, and message
//! lines (`id`, `timestamp`, `type` `user`/`gemini`, `toolCalls`) appended again, whole,
//! each time a message changes. The last copy of a message wins.
//!
//! A tool call (`id`, `name`, `args`, `result` = the function-response parts, `status`,
//! `timestamp`) is a success or, when its output states `Exit Code: N` for a non-zero N, a
//! failure with that code; `error` is a failure (`denied` when its text is a refusal);
//! `cancelled` is `interrupted` when its text says the user or host stopped it, else
//! `denied` (the user declined it); a result saying the shell tool's own timeout cut it
//! short is a `failure`.
//! It starts at its message's time and ends at its own. A `user` message that is not a tool
//! response counts as a prompt.

use std::collections::HashMap;
use std::path::Path;

use serde_json::Value;

use super::{Sink, timestamp_ms};
use crate::Result;
use crate::host::Host;
use crate::record::classify::{self, Status};
use crate::record::rows::{self, Call, Session};

/// The text of a tool call's function-response parts.
fn result_text(result: &Value) -> String {
    let mut out = Vec::new();
    for part in result.as_array().into_iter().flatten() {
        let response = part
            .get("functionResponse")
            .and_then(|f| f.get("response"))
            .unwrap_or(part);
        for key in ["output", "error", "llmContent"] {
            if let Some(s) = response.get(key).and_then(Value::as_str) {
                out.push(s.to_string());
            }
        }
    }
    if out.is_empty() && !result.is_null() {
        out.push(rows::value_text(result).into_owned());
    }
    out.join("\n")
}

/// `Exit Code: N` on a line of its own (the shell tool's wording).
fn stated_code(text: &str) -> Option<i64> {
    text.lines().find_map(|l| {
        l.trim()
            .trim_start_matches('[')
            .strip_prefix("Exit Code: ")
            .and_then(|n| n.trim_end_matches(']').trim().parse().ok())
    })
}

fn settle(call: &mut Call, status: &str, text: &str) {
    call.exit_code = stated_code(text);
    call.status = match status {
        "error" => classify::failed(false, text),
        "cancelled" => classify::cancelled(text),
        // The shell tool's own timeout is reported as a result, not an error.
        _ if crate::record::outcome::is_host_timeout(text) => Status::Failure,
        _ => call
            .exit_code
            .map_or(Status::Success, classify::from_exit_code),
    };
    if call.status != Status::Success {
        call.error = Some(text.to_string());
    }
}

/// Import one session log.
pub(crate) fn import(path: &Path, sink: &mut Sink<'_>) -> Result<()> {
    let mut session = Session {
        host: Host::Gemini.slug(),
        ..Session::default()
    };
    // tool call id → (message time, the call's latest record), in first-seen order.
    let mut calls: HashMap<String, (Option<i64>, Value)> = HashMap::new();
    let mut order: Vec<String> = Vec::new();
    let mut prompts: HashMap<String, Option<i64>> = HashMap::new();
    sink.lines(path, |_, _, line| {
        let meta = line.get("$set").and_then(Value::as_object).unwrap_or(&line);
        if let Some(id) = meta.get("sessionId").and_then(Value::as_str)
            && !id.is_empty()
        {
            session.id = id.to_string();
        }
        session.saw(timestamp_ms(meta.get("startTime")));
        let ts = timestamp_ms(line.get("timestamp"));
        session.saw(ts);
        match line.get("type").and_then(Value::as_str) {
            Some("gemini") => {
                for tc in line
                    .get("toolCalls")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let Some(id) = tc.get("id").and_then(Value::as_str) else {
                        continue;
                    };
                    if !calls.contains_key(id) {
                        order.push(id.to_string());
                    }
                    let started = calls.get(id).and_then(|c| c.0).or(ts);
                    calls.insert(id.to_string(), (started, tc.clone()));
                }
            }
            Some("user") => {
                if let Some(id) = line.get("id").and_then(Value::as_str) {
                    prompts.insert(id.to_string(), ts);
                }
            }
            _ => {}
        }
        Ok(())
    })?;
    session.prompts = prompts.len() as i64;
    session.last_prompt_ms = prompts.values().filter_map(|t| *t).max();
    let sid = (!session.id.is_empty()).then(|| session.id.clone());
    for id in order {
        let Some((started, tc)) = calls.remove(&id) else {
            continue;
        };
        let name = tc.get("name").and_then(Value::as_str).unwrap_or("");
        let tool = Host::Gemini.canonical_tool(name);
        let input = tc.get("args").cloned().unwrap_or(Value::Null);
        let mut call = Call::new(id, Host::Gemini.slug(), "gemini-session", tool, input);
        call.session_id.clone_from(&sid);
        call.started_ms = started;
        call.agent_id = tc
            .get("agentId")
            .and_then(Value::as_str)
            .map(str::to_string);
        let status = tc.get("status").and_then(Value::as_str).unwrap_or("");
        if status.is_empty() || matches!(status, "scheduled" | "executing" | "validating") {
            sink.call(&call)?;
            continue;
        }
        call.ended_ms = timestamp_ms(tc.get("timestamp"));
        call.duration_ms = call
            .started_ms
            .zip(call.ended_ms)
            .map(|(s, e)| (e - s).max(0));
        let text = result_text(tc.get("result").unwrap_or(&Value::Null));
        settle(&mut call, status, &text);
        sink.call(&call)?;
    }
    sink.session(&session)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_tool_calls_outcome_comes_from_its_status_and_stated_exit_code() {
        let parts = json!([{"functionResponse": {"id": "c", "name": "run_shell_command",
            "response": {"output": "Output: boom\nExit Code: 2"}}}]);
        let text = result_text(&parts);
        assert_eq!(stated_code(&text), Some(2));
        let mut call = Call::new("c", "gemini-cli", "gemini-session", "Bash", Value::Null);
        settle(&mut call, "success", &text);
        assert_eq!((call.status, call.exit_code), (Status::Failure, Some(2)));
        let mut call = Call::new("d", "gemini-cli", "gemini-session", "Bash", Value::Null);
        settle(&mut call, "success", "Output: fine");
        assert_eq!((call.status, call.exit_code), (Status::Success, None));
        let mut call = Call::new("e", "gemini-cli", "gemini-session", "Bash", Value::Null);
        settle(&mut call, "cancelled", "");
        assert_eq!(call.status, Status::Denied);
        let mut call = Call::new("f", "gemini-cli", "gemini-session", "Bash", Value::Null);
        settle(&mut call, "error", "File not found");
        assert_eq!(call.status, Status::Failure);
    }
}
