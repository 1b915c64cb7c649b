//! Integration tests: `doctor`, one test per kind of problem it must catch.

use std::path::{Path, PathBuf};

use callus::testing::{self as audit, AuditRecord};
use serde_json::Value;

use crate::common::{Env, stdout};

const BIN: &str = env!("CARGO_BIN_EXE_callus");

/// An env whose PATH holds only a private bin dir and the system's, so the machine's own
/// `claude`/`codex`/`callus` never leak into the checks. The binary under test is on it as
/// `callus` (project hooks call it by name).
fn doctor_env() -> Env {
    let mut env = Env::new();
    let bin = env.home_path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(BIN, bin.join("callus")).unwrap();
    let path = format!("{}:/usr/bin:/bin", bin.display());
    env.var("PATH", &path);
    env
}

fn fake_client(env: &Env, name: &str, version_line: &str) {
    use std::os::unix::fs::PermissionsExt;
    let p = env.home_path().join("bin").join(name);
    std::fs::write(&p, format!("#!/bin/sh\necho '{version_line}'\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn doctor(env: &Env) -> Value {
    let o = env.run(&["doctor", "--json"], b"");
    let v: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", stdout(&o)));
    let failures = v["failures"].as_u64().unwrap();
    assert_eq!(
        o.status.code(),
        Some(i32::from(failures > 0)),
        "exit 1 iff a check failed"
    );
    assert_eq!(v["ok"], failures == 0);
    v
}

fn lines(v: &Value, area: &str, status: &str) -> Vec<String> {
    v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["area"] == area && c["status"] == status)
        .map(|c| c["message"].as_str().unwrap().to_string())
        .collect()
}

fn has(v: &Value, area: &str, status: &str, needle: &str) -> bool {
    lines(v, area, status).iter().any(|m| m.contains(needle))
}

fn install_project(env: &Env) -> PathBuf {
    let o = env.run(&["install", "--project"], b"");
    assert!(o.status.success(), "{}", stdout(&o));
    env.repo_path().join(".claude/settings.json")
}

#[test]
fn unwired_host_is_noted_and_no_wiring_at_all_fails() {
    let env = doctor_env();
    std::fs::create_dir_all(env.home_path().join("userhome/.claude")).unwrap();
    let v = doctor(&env);
    assert!(
        has(&v, "wiring", "info", "claude-code: found, not wired"),
        "{v:#}"
    );
    assert!(
        has(&v, "wiring", "fail", "not wired into any agent"),
        "{v:#}"
    );
    install_project(&env);
    let v = doctor(&env);
    assert!(lines(&v, "wiring", "fail").is_empty(), "{v:#}");
    assert!(
        has(
            &v,
            "wiring",
            "ok",
            "PreToolUse [Bash|Edit|Write|MultiEdit|NotebookEdit|mcp__.*] → guard"
        ),
        "{v:#}"
    );
}

#[test]
fn nothing_wired_anywhere_fails() {
    let env = doctor_env();
    let v = doctor(&env);
    assert!(
        has(&v, "wiring", "fail", "not wired into any agent"),
        "{v:#}"
    );
}

#[test]
fn stale_binary_path_fails() {
    let env = doctor_env();
    let settings = install_project(&env);
    let text = std::fs::read_to_string(&settings).unwrap();
    std::fs::write(
        &settings,
        text.replace("\"callus ", "\"/gone/since/callus "),
    )
    .unwrap();
    let v = doctor(&env);
    assert!(has(&v, "wiring", "fail", "stale binary path"), "{v:#}");
    assert!(has(&v, "wiring", "fail", "/gone/since/callus"), "{v:#}");
}

#[test]
fn a_missing_guard_fails_and_a_missing_recorder_warns() {
    let env = doctor_env();
    let settings = install_project(&env);
    let mut doc: Value =
        serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    doc["hooks"]
        .as_object_mut()
        .unwrap()
        .remove("PostToolUseFailure");
    std::fs::write(&settings, doc.to_string()).unwrap();
    let v = doctor(&env);
    assert!(
        has(
            &v,
            "wiring",
            "warn",
            "PostToolUseFailure → callus record is not wired"
        ),
        "{v:#}"
    );
    doc["hooks"].as_object_mut().unwrap().remove("PreToolUse");
    std::fs::write(&settings, doc.to_string()).unwrap();
    let v = doctor(&env);
    assert!(has(&v, "wiring", "fail", "no call is screened"), "{v:#}");
}

#[test]
fn broken_ruleset_fails() {
    let env = doctor_env();
    env.write_home(
        "rules.json",
        r#"{"rules": [{"id": "bad-regex", "any": ["("], "message": "m"}]}"#,
    );
    let v = doctor(&env);
    let fails = lines(&v, "rules", "fail");
    assert!(
        fails
            .iter()
            .any(|m| m.contains("rules.json") && m.contains("bad-regex")),
        "{v:#}"
    );
}

fn record(session: &str, tool_use_id: &str, decision: &str, age_ms: i64) -> AuditRecord {
    let ts = chrono::Utc::now() - chrono::Duration::milliseconds(age_ms);
    AuditRecord {
        ts: ts.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        kind: "decision".into(),
        host: "claude-code".into(),
        session_id: Some(session.into()),
        tool_use_id: Some(tool_use_id.into()),
        cwd: None,
        tool: "Bash".into(),
        fired: vec![],
        decision: decision.into(),
        winner: None,
        dryrun: false,
        ruleset_hash: "h".into(),
        version: "0".into(),
        command_sha256: None,
        command_preview: None,
        error: None,
        acs: callus::testing::AcsVerdict {
            decision: "allow".into(),
            reason: None,
            message: None,
            warnings: Vec::new(),
        },
    }
}

#[test]
fn tampered_chain_fails() {
    let env = doctor_env();
    {
        let conn = callus::testing::open_store(&env.db()).unwrap();
        for i in 0..3 {
            audit::append(&conn, &record("s", &format!("t{i}"), "nudge", 0)).unwrap();
        }
    }
    let v = doctor(&env);
    // Consistent but unanchored: a warning that says so, never "intact".
    assert!(
        has(&v, "audit", "warn", "chain UNANCHORED: 3 record(s)"),
        "{v:#}"
    );
    assert!(has(&v, "store", "ok", "integrity_check ok"), "{v:#}");
    assert!(has(&v, "store", "ok", "schema current"), "{v:#}");
    let conn = rusqlite::Connection::open(env.db()).unwrap();
    conn.execute(
        "UPDATE audit SET record = replace(record, '\"nudge\"', '\"allow\"') WHERE seq = 2",
        [],
    )
    .unwrap();
    drop(conn);
    let v = doctor(&env);
    assert!(has(&v, "audit", "fail", "TAMPERED at record 2"), "{v:#}");
}

#[test]
fn a_session_after_install_with_no_events_fails() {
    let env = doctor_env();
    install_project(&env);
    let transcript = env
        .home_path()
        .join("userhome/.claude/projects/-repo/sess-1.jsonl");
    std::fs::create_dir_all(transcript.parent().unwrap()).unwrap();
    std::fs::write(&transcript, "{}\n").unwrap();
    let v = doctor(&env);
    assert!(has(&v, "firing", "fail", "sess-1"), "{v:#}");
    assert!(has(&v, "firing", "fail", "not firing"), "{v:#}");
    let conn = callus::testing::open_store(&env.db()).unwrap();
    conn.execute(
        "INSERT INTO sessions (id, host, source) VALUES ('sess-1', 'claude-code', 'hook')",
        [],
    )
    .unwrap();
    drop(conn);
    let v = doctor(&env);
    assert!(lines(&v, "firing", "fail").is_empty(), "{v:#}");
    assert!(has(&v, "firing", "ok", "sess-1"), "{v:#}");
}

#[test]
fn decisions_without_outcomes_fail() {
    let env = doctor_env();
    install_project(&env);
    let conn = callus::testing::open_store(&env.db()).unwrap();
    let hour = 3_600_000;
    audit::append(&conn, &record("s-1", "t-ran", "nudge", hour)).unwrap();
    audit::append(&conn, &record("s-1", "t-recorded", "nudge", hour)).unwrap();
    audit::append(&conn, &record("s-1", "t-denied", "deny", hour)).unwrap();
    audit::append(&conn, &record("s-1", "t-running", "nudge", 1000)).unwrap();
    conn.execute(
        "INSERT INTO tool_calls (tool_use_id, session_id, host, source, tool, status)
         VALUES ('t-recorded', 's-1', 'claude-code', 'hook', 'Bash', 'success')",
        [],
    )
    .unwrap();
    drop(conn);
    let v = doctor(&env);
    assert!(
        has(
            &v,
            "firing",
            "fail",
            "session s-1 has 1 of 2 guard decision(s)"
        ),
        "{v:#}"
    );
    let conn = rusqlite::Connection::open(env.db()).unwrap();
    conn.execute(
        "INSERT INTO tool_calls (tool_use_id, session_id, host, source, tool, status)
         VALUES ('t-ran', 's-1', 'claude-code', 'hook', 'Bash', 'failure')",
        [],
    )
    .unwrap();
    drop(conn);
    let v = doctor(&env);
    assert!(lines(&v, "firing", "fail").is_empty(), "{v:#}");
}

#[test]
fn codex_untrusted_and_modified_hooks_fail() {
    let mut env = doctor_env();
    let codex_home = env.home_path().join("codexhome");
    std::fs::create_dir_all(&codex_home).unwrap();
    let ch = codex_home.display().to_string();
    env.var("CODEX_HOME", &ch);
    assert!(env.run(&["install", "--codex"], b"").status.success());
    let v = doctor(&env);
    assert!(has(&v, "wiring", "ok", "Codex trusts all 6 hooks"), "{v:#}");
    let config = codex_home.join("config.toml");
    let trusted = std::fs::read_to_string(&config).unwrap();
    std::fs::remove_file(&config).unwrap();
    let v = doctor(&env);
    assert!(has(&v, "wiring", "fail", "6 hook(s) untrusted"), "{v:#}");
    std::fs::write(&config, trusted).unwrap();
    let hooks = codex_home.join("hooks.json");
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(&hooks).unwrap()).unwrap();
    doc["hooks"]["PreToolUse"][0]["hooks"][0]["timeout"] = Value::from(30);
    std::fs::write(&hooks, doc.to_string()).unwrap();
    let v = doctor(&env);
    assert!(
        has(
            &v,
            "wiring",
            "fail",
            "1 hook(s) modified since they were trusted"
        ),
        "{v:#}"
    );
}

#[test]
fn a_newer_client_is_a_warning_not_a_failure() {
    let env = doctor_env();
    fake_client(&env, "claude", "9.9.9 (Claude Code)");
    fake_client(&env, "codex", "codex-cli 0.169.0");
    let v = doctor(&env);
    assert!(
        has(
            &v,
            "clients",
            "warn",
            "Claude Code 9.9.9 is newer than 2.1.332"
        ),
        "{v:#}"
    );
    assert!(has(&v, "clients", "ok", "Codex 0.169.0"), "{v:#}");
    assert!(lines(&v, "clients", "fail").is_empty());
}

/// The oldest version the end-to-end suite still runs on is verified too; one older is not.
#[test]
fn the_whole_verified_range_is_ok_and_an_older_client_a_warning() {
    let env = doctor_env();
    fake_client(&env, "claude", "2.1.328 (Claude Code)");
    fake_client(&env, "codex", "codex-cli 0.168.2");
    let v = doctor(&env);
    assert!(
        has(&v, "clients", "ok", "Claude Code 2.1.328: verified"),
        "{v:#}"
    );
    assert!(
        has(&v, "clients", "warn", "Codex 0.168.2 is older than 0.169.0"),
        "{v:#}"
    );
}

/// Issue 17: Codex on PATH but deliberately not wired (Claude Code is) is not a failure.
#[test]
fn a_host_on_path_but_not_wired_is_not_a_failure() {
    let env = doctor_env();
    fake_client(&env, "codex", "codex-cli 0.171.0");
    install_project(&env);
    let v = doctor(&env);
    assert!(
        has(&v, "wiring", "info", "codex: found, not wired"),
        "{v:#}"
    );
    assert!(
        !lines(&v, "wiring", "fail")
            .iter()
            .any(|m| m.contains("codex")),
        "{v:#}"
    );
}

/// Project hooks call `callus` by name: with none on PATH every hook call fails.
#[test]
fn project_hooks_by_name_without_callus_on_path_fail() {
    let env = doctor_env();
    install_project(&env);
    std::fs::remove_file(env.home_path().join("bin/callus")).unwrap();
    let v = doctor(&env);
    assert!(
        has(
            &v,
            "wiring",
            "fail",
            "calls `callus` by name, and none is on PATH"
        ),
        "{v:#}"
    );
}

#[test]
fn halted_sessions_are_listed() {
    let env = doctor_env();
    let home = callus::testing::Home::at(env.home_path());
    let _ = callus::testing::recuse_scan(&home, "sess-h", "RECUSE/0.2 halt; reason=x");
    let v = doctor(&env);
    assert!(has(&v, "halts", "warn", "sess-h"), "{v:#}");
}

#[test]
fn the_text_report_has_glyphs_and_a_verdict() {
    let env = doctor_env();
    let o = env.run(&["doctor"], b"");
    let out = stdout(&o);
    assert!(
        out.contains("✗ callus is not wired into any agent"),
        "{out}"
    );
    assert!(out.contains("FAILED — "), "{out}");
    assert_eq!(o.status.code(), Some(1));
}

/// The guard handler in a Claude Code settings file.
fn guard_handler(settings: &Path) -> Value {
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(settings).unwrap()).unwrap();
    doc["hooks"]["PreToolUse"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| g["hooks"].as_array().cloned().unwrap_or_default())
        .find(|h| h["command"].as_str().is_some_and(|c| c.ends_with(" guard")))
        .expect("a guard handler")
}

/// Issue 15, item 2: install set no hook `timeout` (the host waits 600 s, then lets the call
/// run) and no `onFailure: "block"`, so a timed-out guard let the call run even failing
/// closed. Install now writes both where the host honours them, and doctor checks them.
#[test]
fn install_writes_a_timeout_and_on_failure_block_when_closed_and_doctor_checks_both() {
    let env = doctor_env();
    fake_client(&env, "claude", "2.1.300 (Claude Code)");
    let settings = install_project(&env);
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    for (event, groups) in doc["hooks"].as_object().unwrap() {
        for h in groups[0]["hooks"].as_array().unwrap() {
            assert!(h["timeout"].as_u64().is_some(), "{event}: {h}");
        }
    }
    let guard = guard_handler(&settings);
    assert_eq!(guard["timeout"], 10);
    assert!(guard.get("onFailure").is_none(), "failing open: {guard}");
    // Failing closed on a Claude Code that honours it: the guard blocks when it fails.
    env.write_home("config", "fail = closed\n");
    install_project(&env);
    assert_eq!(guard_handler(&settings)["onFailure"], "block");
    let v = doctor(&env);
    assert!(!has(&v, "wiring", "fail", "onFailure"), "{v:#}");
    assert!(!has(&v, "wiring", "warn", "timeout"), "{v:#}");
    // Doctor notices each one missing.
    let mut doc: Value =
        serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    for group in doc["hooks"]["PreToolUse"].as_array_mut().unwrap() {
        for h in group["hooks"].as_array_mut().unwrap() {
            let h = h.as_object_mut().unwrap();
            h.remove("onFailure");
            h.insert("timeout".into(), 600.into());
        }
    }
    std::fs::write(&settings, doc.to_string()).unwrap();
    let v = doctor(&env);
    assert!(
        has(&v, "wiring", "fail", "no `onFailure: \"block\"`"),
        "{v:#}"
    );
    assert!(has(&v, "wiring", "warn", "timeout is 600 s"), "{v:#}");
    // An older Claude Code cannot honour it: install says so, doctor warns.
    fake_client(&env, "claude", "2.1.200 (Claude Code)");
    let o = env.run(&["install", "--project"], b"");
    assert!(o.status.success(), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("needs Claude Code 2.1.295"),
        "{}",
        stdout(&o)
    );
    assert!(guard_handler(&settings).get("onFailure").is_none());
    let v = doctor(&env);
    assert!(has(&v, "wiring", "warn", "predates"), "{v:#}");
}

/// Issue 17: a `CALLUS_HOME` the hooks cannot write loses every event: a failure.
#[test]
fn an_unwritable_callus_home_fails() {
    let mut env = doctor_env();
    install_project(&env);
    // Under a regular file: unwritable even for root.
    let file = env.home_path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let home = file.join("callus");
    env.var("CALLUS_HOME", home.to_str().unwrap());
    let v = doctor(&env);
    assert!(
        has(&v, "store", "fail", "is not writable")
            && has(&v, "store", "fail", "every hook event is lost"),
        "{v:#}"
    );
}

/// Issue 17: doctor fires the configured guard with a benign and a dangerous call and
/// checks the answers, so a guard that answers nothing is caught.
#[test]
fn doctor_fires_the_guard_and_catches_one_that_never_refuses() {
    use std::os::unix::fs::PermissionsExt;
    let env = doctor_env();
    let settings = install_project(&env);
    let v = doctor(&env);
    assert!(
        has(
            &v,
            "firing",
            "ok",
            "claude-code project: fired `callus guard`"
        ),
        "{v:#}"
    );
    // A `callus` that lets everything through, wired in place of the real one.
    let fake = env.home_path().join("fake/callus");
    std::fs::create_dir_all(fake.parent().unwrap()).unwrap();
    std::fs::write(&fake, "#!/bin/sh\ncat >/dev/null\nexit 0\n").unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let text = std::fs::read_to_string(&settings).unwrap();
    std::fs::write(
        &settings,
        text.replace("\"callus guard\"", &format!("\"{} guard\"", fake.display())),
    )
    .unwrap();
    let v = doctor(&env);
    assert!(
        has(&v, "firing", "fail", "`rm -rf /` got exit Some(0)"),
        "{v:#}"
    );
}
