//! Integration tests: `install` / `uninstall` on fixture settings files, through the binary.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{Env, stderr, stdout};

const BIN: &str = env!("CARGO_BIN_EXE_callus");
/// What project-scope hooks call: `callus` by name (a committed file names no one's home).
const PROJECT_BIN: &str = "callus";

fn settings(env: &Env) -> PathBuf {
    env.repo_path().join(".claude/settings.json")
}

fn read_json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn commands(doc: &Value, event: &str) -> Vec<String> {
    doc["hooks"][event]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|g| g["hooks"].as_array().cloned().unwrap_or_default())
        .filter_map(|h| h["command"].as_str().map(str::to_string))
        .collect()
}

fn ok(o: &std::process::Output) {
    assert!(
        o.status.success(),
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        stdout(o),
        stderr(o)
    );
}

/// Install then uninstall at project scope; the file must come back byte for byte.
fn round_trip(original: Option<&str>) {
    let env = Env::new();
    let path = settings(&env);
    if let Some(text) = original {
        env.write_repo(".claude/settings.json", text);
    }
    let o = env.run(&["install", "--project"], b"");
    ok(&o);
    let doc = read_json(&path);
    assert_eq!(
        commands(&doc, "PreToolUse").last().unwrap(),
        &format!("{PROJECT_BIN} guard")
    );
    for event in [
        "PostToolUse",
        "PostToolUseFailure",
        "PermissionDenied",
        "SessionStart",
        "SessionEnd",
        "Stop",
        "SubagentStart",
        "SubagentStop",
    ] {
        let ours: Vec<String> = commands(&doc, event)
            .into_iter()
            .filter(|c| c.starts_with(PROJECT_BIN))
            .collect();
        assert_eq!(ours, vec![format!("{PROJECT_BIN} record")], "{event}");
    }
    let o = env.run(&["uninstall", "--project"], b"");
    ok(&o);
    match original {
        Some(text) => assert_eq!(std::fs::read_to_string(&path).unwrap(), text),
        None => assert!(
            !path.exists(),
            "install created the file, uninstall removes it"
        ),
    }
}

#[test]
fn absent_file_is_created_then_removed() {
    round_trip(None);
}

#[test]
fn empty_files_round_trip_byte_identical() {
    round_trip(Some(""));
    round_trip(Some("{}"));
    round_trip(Some("{}\n"));
    round_trip(Some("{\"hooks\": {}}\n"));
}

const FOREIGN: &str = r#"{
    "model": "opus",
    "permissions": {"allow": ["Bash(ls:*)"]},
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "/opt/mine/guard.sh", "timeout": 15}]}
        ],
        "Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]
    }
}
"#;

#[test]
fn foreign_hooks_are_kept_and_the_file_round_trips() {
    round_trip(Some(FOREIGN));
    let env = Env::new();
    let path = env.write_repo(".claude/settings.json", FOREIGN);
    ok(&env.run(&["install", "--project"], b""));
    let doc = read_json(&path);
    assert_eq!(doc["model"], "opus");
    assert_eq!(doc["permissions"]["allow"][0], "Bash(ls:*)");
    let pre = doc["hooks"]["PreToolUse"].as_array().unwrap();
    assert_eq!(pre[0]["hooks"][0]["command"], "/opt/mine/guard.sh");
    assert_eq!(pre[0]["hooks"][0]["timeout"], 15);
    assert_eq!(
        pre[1]["matcher"],
        "Bash|Edit|Write|MultiEdit|NotebookEdit|mcp__.*"
    );
    assert_eq!(
        commands(&doc, "Stop"),
        vec!["say done".to_string(), format!("{PROJECT_BIN} record")]
    );
    assert_eq!(doc["hooks"]["PostToolUse"][0]["hooks"][0]["async"], true);
    // The file keeps its four-space indentation.
    assert!(
        std::fs::read_to_string(&path)
            .unwrap()
            .contains("\n    \"model\"")
    );
}

#[test]
fn second_install_changes_nothing_and_says_so() {
    let env = Env::new();
    let path = env.write_repo(".claude/settings.json", FOREIGN);
    ok(&env.run(&["install", "--project"], b""));
    let first = std::fs::read(&path).unwrap();
    let o = env.run(&["install", "--project"], b"");
    ok(&o);
    assert!(stdout(&o).contains("already installed"), "{}", stdout(&o));
    assert_eq!(std::fs::read(&path).unwrap(), first);
    let o = env.run(&["install", "--project", "--dry-run"], b"");
    ok(&o);
    assert!(
        stdout(&o).contains("nothing would change"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn our_hooks_already_present_are_updated_in_place_not_duplicated() {
    let env = Env::new();
    let text = r#"{"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "command", "command": "/old/place/callus guard"}]},
        {"matcher": "Bash", "hooks": [{"type": "command", "command": "/opt/mine/guard.sh"}]}
    ], "PostToolUse": [
        {"hooks": [{"type": "command", "command": "/old/place/callus record", "async": true}]},
        {"hooks": [{"type": "command", "command": "/old/place/callus record", "async": true}]}
    ]}}"#;
    let path = env.write_repo(".claude/settings.json", text);
    let o = env.run(&["install", "--project"], b"");
    ok(&o);
    assert!(stdout(&o).contains("updated"), "{}", stdout(&o));
    let doc = read_json(&path);
    assert_eq!(
        commands(&doc, "PreToolUse"),
        vec![
            format!("{PROJECT_BIN} guard"),
            "/opt/mine/guard.sh".to_string()
        ],
        "ours keeps its position, the stale path is replaced"
    );
    assert_eq!(
        doc["hooks"]["PreToolUse"][0]["matcher"],
        "Bash|Edit|Write|MultiEdit|NotebookEdit|mcp__.*"
    );
    assert_eq!(
        commands(&doc, "PostToolUse"),
        vec![format!("{PROJECT_BIN} record")],
        "duplicate removed"
    );
    ok(&env.run(&["uninstall", "--project"], b""));
    let doc = read_json(&path);
    assert_eq!(
        commands(&doc, "PreToolUse"),
        vec!["/opt/mine/guard.sh".to_string()]
    );
    assert!(doc["hooks"].get("PostToolUse").is_none());
}

#[test]
fn malformed_json_is_reported_with_file_and_line_and_left_untouched() {
    let env = Env::new();
    let text = "{\n  \"model\": \"opus\",\n  \"hooks\": {\n    \"PreToolUse\": [,]\n  }\n}\n";
    let path = env.write_repo(".claude/settings.json", text);
    for args in [
        &["install", "--project"][..],
        &["uninstall", "--project"][..],
    ] {
        let o = env.run(args, b"");
        assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
        let want = format!("{}:4:", path.display());
        assert!(stderr(&o).contains(&want), "{}", stderr(&o));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    }
    assert!(
        !env.home_path().join("backups").exists(),
        "nothing was written"
    );
    // A well-formed document of the wrong shape is refused the same way.
    let path = env.write_repo(".claude/settings.json", "{\"hooks\": [1]}");
    let o = env.run(&["install", "--project"], b"");
    assert_eq!(o.status.code(), Some(3));
    assert!(
        stderr(&o).contains("\"hooks\" is not an object"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"hooks\": [1]}");
}

#[test]
fn dry_run_prints_a_diff_and_writes_nothing() {
    let env = Env::new();
    let path = env.write_repo(".claude/settings.json", FOREIGN);
    let o = env.run(&["install", "--project", "--dry-run"], b"");
    ok(&o);
    let out = stdout(&o);
    assert!(out.contains(&format!("+++ {}", path.display())), "{out}");
    assert!(out.contains("@@ -"), "{out}");
    assert!(
        out.contains(&format!(
            "+                        \"command\": \"{PROJECT_BIN} guard\""
        )),
        "{out}"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), FOREIGN);
    ok(&env.run(&["install", "--project"], b""));
    let installed = std::fs::read_to_string(&path).unwrap();
    let o = env.run(&["uninstall", "--project", "--dry-run"], b"");
    ok(&o);
    assert!(stdout(&o).contains(&format!(
        "-                        \"command\": \"{PROJECT_BIN} guard\""
    )));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), installed);
}

#[test]
fn edits_made_after_install_survive_uninstall() {
    let env = Env::new();
    let path = env.write_repo(".claude/settings.json", FOREIGN);
    ok(&env.run(&["install", "--project"], b""));
    let mut doc = read_json(&path);
    doc["model"] = Value::from("sonnet");
    std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    ok(&env.run(&["uninstall", "--project"], b""));
    let doc = read_json(&path);
    assert_eq!(doc["model"], "sonnet");
    assert_eq!(
        commands(&doc, "PreToolUse"),
        vec!["/opt/mine/guard.sh".to_string()]
    );
    assert_eq!(commands(&doc, "Stop"), vec!["say done".to_string()]);
    assert!(doc["hooks"].get("SessionStart").is_none());
}

#[test]
fn user_scope_writes_the_home_settings() {
    let env = Env::new();
    let o = env.run(&["install", "--user"], b"");
    ok(&o);
    let path = env.home_path().join("userhome/.claude/settings.json");
    assert_eq!(
        commands(&read_json(&path), "PreToolUse"),
        vec![format!("{BIN} guard")]
    );
    assert!(!settings(&env).exists());
    ok(&env.run(&["uninstall"], b""));
    assert!(!path.exists());
}

#[test]
fn uninstall_without_our_hooks_changes_nothing() {
    let env = Env::new();
    let path = env.write_repo(".claude/settings.json", FOREIGN);
    let o = env.run(&["uninstall", "--project"], b"");
    ok(&o);
    assert!(stdout(&o).contains("not installed"), "{}", stdout(&o));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), FOREIGN);
}

fn codex_env() -> (Env, PathBuf) {
    let mut env = Env::new();
    let codex_home = env.home_path().join("codexhome");
    std::fs::create_dir_all(&codex_home).unwrap();
    let ch = codex_home.display().to_string();
    env.var("CODEX_HOME", &ch);
    (env, codex_home)
}

#[test]
fn codex_hooks_are_written_and_trusted_and_uninstall_restores_both_files() {
    let (env, codex_home) = codex_env();
    let hooks = codex_home.join("hooks.json");
    let config = codex_home.join("config.toml");
    let hooks_text = "{\n  \"hooks\": {\n    \"PreToolUse\": [\n      {\n        \"matcher\": \"Bash\",\n        \"hooks\": [\n          {\n            \"type\": \"command\",\n            \"command\": \"/opt/mine/hook.sh\"\n          }\n        ]\n      }\n    ]\n  }\n}\n";
    let config_text = "model = \"gpt-5.5\"\n\n[hooks.state.\"/elsewhere/hooks.json:stop:0:0\"]\ntrusted_hash = \"sha256:00\"\n";
    std::fs::write(&hooks, hooks_text).unwrap();
    std::fs::write(&config, config_text).unwrap();
    let o = env.run(&["install", "--codex"], b"");
    ok(&o);
    let doc = read_json(&hooks);
    assert_eq!(
        commands(&doc, "PreToolUse"),
        vec!["/opt/mine/hook.sh".to_string(), format!("{BIN} guard")]
    );
    assert_eq!(
        doc["hooks"]["PreToolUse"][1]["matcher"],
        "Bash|apply_patch|Edit|Write|mcp__.*"
    );
    assert_eq!(commands(&doc, "PostToolUse"), vec![format!("{BIN} record")]);
    assert!(
        doc["hooks"]["PostToolUse"][0]["hooks"][0]
            .get("async")
            .is_none(),
        "Codex skips async hooks"
    );
    assert!(doc["hooks"].get("PostToolUseFailure").is_none());
    let toml = std::fs::read_to_string(&config).unwrap();
    assert!(
        toml.starts_with(config_text),
        "existing config kept: {toml}"
    );
    let key = format!("[hooks.state.\"{}:pre_tool_use:1:0\"]", hooks.display());
    assert!(toml.contains(&key), "{toml}");
    assert!(
        !toml.contains(":pre_tool_use:0:0"),
        "the foreign hook is not trusted by us: {toml}"
    );
    assert_eq!(
        toml.matches("trusted_hash = \"sha256:").count(),
        1 + 6,
        "{toml}"
    );
    // Idempotent, trust included.
    let o = env.run(&["install", "--codex"], b"");
    ok(&o);
    assert!(stdout(&o).contains("already trusts"), "{}", stdout(&o));
    assert_eq!(std::fs::read_to_string(&config).unwrap(), toml);
    ok(&env.run(&["uninstall", "--codex"], b""));
    assert_eq!(std::fs::read_to_string(&hooks).unwrap(), hooks_text);
    assert_eq!(std::fs::read_to_string(&config).unwrap(), config_text);
}

#[test]
fn codex_files_install_created_are_removed_by_uninstall() {
    let (env, codex_home) = codex_env();
    ok(&env.run(&["install", "--codex"], b""));
    assert!(codex_home.join("hooks.json").exists());
    assert!(codex_home.join("config.toml").exists());
    ok(&env.run(&["uninstall", "--codex"], b""));
    assert!(!codex_home.join("hooks.json").exists());
    assert!(!codex_home.join("config.toml").exists());
}

#[test]
fn codex_trust_that_cannot_be_written_safely_is_explained_instead() {
    let (env, codex_home) = codex_env();
    let config = codex_home.join("config.toml");
    let hooks = codex_home.join("hooks.json");
    // A different hash already recorded for the key our guard will get: appending a second
    // table would make config.toml invalid and Codex would refuse to start.
    let text = format!(
        "[hooks.state.\"{}:pre_tool_use:0:0\"]\ntrusted_hash = \"sha256:feed\"\n",
        hooks.display()
    );
    std::fs::write(&config, &text).unwrap();
    let o = env.run(&["install", "--codex"], b"");
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(stdout(&o).contains("/hooks"), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("trusted_hash = \"sha256:"),
        "the exact entries are printed"
    );
    assert_eq!(std::fs::read_to_string(&config).unwrap(), text);
}

#[test]
fn codex_uninstall_warns_when_other_hooks_shift_position() {
    let (env, codex_home) = codex_env();
    let hooks = codex_home.join("hooks.json");
    ok(&env.run(&["install", "--codex"], b""));
    // The user adds a hook after ours: removing ours moves it to index 0.
    let mut doc = read_json(&hooks);
    doc["hooks"]["PreToolUse"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!(
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "/opt/mine/later.sh"}]}
        ));
    std::fs::write(&hooks, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let o = env.run(&["uninstall", "--codex"], b"");
    ok(&o);
    assert!(stdout(&o).contains("change position"), "{}", stdout(&o));
    assert_eq!(
        commands(&read_json(&hooks), "PreToolUse"),
        vec!["/opt/mine/later.sh".to_string()]
    );
}

// ---------------------------------------------------------------------------------------
// Issue 17: a new user's first hour.

/// A broken `config.toml` is refused before anything is written, with its file and line,
/// and doctor then says Codex cannot load it instead of "Codex trusts all hooks".
#[test]
fn codex_install_refuses_an_invalid_config_toml_and_writes_nothing() {
    let (env, codex_home) = codex_env();
    let config = codex_home.join("config.toml");
    let broken = "model = \"gpt-5.5\"\n\n[features\nplugins = false\n";
    std::fs::write(&config, broken).unwrap();
    let o = env.run(&["install", "--codex"], b"");
    assert_eq!(o.status.code(), Some(3), "{}", stdout(&o));
    let err = stderr(&o);
    assert!(
        err.contains(&format!("{}:3: invalid TOML", config.display())),
        "{err}"
    );
    assert!(err.contains("nothing was written"), "{err}");
    assert!(
        !codex_home.join("hooks.json").exists(),
        "hooks.json written"
    );
    assert_eq!(std::fs::read_to_string(&config).unwrap(), broken);
    assert!(!env.home_path().join("backups").exists(), "backup taken");

    // Installed on a good file, then the file breaks: doctor must not vouch for trust.
    std::fs::write(&config, "model = \"gpt-5.5\"\n").unwrap();
    ok(&env.run(&["install", "--codex"], b""));
    let good = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, format!("{good}\n= oops\n")).unwrap();
    let v: Value = serde_json::from_slice(&env.run(&["doctor", "--json"], b"").stdout).unwrap();
    let msgs: Vec<(String, String)> = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["status"].to_string(), c["message"].to_string()))
        .collect();
    assert!(
        !msgs.iter().any(|(_, m)| m.contains("Codex trusts all")),
        "{msgs:#?}"
    );
    assert!(
        msgs.iter().any(|(s, m)| s == "\"fail\""
            && m.contains("invalid TOML")
            && m.contains("trusts none")),
        "{msgs:#?}"
    );
}

/// `install --project` outside any git repository refuses and writes nothing.
#[test]
fn project_install_outside_a_repository_refuses() {
    let env = Env::new();
    let outside = tempfile::tempdir().unwrap();
    let mut cmd = env.cmd(&["install", "--project"]);
    cmd.current_dir(outside.path());
    let o = crate::common::run_cmd(cmd, b"");
    assert_eq!(o.status.code(), Some(3), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("not inside a git repository"),
        "{}",
        stderr(&o)
    );
    assert!(!outside.path().join(".claude").exists());
}

/// `CLAUDE_CONFIG_DIR` moves Claude Code's user settings, and install follows it.
#[test]
fn user_install_honours_claude_config_dir() {
    let mut env = Env::new();
    let dir = env.home_path().join("claude-config");
    env.var("CLAUDE_CONFIG_DIR", dir.to_str().unwrap());
    ok(&env.run(&["install", "--user"], b""));
    let doc = read_json(&dir.join("settings.json"));
    assert_eq!(commands(&doc, "PreToolUse"), vec![format!("{BIN} guard")]);
    assert!(!env.home_path().join("userhome/.claude").exists());
    ok(&env.run(&["uninstall", "--user"], b""));
    assert!(!dir.join("settings.json").exists());
}

/// The project file is committed: it names `callus`, never this user's binary path.
#[test]
fn project_settings_carry_no_per_user_binary_path() {
    let env = Env::new();
    ok(&env.run(&["install", "--project"], b""));
    let text = std::fs::read_to_string(settings(&env)).unwrap();
    assert!(!text.contains(BIN), "{text}");
    assert!(
        !text.contains(&env.home_path().display().to_string()),
        "{text}"
    );
    assert!(text.contains("\"callus guard\""), "{text}");
}

/// Uninstall removes the `.claude/` and `.codex/` folders install created, once empty, and
/// leaves a folder the user had.
#[test]
fn uninstall_removes_the_empty_folders_install_created() {
    let (env, _codex_home) = codex_env();
    ok(&env.run(&["install", "--project"], b""));
    ok(&env.run(&["install", "--codex", "--project"], b""));
    assert!(env.repo_path().join(".codex/hooks.json").exists());
    ok(&env.run(&["uninstall", "--project"], b""));
    ok(&env.run(&["uninstall", "--codex", "--project"], b""));
    assert!(!env.repo_path().join(".claude").exists());
    assert!(!env.repo_path().join(".codex").exists());

    std::fs::create_dir_all(env.repo_path().join(".claude")).unwrap();
    ok(&env.run(&["install", "--project"], b""));
    ok(&env.run(&["uninstall", "--project"], b""));
    assert!(
        env.repo_path().join(".claude").is_dir(),
        "the user's own folder"
    );
}
