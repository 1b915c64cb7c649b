//! The import state of one file: what `import_files` remembers of it (canonical path, size,
//! modification time, format), so a re-import skips a file unchanged since, and a changed
//! one is read again.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension, params};

use super::Format;
use crate::{Error, Result};

/// A file as the import state knows it: its canonical path, size and modification time.
pub(super) struct Stamp {
    key: String,
    /// The file's size in bytes.
    pub(super) size: i64,
    mtime_ns: i64,
}

impl Stamp {
    /// The file at `path` as it is now.
    pub(super) fn of(path: &Path) -> Result<Self> {
        let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
        Ok(Stamp {
            key: std::fs::canonicalize(path)
                .unwrap_or_else(|_| path.to_path_buf())
                .to_string_lossy()
                .into_owned(),
            size: meta.len() as i64,
            mtime_ns: meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos() as i64),
        })
    }

    /// Was the file imported before, as this format, with this size and time?
    pub(super) fn unchanged(&self, conn: &Connection, format: Format) -> Result<bool> {
        let previous: Option<(i64, i64, String)> = conn
            .query_row(
                "SELECT size, mtime_ns, format FROM import_files WHERE path = ?1",
                [&self.key],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()
            .map_err(|e| Error::sql("read import state", e))?;
        Ok(previous == Some((self.size, self.mtime_ns, format.as_str().to_string())))
    }

    /// Record the file imported as `format` with `calls` calls, in the import's transaction.
    pub(super) fn remember(&self, tx: &Connection, format: Format, calls: usize) -> Result<()> {
        tx.execute(
            "INSERT INTO import_files (path, size, mtime_ns, format, calls, imported_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             ON CONFLICT (path) DO UPDATE SET size = excluded.size, mtime_ns = excluded.mtime_ns,
                 format = excluded.format, calls = excluded.calls,
                 imported_ms = excluded.imported_ms",
            params![
                self.key,
                self.size,
                self.mtime_ns,
                format.as_str(),
                calls as i64,
                crate::store::now_ms()
            ],
        )
        .map_err(|e| Error::sql("write import state", e))?;
        Ok(())
    }
}
