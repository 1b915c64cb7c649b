//! Reading a file that anything running as the user may have replaced: a rule layer, the
//! settings file, a halt marker.
//!
//! The agent a hook guards runs as the same user and can put a FIFO, a device, a symlink or
//! a huge file where callus expects a small text file. A FIFO would block the reader for
//! ever, `/dev/zero` would fill memory, a symlink could point anywhere. So [`read`]:
//! - opens without blocking (`O_NONBLOCK`, so opening a FIFO returns at once) and without
//!   following a final symlink it did not resolve itself (`O_NOFOLLOW`);
//! - accepts only a regular file, checked on the opened descriptor (no swap between the
//!   check and the read);
//! - when given a root, resolves symlinks first and refuses a file that resolves outside it
//!   (a project's `.callus/rules.json` must stay in the project, the user's layers in
//!   `$CALLUS_HOME`);
//! - reads at most `cap` bytes, refusing a longer file rather than cutting it;
//! - requires UTF-8.
//!
//! A missing file (or a path through a non-directory) is `Ok(None)`; every refusal is an
//! [`Error`] that names the file and says why, never a hang.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use crate::{Error, Result};

/// Read `path` as described in the module docs.
pub(crate) fn read(path: &Path, root: Option<&Path>, cap: u64) -> Result<Option<String>> {
    let refuse = |why: String| Error::Invalid(format!("{}: {why}", path.display()));
    let absent = |e: &std::io::Error| {
        matches!(
            e.kind(),
            std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
        )
    };
    let target: PathBuf = match root {
        None => path.to_path_buf(),
        Some(root) => {
            // Most layer files do not exist (no project layer, no halt marker): one `lstat`
            // says so, where resolving the path costs a `readlink` per component. A path
            // that `lstat` finds (a dangling final symlink included) is resolved as before.
            match std::fs::symlink_metadata(path) {
                Err(e) if absent(&e) => return Ok(None),
                _ => {}
            }
            let resolved = match std::fs::canonicalize(path) {
                Ok(p) => p,
                Err(e) if absent(&e) => return Ok(None),
                Err(e) => return Err(Error::io(path, e)),
            };
            let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
            if !resolved.starts_with(&root) {
                return Err(refuse(format!(
                    "resolves to {}, outside {}; refused",
                    resolved.display(),
                    root.display()
                )));
            }
            resolved
        }
    };
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // A symlink is followed only when `root` resolved it above.
        let nofollow = if root.is_some() { libc::O_NOFOLLOW } else { 0 };
        options.custom_flags(libc::O_NONBLOCK | nofollow);
    }
    let mut file = match options.open(&target) {
        Ok(f) => f,
        Err(e) if absent(&e) => return Ok(None),
        Err(e) => return Err(Error::io(path, e)),
    };
    let meta = file.metadata().map_err(|e| Error::io(path, e))?;
    if !meta.is_file() {
        return Err(refuse(
            "is not a regular file (a FIFO, a device or a directory); refused".into(),
        ));
    }
    if meta.len() > cap {
        return Err(refuse(format!(
            "is {} bytes, over the {cap}-byte cap; refused",
            meta.len()
        )));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    (&mut file)
        .take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, e))?;
    if bytes.len() as u64 > cap {
        return Err(refuse(format!("grew over the {cap}-byte cap; refused")));
    }
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| refuse("is not UTF-8 text".into()))
}

/// Open `path` to read it without blocking: a FIFO opens at once (`O_NONBLOCK`, then
/// refused), and anything but a regular file is an error of kind `InvalidInput`.
pub(crate) fn open_regular(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    regular(options.open(path)?)
}

/// Open `path` to append to it (created 0600 when missing) without blocking: a FIFO with no
/// reader fails at once, one with a reader, a device or a directory is refused.
pub(crate) fn open_append(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600).custom_flags(libc::O_NONBLOCK);
    }
    regular(options.open(path)?)
}

fn regular(file: std::fs::File) -> std::io::Result<std::fs::File> {
    if file.metadata()?.is_file() {
        Ok(file)
    } else {
        Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file (a FIFO, a device or a directory); refused",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regular_files_are_read_and_others_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let file = root.join("rules.json");
        assert_eq!(read(&file, Some(root), 100).unwrap(), None);
        std::fs::write(&file, "{}").unwrap();
        // A path through a file is absent too, not an error.
        assert_eq!(read(&file.join("x"), Some(root), 100).unwrap(), None);
        assert_eq!(read(&file, Some(root), 100).unwrap().as_deref(), Some("{}"));
        assert_eq!(read(&file, None, 100).unwrap().as_deref(), Some("{}"));
        let e = read(&file, None, 1).unwrap_err().to_string();
        assert!(e.contains("over the 1-byte cap"), "{e}");
        // A directory, and a symlink out of the root.
        let e = read(root, None, 100).unwrap_err().to_string();
        assert!(e.contains("not a regular file"), "{e}");
        #[cfg(unix)]
        {
            let link = root.join("link.json");
            std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
            let e = read(&link, Some(root), 100).unwrap_err().to_string();
            assert!(e.contains("outside"), "{e}");
            let e = read(&link, None, 100).unwrap_err().to_string();
            assert!(e.contains("not a regular file"), "{e}");
            // A dangling symlink is as absent as a missing file, whatever it names.
            let dangling = root.join("dangling.json");
            std::os::unix::fs::symlink("/nonexistent/rules.json", &dangling).unwrap();
            assert_eq!(read(&dangling, Some(root), 100).unwrap(), None);
            // A symlink that stays inside the root is followed.
            let inside = root.join("inside.json");
            std::os::unix::fs::symlink(&file, &inside).unwrap();
            assert_eq!(
                read(&inside, Some(root), 100).unwrap().as_deref(),
                Some("{}")
            );
        }
        std::fs::write(&file, [0xff, 0xfe]).unwrap();
        let e = read(&file, None, 100).unwrap_err().to_string();
        assert!(e.contains("not UTF-8"), "{e}");
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_refused_at_once_for_reading_and_appending() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("errors.log");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        assert!(open_regular(&fifo).is_err());
        assert!(open_append(&fifo).is_err());
        assert!(open_regular(dir.path()).is_err());
        let file = dir.path().join("log");
        open_append(&file).unwrap();
        assert!(open_regular(&file).is_ok());
    }
}
