//! A host's client on this machine: where its executable is on `PATH` and which version it
//! reports (`claude --version`), asked with a time limit so a client that hangs cannot
//! stall `install` or `doctor`.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Longest a `--version` may take.
const TIMEOUT: Duration = Duration::from_secs(10);

/// The first executable file named `name` in `$PATH`.
#[must_use]
pub(crate) fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .filter(|d| d.is_absolute())
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

/// Whether `path` is a file this user could execute.
#[must_use]
pub(crate) fn is_executable(path: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(path) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.is_file() && meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        meta.is_file()
    }
}

/// The version of the client `name` (`claude`, `codex`) on `PATH`, if it answers.
#[must_use]
pub(crate) fn installed_version(name: &str) -> Option<(u64, u64, u64)> {
    parse_version(&run_version(&find_on_path(name)?)?)
}

/// The first `X.Y.Z` in `text`.
#[must_use]
pub(crate) fn parse_version(text: &str) -> Option<(u64, u64, u64)> {
    text.split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .find_map(|word| {
            let mut parts = word.split('.').filter(|p| !p.is_empty());
            let v = (
                parts.next()?.parse().ok()?,
                parts.next()?.parse().ok()?,
                parts.next()?.parse().ok()?,
            );
            Some(v)
        })
}

/// stdout of `bin --version`, or `None` when it fails or takes longer than [`TIMEOUT`].
#[must_use]
pub(crate) fn run_version(bin: &std::path::Path) -> Option<String> {
    let mut child = Command::new(bin)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                let mut out = String::new();
                child.stdout.take()?.read_to_string(&mut out).ok()?;
                return status.success().then_some(out);
            }
            Ok(None) if start.elapsed() < TIMEOUT => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
}
