//! What callus wires into each host: the events, matchers and commands, and how a hook
//! handler is recognised as ours.
//!
//! A handler is ours when its command runs a binary named `callus` with exactly the argument
//! `guard` or `record` — whatever directory the binary is in, so a stale path from an earlier
//! install is still recognised (and replaced, or removed by uninstall). Nothing else is
//! ever touched.

use std::path::{Path, PathBuf};

/// The two hook commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// `callus guard` (`PreToolUse`).
    Guard,
    /// `callus record` (everything else).
    Record,
}

impl Role {
    /// The subcommand word.
    #[must_use]
    pub fn arg(self) -> &'static str {
        match self {
            Role::Guard => "guard",
            Role::Record => "record",
        }
    }
}

/// The agent hosts install knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostKind {
    /// Claude Code (`settings.json`).
    Claude,
    /// Codex (`hooks.json`).
    Codex,
}

impl HostKind {
    /// `claude-code` or `codex`, as stored by the recorder.
    #[must_use]
    pub fn slug(self) -> &'static str {
        match self {
            HostKind::Claude => "claude-code",
            HostKind::Codex => "codex",
        }
    }

    /// The hooks callus installs for this host, in the order they are written.
    #[must_use]
    pub fn specs(self) -> &'static [HookSpec] {
        match self {
            HostKind::Claude => CLAUDE,
            HostKind::Codex => CODEX,
        }
    }
}

/// One hook callus installs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HookSpec {
    /// The event name as the host's config spells it.
    pub event: &'static str,
    /// The group's matcher (`None`: every tool / no matcher).
    pub matcher: Option<&'static str>,
    /// Which command.
    pub role: Role,
    /// Whether the handler runs in the background (`"async": true`).
    pub is_async: bool,
}

/// The hook `timeout` (seconds) install writes for `callus guard`: far above the guard's
/// own 2 s rule budget, far below the hosts' 600 s default (a stalled guard is no gate).
pub const GUARD_TIMEOUT: u64 = 10;

/// The hook `timeout` (seconds) install writes for `callus record`.
pub const RECORD_TIMEOUT: u64 = 30;

/// The first Claude Code version that honours `onFailure: "block"` on a command hook (a hook
/// that fails or times out then blocks the call instead of letting it run).
pub const CLAUDE_ON_FAILURE: (u64, u64, u64) = (2, 1, 295);

impl Role {
    /// The `timeout` install writes for this role.
    #[must_use]
    pub fn timeout(self) -> u64 {
        match self {
            Role::Guard => GUARD_TIMEOUT,
            Role::Record => RECORD_TIMEOUT,
        }
    }
}

/// How install writes our handlers beyond the command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HandlerOptions {
    /// Write `onFailure: "block"` on the guard's handler (Claude Code ≥ 2.1.295, fail-closed
    /// configured); otherwise an `onFailure: "block"` of ours is removed.
    pub block_on_failure: bool,
}

/// The tools the guard screens on Claude Code.
pub const CLAUDE_GUARD_MATCHER: &str = "Bash|Edit|Write|MultiEdit|NotebookEdit|mcp__.*";

/// The tools the guard screens on Codex (`Edit`/`Write` are Codex's aliases of `apply_patch`).
pub const CODEX_GUARD_MATCHER: &str = "Bash|apply_patch|Edit|Write|mcp__.*";

const fn spec(event: &'static str, role: Role) -> HookSpec {
    HookSpec {
        event,
        matcher: None,
        role,
        is_async: false,
    }
}

const CLAUDE: &[HookSpec] = &[
    HookSpec {
        matcher: Some(CLAUDE_GUARD_MATCHER),
        ..spec("PreToolUse", Role::Guard)
    },
    HookSpec {
        is_async: true,
        ..spec("PostToolUse", Role::Record)
    },
    HookSpec {
        is_async: true,
        ..spec("PostToolUseFailure", Role::Record)
    },
    spec("SessionStart", Role::Record),
    spec("SessionEnd", Role::Record),
    spec("Stop", Role::Record),
    spec("SubagentStart", Role::Record),
    spec("SubagentStop", Role::Record),
];

// Codex 0.169 skips `async` handlers and has no PostToolUseFailure or SessionEnd: its
// PostToolUse fires for failures too, and runs in the foreground.
const CODEX: &[HookSpec] = &[
    HookSpec {
        matcher: Some(CODEX_GUARD_MATCHER),
        ..spec("PreToolUse", Role::Guard)
    },
    spec("PostToolUse", Role::Record),
    spec("SessionStart", Role::Record),
    spec("Stop", Role::Record),
    spec("SubagentStart", Role::Record),
    spec("SubagentStop", Role::Record),
];

/// The binary the hooks should call: the running one, by the `PATH` entry that leads to it
/// when there is one (a symlink such as `~/.cargo/bin/callus` keeps the command line — and
/// Codex's trust hash — stable across upgrades), else its resolved path.
#[must_use]
pub fn hook_binary() -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("callus"));
    let real = std::fs::canonicalize(&exe).unwrap_or_else(|_| exe.clone());
    if let Some(on_path) = find_on_path("callus")
        && std::fs::canonicalize(&on_path).is_ok_and(|p| p == real)
    {
        return on_path;
    }
    real
}

/// The first executable file named `name` in `$PATH`.
#[must_use]
pub fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .filter(|d| d.is_absolute())
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

/// Whether `path` is a file this user could execute.
#[must_use]
pub fn is_executable(path: &Path) -> bool {
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

/// The command line of a hook: the binary (shell-quoted when needed) and the subcommand.
#[must_use]
pub fn command_line(binary: &Path, role: Role) -> String {
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
pub fn parse_ours(command: &str) -> Option<(Role, PathBuf)> {
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
