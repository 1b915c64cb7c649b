//! The hook runtime every hook command runs on (`callus guard`, `callus record`, the scope
//! hooks): reading the event from stdin within a size limit, catching panics so they follow
//! the command's policy instead of escaping as an exit code the host misreads, and the
//! errors log where a hook that must stay quiet leaves what went wrong.
//!
//! Guarantees: stdin is read to at most [`STDIN_CAP`] bytes (more is refused as a whole,
//! never truncated into a different payload); [`guarded`] turns a panic into its message and
//! prints nothing (the hook reports it once, its own way); the errors log is redacted,
//! one line per entry, and rotated past [`ERRORS_LOG_CAP`], and writing it never fails a hook.

use std::io::{Read, Write as _};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use crate::config::Home;

/// Largest hook payload read from stdin; anything larger is refused as a whole.
pub(crate) const STDIN_CAP: u64 = 16 * 1024 * 1024;

/// Why a payload could not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PayloadError {
    /// More than [`STDIN_CAP`] bytes arrived.
    TooLarge,
    /// stdin could not be read.
    Unreadable(String),
    /// The bytes are not JSON.
    Malformed(String),
    /// The JSON is not an object.
    NotObject,
}

impl std::fmt::Display for PayloadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PayloadError::TooLarge => write!(f, "hook payload exceeds {STDIN_CAP} bytes"),
            PayloadError::Unreadable(e) => write!(f, "cannot read stdin: {e}"),
            PayloadError::Malformed(e) => write!(f, "hook payload is not JSON: {e}"),
            PayloadError::NotObject => f.write_str("hook payload is not a JSON object"),
        }
    }
}

/// Read all of stdin, refusing more than [`STDIN_CAP`] bytes.
pub(crate) fn read_stdin() -> Result<Vec<u8>, PayloadError> {
    read_capped(std::io::stdin().lock())
}

/// Read `input` to the end, refusing more than [`STDIN_CAP`] bytes.
pub(crate) fn read_capped(input: impl Read) -> Result<Vec<u8>, PayloadError> {
    let mut buf = Vec::new();
    input
        .take(STDIN_CAP + 1)
        .read_to_end(&mut buf)
        .map_err(|e| PayloadError::Unreadable(e.to_string()))?;
    if buf.len() as u64 > STDIN_CAP {
        return Err(PayloadError::TooLarge);
    }
    Ok(buf)
}

/// Silence the default panic report: a hook reports a caught panic itself, once.
pub(crate) fn quiet_panics() {
    std::panic::set_hook(Box::new(|_| {}));
}

/// Run `work`, catching a panic as `Err("internal panic: …")`. Call [`quiet_panics`] first
/// so nothing is printed for it.
pub(crate) fn guarded<T>(work: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(work)).map_err(|panic| {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| (*s).to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".to_string());
        format!("internal panic: {what}")
    })
}

/// Largest `errors.log` before it is rotated to `errors.log.1`.
pub(crate) const ERRORS_LOG_CAP: u64 = 1024 * 1024;

/// Append one line to `$CALLUS_HOME/errors.log`, rotating it past [`ERRORS_LOG_CAP`].
/// Best effort: a log that cannot be written is not worth failing a hook over.
pub(crate) fn log_error(home: &Home, msg: &str) {
    let path = home.errors_log();
    let _ = crate::config::ensure_private_dir(&home.dir);
    if std::fs::metadata(&path).is_ok_and(|m| m.len() > ERRORS_LOG_CAP) {
        let _ = std::fs::rename(&path, rotated(&path));
    }
    // The agent can put a FIFO here: opening it must not block the hook.
    if let Ok(mut f) = crate::untrusted::open_append(&path) {
        let line = crate::redact::redact_capped(&msg.replace('\n', " "), 2000);
        let _ = writeln!(
            f,
            "{} {line}",
            chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        );
    }
}

fn rotated(path: &Path) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(".1");
    PathBuf::from(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_capped_refuses_more_than_the_cap_and_keeps_what_fits() {
        let fits = vec![b'x'; 10];
        assert_eq!(read_capped(&fits[..]).unwrap(), fits);
        let big = std::io::repeat(b'x').take(STDIN_CAP + 1);
        assert_eq!(read_capped(big), Err(PayloadError::TooLarge));
    }

    #[test]
    fn guarded_names_the_panic() {
        quiet_panics();
        assert_eq!(guarded(|| 3), Ok(3));
        let err = guarded(|| -> u8 { panic!("boom {}", 1) }).unwrap_err();
        assert_eq!(err, "internal panic: boom 1");
        let err = guarded(|| -> u8 { std::panic::panic_any(7_u8) }).unwrap_err();
        assert_eq!(err, "internal panic: unknown panic");
        let _ = std::panic::take_hook();
    }
}
