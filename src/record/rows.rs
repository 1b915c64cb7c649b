//! The rows the recorder writes, and the one place raw text becomes stored text.
//!
//! A [`Call`] is what a hook or an import observed, raw. [`write_call`] redacts its command
//! (or input summary) and error, caps them, computes the shape, the blamed segment (a failed
//! shell call's) and error signature from the redacted text, and stores one `tool_calls` row
//! keyed by `tool_use_id`. Writers merge rather than overwrite, so a hook row, a transcript
//! row and a rollout row of the same call become one row whatever order they arrive in: a
//! new id is one plain `INSERT`; a known one is read, [`merge::changes`] decides in Rust
//! which columns the new observation replaces (the rules are in `merge`), and a short
//! `UPDATE` sets just those, or nothing.
//! Small statements keep a hook call cheap: `SQLite` parses and compiles every statement a
//! short-lived process runs, and one large upsert cost more than the rest of the call.

use std::borrow::Cow;
use std::fmt::Write as _;

use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;

use super::classify::Status;
use super::merge::{self, Row};
use super::{outcome, shape, signature, summary};
use crate::redact;
use crate::{Error, Result};

/// Largest stored error, in bytes (after redaction).
pub(crate) const ERROR_CAP: usize = 4 * 1024;
/// Largest stored command or input summary, in bytes (after redaction).
pub(crate) const COMMAND_CAP: usize = 8 * 1024;
/// Raw text beyond this is not even looked at (cut at a whitespace boundary first, so a
/// secret is never split before redaction sees it).
const RAW_CAP: usize = 64 * 1024;

/// One tool call as observed, before redaction.
#[derive(Debug, Clone)]
pub(crate) struct Call {
    /// The host's call id (`toolu_…`, `call_…`), or a synthetic stable id for traces.
    pub(crate) tool_use_id: String,
    /// The session, when known.
    pub(crate) session_id: Option<String>,
    /// `claude-code`, `codex` or `trace`.
    pub(crate) host: &'static str,
    /// `hook`, `claude-transcript`, `codex-rollout` or `trace`.
    pub(crate) source: &'static str,
    /// Tool name as the hooks see it (`Bash`, `Read`, `apply_patch`, `mcp__s__t`).
    pub(crate) tool: String,
    /// The tool input (`{"command": …}` for shell calls).
    pub(crate) input: Value,
    /// The outcome.
    pub(crate) status: Status,
    /// Unix ms.
    pub(crate) started_ms: Option<i64>,
    /// Unix ms.
    pub(crate) ended_ms: Option<i64>,
    /// Milliseconds.
    pub(crate) duration_ms: Option<i64>,
    /// Raw error text (kept only when the call did not succeed).
    pub(crate) error: Option<String>,
    /// Raw output of a successful call: only a line that reads as the error of one of the
    /// command's programs is kept of it (a `masked` failure, see `outcome`).
    pub(crate) output: Option<String>,
    /// The exit code, when known.
    pub(crate) exit_code: Option<i64>,
    /// The call's working directory.
    pub(crate) cwd: Option<String>,
    /// The subagent that made the call.
    pub(crate) agent_id: Option<String>,
    /// What the host observed about the call (`super::facts`), as JSON.
    pub(crate) facts: Option<Value>,
}

impl Call {
    /// A pending call with only its identity filled in.
    pub(crate) fn new(
        tool_use_id: impl Into<String>,
        host: &'static str,
        source: &'static str,
        tool: impl Into<String>,
        input: Value,
    ) -> Self {
        Call {
            tool_use_id: tool_use_id.into(),
            session_id: None,
            host,
            source,
            tool: tool.into(),
            input,
            status: Status::Pending,
            started_ms: None,
            ended_ms: None,
            duration_ms: None,
            error: None,
            output: None,
            exit_code: None,
            cwd: None,
            agent_id: None,
            facts: None,
        }
    }
}

const INSERT_CALL: &str = "INSERT INTO tool_calls (tool_use_id, session_id, host, source, tool,
    status, started_ms, ended_ms, duration_ms, command, input_sha256, shape, error, signature,
    exit_code, cwd, agent_id, facts, blamed)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)
ON CONFLICT (tool_use_id) DO NOTHING";

/// Redact, shape, sign and store `call` (one-off; bulk writers keep a [`CallWriter`]).
/// The caller holds a write transaction, so the read-merge-write is atomic.
pub(crate) fn write_call(conn: &Connection, call: &Call) -> Result<()> {
    // A hook's post event usually finds the row its pre event wrote: look before inserting.
    let mut writer = CallWriter::new(conn);
    writer.insert_first = false;
    writer.write(call).map(drop)
}

/// Stores calls, merging each into the row of its `tool_use_id` (see [`merge`]). Its
/// statements are prepared when first needed and kept, so a hook that inserts one row
/// prepares one small statement and a bulk import prepares each once.
pub(crate) struct CallWriter<'c> {
    conn: &'c Connection,
    select: Option<rusqlite::Statement<'c>>,
    insert: Option<rusqlite::Statement<'c>>,
    /// Try the insert before looking the id up: right when most ids are new (an import).
    insert_first: bool,
}

impl<'c> CallWriter<'c> {
    /// A writer on `conn` (which should be inside a write transaction) for calls that are
    /// mostly new.
    pub(crate) fn new(conn: &'c Connection) -> Self {
        CallWriter {
            conn,
            select: None,
            insert: None,
            insert_first: true,
        }
    }

    /// Redact, shape, sign and store `call`, merged into any row already stored for it;
    /// the outcome class it was stored with (refined by [`outcome::refine`]).
    pub(crate) fn write(&mut self, call: &Call) -> Result<Status> {
        let row = stored_form(self.conn, call);
        let status = row.status;
        // A pending call is usually the first sight of its id: try the insert alone.
        if (self.insert_first || row.status == Status::Pending) && self.insert(&row)? {
            return Ok(status);
        }
        match self.stored(row.tool_use_id)? {
            None => self.insert(&row).map(drop)?,
            Some(stored) => self.update(row.tool_use_id, &merge::changes(&stored, &row))?,
        }
        Ok(status)
    }

    /// Insert `row` unless its id is stored; whether it was inserted.
    fn insert(&mut self, row: &Row<'_>) -> Result<bool> {
        let stmt = match &mut self.insert {
            Some(stmt) => stmt,
            slot => slot.insert(
                self.conn
                    .prepare(INSERT_CALL)
                    .map_err(|e| Error::sql("prepare tool call insert", e))?,
            ),
        };
        let inserted = stmt
            .execute(params![
                row.tool_use_id,
                row.session_id,
                row.host,
                row.source,
                row.tool,
                row.status.as_str(),
                row.started_ms,
                row.ended_ms,
                row.duration_ms,
                row.command,
                row.input_sha256,
                row.shape,
                row.error,
                row.signature,
                row.exit_code,
                row.cwd,
                row.agent_id,
                row.facts,
                row.blamed,
            ])
            .map_err(|e| Error::sql("write tool call", e))?;
        Ok(inserted > 0)
    }

    /// What the merge needs of the row stored for `id`, if any.
    fn stored(&mut self, id: &str) -> Result<Option<merge::Stored>> {
        let stmt = match &mut self.select {
            Some(stmt) => stmt,
            slot => slot.insert(
                self.conn
                    .prepare(merge::SELECT_STORED)
                    .map_err(|e| Error::sql("prepare tool call lookup", e))?,
            ),
        };
        stmt.query_row([id], merge::Stored::from_row)
            .optional()
            .map_err(|e| Error::sql("read tool call", e))
    }

    /// Set just the `changes` columns of the row of `id` (nothing when there are none).
    fn update(&self, id: &str, changes: &[(&'static str, SqlValue)]) -> Result<()> {
        if changes.is_empty() {
            return Ok(());
        }
        let mut sql = String::from("UPDATE tool_calls SET ");
        for (i, (column, _)) in changes.iter().enumerate() {
            if i > 0 {
                sql.push_str(", ");
            }
            let _ = write!(sql, "{column} = ?{}", i + 2);
        }
        sql.push_str(" WHERE tool_use_id = ?1");
        // Cached: a bulk import sees the same few column sets again and again.
        let mut stmt = self
            .conn
            .prepare_cached(&sql)
            .map_err(|e| Error::sql("prepare tool call update", e))?;
        let values = std::iter::once(SqlValue::Text(id.to_string()))
            .chain(changes.iter().map(|(_, v)| v.clone()));
        stmt.execute(rusqlite::params_from_iter(values))
            .map_err(|e| Error::sql("update tool call", e))?;
        Ok(())
    }
}

/// `call` as it would be stored new: command (or input summary) and error redacted and
/// capped, shape and signature computed from the redacted text, times completed.
fn stored_form<'a>(conn: &Connection, call: &'a Call) -> Row<'a> {
    let command = summary::summary(&call.tool, &call.input)
        .map(|c| redact::redact_capped_bytes(raw_cut(&c), COMMAND_CAP));
    let settled_badly = matches!(
        call.status,
        Status::Failure | Status::Denied | Status::Interrupted | Status::Answer | Status::Harness
    );
    let error = call
        .error
        .as_deref()
        .filter(|e| settled_badly && !e.trim().is_empty())
        .map(|e| redact::redact_capped_bytes(raw_cut(e), ERROR_CAP));
    let shape_command = if crate::host::call::is_shell(&call.tool) {
        command.as_deref()
    } else {
        None
    };
    let error = error.or_else(|| masked_error(call, shape_command));
    let signature = error.as_deref().and_then(signature::signature);
    let status = outcome::refine(
        &call.tool,
        shape_command,
        call.status,
        call.exit_code,
        error.as_deref().unwrap_or_default(),
    );
    // The segment the shape was taken from, for a call that failed (or printed a masked
    // failure): one split and one blame give both, so the two always agree.
    let failed = status == Status::Failure || error.is_some() && status == Status::Success;
    let (shape, blamed) =
        shape::shape_and_blamed(&call.tool, shape_command, error.as_deref(), failed);
    // Keyed, over the redacted text (never a plain SHA-256 of a secret): `crate::digest`.
    let input_sha256 = summary::digest_text(&call.tool, &call.input)
        .and_then(|t| crate::digest::keyed_for(conn, raw_cut(&t)));
    let started_ms = call
        .started_ms
        .or_else(|| call.ended_ms.zip(call.duration_ms).map(|(end, d)| end - d));
    let duration_ms = call.duration_ms.or_else(|| {
        call.started_ms
            .zip(call.ended_ms)
            .map(|(s, e)| (e - s).max(0))
    });
    Row {
        tool_use_id: &call.tool_use_id,
        session_id: call.session_id.as_deref(),
        host: call.host,
        source: call.source,
        tool: &call.tool,
        status,
        started_ms,
        ended_ms: call.ended_ms,
        duration_ms,
        command,
        input_sha256,
        shape,
        error,
        signature,
        exit_code: call.exit_code,
        cwd: call.cwd.as_deref(),
        agent_id: call.agent_id.as_deref(),
        facts: call.facts.as_ref().map(Value::to_string),
        blamed,
    }
}

/// A successful shell call's output line that reads as the error of one of its programs
/// (redacted and capped), kept so derive can tell a masked failure (`sudo … | head`).
fn masked_error(call: &Call, command: Option<&str>) -> Option<String> {
    if call.status != Status::Success {
        return None;
    }
    let output = call.output.as_deref().filter(|o| !o.trim().is_empty())?;
    let split = crate::shell::split(command?);
    let programs: Vec<String> = split
        .segments
        .iter()
        .filter_map(|s| crate::shell::program::program(s).map(|p| p.head.to_ascii_lowercase()))
        .collect();
    if programs.is_empty() {
        return None;
    }
    let line = super::error_line::masked_line(raw_cut(output), &programs)?;
    Some(redact::redact_capped_bytes(&line, ERROR_CAP))
}

/// Cut raw text to [`RAW_CAP`] bytes at a whitespace boundary, so redaction never sees half
/// a secret.
fn raw_cut(text: &str) -> &str {
    if text.len() <= RAW_CAP {
        return text;
    }
    let mut end = RAW_CAP;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let head = &text[..end];
    head.rfind(char::is_whitespace).map_or(head, |i| &head[..i])
}

/// One session as an import saw it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Session {
    /// The session id.
    pub(crate) id: String,
    /// `claude-code`, `codex` or `trace`.
    pub(crate) host: &'static str,
    /// The working directory.
    pub(crate) cwd: Option<String>,
    /// First event, Unix ms.
    pub(crate) started_ms: Option<i64>,
    /// Last event, Unix ms.
    pub(crate) last_event_ms: Option<i64>,
    /// Prompts submitted.
    pub(crate) prompts: i64,
    /// Last prompt, Unix ms.
    pub(crate) last_prompt_ms: Option<i64>,
    /// The agent type, for sessions run as an agent.
    pub(crate) agent_type: Option<String>,
    /// `linux`, `macos` or `windows`, when the history reveals it (else from the cwd).
    pub(crate) os: Option<String>,
    /// The shell the host runs commands in.
    pub(crate) shell: Option<String>,
    /// The sandbox the host reports (`read-only`, `workspace-write`, …).
    pub(crate) sandbox: Option<String>,
    /// The client that started the session, as the host reports it.
    pub(crate) originator: Option<String>,
}

impl Session {
    /// Widen the time span to include `ms`.
    pub(crate) fn saw(&mut self, ms: Option<i64>) {
        if let Some(ms) = ms {
            self.started_ms = Some(self.started_ms.map_or(ms, |s| s.min(ms)));
            self.last_event_ms = Some(self.last_event_ms.map_or(ms, |l| l.max(ms)));
        }
    }
}

/// Merge an imported session: the span widens, counts never shrink, known values stay.
pub(crate) fn upsert_session(conn: &Connection, s: &Session) -> Result<()> {
    let repo_root = s
        .cwd
        .as_deref()
        .and_then(|c| crate::config::repo_root(std::path::Path::new(c)))
        .map(|p| p.to_string_lossy().into_owned());
    let mut stmt = conn
        .prepare_cached(
            "INSERT INTO sessions (id, host, source, cwd, repo_root, started_ms, last_event_ms,
                 prompts, last_prompt_ms, agent_type, os, shell, sandbox, originator)
             VALUES (?1, ?2, 'import', ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
             ON CONFLICT (id) DO UPDATE SET
                 cwd = COALESCE(sessions.cwd, excluded.cwd),
                 repo_root = COALESCE(sessions.repo_root, excluded.repo_root),
                 started_ms = MIN(COALESCE(sessions.started_ms, excluded.started_ms),
                                  COALESCE(excluded.started_ms, sessions.started_ms)),
                 last_event_ms = MAX(COALESCE(sessions.last_event_ms, excluded.last_event_ms),
                                     COALESCE(excluded.last_event_ms, sessions.last_event_ms)),
                 prompts = MAX(sessions.prompts, excluded.prompts),
                 last_prompt_ms = MAX(COALESCE(sessions.last_prompt_ms, excluded.last_prompt_ms),
                                      COALESCE(excluded.last_prompt_ms, sessions.last_prompt_ms)),
                 agent_type = COALESCE(sessions.agent_type, excluded.agent_type),
                 os = COALESCE(sessions.os, excluded.os),
                 shell = COALESCE(sessions.shell, excluded.shell),
                 sandbox = COALESCE(sessions.sandbox, excluded.sandbox),
                 originator = COALESCE(sessions.originator, excluded.originator)",
        )
        .map_err(|e| Error::sql("prepare session upsert", e))?;
    stmt.execute(params![
        s.id,
        s.host,
        s.cwd,
        repo_root,
        s.started_ms,
        s.last_event_ms,
        s.prompts,
        s.last_prompt_ms,
        s.agent_type,
        s.os.as_deref().or_else(|| {
            s.cwd
                .as_deref()
                .and_then(crate::rules::condition::os_of_cwd)
        }),
        s.shell,
        s.sandbox,
        s.originator,
    ])
    .map_err(|e| Error::sql("write session", e))?;
    Ok(())
}

/// The raw text a result carried, as one string: a JSON string as is, anything else as
/// compact JSON.
#[must_use]
pub(crate) fn value_text(v: &Value) -> Cow<'_, str> {
    match v {
        Value::String(s) => Cow::Borrowed(s.as_str()),
        Value::Null => Cow::Borrowed(""),
        other => Cow::Owned(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn row(conn: &Connection, id: &str) -> (String, Option<i64>, Option<String>, Option<String>) {
        conn.query_row(
            "SELECT status, exit_code, shape, signature FROM tool_calls WHERE tool_use_id = ?1",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .unwrap()
    }

    #[test]
    fn pending_then_failure_then_pending_again_merges() {
        let conn = crate::store::open_in_memory().unwrap();
        let mut c = Call::new(
            "t1",
            "claude-code",
            "hook",
            "Bash",
            json!({"command": "cd x && psql -c 1 && ls ok"}),
        );
        c.started_ms = Some(1000);
        write_call(&conn, &c).unwrap();
        assert_eq!(row(&conn, "t1").0, "pending");
        assert_eq!(row(&conn, "t1").2.as_deref(), Some("ls"));

        c.status = Status::Failure;
        c.started_ms = None;
        c.ended_ms = Some(1500);
        c.error = Some("Exit code 2\npsql: error: connection refused".into());
        c.exit_code = Some(2);
        write_call(&conn, &c).unwrap();
        let (status, code, shape, sig) = row(&conn, "t1");
        assert_eq!((status.as_str(), code), ("failure", Some(2)));
        assert_eq!(shape.as_deref(), Some("psql"));
        assert_eq!(
            sig.as_deref(),
            Some("exit code 2 psql: error: connection refused")
        );
        let duration: i64 = conn
            .query_row("SELECT duration_ms FROM tool_calls", [], |r| r.get(0))
            .unwrap();
        assert_eq!(duration, 500);

        // A late pending (e.g. a re-imported tool_use without its result) changes nothing.
        let late = Call::new(
            "t1",
            "claude-code",
            "claude-transcript",
            "Bash",
            c.input.clone(),
        );
        write_call(&conn, &late).unwrap();
        assert_eq!(row(&conn, "t1").0, "failure");
    }

    #[test]
    fn an_exit_code_corrects_a_guessed_success() {
        let conn = crate::store::open_in_memory().unwrap();
        let mut c = Call::new("c1", "codex", "hook", "Bash", json!({"command": "false"}));
        c.status = Status::Success;
        write_call(&conn, &c).unwrap();
        c.status = Status::Failure;
        c.exit_code = Some(1);
        c.error = Some("Exit code 1\n".into());
        write_call(&conn, &c).unwrap();
        assert_eq!(row(&conn, "c1").0, "failure");
        // But a known outcome is not overwritten by another source's.
        c.status = Status::Success;
        c.exit_code = Some(0);
        write_call(&conn, &c).unwrap();
        assert_eq!(row(&conn, "c1").0, "failure");
    }

    #[test]
    fn stored_text_is_redacted_and_capped() {
        let conn = crate::store::open_in_memory().unwrap();
        let secret = "sk-abcdefghijklmnopqrstuvwxyz0123";
        let mut c = Call::new(
            "s1",
            "claude-code",
            "hook",
            "Bash",
            json!({"command": format!("OPENAI_API_KEY={secret} python3 x.py")}),
        );
        c.status = Status::Failure;
        c.error = Some(format!(
            "Exit code 1\nbad key {secret}\n{}",
            "x".repeat(20_000)
        ));
        write_call(&conn, &c).unwrap();
        let (cmd, err): (String, String) = conn
            .query_row("SELECT command, error FROM tool_calls", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .unwrap();
        assert!(!cmd.contains(secret) && !err.contains(secret));
        assert!(err.len() <= ERROR_CAP);
    }

    /// The single SQL upsert the writer replaced, kept as the oracle its merge must match.
    const ORACLE_UPSERT: &str = "
    INSERT INTO tool_calls (tool_use_id, session_id, host, source, tool, status, started_ms,
        ended_ms, duration_ms, command, input_sha256, shape, error, signature, exit_code, cwd,
        agent_id, blamed)
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)
    ON CONFLICT (tool_use_id) DO UPDATE SET
        session_id = COALESCE(tool_calls.session_id, excluded.session_id),
        tool = CASE WHEN tool_calls.tool = '' THEN excluded.tool ELSE tool_calls.tool END,
        status = CASE WHEN TAKE THEN excluded.status ELSE tool_calls.status END,
        error = CASE WHEN TAKE THEN excluded.error ELSE tool_calls.error END,
        signature = CASE WHEN TAKE THEN excluded.signature ELSE tool_calls.signature END,
        exit_code = CASE WHEN TAKE THEN excluded.exit_code ELSE tool_calls.exit_code END,
        shape = CASE WHEN TAKE THEN COALESCE(excluded.shape, tool_calls.shape)
                     ELSE COALESCE(tool_calls.shape, excluded.shape) END,
        blamed = CASE WHEN TAKE THEN COALESCE(excluded.blamed, tool_calls.blamed)
                      ELSE COALESCE(tool_calls.blamed, excluded.blamed) END,
        ended_ms = CASE WHEN TAKE THEN COALESCE(excluded.ended_ms, tool_calls.ended_ms)
                        ELSE COALESCE(tool_calls.ended_ms, excluded.ended_ms) END,
        started_ms = COALESCE(tool_calls.started_ms, excluded.started_ms),
        duration_ms = COALESCE(tool_calls.duration_ms, excluded.duration_ms,
                               excluded.ended_ms - tool_calls.started_ms),
        command = COALESCE(tool_calls.command, excluded.command),
        input_sha256 = COALESCE(tool_calls.input_sha256, excluded.input_sha256),
        cwd = COALESCE(tool_calls.cwd, excluded.cwd),
        agent_id = COALESCE(tool_calls.agent_id, excluded.agent_id)";

    const ORACLE_TAKE: &str = "(excluded.status <> 'pending' AND (tool_calls.status = 'pending'
        OR (tool_calls.exit_code IS NULL AND excluded.exit_code IS NOT NULL
            AND tool_calls.status IN ('success', 'failure'))))";

    fn oracle_write(conn: &Connection, call: &Call) {
        let r = stored_form(conn, call);
        conn.execute(
            &ORACLE_UPSERT.replace("TAKE", ORACLE_TAKE),
            params![
                r.tool_use_id,
                r.session_id,
                r.host,
                r.source,
                r.tool,
                r.status.as_str(),
                r.started_ms,
                r.ended_ms,
                r.duration_ms,
                r.command,
                r.input_sha256,
                r.shape,
                r.error,
                r.signature,
                r.exit_code,
                r.cwd,
                r.agent_id,
                r.blamed,
            ],
        )
        .unwrap();
    }

    fn all_rows(conn: &Connection) -> Vec<Vec<rusqlite::types::Value>> {
        let mut stmt = conn
            .prepare("SELECT * FROM tool_calls ORDER BY tool_use_id")
            .unwrap();
        let n = stmt.column_count();
        stmt.query_map([], |r| (0..n).map(|i| r.get(i)).collect())
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap()
    }

    fn observation() -> impl proptest::strategy::Strategy<Value = Call> {
        use proptest::prelude::*;
        let statuses = prop::sample::select(vec![
            Status::Pending,
            Status::Success,
            Status::Failure,
            Status::Interrupted,
            Status::Denied,
        ]);
        let ms = || prop::option::of(0i64..5000);
        (
            (prop::bool::ANY, statuses, prop::option::of(0i64..3)),
            (ms(), ms(), ms()),
            prop::option::of(prop::sample::select(vec![
                "Exit code 1\nmake: *** [all] Error 2",
                "psql: error: connection refused",
                "This command requires approval",
            ])),
            (
                prop::sample::select(vec!["Bash", "", "Read"]),
                prop::sample::select(vec!["make all", "cd x && psql -c 1"]),
            ),
            (
                prop::option::of(Just("s1")),
                prop::option::of(Just("/w")),
                prop::option::of(Just("a1")),
            ),
        )
            .prop_map(
                |(
                    (second_id, status, exit_code),
                    (started, ended, duration),
                    error,
                    (tool, cmd),
                    (sid, cwd, agent),
                )| {
                    let id = if second_id { "t2" } else { "t1" };
                    let input = if tool == "Read" {
                        json!({"file_path": "/w/x.rs"})
                    } else {
                        json!({"command": cmd})
                    };
                    let mut c = Call::new(id, "claude-code", "hook", tool, input);
                    c.status = status;
                    c.exit_code = exit_code;
                    c.started_ms = started;
                    c.ended_ms = ended;
                    c.duration_ms = duration;
                    c.error = error.map(str::to_string);
                    c.session_id = sid.map(str::to_string);
                    c.cwd = cwd.map(str::to_string);
                    c.agent_id = agent.map(str::to_string);
                    c
                },
            )
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 500, ..Default::default() })]

        /// Any sequence of observations, written by the hook path and by the bulk path,
        /// leaves exactly the rows the replaced SQL upsert left.
        #[test]
        fn merges_exactly_like_the_sql_upsert(calls in proptest::collection::vec(observation(), 1..8)) {
            let oracle = crate::store::open_in_memory().unwrap();
            let hook = crate::store::open_in_memory().unwrap();
            let bulk = crate::store::open_in_memory().unwrap();
            let mut writer = CallWriter::new(&bulk);
            for call in &calls {
                oracle_write(&oracle, call);
                write_call(&hook, call).unwrap();
                writer.write(call).unwrap();
            }
            let expected = all_rows(&oracle);
            proptest::prop_assert_eq!(&all_rows(&hook), &expected);
            proptest::prop_assert_eq!(&all_rows(&bulk), &expected);
        }
    }

    #[test]
    fn raw_cut_stops_at_whitespace() {
        let text = format!("{} {}", "a".repeat(RAW_CAP - 10), "b".repeat(100));
        let cut = raw_cut(&text);
        assert!(cut.ends_with('a'));
        assert!(cut.len() < RAW_CAP);
    }
}
