//! Codex rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<session>.jsonl`), all three
//! generations in circulation (reference/transcript-formats.md):
//! - 0.40–0.42: tool `shell` with an argv `command`; the output is a JSON string
//!   `{"output", "metadata": {"exit_code", "duration_seconds"}}`. An output with no exit
//!   code is an aborted call (`interrupted`) or a refused one (`denied`).
//! - 0.111–0.114: tool `exec_command` (`cmd`); the exit code is only in the output text,
//!   `Process exited with code N`. A process still running when the call returned
//!   (`Process running with session ID N`) gets its exit code from the `write_stdin` poll
//!   that saw it end.
//! - 0.169: `event_msg` `item_completed` records of type `CommandExecution` (`exit_code`,
//!   `status`; `-1` = killed at turn end → `interrupted`) and `FileChange`.
//!
//! Lines are `{"timestamp", "type", "payload"}`; the oldest files hold bare items, which are
//! read as `response_item` payloads. Shell tools are stored as `Bash` (the name Codex's
//! hooks use, so live rows merge), `apply_patch` as itself, summarised by the files it
//! touches. Exit codes win over everything; then a refusal text (`Command blocked by
//! PreToolUse hook: …`, `rejected by user`) is `denied`; then the item's status. A call with
//! no output at all is `pending`. `encrypted_content` and reasoning are never read.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Map, Value, json};

use super::{Sink, banner, timestamp_ms};
use crate::Result;
use crate::host::call::{argv_text, command_text, is_shell};
use crate::record::classify::{self, Status};
use crate::record::rollout_tail::{duration_ms, output_exit};
use crate::record::rows::{Call, Session, value_text};

/// What the rollout says about one call, gathered across its records.
#[derive(Default)]
struct Pending {
    tool: String,
    input: Value,
    started_ms: Option<i64>,
    ended_ms: Option<i64>,
    duration_ms: Option<i64>,
    exit_code: Option<i64>,
    /// `completed` / `failed` from `item_completed`, or from `patch_apply_end`.
    item_status: Option<String>,
    /// The output text (body only, without unified exec's header lines).
    output: Option<String>,
    /// The output was a 0.40-era JSON envelope.
    envelope: bool,
    cwd: Option<String>,
}

#[derive(Default)]
struct State {
    session: Session,
    calls: HashMap<String, Pending>,
    order: Vec<String>,
    /// `write_stdin` call id → the unified exec session it polls.
    polls: HashMap<String, i64>,
    /// unified exec session id → the call that started it.
    running: HashMap<i64, String>,
    seq: usize,
}

/// Import one rollout.
pub(crate) fn import(path: &Path, sink: &mut Sink<'_>) -> Result<()> {
    let mut st = State::default();
    st.session.host = "codex";
    sink.lines(path, |_, _, line| {
        read_line(&mut st, &line);
        Ok(())
    })?;
    if st.session.id.is_empty() {
        st.session.id = session_from_file_name(path);
    }
    strip_banner(&mut st.calls);
    let sid = st.session.id.clone();
    for id in std::mem::take(&mut st.order) {
        let Some(p) = st.calls.remove(&id) else {
            continue;
        };
        let mut call = to_call(&id, p);
        call.session_id = Some(sid.clone());
        if call.cwd.is_none() {
            call.cwd.clone_from(&st.session.cwd);
        }
        sink.call(&call)?;
    }
    sink.session(&st.session)
}

/// Remove the login shell's banner from the outputs of the session's shell calls: Codex
/// runs each in a login shell, whose profile may print before the command runs.
fn strip_banner(calls: &mut HashMap<String, Pending>) {
    let mut outputs: Vec<banner::Output<'_>> = calls
        .values_mut()
        .filter(|p| p.tool.is_empty() || p.tool == "Bash")
        .filter_map(|p| {
            let command = p.input.get("command").and_then(Value::as_str).unwrap_or("");
            let text = p.output.as_mut()?;
            Some(banner::Output { command, text })
        })
        .collect();
    banner::strip(&mut outputs);
}

fn read_line(st: &mut State, line: &Map<String, Value>) {
    let ts = timestamp_ms(line.get("timestamp"));
    st.session.saw(ts);
    let kind = line.get("type").and_then(Value::as_str).unwrap_or("");
    match (kind, line.get("payload")) {
        ("session_meta", Some(p)) => session_meta(st, p),
        ("turn_context", Some(p)) => {
            if st.session.cwd.is_none() {
                st.session.cwd = str_of(p, "cwd");
            }
            if st.session.sandbox.is_none() {
                st.session.sandbox = sandbox_mode(p.get("sandbox_policy"));
            }
        }
        ("response_item", Some(p)) => response_item(st, p, ts),
        ("event_msg", Some(p)) => event_msg(st, p, ts),
        (_, None) if line.contains_key("instructions") && line.contains_key("id") => {
            // The oldest rollouts open with a bare meta line.
            let meta = Value::Object(line.clone());
            session_meta(st, &meta);
        }
        (_, None) => response_item(st, &Value::Object(line.clone()), ts),
        _ => {}
    }
}

fn str_of(v: &Value, k: &str) -> Option<String> {
    v.get(k)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

fn session_meta(st: &mut State, p: &Value) {
    let meta = p.get("meta").unwrap_or(p);
    if let Some(id) = str_of(meta, "id").or_else(|| str_of(meta, "session_id")) {
        st.session.id = id;
    }
    if let Some(cwd) = str_of(meta, "cwd") {
        st.session.cwd = Some(cwd);
    }
    if let Some(originator) = str_of(meta, "originator") {
        st.session.originator = Some(originator);
    }
    if let Some(ts) = timestamp_ms(meta.get("timestamp")) {
        st.session.saw(Some(ts));
    }
}

/// A turn's `sandbox_policy`: a name (`"read-only"`) or an object naming it by `type` or
/// `mode` (`{"type": "workspace-write", …}`). The first turn's policy is the session's.
fn sandbox_mode(policy: Option<&Value>) -> Option<String> {
    let policy = policy?;
    policy
        .as_str()
        .or_else(|| policy.get("type").and_then(Value::as_str))
        .or_else(|| policy.get("mode").and_then(Value::as_str))
        .map(str::trim)
        .filter(|m| !m.is_empty())
        .map(str::to_ascii_lowercase)
}

fn entry<'a>(st: &'a mut State, id: &str) -> &'a mut Pending {
    if !st.calls.contains_key(id) {
        st.order.push(id.to_string());
    }
    st.calls.entry(id.to_string()).or_default()
}

fn call_id(st: &mut State, p: &Value) -> String {
    str_of(p, "call_id")
        .or_else(|| str_of(p, "id"))
        .unwrap_or_else(|| {
            st.seq += 1;
            format!("codex-noid-{}-{}", st.session.id, st.seq)
        })
}

fn response_item(st: &mut State, p: &Value, ts: Option<i64>) {
    match p.get("type").and_then(Value::as_str).unwrap_or("") {
        "function_call" => {
            let id = call_id(st, p);
            let name = str_of(p, "name").unwrap_or_default();
            let args: Value = match p.get("arguments") {
                Some(Value::String(s)) => serde_json::from_str(s).unwrap_or(Value::Null),
                Some(v) => v.clone(),
                None => Value::Null,
            };
            if name == "write_stdin" {
                if let Some(sid) = args.get("session_id").and_then(Value::as_i64) {
                    st.polls.insert(id, sid);
                }
                return;
            }
            let (tool, input) = tool_input(&name, &args);
            let call = entry(st, &id);
            call.tool = tool;
            call.input = input;
            call.started_ms = call.started_ms.or(ts);
            call.cwd = call.cwd.take().or_else(|| str_of(&args, "workdir"));
        }
        "custom_tool_call" => {
            let id = call_id(st, p);
            let name = str_of(p, "name").unwrap_or_default();
            let body = p.get("input").map(value_text).unwrap_or_default();
            let call = entry(st, &id);
            call.tool = name;
            call.input = json!({ "command": body });
            call.started_ms = call.started_ms.or(ts);
        }
        "local_shell_call" => {
            let id = call_id(st, p);
            let action = p.get("action").unwrap_or(&Value::Null);
            let command = action
                .get("command")
                .and_then(Value::as_array)
                .and_then(|a| argv_text(a))
                .map(std::borrow::Cow::into_owned);
            let call = entry(st, &id);
            call.tool = "Bash".to_string();
            call.input = json!({ "command": command });
            call.started_ms = call.started_ms.or(ts);
            call.cwd = str_of(action, "working_directory");
        }
        "function_call_output" | "custom_tool_call_output" => {
            let Some(id) = str_of(p, "call_id") else {
                return;
            };
            let output = p.get("output").unwrap_or(&Value::Null);
            if let Some(session) = st.polls.get(&id).copied() {
                // A poll of a running process: its end belongs to the call that started it.
                let found = output_exit(output);
                if let (Some(code), Some(owner)) = (found.exit_code, st.running.get(&session)) {
                    let owner = owner.clone();
                    let call = entry(st, &owner);
                    call.exit_code = call.exit_code.or(Some(code));
                    call.ended_ms = ts.or(call.ended_ms);
                }
                return;
            }
            let found = output_exit(output);
            let text = value_text(output);
            let (body, envelope) = output_body(&text);
            if let Some(session) = running_session(&text) {
                st.running.insert(session, id.clone());
            }
            let call = entry(st, &id);
            call.exit_code = call.exit_code.or(found.exit_code);
            call.duration_ms = call.duration_ms.or(found.duration_ms);
            call.ended_ms = call.ended_ms.or(ts);
            call.envelope |= envelope;
            if call.output.is_none() {
                call.output = Some(body);
            }
        }
        _ => {}
    }
}

fn event_msg(st: &mut State, p: &Value, ts: Option<i64>) {
    match p.get("type").and_then(Value::as_str).unwrap_or("") {
        "item_completed" => {
            let Some(item) = p.get("item") else { return };
            let kind = item.get("type").and_then(Value::as_str).unwrap_or("");
            if kind == "UserMessage" {
                prompt(st, ts);
                return;
            }
            if !matches!(kind, "CommandExecution" | "FileChange" | "McpToolCall") {
                return;
            }
            let Some(id) = str_of(item, "id") else { return };
            let started = p.get("started_at_ms").and_then(Value::as_i64);
            let completed = p.get("completed_at_ms").and_then(Value::as_i64);
            let call = entry(st, &id);
            if let Some(code) = item.get("exit_code").and_then(Value::as_i64) {
                call.exit_code = Some(code);
            }
            call.item_status = str_of(item, "status").or(call.item_status.take());
            call.duration_ms = item
                .get("duration")
                .and_then(duration_ms)
                .or_else(|| started.zip(completed).map(|(s, c)| c - s))
                .or(call.duration_ms);
            call.started_ms = started.or(call.started_ms);
            call.ended_ms = completed.or(call.ended_ms).or(ts);
            if let Some(out) = str_of(item, "aggregated_output").or_else(|| str_of(item, "stderr"))
            {
                call.output = Some(out);
            }
            if let Some(cwd) = str_of(item, "cwd") {
                call.cwd = Some(cwd.strip_prefix("file://").unwrap_or(&cwd).to_string());
            }
        }
        "exec_command_begin" => {
            let Some(id) = str_of(p, "call_id") else {
                return;
            };
            let call = entry(st, &id);
            call.cwd = call.cwd.take().or_else(|| str_of(p, "cwd"));
            call.started_ms = call.started_ms.or(ts);
        }
        "exec_command_end" => {
            let Some(id) = str_of(p, "call_id") else {
                return;
            };
            let call = entry(st, &id);
            call.exit_code = p
                .get("exit_code")
                .and_then(Value::as_i64)
                .or(call.exit_code);
            call.duration_ms = p.get("duration").and_then(duration_ms).or(call.duration_ms);
            call.ended_ms = call.ended_ms.or(ts);
            let out = str_of(p, "aggregated_output")
                .or_else(|| str_of(p, "formatted_output"))
                .or_else(|| str_of(p, "stderr"));
            if out.is_some() {
                call.output = out;
            }
        }
        "patch_apply_end" => {
            let Some(id) = str_of(p, "call_id") else {
                return;
            };
            let ok = p.get("success").and_then(Value::as_bool);
            let call = entry(st, &id);
            call.item_status = ok.map(|ok| if ok { "completed" } else { "failed" }.to_string());
            if ok == Some(false) {
                call.output = str_of(p, "stderr").or(call.output.take());
            }
        }
        "user_message" => prompt(st, ts),
        _ => {}
    }
}

fn prompt(st: &mut State, ts: Option<i64>) {
    st.session.prompts += 1;
    st.session.last_prompt_ms = ts.or(st.session.last_prompt_ms);
}

/// The hook-side tool name and input of a function call.
fn tool_input(name: &str, args: &Value) -> (String, Value) {
    match name {
        _ if is_shell(name) => {
            let command = command_text(args).map(std::borrow::Cow::into_owned);
            let mut input = json!({ "command": command });
            // The time limit the call gave the shell tool: a timeout is read against it.
            if let Some(ms) = args.get("timeout_ms") {
                input["timeout_ms"] = ms.clone();
            }
            // An escalated call runs outside the session's sandbox (`facts.unsandboxed`).
            if crate::host::call::unsandboxed(args) {
                input["with_escalated_permissions"] = Value::Bool(true);
            }
            ("Bash".to_string(), input)
        }
        "apply_patch" => {
            let body = args
                .get("input")
                .or_else(|| args.get("patch"))
                .map(value_text)
                .unwrap_or_default()
                .into_owned();
            ("apply_patch".to_string(), json!({ "command": body }))
        }
        _ => (name.to_string(), args.clone()),
    }
}

/// The body of an output text, and whether it was a 0.40-era JSON envelope.
fn output_body(text: &str) -> (String, bool) {
    if text.starts_with('{')
        && let Ok(v) = serde_json::from_str::<Value>(text)
        && v.get("metadata").is_some()
    {
        let body = v.get("output").map(value_text).unwrap_or_default();
        return (body.into_owned(), true);
    }
    let headed = text.starts_with("Chunk ID")
        || text.starts_with("Exit code:")
        || text.starts_with("Wall time");
    if headed && let Some(i) = text.find("\nOutput:\n") {
        return (text[i + "\nOutput:\n".len()..].to_string(), false);
    }
    (text.to_string(), false)
}

/// `N` of `Process running with session ID N`.
fn running_session(text: &str) -> Option<i64> {
    let marker = "Process running with session ID ";
    let rest = &text[text.find(marker)? + marker.len()..];
    let end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    rest[..end].parse().ok()
}

fn to_call(id: &str, p: Pending) -> Call {
    let tool = if p.tool.is_empty() {
        "Bash".to_string()
    } else {
        p.tool
    };
    let facts = crate::record::facts::of_input(&tool, &p.input);
    let mut call = Call::new(id, "codex", "codex-rollout", tool, p.input);
    call.facts = facts;
    call.started_ms = p.started_ms;
    call.ended_ms = p.ended_ms;
    call.duration_ms = p.duration_ms;
    call.exit_code = p.exit_code;
    call.cwd = p.cwd;
    let output = p.output.unwrap_or_default();
    let answered = p.ended_ms.is_some() || p.item_status.is_some() || !output.is_empty();
    call.status = match (p.exit_code, p.item_status.as_deref()) {
        (Some(code), _) => classify::from_exit_code(code),
        _ if classify::is_refusal(&output) => Status::Denied,
        (None, Some("failed")) => Status::Failure,
        (None, Some(_)) => Status::Success,
        _ if !answered => Status::Pending,
        _ if classify::is_interruption(&output) => Status::Interrupted,
        // 0.40 era: an output without an exit code is a call that never ran.
        _ if p.envelope => Status::Denied,
        _ if looks_failed(&output) => Status::Failure,
        _ => Status::Success,
    };
    if call.status == Status::Success {
        call.output = Some(output);
    } else if call.status != Status::Pending {
        call.error = Some(match p.exit_code {
            Some(code) => format!("Exit code {code}\n{output}"),
            None => output,
        });
    }
    call
}

/// An answer with no exit code and no status that still reads as an error
/// (`apply_patch verification failed: …`, `error: …`).
fn looks_failed(output: &str) -> bool {
    let head = output.trim_start().to_ascii_lowercase();
    head.starts_with("error") || head.starts_with("failed") || head.contains("verification failed")
}

/// The session id in a rollout file name (`rollout-2026-11-29T21-19-16-<uuid>.jsonl`).
fn session_from_file_name(path: &Path) -> String {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    if stem.len() >= 36 {
        let tail = &stem[stem.len() - 36..];
        if tail.chars().filter(|c| *c == '-').count() == 4 {
            return tail.to_string();
        }
    }
    format!("codex-{stem}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(lines: &[&str]) -> Vec<Call> {
        let mut st = State::default();
        for l in lines {
            let v: Value = serde_json::from_str(l).unwrap();
            read_line(&mut st, v.as_object().unwrap());
        }
        st.order
            .clone()
            .into_iter()
            .filter_map(|id| st.calls.remove(&id).map(|p| to_call(&id, p)))
            .collect()
    }

    #[test]
    fn an_escalated_shell_call_is_kept_as_unsandboxed() {
        let calls = run(&[
            r#"{"timestamp":"2025-12-06T10:00:00Z","type":"session_meta","payload":{"id":"s1","cwd":"/w"}}"#,
            r#"{"timestamp":"2025-12-06T10:00:01Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"git\",\"fetch\"],\"with_escalated_permissions\":true,\"justification\":\"fetch\"}","call_id":"c1"}}"#,
            r#"{"timestamp":"2025-12-06T10:00:02Z","type":"response_item","payload":{"type":"function_call","name":"shell_command","arguments":"{\"command\":\"git fetch\",\"sandbox_permissions\":\"require_escalated\"}","call_id":"c2"}}"#,
            r#"{"timestamp":"2025-12-06T10:00:03Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"git\",\"fetch\"]}","call_id":"c3"}}"#,
        ]);
        assert_eq!(calls[0].facts, Some(json!({"unsandboxed": true})));
        assert_eq!(calls[1].facts, Some(json!({"unsandboxed": true})));
        assert_eq!(calls[2].facts, None);
    }

    #[test]
    fn generation_040_envelopes() {
        let calls = run(&[
            r#"{"timestamp":"2025-09-01T10:00:00Z","type":"session_meta","payload":{"id":"s1","cwd":"/w"}}"#,
            r#"{"timestamp":"2025-09-01T10:00:01Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"cargo test\"],\"workdir\":\"/w\",\"timeout_ms\":1000}","call_id":"c1"}}"#,
            r#"{"timestamp":"2025-09-01T10:00:03Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"{\"output\":\"error[E0425]: cannot find value\",\"metadata\":{\"exit_code\":101,\"duration_seconds\":1.5}}"}}"#,
            r#"{"timestamp":"2025-09-01T10:00:04Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"rm\",\"-rf\",\"x\"]}","call_id":"c2"}}"#,
            r#"{"timestamp":"2025-09-01T10:00:05Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c2","output":"exec command rejected by user"}}"#,
            r#"{"timestamp":"2025-09-01T10:00:06Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"ls\"]}","call_id":"c3"}}"#,
        ]);
        assert_eq!(calls.len(), 3);
        assert_eq!(calls[0].tool, "Bash");
        assert_eq!(calls[0].input["command"], "cargo test");
        assert_eq!(calls[0].input["timeout_ms"], 1000);
        assert_eq!(calls[0].facts, Some(json!({"timeout_ms": 1000})));
        assert_eq!(calls[2].facts, None);
        assert_eq!(
            (calls[0].status, calls[0].exit_code),
            (Status::Failure, Some(101))
        );
        assert_eq!(calls[0].duration_ms, Some(1500));
        assert!(
            calls[0]
                .error
                .as_deref()
                .unwrap()
                .starts_with("Exit code 101\nerror[E0425]")
        );
        assert_eq!(calls[1].status, Status::Denied);
        assert_eq!(calls[2].status, Status::Pending);
    }

    #[test]
    fn generation_0111_text_exit_codes_and_polls() {
        let calls = run(&[
            r#"{"timestamp":"2026-03-01T10:00:00Z","type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"npm test\"}","call_id":"c1"}}"#,
            r#"{"timestamp":"2026-03-01T10:00:01Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"Chunk ID: ab\nWall time: 0.5 seconds\nProcess exited with code 1\nOriginal token count: 3\nOutput:\nnpm ERR! missing script: test\n"}}"#,
            r#"{"timestamp":"2026-03-01T10:00:02Z","type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"sleep 5 && false\"}","call_id":"c2"}}"#,
            r#"{"timestamp":"2026-03-01T10:00:03Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c2","output":"Chunk ID: cd\nWall time: 0.25 seconds\nProcess running with session ID 7\nOriginal token count: 0\nOutput:\n"}}"#,
            r#"{"timestamp":"2026-03-01T10:00:04Z","type":"response_item","payload":{"type":"function_call","name":"write_stdin","arguments":"{\"session_id\":7,\"chars\":\"\"}","call_id":"p1"}}"#,
            r#"{"timestamp":"2026-03-01T10:00:08Z","type":"response_item","payload":{"type":"function_call_output","call_id":"p1","output":"Chunk ID: ef\nWall time: 4.0 seconds\nProcess exited with code 1\nOriginal token count: 0\nOutput:\n"}}"#,
        ]);
        assert_eq!(calls.len(), 2, "the poll is not a call of its own");
        assert_eq!(
            (calls[0].status, calls[0].exit_code),
            (Status::Failure, Some(1))
        );
        assert_eq!(
            calls[0].error.as_deref(),
            Some("Exit code 1\nnpm ERR! missing script: test\n")
        );
        assert_eq!(
            (calls[1].status, calls[1].exit_code),
            (Status::Failure, Some(1))
        );
    }

    #[test]
    fn generation_0169_item_completed() {
        let calls = run(&[
            r#"{"timestamp":"2026-11-29T21:19:17.219Z","type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"ls /nope\"}","call_id":"c5"}}"#,
            r#"{"timestamp":"2026-11-29T21:19:17.292Z","type":"event_msg","payload":{"type":"item_completed","item":{"type":"CommandExecution","id":"c5","cwd":"file:///w","status":"failed","aggregated_output":"ls: cannot access '/nope'\n","exit_code":2,"duration":{"secs":0,"nanos":7802}},"started_at_ms":1795987157291,"completed_at_ms":1795987157292}}"#,
            r#"{"timestamp":"2026-11-29T21:19:17.341Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c5","output":"Chunk ID: 6\nWall time: 0.0000 seconds\nProcess exited with code 2\nOriginal token count: 18\nOutput:\nls: cannot access '/nope'\n"}}"#,
            r#"{"timestamp":"2026-11-29T21:19:18Z","type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"sleep 99\"}","call_id":"c6"}}"#,
            r#"{"timestamp":"2026-11-29T21:19:19Z","type":"event_msg","payload":{"type":"item_completed","item":{"type":"CommandExecution","id":"c6","status":"failed","exit_code":-1}}}"#,
            r#"{"timestamp":"2026-11-29T21:19:20Z","type":"response_item","payload":{"type":"custom_tool_call","name":"apply_patch","call_id":"c7","input":"*** Begin Patch\n*** Add File: m.txt\n+hi\n*** End Patch\n"}}"#,
            r#"{"timestamp":"2026-11-29T21:19:21Z","type":"event_msg","payload":{"type":"item_completed","item":{"type":"FileChange","id":"c7","status":"completed"}}}"#,
        ]);
        assert_eq!(
            (calls[0].status, calls[0].exit_code),
            (Status::Failure, Some(2))
        );
        assert_eq!(calls[0].cwd.as_deref(), Some("/w"));
        assert_eq!(calls[0].duration_ms, Some(0));
        assert_eq!(calls[1].status, Status::Interrupted);
        assert_eq!(
            (calls[2].tool.as_str(), calls[2].status),
            ("apply_patch", Status::Success)
        );
    }

    #[test]
    fn session_id_from_file_name() {
        let p =
            Path::new("/x/rollout-2026-11-29T21-19-16-01a2292d-2dbd-7210-9173-3d6fbc403574.jsonl");
        assert_eq!(
            session_from_file_name(p),
            "01a2292d-2dbd-7210-9173-3d6fbc403574"
        );
        assert_eq!(session_from_file_name(Path::new("odd.jsonl")), "codex-odd");
    }
}
