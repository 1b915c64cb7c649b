//! Audit anchors kept in git notes: `callus guard audit anchor --to git:[REF]`.
//!
//! The anchor line (the same JSON line an anchor file holds) is appended to the note that
//! `REF` (default [`DEFAULT_REF`]) attaches to the commit at `HEAD` of the repository of the
//! current directory, so each anchor also records which commit the work was at. The notes
//! ref is a history of its own: pushed (`git push origin refs/notes/callus-audit`), a copy
//! lives where the agent's account cannot rewrite it, and a local rewrite of the ref shows as
//! a push the remote refuses.
//!
//! Reading takes every note blob in the ref's whole history, not only its current tree, so
//! an anchor removed by a later `git notes` commit (`remove`, `add -f`) still counts; only a
//! rewrite of the ref itself hides one. A ref that is gone, or a repository that no longer
//! answers, is an unreadable anchor (a problem for `verify`), never "no anchors".
//!
//! git is run with no stdin of its own, a time limit ([`GIT_TIMEOUT`]) and the repository
//! named explicitly (`--git-dir`), so a `GIT_DIR` in the environment cannot point a reading
//! somewhere else.

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::{Error, Result};

/// The notes ref `git:` alone names.
pub(crate) const DEFAULT_REF: &str = "refs/notes/callus-audit";

/// Longest a git command may take before it is killed and its place called unreadable.
pub(crate) const GIT_TIMEOUT: Duration = Duration::from_secs(10);

/// Most bytes read back from one git command (a notes history, whole).
const OUTPUT_CAP: usize = 64 << 20;

/// The full notes ref `REF` names: `callus-audit` → `refs/notes/callus-audit`.
pub(crate) fn full_ref(name: &str) -> Result<String> {
    let name = name.trim();
    let full = if name.is_empty() {
        DEFAULT_REF.to_string()
    } else if name.starts_with("refs/") {
        name.to_string()
    } else {
        format!("refs/notes/{name}")
    };
    let bad = full.contains("..")
        || full.ends_with('/')
        || full
            .chars()
            .any(|c| c.is_ascii_control() || " ~^:?*[\\".contains(c));
    if bad || !full.starts_with("refs/notes/") {
        return Err(Error::Invalid(format!(
            "git:{name}: not a notes ref (use git:NAME or git:refs/notes/NAME)"
        )));
    }
    Ok(full)
}

/// The repository (its common git directory, absolute) of `cwd`.
pub(crate) fn git_dir_of(cwd: &Path) -> Result<PathBuf> {
    let out = run(
        &["-C", &cwd.display().to_string()],
        &["rev-parse", "--path-format=absolute", "--git-common-dir"],
        None,
    )
    .map_err(|why| {
        Error::Invalid(format!(
            "git: {}: not in a git repository ({why})",
            cwd.display()
        ))
    })?;
    let dir = PathBuf::from(String::from_utf8_lossy(&out).trim());
    Ok(std::fs::canonicalize(&dir).unwrap_or(dir))
}

/// Append `line` to the note `notes_ref` attaches to `HEAD` of the repository of `cwd`.
pub(crate) fn append(cwd: &Path, notes_ref: &str, line: &str) -> Result<()> {
    run(
        &["-C", &cwd.display().to_string()],
        &["notes", "--ref", notes_ref, "append", "-m", line, "HEAD"],
        None,
    )
    .map(|_| ())
    .map_err(|why| Error::Invalid(format!("git notes --ref {notes_ref} append: {why}")))
}

/// Every note blob's text in the whole history of `notes_ref` in `git_dir`.
pub(crate) fn read_all(git_dir: &Path, notes_ref: &str) -> std::result::Result<String, String> {
    let dir = format!("--git-dir={}", git_dir.display());
    // Does the ref exist at all? A deleted ref is not "no anchors".
    run(
        &[&dir],
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{notes_ref}^{{commit}}"),
        ],
        None,
    )
    .map_err(|_| format!("no notes ref {notes_ref} in {}", git_dir.display()))?;
    let objects = run(
        &[&dir],
        &["rev-list", "--objects", "--no-object-names", notes_ref],
        None,
    )?;
    let batch = run(&[&dir], &["cat-file", "--batch"], Some(&objects))?;
    Ok(blobs(&batch))
}

/// The contents of the blobs in `git cat-file --batch` output, one after another.
fn blobs(batch: &[u8]) -> String {
    let mut text = String::new();
    let mut rest = batch;
    while let Some(nl) = rest.iter().position(|&b| b == b'\n') {
        let header = String::from_utf8_lossy(&rest[..nl]).to_string();
        rest = &rest[nl + 1..];
        let mut parts = header.split(' ');
        let (Some(_), Some(kind), Some(size)) = (parts.next(), parts.next(), parts.next()) else {
            continue; // "<oid> missing"
        };
        let Ok(size) = size.parse::<usize>() else {
            break;
        };
        let Some(body) = rest.get(..size) else {
            break;
        };
        if kind == "blob" {
            text.push_str(&String::from_utf8_lossy(body));
            text.push('\n');
        }
        rest = rest.get(size + 1..).unwrap_or_default();
    }
    text
}

/// Run `git PRE… ARGS…`, feeding `stdin`, within [`GIT_TIMEOUT`]; stdout, or git's first
/// line of complaint.
fn run(pre: &[&str], args: &[&str], stdin: Option<&[u8]>) -> std::result::Result<Vec<u8>, String> {
    let mut child = Command::new("git")
        .args(pre)
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env_remove("GIT_NOTES_REF")
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run git: {e}"))?;
    let writer = stdin.map(|bytes| {
        let bytes = bytes.to_vec();
        let mut pipe = child.stdin.take();
        std::thread::spawn(move || {
            if let Some(p) = pipe.as_mut() {
                let _ = p.write_all(&bytes);
            }
        })
    });
    let drain = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(p) = pipe {
                let _ = p.take(OUTPUT_CAP as u64).read_to_end(&mut buf);
            }
            buf
        })
    };
    let out = drain(child.stdout.take().map(|p| Box::new(p) as _));
    let err = drain(child.stderr.take().map(|p| Box::new(p) as _));
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() < GIT_TIMEOUT => {
                std::thread::sleep(Duration::from_millis(10));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "git {} took longer than {} s; killed",
                    args.first().unwrap_or(&""),
                    GIT_TIMEOUT.as_secs()
                ));
            }
        }
    };
    if let Some(w) = writer {
        let _ = w.join();
    }
    let stdout = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    if status.success() {
        Ok(stdout)
    } else {
        let why = String::from_utf8_lossy(&stderr);
        let why = why
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("failed")
            .to_string();
        Err(crate::redact::redact(&why).into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_refs_are_spelled_out_and_other_refs_refused() {
        assert_eq!(full_ref("").unwrap(), DEFAULT_REF);
        assert_eq!(full_ref("team").unwrap(), "refs/notes/team");
        assert_eq!(full_ref("refs/notes/x").unwrap(), "refs/notes/x");
        for bad in ["refs/heads/main", "a..b", "a b", "refs/notes/", "a:b"] {
            assert!(full_ref(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn blobs_are_taken_from_batch_output_and_trees_skipped() {
        let batch = b"aaa tree 3\nxyz\nbbb blob 5\nhello\nccc missing\nddd blob 2\nhi\n";
        assert_eq!(blobs(batch), "hello\nhi\n");
        // A cut-off body stops the walk instead of reading past the end.
        assert_eq!(blobs(b"eee blob 99\nshort\n"), "");
    }
}
