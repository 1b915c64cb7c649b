//! Where callus keeps its state and how it is configured.
//!
//! Everything lives under `$CALLUS_HOME` (default `~/.callus`): the `SQLite` store, the user's
//! ruleset, the derived candidates, the error log and the optional `config` settings file.
//! Environment variables override the settings file. Resolving paths does no I/O beyond
//! reading the environment, so the hook path can call it freely.

use std::path::{Path, PathBuf};

/// What the guard does when it cannot decide (bad input, broken ruleset, store failure, panic).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailPolicy {
    /// The call proceeds; a one-line `callus:` note goes to stderr and an error record to the
    /// audit chain when the store is writable. The default: a guard must never wedge a session.
    Open,
    /// The call is blocked with the reason.
    Closed,
}

/// Resolved locations of callus's state.
#[derive(Debug, Clone)]
pub struct Home {
    /// The state directory (`$CALLUS_HOME`, default `~/.callus`).
    pub dir: PathBuf,
}

impl Home {
    /// Resolve from `$CALLUS_HOME`, else `$HOME/.callus`, else `./.callus`.
    #[must_use]
    pub fn from_env() -> Self {
        if let Some(dir) = std::env::var_os("CALLUS_HOME").filter(|v| !v.is_empty()) {
            return Home {
                dir: PathBuf::from(dir),
            };
        }
        let base = std::env::var_os("HOME").map_or_else(|| PathBuf::from("."), PathBuf::from);
        Home {
            dir: base.join(".callus"),
        }
    }

    /// A home rooted at `dir` (tests and the demo).
    #[must_use]
    pub fn at(dir: impl Into<PathBuf>) -> Self {
        Home { dir: dir.into() }
    }

    /// The `SQLite` store (`$CALLUS_DB` overrides).
    #[must_use]
    pub fn db_path(&self) -> PathBuf {
        match std::env::var_os("CALLUS_DB").filter(|v| !v.is_empty()) {
            Some(p) => PathBuf::from(p),
            None => self.dir.join("callus.db"),
        }
    }

    /// The user's ruleset layer.
    #[must_use]
    pub fn rules_path(&self) -> PathBuf {
        self.dir.join("rules.json")
    }

    /// The derived candidates, loaded as a forced-monitor layer.
    #[must_use]
    pub fn candidates_path(&self) -> PathBuf {
        self.dir.join("candidates.json")
    }

    /// Internal errors of the hooks (never shown to the agent).
    #[must_use]
    pub fn errors_log(&self) -> PathBuf {
        self.dir.join("errors.log")
    }

    /// Marker files of sessions halted by a RECUSE signal.
    #[must_use]
    pub fn halts_dir(&self) -> PathBuf {
        self.dir.join("halted")
    }

    /// The optional settings file (`key = "value"` lines).
    #[must_use]
    pub fn settings_path(&self) -> PathBuf {
        self.dir.join("config")
    }

    /// Read one setting from the settings file; `None` when absent or unreadable.
    ///
    /// The format is deliberately tiny: one `key = value` per line, values optionally in
    /// double quotes, `#` starts a comment line.
    #[must_use]
    pub fn setting(&self, key: &str) -> Option<String> {
        let text = std::fs::read_to_string(self.settings_path()).ok()?;
        parse_setting(&text, key)
    }

    /// The guard's failure policy: `CALLUS_FAIL`, else the `fail` setting, else open.
    #[must_use]
    pub fn fail_policy(&self) -> FailPolicy {
        let value = std::env::var("CALLUS_FAIL")
            .ok()
            .filter(|v| !v.is_empty())
            .or_else(|| self.setting("fail"));
        match value.as_deref().map(str::trim) {
            Some(v) if v.eq_ignore_ascii_case("closed") => FailPolicy::Closed,
            _ => FailPolicy::Open,
        }
    }
}

/// Find `key` in settings text (see [`Home::setting`]).
#[must_use]
pub fn parse_setting(text: &str, key: &str) -> Option<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_once('='))
        .find(|(k, _)| k.trim() == key)
        .map(|(_, v)| v.trim().trim_matches('"').to_string())
}

/// The repository root of `cwd`: the nearest ancestor holding `.git` (dir or file), if any.
#[must_use]
pub fn repo_root(cwd: &Path) -> Option<PathBuf> {
    cwd.ancestors()
        .find(|dir| dir.join(".git").exists())
        .map(Path::to_path_buf)
}

/// Create `dir` (and parents) private to the user (0700 on Unix).
pub fn ensure_private_dir(dir: &Path) -> crate::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir).map_err(|e| crate::Error::io(dir, e))
}

/// Whether [`replace_file`] waits for the new bytes to reach the disk before the rename.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// `fsync` first: after a crash the file is the old one or the new one, whole.
    Synced,
    /// No `fsync`: for what callus can always rebuild, written on a
    /// hook's path, which must not wait on the disk.
    Cached,
}

/// Replace `path` with `bytes` atomically: a temporary file beside it, private to the user
/// (0600), renamed over it. The directory must exist.
pub fn replace_file(path: &Path, bytes: &[u8], durability: Durability) -> crate::Result<()> {
    use std::io::Write as _;
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or_else(|| Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| crate::Error::io(dir, e))?;
    tmp.write_all(bytes)
        .map_err(|e| crate::Error::io(tmp.path(), e))?;
    if durability == Durability::Synced {
        tmp.as_file()
            .sync_all()
            .map_err(|e| crate::Error::io(tmp.path(), e))?;
    }
    tmp.persist(path)
        .map_err(|e| crate::Error::io(path, e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_parse_quoted_and_bare_values() {
        let text = "# comment\nfail = \"closed\"\nother=1\n";
        assert_eq!(parse_setting(text, "fail").as_deref(), Some("closed"));
        assert_eq!(parse_setting(text, "other").as_deref(), Some("1"));
        assert_eq!(parse_setting(text, "missing"), None);
    }

    #[test]
    fn repo_root_finds_nearest_git() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("a/.git")).unwrap();
        std::fs::create_dir_all(tmp.path().join("a/b/c")).unwrap();
        assert_eq!(
            repo_root(&tmp.path().join("a/b/c")),
            Some(tmp.path().join("a"))
        );
    }
}
