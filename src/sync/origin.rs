//! Who pushed a row: the `origin` every team row carries.
//!
//! The default is `user@hostname`, stable across pushes from one account on one machine, so
//! a re-push updates its own rows instead of adding a second copy under a new name. `--origin`
//! overrides it (two stores on one machine, a CI runner with a meaningless hostname). An
//! origin is part of every team key, so it must be non-empty, printable and short.

use crate::{Error, Result};

/// Longest accepted origin, in characters.
const MAX_CHARS: usize = 200;

/// The origin to push as: `explicit` if given (validated), else `user@hostname`.
pub(crate) fn resolve(explicit: Option<&str>) -> Result<String> {
    let Some(name) = explicit else {
        return Ok(default_origin());
    };
    let name = name.trim();
    if name.is_empty() || name.chars().count() > MAX_CHARS || name.chars().any(char::is_control) {
        return Err(Error::Invalid(format!(
            "--origin '{}': expected 1 to {MAX_CHARS} printable characters",
            name.escape_debug()
        )));
    }
    Ok(name.to_string())
}

/// `user@hostname` from the environment and the kernel, with stand-ins when unknown.
fn default_origin() -> String {
    let user = ["USER", "LOGNAME"]
        .iter()
        .find_map(|k| std::env::var(k).ok().filter(|v| !v.trim().is_empty()))
        .or_else(account_name)
        .unwrap_or_else(|| "unknown".to_string());
    let host = ["/proc/sys/kernel/hostname", "/etc/hostname"]
        .iter()
        .find_map(|p| std::fs::read_to_string(p).ok())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".to_string());
    format!("{}@{host}", user.trim())
}

/// The account name of this process's user from `/etc/passwd` (cron jobs and services
/// often run without `$USER`).
#[cfg(unix)]
fn account_name() -> Option<String> {
    use std::os::unix::fs::MetadataExt as _;
    let uid = std::fs::metadata("/proc/self").ok()?.uid().to_string();
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|line| {
        let mut fields = line.split(':');
        let name = fields.next()?;
        (fields.nth(1)? == uid).then(|| name.to_string())
    })
}

#[cfg(not(unix))]
fn account_name() -> Option<String> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explicit_origins_are_trimmed_and_checked() {
        assert_eq!(resolve(Some(" ci-runner ")).unwrap(), "ci-runner");
        assert!(resolve(Some("  ")).is_err());
        assert!(resolve(Some("a\nb")).is_err());
        assert!(resolve(Some(&"x".repeat(201))).is_err());
    }

    #[test]
    fn the_default_is_user_at_host() {
        let origin = resolve(None).unwrap();
        let (user, host) = origin.split_once('@').unwrap();
        assert!(!user.is_empty() && !host.is_empty(), "{origin}");
    }
}
