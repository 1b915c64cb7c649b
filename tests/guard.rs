//! Integration tests of the guard, driving the real binary: the hook's output per action and
//! host, layering, the failure policy, the audit chain, redaction, `guard check`/`test`/
//! `audit`, an argv array decided as its string for every host, and callusguard's hook
//! fixtures replayed against its shipped rulesets.

mod actions;
mod allow_once;
mod anchor;
mod argv;
mod audit;
mod bypass;
mod check;
mod conditions;
mod config;
mod failure;
mod fixtures;
mod index;
mod layers;
mod session_files;
mod time_limit;

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};

use crate::common::Env;

/// Which host a payload imitates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Host {
    /// Claude Code: carries `prompt_id`.
    Claude,
    /// Codex: carries `turn_id` and no `prompt_id`.
    Codex,
}

pub(crate) const HOSTS: [Host; 2] = [Host::Claude, Host::Codex];

impl Host {
    pub(crate) fn slug(self) -> &'static str {
        match self {
            Host::Claude => "claude-code",
            Host::Codex => "codex",
        }
    }
}

/// A `PreToolUse` payload as the host sends it (measured shapes, DESIGN.md).
pub(crate) fn payload(host: Host, tool: &str, input: &Value, cwd: &Path) -> Value {
    match host {
        Host::Claude => json!({
            "session_id": "sess-claude",
            "transcript_path": "/tmp/transcript.jsonl",
            "cwd": cwd,
            "prompt_id": "prompt-1",
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": tool,
            "tool_input": input,
            "tool_use_id": "toolu_01",
        }),
        Host::Codex => json!({
            "session_id": "sess-codex",
            "turn_id": "turn-1",
            "cwd": cwd,
            "hook_event_name": "PreToolUse",
            "model": "gpt-5-codex",
            "permission_mode": "default",
            "tool_name": tool,
            "tool_input": input,
            "tool_use_id": "call_01",
        }),
    }
}

/// A Bash call's payload bytes, run in the env's repo.
pub(crate) fn bash(env: &Env, host: Host, command: &str) -> Vec<u8> {
    payload(
        host,
        "Bash",
        &json!({ "command": command }),
        env.repo_path(),
    )
    .to_string()
    .into_bytes()
}

/// `callus guard` with `stdin`.
/// The refusal texts come without their allow-once sentence (checked for its shape by
/// `common::strip_allow_once`; the approval itself is tested in `guard::allow_once`).
pub(crate) fn guard(env: &Env, stdin: &[u8]) -> Output {
    crate::common::without_allow_once(env.run(&["guard"], stdin))
}

/// Every audit record in chain order, read straight from the store (empty if none).
pub(crate) fn audit_records(env: &Env) -> Vec<Value> {
    audit_rows(&env.db())
        .into_iter()
        .map(|(_, text)| serde_json::from_str(&text).expect("record is JSON"))
        .collect()
}

/// `(seq, record text)` of every audit row of the store at `db`.
pub(crate) fn audit_rows(db: &Path) -> Vec<(i64, String)> {
    if !db.exists() {
        return Vec::new();
    }
    let conn = rusqlite::Connection::open(db).expect("open store");
    let mut stmt = conn
        .prepare("SELECT seq, record FROM audit ORDER BY seq")
        .expect("query audit");
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("read audit")
        .map(Result::unwrap)
        .collect()
}

/// A test ruleset with one rule per action and controlled messages.
pub(crate) const ACTIONS_RULES: &str = r#"{"rules": [
  {"id": "t-nudge", "tool": "Bash", "any": ["\\bnudgeme\\b"], "message": "Use scripts/wrapper.sh instead."},
  {"id": "t-nudge-same", "tool": "Bash", "any": ["\\bnudgeme\\b"], "message": "Use scripts/wrapper.sh instead."},
  {"id": "t-nudge-2", "tool": "Bash", "any": ["\\bnudgeme\\s+twice\\b"], "severity": 5, "message": "Pass --twice explicitly."},
  {"id": "t-deny", "tool": "Bash", "any": ["\\bdenyme\\b"], "action": "deny", "severity": 10, "message": "Run it through scripts/safe.sh."},
  {"id": "t-block", "tool": "Bash", "any": ["\\bblockme\\b"], "action": "block", "message": "Never run this; query the read replica."},
  {"id": "t-monitor", "tool": "Bash", "any": ["\\bwatchme\\b"], "action": "monitor"}
]}"#;

/// The exact nudge stdout for `context`.
pub(crate) fn nudge_json(context: &str) -> String {
    json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": context}})
        .to_string()
}

/// The exact deny stdout for `reason`.
pub(crate) fn deny_json(reason: &str) -> String {
    json!({"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": reason,
    }})
    .to_string()
}

/// Path of a shipped callusguard ruleset copy under tests/fixtures/rulesets.
pub(crate) fn fixture_ruleset(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/rulesets")
        .join(name)
}

/// The built-in starter's message for rule `id` (exact-output assertions follow the shipped
/// policy's wording rather than a copy of it).
pub(crate) fn starter_message(env: &Env, id: &str) -> String {
    crate::common::starter_rules(env)
        .iter()
        .find(|r| r["id"] == id)
        .and_then(|r| r["message"].as_str())
        .unwrap_or_else(|| panic!("the starter has no rule {id} with a message"))
        .to_string()
}

/// The exact hook stdout when the starter's rule `id` denies a call.
pub(crate) fn starter_deny_json(env: &Env, id: &str) -> String {
    deny_json(&format!(
        "callus denied this call (rule {id}): {}",
        starter_message(env, id)
    ))
}

/// The exact hook stderr when the starter's rule `id` blocks a call.
pub(crate) fn starter_block_text(env: &Env, id: &str) -> String {
    format!(
        "BLOCKED by callus (rule {id}): {}\n",
        starter_message(env, id)
    )
}

/// The hook starts a process per tool call; on Linux `build.rs` links it non-PIE so the
/// loader has no relocations to write at each start (`CALLUS_PIE=1` keeps a PIE), and with
/// GCC's static unwinder so `libgcc_s` is not loaded.
#[cfg(target_os = "linux")]
#[test]
fn the_linux_binary_starts_light() {
    let bin = std::fs::read(env!("CARGO_BIN_EXE_callus")).expect("read the binary");
    assert_eq!(&bin[..4], b"\x7fELF");
    // e_type, little-endian: 2 = ET_EXEC (position-dependent), 3 = ET_DYN (PIE).
    let e_type = u16::from_le_bytes([bin[16], bin[17]]);
    let pie = option_env!("CALLUS_PIE").is_some_and(|v| !v.is_empty() && v != "0");
    assert_eq!(e_type, if pie { 3 } else { 2 });
    // With GCC's static unwinder linked in (build.rs), `libgcc_s` is not loaded at start;
    // the panic tests in `failure` show that panics are still caught. build.rs links it
    // whenever the C compiler names the archive, as it does here when this holds.
    let archive = std::process::Command::new(std::env::var("CC").unwrap_or("cc".into()))
        .arg("-print-file-name=libgcc_eh.a")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    let archive_path = Path::new(&archive);
    let available =
        cfg!(target_env = "gnu") && archive_path.is_absolute() && archive_path.is_file();
    let linked = option_env!("CALLUS_STATIC_UNWINDER").is_some();
    assert_eq!(linked, available, "build.rs: static unwinder ({archive})");
    let names_libgcc_s = bin.windows(13).any(|w| w == b"libgcc_s.so.1");
    assert_eq!(names_libgcc_s, !linked, "libgcc_s dependency");
}
