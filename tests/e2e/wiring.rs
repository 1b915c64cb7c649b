//! Wiring callus's hooks into a client, two ways: by hand (the settings files written here,
//! mirroring what `callus install` is specified to write), and with `callus install`
//! itself. The hand-wired runs prove the guard and recorder against the real clients
//! independently of install; the installed runs prove install's wiring (and Codex trust).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::harness::{Run, Sandbox};

/// How a scenario wires callus in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wiring {
    /// Settings written by [`wire_claude`] / [`wire_codex`]; Codex runs with
    /// `--dangerously-bypass-hook-trust`.
    Hand,
    /// `callus install --project` (Claude Code) / `callus install --codex` (Codex, which
    /// then runs without the bypass flag: the trust install records must be enough).
    Install,
}

impl Wiring {
    /// `hand` or `install`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Wiring::Hand => "hand",
            Wiring::Install => "install",
        }
    }
}

fn handler(command: &str, is_async: bool) -> Value {
    let mut h = json!({"type": "command", "command": command});
    if is_async {
        h["async"] = json!(true);
    }
    h
}

fn group(matcher: Option<&str>, handler: &Value) -> Value {
    match matcher {
        Some(m) => json!([{"matcher": m, "hooks": [handler]}]),
        None => json!([{"hooks": [handler]}]),
    }
}

fn write_json(path: &Path, doc: &Value) -> PathBuf {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("create settings folder");
    let text = serde_json::to_string_pretty(doc).expect("serialize settings");
    std::fs::write(path, text + "\n").expect("write settings");
    path.to_path_buf()
}

/// `<repo>/.claude/settings.json` by hand: `PreToolUse` → `<bin> guard` (matcher over the
/// screened tools); `PostToolUse`, `PostToolUseFailure` and `PermissionDenied` →
/// `<bin> record` (async, as install writes them); the session events → `<bin> record`.
pub(crate) fn wire_claude(repo: &Path, callus_bin: &Path) -> PathBuf {
    let guard = format!("{} guard", callus_bin.display());
    let record = format!("{} record", callus_bin.display());
    let mut hooks = serde_json::Map::new();
    hooks.insert(
        "PreToolUse".into(),
        group(
            Some("Bash|Edit|Write|MultiEdit|NotebookEdit|mcp__.*"),
            &handler(&guard, false),
        ),
    );
    for event in ["PostToolUse", "PostToolUseFailure", "PermissionDenied"] {
        hooks.insert(event.into(), group(None, &handler(&record, true)));
    }
    for event in [
        "SessionStart",
        "SessionEnd",
        "Stop",
        "SubagentStart",
        "SubagentStop",
    ] {
        hooks.insert(event.into(), group(None, &handler(&record, false)));
    }
    write_json(
        &repo.join(".claude/settings.json"),
        &json!({ "hooks": Value::Object(hooks) }),
    )
}

/// `$CODEX_HOME/hooks.json` by hand: `PreToolUse` → `<bin> guard`; `PostToolUse` (which
/// Codex also fires for failures) and the session events → `<bin> record`. Codex skips
/// `async` handlers, so none is.
pub(crate) fn wire_codex(codex_home: &Path, callus_bin: &Path) -> PathBuf {
    let guard = format!("{} guard", callus_bin.display());
    let record = format!("{} record", callus_bin.display());
    let mut hooks = serde_json::Map::new();
    hooks.insert(
        "PreToolUse".into(),
        group(
            Some("Bash|apply_patch|Edit|Write|mcp__.*"),
            &handler(&guard, false),
        ),
    );
    for event in ["PostToolUse", "SessionStart", "Stop"] {
        hooks.insert(event.into(), group(None, &handler(&record, false)));
    }
    write_json(
        &codex_home.join("hooks.json"),
        &json!({ "hooks": Value::Object(hooks) }),
    )
}

/// `callus install --project` (Claude Code) in the repo.
pub(crate) fn install_claude(sandbox: &Sandbox) -> Run {
    sandbox.callus(&["install", "--project"], false)
}

/// `callus install --codex` (user scope: `$CODEX_HOME/hooks.json` plus trust entries in
/// `$CODEX_HOME/config.toml`).
pub(crate) fn install_codex(sandbox: &Sandbox) -> Run {
    sandbox.callus(&["install", "--codex"], true)
}
