//! The table entries of Gemini CLI, Cursor and GitHub Copilot CLI, and the facts each one
//! needs beyond Claude Code's and Codex's: how its payload is told apart, the event a
//! payload without an event name is, and what it calls its tools.
//!
//! Sources, per fact:
//! - Gemini CLI: geminicli.com/docs/hooks/reference (settings `hooks` object of matcher
//!   groups, exit 2 blocks with stderr, `decision`/`reason`), checked against the 0.61.0
//!   npm bundle: `createBaseInput` sends `session_id`, `transcript_path`, `cwd`,
//!   `hook_event_name` and an ISO-8601 string `timestamp` (no `prompt_id`, no `turn_id`);
//!   `AfterTool` sends `tool_response` = `{llmContent, returnDisplay, error}`; only
//!   `AfterTool`/`AfterAgent` read `additionalContext`; hooks run unless
//!   `hooksConfig.enabled` is false; `$GEMINI_CLI_HOME` replaces `~`; hooks see
//!   `GEMINI_PROJECT_DIR` and `GEMINI_SESSION_ID`.
//! - Cursor: cursor.com/docs/agent/hooks (`.cursor/hooks.json`, `~/.cursor/hooks.json`,
//!   `"version": 1`; every payload carries `conversation_id`, `generation_id`,
//!   `hook_event_name`, `cursor_version`; `preToolUse` answers `permission` +
//!   `user_message` + `agent_message`; exit 2 is a deny; tools `Shell`, `Read`, `Write`,
//!   `Grep`, `Delete`, `Task`, `MCP:<tool>`; hooks see `CURSOR_VERSION`; project hooks run
//!   only in a trusted workspace). No npm client: not run here.
//! - Copilot CLI: docs.github.com Copilot CLI hooks reference (`.github/hooks/*.json`,
//!   `"version": 1`, `bash` + `timeoutSec`; camelCase payloads `sessionId`, numeric
//!   `timestamp`, `toolName`, `toolArgs`, `toolResult.resultType`, no event name; the
//!   answer is top-level `permissionDecision` + `permissionDecisionReason`; "hook failures
//!   (non-zero exit codes or timeouts) are logged and skipped"), checked against the 1.0.102
//!   npm client: user hooks in `$COPILOT_HOME/hooks` (default `~/.copilot`), the runtime's
//!   event list includes `postToolUseFailure`.

use std::path::PathBuf;

use serde_json::{Map, Value};

use super::{
    Answer, HookTimeout, HooksFile, Host, Spec, TIMEOUT_SECONDS, Trust, Verified, event, hooks,
    truthy, user_home,
};

/// Gemini CLI's home: `$GEMINI_CLI_HOME/.gemini`, else `~/.gemini`.
fn gemini_home() -> PathBuf {
    std::env::var_os("GEMINI_CLI_HOME")
        .filter(|v| !v.is_empty())
        .map_or_else(user_home, PathBuf::from)
        .join(".gemini")
}

/// Copilot CLI's home: `$COPILOT_HOME`, else `~/.copilot`.
fn copilot_home() -> PathBuf {
    std::env::var_os("COPILOT_HOME")
        .filter(|v| !v.is_empty())
        .map_or_else(|| user_home().join(".copilot"), PathBuf::from)
}

/// The session id of a Gemini CLI chat log (`chats/session-<time>-<id8>.jsonl`): the name
/// holds 8 characters of it, the first line (the metadata) the whole.
fn gemini_session_of_log(path: &std::path::Path) -> Option<String> {
    use std::io::{BufRead as _, Read as _};
    let name = path.file_name()?.to_str()?;
    if !name.starts_with("session-") || path.extension()? != "jsonl" {
        return None;
    }
    let mut first = String::new();
    std::io::BufReader::new(std::fs::File::open(path).ok()?.take(64 * 1024))
        .read_line(&mut first)
        .ok()?;
    let meta: Value = serde_json::from_str(&first).ok()?;
    meta.get("sessionId")
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// Gemini CLI 0.61.0 names an MCP tool `mcp_<server>_<tool>`, the server without `_`
/// (`formatMcpToolName`/`parseMcpToolName` in mcp-tool.ts).
fn gemini_mcp_name(tool: &str) -> Option<String> {
    let rest = tool.strip_prefix("mcp_")?;
    Some(match rest.split_once('_') {
        Some((server, name)) if !server.is_empty() && !name.is_empty() => {
            format!("mcp__{server}__{name}")
        }
        _ => format!("mcp__{rest}"),
    })
}

/// Neither Claude Code's nor Codex's turn marker.
fn no_turn_marker(raw: &Map<String, Value>) -> bool {
    !raw.contains_key("prompt_id") && !raw.contains_key("turn_id")
}

/// Cursor's common fields.
fn cursor_marked(raw: &Map<String, Value>) -> bool {
    truthy(raw, "cursor_version")
        || (truthy(raw, "conversation_id") && truthy(raw, "generation_id"))
}

/// Events only Gemini CLI sends.
const GEMINI_ONLY: &[&str] = &[
    "BeforeTool",
    "AfterTool",
    "BeforeAgent",
    "AfterAgent",
    "BeforeModel",
    "AfterModel",
    "BeforeToolSelection",
    "PreCompress",
];

fn gemini_claims(raw: &Map<String, Value>) -> bool {
    if !no_turn_marker(raw) || cursor_marked(raw) || raw.contains_key("sessionId") {
        return false;
    }
    let event = raw
        .get("hook_event_name")
        .and_then(Value::as_str)
        .unwrap_or("");
    // Its session events share Claude Code's names; the string timestamp tells them apart.
    GEMINI_ONLY.contains(&event)
        || (matches!(event, "SessionStart" | "SessionEnd" | "Notification")
            && raw.get("timestamp").is_some_and(Value::is_string))
}

fn cursor_claims(raw: &Map<String, Value>) -> bool {
    no_turn_marker(raw) && cursor_marked(raw)
}

fn copilot_claims(raw: &Map<String, Value>) -> bool {
    no_turn_marker(raw)
        && !cursor_marked(raw)
        && !raw.contains_key("hook_event_name")
        && (raw.contains_key("sessionId") || raw.contains_key("toolName"))
}

/// The event of a camelCase Copilot payload, from its fields (the reference lists each
/// event's input; none names itself).
fn copilot_event(raw: &Map<String, Value>) -> Option<&'static str> {
    let has = |k: &str| raw.contains_key(k);
    Some(if has("toolResult") {
        "postToolUse"
    } else if has("toolName") && raw.get("error").is_some_and(Value::is_string) {
        "postToolUseFailure"
    } else if has("toolName") {
        "preToolUse"
    } else if has("agentName") && has("stopReason") {
        "subagentStop"
    } else if has("agentName") {
        "subagentStart"
    } else if has("stopReason") {
        "agentStop"
    } else if has("prompt") {
        "userPromptSubmitted"
    } else if has("reason") {
        "sessionEnd"
    } else if has("source") {
        "sessionStart"
    } else {
        return None;
    })
}

pub(super) const GEMINI: Spec = Spec {
    host: Host::Gemini,
    slug: "gemini-cli",
    aliases: &["gemini"],
    install_flag: "--gemini",
    executable: "gemini",
    events: event::GEMINI_NAMES,
    hooks: hooks::GEMINI_HOOKS,
    project_hooks: ".gemini/settings.json",
    user_hooks: || gemini_home().join("settings.json"),
    hooks_file: HooksFile::EventGroups,
    // "Execution timeout in milliseconds (default: 60000)" (geminicli.com/docs/hooks/reference).
    timeout: HookTimeout {
        key: "timeout",
        per_second: 1000,
    },
    trust: Trust::Implicit,
    block_on_failure_since: None,
    runs_async: false,
    config_dir: gemini_home,
    history_dir: || gemini_home().join("tmp"),
    session_of_log: gemini_session_of_log,
    claims_payload: gemini_claims,
    claims_transcript: |path| path.contains("/.gemini/tmp/"),
    // Not CLAUDE_PROJECT_DIR: Gemini CLI sets that too, as an alias.
    env_markers: &["GEMINI_SESSION_ID", "GEMINI_PROJECT_DIR"],
    infer_event: |_| None,
    tool_names: &[
        ("run_shell_command", "Bash"),
        ("write_file", "Write"),
        ("replace", "Edit"),
        ("read_file", "Read"),
        ("glob", "Glob"),
        ("web_fetch", "WebFetch"),
    ],
    mcp_name: gemini_mcp_name,
    answer: Answer::Decision,
    project_note: Some(
        "gemini-cli runs project hooks only in a trusted folder, and warns once when it first sees them",
    ),
    label: "Gemini CLI",
    verified: ("0.61.0", "0.61.0", Verified::EndToEnd),
};

pub(super) const CURSOR: Spec = Spec {
    host: Host::Cursor,
    slug: "cursor",
    aliases: &["cursor-agent"],
    install_flag: "--cursor",
    executable: "cursor-agent",
    events: event::CURSOR_NAMES,
    hooks: hooks::CURSOR_HOOKS,
    project_hooks: ".cursor/hooks.json",
    user_hooks: || user_home().join(".cursor/hooks.json"),
    hooks_file: HooksFile::Versioned {
        command_key: "command",
    },
    timeout: TIMEOUT_SECONDS,
    trust: Trust::Implicit,
    block_on_failure_since: None,
    runs_async: false,
    config_dir: || user_home().join(".cursor"),
    history_dir: || user_home().join(".cursor/projects"),
    session_of_log: |_| None,
    claims_payload: cursor_claims,
    claims_transcript: |path| path.contains("/.cursor/"),
    env_markers: &["CURSOR_VERSION"],
    infer_event: |_| None,
    tool_names: &[("Shell", "Bash")],
    mcp_name: |tool| tool.strip_prefix("MCP:").map(|t| format!("mcp__{t}")),
    answer: Answer::Permission,
    project_note: Some("cursor runs project hooks only in a trusted workspace"),
    label: "Cursor",
    verified: ("docs 2026-11", "docs 2026-11", Verified::Protocol),
};

pub(super) const COPILOT: Spec = Spec {
    host: Host::Copilot,
    slug: "copilot-cli",
    aliases: &["copilot", "github-copilot"],
    install_flag: "--copilot",
    executable: "copilot",
    events: event::COPILOT_NAMES,
    hooks: hooks::COPILOT_HOOKS,
    project_hooks: ".github/hooks/callus.json",
    user_hooks: || copilot_home().join("hooks/callus.json"),
    hooks_file: HooksFile::Versioned {
        command_key: "bash",
    },
    // `timeoutSec`, in seconds (the Copilot CLI hooks reference).
    timeout: HookTimeout {
        key: "timeoutSec",
        per_second: 1,
    },
    trust: Trust::Implicit,
    block_on_failure_since: None,
    runs_async: false,
    config_dir: copilot_home,
    history_dir: || copilot_home().join("session-state"),
    session_of_log: |_| None,
    claims_payload: copilot_claims,
    claims_transcript: |_| false,
    env_markers: &[],
    infer_event: copilot_event,
    tool_names: &[
        ("bash", "Bash"),
        ("powershell", "PowerShell"),
        ("view", "Read"),
        ("edit", "Edit"),
        ("create", "Write"),
        ("glob", "Glob"),
        ("grep", "Grep"),
        ("web_fetch", "WebFetch"),
        ("task", "Task"),
    ],
    mcp_name: |_| None,
    answer: Answer::PermissionDecision,
    project_note: Some(
        "copilot-cli loads .github/hooks/*.json from the root of the git repository it runs in, and only once the folder is trusted (its trust prompt, or `trustedFolders` in ~/.copilot/config.json; `copilot -p` never asks)",
    ),
    label: "GitHub Copilot CLI",
    verified: ("1.0.102", "1.0.102", Verified::EndToEnd),
};
