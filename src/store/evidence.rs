//! Where a reading command (derive, prune, report, record stats) takes its evidence from:
//! this machine's store, another store file, or a temporary copy of the team's store.
//!
//! Guarantees: every reading stage opens [`Evidence::path`] and runs unchanged whichever it
//! is; a team copy is deleted when the [`Evidence`] is dropped; messages name the source by
//! [`Evidence::label`], which never carries a password.

use std::path::{Path, PathBuf};

/// Where a reading command takes its evidence from.
#[derive(Debug)]
pub(crate) enum Evidence {
    /// A local `SQLite` store (the home's, `$CALLUS_DB`, or a `--db` path).
    Local(PathBuf),
    /// A temporary copy of the team's store.
    Team {
        /// Holds the directory (and the store in it) until the evidence is dropped.
        _dir: tempfile::TempDir,
        /// The temporary store.
        path: PathBuf,
        /// The URL it came from, without its password.
        url: String,
    },
}

impl Evidence {
    /// The `SQLite` store to open.
    #[must_use]
    pub(crate) fn path(&self) -> &Path {
        match self {
            Evidence::Local(path) | Evidence::Team { path, .. } => path,
        }
    }

    /// How messages name the store: its path, or the team URL.
    #[must_use]
    pub(crate) fn label(&self) -> String {
        match self {
            Evidence::Local(path) => path.display().to_string(),
            Evidence::Team { url, .. } => url.clone(),
        }
    }
}
