//! The `SQLite` store: opening it with the right pragmas and keeping its schema current.
//!
//! One file under `$CALLUS_HOME` (WAL, `busy_timeout`, `synchronous = NORMAL`), created
//! private to the user. Migrations are the numbered files in `migrations/`, embedded at
//! compile time and applied forward-only inside one transaction each, tracked by
//! `PRAGMA user_version`; opening an up-to-date store costs one pragma read. Connections
//! never checkpoint on close, so a short-lived hook process does not pay for a WAL checkpoint
//! on every call. That alone would let the WAL grow without bound: the first connection of
//! each process rebuilds the WAL index from the file and so forgets what was already
//! checkpointed, the log never restarts, and every hook call re-reads (and auto-checkpoints
//! again) all of it (measured: 7 MB after 800 audit appends, +3 ms per call and rising).
//! Writers therefore call [`trim_wal`] after committing, which truncates the WAL once it
//! passes [`WAL_TRIM_BYTES`].

pub(crate) mod anchor;
pub(crate) mod anchor_git;
pub(crate) mod audit;
pub(crate) mod audit_query;
pub(crate) mod audit_spool;
pub(crate) mod evidence;
mod migrate;
pub(crate) mod spool_files;

use std::path::Path;
use std::time::Duration;

use rusqlite::Connection;
use rusqlite::config::DbConfig;

use crate::{Error, Result};

pub(crate) use migrate::{MIGRATIONS, current_version, migrate};

/// How long a writer waits for another to finish before giving up.
pub(crate) const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// How long a hook (`callus record`, `callus guard`) waits for a busy store: past it the
/// recorder spools the event (`record::spool`) and the guard's audit append is an internal
/// error under the fail policy, so neither keeps the agent waiting on another process.
pub(crate) const HOOK_BUSY_TIMEOUT: Duration = Duration::from_secs(2);

/// Open (creating if needed) the store at `path` and bring its schema up to date.
pub fn open(path: &Path) -> Result<Connection> {
    open_waiting(path, BUSY_TIMEOUT)
}

/// Whether `error` is the store being busy (another writer held it past the timeout): the
/// expected reason to spool, not a fault worth the error log.
#[must_use]
pub(crate) fn is_busy(error: &Error) -> bool {
    matches!(
        error,
        Error::Sql {
            source: rusqlite::Error::SqliteFailure(f, _),
            ..
        } if matches!(
            f.code,
            rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
        )
    )
}

/// [`open`] for a hook: waits at most [`HOOK_BUSY_TIMEOUT`] for a busy store.
pub(crate) fn open_for_hook(path: &Path) -> Result<Connection> {
    open_waiting(path, HOOK_BUSY_TIMEOUT)
}

fn open_waiting(path: &Path, busy: Duration) -> Result<Connection> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        crate::config::ensure_private_dir(dir)?;
    }
    let fresh = !path.exists();
    if fresh {
        create_private_file(path)?;
    }
    let conn =
        Connection::open(path).map_err(|e| Error::sql(format!("open {}", path.display()), e))?;
    // SQLite only looks at the file's header here ("file is not a database"): say which file.
    configure(&conn, busy)
        .and_then(|()| migrate(&conn))
        .map_err(|e| naming_store(e, path))?;
    Ok(conn)
}

/// `e` with the store's path in front of its operation, so the one-line message names the
/// file.
fn naming_store(e: Error, path: &Path) -> Error {
    match e {
        Error::Sql { op, source } => Error::Sql {
            op: format!("{}: {op}", path.display()),
            source,
        },
        other => other,
    }
}

/// Open an existing store without creating it; `Ok(None)` when there is no store file.
pub(crate) fn open_existing(path: &Path) -> Result<Option<Connection>> {
    if !path.exists() {
        return Ok(None);
    }
    open(path).map(Some)
}

/// An in-memory store with the full schema (tests).
#[cfg(test)]
pub(crate) fn open_in_memory() -> Result<Connection> {
    let conn = Connection::open_in_memory().map_err(|e| Error::sql("open in memory", e))?;
    configure(&conn, BUSY_TIMEOUT)?;
    migrate(&conn)?;
    Ok(conn)
}

fn configure(conn: &Connection, busy: Duration) -> Result<()> {
    conn.busy_timeout(busy)
        .map_err(|e| Error::sql("set busy timeout", e))?;
    enable_wal(conn, busy)?;
    conn.pragma_update(None, "synchronous", "NORMAL")
        .map_err(|e| Error::sql("set synchronous", e))?;
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)
        .map_err(|e| Error::sql("disable checkpoint on close", e))?;
    Ok(())
}

/// Put the store in WAL mode. The mode is persistent, so an existing store is only asked:
/// switching modes takes a lock `SQLite` does not wait for (no busy handler), so setting it on
/// every open made a hook fail with "database is locked" when another process held the
/// store at that moment (seen with eight concurrent hooks under load). The switch itself,
/// needed once per store, is retried until the busy timeout.
fn enable_wal(conn: &Connection, busy: Duration) -> Result<()> {
    // In-memory stores (tests) stay `memory`.
    let done = |m: &str| m.eq_ignore_ascii_case("wal") || m.eq_ignore_ascii_case("memory");
    let current = conn.query_row("PRAGMA journal_mode", [], |r| r.get::<_, String>(0));
    if current.is_ok_and(|m| done(&m)) {
        return Ok(());
    }
    let deadline = std::time::Instant::now() + busy;
    let mut pause = Duration::from_millis(1);
    loop {
        let outcome = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0));
        let retry = match &outcome {
            Ok(m) if done(m) => return Ok(()),
            // The mode did not change, or the store is locked: another process holds it.
            Ok(_) => true,
            Err(rusqlite::Error::SqliteFailure(f, _)) => matches!(
                f.code,
                rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
            ),
            Err(_) => false,
        };
        if !retry || std::time::Instant::now() >= deadline {
            return Err(match outcome {
                Ok(m) => Error::Invalid(format!(
                    "the store stays in {m} journal mode; callus needs WAL"
                )),
                Err(e) => Error::sql("enable WAL", e),
            });
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(50));
    }
}

fn create_private_file(path: &Path) -> Result<()> {
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    opts.open(path).map(drop).map_err(|e| Error::io(path, e))
}

/// WAL size past which [`trim_wal`] empties it (about 60 frames of 4 KiB).
pub(crate) const WAL_TRIM_BYTES: u64 = 256 * 1024;

/// Keep the WAL short for the next short-lived process; call after committing.
///
/// A process that opens the store while no other connection has it open rebuilds the WAL
/// index by reading every frame of the WAL (the `-shm` is reset by the first opener), and a
/// checkpoint by a connection that then closes never lets the next writer restart the WAL:
/// so with one write per process the WAL only grows and every hook re-reads all of it.
/// Once the WAL is past [`WAL_TRIM_BYTES`], this checkpoints it in `TRUNCATE` mode, which
/// empties the file. It never waits: when another connection is busy it leaves the work to
/// the next writer.
pub(crate) fn trim_wal(conn: &Connection, db_path: &Path) -> Result<()> {
    let mut wal = db_path.as_os_str().to_owned();
    wal.push("-wal");
    if std::fs::metadata(&wal).map_or(true, |m| m.len() <= WAL_TRIM_BYTES) {
        return Ok(());
    }
    conn.busy_timeout(Duration::ZERO)
        .map_err(|e| Error::sql("set busy timeout", e))?;
    // (busy, frames in log, frames checkpointed); busy just means "not this time".
    let checkpoint = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| {
        r.get::<_, i64>(0)
    });
    conn.busy_timeout(BUSY_TIMEOUT)
        .map_err(|e| Error::sql("set busy timeout", e))?;
    match checkpoint {
        Ok(_) | Err(rusqlite::Error::SqliteFailure(_, _)) => Ok(()),
        Err(e) => Err(Error::sql("checkpoint the WAL", e)),
    }
}

/// Current time as Unix milliseconds (UTC).
#[must_use]
pub(crate) fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_write_processes_keep_the_wal_short() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("callus.db");
        let wal = tmp.path().join("callus.db-wal");
        // Each "process": open alone, one write, close.
        for i in 0..400 {
            let conn = open(&path).unwrap();
            conn.execute(
                "INSERT INTO sessions (id, host, source) VALUES (?1, 'codex', 'hook')",
                [format!("s{i}")],
            )
            .unwrap();
            trim_wal(&conn, &path).unwrap();
        }
        let len = std::fs::metadata(&wal).map_or(0, |m| m.len());
        assert!(len <= WAL_TRIM_BYTES + 64 * 1024, "WAL grew to {len} bytes");
        let conn = open(&path).unwrap();
        let n: i64 = conn
            .query_row("SELECT count(*) FROM sessions", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 400);
    }

    #[test]
    fn fresh_store_is_private_and_current() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("home/callus.db");
        let conn = open(&path).unwrap();
        assert_eq!(current_version(&conn).unwrap(), MIGRATIONS.len() as i64);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
            let dir_mode = std::fs::metadata(path.parent().unwrap())
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(dir_mode & 0o777, 0o700);
        }
        drop(conn);
        // Reopening applies nothing and keeps the version.
        let conn = open(&path).unwrap();
        assert_eq!(current_version(&conn).unwrap(), MIGRATIONS.len() as i64);
    }

    #[test]
    fn migration_5_forgets_the_plain_digests_of_an_older_store() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("callus.db");
        {
            // A store as callus left it before keyed digests: version 4, a plain digest.
            let conn = Connection::open(&path).unwrap();
            for (_, sql) in &MIGRATIONS[..4] {
                conn.execute_batch(sql).unwrap();
            }
            conn.pragma_update(None, "user_version", 4).unwrap();
            conn.execute(
                "INSERT INTO tool_calls (tool_use_id, host, source, tool, status, input_sha256)
                 VALUES ('t1', 'codex', 'hook', 'Bash', 'success', 'aabbcc')",
                [],
            )
            .unwrap();
        }
        let conn = open(&path).unwrap();
        let digest: Option<String> = conn
            .query_row("SELECT input_sha256 FROM tool_calls", [], |r| r.get(0))
            .unwrap();
        assert_eq!(digest, None);
        drop(conn);
        for file in ["callus.db", "callus.db-wal"] {
            let bytes = std::fs::read(tmp.path().join(file)).unwrap_or_default();
            assert!(
                !bytes.windows(6).any(|w| w == b"aabbcc"),
                "old bytes left in {file}"
            );
        }
    }

    #[test]
    fn trim_wal_bounds_the_wal() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("callus.db");
        let wal = tmp.path().join("callus.db-wal");
        let conn = open(&path).unwrap();
        conn.execute_batch("CREATE TABLE t (x BLOB)").unwrap();
        for _ in 0..100 {
            conn.execute("INSERT INTO t VALUES (zeroblob(8000))", [])
                .unwrap();
        }
        assert!(std::fs::metadata(&wal).unwrap().len() > WAL_TRIM_BYTES);
        trim_wal(&conn, &path).unwrap();
        assert_eq!(std::fs::metadata(&wal).unwrap().len(), 0);
        let n: i64 = conn
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 100);
    }
}
