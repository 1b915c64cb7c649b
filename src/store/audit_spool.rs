//! Audit records the guard could not append because another process held the store past
//! the hook's busy timeout: kept whole in `$CALLUS_HOME/audit-spool/`, one file each, and
//! appended to the chain, oldest first, by the next guard or recorder call that gets the
//! store (after that call's own write).
//!
//! Guarantees: a kept record is written whole and synced before the guard answers (the
//! decision it states is never lost with the busy store); a merge appends each record once
//! (a file is claimed by rename before it is appended, removed after; a dead process's
//! claim is taken over: `store::spool_files`); the spool is bounded
//! ([`CAP`] records) and read with the untrusted-file rules (regular files only, size cap),
//! so a FIFO or a huge file left there cannot hang or bloat a hook. The guard still applies
//! its fail policy to a busy store (closed: the call is refused): spooling keeps the
//! record, it does not turn the failure into a success.
//!
//! A file here can be written by the agent as the same user, like the store itself: a
//! forged record ends up in the chain as what it is, a record the chain then vouches for
//! only from its position on; it cannot remove or rewrite one already appended.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use rusqlite::Connection;

use crate::config::Home;
use crate::error::{Error, Result};
use crate::store::audit::{self, AuditRecord};
use crate::store::spool_files::{self, Replayed};

/// Most records the spool holds; past it a record is dropped (and said so).
pub(crate) const CAP: usize = 10_000;
/// Most records one merge appends (the rest wait for the next call).
const MERGE_BATCH: usize = 256;
/// Largest spooled record read back (a record is capped far below this).
const RECORD_CAP: u64 = 256 << 10;

/// The audit spool directory of `home`.
#[must_use]
pub(crate) fn dir(home: &Home) -> PathBuf {
    home.dir.join("audit-spool")
}

/// Keep `record` for a later append. Returns the file written.
pub(crate) fn keep(home: &Home, record: &AuditRecord) -> Result<PathBuf> {
    let dir = dir(home);
    crate::config::ensure_private_dir(&dir)?;
    let held = std::fs::read_dir(&dir)
        .map_err(|e| Error::io(&dir, e))?
        .take(CAP + 1)
        .count();
    if held >= CAP {
        return Err(Error::Invalid(format!(
            "the audit spool {} is full ({CAP} records): record dropped",
            dir.display()
        )));
    }
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let path = dir.join(format!(
        "{:013}-{}-{:09}.json",
        now.as_millis(),
        std::process::id(),
        now.subsec_nanos()
    ));
    let bytes = record.canonical();
    if crate::config::replace_file(&path, bytes.as_bytes()).is_err() {
        // A merge that emptied the spool removes its directory; if that raced, make it again.
        crate::config::ensure_private_dir(&dir)?;
        crate::config::replace_file(&path, bytes.as_bytes())?;
    }
    Ok(path)
}

/// How many records wait in the spool, claimed ones included (0 when there is none).
pub(crate) fn backlog(home: &Home) -> usize {
    spool_files::waiting(&dir(home))
}

/// Append what the spool holds to the chain in `conn`, oldest first (claims, takeover of
/// a dead process's claim and removal of an emptied directory as in
/// [`spool_files::drain`]). Best effort: a file that is not a record is dropped and
/// reported in the returned problems; a busy store puts the record back. Returns (records
/// appended, problems).
pub(crate) fn merge(home: &Home, conn: &Connection) -> (usize, Vec<String>) {
    let mut problems = Vec::new();
    let appended = spool_files::drain(
        &dir(home),
        MERGE_BATCH,
        |claimed| match read_record(claimed) {
            Err(e) => Replayed::Bad(e.to_string()),
            Ok(record) => match audit::append(conn, &record) {
                Ok(_) => Replayed::Stored,
                Err(e) => Replayed::Retry(format!("audit spool merge: {e}")),
            },
        },
        |p| problems.push(format!("audit spool: {p}")),
    );
    (appended, problems)
}

fn read_record(path: &Path) -> Result<AuditRecord> {
    let text = crate::untrusted::read(path, None, RECORD_CAP)?
        .ok_or_else(|| Error::Invalid(format!("{}: gone before it was read", path.display())))?;
    serde_json::from_str(&text)
        .map_err(|e| Error::Invalid(format!("{}: not an audit record: {e}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(msg: &str, ts: &str) -> AuditRecord {
        serde_json::from_value(serde_json::json!({
            "ts": ts, "kind": "decision", "host": "claude-code", "session_id": null,
            "tool_use_id": null, "cwd": null, "tool": "Bash", "fired": [],
            "decision": "deny", "winner": null, "dryrun": false, "ruleset_hash": "h",
            "version": "test", "command_sha256": null, "command_preview": null,
            "error": Some(msg), "acs": {"decision": "deny"},
        }))
        .unwrap()
    }

    #[test]
    fn kept_records_are_appended_oldest_first_once() {
        let tmp = tempfile::tempdir().unwrap();
        let home = Home::at(tmp.path());
        let db = tmp.path().join("callus.db");
        let conn = crate::store::open(&db).unwrap();
        keep(&home, &record("first", "2026-12-01T10:00:00Z")).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(2));
        keep(&home, &record("second", "2026-12-01T10:00:01Z")).unwrap();
        assert_eq!(backlog(&home), 2);
        let (n, problems) = merge(&home, &conn);
        assert_eq!((n, problems.len()), (2, 0));
        assert_eq!(backlog(&home), 0);
        let stored = audit::tail(&conn, 10).unwrap();
        let messages: Vec<&str> = stored
            .iter()
            .map(|s| s.record.error.as_deref().unwrap_or(""))
            .collect();
        assert!(messages.contains(&"first") && messages.contains(&"second"));
        let first = stored
            .iter()
            .find(|s| s.record.error.as_deref() == Some("first"))
            .unwrap();
        let second = stored
            .iter()
            .find(|s| s.record.error.as_deref() == Some("second"))
            .unwrap();
        assert!(first.seq < second.seq, "oldest first");
        // A second merge appends nothing more, and the spool directory is gone.
        assert_eq!(merge(&home, &conn).0, 0);
        assert!(!dir(&home).exists());
        assert!(audit::verify(&conn, None).unwrap().broken.is_none());
    }

    #[test]
    fn a_file_that_is_no_record_is_dropped_and_reported_not_appended() {
        let tmp = tempfile::tempdir().unwrap();
        let home = Home::at(tmp.path());
        let conn = crate::store::open(&tmp.path().join("callus.db")).unwrap();
        std::fs::create_dir_all(dir(&home)).unwrap();
        std::fs::write(
            dir(&home).join("0000000000001-1-000000001.json"),
            "{not json",
        )
        .unwrap();
        let (n, problems) = merge(&home, &conn);
        assert_eq!((n, problems.len()), (0, 1));
        assert!(problems[0].contains("not an audit record"), "{problems:?}");
        assert_eq!(backlog(&home), 0);
        assert!(audit::tail(&conn, 10).unwrap().is_empty());
    }

    #[test]
    fn a_full_spool_drops_the_record_and_says_so() {
        let tmp = tempfile::tempdir().unwrap();
        let home = Home::at(tmp.path());
        let spool = dir(&home);
        std::fs::create_dir_all(&spool).unwrap();
        for i in 0..CAP - 1 {
            std::fs::write(spool.join(format!("{i:013}-1-000000000.json")), b"").unwrap();
        }
        // One place left: taken.
        keep(&home, &record("last", "2026-12-01T10:00:00Z")).unwrap();
        let err = keep(&home, &record("over", "2026-12-01T10:00:01Z")).unwrap_err();
        assert!(
            err.to_string()
                .contains("is full (10000 records): record dropped"),
            "{err}"
        );
        assert_eq!(std::fs::read_dir(&spool).unwrap().count(), CAP);
    }
}
