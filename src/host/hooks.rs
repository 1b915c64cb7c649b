//! The hooks callus installs into each host: which event runs which command, with which
//! matcher, in the foreground or not.

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

/// The hook `timeout` (seconds) install writes for `callus guard`: far above the guard's
/// own 2 s rule budget, far below the hosts' 600 s default (a stalled guard is no gate).
pub(crate) const GUARD_TIMEOUT: u64 = 10;

/// The hook `timeout` (seconds) install writes for `callus record`.
pub(crate) const RECORD_TIMEOUT: u64 = 30;

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
    /// The first client version that knows the event; an older client reports it as an
    /// unknown event (and skips it), so install leaves it out for a client known older.
    pub since: Option<(u64, u64, u64)>,
}

/// The tools the guard screens on Claude Code.
pub(crate) const CLAUDE_GUARD_MATCHER: &str = "Bash|Edit|Write|MultiEdit|NotebookEdit|mcp__.*";

/// The tools the guard screens on Codex (`Edit`/`Write` are Codex's aliases of `apply_patch`).
pub(crate) const CODEX_GUARD_MATCHER: &str = "Bash|apply_patch|Edit|Write|mcp__.*";

const fn spec(event: &'static str, role: Role) -> HookSpec {
    HookSpec {
        event,
        matcher: None,
        role,
        is_async: false,
        since: None,
    }
}

pub(crate) const CLAUDE_HOOKS: &[HookSpec] = &[
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
    // Claude Code 2.1.89+: a call its auto mode refused; recorded as `denied`. In the
    // background: callus never asks for `retry`.
    HookSpec {
        is_async: true,
        ..spec("PermissionDenied", Role::Record)
    },
    spec("SessionStart", Role::Record),
    spec("SessionEnd", Role::Record),
    spec("Stop", Role::Record),
    spec("SubagentStart", Role::Record),
    spec("SubagentStop", Role::Record),
    // Claude Code 2.1.332: a shell command written in a skill's or a command's text runs
    // through this event, not PreToolUse (its hook schema in the 2.1.332 bundle: `tool_name`
    // Bash|PowerShell, `tool_input.command`; the answer is `hookSpecificOutput` with
    // `hookEventName: "PreSkillShellCommand"` and `permissionDecision`). 2.1.328 ignores it
    // with a warning ("Unknown hook event"), measured.
    HookSpec {
        since: Some((2, 1, 332)),
        ..spec("PreSkillShellCommand", Role::Guard)
    },
];

// Codex 0.169 skips `async` handlers and has no PostToolUseFailure or SessionEnd: its
// PostToolUse fires for failures too, and runs in the foreground.
pub(crate) const CODEX_HOOKS: &[HookSpec] = &[
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

/// The tools the guard screens on Gemini CLI (its matcher is a regex on the tool name; MCP
/// tools are `mcp_<server>_<tool>` in 0.61.0, whatever its docs say).
pub(super) const GEMINI_GUARD_MATCHER: &str = "run_shell_command|write_file|replace|mcp_.*";

// Gemini CLI has no async handlers and one post event (`AfterTool`, failures included:
// `tool_response.error`). `AfterAgent` ends a turn.
pub(crate) const GEMINI_HOOKS: &[HookSpec] = &[
    HookSpec {
        matcher: Some(GEMINI_GUARD_MATCHER),
        ..spec("BeforeTool", Role::Guard)
    },
    spec("AfterTool", Role::Record),
    spec("SessionStart", Role::Record),
    spec("SessionEnd", Role::Record),
    spec("AfterAgent", Role::Record),
];

// Cursor: the generic tool events (every tool; `permission` decides), no matcher.
pub(crate) const CURSOR_HOOKS: &[HookSpec] = &[
    spec("preToolUse", Role::Guard),
    spec("postToolUse", Role::Record),
    spec("postToolUseFailure", Role::Record),
    spec("sessionStart", Role::Record),
    spec("sessionEnd", Role::Record),
    spec("stop", Role::Record),
    spec("subagentStop", Role::Record),
];

// Copilot CLI: camelCase events, every tool.
pub(crate) const COPILOT_HOOKS: &[HookSpec] = &[
    spec("preToolUse", Role::Guard),
    spec("postToolUse", Role::Record),
    spec("postToolUseFailure", Role::Record),
    spec("sessionStart", Role::Record),
    spec("sessionEnd", Role::Record),
    spec("agentStop", Role::Record),
    spec("subagentStop", Role::Record),
];
