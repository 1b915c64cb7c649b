//! The hook events callus acts on, as one enum, so stages match on a variant instead of
//! comparing the host's spelling of an event name.

/// A hook event, whatever the host calls it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// Before a tool call (the guard's event).
    PreToolUse,
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
