//! The agent hosts callus works with, as one table: how each is recognised from a hook
//! payload, what it calls its events, which hooks callus installs into it and where its
//! settings, history and trust live. Everything host-specific reads [`HOSTS`]; adding a
//! host is one [`Spec`] entry plus its wire types (`wire`) and tests.
//!
//! - `call`: one tool call as every stage reads it (shell or not, its command text, where it
//!   runs), read once at the edge.
//! - `event`: the events callus acts on, host-neutral.
//! - `hooks`: the hooks callus installs ([`HookSpec`]) and the two hook commands ([`Role`]).
//! - `wire`: one event read from stdin and a `PreToolUse` answer written in the host's shape.
//! - `peers`: the facts of Gemini CLI, Cursor and GitHub Copilot CLI (claims, event
//!   inference, tool names), each with the source it was read from.
//!
//! Guarantees: detection is deterministic and unambiguous — `CALLUS_HOST` first, then the
//! payload (each host's claim excludes the others'), then the transcript's file name, then
//! environment markers, then the first host of the table; environment markers come last
//! because they leak between the hosts' shells.

mod answer;
pub(crate) mod call;
pub(crate) mod client;
mod event;
mod hooks;
mod peers;
#[cfg(test)]
mod samples;
pub(crate) mod wire;

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Map, Value};

pub(crate) use answer::{emit_for, emit_for_event};
pub(crate) use event::Event;
#[cfg(test)]
pub(crate) use hooks::CODEX_GUARD_MATCHER;
pub(crate) use hooks::{GUARD_TIMEOUT, HookSpec, Role};

/// An agent host that sends hook events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Host {
    /// Anthropic's Claude Code.
    ClaudeCode,
    /// `OpenAI`'s Codex CLI.
    Codex,
    /// Google's Gemini CLI.
    Gemini,
    /// Cursor (the editor's agent and `cursor-agent`).
    Cursor,
    /// GitHub Copilot CLI.
    Copilot,
}

/// The format of the file a host reads its hooks from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HooksFile {
    /// A settings file whose `hooks` object maps event names to matcher groups
    /// (Claude Code's `settings.json`, Codex's `hooks.json`, Gemini CLI's `settings.json`).
    EventGroups,
    /// `{"version": 1, "hooks": {event: [handler, …]}}`: handlers straight under the event
    /// (Cursor's `hooks.json`, Copilot CLI's `hooks/*.json`). The command line is in
    /// `command_key`.
    Versioned {
        /// The handler key holding the command line (`command`, Copilot: `bash`).
        command_key: &'static str,
    },
}

/// How a host spells a hook's timeout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HookTimeout {
    /// The handler key (`timeout`; Copilot CLI: `timeoutSec`).
    pub key: &'static str,
    /// Units per second: 1 for seconds, 1000 for milliseconds (Gemini CLI).
    pub per_second: u64,
}

/// A timeout in seconds, under the key `timeout` (Claude Code, Codex, Cursor).
pub(crate) const TIMEOUT_SECONDS: HookTimeout = HookTimeout {
    key: "timeout",
    per_second: 1,
};

/// The shape a host expects a `PreToolUse` answer in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// `hookSpecificOutput.permissionDecision` / `additionalContext`; block = exit 2 and
    /// stderr (Claude Code, Codex).
    HookSpecific,
    /// Top-level `decision: "deny"` + `reason`; block = exit 2 and stderr; no context
    /// before a call (Gemini CLI).
    Decision,
    /// `permission: "deny"` + `user_message` + `agent_message`; no context before a call
    /// (Cursor).
    Permission,
    /// Top-level `permissionDecision: "deny"` + `permissionDecisionReason`; a non-zero exit
    /// is skipped, so a block is a deny too; no context before a call (Copilot CLI).
    PermissionDecision,
}

/// How callus's support for a host was verified.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verified {
    /// End-to-end tests with the real client.
    EndToEnd,
    /// Protocol tests built from the host's documented payloads (and, where the client is on
    /// npm, the payload code of that release).
    Protocol,
}

/// How a host decides to run a hook it finds in its settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trust {
    /// It runs every hook in its settings.
    Implicit,
    /// It skips a hook until the hook's definition is trusted by hash in `config.toml`.
    CodexHash,
}

/// Everything callus knows about one host.
#[derive(Debug)]
pub struct Spec {
    /// Which host.
    pub host: Host,
    /// The slug stored and shown (`claude-code`).
    pub slug: &'static str,
    /// Other names accepted for it (`CALLUS_HOST`, trace files).
    pub aliases: &'static [&'static str],
    /// The `callus install` flag that selects it.
    pub install_flag: &'static str,
    /// Its executable on `PATH`.
    pub executable: &'static str,
    /// Its event names, mapped to [`Event`].
    pub events: &'static [(&'static str, Event)],
    /// The hooks callus installs, in the order they are written.
    pub hooks: &'static [HookSpec],
    /// The hooks file, relative to the repository root, for the project scope.
    pub project_hooks: &'static str,
    /// The hooks file for the user scope.
    pub user_hooks: fn() -> PathBuf,
    /// The format of both hooks files.
    pub hooks_file: HooksFile,
    /// The handler key a hook's timeout goes in, and how many of its units make a second.
    pub timeout: HookTimeout,
    /// Whether it runs hooks only once trusted.
    pub trust: Trust,
    /// The first client version that honours `onFailure: "block"` on a hook (a hook that
    /// fails or times out then blocks the call), if any does.
    pub block_on_failure_since: Option<(u64, u64, u64)>,
    /// Whether it runs hooks marked `"async": true` (Codex 0.169 skips them).
    pub runs_async: bool,
    /// Its own directory (its presence says the host is installed).
    pub config_dir: fn() -> PathBuf,
    /// Where it keeps session logs.
    pub history_dir: fn() -> PathBuf,
    /// The session id of one of its session log files, if the path is one.
    pub session_of_log: fn(&Path) -> Option<String>,
    /// Whether a payload's shape says it came from this host.
    pub claims_payload: fn(&Map<String, Value>) -> bool,
    /// Whether a transcript path is this host's.
    pub claims_transcript: fn(&str) -> bool,
    /// Environment variables its shells set.
    pub env_markers: &'static [&'static str],
    /// The event a payload without an event name is (Copilot CLI's camelCase payloads carry
    /// none).
    pub infer_event: fn(&Map<String, Value>) -> Option<&'static str>,
    /// Its tool names mapped to the names rules are written against (Claude Code's).
    pub tool_names: &'static [(&'static str, &'static str)],
    /// Its name of an MCP tool as rules spell it (`mcp__<server>__<tool>`), when its own
    /// spelling differs (Gemini CLI `mcp_<server>_<tool>`, Cursor `MCP:<tool>`).
    pub mcp_name: fn(&str) -> Option<String>,
    /// The shape of a `PreToolUse` answer.
    pub answer: Answer,
    /// What install says about a project-scope hooks file (trust steps), if anything.
    pub project_note: Option<&'static str>,
    /// Its name as people write it.
    pub label: &'static str,
    /// The oldest and the newest client version callus was verified against, and how
    /// (doctor calls a version in that range verified).
    pub verified: (&'static str, &'static str, Verified),
}

/// The Claude Code version the end-to-end suite last passed on (`scripts/install-clients`).
pub(crate) const CLAUDE_VERIFIED: &str = "2.1.332";

/// The oldest Claude Code the end-to-end suite still runs on (`CALLUS_E2E_CLAUDE_OLDEST`).
pub(crate) const CLAUDE_OLDEST_VERIFIED: &str = "2.1.328";

/// The Codex version the end-to-end suite last passed on (`scripts/install-clients`).
pub(crate) const CODEX_VERIFIED: &str = "0.171.0";

/// The oldest Codex the end-to-end suite passed on (0.169.0, before the pin moved).
pub(crate) const CODEX_OLDEST_VERIFIED: &str = "0.169.0";

/// Every host, the default (for a payload nothing identifies) first.
pub(crate) static HOSTS: &[Spec] = &[
    Spec {
        host: Host::ClaudeCode,
        slug: "claude-code",
        aliases: &["claude"],
        install_flag: "--claude",
        executable: "claude",
        events: event::PASCAL_NAMES,
        hooks: hooks::CLAUDE_HOOKS,
        project_hooks: ".claude/settings.json",
        user_hooks: || claude_dir().join("settings.json"),
        hooks_file: HooksFile::EventGroups,
        timeout: TIMEOUT_SECONDS,
        trust: Trust::Implicit,
        // Claude Code 2.1.295 (the hooks reference, `onFailure`).
        block_on_failure_since: Some((2, 1, 295)),
        runs_async: true,
        config_dir: claude_dir,
        history_dir: || claude_dir().join("projects"),
        session_of_log: |p| {
            (p.extension()? == "jsonl").then(|| p.file_stem()?.to_str().map(str::to_string))?
        },
        // Claude Code sends `prompt_id` with every event of a turn.
        claims_payload: |raw| truthy(raw, "prompt_id"),
        claims_transcript: |_| false,
        env_markers: &[],
        infer_event: |_| None,
        tool_names: &[],
        mcp_name: |_| None,
        answer: Answer::HookSpecific,
        project_note: None,
        label: "Claude Code",
        verified: (CLAUDE_OLDEST_VERIFIED, CLAUDE_VERIFIED, Verified::EndToEnd),
    },
    Spec {
        host: Host::Codex,
        slug: "codex",
        aliases: &[],
        install_flag: "--codex",
        executable: "codex",
        events: event::PASCAL_NAMES,
        hooks: hooks::CODEX_HOOKS,
        project_hooks: ".codex/hooks.json",
        user_hooks: || codex_home().join("hooks.json"),
        hooks_file: HooksFile::EventGroups,
        timeout: TIMEOUT_SECONDS,
        trust: Trust::CodexHash,
        block_on_failure_since: None,
        runs_async: false,
        config_dir: codex_home,
        history_dir: || codex_home().join("sessions"),
        session_of_log: |p| {
            let stem = p.file_stem()?.to_str()?;
            if p.extension()? != "jsonl" || !stem.starts_with("rollout-") || stem.len() < 36 {
                return None;
            }
            Some(stem[stem.len() - 36..].to_string())
        },
        // Codex sends `turn_id` and never `prompt_id` (measured, Codex 0.169).
        claims_payload: |raw| truthy(raw, "turn_id") && !raw.contains_key("prompt_id"),
        // Its session events carry no turn_id, but their transcript is a `rollout-*` file.
        claims_transcript: |path| {
            Path::new(path)
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("rollout-"))
        },
        env_markers: &["CODEX_HOME", "CODEX_SANDBOX"],
        infer_event: |_| None,
        tool_names: &[],
        mcp_name: |_| None,
        answer: Answer::HookSpecific,
        project_note: None,
        label: "Codex",
        verified: (CODEX_OLDEST_VERIFIED, CODEX_VERIFIED, Verified::EndToEnd),
    },
    peers::GEMINI,
    peers::CURSOR,
    peers::COPILOT,
];

pub(crate) fn truthy(raw: &Map<String, Value>, key: &str) -> bool {
    match raw.get(key) {
        None | Some(Value::Null | Value::Bool(false)) => false,
        Some(Value::String(s)) => !s.is_empty(),
        Some(_) => true,
    }
}

impl Host {
    /// This host's entry of [`HOSTS`].
    #[must_use]
    pub fn spec(self) -> &'static Spec {
        HOSTS.iter().find(|s| s.host == self).unwrap_or(&HOSTS[0])
    }

    /// The slug stored and shown (`claude-code`, `codex`, `gemini-cli`, `cursor`,
    /// `copilot-cli`).
    #[must_use]
    pub fn slug(self) -> &'static str {
        self.spec().slug
    }

    /// The hooks callus installs for this host, in the order they are written.
    #[must_use]
    pub fn specs(self) -> &'static [HookSpec] {
        self.spec().hooks
    }

    /// [`Host::specs`] less the ones the installed client is known to predate (a client
    /// not found keeps them all: it may be installed or upgraded later).
    #[must_use]
    pub(crate) fn specs_for_client(self) -> Vec<HookSpec> {
        let mut version = None;
        self.specs()
            .iter()
            .filter(|s| {
                let Some(since) = s.since else { return true };
                let v = version
                    .get_or_insert_with(|| client::installed_version(self.spec().executable));
                v.is_none_or(|v| v >= since)
            })
            .copied()
            .collect()
    }

    /// Parse a slug or alias (case-insensitive); unknown names are `None`.
    #[must_use]
    pub fn from_slug(s: &str) -> Option<Self> {
        let s = s.trim().to_ascii_lowercase();
        HOSTS
            .iter()
            .find(|h| h.slug == s || h.aliases.contains(&s.as_str()))
            .map(|h| h.host)
    }

    /// The name rules know `tool` by: the host's own name mapped through its table (Gemini
    /// CLI's `run_shell_command` is `Bash`), its MCP tools as `mcp__<server>__<tool>`.
    #[must_use]
    pub fn canonical_tool(self, tool: &str) -> std::borrow::Cow<'static, str> {
        let spec = self.spec();
        if let Some((_, ours)) = spec.tool_names.iter().find(|(theirs, _)| *theirs == tool) {
            return std::borrow::Cow::Borrowed(ours);
        }
        std::borrow::Cow::Owned((spec.mcp_name)(tool).unwrap_or_else(|| tool.to_string()))
    }

    /// The event this host calls `name`.
    #[must_use]
    pub fn event(self, name: &str) -> Event {
        self.spec()
            .events
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(Event::Other, |(_, e)| *e)
    }
}

/// Tell the hosts apart: `CALLUS_HOST` override, then the payload's shape, then the
/// transcript's file name, then the environment markers, then the first host of [`HOSTS`].
/// `env_set` says whether a variable is set.
pub(crate) fn detect(raw: &Map<String, Value>, env_set: impl Fn(&str) -> bool) -> Host {
    if let Some(host) = std::env::var("CALLUS_HOST")
        .ok()
        .as_deref()
        .and_then(Host::from_slug)
    {
        return host;
    }
    if let Some(s) = HOSTS.iter().find(|s| (s.claims_payload)(raw)) {
        return s.host;
    }
    if let Some(path) = raw.get("transcript_path").and_then(Value::as_str)
        && let Some(s) = HOSTS.iter().find(|s| (s.claims_transcript)(path))
    {
        return s.host;
    }
    if let Some(s) = HOSTS
        .iter()
        .find(|s| s.env_markers.iter().any(|k| env_set(k)))
    {
        return s.host;
    }
    HOSTS[0].host
}

/// `$HOME` (or `.`).
#[must_use]
pub(crate) fn user_home() -> PathBuf {
    std::env::var_os("HOME")
        .filter(|v| !v.is_empty())
        .map_or_else(|| PathBuf::from("."), PathBuf::from)
}

/// Claude Code's own directory: `$CLAUDE_CONFIG_DIR` made absolute (Claude Code reads its
/// `settings.json` and keeps `projects/` there when it is set), else `~/.claude`.
#[must_use]
pub(crate) fn claude_dir() -> PathBuf {
    match std::env::var_os("CLAUDE_CONFIG_DIR").filter(|v| !v.is_empty()) {
        Some(p) => absolute(PathBuf::from(p)),
        None => user_home().join(".claude"),
    }
}

fn absolute(p: PathBuf) -> PathBuf {
    if p.is_absolute() {
        p
    } else {
        std::env::current_dir().unwrap_or_default().join(p)
    }
}

/// Codex's home: `$CODEX_HOME` made absolute, else `~/.codex`.
#[must_use]
pub(crate) fn codex_home() -> PathBuf {
    match std::env::var_os("CODEX_HOME").filter(|v| !v.is_empty()) {
        Some(p) => absolute(PathBuf::from(p)),
        None => user_home().join(".codex"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: &Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn every_host_round_trips_its_slug_and_aliases() {
        for s in HOSTS {
            assert_eq!(Host::from_slug(s.slug), Some(s.host));
            assert_eq!(Host::from_slug(&s.slug.to_uppercase()), Some(s.host));
            for a in s.aliases {
                assert_eq!(Host::from_slug(a), Some(s.host));
            }
            assert_eq!(s.host.spec().slug, s.slug);
        }
        assert_eq!(Host::from_slug("nope"), None);
    }

    #[test]
    fn payload_claims_are_exclusive_for_every_pair_of_hosts() {
        let payloads = [
            json!({"turn_id": "t"}),
            json!({"prompt_id": "p"}),
            json!({"turn_id": "t", "prompt_id": "p"}),
            json!({"turn_id": "t", "prompt_id": ""}),
            json!({}),
        ];
        for p in &payloads {
            let raw = obj(p);
            let claims: Vec<Host> = HOSTS
                .iter()
                .filter(|s| (s.claims_payload)(&raw))
                .map(|s| s.host)
                .collect();
            assert!(claims.len() <= 1, "{p}: claimed by {claims:?}");
        }
    }

    #[test]
    fn events_map_both_ways() {
        for s in HOSTS {
            for (name, event) in s.events {
                assert_eq!(s.host.event(name), *event);
            }
            assert_eq!(s.host.event("NoSuchEvent"), Event::Other);
            assert!(
                s.runs_async || s.hooks.iter().all(|h| !h.is_async),
                "{}",
                s.slug
            );
            for h in s.hooks {
                assert_ne!(s.host.event(h.event), Event::Other, "{}", h.event);
            }
        }
    }

    #[test]
    fn session_log_names() {
        let codex = Host::Codex.spec();
        let id = "0199a213-81c0-7800-8aa1-bbab2a035a53";
        assert_eq!(
            (codex.session_of_log)(Path::new(&format!(
                "/s/rollout-2026-01-01T00-00-00-{id}.jsonl"
            ))),
            Some(id.to_string())
        );
        assert_eq!((codex.session_of_log)(Path::new("/s/other.jsonl")), None);
        let claude = Host::ClaudeCode.spec();
        assert_eq!(
            (claude.session_of_log)(Path::new("/p/abc.jsonl")),
            Some("abc".into())
        );
        assert_eq!((claude.session_of_log)(Path::new("/p/abc.json")), None);
    }
}
