//! What callus wires into each host: the events, matchers and commands, and how a hook
//! handler is recognised as ours.
//!
//! A handler is ours when its command runs a binary named `callus` with exactly the argument
//! `guard` or `record` — whatever directory the binary is in, so a stale path from an earlier
//! install is still recognised (and replaced, or removed by uninstall). Nothing else is
//! ever touched.

use std::path::{Path, PathBuf};

pub(crate) use crate::host::client::{find_on_path, is_executable};
pub(crate) use crate::host::{GUARD_TIMEOUT, HookSpec, Role};

/// How install writes our handlers beyond the command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct HandlerOptions {
    /// Write `onFailure: "block"` on the guard's handler (Claude Code ≥ 2.1.295, fail-closed
    /// configured); otherwise an `onFailure: "block"` of ours is removed.
    pub block_on_failure: bool,
    /// The host's timeout units per second (`host::HookTimeout::per_second`; 0 reads as 1).
    pub timeout_per_second: u64,
}

/// The binary the hooks should call: the running one, by the `PATH` entry that leads to it
/// when there is one (a symlink such as `~/.cargo/bin/callus` keeps the command line — and
/// Codex's trust hash — stable across upgrades), else its resolved path.
#[must_use]
pub(crate) fn hook_binary() -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("callus"));
    let real = std::fs::canonicalize(&exe).unwrap_or_else(|_| exe.clone());
    if let Some(on_path) = find_on_path("callus")
        && std::fs::canonicalize(&on_path).is_ok_and(|p| p == real)
    {
        return on_path;
    }
    real
}

/// Whether the guard's handler on a host can carry `onFailure: "block"` (a guard that
/// crashes or times out then blocks the call), decided once for install and doctor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BlockOnFailure {
    /// Not asked for (failing open) or the host has no such key.
    NotWanted,
    /// Fail-closed is configured and the installed client honours it.
    Honoured,
    /// Fail-closed is configured, but the installed client (this version) predates it.
    TooOld((u64, u64, u64)),
    /// Fail-closed is configured, but the client's version is unknown.
    Unknown,
}

impl BlockOnFailure {
    /// Decide for `host` under `policy`, asking the installed client its version.
    #[must_use]
    pub(crate) fn of(host: crate::host::Host, policy: crate::config::FailPolicy) -> Self {
        let Some(since) = host.spec().block_on_failure_since else {
            return Self::NotWanted;
        };
        if policy != crate::config::FailPolicy::Closed {
            return Self::NotWanted;
        }
        match crate::host::client::installed_version(host.spec().executable) {
            Some(v) if v >= since => Self::Honoured,
            Some(v) => Self::TooOld(v),
            None => Self::Unknown,
        }
    }

    /// Why a guard of `host` that fails lets the call run although fail-closed is
    /// configured, when it does.
    #[must_use]
    pub(crate) fn shortfall(self, host: crate::host::Host) -> Option<String> {
        let spec = host.spec();
        let dotted = |(major, minor, patch): (u64, u64, u64)| format!("{major}.{minor}.{patch}");
        let since = dotted(spec.block_on_failure_since?);
        let label = spec.label;
        let why = match self {
            Self::NotWanted | Self::Honoured => return None,
            Self::TooOld(found) => format!(
                "{label} {} predates `onFailure: \"block\"`, which needs {label} {since} or later",
                dotted(found)
            ),
            Self::Unknown => format!(
                "no `{} --version` answered, and `onFailure: \"block\"` needs {label} {since} or later",
                spec.executable
            ),
        };
        Some(format!(
            "fail-closed is configured, but {why}: a guard that crashes or times out lets the call run"
        ))
    }
}

/// What project-scope hooks call: `callus` by name, on `PATH`.
pub(crate) const BY_NAME: &str = "callus";

/// Say so when project hooks calling `callus` by name would not run this binary.
pub(crate) fn warn_unless_on_path() {
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("callus"));
    let real = std::fs::canonicalize(&exe).unwrap_or(exe);
    match find_on_path(BY_NAME) {
        None => println!(
            "⚠ project hooks call `callus` by name, and no callus is on PATH: put {} on PATH (e.g. `cargo install --path .`) or the hooks fail",
            real.display()
        ),
        Some(p) if std::fs::canonicalize(&p).is_ok_and(|c| c != real) => println!(
            "⚠ project hooks call `callus` by name, which on PATH is {}, not this binary ({})",
            p.display(),
            real.display()
        ),
        Some(_) => {}
    }
}

/// The binary a hook's `binary` runs: itself when it is a path, else its `PATH` entry.
#[must_use]
pub(crate) fn resolve(binary: &Path) -> Option<PathBuf> {
    if binary.components().count() > 1 || binary.is_absolute() {
        return Some(binary.to_path_buf());
    }
    find_on_path(&binary.to_string_lossy())
}

/// The command line of a hook: the binary (shell-quoted when needed) and the subcommand.
#[must_use]
pub(crate) fn command_line(binary: &Path, role: Role) -> String {
    format!("{} {}", shell_quote(&binary.to_string_lossy()), role.arg())
}

fn shell_quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:,@%=".contains(c));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// If `command` is one of ours, its role and the binary it calls.
#[must_use]
pub(crate) fn parse_ours(command: &str) -> Option<(Role, PathBuf)> {
    let command = command.trim();
    let (binary, rest) = if let Some(quoted) = command.strip_prefix('\'') {
        // '…' with '\'' for embedded quotes, as shell_quote writes it.
        let mut out = String::new();
        let mut rest = quoted;
        loop {
            let end = rest.find('\'')?;
            out.push_str(&rest[..end]);
            rest = &rest[end + 1..];
            if let Some(r) = rest.strip_prefix(r"\''") {
                out.push('\'');
                rest = r;
            } else {
                break;
            }
        }
        (out, rest)
    } else {
        let end = command.find(char::is_whitespace)?;
        (command[..end].to_string(), &command[end..])
    };
    let name = Path::new(&binary).file_name()?.to_str()?;
    if name != "callus" && name != "callus.exe" {
        return None;
    }
    let role = match rest.trim() {
        "guard" => Role::Guard,
        "record" => Role::Record,
        _ => return None,
    };
    Some((role, PathBuf::from(binary)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_round_trip_through_quoting() {
        for bin in ["/usr/local/bin/callus", "/home/a b/it's/callus"] {
            for role in [Role::Guard, Role::Record] {
                let line = command_line(Path::new(bin), role);
                assert_eq!(
                    parse_ours(&line),
                    Some((role, PathBuf::from(bin))),
                    "{line}"
                );
            }
        }
        assert_eq!(
            command_line(Path::new("/a b/callus"), Role::Guard),
            "'/a b/callus' guard"
        );
    }

    #[test]
    fn foreign_commands_are_not_ours() {
        for cmd in [
            "callusguard guard",
            "/x/callus guard --fast",
            "/x/callus derive",
            "python3 guard-hook.py",
            "/x/callus",
            "echo /x/callus guard",
        ] {
            assert_eq!(parse_ours(cmd), None, "{cmd}");
        }
        assert!(parse_ours("callus record").is_some());
    }
}
