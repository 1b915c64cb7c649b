//! The team's evidence as a temporary `SQLite` store, so `derive`, `guard prune`, `report`
//! and `record stats` run on it unchanged.
//!
//! One `psql` run reads all three tables in one `REPEATABLE READ` snapshot (`\copy … TO`
//! files in a private temporary directory, COPY text format, see `copy_text`); the
//! rows go into a store created with the normal migrations, in the same directory, removed
//! when the [`TeamCopy`] is dropped.
//!
//! Windowed: a [`Scope`] (the reading command's own window) is pushed down into the server's
//! queries, so only the rows the command can look at travel: tool calls whose time
//! (`COALESCE(started_ms, ended_ms)`, indexed since schema 2) is in the calls' window, audit
//! records whose `ts_ms` is in the audit window, and the sessions those calls name or that
//! were active in the window. Every reading stage filters the same way on the same columns,
//! so its result on the copy is the one it would get on the whole store. The team's totals
//! come back too, so the note can say how many rows moved of how many there are.
//!
//! Merging: the same call or session pushed by two origins (two people importing one
//! transcript give it the same `tool_use_id`) is kept once, preferring a settled status over
//! `pending`. Audit records of every origin are merged in time order with new sequence
//! numbers, because prune and report only read the records themselves. The merged table is
//! not a hash chain and must never pass for one: each row's `prev` is [`MERGED_PREV`] (its
//! `hash` is the one the record has in its origin's chain, for tracing it back), so a
//! verification walk fails at the first record instead of vouching for a chain nobody wrote.
//! The chains themselves stay whole, per origin, in `PostgreSQL`.

use std::collections::BTreeSet;
use std::io::BufRead;
use std::path::{Path, PathBuf};

use rusqlite::Connection;

use super::copy_text;
use super::schema::{self, AUDIT, SESSIONS, TOOL_CALLS, Table};
use super::target::PgUrl;
use crate::{Error, Result};

/// The `prev` of every merged audit row: not a hash, so no chain walk can accept it.
pub(crate) const MERGED_PREV: &str = "team-merged: not a chain";

/// What `psql` prints when the team store has no callus schema.
const NO_SCHEMA: &str = "callus:no-team-store";

/// A half-open range of Unix milliseconds; `None` bounds are open.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Range {
    /// First millisecond inside.
    pub since: Option<i64>,
    /// First millisecond after.
    pub until: Option<i64>,
}

impl Range {
    /// `[since, until)` of a window.
    #[must_use]
    pub(crate) fn of(window: &crate::window::Window) -> Self {
        Range {
            since: Some(window.since_ms),
            until: Some(window.until_ms),
        }
    }

    /// Is everything inside?
    #[must_use]
    pub(crate) fn is_all(&self) -> bool {
        self.since.is_none() && self.until.is_none()
    }

    /// An SQL condition on the expression `at` (always true when unbounded).
    fn condition(&self, at: &str) -> String {
        let mut parts = Vec::new();
        if let Some(s) = self.since {
            parts.push(format!("{at} >= {s}"));
        }
        if let Some(u) = self.until {
            parts.push(format!("{at} < {u}"));
        }
        if parts.is_empty() {
            "true".to_string()
        } else {
            parts.join(" AND ")
        }
    }
}

/// What a reading command needs from the team store.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Scope {
    /// Tool calls (and their sessions).
    pub calls: Range,
    /// Audit records.
    pub audit: Range,
}

impl Scope {
    /// Everything.
    pub(crate) const ALL: Scope = Scope {
        calls: Range {
            since: None,
            until: None,
        },
        audit: Range {
            since: None,
            until: None,
        },
    };

    /// The same window for calls and audit records.
    #[must_use]
    pub(crate) fn window(window: &crate::window::Window) -> Self {
        Scope {
            calls: Range::of(window),
            audit: Range::of(window),
        }
    }
}

/// A call's time, as every reading stage takes it.
const CALL_TIME: &str = "COALESCE(started_ms, ended_ms)";

/// A temporary local copy of the team's evidence.
#[derive(Debug)]
pub(crate) struct TeamCopy {
    /// Holds the directory (and the store in it) until the copy is dropped.
    dir: tempfile::TempDir,
    path: PathBuf,
    /// Distinct origins that pushed anything.
    pub origins: usize,
    /// Tool calls copied (after merging).
    pub calls: u64,
    /// Audit records copied.
    pub audit: u64,
    /// Tool calls the team store holds in all (what a whole copy would move).
    pub team_calls: u64,
    /// Audit records the team store holds in all.
    pub team_audit: u64,
    /// Rows that travelled (sessions, calls and audit records, before merging).
    pub moved: u64,
}

impl TeamCopy {
    /// The directory that holds the copy (deleted when dropped) and the store's path.
    #[must_use]
    pub(crate) fn into_parts(self) -> (tempfile::TempDir, PathBuf) {
        (self.dir, self.path)
    }
}

/// Copy the team's evidence at `url` that `scope` needs into a fresh temporary store.
// one psql script built and read back table by table, in one transaction
#[allow(clippy::too_many_lines)]
pub(crate) fn pull(url: &PgUrl, scope: &Scope, progress: bool) -> Result<TeamCopy> {
    let mut builder = tempfile::Builder::new();
    builder.prefix("callus-team-");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        builder.permissions(std::fs::Permissions::from_mode(0o700));
    }
    let dir = builder
        .tempdir()
        .map_err(|e| Error::io(std::env::temp_dir(), e))?;
    let file = |name: &str| dir.path().join(format!("{name}.copy"));
    for name in ["sessions", "tool_calls", "audit"] {
        if file(name).to_string_lossy().contains(['\'', '\n', '\r']) {
            return Err(Error::Invalid(format!(
                "the temporary directory {} has a quote or newline in its name; set TMPDIR",
                dir.path().display()
            )));
        }
    }
    let script = format!(
        "SET client_min_messages = warning;\n\
         BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY;\n\
         SELECT to_regclass('callus.sessions') IS NOT NULL AND to_regclass('callus.tool_calls') IS NOT NULL \
         AND to_regclass('callus.audit') IS NOT NULL AND to_regclass('callus.meta') IS NOT NULL AS present \\gset\n\
         \\if :present\n\
         {check}\n\
         SELECT 'total', (SELECT count(*) FROM callus.tool_calls), (SELECT count(*) FROM callus.audit);\n\
         \\copy (SELECT DISTINCT ON (id) origin, {sessions} FROM callus.sessions WHERE {session_cond} ORDER BY id, origin) TO '{sf}'\n\
         \\copy (SELECT DISTINCT ON (tool_use_id) origin, {calls} FROM callus.tool_calls WHERE {call_cond} ORDER BY tool_use_id, status = 'pending', origin) TO '{cf}'\n\
         \\copy (SELECT origin, {audit} FROM callus.audit WHERE {audit_cond} ORDER BY ts_ms, origin, seq) TO '{af}'\n\
         \\else\n\
         \\echo {NO_SCHEMA}\n\
         \\endif\n\
         COMMIT;\n",
        check = schema::version_check(),
        call_cond = scope.calls.condition(CALL_TIME),
        audit_cond = scope.audit.condition("ts_ms"),
        session_cond = session_condition(&scope.calls),
        sessions = SESSIONS.column_list(),
        calls = TOOL_CALLS.column_list(),
        audit = AUDIT.column_list(),
        sf = file("sessions").display(),
        cf = file("tool_calls").display(),
        af = file("audit").display(),
    );
    super::progress::Progress::note(
        progress,
        &format!("reading the team store {}…", url.shown()),
    );
    let out = super::psql::run(url, "pull", |w| {
        w.write_all(script.as_bytes())
            .map_err(|e| Error::io("psql (stdin)", e))
    })?;
    if out.lines().any(|l| l.trim() == NO_SCHEMA) {
        return Err(Error::Invalid(format!(
            "no team evidence at {} yet: `callus sync push --db …` fills it",
            url.shown()
        )));
    }
    let (team_calls, team_audit) = out
        .lines()
        .find_map(|l| {
            let mut f = l.split('|');
            (f.next() == Some("total")).then_some(())?;
            Some((f.next()?.parse().ok()?, f.next()?.parse().ok()?))
        })
        .unwrap_or((0, 0));
    let path = dir.path().join("callus.db");
    let mut conn = crate::store::open(&path)?;
    let tx = conn
        .transaction()
        .map_err(|e| Error::sql("begin team copy", e))?;
    let mut origins = BTreeSet::new();
    let bytes: u64 = ["sessions", "tool_calls", "audit"]
        .iter()
        .filter_map(|n| std::fs::metadata(file(n)).ok())
        .map(|m| m.len())
        .sum();
    let mut loaded = super::progress::Progress::new("team copy: bytes loaded", bytes, progress);
    let mut moved = 0;
    let (_, n) = load(&tx, &file("sessions"), &SESSIONS, &mut origins, &mut loaded)?;
    moved += n;
    let (calls, n) = load(
        &tx,
        &file("tool_calls"),
        &TOOL_CALLS,
        &mut origins,
        &mut loaded,
    )?;
    moved += n;
    let (audit, n) = load(&tx, &file("audit"), &AUDIT, &mut origins, &mut loaded)?;
    moved += n;
    loaded.finish();
    tx.commit().map_err(|e| Error::sql("commit team copy", e))?;
    drop(conn);
    Ok(TeamCopy {
        dir,
        path,
        origins: origins.len(),
        calls,
        audit,
        team_calls,
        team_audit,
        moved,
    })
}

/// Sessions the calls in `calls` name, or active in it: a session outside the window that a
/// windowed call names still arrives (its row is what `record stats` counts by).
fn session_condition(calls: &Range) -> String {
    if calls.is_all() {
        return "true".to_string();
    }
    let active = calls.condition("GREATEST(started_ms, ended_ms, last_event_ms)");
    format!(
        "(({active}) OR id IN (SELECT session_id FROM callus.tool_calls WHERE {}))",
        calls.condition(CALL_TIME)
    )
}

/// Insert the rows of one COPY file into `table`; audit rows are renumbered and unchained.
/// Returns (rows inserted, rows read).
fn load(
    conn: &Connection,
    file: &Path,
    table: &Table,
    origins: &mut BTreeSet<String>,
    loaded: &mut super::progress::Progress,
) -> Result<(u64, u64)> {
    let width = table.columns.len();
    let marks = vec!["?"; width].join(", ");
    let mut insert = conn
        .prepare(&format!(
            "INSERT OR IGNORE INTO {} ({}) VALUES ({marks})",
            table.name,
            table.column_list()
        ))
        .map_err(|e| Error::sql(format!("prepare team {}", table.name), e))?;
    let at = |name: &str| table.columns.iter().position(|(n, _)| *n == name);
    let unchain = (table.name == AUDIT.name)
        .then(|| at("seq").zip(at("prev")))
        .flatten();
    let reader =
        std::io::BufReader::new(std::fs::File::open(file).map_err(|e| Error::io(file, e))?);
    let mut n = 0u64;
    let mut read = 0u64;
    for (i, line) in reader.split(b'\n').enumerate() {
        let line = line.map_err(|e| Error::io(file, e))?;
        read += 1;
        loaded.add(line.len() as u64 + 1);
        let bad =
            |msg: String| Error::Invalid(format!("team {}, row {}: {msg}", table.name, i + 1));
        let mut fields = copy_text::decode_row(&line).map_err(bad)?;
        if fields.len() != width + 1 {
            return Err(bad(format!(
                "{} fields, expected {}",
                fields.len(),
                width + 1
            )));
        }
        origins.insert(fields.remove(0).unwrap_or_default());
        if let Some((seq, prev)) = unchain {
            fields[seq] = Some((n + 1).to_string());
            fields[prev] = Some(MERGED_PREV.to_string());
        }
        n += insert
            .execute(rusqlite::params_from_iter(fields.iter()))
            .map_err(|e| Error::sql(format!("copy team {}", table.name), e))? as u64;
    }
    Ok((n, read))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::audit;

    fn record(ts: &str, id: &str) -> audit::AuditRecord {
        serde_json::from_value(serde_json::json!({
            "ts": ts, "kind": "decision", "host": "claude-code", "session_id": "s",
            "tool_use_id": id, "cwd": null, "tool": "Bash", "fired": [],
            "decision": "nudge", "winner": null, "dryrun": false, "ruleset_hash": "h",
            "version": "0", "command_sha256": null, "command_preview": null,
            "error": null, "acs": {"decision": "allow"}
        }))
        .unwrap()
    }

    /// Two origins' one-record chains, merged: prune's reader sees both records, and the
    /// merged table fails verification at once instead of passing for one chain.
    #[test]
    fn merged_audit_is_readable_but_never_verifies_as_a_chain() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("audit.copy");
        let mut lines = Vec::new();
        for (origin, ts, id) in [
            ("a@x", "2026-07-01T00:00:00.000Z", "t1"),
            ("b@y", "2026-07-01T01:00:00.000Z", "t2"),
        ] {
            let store = crate::store::open_in_memory().unwrap();
            audit::append(&store, &record(ts, id)).unwrap();
            assert!(audit::verify(&store, None).unwrap().broken.is_none());
            let (seq, ts_ms, rec, prev, hash): (i64, i64, String, String, String) = store
                .query_row(
                    "SELECT seq, ts_ms, record, prev, hash FROM audit",
                    [],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
                )
                .unwrap();
            let (seq, ts_ms) = (seq.to_string(), ts_ms.to_string());
            copy_text::encode_row(
                &mut lines,
                &[
                    Some(origin),
                    Some(&seq),
                    Some(&ts_ms),
                    Some(id),
                    Some("s"),
                    Some(&rec),
                    Some(&prev),
                    Some(&hash),
                ],
            )
            .unwrap();
        }
        std::fs::write(&file, lines).unwrap();
        let conn = crate::store::open_in_memory().unwrap();
        let mut origins = BTreeSet::new();
        let mut quiet = crate::sync::progress::Progress::new("t", 0, false);
        assert_eq!(
            load(&conn, &file, &AUDIT, &mut origins, &mut quiet).unwrap(),
            (2, 2)
        );
        assert_eq!(origins.len(), 2);
        let seqs: Vec<i64> = conn
            .prepare("SELECT seq FROM audit ORDER BY seq")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(seqs, [1, 2], "both origins' seq 1 kept, renumbered");
        let check = audit::verify(&conn, None).unwrap();
        assert_eq!(
            check.broken.as_ref().map(|(seq, _)| *seq),
            Some(1),
            "{check:?}"
        );
        assert_eq!(check.head, None);
    }

    #[test]
    fn a_scope_becomes_the_servers_where_clause() {
        let w = Range {
            since: Some(100),
            until: Some(200),
        };
        assert_eq!(
            w.condition(CALL_TIME),
            "COALESCE(started_ms, ended_ms) >= 100 AND COALESCE(started_ms, ended_ms) < 200"
        );
        assert_eq!(Range::default().condition("ts_ms"), "true");
        let open_end = Range {
            since: Some(5),
            until: None,
        };
        assert_eq!(open_end.condition("ts_ms"), "ts_ms >= 5");
        assert_eq!(session_condition(&Range::default()), "true");
        let s = session_condition(&w);
        assert!(
            s.contains("GREATEST(started_ms, ended_ms, last_event_ms) >= 100"),
            "{s}"
        );
        assert!(s.contains("OR id IN (SELECT session_id"), "{s}");
    }
}
