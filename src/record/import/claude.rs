//! Claude Code session transcripts (`~/.claude/projects/<project>/<session>.jsonl`, and the
//! subagent logs `agent-*.jsonl` beside them or under `<session>/subagents/`).
//!
//! Each `tool_use` block of an `assistant` line is paired with the `tool_result` block of a
//! later `user` line carrying its id. Times come from the lines' `timestamp`s (the call
//! starts at its `tool_use` line and ends at its result). A result that is not an error is a
//! success (an interrupted Bash response is `interrupted`); an error is `denied` when the
//! line records a rejecting `permissionDecision` or a `toolDenialKind`, or when its text is
//! a refusal, `interrupted` when it says so, and a `failure` otherwise, with the exit code
//! from its `Exit code N` first line. A `tool_use` whose result never came is stored
//! `pending`; a result that comes before its `tool_use` line (newer Claude Code writes some
//! that way) is held until the `tool_use` arrives; a result whose `tool_use` is not in the
//! file settles the stored call of that id if there is one, and is counted as unpaired
//! otherwise. A user line that is not a tool
//! result and not a meta line counts as a prompt (its text is never stored). An
//! `environment` attachment gives the session's OS and shell; a Read's structured result
//! its size (`record::facts`).

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Map, Value};

use super::{Sink, timestamp_ms};
use crate::Result;
use crate::record::classify::{self, Status};
use crate::record::rows::{Call, Session};
use crate::record::signature::leading_exit_code;

/// A `tool_use` waiting for its result.
struct Use {
    tool: String,
    input: Value,
    started_ms: Option<i64>,
    session_id: Option<String>,
    cwd: Option<String>,
    agent_id: Option<String>,
}

/// A result seen before its `tool_use`: the block, its line and the line's time.
type Early = (Value, Map<String, Value>, Option<i64>);

/// Import one transcript.
pub(crate) fn import(path: &Path, sink: &mut Sink<'_>) -> Result<()> {
    let mut pairing = Pairing {
        file_agent: path
            .file_stem()
            .and_then(|s| s.to_str())
            .and_then(|s| s.strip_prefix("agent-"))
            .map(str::to_string),
        ..Pairing::default()
    };
    sink.lines(path, |sink, _, line| pairing.line(sink, &line))?;
    pairing.finish(sink)
}

/// One transcript's pairing of `tool_use` blocks with their results, line by line.
#[derive(Default)]
struct Pairing {
    /// The subagent a `agent-<id>.jsonl` file is the log of.
    file_agent: Option<String>,
    /// `tool_use`s waiting for their result, by id, and their ids in file order.
    uses: HashMap<String, Use>,
    order: Vec<String>,
    /// Results seen before their `tool_use`, by id.
    early: HashMap<String, Early>,
    sessions: HashMap<String, Session>,
}

/// What a line says about where its blocks ran.
struct Place {
    ts: Option<i64>,
    sid: Option<String>,
    cwd: Option<String>,
    sidechain: bool,
    agent: Option<String>,
}

impl Pairing {
    /// One line: its session seen, then its `tool_use` or `tool_result` blocks.
    fn line(&mut self, sink: &mut Sink<'_>, line: &Map<String, Value>) -> Result<()> {
        let text = |k: &str| {
            line.get(k)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
        };
        let sidechain = line.get("isSidechain").and_then(Value::as_bool) == Some(true);
        let place = Place {
            ts: timestamp_ms(line.get("timestamp")),
            sid: text("sessionId").map(str::to_string),
            cwd: text("cwd").map(str::to_string),
            sidechain,
            agent: text("agentId")
                .map(str::to_string)
                .or_else(|| self.file_agent.clone().filter(|_| sidechain)),
        };
        if let Some(id) = &place.sid {
            let s = self.sessions.entry(id.clone()).or_insert_with(|| Session {
                id: id.clone(),
                host: "claude-code",
                ..Session::default()
            });
            s.saw(place.ts);
            if s.cwd.is_none() {
                s.cwd.clone_from(&place.cwd);
            }
            environment(s, line);
        }
        let blocks = line
            .get("message")
            .and_then(|m| m.get("content"))
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice);
        match text("type") {
            Some("assistant") => self.assistant(sink, blocks, &place),
            Some("user") => self.user(sink, blocks, line, &place),
            _ => Ok(()),
        }
    }

    /// An assistant line's `tool_use` blocks: each waits for its result, or settles with
    /// the one that came first.
    fn assistant(&mut self, sink: &mut Sink<'_>, blocks: &[Value], place: &Place) -> Result<()> {
        for block in blocks {
            if block.get("type").and_then(Value::as_str) != Some("tool_use") {
                continue;
            }
            let Some(id) = block.get("id").and_then(Value::as_str) else {
                continue;
            };
            let u = Use {
                tool: block
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
                input: block.get("input").cloned().unwrap_or(Value::Null),
                started_ms: place.ts,
                session_id: place.sid.clone(),
                cwd: place.cwd.clone(),
                agent_id: place.agent.clone(),
            };
            // Newer transcripts can write a result before its tool_use line.
            if let Some((result, result_line, result_ts)) = self.early.remove(id) {
                sink.call(&settle(id, u, &result, &result_line, result_ts))?;
                continue;
            }
            if !self.uses.contains_key(id) {
                self.order.push(id.to_string());
            }
            self.uses.insert(id.to_string(), u);
        }
        Ok(())
    }

    /// A user line: its `tool_result` blocks settle their calls (or wait for them); a line
    /// with none, not meta and not a subagent's, is a prompt.
    fn user(
        &mut self,
        sink: &mut Sink<'_>,
        blocks: &[Value],
        line: &Map<String, Value>,
        place: &Place,
    ) -> Result<()> {
        let results: Vec<&Value> = blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
            .collect();
        if results.is_empty() {
            let meta = line.get("isMeta").and_then(Value::as_bool) == Some(true);
            if let Some(s) = place.sid.as_ref().and_then(|id| self.sessions.get_mut(id))
                && !meta
                && !place.sidechain
            {
                s.prompts += 1;
                s.last_prompt_ms = place.ts.or(s.last_prompt_ms);
            }
        }
        for block in results {
            let Some(id) = block.get("tool_use_id").and_then(Value::as_str) else {
                continue;
            };
            let Some(u) = self.uses.remove(id) else {
                // Its tool_use may come later in the file (or be elsewhere).
                self.early
                    .insert(id.to_string(), (block.clone(), line.clone(), place.ts));
                continue;
            };
            sink.call(&settle(id, u, block, line, place.ts))?;
        }
        Ok(())
    }

    /// The end of the file: results whose `tool_use` is elsewhere, calls whose result never
    /// came, and the sessions.
    fn finish(mut self, sink: &mut Sink<'_>) -> Result<()> {
        // Results whose tool_use is not in this file settle a call stored from another one.
        let mut early: Vec<(String, Early)> = self.early.into_iter().collect();
        early.sort_by(|a, b| a.0.cmp(&b.0));
        for (id, (block, line, ts)) in early {
            let Some(tool) = sink.stored_tool(&id)? else {
                sink.unpaired();
                continue;
            };
            let text = |k: &str| {
                line.get(k)
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
            };
            let u = Use {
                tool,
                input: Value::Null,
                started_ms: None,
                session_id: text("sessionId"),
                cwd: text("cwd"),
                agent_id: text("agentId"),
            };
            sink.call(&settle(&id, u, &block, &line, ts))?;
        }
        // Calls whose result never came: pending (or abandoned), never a success.
        for id in self.order {
            if let Some(u) = self.uses.remove(&id) {
                sink.call(&to_call(&id, u))?;
            }
        }
        for s in self.sessions.values() {
            sink.session(s)?;
        }
        Ok(())
    }
}

/// The session's OS and shell from an `environment` attachment line (`snapshot.platform`:
/// `linux`, `darwin`, `win32`; `snapshot.shell`), when the transcript has one.
fn environment(s: &mut Session, line: &Map<String, Value>) {
    let Some(snapshot) = line
        .get("attachment")
        .filter(|a| a.get("type").and_then(Value::as_str) == Some("environment"))
        .and_then(|a| a.get("snapshot"))
    else {
        return;
    };
    let os = match snapshot.get("platform").and_then(Value::as_str) {
        Some("linux") => Some("linux"),
        Some("darwin") => Some("macos"),
        Some("win32") => Some("windows"),
        _ => None,
    };
    if s.os.is_none() {
        s.os = os.map(str::to_string);
    }
    if s.shell.is_none() {
        s.shell = snapshot
            .get("shell")
            .and_then(Value::as_str)
            .and_then(crate::rules::condition::shell_name);
    }
}

fn to_call(id: &str, u: Use) -> Call {
    let mut call = Call::new(id, "claude-code", "claude-transcript", u.tool, u.input);
    call.started_ms = u.started_ms;
    call.session_id = u.session_id;
    call.cwd = u.cwd;
    call.agent_id = u.agent_id;
    call
}

fn settle(id: &str, u: Use, block: &Value, line: &Map<String, Value>, ts: Option<i64>) -> Call {
    let mut call = to_call(id, u);
    call.ended_ms = ts;
    let structured = line.get("toolUseResult");
    let interrupted = structured
        .and_then(|r| r.get("interrupted"))
        .and_then(Value::as_bool)
        == Some(true);
    let is_error = block.get("is_error").and_then(Value::as_bool) == Some(true);
    if !is_error {
        call.status = if interrupted {
            Status::Interrupted
        } else {
            Status::Success
        };
        call.output = Some(result_text(block.get("content")));
        call.facts = crate::record::facts::observed(&call.tool, structured, None)
            .or_else(|| crate::record::facts::of_input(&call.tool, &call.input));
        return call;
    }
    let text = result_text(block.get("content"));
    // A file tool's facts, else what a shell call's input set (its time limit).
    call.facts = crate::record::facts::observed(&call.tool, None, Some(&text))
        .or_else(|| crate::record::facts::of_input(&call.tool, &call.input));
    let rejected = line
        .get("permissionDecision")
        .and_then(|d| d.get("decision"))
        .and_then(Value::as_str)
        == Some("reject")
        || line.contains_key("toolDenialKind");
    call.status = if rejected {
        Status::Denied
    } else {
        classify::failed(interrupted, &text)
    };
    call.exit_code = leading_exit_code(&text);
    call.error = Some(text);
    call
}

/// A `tool_result`'s content as text: a string, or the text blocks joined.
fn result_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}
