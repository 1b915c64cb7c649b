//! `callus allow-once`: a refusal prints a code bound to that command, project and tool; a
//! person at a terminal (a pty here, through util-linux `script`) grants it; exactly one
//! later identical call in that project goes through, audited; without a terminal, inside
//! an agent's environment, replayed, forged or elsewhere, nothing goes through.

use std::process::{Command, Output};

use serde_json::{Value, json};

use super::{ACTIONS_RULES, Host, audit_records, bash, payload};
use crate::common::{Env, allow_once_code, run_cmd, stderr, stdout};

fn env_with_actions() -> Env {
    let env = Env::new();
    env.write_home("rules.json", ACTIONS_RULES);
    env
}

/// The raw hook output, allow-once sentence included.
fn raw_guard(env: &Env, stdin: &[u8]) -> Output {
    env.run(&["guard"], stdin)
}

/// The code a refusal printed (stdout for deny, stderr for block).
fn code_of(out: &Output) -> String {
    let text = format!("{}{}", stdout(out), stderr(out));
    allow_once_code(&text).unwrap_or_else(|| panic!("no allow-once code in: {text}"))
}

fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// `callus ARGS` with a pseudo-terminal on stdin and stdout (`script -qec`), as a person
/// runs it; `extra` adds environment variables.
fn at_terminal(env: &Env, args: &[&str], extra: &[(&str, &str)]) -> Output {
    let line = std::iter::once(env!("CARGO_BIN_EXE_callus"))
        .chain(args.iter().copied())
        .map(quote)
        .collect::<Vec<_>>()
        .join(" ");
    let mut script = Command::new("script");
    script.args(["-qec", &line, "/dev/null"]);
    // The same clean environment `Env::cmd` gives the binary itself.
    let base = env.cmd(&[]);
    for (k, v) in base.get_envs() {
        match v {
            Some(v) => script.env(k, v),
            None => script.env_remove(k),
        };
    }
    for (k, v) in extra {
        script.env(k, v);
    }
    script.current_dir(env.repo_path());
    run_cmd(script, b"")
}

fn kinds(env: &Env) -> Vec<String> {
    audit_records(env)
        .iter()
        .map(|r| r["kind"].as_str().unwrap_or("").to_string())
        .collect()
}

fn denied(out: &Output) -> bool {
    stdout(out).contains("\"permissionDecision\":\"deny\"")
}

#[test]
fn a_person_at_a_terminal_lets_exactly_one_identical_call_through_and_both_are_audited() {
    let env = env_with_actions();
    let call = bash(&env, Host::Claude, "denyme --now");
    let first = raw_guard(&env, &call);
    assert!(denied(&first), "{}", stdout(&first));
    let code = code_of(&first);
    assert_eq!(code.len(), 6, "{code}");

    let granted = at_terminal(&env, &["allow-once", &code.to_lowercase()], &[]);
    assert_eq!(granted.status.code(), Some(0), "{}", stdout(&granted));
    assert!(stdout(&granted).contains("approved once: denyme --now (rule t-deny)"));

    // A different command, or the same command in another project, is still refused.
    let other = raw_guard(&env, &bash(&env, Host::Claude, "denyme --later"));
    assert!(denied(&other));
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::create_dir(elsewhere.path().join(".git")).unwrap();
    let moved = payload(
        Host::Claude,
        "Bash",
        &json!({"command": "denyme --now"}),
        elsewhere.path(),
    );
    assert!(denied(&raw_guard(&env, moved.to_string().as_bytes())));

    // The identical call in the project goes through once, as a nudge that says why.
    let second = raw_guard(&env, &call);
    assert_eq!(second.status.code(), Some(0));
    assert!(!denied(&second), "{}", stdout(&second));
    let out: Value = serde_json::from_slice(&second.stdout).unwrap();
    let context = out["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(
        context.contains(&format!(
            "A person approved this exact call once (allow-once {code})"
        )),
        "{context}"
    );
    // And only once.
    let third = raw_guard(&env, &call);
    assert!(denied(&third));
    assert_ne!(code_of(&third), code, "each refusal prints its own code");

    let records = audit_records(&env);
    let granted_rec = records
        .iter()
        .find(|r| r["kind"] == "allow-once-granted")
        .expect("grant audited");
    assert_eq!(granted_rec["winner"], "t-deny");
    assert_eq!(granted_rec["cwd"], json!(env.repo_path()));
    assert!(
        granted_rec["acs"]["message"]
            .as_str()
            .unwrap()
            .starts_with(&format!("code {code} granted at terminal /dev/pts/"))
    );
    let used: Vec<&Value> = records
        .iter()
        .filter(|r| r["kind"] == "allow-once-used")
        .collect();
    assert_eq!(used.len(), 1, "{:?}", kinds(&env));
    assert_eq!(used[0]["command_preview"], "denyme --now");
    assert_eq!(used[0]["decision"], "allow");
    // The refusal the approval overrode is in the chain too, before its use.
    let k = kinds(&env);
    let use_at = k.iter().position(|k| k == "allow-once-used").unwrap();
    assert_eq!(k[use_at - 1], "decision");
    // The chain stays intact.
    let verify = env.run(&["guard", "audit", "verify"], b"");
    assert_eq!(verify.status.code(), Some(0), "{}", stdout(&verify));
}

#[test]
fn a_block_is_approved_the_same_way() {
    let env = env_with_actions();
    let call = bash(&env, Host::Codex, "blockme");
    let first = raw_guard(&env, &call);
    assert_eq!(first.status.code(), Some(2));
    let code = code_of(&first);
    assert_eq!(
        at_terminal(&env, &["allow-once", &code], &[]).status.code(),
        Some(0)
    );
    let second = raw_guard(&env, &call);
    assert_eq!(second.status.code(), Some(0), "{}", stderr(&second));
    assert_eq!(raw_guard(&env, &call).status.code(), Some(2));
}

#[test]
fn without_a_terminal_or_inside_an_agents_tool_call_nothing_is_granted() {
    let env = env_with_actions();
    let call = bash(&env, Host::Claude, "denyme --now");
    let code = code_of(&raw_guard(&env, &call));
    // Piped, as an agent's tool call runs it.
    let piped = env.run(&["allow-once", &code], b"");
    assert_eq!(piped.status.code(), Some(1));
    assert!(
        stderr(&piped).contains("must be a terminal"),
        "{}",
        stderr(&piped)
    );
    // A terminal, but an agent's environment (each host's marker).
    for marker in ["CLAUDECODE", "CODEX_SANDBOX", "GEMINI_CLI", "CURSOR_AGENT"] {
        let out = at_terminal(&env, &["allow-once", &code], &[(marker, "1")]);
        assert_eq!(out.status.code(), Some(1), "{marker}: {}", stdout(&out));
        assert!(
            stdout(&out).contains(&format!("({marker} is set)")),
            "{}",
            stdout(&out)
        );
    }
    assert!(!kinds(&env).iter().any(|k| k.starts_with("allow-once")));
    assert!(!env.home_path().join("approvals").exists());
    assert!(denied(&raw_guard(&env, &call)));
}

#[test]
fn an_unknown_code_is_refused_with_exit_1() {
    let env = env_with_actions();
    let _ = raw_guard(&env, &bash(&env, Host::Claude, "denyme"));
    let out = at_terminal(&env, &["allow-once", "ZZZZZZ"], &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains("no call refused in the last 10 minutes has code ZZZZZZ"),
        "{}",
        stdout(&out)
    );
    let bad = at_terminal(&env, &["allow-once", "O0"], &[]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(stdout(&bad).contains("is not a code"));
}

fn grant_file(env: &Env, code: &str) -> std::path::PathBuf {
    env.home_path()
        .join("approvals")
        .join(format!("{code}.json"))
}

fn granted(env: &Env, call: &[u8]) -> (String, String) {
    let code = code_of(&raw_guard(env, call));
    assert_eq!(
        at_terminal(env, &["allow-once", &code], &[]).status.code(),
        Some(0)
    );
    let text = std::fs::read_to_string(grant_file(env, &code)).unwrap();
    (code, text)
}

#[test]
fn a_replayed_or_edited_grant_file_lets_nothing_through() {
    let env = env_with_actions();
    let call = bash(&env, Host::Claude, "denyme --now");
    let (code, text) = granted(&env, &call);
    assert!(!denied(&raw_guard(&env, &call)), "the real grant works");
    assert!(!grant_file(&env, &code).exists(), "a used grant is gone");
    // Put back: the chain already holds its use.
    std::fs::write(grant_file(&env, &code), &text).unwrap();
    assert!(
        denied(&raw_guard(&env, &call)),
        "a replayed grant is refused"
    );

    // A grant edited to last longer no longer checks.
    let (code, text) = granted(&env, &call);
    let mut grant: Value = serde_json::from_str(&text).unwrap();
    grant["expires"] = json!("2099-01-01T00:00:00.000Z");
    std::fs::write(grant_file(&env, &code), grant.to_string()).unwrap();
    assert!(
        denied(&raw_guard(&env, &call)),
        "an edited grant is refused"
    );

    // A grant naming a chain record that is not its grant is refused.
    let (code, text) = granted(&env, &call);
    let mut grant: Value = serde_json::from_str(&text).unwrap();
    grant["audit_seq"] = json!(1);
    std::fs::write(grant_file(&env, &code), grant.to_string()).unwrap();
    assert!(denied(&raw_guard(&env, &call)));
    let used = kinds(&env)
        .iter()
        .filter(|k| *k == "allow-once-used")
        .count();
    assert_eq!(used, 1, "only the real grant was used");
}

#[test]
fn the_starter_policy_refuses_allow_once_as_an_agents_command() {
    let env = Env::new();
    for command in [
        "callus allow-once K7QX2M",
        "script -qc 'callus allow-once K7QX2M' /dev/null",
    ] {
        let out = raw_guard(&env, &bash(&env, Host::Claude, command));
        assert_eq!(out.status.code(), Some(2), "{command}");
        assert!(
            stderr(&out).contains("BLOCKED by callus (rule allow-once-by-agent)"),
            "{}",
            stderr(&out)
        );
    }
}

#[test]
fn the_peer_hosts_print_the_code_and_honour_the_grant() {
    let env = env_with_actions();
    let cwd = env.repo_path();
    let command = "denyme --peer";
    for (name, call) in [
        (
            "gemini",
            json!({
                "session_id": "g-sess", "transcript_path": "", "cwd": cwd,
                "hook_event_name": "BeforeTool", "timestamp": "2026-12-01T20:00:00.000Z",
                "tool_name": "run_shell_command", "tool_input": {"command": command}
            }),
        ),
        (
            "cursor",
            json!({
                "conversation_id": "c-sess", "generation_id": "gen-1", "model": "m",
                "hook_event_name": "preToolUse", "cursor_version": "2.3.1",
                "workspace_roots": [cwd], "tool_name": "Shell",
                "tool_input": {"command": command, "working_directory": cwd},
                "tool_use_id": "cur-1", "cwd": cwd
            }),
        ),
        (
            "copilot",
            json!({
                "sessionId": "p-sess", "timestamp": 1_764_619_200_000_i64, "cwd": cwd,
                "toolName": "bash",
                "toolArgs": json!({"command": command, "description": "run"}).to_string()
            }),
        ),
    ] {
        let call = call.to_string();
        let first = raw_guard(&env, call.as_bytes());
        assert!(
            stdout(&first).contains("deny"),
            "{name}: {}",
            stdout(&first)
        );
        let code = code_of(&first);
        let granted = at_terminal(&env, &["allow-once", &code], &[]);
        assert_eq!(
            granted.status.code(),
            Some(0),
            "{name}: {}",
            stdout(&granted)
        );
        let second = raw_guard(&env, call.as_bytes());
        assert_eq!(second.status.code(), Some(0), "{name}");
        assert!(
            !stdout(&second).contains("deny"),
            "{name}: {}",
            stdout(&second)
        );
        assert!(
            stdout(&raw_guard(&env, call.as_bytes())).contains("deny"),
            "{name}: once"
        );
    }
}
