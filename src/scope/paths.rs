//! Turning a path named by a tool call into a path relative to the run root.
//!
//! The path is made absolute against the event's working directory, `.` and `..` are
//! resolved lexically, then the symlinks of its *directories* are resolved (so a write
//! through a symlinked directory that leads outside the root is seen as outside). The final
//! component is never resolved: a symlink inside the tree is judged by its own path, not by
//! where it points. Nothing is stripped character-wise — `.github/x` stays
//! `.github/x` and absolute paths keep their meaning.

use std::path::{Component, Path, PathBuf};

/// The root-relative `/`-separated form of `path` (relative paths resolve against `base`),
/// or `None` when it is the root itself or lies outside `root` (which must be canonical).
pub(crate) fn relative(root: &Path, base: &Path, path: &str) -> Option<String> {
    let joined = base.join(path);
    let clean = lexical(&joined);
    let resolved = match (clean.parent(), clean.file_name()) {
        (Some(parent), Some(name)) => resolve_dirs(parent).join(name),
        _ => clean,
    };
    let rel = resolved.strip_prefix(root).ok()?;
    if rel.as_os_str().is_empty() {
        return None;
    }
    Some(posix(rel))
}

/// `/`-join the normal components of a relative path.
pub(crate) fn posix(rel: &Path) -> String {
    rel.components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// Resolve `.` and `..` without touching the filesystem.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Canonicalise the longest existing ancestor of `dir` and re-append the rest.
fn resolve_dirs(dir: &Path) -> PathBuf {
    let mut missing = Vec::new();
    let mut cur = dir;
    loop {
        if let Ok(real) = std::fs::canonicalize(cur) {
            let mut out = real;
            out.extend(missing.iter().rev());
            return out;
        }
        match (cur.parent(), cur.file_name()) {
            (Some(parent), Some(name)) => {
                missing.push(name.to_os_string());
                cur = parent;
            }
            _ => return dir.to_path_buf(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_and_posix() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        assert_eq!(
            relative(&root, &root, "src/a.rs").as_deref(),
            Some("src/a.rs")
        );
        assert_eq!(
            relative(&root, &root.join("src"), "../docs/new/x.md").as_deref(),
            Some("docs/new/x.md")
        );
        let abs = root.join(".github/workflows/ci.yml");
        assert_eq!(
            relative(&root, Path::new("/"), abs.to_str().unwrap()).as_deref(),
            Some(".github/workflows/ci.yml")
        );
    }

    #[test]
    fn escapes_and_the_root_itself_are_none() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        assert_eq!(relative(&root, &root, "../outside.py"), None);
        assert_eq!(relative(&root, &root, "/etc/passwd"), None);
        assert_eq!(relative(&root, &root, "."), None);
        assert_eq!(relative(&root, &root, "a/../.."), None);
    }

    #[cfg(unix)]
    #[test]
    fn symlinked_directories_resolve_but_the_file_itself_does_not() {
        let tmp = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("out")).unwrap();
        assert_eq!(relative(&root, &root, "out/x.txt"), None);
        std::os::unix::fs::symlink("/etc/hosts", root.join("link")).unwrap();
        assert_eq!(relative(&root, &root, "link").as_deref(), Some("link"));
    }
}
