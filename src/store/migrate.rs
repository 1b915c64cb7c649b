//! Forward-only schema migrations tracked by `PRAGMA user_version`.
//!
//! Each entry of [`MIGRATIONS`] is one numbered file in `migrations/`; the store's
//! `user_version` is the count applied. A migration and its version bump commit together,
//! under `BEGIN IMMEDIATE`, so two processes opening a fresh store cannot both apply it.
//! A store newer than this binary is refused rather than guessed at.

use rusqlite::{Connection, TransactionBehavior};

use crate::{Error, Result};

/// The embedded migrations, in order. Never edit one that has shipped: add a new file.
pub(crate) const MIGRATIONS: &[(&str, &str)] = &[
    (
        "0001_initial",
        include_str!("../../migrations/0001_initial.sql"),
    ),
    (
        "0002_record_imports",
        include_str!("../../migrations/0002_record_imports.sql"),
    ),
    (
        "0003_derive_failure_index",
        include_str!("../../migrations/0003_derive_failure_index.sql"),
    ),
    (
        "0004_drop_failure_time_index",
        include_str!("../../migrations/0004_drop_failure_time_index.sql"),
    ),
    (
        "0005_forget_plain_digests",
        include_str!("../../migrations/0005_forget_plain_digests.sql"),
    ),
    (
        "0006_outcome_classes",
        include_str!("../../migrations/0006_outcome_classes.sql"),
    ),
    (
        "0007_blame_and_context",
        include_str!("../../migrations/0007_blame_and_context.sql"),
    ),
];

/// The schema version the store is at.
pub(crate) fn current_version(conn: &Connection) -> Result<i64> {
    conn.query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(|e| Error::sql("read user_version", e))
}

/// Apply every migration the store has not seen yet.
pub(crate) fn migrate(conn: &Connection) -> Result<()> {
    let target = MIGRATIONS.len() as i64;
    if current_version(conn)? == target {
        return Ok(());
    }
    // Re-read under the write lock: another process may have migrated meanwhile.
    let tx = rusqlite::Transaction::new_unchecked(conn, TransactionBehavior::Immediate)
        .map_err(|e| Error::sql("begin migration", e))?;
    let version = current_version(&tx)?;
    if version > target {
        return Err(Error::Invalid(format!(
            "the store is at schema version {version}, newer than this callus ({target}); upgrade callus"
        )));
    }
    for (i, (name, sql)) in MIGRATIONS.iter().enumerate().skip(version as usize) {
        tx.execute_batch(sql)
            .map_err(|e| Error::sql(format!("apply migration {name}"), e))?;
        tx.pragma_update(None, "user_version", i as i64 + 1)
            .map_err(|e| Error::sql("bump user_version", e))?;
    }
    tx.commit().map_err(|e| Error::sql("commit migration", e))?;
    // Move what the migrations rewrote into the main file now (best effort): a migration
    // that forgets data (0005) must not leave the old bytes behind in pages the WAL has
    // only shadowed. Once per migration, so never on the hook path of a current store.
    let _ = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| {
        r.get::<_, i64>(0)
    });
    Ok(())
}
