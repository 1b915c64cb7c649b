//! GitHub Copilot CLI session logs (`~/.copilot/session-state/<session id>/events.jsonl`,
//! under `$COPILOT_HOME` when that is set), as 1.0.102 writes them: one event a line,
//! `{"type", "data", "id", "timestamp", "parentId"}`.
//!
//! The events read (measured on a real 1.0.102 log, `tests/fixtures/record/copilot`):
//! - `session.start`: `data.sessionId`, `data.startTime`, `data.context.cwd`;
//! - `user.message`: a prompt;
//! - `assistant.message`: `data.toolRequests[]` (`toolCallId`, `name`, `arguments`), the
//!   calls the model asked for;
//! - `tool.execution_start`: `data.toolCallId`, `toolName`, `arguments`: the call began;
//! - `tool.execution_complete`: `data.toolCallId`, `success`, `result.content`,
//!   `error.message` and `error.code`, and for the shell tool `shellExecution.exitCode`.
//!
//! Outcome: the shell tool reports `success: true` for a command that exited non-zero, so
//! the exit code decides (`shellExecution.exitCode`; 1.0.10 has none and ends the content
//! with `<exited with exit code N>`, read as the exit code) (`classify::from_exit_code`, then the one outcome model when the
//! row is written); `success: false` is a failure with the error's text, `denied` when its
//! `error.code` is `denied` (a preToolUse hook's deny, "Denied by preToolUse hook: …", as
//! measured) or its text is a refusal (`classify::failed`). A call with no `tool.execution_complete` (the
//! session ended first) stays pending. Every other event (usage records, turn markers, the
//! system prompt) is skipped.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Map, Value};

use super::{Sink, timestamp_ms};
use crate::Result;
use crate::host::Host;
use crate::record::classify::{self, Status};
use crate::record::rows::{self, Call, Session};

/// `source` of the rows this importer writes.
const SOURCE: &str = "copilot-session";

/// Whether an event line is Copilot CLI's: its session start (`copilotVersion`,
/// `producer: copilot-agent`) or a tool execution event with its `toolCallId`.
pub(crate) fn claims(obj: &Map<String, Value>) -> bool {
    let kind = obj.get("type").and_then(Value::as_str).unwrap_or("");
    let Some(data) = obj.get("data").and_then(Value::as_object) else {
        return false;
    };
    match kind {
        "session.start" => {
            data.contains_key("copilotVersion")
                || data.get("producer").and_then(Value::as_str) == Some("copilot-agent")
        }
        "tool.execution_start" | "tool.execution_complete" => data.contains_key("toolCallId"),
        _ => false,
    }
}

/// A call seen requested or started, not yet complete.
struct Open {
    name: String,
    input: Value,
    started: Option<i64>,
}

/// The text a completed call reports: its error's message or its result's content, less
/// the shell tool's `<shellId: N completed with exit code N>` and `<exited with exit code
/// N>` trailers (host boilerplate whose numbers would split one failure into many
/// signatures; [`exited_with`] reads the exit code from the latter).
fn reported_text(data: &Map<String, Value>) -> String {
    let message = data
        .get("error")
        .and_then(|e| e.get("message").or(Some(e)))
        .filter(|v| !v.is_null());
    let content = data.get("result").and_then(|r| r.get("content"));
    let text = match message.or(content) {
        Some(Value::String(s)) => s.clone(),
        Some(v) => rows::value_text(v).into_owned(),
        None => String::new(),
    };
    text.lines()
        .filter(|l| !l.trim_start().starts_with("<shellId:") && exited_with(l).is_none())
        .collect::<Vec<_>>()
        .join("\n")
        .trim_end()
        .to_string()
}

/// The exit code of a 1.0.10 shell result's last line, `<exited with exit code N>`.
fn exited_with(line: &str) -> Option<i64> {
    line.trim()
        .strip_prefix("<exited with exit code ")?
        .strip_suffix('>')?
        .parse()
        .ok()
}

/// The exit code a result's content ends with (`<exited with exit code N>`), if it does.
fn trailer_exit_code(data: &Map<String, Value>) -> Option<i64> {
    let content = data.get("result")?.get("content")?.as_str()?;
    exited_with(content.trim_end().lines().next_back()?)
}

/// Settle `call` from its `tool.execution_complete` data.
fn settle(call: &mut Call, data: &Map<String, Value>) {
    let text = reported_text(data);
    call.exit_code = data
        .get("shellExecution")
        .and_then(|s| s.get("exitCode"))
        .and_then(Value::as_i64)
        .or_else(|| trailer_exit_code(data));
    let succeeded = data.get("success").and_then(Value::as_bool).unwrap_or(true);
    let code = data
        .get("error")
        .and_then(|e| e.get("code"))
        .and_then(Value::as_str);
    call.status = if succeeded {
        call.exit_code
            .map_or(Status::Success, classify::from_exit_code)
    } else if code == Some("denied") {
        Status::Denied
    } else {
        classify::failed(false, &text)
    };
    if call.status == Status::Success {
        call.output = (!text.is_empty()).then_some(text);
    } else {
        call.error = Some(text);
    }
}

/// Import one session log.
pub(crate) fn import(path: &Path, sink: &mut Sink<'_>) -> Result<()> {
    let mut log = Log {
        session: Session {
            host: Host::Copilot.slug(),
            ..Session::default()
        },
        open: HashMap::new(),
        order: Vec::new(),
    };
    sink.lines(path, |sink, _, line| log.line(sink, &line))?;
    log.finish(sink)
}

/// One session log read line by line.
struct Log {
    session: Session,
    /// toolCallId → the call as requested/started; first-seen order for the pending rest.
    open: HashMap<String, Open>,
    order: Vec<String>,
}

impl Log {
    /// One event line.
    fn line(&mut self, sink: &mut Sink<'_>, line: &Map<String, Value>) -> Result<()> {
        let ts = timestamp_ms(line.get("timestamp"));
        self.session.saw(ts);
        let empty = Map::new();
        let data = line
            .get("data")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        match line.get("type").and_then(Value::as_str).unwrap_or("") {
            "session.start" => self.start(data),
            "user.message" => {
                self.session.prompts += 1;
                self.session.last_prompt_ms = self.session.last_prompt_ms.max(ts);
            }
            "assistant.message" => self.requested(data, ts),
            "tool.execution_start" => self.started(data, ts),
            "tool.execution_complete" => return self.completed(sink, data, ts),
            _ => {}
        }
        Ok(())
    }

    /// `session.start`: the session's id, start time and working directory.
    fn start(&mut self, data: &Map<String, Value>) {
        if let Some(id) = text(data, "sessionId") {
            self.session.id = id.to_string();
        }
        self.session.saw(timestamp_ms(data.get("startTime")));
        if let Some(cwd) = data
            .get("context")
            .and_then(|c| c.get("cwd"))
            .and_then(Value::as_str)
        {
            self.session.cwd = Some(cwd.to_string());
        }
    }

    /// `assistant.message`: its `toolRequests` open calls not seen before.
    fn requested(&mut self, data: &Map<String, Value>, ts: Option<i64>) {
        for req in data
            .get("toolRequests")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let Some(id) = req.get("toolCallId").and_then(Value::as_str) else {
                continue;
            };
            if !self.open.contains_key(id) {
                self.order.push(id.to_string());
                self.open.insert(
                    id.to_string(),
                    Open {
                        name: str_of(req, "name"),
                        input: req.get("arguments").cloned().unwrap_or(Value::Null),
                        started: ts,
                    },
                );
            }
        }
    }

    /// `tool.execution_start`: the call opened if it was not, its name, arguments and start
    /// time taken from the event when it has them.
    fn started(&mut self, data: &Map<String, Value>, ts: Option<i64>) {
        let Some(id) = text(data, "toolCallId") else {
            return;
        };
        if !self.open.contains_key(id) {
            self.order.push(id.to_string());
        }
        let entry = self.open.entry(id.to_string()).or_insert(Open {
            name: String::new(),
            input: Value::Null,
            started: None,
        });
        if let Some(name) = text(data, "toolName") {
            entry.name = name.to_string();
        }
        if let Some(args) = data.get("arguments").filter(|a| !a.is_null()) {
            entry.input = args.clone();
        }
        entry.started = ts.or(entry.started);
    }

    /// `tool.execution_complete`: the open call settled and stored; one never opened is
    /// counted unpaired.
    fn completed(
        &mut self,
        sink: &mut Sink<'_>,
        data: &Map<String, Value>,
        ts: Option<i64>,
    ) -> Result<()> {
        let Some(id) = text(data, "toolCallId") else {
            return Ok(());
        };
        let Some(started) = self.open.remove(id) else {
            sink.unpaired();
            return Ok(());
        };
        let mut call = new_call(id, started, &self.session);
        call.ended_ms = ts;
        call.duration_ms = call
            .started_ms
            .zip(call.ended_ms)
            .map(|(s, e)| (e - s).max(0));
        settle(&mut call, data);
        sink.call(&call)
    }

    /// The end of the log: calls that never completed stored pending, then the session.
    fn finish(mut self, sink: &mut Sink<'_>) -> Result<()> {
        for id in self.order {
            if let Some(started) = self.open.remove(&id) {
                sink.call(&new_call(&id, started, &self.session))?;
            }
        }
        sink.session(&self.session)
    }
}

/// A non-empty string field of an event's `data`.
fn text<'a>(data: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    data.get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

fn str_of(v: &Value, key: &str) -> String {
    v.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// A pending call with what the log said of it so far.
fn new_call(id: &str, open: Open, session: &Session) -> Call {
    let tool = Host::Copilot.canonical_tool(&open.name);
    let mut call = Call::new(id, Host::Copilot.slug(), SOURCE, tool, open.input);
    call.session_id = (!session.id.is_empty()).then(|| session.id.clone());
    call.cwd.clone_from(&session.cwd);
    call.started_ms = open.started;
    call
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn settled(data: &Value) -> Call {
        let mut call = Call::new("c", "copilot-cli", SOURCE, "Bash", Value::Null);
        settle(&mut call, data.as_object().unwrap());
        call
    }

    #[test]
    fn a_shell_call_that_exits_non_zero_is_a_failure_despite_success_true() {
        let call = settled(&json!({"success": true, "shellExecution": {"exitCode": 2},
            "result": {"content": "ls: cannot access 'x'\n<shellId: 1 completed with exit code 2>"}}));
        assert_eq!((call.status, call.exit_code), (Status::Failure, Some(2)));
        assert_eq!(call.error.as_deref(), Some("ls: cannot access 'x'"));
        let call = settled(&json!({"success": true, "shellExecution": {"exitCode": 0},
            "result": {"content": "hello\n<shellId: 0 completed with exit code 0>"}}));
        assert_eq!((call.status, call.exit_code), (Status::Success, Some(0)));
        assert_eq!(call.output.as_deref(), Some("hello"));
    }

    #[test]
    fn a_1_0_10_shell_result_ending_in_a_non_zero_exit_is_a_failure() {
        // Copilot CLI 1.0.10: no `shellExecution`, the exit code is the content's last line.
        let call = settled(&json!({"success": true, "result": {"content":
            "Failed to connect to server\nIs it running?\n<exited with exit code 1>"}}));
        assert_eq!((call.status, call.exit_code), (Status::Failure, Some(1)));
        assert_eq!(
            call.error.as_deref(),
            Some("Failed to connect to server\nIs it running?")
        );
        let call = settled(
            &json!({"success": true, "result": {"content": "ok\n<exited with exit code 0>\n"}}),
        );
        assert_eq!((call.status, call.exit_code), (Status::Success, Some(0)));
        assert_eq!(call.output.as_deref(), Some("ok"));
        // Only the last line counts, and only in that exact form.
        let call = settled(&json!({"success": true, "result": {"content":
            "<exited with exit code 3>\nthen more"}}));
        assert_eq!((call.status, call.exit_code), (Status::Success, None));
        assert_eq!(exited_with("<exited with exit code -1>"), Some(-1));
        assert_eq!(exited_with("<exited with exit code x>"), None);
        assert_eq!(exited_with("exited with exit code 1"), None);
    }

    #[test]
    fn a_tool_that_reports_no_success_is_a_failure_or_a_refusal() {
        let call = settled(&json!({"success": false,
            "error": {"message": "Path does not exist", "code": "failure"}}));
        assert_eq!((call.status, call.exit_code), (Status::Failure, None));
        assert_eq!(call.error.as_deref(), Some("Path does not exist"));
        let call = settled(&json!({"success": false,
            "error": {"message": "Denied by preToolUse hook: no", "code": "denied"}}));
        assert_eq!(call.status, Status::Denied);
        let call = settled(&json!({"success": false,
            "error": {"message": "The user rejected this tool call.", "code": "failure"}}));
        assert_eq!(call.status, Status::Denied, "a refusal by its text");
        let call = settled(&json!({"success": true, "result": {"content": "Created file"}}));
        assert_eq!(call.status, Status::Success);
    }

    #[test]
    fn only_copilot_events_are_claimed() {
        let obj = |v: Value| v.as_object().unwrap().clone();
        assert!(claims(&obj(json!({"type": "session.start",
            "data": {"sessionId": "s", "copilotVersion": "1.0.102"}}))));
        assert!(claims(&obj(json!({"type": "tool.execution_complete",
            "data": {"toolCallId": "toolu_1", "success": true}}))));
        assert!(!claims(&obj(
            json!({"type": "user", "sessionId": "s", "uuid": "u"})
        )));
        assert!(!claims(&obj(
            json!({"type": "session.start", "data": {"sessionId": "s"}})
        )));
    }
}
