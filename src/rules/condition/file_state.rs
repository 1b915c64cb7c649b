//! A session's file state, from the recorder's own rows: per path (resolved against each
//! call's cwd), when the session *saw* the file's content — a successful Read, or a
//! successful write by a file tool (Edit, Write, …), which the hosts count as seen — and when
//! a shell command of the session wrote it (a redirection, `sed -i`, `cp`, …: the writers
//! `shell::writes` knows).
//!
//! The guard (`guard::facts`, over the rows recorded so far) and the history replay
//! (`rules::replay`, over the rows that started before the replayed call) answer
//! `not_read_in_session` and `changed_since_read` from it; the guard adds the file's
//! modification time, which no row keeps.
//!
//! Guarantees: pure (the rows are given to it, nothing is read); an event counts for a
//! moment only when it started before it; a shell write counts for a path only when the
//! command names that path as a write target (never a glob, never a guess).

use std::collections::HashMap;

use super::{FILE_TOOLS, read_path, resolve};

/// The successful calls of a session (`?1`) whose stored summary names `?2` (a file name):
/// tool, summary, cwd, start and end, each the other when only one was recorded (a call the
/// recorder saw only after it ran has no start), in start order.
pub(crate) const CALLS_NAMING: &str = "SELECT tool, command, cwd,
        coalesce(started_ms, ended_ms), coalesce(ended_ms, started_ms)
    FROM tool_calls
    WHERE session_id = ?1 AND status = 'success' AND command IS NOT NULL
        AND instr(command, ?2) > 0
    ORDER BY 4";

/// What a call did to a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Event {
    /// A file tool read or wrote it: the session knows its content.
    Seen,
    /// A shell command wrote it.
    ShellWrite,
}

/// One event at a path: when its call started and ended (ms), and what it did.
#[derive(Debug, Clone, Copy)]
struct At {
    start: i64,
    end: i64,
    event: Event,
}

/// The file events of one session, by resolved path.
#[derive(Debug, Default)]
pub(crate) struct FileState {
    paths: HashMap<String, Vec<At>>,
}

impl FileState {
    /// Take a successful call into account: `tool` with stored summary `summary`, run in
    /// `cwd`, started at `start` and ended at `end` (ms). Calls of other tools say nothing.
    pub(crate) fn add(
        &mut self,
        tool: &str,
        summary: &str,
        cwd: Option<&str>,
        start: i64,
        end: i64,
    ) {
        let mut push = |path: &str, event| {
            self.paths
                .entry(resolve(cwd, path))
                .or_default()
                .push(At { start, end, event });
        };
        if FILE_TOOLS.contains(&tool) {
            if let Some(path) = read_path(summary) {
                push(&path, Event::Seen);
            }
        } else if crate::host::call::is_shell(tool) {
            for target in crate::shell::writes::write_targets(&crate::shell::split(summary)) {
                push(&target, Event::ShellWrite);
            }
        }
    }

    /// The last event of `kind` at `path` (resolved) that started before `before`.
    fn last(&self, path: &str, before: i64, kind: Event) -> Option<At> {
        self.paths
            .get(path)?
            .iter()
            .filter(|a| a.event == kind && a.start < before)
            .max_by_key(|a| a.start)
            .copied()
    }

    /// Did the session see `path` (resolved) in a call that started before `before`?
    #[must_use]
    pub(crate) fn seen(&self, path: &str, before: i64) -> bool {
        self.last(path, before, Event::Seen).is_some()
    }

    /// When the call that last saw `path` before `before` ended (ms), if one did.
    #[must_use]
    pub(crate) fn seen_until(&self, path: &str, before: i64) -> Option<i64> {
        self.last(path, before, Event::Seen).map(|a| a.end)
    }

    /// Did a shell command of the session write `path` after the session last saw it (both
    /// started before `before`)? False when the session never saw it.
    #[must_use]
    pub(crate) fn written_since_seen(&self, path: &str, before: i64) -> bool {
        match (
            self.last(path, before, Event::Seen),
            self.last(path, before, Event::ShellWrite),
        ) {
            (Some(seen), Some(write)) => write.start > seen.start,
            _ => false,
        }
    }
}

/// The file tools that create a file when none is there (and overwrite one that is).
pub(crate) const CREATE_TOOLS: &[&str] = &["Write", "write_file", "create"];

/// Phrases (lowercase) of a host refusing to write a file it has not seen (Claude Code:
/// "File has not been read yet. Read it first before writing to it.").
const NOT_READ: &[&str] = &[
    "has not been read yet",
    "read it first before",
    "must be read before",
    "must read the file before",
];

/// Phrases (lowercase) of a host refusing to write a file that changed since it was read
/// (Claude Code: "File has been modified since read, either by the user or by a linter",
/// "File has been unexpectedly modified. Read it again").
const CHANGED: &[&str] = &[
    "modified since read",
    "modified since it was read",
    "unexpectedly modified",
    "changed since it was read",
];

/// Does `error` say the host refused the call because the session has not read the file?
#[must_use]
pub(crate) fn says_not_read(error: &str) -> bool {
    let e = error.to_lowercase();
    NOT_READ.iter().any(|p| e.contains(p))
}

/// Does `error` say the host refused the call because the file changed since it was read?
#[must_use]
pub(crate) fn says_changed(error: &str) -> bool {
    let e = error.to_lowercase();
    CHANGED.iter().any(|p| e.contains(p))
}

/// The file name of `path` (its last component), which a query narrows rows by.
#[must_use]
pub(crate) fn file_name(path: &str) -> &str {
    path.trim()
        .trim_end_matches(['/', '\\'])
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(calls: &[(&str, &str, i64)]) -> FileState {
        let mut s = FileState::default();
        for &(tool, summary, at) in calls {
            s.add(tool, summary, Some("/w"), at, at + 5);
        }
        s
    }

    #[test]
    fn file_tools_see_and_shell_writers_write_by_resolved_path() {
        let s = state(&[
            ("Read", "a.rs", 10),
            ("Write", "/w/new.rs", 20),
            ("Bash", "sed -i 's/x/y/' a.rs", 30),
            ("Bash", "cat a.rs > /tmp/copy", 40),
            ("Grep", "a.rs", 50),
            ("Read", r#"{"file_path":"b.rs","offset":3}"#, 60),
        ]);
        assert!(s.seen("/w/a.rs", 11));
        assert!(!s.seen("/w/a.rs", 10), "only calls that started before");
        assert!(
            s.seen("/w/new.rs", 21),
            "the session's own Write counts as seen"
        );
        assert!(s.seen("/w/b.rs", 61), "a ranged Read");
        assert!(!s.seen("/w/c.rs", i64::MAX));
        assert_eq!(s.seen_until("/w/a.rs", i64::MAX), Some(15));
        assert_eq!(s.seen_until("/w/c.rs", i64::MAX), None);
        // sed -i wrote a.rs after its Read; the redirect wrote /tmp/copy, not a.rs.
        assert!(s.written_since_seen("/w/a.rs", 31));
        assert!(
            !s.written_since_seen("/w/a.rs", 30),
            "the write had not started"
        );
        assert!(!s.written_since_seen("/tmp/copy", i64::MAX), "never seen");
        assert!(
            !s.written_since_seen("/w/new.rs", i64::MAX),
            "never written"
        );
        assert!(!s.seen("/w/a.rs", 0));
    }

    #[test]
    fn a_read_after_the_write_makes_the_file_fresh_again() {
        let s = state(&[
            ("Read", "a.rs", 10),
            ("Bash", "echo x >> a.rs", 20),
            ("Read", "a.rs", 30),
            ("Bash", "echo y >> a.rs", 30),
        ]);
        assert!(s.written_since_seen("/w/a.rs", 25));
        assert!(
            !s.written_since_seen("/w/a.rs", 31),
            "a write at the same start"
        );
        assert_eq!(s.seen_until("/w/a.rs", 31), Some(35));
    }

    #[test]
    fn the_hosts_refusals_are_told_apart() {
        let not_read = "<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>";
        let changed = "File has been modified since read, either by the user or by a linter.";
        assert!(says_not_read(not_read) && !says_changed(not_read));
        assert!(says_changed(changed) && !says_not_read(changed));
        assert!(says_changed(
            "File has been UNEXPECTEDLY modified. Read it again"
        ));
        assert!(!says_changed("String to replace not found") && !says_not_read(""));
    }

    #[test]
    fn file_names_are_the_last_component() {
        assert_eq!(file_name("/w/src/a.rs"), "a.rs");
        assert_eq!(file_name("C:\\w\\B.sol"), "B.sol");
        assert_eq!(file_name(" a.rs "), "a.rs");
        assert_eq!(file_name("/w/dir/"), "dir");
        assert_eq!(file_name(""), "");
    }
}
