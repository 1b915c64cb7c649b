//! The fingerprint of a tree — size, mtime and content hash of every file — and the diff of
//! two fingerprints: how scope sees what a run actually wrote.
//!
//! The filesystem is authoritative: a write through `Write`, a Bash heredoc, `sed -i` or a
//! script the agent ran all show up, because nothing depends on the hook stream. The walk
//! never follows symlinks (a symlink is fingerprinted by its target text), scans
//! dot-directories (only the declaration's `skip` globs are left out; by default `**/.git`),
//! and leaves out callus's own state directory when it lies under the root. A directory that
//! cannot be read fails the scan rather than silently hiding writes. Hashing runs on every
//! core; a file larger than [`MAX_HASH_BYTES`] is compared by size and mtime only.
//!
//! A file whose bytes are unchanged is not modified, even if its mtime moved (`touch`, an
//! identical rewrite).

use std::collections::BTreeMap;
use std::io::Read as _;
use std::path::{Path, PathBuf};

use crate::digest::{Digest as _, Sha256};
use serde::{Deserialize, Serialize};

use super::declare::Kind;
use super::glob::Glob;

/// More files than this under the root fail the scan (narrow it with `skip`).
pub(crate) const MAX_FILES: usize = 200_000;
/// Files larger than this are compared by size and mtime only.
pub(crate) const MAX_HASH_BYTES: u64 = 8 * 1024 * 1024;

/// One file's fingerprint: `[size, mtime_ns, sha256 hex or null]` on disk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Entry(pub(crate) u64, pub(crate) i64, pub(crate) Option<String>);

/// Root-relative `/`-separated path → fingerprint.
pub(crate) type Snapshot = BTreeMap<String, Entry>;

/// What to leave out of a scan, and how big a tree may be.
#[derive(Debug, Clone)]
pub(crate) struct Scope<'a> {
    /// Globs of directories and files not fingerprinted.
    pub(crate) skip: &'a [Glob],
    /// Absolute directories not entered (callus's own state).
    pub(crate) exclude: Vec<PathBuf>,
    /// The file-count limit.
    pub(crate) max_files: usize,
}

/// One path that differs between two fingerprints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Change {
    /// Root-relative path.
    pub(crate) path: String,
    /// Created, modified or deleted.
    pub(crate) kind: Kind,
    /// True when the verdict rests on content hashes, false on size/mtime only.
    pub(crate) hashed: bool,
}

/// Fingerprint every file under `root` (canonical). The error says why the scan is unusable.
pub(crate) fn scan(root: &Path, scope: &Scope<'_>) -> Result<Snapshot, String> {
    let files = walk(root, scope)?;
    let threads = std::thread::available_parallelism()
        .map_or(1, std::num::NonZero::get)
        .clamp(1, 8);
    let chunk = files.len().div_ceil(threads).max(1);
    let parts: Vec<Vec<(String, Entry)>> = std::thread::scope(|s| {
        let handles: Vec<_> = files
            .chunks(chunk)
            .map(|part| s.spawn(move || part.iter().filter_map(fingerprint).collect()))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_default())
            .collect()
    });
    Ok(parts.into_iter().flatten().collect())
}

/// A file found by the walk: absolute path, root-relative path.
type Found = (PathBuf, String);

/// List regular files and symlinks under `root`, depth-first, never following symlinks.
fn walk(root: &Path, scope: &Scope<'_>) -> Result<Vec<Found>, String> {
    let mut files = Vec::new();
    let mut stack: Vec<(PathBuf, String)> = vec![(root.to_path_buf(), String::new())];
    while let Some((dir, prefix)) = stack.pop() {
        let entries = std::fs::read_dir(&dir).map_err(|e| {
            format!(
                "cannot read directory {}: {e} (leave it out with a `skip` glob)",
                dir.display()
            )
        })?;
        for entry in entries {
            let entry =
                entry.map_err(|e| format!("cannot read directory {}: {e}", dir.display()))?;
            let Ok(kind) = entry.file_type() else {
                continue; // vanished while we looked
            };
            let name = entry.file_name();
            let rel = format!("{prefix}{}", name.to_string_lossy());
            if scope.skip.iter().any(|g| g.matches(&rel)) {
                continue;
            }
            let path = entry.path();
            if kind.is_dir() {
                if !scope.exclude.iter().any(|x| x == &path) {
                    stack.push((path, format!("{rel}/")));
                }
            } else if kind.is_file() || kind.is_symlink() {
                files.push((path, rel));
                if files.len() > scope.max_files {
                    return Err(format!(
                        "more than {} files under {}; leave directories out with `skip` globs",
                        scope.max_files,
                        root.display()
                    ));
                }
            }
        }
    }
    Ok(files)
}

/// Fingerprint one file; `None` when it vanished since the walk.
fn fingerprint((path, rel): &Found) -> Option<(String, Entry)> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as i64);
    let hash = if meta.file_type().is_symlink() {
        std::fs::read_link(path).ok().map(|target| {
            let mut h = Sha256::new();
            h.update(b"symlink\0");
            h.update(target.as_os_str().as_encoded_bytes());
            hex(&h.finalize())
        })
    } else if meta.len() <= MAX_HASH_BYTES {
        hash_file(path, meta.len())
    } else {
        None
    };
    Some((rel.clone(), Entry(meta.len(), mtime, hash)))
}

/// SHA-256 of a file's bytes; `None` when it cannot be read (compared by size/mtime then).
fn hash_file(path: &Path, len: u64) -> Option<String> {
    // A FIFO or device in the tree is refused at once, not read (never a hang).
    let mut file = crate::untrusted::open_regular(path).ok()?;
    let mut buf = Vec::with_capacity(len as usize + 1);
    file.by_ref()
        .take(MAX_HASH_BYTES + 1)
        .read_to_end(&mut buf)
        .ok()?;
    Some(hex(&Sha256::digest(&buf)))
}

/// Lowercase hex.
fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[usize::from(b >> 4)] as char);
        s.push(DIGITS[usize::from(b & 0xf)] as char);
    }
    s
}

/// The changes from `before` to `after`: created, then deleted, then modified, each sorted
/// by path. Content hashes decide when both sides have one; otherwise size or mtime.
pub(crate) fn diff(before: &Snapshot, after: &Snapshot) -> Vec<Change> {
    let change = |path: &String, kind, hashed| Change {
        path: path.clone(),
        kind,
        hashed,
    };
    let mut out: Vec<Change> = after
        .keys()
        .filter(|p| !before.contains_key(*p))
        .map(|p| change(p, Kind::Create, true))
        .collect();
    out.extend(
        before
            .keys()
            .filter(|p| !after.contains_key(*p))
            .map(|p| change(p, Kind::Delete, true)),
    );
    for (path, old) in before {
        let Some(new) = after.get(path) else { continue };
        match (&old.2, &new.2) {
            (Some(a), Some(b)) if a != b => out.push(change(path, Kind::Modify, true)),
            (Some(_), Some(_)) => {}
            _ if old.0 != new.0 || old.1 != new.1 => out.push(change(path, Kind::Modify, false)),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope(skip: &[Glob]) -> Scope<'_> {
        Scope {
            skip,
            exclude: Vec::new(),
            max_files: MAX_FILES,
        }
    }

    fn default_skip() -> Vec<Glob> {
        vec![Glob::new("**/.git").unwrap()]
    }

    fn write(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn create_modify_delete() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        write(root, "keep.txt", "k");
        write(root, "edit.txt", "a");
        write(root, "gone.txt", "g");
        let skip = default_skip();
        let before = scan(root, &scope(&skip)).unwrap();
        write(root, "edit.txt", "b");
        std::fs::remove_file(root.join("gone.txt")).unwrap();
        write(root, "new/deep.txt", "n");
        let after = scan(root, &scope(&skip)).unwrap();
        let got: Vec<(String, Kind)> = diff(&before, &after)
            .into_iter()
            .map(|c| (c.path, c.kind))
            .collect();
        assert_eq!(
            got,
            vec![
                ("new/deep.txt".to_string(), Kind::Create),
                ("gone.txt".to_string(), Kind::Delete),
                ("edit.txt".to_string(), Kind::Modify),
            ]
        );
    }

    #[test]
    fn identical_rewrite_is_not_a_modification() {
        let tmp = tempfile::tempdir().unwrap();
        write(tmp.path(), "a.txt", "same");
        let skip = default_skip();
        let before = scan(tmp.path(), &scope(&skip)).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        write(tmp.path(), "a.txt", "same");
        let after = scan(tmp.path(), &scope(&skip)).unwrap();
        assert_ne!(before["a.txt"].1, after["a.txt"].1, "mtime moved");
        assert!(diff(&before, &after).is_empty());
    }

    #[test]
    fn unhashed_entries_fall_back_to_size_and_mtime() {
        let before: Snapshot = [("big".to_string(), Entry(10, 1, None))].into();
        let after: Snapshot = [("big".to_string(), Entry(10, 2, None))].into();
        let d = diff(&before, &after);
        assert_eq!(d.len(), 1);
        assert!(!d[0].hashed);
        assert!(diff(&before, &before).is_empty());
    }

    #[test]
    fn dot_directories_are_scanned_but_git_internals_are_not() {
        let tmp = tempfile::tempdir().unwrap();
        write(tmp.path(), ".git/HEAD", "ref");
        write(tmp.path(), "sub/.git/config", "x");
        write(tmp.path(), ".claude/settings.json", "{}");
        write(tmp.path(), "node_modules/x/index.js", "1");
        let skip = default_skip();
        let snap = scan(tmp.path(), &scope(&skip)).unwrap();
        let keys: Vec<&str> = snap.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            vec![".claude/settings.json", "node_modules/x/index.js"]
        );
        // Skipping is configurable, both ways.
        let none: Vec<Glob> = Vec::new();
        assert_eq!(scan(tmp.path(), &scope(&none)).unwrap().len(), 4);
        let more = vec![Glob::new("node_modules").unwrap()];
        assert_eq!(scan(tmp.path(), &scope(&more)).unwrap().len(), 3);
    }

    #[test]
    fn excluded_state_directory_is_not_entered() {
        let tmp = tempfile::tempdir().unwrap();
        write(tmp.path(), "home/scope/r/observed.jsonl", "x");
        write(tmp.path(), "a", "x");
        let skip = default_skip();
        let mut sc = scope(&skip);
        sc.exclude = vec![tmp.path().join("home")];
        let keys: Vec<String> = scan(tmp.path(), &sc).unwrap().into_keys().collect();
        assert_eq!(keys, vec!["a".to_string()]);
    }

    #[test]
    fn scan_limit_fails_the_scan() {
        let tmp = tempfile::tempdir().unwrap();
        for i in 0..5 {
            write(tmp.path(), &format!("f{i}"), "x");
        }
        let skip = default_skip();
        let mut sc = scope(&skip);
        sc.max_files = 2;
        assert!(
            scan(tmp.path(), &sc)
                .unwrap_err()
                .contains("more than 2 files")
        );
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_are_fingerprinted_by_target_not_followed() {
        let tmp = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        write(outside.path(), "secret.txt", "s");
        std::os::unix::fs::symlink(outside.path(), tmp.path().join("dirlink")).unwrap();
        std::os::unix::fs::symlink("a", tmp.path().join("l")).unwrap();
        let skip = default_skip();
        let before = scan(tmp.path(), &scope(&skip)).unwrap();
        assert!(before.contains_key("dirlink") && before.contains_key("l"));
        assert!(!before.keys().any(|k| k.contains("secret")));
        std::fs::remove_file(tmp.path().join("l")).unwrap();
        std::os::unix::fs::symlink("b", tmp.path().join("l")).unwrap();
        let after = scan(tmp.path(), &scope(&skip)).unwrap();
        let d = diff(&before, &after);
        assert_eq!(d.len(), 1);
        assert_eq!((d[0].path.as_str(), d[0].kind), ("l", Kind::Modify));
    }
}
