//! Answering rules' conditions over recorded history: the [`Facts`] of a stored call.
//!
//! The backtest ([`super::backtest::run_in`]) asks these only for a rule with `when` whose
//! patterns matched a call, so a session's rows are read from the store the first time one
//! of its calls needs them, and once. What history answers (docs/rule-format.md):
//! - session context: the `sessions` row of the call's session (the cwd: the call's own, else
//!   the session's);
//! - `program_absent`: the session's own evidence. A program is on `PATH` when a call of the
//!   session ran it without failing, absent when a call failed with "command not found",
//!   "is not recognized" or exit 127 naming it and none ran it; otherwise unknown;
//! - `path_missing`: the call's error ("No such file or directory", "does not exist", …) says
//!   missing; its facts (a size) or its success say it exists;
//! - `path_is_directory`: the call's error saying so (`EISDIR`, "is a directory") says a
//!   directory; a file tool's success (Read, Edit, Write …) says a file; otherwise what the
//!   session's other file-tool calls of the same path said (a directory error or a success),
//!   else unknown: a Read that failed for another reason says nothing about the path's kind;
//! - `file_larger_than`: the call's facts (`bytes` > N, or `over_limit`);
//! - `timeout_ms_at_most`: the time limit the call set, kept in its facts (`timeout_ms`);
//!   a row that kept none set none;
//! - `not_read_in_session`: the session's successful file-tool calls of the path that
//!   started earlier (`condition::file_state`) say whether it saw the file; whether the file
//!   existed before the call: the host's error refusing the call as unread or changed says
//!   it did (the host says so only of an existing file), a missing-path error that it did
//!   not, a file tool's success that it did — except a creating tool's (Write): one that
//!   succeeded on a file the session had not seen made it (the host refuses to overwrite an
//!   unseen file);
//! - `changed_since_read`: the host's error saying the file changed since it was read (the
//!   modification time the host compared, which no row keeps), or a shell command of the
//!   session that wrote the path after the session last saw it.
//!
//! Anything else is unknown: the backtest then counts the call as not fired and says for how
//! many calls each condition could not be replayed.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use rusqlite::{Connection, OptionalExtension};
use serde_json::Value;

use super::condition::file_state::{self, FileState};
use super::condition::{self, Facts, Key, NoFacts, Stat};

/// Where replayed conditions are answered from: the store the calls were scanned from.
pub(crate) struct History<'c> {
    conn: Option<&'c Connection>,
    /// Session ids by the index a scanned call's `session` holds.
    session_ids: &'c [String],
    sessions: RefCell<HashMap<u32, Rc<Session>>>,
}

/// What one session's rows say.
#[derive(Debug, Default)]
struct Session {
    /// host, os, shell, sandbox, originator.
    context: [Option<String>; 5],
    cwd: Option<String>,
    /// Each call's own evidence, by `tool_use_id`.
    calls: HashMap<String, Call>,
    /// What the session's successful calls saw and wrote, by path.
    files: FileState,
    /// What the session's file-tool calls said a resolved path is: a directory (an error
    /// saying so) or a file (a success).
    kinds: HashMap<String, Stat>,
    /// Programs a call ran without failing.
    ran: HashSet<String>,
    /// Programs a call failed to find.
    not_found: HashSet<String>,
}

#[derive(Debug, Default)]
struct Call {
    tool: String,
    cwd: Option<String>,
    status: String,
    error: Option<String>,
    facts: Option<Value>,
    started_ms: Option<i64>,
}

impl<'c> History<'c> {
    /// History from `conn`, whose sessions the scan interned as `session_ids`.
    pub(crate) fn new(conn: &'c Connection, session_ids: &'c [String]) -> Self {
        History {
            conn: Some(conn),
            session_ids,
            sessions: RefCell::new(HashMap::new()),
        }
    }

    /// No history: every condition is unknown.
    pub(crate) fn none() -> Self {
        History {
            conn: None,
            session_ids: &[],
            sessions: RefCell::new(HashMap::new()),
        }
    }

    /// The facts of the stored call `tool_use_id` of session `session` (an index into the
    /// scan's session ids) that started at `started_ms` (its session read on first need).
    pub(crate) fn facts(
        &self,
        tool_use_id: &str,
        session: Option<u32>,
        started_ms: i64,
    ) -> Box<dyn Facts + '_> {
        let (Some(conn), Some(index)) = (self.conn, session) else {
            return Box::new(NoFacts);
        };
        let Some(id) = self.session_ids.get(index as usize) else {
            return Box::new(NoFacts);
        };
        let session = Rc::clone(
            self.sessions
                .borrow_mut()
                .entry(index)
                .or_insert_with(|| Rc::new(load(conn, id).unwrap_or_default())),
        );
        Box::new(CallFacts {
            tool_use_id: tool_use_id.to_string(),
            started_ms,
            session,
        })
    }
}

/// One session's rows (an error reading them: a session that says nothing).
fn load(conn: &Connection, id: &str) -> rusqlite::Result<Session> {
    let mut s = Session::default();
    if let Some((context, cwd)) = conn
        .query_row(
            "SELECT host, os, shell, sandbox, originator, cwd FROM sessions WHERE id = ?1",
            [id],
            |r| {
                Ok((
                    [r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?],
                    r.get::<_, Option<String>>(5)?,
                ))
            },
        )
        .optional()?
    {
        s.context = context;
        s.cwd = cwd;
    }
    let mut stmt = conn.prepare(
        "SELECT tool_use_id, tool, status, coalesce(command, ''), cwd, error, exit_code, facts,
                started_ms, coalesce(ended_ms, started_ms)
         FROM tool_calls WHERE session_id = ?1",
    )?;
    let mut rows = stmt.query([id])?;
    while let Some(r) = rows.next()? {
        let tool: String = r.get(1)?;
        let command: String = r.get(3)?;
        let call = Call {
            tool: tool.clone(),
            cwd: r.get(4)?,
            status: r.get(2)?,
            error: r.get(5)?,
            facts: r
                .get::<_, Option<String>>(7)?
                .and_then(|f| serde_json::from_str(&f).ok()),
            started_ms: r.get(8)?,
        };
        let exit_code: Option<i64> = r.get(6)?;
        let cwd = call.cwd.as_deref().or(s.cwd.as_deref());
        if call.status == "success" {
            let end: Option<i64> = r.get(9)?;
            let start = call.started_ms.or(end).unwrap_or(i64::MIN);
            s.files
                .add(&tool, &command, cwd, start, end.unwrap_or(start));
        }
        if let Some(kind) = own_kind(&call)
            && let Some(path) = condition::read_path(&command)
        {
            s.kinds.insert(condition::resolve(cwd, &path), kind);
        }
        if crate::host::call::is_shell(&tool) {
            programs(&command, &call, exit_code, &mut s);
        }
        s.calls.insert(r.get(0)?, call);
    }
    // A program that ran is on PATH, whatever else failed to find it.
    let ran = s.ran.clone();
    s.not_found.retain(|p| !ran.contains(p));
    Ok(s)
}

/// The programs a shell call ran, or failed to find.
fn programs(command: &str, call: &Call, exit_code: Option<i64>, s: &mut Session) {
    let split = crate::shell::split(command);
    let names: Vec<String> = split
        .segments
        .iter()
        .filter_map(|seg| crate::shell::program::program(seg).map(|p| p.head))
        .collect();
    match call.status.as_str() {
        "success" => s.ran.extend(names),
        "failure" => {
            let error = call.error.as_deref().unwrap_or_default();
            for name in names {
                if not_found(error, exit_code, &name) {
                    s.not_found.insert(name);
                }
            }
        }
        _ => {}
    }
}

/// Does `error` (with `exit_code`) say `name` was not found? A line of it in the shells'
/// words naming it ([`crate::shell::blame::not_found_program`]), or exit 127 with the error
/// naming it.
pub(crate) fn not_found(error: &str, exit_code: Option<i64>, name: &str) -> bool {
    let lower = error.to_ascii_lowercase();
    if !lower.contains(&name.to_ascii_lowercase()) {
        return false;
    }
    error.lines().any(|line| {
        crate::shell::blame::not_found_program(line).is_some_and(|found| {
            found
                .rsplit(['/', '\\'])
                .next()
                .is_some_and(|base| base.eq_ignore_ascii_case(name))
        })
    }) || exit_code == Some(127)
        || lower.starts_with("exit code 127")
}

/// Words (lowercase) of an error that say the path is a directory, where a file was wanted.
const DIRECTORY: &[&str] = &[
    "eisdir",
    "is a directory",
    "illegal operation on a directory",
];

/// Does `error` say the call's path is a directory (Node's `EISDIR`, "is a directory")?
#[must_use]
pub(crate) fn says_directory(error: &str) -> bool {
    let lower = error.to_ascii_lowercase();
    DIRECTORY.iter().any(|d| lower.contains(d))
}

/// What a file tool's own call says its path is: a directory when its error says so, a file
/// when it succeeded (a file tool succeeds only on a file); else nothing.
fn own_kind(call: &Call) -> Option<Stat> {
    if !condition::FILE_TOOLS.contains(&call.tool.as_str()) {
        return None;
    }
    match call.status.as_str() {
        "success" => Some(Stat::FileUnmeasured),
        "failure" if says_directory(call.error.as_deref().unwrap_or_default()) => {
            Some(Stat::Directory)
        }
        _ => None,
    }
}

/// Words of an error that say a path is not there.
const MISSING: &[&str] = &[
    "no such file or directory",
    "does not exist",
    "file not found",
    "cannot find the path",
    "cannot find path",
];

/// The facts of one stored call.
struct CallFacts {
    tool_use_id: String,
    started_ms: i64,
    session: Rc<Session>,
}

impl CallFacts {
    fn call(&self) -> Option<&Call> {
        self.session.calls.get(&self.tool_use_id)
    }

    /// Did this call ask to run outside the session's sandbox (`facts.unsandboxed`)?
    fn unsandboxed(&self) -> bool {
        self.call()
            .and_then(|c| c.facts.as_ref())
            .and_then(|f| f.get("unsandboxed"))
            == Some(&Value::Bool(true))
    }

    fn cwd(&self) -> Option<&str> {
        self.call()
            .and_then(|c| c.cwd.as_deref())
            .or(self.session.cwd.as_deref())
    }
}

impl Facts for CallFacts {
    fn time_limit_ms(&self) -> Option<u64> {
        self.call()?.facts.as_ref()?.get("timeout_ms")?.as_u64()
    }

    fn context(&self, key: Key) -> Option<String> {
        let i = match key {
            Key::Host => 0,
            Key::Os => 1,
            Key::Shell => 2,
            // An escalated call ran outside the session's sandbox.
            Key::Sandbox if self.unsandboxed() => return Some("none".to_string()),
            Key::Sandbox => 3,
            Key::Originator => 4,
            Key::Cwd => return self.cwd().map(str::to_string),
        };
        self.session.context[i].clone()
    }

    fn program_on_path(&self, name: &str) -> Option<bool> {
        if self.session.ran.contains(name) {
            Some(true)
        } else if self.session.not_found.contains(name) {
            Some(false)
        } else {
            None
        }
    }

    fn stat(&self, path: &str) -> Stat {
        let Some(call) = self.call() else {
            return Stat::Unknown;
        };
        let facts = call.facts.as_ref();
        if facts.and_then(|f| f.get("over_limit")) == Some(&Value::Bool(true)) {
            return Stat::File(u64::MAX);
        }
        if let Some(bytes) = facts.and_then(|f| f.get("bytes")).and_then(Value::as_u64) {
            return Stat::File(bytes);
        }
        let error = call
            .error
            .as_deref()
            .unwrap_or_default()
            .to_ascii_lowercase();
        if MISSING.iter().any(|m| error.contains(m)) {
            return Stat::Missing;
        }
        if let Some(kind) = own_kind(call) {
            return kind;
        }
        if call.status == "success" {
            return Stat::Exists;
        }
        self.session
            .kinds
            .get(&condition::resolve(self.cwd(), path))
            .copied()
            .unwrap_or(Stat::Unknown)
    }

    fn read_in_session(&self, path: &str) -> Option<bool> {
        let want = condition::resolve(self.cwd(), path);
        Some(self.session.files.seen(&want, self.started_ms))
    }

    fn existed(&self, path: &str) -> Option<bool> {
        let call = self.call()?;
        let error = call.error.as_deref().unwrap_or_default();
        let want = condition::resolve(self.cwd(), path);
        if file_state::says_not_read(error)
            || file_state::says_changed(error)
            || self.session.files.seen(&want, self.started_ms)
        {
            return Some(true);
        }
        let lower = error.to_ascii_lowercase();
        if MISSING.iter().any(|m| lower.contains(m)) {
            return Some(false);
        }
        (call.status == "success" && condition::FILE_TOOLS.contains(&call.tool.as_str()))
            .then(|| !file_state::CREATE_TOOLS.contains(&call.tool.as_str()))
    }

    fn changed_since_read(&self, path: &str) -> Option<bool> {
        let error = self.call()?.error.as_deref().unwrap_or_default();
        let want = condition::resolve(self.cwd(), path);
        Some(
            file_state::says_changed(error)
                || self
                    .session
                    .files
                    .written_since_seen(&want, self.started_ms),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> Connection {
        let conn = crate::store::open_in_memory().unwrap();
        conn.execute_batch(
            "INSERT INTO sessions (id, host, source, cwd, os, shell, sandbox, originator)
             VALUES ('s1', 'codex', 'import', '/w', 'windows', 'pwsh', 'read-only', 'codex_cli_rs'),
                    ('s2', 'claude-code', 'import', '/v', NULL, NULL, NULL, NULL);
             INSERT INTO tool_calls (tool_use_id, session_id, host, source, tool, status,
                 started_ms, command, cwd, error, exit_code, facts) VALUES
             ('a', 's1', 'codex', 'import', 'Bash', 'failure', 1, 'pnpm install', '/w',
              'Exit code 127\nbash: pnpm: command not found', 127, NULL),
             ('b', 's1', 'codex', 'import', 'Bash', 'failure', 2, 'cd x && yarn', '/w/x',
              'yarn: not found', 1, NULL),
             ('c', 's1', 'codex', 'import', 'Bash', 'success', 3, 'yarn build', '/w', NULL, 0, NULL),
             ('d', 's1', 'codex', 'import', 'Read', 'success', 4, 'src/a.rs', '/w', NULL, NULL,
              '{\"bytes\": 900, \"lines\": 10}'),
             ('e', 's1', 'codex', 'import', 'Read', 'failure', 5, '/w/big.log', '/w',
              'File content exceeds maximum allowed size', NULL, '{\"over_limit\": true}'),
             ('f', 's1', 'codex', 'import', 'Read', 'failure', 6, '/w/gone', '/w',
              'File does not exist.', NULL, NULL),
             ('g', 's1', 'codex', 'import', 'Edit', 'success', 7, '/w/src/a.rs', '/w', NULL, NULL, NULL),
             ('h', 's1', 'codex', 'import', 'Edit', 'failure', 0, '/w/src/a.rs', NULL,
              'String not found', NULL, NULL),
             ('i', 's2', 'claude-code', 'import', 'Bash', 'failure', 1, 'make', NULL,
              'Exit code 2', 2, NULL),
             ('j', 's1', 'codex', 'import', 'Read', 'failure', 8, '/w/dir', '/w',
              'EISDIR: illegal operation on a directory, read', NULL, NULL),
             ('k', 's1', 'codex', 'import', 'Read', 'failure', 9, 'dir', '/w',
              'Tool permission request failed', NULL, NULL),
             ('l', 's1', 'codex', 'import', 'Bash', 'failure', 10, '/w/other', '/w',
              'cat: /w/other: Is a directory', 1, NULL);",
        )
        .unwrap();
        conn
    }

    #[test]
    fn an_escalated_call_ran_outside_the_sessions_sandbox() {
        let conn = store();
        conn.execute_batch(
            "INSERT INTO tool_calls (tool_use_id, session_id, host, source, tool, status,
                 started_ms, command, cwd, error, exit_code, facts) VALUES
             ('m', 's1', 'codex', 'import', 'Bash', 'success', 11, 'git fetch', '/w', NULL, 0,
              '{\"unsandboxed\": true}'),
             ('n', 's1', 'codex', 'import', 'Bash', 'success', 12, 'git fetch', '/w', NULL, 0,
              '{\"unsandboxed\": false}');",
        )
        .unwrap();
        let ids = vec!["s1".to_string(), "s2".to_string()];
        let h = History::new(&conn, &ids);
        let sandbox = |id: &str, at: i64| h.facts(id, Some(0), at).context(Key::Sandbox);
        assert_eq!(sandbox("m", 11).as_deref(), Some("none"));
        assert_eq!(sandbox("n", 12).as_deref(), Some("read-only"));
        assert_eq!(sandbox("c", 3).as_deref(), Some("read-only"));
    }

    #[test]
    fn a_stored_call_s_time_limit_is_the_one_its_facts_kept() {
        let conn = store();
        conn.execute_batch(
            "INSERT INTO tool_calls (tool_use_id, session_id, host, source, tool, status,
                 started_ms, command, cwd, error, exit_code, facts) VALUES
             ('t', 's1', 'codex', 'import', 'Bash', 'failure', 11, 'git status', '/w', NULL,
              NULL, '{\"timeout_ms\": 1000}');",
        )
        .unwrap();
        let ids = vec!["s1".to_string()];
        let h = History::new(&conn, &ids);
        assert_eq!(h.facts("t", Some(0), 11).time_limit_ms(), Some(1000));
        assert_eq!(h.facts("c", Some(0), 3).time_limit_ms(), None);
        assert_eq!(h.facts("zz", Some(0), 3).time_limit_ms(), None);
    }

    #[test]
    // one stored session and every fact replay reads from it
    #[allow(clippy::too_many_lines)]
    fn a_stored_call_answers_from_its_session_and_its_own_row() {
        let conn = store();
        let ids = vec!["s1".to_string(), "s2".to_string()];
        let h = History::new(&conn, &ids);
        let f = h.facts("a", Some(0), 1);
        assert_eq!(f.context(Key::Host).as_deref(), Some("codex"));
        assert_eq!(f.context(Key::Os).as_deref(), Some("windows"));
        assert_eq!(f.context(Key::Shell).as_deref(), Some("pwsh"));
        assert_eq!(f.context(Key::Sandbox).as_deref(), Some("read-only"));
        assert_eq!(f.context(Key::Originator).as_deref(), Some("codex_cli_rs"));
        assert_eq!(f.context(Key::Cwd).as_deref(), Some("/w"));
        // pnpm was never found; yarn failed once but ran later: on PATH; make: no evidence.
        assert_eq!(f.program_on_path("pnpm"), Some(false));
        assert_eq!(f.program_on_path("yarn"), Some(true));
        assert_eq!(f.program_on_path("cd"), None);
        assert_eq!(h.facts("i", Some(1), 1).program_on_path("make"), None);
        // A failure without the name or exit 127 says nothing.
        assert!(!not_found("Exit code 2", Some(2), "make"));
        assert!(not_found("x: boom", Some(127), "x"));
        assert!(not_found("Exit code 127\nx", None, "x"));
        assert!(not_found(
            "'npm' is not recognized as an internal",
            Some(1),
            "npm"
        ));
        assert!(!not_found("npm: command not found", Some(1), "pnpx"));
        // Paths: facts, errors and successes.
        assert_eq!(h.facts("d", Some(0), 4).stat("x"), Stat::File(900));
        assert_eq!(h.facts("e", Some(0), 5).stat("x"), Stat::File(u64::MAX));
        assert_eq!(h.facts("f", Some(0), 6).stat("x"), Stat::Missing);
        assert_eq!(h.facts("g", Some(0), 7).stat("x"), Stat::FileUnmeasured);
        assert_eq!(
            h.facts("c", Some(0), 3).stat("x"),
            Stat::Exists,
            "not a file tool"
        );
        assert_eq!(h.facts("h", Some(0), 0).stat("x"), Stat::Unknown);
        // A directory: the call's own error says so; another failure of the same path is
        // answered by what the session's file-tool calls said of it (a directory, or a file
        // that a file tool succeeded on); a shell call's words are not a file tool's.
        assert_eq!(h.facts("j", Some(0), 8).stat("/w/dir"), Stat::Directory);
        assert_eq!(h.facts("k", Some(0), 9).stat("dir"), Stat::Directory);
        assert_eq!(
            h.facts("h", Some(0), 0).stat("/w/src/a.rs"),
            Stat::FileUnmeasured
        );
        assert_eq!(h.facts("l", Some(0), 10).stat("/w/other"), Stat::Unknown);
        assert_eq!(h.facts("k", Some(0), 9).stat("/w/other"), Stat::Unknown);
        assert!(says_directory("EISDIR: illegal operation on a directory"));
        assert!(says_directory("Path is a directory, not a file"));
        assert!(!says_directory("File does not exist."));
        assert_eq!(h.facts("zz", Some(0), 0).stat("x"), Stat::Unknown);
        // Reads: earlier ones of the same session, by resolved path.
        assert_eq!(
            h.facts("g", Some(0), 7).read_in_session("/w/src/a.rs"),
            Some(true)
        );
        assert_eq!(
            h.facts("g", Some(0), 7).read_in_session("src/a.rs"),
            Some(true)
        );
        assert_eq!(
            h.facts("h", Some(0), 0).read_in_session("/w/src/a.rs"),
            Some(false)
        );
        // A Read that started at the same instant (the same parallel batch) is not earlier:
        // the host checks its read set when the edit runs, not after its batch.
        assert_eq!(
            h.facts("g", Some(0), 4).read_in_session("/w/src/a.rs"),
            Some(false)
        );
        assert_eq!(
            h.facts("g", Some(0), 7).read_in_session("/w/big.log"),
            Some(false)
        );
        // A session without context, a call without a session, no history.
        let s2 = h.facts("i", Some(1), 1);
        assert_eq!(s2.context(Key::Os), None);
        assert_eq!(s2.context(Key::Cwd).as_deref(), Some("/v"));
        assert_eq!(h.facts("a", None, 1).context(Key::Host), None);
        assert_eq!(
            History::none().facts("a", Some(0), 1).context(Key::Host),
            None
        );
        assert_eq!(h.facts("a", Some(9), 1).context(Key::Host), None);
    }

    #[test]
    fn a_stored_call_answers_the_session_state_of_its_file() {
        let conn = crate::store::open_in_memory().unwrap();
        conn.execute_batch(
            "INSERT INTO sessions (id, host, source, cwd) VALUES ('s', 'claude-code', 'import', '/w');
             INSERT INTO tool_calls (tool_use_id, session_id, host, source, tool, status,
                 started_ms, ended_ms, command, cwd, error) VALUES
             ('r', 's', 'claude-code', 'import', 'Read', 'success', 1, 2, '/w/a.rs', '/w', NULL),
             ('sed', 's', 'claude-code', 'import', 'Bash', 'success', 3, NULL,
              'sed -i s/x/y/ a.rs', '/w', NULL),
             ('stale', 's', 'claude-code', 'import', 'Edit', 'failure', 4, 5, '/w/b.rs', '/w',
              'File has been modified since read, either by the user or by a linter.'),
             ('unread', 's', 'claude-code', 'import', 'Write', 'failure', 6, 7, '/w/c.rs', '/w',
              'File has not been read yet. Read it first before writing to it.'),
             ('new', 's', 'claude-code', 'import', 'Write', 'success', 8, 9, '/w/d.rs', '/w', NULL),
             ('edit', 's', 'claude-code', 'import', 'Edit', 'success', 10, 11, '/w/e.rs', '/w', NULL),
             ('gone', 's', 'claude-code', 'import', 'Edit', 'failure', 12, 13, '/w/f.rs', '/w',
              'File does not exist.'),
             ('other', 's', 'claude-code', 'import', 'Edit', 'failure', 14, 15, '/w/g.rs', '/w',
              'String to replace not found'),
             ('late', 's', 'claude-code', 'import', 'Edit', 'success', 16, 17, '/w/a.rs', '/w', NULL);",
        )
        .unwrap();
        let ids = vec!["s".to_string()];
        let h = History::new(&conn, &ids);
        let at = |id: &str, ms| h.facts(id, Some(0), ms);
        // Existed before the call: the host's refusals, a sight, a missing-path error, an
        // edit's success; a Write that succeeded unseen made the file; else unknown.
        assert_eq!(at("unread", 6).existed("/w/c.rs"), Some(true));
        assert_eq!(at("stale", 4).existed("/w/b.rs"), Some(true));
        assert_eq!(at("late", 16).existed("/w/a.rs"), Some(true), "seen");
        assert_eq!(at("gone", 12).existed("/w/f.rs"), Some(false));
        assert_eq!(at("new", 8).existed("/w/d.rs"), Some(false));
        assert_eq!(at("edit", 10).existed("/w/e.rs"), Some(true));
        assert_eq!(at("other", 14).existed("/w/g.rs"), None);
        assert_eq!(at("sed", 3).existed("/w/a.rs"), Some(true), "seen before");
        assert_eq!(at("nope", 3).existed("/w/a.rs"), None, "no such call");
        // Seen: the Read; the session's own successful Write of a file counts too.
        assert_eq!(at("late", 16).read_in_session("a.rs"), Some(true));
        assert_eq!(
            at("r", 1).read_in_session("a.rs"),
            Some(false),
            "not before itself"
        );
        assert_eq!(at("edit", 10).read_in_session("/w/d.rs"), Some(true));
        // Changed since read: the shell wrote a.rs after its Read (its end unrecorded: its
        // start stands); the host's own refusal says so of b.rs; nothing says so of e.rs.
        assert_eq!(at("late", 16).changed_since_read("/w/a.rs"), Some(true));
        assert_eq!(at("sed", 3).changed_since_read("/w/a.rs"), Some(false));
        assert_eq!(at("stale", 4).changed_since_read("/w/b.rs"), Some(true));
        assert_eq!(at("edit", 10).changed_since_read("/w/e.rs"), Some(false));
        assert_eq!(at("nope", 10).changed_since_read("/w/e.rs"), None);
    }
}
