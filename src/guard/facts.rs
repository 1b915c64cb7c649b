//! The hook's answers to rules' conditions (`rules::condition::Facts`), at the edge.
//!
//! Nothing here runs unless a rule whose patterns matched carries a condition that asks: the
//! session context comes from the payload and the running process (host, OS, cwd, `$SHELL`)
//! and, for what only the recorder knows (sandbox, originator, and the shell when `$SHELL`
//! is unset), from the store's `sessions` row; `PATH` is searched without spawning anything;
//! paths are `stat`ed; what the session saw and wrote of a file is looked up in the store's
//! rows of this session that name its file (`condition::file_state`), and a file changed
//! since the session last saw it when a shell command of the session wrote it since, or its
//! modification time is newer than the end of the call that saw it. The
//! store is opened at most once, and only if a question needs it. A question that cannot be
//! answered (no store, a busy store, a `stat` error other than "not found") is unknown, and
//! the guard then fires the rule. A call that asked to run outside the session's sandbox
//! (an escalated call) has no sandbox, whatever the session's; a call's own time limit is
//! read from its input.

use std::cell::{OnceCell, RefCell};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension};

use crate::config::Home;
use crate::rules::condition::file_state::{self, FileState};
use crate::rules::condition::{self, Facts, Key, Stat};

/// Facts about one call, answered lazily from the machine and the store.
pub(crate) struct Live<'a> {
    home: &'a Home,
    host: &'static str,
    session_id: &'a str,
    cwd: Option<&'a str>,
    /// Reads an environment variable (the process's own, or a test's).
    env: &'a dyn Fn(&str) -> Option<OsString>,
    conn: OnceCell<Option<Connection>>,
    session: OnceCell<Option<[Option<String>; 3]>>,
    /// Programs already looked up on `PATH` for this call (several rules may ask).
    on_path: RefCell<Vec<(String, bool)>>,
    /// The call asked to run outside the session's sandbox (an escalated call).
    unsandboxed: bool,
    /// The time limit the call set for its command, in milliseconds.
    time_limit_ms: Option<u64>,
}

/// The process's environment.
pub(crate) fn process_env(key: &str) -> Option<OsString> {
    std::env::var_os(key)
}

impl<'a> Live<'a> {
    /// Facts for a call of `session_id` (may be empty) on `host`, run in `cwd`.
    pub(crate) fn new(
        home: &'a Home,
        host: &'static str,
        session_id: &'a str,
        cwd: Option<&'a str>,
        env: &'a dyn Fn(&str) -> Option<OsString>,
    ) -> Self {
        Live {
            home,
            host,
            session_id,
            cwd: cwd.filter(|c| !c.is_empty()),
            env,
            conn: OnceCell::new(),
            session: OnceCell::new(),
            on_path: RefCell::new(Vec::new()),
            unsandboxed: false,
            time_limit_ms: None,
        }
    }

    /// These facts for a call that asked to run outside the session's sandbox
    /// ([`crate::host::call::unsandboxed`]): its `sandbox` is none, whatever the session's.
    #[must_use]
    pub(crate) fn unsandboxed(mut self, yes: bool) -> Self {
        self.unsandboxed = yes;
        self
    }

    /// These facts for a call that set itself a time limit of `ms` milliseconds
    /// ([`crate::host::call::time_limit_ms`]).
    #[must_use]
    pub(crate) fn with_time_limit_ms(mut self, ms: Option<u64>) -> Self {
        self.time_limit_ms = ms;
        self
    }

    /// The store, opened once, if there is one and it opens in the hook's time.
    fn conn(&self) -> Option<&Connection> {
        self.conn
            .get_or_init(|| {
                let db = self.home.db_path();
                if !db.exists() {
                    return None;
                }
                crate::store::open_for_hook(&db).ok()
            })
            .as_ref()
    }

    /// The session row's shell, sandbox and originator.
    fn session_row(&self) -> Option<&[Option<String>; 3]> {
        self.session
            .get_or_init(|| {
                if self.session_id.is_empty() {
                    return None;
                }
                self.conn()?
                    .query_row(
                        "SELECT shell, sandbox, originator FROM sessions WHERE id = ?1",
                        [self.session_id],
                        |r| Ok([r.get(0)?, r.get(1)?, r.get(2)?]),
                    )
                    .optional()
                    .ok()
                    .flatten()
            })
            .as_ref()
    }

    fn path(&self, p: &str) -> PathBuf {
        let cwd = self
            .cwd
            .map(PathBuf::from)
            .or_else(|| std::env::current_dir().ok());
        PathBuf::from(condition::resolve(cwd.as_deref().and_then(Path::to_str), p))
    }

    /// This session's file events at the paths named like `p`'s file (its rows whose
    /// summary holds that name: a query narrowed by the store, not a scan of the session).
    fn files(&self, p: &str) -> Option<FileState> {
        if self.session_id.is_empty() {
            return None;
        }
        let name = file_state::file_name(p);
        if name.is_empty() {
            return Some(FileState::default());
        }
        let conn = self.conn()?;
        let mut stmt = conn.prepare(file_state::CALLS_NAMING).ok()?;
        let mut rows = stmt.query(rusqlite::params![self.session_id, name]).ok()?;
        let mut files = FileState::default();
        while let Some(row) = rows.next().ok()? {
            let tool: String = row.get(0).ok()?;
            let summary: String = row.get(1).ok()?;
            let cwd: Option<String> = row.get(2).ok()?;
            let start: Option<i64> = row.get(3).ok()?;
            let end: Option<i64> = row.get(4).ok()?;
            let start = start.unwrap_or(i64::MIN);
            files.add(
                &tool,
                &summary,
                cwd.as_deref().or(self.cwd),
                start,
                end.unwrap_or(start),
            );
        }
        Some(files)
    }

    /// Is an executable `name` in a directory of `PATH` (with `PATHEXT` on Windows)?
    fn search_path(&self, name: &str) -> bool {
        let path = (self.env)("PATH").unwrap_or_default();
        let exts: Vec<String> = if cfg!(windows) {
            (self.env)("PATHEXT").map_or_else(
                || vec![".exe".into(), ".cmd".into(), ".bat".into()],
                |e| e.to_string_lossy().split(';').map(str::to_string).collect(),
            )
        } else {
            Vec::new()
        };
        std::env::split_paths(&path).any(|dir| {
            !dir.as_os_str().is_empty()
                && (is_executable(&dir.join(name))
                    || exts
                        .iter()
                        .any(|e| is_executable(&dir.join(format!("{name}{e}")))))
        })
    }
}

impl Facts for Live<'_> {
    fn time_limit_ms(&self) -> Option<u64> {
        self.time_limit_ms
    }

    fn context(&self, key: Key) -> Option<String> {
        let row = |i: usize| self.session_row().and_then(|r| r[i].clone());
        match key {
            Key::Host => Some(self.host.to_string()),
            Key::Os => Some(condition::os_name().to_string()),
            Key::Cwd => self.cwd.map(str::to_string),
            Key::Shell => (self.env)("SHELL")
                .and_then(|s| condition::shell_name(&s.to_string_lossy()))
                .or_else(|| row(0)),
            Key::Sandbox if self.unsandboxed => Some("none".to_string()),
            Key::Sandbox => row(1),
            Key::Originator => row(2),
        }
    }

    fn program_on_path(&self, name: &str) -> Option<bool> {
        if let Some(&(_, found)) = self.on_path.borrow().iter().find(|(n, _)| n == name) {
            return Some(found);
        }
        let found = self.search_path(name);
        self.on_path.borrow_mut().push((name.to_string(), found));
        Some(found)
    }

    fn stat(&self, p: &str) -> Stat {
        match std::fs::metadata(self.path(p)) {
            Ok(m) if m.is_file() => Stat::File(m.len()),
            Ok(m) if m.is_dir() => Stat::Directory,
            Ok(_) => Stat::Other,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                ) =>
            {
                Stat::Missing
            }
            Err(_) => Stat::Unknown,
        }
    }

    fn read_in_session(&self, p: &str) -> Option<bool> {
        let want = condition::resolve(self.cwd, p);
        Some(self.files(p)?.seen(&want, i64::MAX))
    }

    fn existed(&self, p: &str) -> Option<bool> {
        match self.stat(p) {
            Stat::Missing => Some(false),
            Stat::Unknown => None,
            _ => Some(true),
        }
    }

    fn changed_since_read(&self, p: &str) -> Option<bool> {
        let want = condition::resolve(self.cwd, p);
        let files = self.files(p)?;
        let Some(seen) = files.seen_until(&want, i64::MAX) else {
            return Some(false);
        };
        if files.written_since_seen(&want, i64::MAX) {
            return Some(true);
        }
        match std::fs::metadata(self.path(p)).and_then(|m| m.modified()) {
            Ok(mtime) => Some(millis(mtime) > seen),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some(false),
            Err(_) => None,
        }
    }
}

/// `t` in milliseconds since the Unix epoch (before it: negative).
fn millis(t: std::time::SystemTime) -> i64 {
    match t.duration_since(std::time::UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_millis()).unwrap_or(i64::MAX),
        Err(e) => -i64::try_from(e.duration().as_millis()).unwrap_or(i64::MAX),
    }
}

/// A regular file with an execute bit (any file, where there are no such bits).
fn is_executable(p: &Path) -> bool {
    let Ok(m) = std::fs::metadata(p) else {
        return false;
    };
    if !m.is_file() {
        return false;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        m.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<OsString> {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| OsString::from(*v))
        }
    }

    #[test]
    fn context_from_the_payload_the_process_and_the_store() {
        let tmp = tempfile::tempdir().unwrap();
        let home = Home::at(tmp.path());
        let env = env_of(&[("SHELL", "/usr/bin/ZSH")]);
        let live = Live::new(&home, "codex", "s1", Some("/w"), &env);
        assert_eq!(live.context(Key::Host).as_deref(), Some("codex"));
        assert_eq!(live.context(Key::Os).as_deref(), Some(condition::os_name()));
        assert_eq!(live.context(Key::Cwd).as_deref(), Some("/w"));
        assert_eq!(live.context(Key::Shell).as_deref(), Some("zsh"));
        // No store: what only the store knows is unknown, and no store is created.
        assert_eq!(live.context(Key::Sandbox), None);
        assert_eq!(live.read_in_session("/w/a"), None);
        assert!(!home.db_path().exists());
        // With a session row.
        let conn = crate::store::open(&home.db_path()).unwrap();
        conn.execute_batch(
            "INSERT INTO sessions (id, host, source, shell, sandbox, originator)
             VALUES ('s1', 'codex', 'import', 'pwsh', 'read-only', 'codex_cli_rs');
             INSERT INTO tool_calls (tool_use_id, session_id, host, source, tool, status, command, cwd)
             VALUES ('r1', 's1', 'codex', 'hook', 'Read', 'success', '/w/a', '/w'),
                    ('r2', 's1', 'codex', 'hook', 'Read', 'failure', '/w/b', '/w'),
                    ('r3', 's1', 'codex', 'hook', 'Read', 'success',
                     '{\"file_path\":\"c\",\"limit\":5}', '/w');",
        )
        .unwrap();
        let none = env_of(&[]);
        let live = Live::new(&home, "codex", "s1", Some("/w"), &none);
        assert_eq!(live.context(Key::Shell).as_deref(), Some("pwsh"));
        assert_eq!(live.context(Key::Sandbox).as_deref(), Some("read-only"));
        // An escalated call ran outside it.
        let escalated = Live::new(&home, "codex", "s1", Some("/w"), &none).unsandboxed(true);
        assert_eq!(escalated.context(Key::Sandbox).as_deref(), Some("none"));
        let kept = Live::new(&home, "codex", "s1", Some("/w"), &none).unsandboxed(false);
        assert_eq!(kept.context(Key::Sandbox).as_deref(), Some("read-only"));
        // The call's own time limit, as its input set it.
        assert_eq!(Facts::time_limit_ms(&live), None);
        let short =
            Live::new(&home, "codex", "s1", Some("/w"), &none).with_time_limit_ms(Some(1000));
        assert_eq!(Facts::time_limit_ms(&short), Some(1000));
        assert_eq!(
            live.context(Key::Originator).as_deref(),
            Some("codex_cli_rs")
        );
        assert_eq!(live.read_in_session("/w/a"), Some(true));
        assert_eq!(live.read_in_session("a"), Some(true), "relative to the cwd");
        assert_eq!(live.read_in_session("/w/./sub/../a"), Some(true));
        assert_eq!(live.read_in_session("/w/b"), Some(false), "a failed Read");
        assert_eq!(live.read_in_session("/w/c"), Some(true), "a ranged Read");
        let other = Live::new(&home, "codex", "s2", Some("/w"), &none);
        assert_eq!(other.read_in_session("/w/a"), Some(false));
        assert_eq!(other.context(Key::Sandbox), None);
        let nosession = Live::new(&home, "codex", "", None, &none);
        assert_eq!(nosession.read_in_session("/w/a"), None);
        assert_eq!(nosession.context(Key::Cwd), None);
    }

    #[test]
    fn the_session_state_of_a_file_from_the_store_and_its_modification_time() {
        let tmp = tempfile::tempdir().unwrap();
        let home = Home::at(tmp.path());
        let w = tmp.path().join("w");
        std::fs::create_dir(&w).unwrap();
        let a = w.join("a.rs");
        std::fs::write(&a, "x").unwrap();
        std::fs::write(w.join("b.rs"), "x").unwrap();
        let set = |p: &Path, ms: u64| {
            let f = std::fs::File::options().write(true).open(p).unwrap();
            f.set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms))
                .unwrap();
        };
        set(&a, 2_000);
        set(&w.join("b.rs"), 1_000);
        let cwd = w.to_str().unwrap();
        let none = env_of(&[]);
        let live = Live::new(&home, "claude-code", "s1", Some(cwd), &none);
        assert_eq!(live.changed_since_read("a.rs"), None, "no store");
        assert_eq!(live.existed("a.rs"), Some(true));
        assert_eq!(live.existed("nope.rs"), Some(false));
        let conn = crate::store::open(&home.db_path()).unwrap();
        conn.execute(
            "INSERT INTO tool_calls (tool_use_id, session_id, host, source, tool, status,
                 started_ms, ended_ms, command, cwd)
             VALUES ('r', 's1', 'claude-code', 'hook', 'Read', 'success', 1000, 2000, 'a.rs', ?1),
                    ('b', 's1', 'claude-code', 'hook', 'Read', 'success', NULL, 1500, 'b.rs', ?1),
                    ('c', 's1', 'claude-code', 'hook', 'Bash', 'success', 1600, NULL,
                     'echo y >> b.rs', ?1)",
            [cwd],
        )
        .unwrap();
        let live = Live::new(&home, "claude-code", "s1", Some(cwd), &none);
        // Modified when the Read ended: not after it.
        assert_eq!(live.changed_since_read("a.rs"), Some(false));
        assert_eq!(live.read_in_session("a.rs"), Some(true));
        set(&a, 2_001);
        assert_eq!(live.changed_since_read("a.rs"), Some(true), "one ms later");
        // b.rs: the session's shell appended to it after its Read (an old mtime or not).
        assert_eq!(live.changed_since_read("b.rs"), Some(true));
        assert_eq!(live.changed_since_read("c.rs"), Some(false), "never seen");
        assert_eq!(live.changed_since_read("/"), Some(false), "no file name");
        std::fs::remove_file(&a).unwrap();
        assert_eq!(live.changed_since_read("a.rs"), Some(false), "gone");
        let nosession = Live::new(&home, "claude-code", "", Some(cwd), &none);
        assert_eq!(nosession.changed_since_read("b.rs"), None);
        assert_eq!(millis(std::time::UNIX_EPOCH), 0);
        assert_eq!(
            millis(std::time::UNIX_EPOCH - std::time::Duration::from_millis(5)),
            -5
        );
    }

    #[test]
    fn path_and_stat() {
        let tmp = tempfile::tempdir().unwrap();
        let bin = tmp.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        let tool = bin.join("mytool");
        std::fs::write(&tool, "#!/bin/sh\n").unwrap();
        let plain = bin.join("notexec");
        std::fs::write(&plain, "x").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
            std::fs::set_permissions(&plain, std::fs::Permissions::from_mode(0o644)).unwrap();
        }
        let home = Home::at(tmp.path());
        let path = OsString::from(format!("/nonexistent::{}", bin.display()));
        let env = move |k: &str| (k == "PATH").then(|| path.clone());
        let cwd = tmp.path().to_str().unwrap();
        let live = Live::new(&home, "claude-code", "s", Some(cwd), &env);
        assert_eq!(live.program_on_path("mytool"), Some(true));
        assert_eq!(live.program_on_path("bin"), Some(false), "a directory");
        #[cfg(unix)]
        assert_eq!(live.program_on_path("notexec"), Some(false));
        assert_eq!(live.program_on_path("nope"), Some(false));
        let empty = |_: &str| None;
        let bare = Live::new(&home, "claude-code", "s", Some(cwd), &empty);
        assert_eq!(bare.program_on_path("mytool"), Some(false), "no PATH");
        assert_eq!(live.stat("bin/notexec"), Stat::File(1));
        assert_eq!(live.stat(plain.to_str().unwrap()), Stat::File(1));
        assert_eq!(live.stat("bin"), Stat::Directory);
        assert_eq!(live.stat("nope"), Stat::Missing);
        assert_eq!(live.stat("bin/notexec/under"), Stat::Missing);
        assert_eq!(
            condition::shell_name("C:\\Program Files\\PowerShell\\pwsh.exe").as_deref(),
            Some("pwsh")
        );
        assert_eq!(condition::shell_name("/"), None);
    }

    #[test]
    fn each_program_is_looked_up_once_per_call() {
        let tmp = tempfile::tempdir().unwrap();
        let home = Home::at(tmp.path());
        let asked = std::cell::Cell::new(0);
        let env = |k: &str| {
            if k == "PATH" {
                asked.set(asked.get() + 1);
            }
            None
        };
        let live = Live::new(&home, "claude-code", "s", None, &env);
        for _ in 0..3 {
            assert_eq!(live.program_on_path("git"), Some(false));
        }
        assert_eq!(asked.get(), 1, "one search for git");
        assert_eq!(live.program_on_path("cargo"), Some(false));
        assert_eq!(asked.get(), 2, "another program is searched for");
    }
}
