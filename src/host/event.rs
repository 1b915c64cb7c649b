//! The hook events callus acts on, as one enum, so stages match on a variant instead of
//! comparing the host's spelling of an event name.

/// A hook event, whatever the host calls it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// Before a tool call (the guard's event).
    PreToolUse,
    /// Before a shell command a Claude Code skill or command holds in its text runs
    /// (Claude Code 2.1.332+); the guard decides it as a `Bash` call.
    PreSkillShellCommand,
    /// After a tool call that succeeded (on Codex: after every tool call).
    PostToolUse,
    /// After a tool call that failed (Claude Code).
    PostToolUseFailure,
    /// A tool call refused by the host's permission system (Claude Code).
    PermissionDenied,
    /// A session started.
    SessionStart,
    /// A session ended.
    SessionEnd,
    /// The user submitted a prompt.
    UserPromptSubmit,
    /// The agent finished its turn.
    Stop,
    /// A subagent started.
    SubagentStart,
    /// A subagent finished.
    SubagentStop,
    /// Absent, or an event callus does not act on.
    Other,
}

impl Event {
    /// Whether the guard decides the event (something is about to run).
    #[must_use]
    pub fn is_pre_call(self) -> bool {
        matches!(self, Event::PreToolUse | Event::PreSkillShellCommand)
    }

    /// Whether the event is about one tool call (it carries `tool_name`/`tool_input`).
    #[must_use]
    pub fn is_tool_call(self) -> bool {
        matches!(
            self,
            Event::PreToolUse
                | Event::PostToolUse
                | Event::PostToolUseFailure
                | Event::PermissionDenied
        )
    }
}

/// Claude Code's and Codex's event names (Codex took Claude Code's spelling).
pub(crate) const PASCAL_NAMES: &[(&str, Event)] = &[
    ("PreToolUse", Event::PreToolUse),
    ("PreSkillShellCommand", Event::PreSkillShellCommand),
    ("PostToolUse", Event::PostToolUse),
    ("PostToolUseFailure", Event::PostToolUseFailure),
    ("PermissionDenied", Event::PermissionDenied),
    ("SessionStart", Event::SessionStart),
    ("SessionEnd", Event::SessionEnd),
    ("UserPromptSubmit", Event::UserPromptSubmit),
    ("Stop", Event::Stop),
    ("SubagentStart", Event::SubagentStart),
    ("SubagentStop", Event::SubagentStop),
];

/// Gemini CLI's event names (`HookEventName` in the 0.61.0 bundle; geminicli.com hooks
/// reference). `AfterAgent` ends a turn, `BeforeAgent` follows a prompt.
pub(crate) const GEMINI_NAMES: &[(&str, Event)] = &[
    ("BeforeTool", Event::PreToolUse),
    ("AfterTool", Event::PostToolUse),
    ("SessionStart", Event::SessionStart),
    ("SessionEnd", Event::SessionEnd),
    ("BeforeAgent", Event::UserPromptSubmit),
    ("AfterAgent", Event::Stop),
];

/// Cursor's event names (cursor.com/docs/agent/hooks): the generic tool events and the
/// older shell/MCP-specific ones, which callus reads but does not install.
pub(crate) const CURSOR_NAMES: &[(&str, Event)] = &[
    ("preToolUse", Event::PreToolUse),
    ("beforeShellExecution", Event::PreToolUse),
    ("beforeMCPExecution", Event::PreToolUse),
    ("postToolUse", Event::PostToolUse),
    ("afterShellExecution", Event::PostToolUse),
    ("afterMCPExecution", Event::PostToolUse),
    ("postToolUseFailure", Event::PostToolUseFailure),
    ("sessionStart", Event::SessionStart),
    ("sessionEnd", Event::SessionEnd),
    ("beforeSubmitPrompt", Event::UserPromptSubmit),
    ("stop", Event::Stop),
    ("subagentStart", Event::SubagentStart),
    ("subagentStop", Event::SubagentStop),
];

/// GitHub Copilot CLI's event names (docs.github.com, Copilot CLI hooks reference; the
/// 1.0.102 runtime lists the same, `postToolUseFailure` included).
pub(crate) const COPILOT_NAMES: &[(&str, Event)] = &[
    ("preToolUse", Event::PreToolUse),
    ("postToolUse", Event::PostToolUse),
    ("postToolUseFailure", Event::PostToolUseFailure),
    ("sessionStart", Event::SessionStart),
    ("sessionEnd", Event::SessionEnd),
    ("userPromptSubmitted", Event::UserPromptSubmit),
    ("agentStop", Event::Stop),
    ("subagentStart", Event::SubagentStart),
    ("subagentStop", Event::SubagentStop),
];
