//! `callus record` as a hook: one event on stdin → rows in the store; always exit 0.
//!
//! Policy: the recorder never speaks to the agent. It prints nothing on stdout or stderr and
//! exits 0 whatever happens; an unreadable payload, a store that cannot be written or a
//! panic is one line in `$CALLUS_HOME/errors.log` (rotated). Each event costs one store
//! open (migrations only when behind) and one `BEGIN IMMEDIATE` transaction of a few small
//! statements; the connection is not even closed (the exit releases its locks, and it would
//! not checkpoint). Once the WAL passes `store::WAL_TRIM_BYTES` the writer also empties it
//! (`store::trim_wal`), so the next process does not have to re-read it. A store still busy
//! after `store::HOOK_BUSY_TIMEOUT` (or not writable at all) does not lose the event: it
//! goes to the spool (`super::spool`), which the next successful write merges.
//!
//! Gemini CLI's, Cursor's and Copilot CLI's post events are settled by
//! `super::peer_outcome` (their own result fields); the rest below holds for every host.
//!
//! Events (Claude Code and Codex):
//! - `PreToolUse`: the call's row, `pending`, with its start time.
//! - `PostToolUse`: Claude Code sends it on success only (`interrupted` in a Bash response
//!   means interrupted). Codex sends it for failures too, with no status or exit code: the
//!   exit code is read from the rollout at `transcript_path` (`super::rollout_tail`);
//!   when the rollout has nothing, the output text decides: a refusal text is `denied`, a
//!   stated `Process exited with code N` / `Exit code: N` gives the code, an MCP result
//!   with `isError` is a failure, and anything else is a success with no exit code (a later
//!   `record import` of the rollout corrects it).
//! - `PostToolUseFailure`: failure, interruption (`is_interrupt`) or refusal (by its text).
//! - `PermissionDenied`: denied.
//! - A post event whose pre event was missed still creates the row.
//! - `SessionStart`, `SessionEnd`, `Stop`, `SubagentStart`, `SubagentStop`,
//!   `UserPromptSubmit` and any other event: session bookkeeping (prompts are counted, never
//!   stored). On `Stop`, `SubagentStop` and `SessionEnd`, calls of the session still pending
//!   that callus's own guard denied or blocked (per the audit chain) become `denied`: the
//!   host fires no post event for a call a hook refused.

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use serde_json::Value;

use super::classify::{self, Status};
use super::rollout_tail;
use super::rows::{self, Call};
use crate::config::Home;
use crate::digest::sha256_hex;
use crate::host::Event;
use crate::host::wire::{self as hook, HookEvent, Host};
use crate::runtime::log_error;
use crate::{Error, Result};

/// Run the hook: stdin → store. Always returns 0.
#[must_use]
pub(crate) fn run() -> u8 {
    let home = Home::from_env();
    crate::runtime::quiet_panics();
    match crate::runtime::guarded(|| record_stdin(&home)) {
        Ok(Ok(())) => {}
        Ok(Err(msg)) => log_error(&home, &format!("record: {msg}")),
        Err(panic) => log_error(&home, &format!("record: {panic}")),
    }
    0
}

fn record_stdin(home: &Home) -> std::result::Result<(), String> {
    let event = hook::read_stdin()
        .and_then(|b| hook::parse(&b))
        .map_err(|e| e.to_string())?;
    let now = crate::store::now_ms();
    let (text, stored) = record_event(home, &event, now);
    // A halt signal must take effect even when the store cannot be written.
    if let Some(signal) = text.and_then(|t| crate::recuse::scan(home, &event.session_id, &t)) {
        // Every signal, advisory or not, is kept for the human (halts also leave a marker).
        log_signal(home, &event.session_id, &signal.summary());
    }
    stored.map_err(|e| e.to_string())
}

/// Append one RECUSE signal to `$CALLUS_HOME/signals.log` (best effort).
fn log_signal(home: &Home, session_id: &str, summary: &str) {
    use std::io::Write as _;
    let path = home.dir.join("signals.log");
    // The agent can put a FIFO here: opening it must not block the hook.
    if let Ok(mut f) = crate::untrusted::open_append(&path) {
        let line = serde_json::json!({
            "ts": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            "session_id": session_id,
            "signal": crate::redact::redact_capped(summary, 500),
        });
        let _ = writeln!(f, "{line}");
    }
}

/// Record one event at time `now`. Returns the tool result text of post events (for the
/// RECUSE scan, which must run even when the store fails) and whether the write succeeded.
pub(crate) fn record_event(
    home: &Home,
    event: &HookEvent,
    now: i64,
) -> (Option<String>, Result<()>) {
    let host = event.host;
    let observed = observe(event, host, now);
    if observed.is_none() && event.session_id.is_empty() {
        return (None, Ok(())); // nothing to record: do not even open the store
    }
    let db = home.db_path();
    let call = observed.as_ref().map(|o| &o.call);
    let written = crate::store::open_for_hook(&db).and_then(|conn| {
        write(&conn, event, host, call, now)?;
        Ok(conn)
    });
    let stored = match written {
        Ok(conn) => {
            // The store takes writes again: bring in what waited in the spool.
            super::spool::merge(home, &conn, store_event);
            // And the guard's audit records that waited on a busy store (best effort: a
            // problem is logged; this event is stored either way).
            for p in crate::store::audit_spool::merge(home, &conn).1 {
                crate::runtime::log_error(home, &p);
            }
            let trimmed = crate::store::trim_wal(&conn, &db);
            // The write is committed and the process exits next: closing would only free
            // memory and release file locks and mappings that the exit releases anyway (~5%
            // of a hook call). Connections never checkpoint on close, so nothing is skipped.
            std::mem::forget(conn);
            trimmed
        }
        // Never drop the event: it waits in the spool for the next successful write.
        Err(e) => match super::spool::keep(home, event, now) {
            Ok(_) if super::spool::is_busy(&e) => Ok(()),
            Ok(_) => Err(Error::Invalid(format!("{e}; the event waits in the spool"))),
            Err(spool) => Err(Error::Invalid(format!(
                "{e}; and it could not be spooled: {spool}"
            ))),
        },
    };
    (observed.and_then(|o| o.result_text), stored)
}

/// Store `event` (observed at `now`) as the hook would: a spooled event's replay.
pub(super) fn store_event(conn: &Connection, event: &HookEvent, now: i64) -> Result<()> {
    let observed = observe(event, event.host, now);
    write(
        conn,
        event,
        event.host,
        observed.as_ref().map(|o| &o.call),
        now,
    )
}

/// A tool event's call, and the result text to scan.
struct Observed {
    call: Call,
    result_text: Option<String>,
}

fn write(
    conn: &Connection,
    event: &HookEvent,
    host: Host,
    call: Option<&Call>,
    now: i64,
) -> Result<()> {
    let tx = rusqlite::Transaction::new_unchecked(conn, TransactionBehavior::Immediate)
        .map_err(|e| Error::sql("begin record", e))?;
    let session = (!event.session_id.is_empty()).then_some(event.session_id.as_str());
    if let Some(sid) = session {
        touch_session(&tx, event, host, sid, now)?;
        session_event(&tx, event, sid, now)?;
    }
    if let Some(call) = call {
        rows::write_call(&tx, call)?;
    }
    tx.commit().map_err(|e| Error::sql("commit record", e))
}

fn observe(event: &HookEvent, host: Host, now: i64) -> Option<Observed> {
    let kind = event.kind();
    if !kind.is_tool_call() || event.tool_name.is_empty() {
        return None;
    }
    let mut call = started_call(event, host, now);
    let duration = event.raw.get("duration_ms").and_then(Value::as_i64);
    if matches!(kind, Event::PostToolUse | Event::PostToolUseFailure) {
        let failed = kind == Event::PostToolUseFailure;
        if let Some(text) = super::peer_outcome::settle(host, event, failed, &mut call) {
            call.ended_ms = Some(now);
            keep_shell_output(&mut call, &text);
            return Some(Observed {
                call,
                result_text: Some(text),
            });
        }
    }
    let result_text = match kind {
        Event::PreToolUse => {
            call.started_ms = Some(now);
            None
        }
        Event::PostToolUseFailure => {
            call.ended_ms = Some(now);
            call.duration_ms = duration;
            Some(settle_failure(event, &mut call))
        }
        Event::PermissionDenied => {
            call.status = Status::Denied;
            call.ended_ms = Some(now);
            call.error = event
                .str_field("reason")
                .or_else(|| event.str_field("message"))
                .map(str::to_string);
            None
        }
        _ => {
            call.ended_ms = Some(now);
            call.duration_ms = duration;
            Some(settle_response(event, host, &mut call))
        }
    };
    Some(Observed { call, result_text })
}

/// The call an event names, as far as every event tells it: its id (the host's, else a
/// synthetic one), host, tool and input, session, the time limit it set, cwd and agent.
fn started_call(event: &HookEvent, host: Host, now: i64) -> Call {
    let id = event
        .tool_use_id
        .clone()
        .unwrap_or_else(|| synthetic_id(event, now));
    let mut call = Call::new(
        id,
        host.slug(),
        "hook",
        &event.tool_name,
        event.tool_input.clone(),
    );
    call.session_id = (!event.session_id.is_empty()).then(|| event.session_id.clone());
    // The time limit the call set, if any (kept when a file tool's facts are observed later:
    // a call has one or the other).
    call.facts = super::facts::of_input(&call.tool, &call.input);
    call.cwd.clone_from(&event.cwd);
    call.agent_id = event.str_field("agent_id").map(str::to_string);
    call
}

/// Settle a `PostToolUseFailure` the peers' outcome left alone: its status (failed or
/// interrupted), exit code and facts from the error text, which it returns.
fn settle_failure(event: &HookEvent, call: &mut Call) -> String {
    let error = event.str_field("error").unwrap_or("").to_string();
    let interrupt = event
        .raw
        .get("is_interrupt")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    call.status = classify::failed(interrupt, &error);
    call.exit_code = super::signature::leading_exit_code(&error);
    call.facts = super::facts::observed(&call.tool, None, Some(&error)).or(call.facts.take());
    call.error = Some(error.clone());
    error
}

/// Settle a `PostToolUse` from its `tool_response`, as its host reports one; returns the
/// response as text.
fn settle_response(event: &HookEvent, host: Host, call: &mut Call) -> String {
    let response = event.raw.get("tool_response").unwrap_or(&Value::Null);
    let text = response_text(response);
    match host {
        Host::ClaudeCode => {
            let interrupted = response
                .get("interrupted")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            call.status = if interrupted {
                Status::Interrupted
            } else {
                Status::Success
            };
            call.facts =
                super::facts::observed(&call.tool, Some(response), None).or(call.facts.take());
        }
        Host::Codex => codex_outcome(event, response, &text, call),
        // Settled by `peer_outcome` above.
        Host::Gemini | Host::Cursor | Host::Copilot => {}
    }
    keep_shell_output(call, &text);
    text
}

/// Keep a successful shell call's output, for the masked-failure check
/// (`rows::masked_error`), whatever the host. Only a shell call's output can mask a
/// failure: a Read's whole file is not copied on every successful call.
fn keep_shell_output(call: &mut Call, text: &str) {
    if call.status == Status::Success && crate::host::call::is_shell(&call.tool) {
        call.output = Some(text.to_string());
    }
}

/// A tool response as text: Bash `stdout` + `stderr`, a string as is, else compact JSON.
fn response_text(response: &Value) -> String {
    let field = |k: &str| response.get(k).and_then(Value::as_str);
    match (field("stdout"), field("stderr")) {
        (Some(out), Some(err)) if !err.is_empty() => format!("{out}\n{err}"),
        (Some(out), _) => out.to_string(),
        _ => rows::value_text(response).into_owned(),
    }
}

/// Settle a Codex `PostToolUse`: the rollout first, then the output text (module doc).
fn codex_outcome(event: &HookEvent, response: &Value, text: &str, call: &mut Call) {
    let found = event
        .transcript_path
        .as_deref()
        .zip(event.tool_use_id.as_deref())
        .and_then(|(path, id)| rollout_tail::find(std::path::Path::new(path), id));
    let mut code = found.as_ref().and_then(|f| f.exit_code);
    let item_status = found.as_ref().and_then(|f| f.status.clone());
    if let Some(d) = found.as_ref().and_then(|f| f.duration_ms) {
        call.duration_ms = Some(d);
    }
    if code.is_none() && item_status.is_none() && classify::is_refusal(text) {
        call.status = Status::Denied;
        call.error = Some(text.to_string());
        return;
    }
    if code.is_none() && item_status.is_none() {
        code = classify::stated_exit_code(text);
    }
    call.exit_code = code;
    let mcp_error = ["isError", "is_error"]
        .iter()
        .any(|k| response.get(k).and_then(Value::as_bool) == Some(true));
    call.status = match (code, item_status.as_deref()) {
        (Some(c), _) => classify::from_exit_code(c),
        (None, Some("failed")) => Status::Failure,
        _ if mcp_error => Status::Failure,
        _ => Status::Success,
    };
    if call.status != Status::Success {
        call.error = Some(match code {
            Some(c) if !text.starts_with("Exit code") => format!("Exit code {c}\n{text}"),
            _ => text.to_string(),
        });
    }
}

/// A stable-enough id for a tool event that named none.
fn synthetic_id(event: &HookEvent, now: i64) -> String {
    let key = format!(
        "{}\u{1f}{}\u{1f}{}\u{1f}{now}",
        event.session_id, event.tool_name, event.tool_input
    );
    format!("nokey-{}", &sha256_hex(key.as_bytes())[..16])
}

/// Bump the session's last-event time, creating the row the first time it is seen.
fn touch_session(
    conn: &Connection,
    event: &HookEvent,
    host: Host,
    sid: &str,
    now: i64,
) -> Result<()> {
    // The recorder runs where the agent runs: its OS is the session's, and its `SHELL`
    // (inherited from the host) the shell the host runs commands in.
    let os = crate::rules::condition::os_name();
    let shell = std::env::var("SHELL")
        .ok()
        .and_then(|s| crate::rules::condition::shell_name(&s));
    let updated = conn
        .execute(
            "UPDATE sessions SET last_event_ms = MAX(COALESCE(last_event_ms, ?2), ?2),
                 cwd = COALESCE(cwd, ?3), os = COALESCE(os, ?4), shell = COALESCE(shell, ?5)
             WHERE id = ?1",
            params![sid, now, event.cwd, os, shell],
        )
        .map_err(|e| Error::sql("update session", e))?;
    if updated > 0 {
        return Ok(());
    }
    let repo_root = event
        .cwd
        .as_deref()
        .and_then(|c| crate::config::repo_root(std::path::Path::new(c)))
        .map(|p| p.to_string_lossy().into_owned());
    // Inside a subagent the payload's agent_type is the subagent's, not the session's.
    let agent_type = event
        .str_field("agent_id")
        .is_none()
        .then(|| event.str_field("agent_type"))
        .flatten();
    conn.execute(
        "INSERT INTO sessions (id, host, source, cwd, repo_root, started_ms, last_event_ms,
             agent_type, os, shell)
         VALUES (?1, ?2, 'hook', ?3, ?4, ?5, ?5, ?6, ?7, ?8)
         ON CONFLICT (id) DO NOTHING",
        params![
            sid,
            host.slug(),
            event.cwd,
            repo_root,
            now,
            agent_type,
            os,
            shell
        ],
    )
    .map_err(|e| Error::sql("insert session", e))?;
    Ok(())
}

fn session_event(conn: &Connection, event: &HookEvent, sid: &str, now: i64) -> Result<()> {
    let exec = |sql: &str, what: &str| {
        conn.execute(sql, params![sid, now])
            .map(drop)
            .map_err(|e| Error::sql(what.to_string(), e))
    };
    match event.kind() {
        Event::SessionStart => exec(
            "UPDATE sessions SET started_ms = MIN(COALESCE(started_ms, ?2), ?2), ended_ms = NULL
             WHERE id = ?1",
            "start session",
        ),
        Event::UserPromptSubmit => exec(
            "UPDATE sessions SET prompts = prompts + 1, last_prompt_ms = ?2 WHERE id = ?1",
            "count prompt",
        ),
        Event::SessionEnd => {
            exec(
                "UPDATE sessions SET ended_ms = ?2 WHERE id = ?1",
                "end session",
            )?;
            sweep_guard_denials(conn, sid, now)
        }
        Event::Stop | Event::SubagentStop => sweep_guard_denials(conn, sid, now),
        _ => Ok(()),
    }
}

/// Calls of `sid` still pending that callus's guard denied or blocked become `denied`.
fn sweep_guard_denials(conn: &Connection, sid: &str, now: i64) -> Result<()> {
    let pending: Option<i64> = conn
        .query_row(
            "SELECT 1 FROM tool_calls WHERE session_id = ?1 AND status = 'pending' LIMIT 1",
            [sid],
            |r| r.get(0),
        )
        .optional()
        .map_err(|e| Error::sql("look for pending calls", e))?;
    if pending.is_none() {
        return Ok(());
    }
    conn.execute(
        &format!(
            "UPDATE tool_calls SET status = 'denied', ended_ms = COALESCE(ended_ms, ?2),
                 error = COALESCE(error, 'denied by the callus guard')
             WHERE session_id = ?1 AND status = 'pending' AND {}",
            crate::store::audit_query::REFUSED_IN_SESSION
        ),
        params![sid, now],
    )
    .map_err(|e| Error::sql("mark guard denials", e))?;
    Ok(())
}
