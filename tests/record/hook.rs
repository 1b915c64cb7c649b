//! `callus record` as a hook, fed the real payloads of both hosts.

use serde_json::{Value, json};

use super::{count, db, errors_log, fixture, payload, record, row};
use crate::common::{Env, stderr};

// ---------------------------------------------------------------- hook: Claude Code

#[test]
fn claude_session_success_and_failure_through_the_hook() {
    let env = Env::new();
    for f in [
        "claude-sessionstart.json",
        "claude-userpromptsubmit.json",
        "claude-pretooluse.json",
        "claude-posttooluse-success.json",
        // Step 5 has no PreToolUse in the fixtures: a post without a pre still makes a row.
        "claude-posttoolusefailure.json",
        "claude-stop.json",
        "claude-sessionend.json",
    ] {
        record(&env, &payload(f));
    }
    let ok = row(&env, "toolu_e2e_000");
    assert_eq!(ok.status, "success");
    assert_eq!(ok.duration_ms, Some(36));
    assert_eq!(
        (ok.host.as_str(), ok.source.as_str()),
        ("claude-code", "hook")
    );
    assert!(ok.started_ms.is_some());
    // `touch …; echo hello-ok`: `echo` is a builtin, so the program is `touch` (as derive
    // would group it).
    assert_eq!(ok.shape.as_deref(), Some("touch"));
    assert_eq!(ok.error, None);

    let bad = row(&env, "toolu_e2e_005");
    assert_eq!(bad.status, "failure");
    assert_eq!(bad.exit_code, Some(2));
    assert_eq!(bad.duration_ms, Some(11));
    assert_eq!(bad.shape.as_deref(), Some("ls"));
    assert_eq!(bad.command.as_deref(), Some("ls /nonexistent-callus-e2e"));
    assert_eq!(
        bad.signature.as_deref(),
        Some("exit code 2 ls: cannot access 'S': no such file or directory")
    );
    assert!(
        bad.started_ms.is_some(),
        "start derived from end - duration"
    );

    let (prompts, started, ended, cwd): (i64, Option<i64>, Option<i64>, Option<String>) = db(&env)
        .query_row(
            "SELECT prompts, started_ms, ended_ms, cwd FROM sessions
             WHERE id = 'ea7f5b04-cf4f-481a-a783-2a7cf8ed84dc'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .unwrap();
    assert_eq!(prompts, 1);
    assert!(started.is_some() && ended.is_some());
    assert!(cwd.unwrap().ends_with("/project"));
    assert_eq!(count(&env, "SELECT count(*) FROM tool_calls"), 2);
    assert_eq!(errors_log(&env), "");
}

#[test]
fn interruption_refusal_and_pending() {
    let env = Env::new();
    let mut e = payload("claude-posttoolusefailure.json");
    e["tool_use_id"] = json!("toolu_int");
    e["error"] = json!("Exit code 130\n^C");
    e["is_interrupt"] = json!(true);
    record(&env, &e);
    assert_eq!(row(&env, "toolu_int").status, "interrupted");

    let mut e = payload("claude-posttoolusefailure.json");
    e["tool_use_id"] = json!("toolu_perm");
    e["error"] = json!("Permission to use Bash has been auto-denied in dontAsk mode.");
    record(&env, &e);
    let denied = row(&env, "toolu_perm");
    assert_eq!(denied.status, "denied");
    assert_eq!(denied.exit_code, None);

    let mut e = payload("claude-pretooluse.json");
    e["tool_use_id"] = json!("toolu_never");
    record(&env, &e);
    assert_eq!(row(&env, "toolu_never").status, "pending");

    let mut e = payload("claude-pretooluse.json");
    e["hook_event_name"] = json!("PermissionDenied");
    e["tool_use_id"] = json!("toolu_auto");
    e["reason"] = json!("auto mode classifier refused");
    record(&env, &e);
    assert_eq!(row(&env, "toolu_auto").status, "denied");

    // Inside a subagent the call carries the agent id.
    let mut e = payload("claude-posttooluse-success.json");
    e["tool_use_id"] = json!("toolu_sub");
    e["agent_id"] = json!("agent-42");
    e["agent_type"] = json!("Explore");
    record(&env, &e);
    assert_eq!(row(&env, "toolu_sub").agent_id.as_deref(), Some("agent-42"));
}

#[test]
fn a_call_our_guard_blocked_becomes_denied_at_stop() {
    let env = Env::new();
    let mut pre = payload("claude-pretooluse.json");
    pre["tool_use_id"] = json!("toolu_rm");
    pre["tool_input"] = json!({"command": "rm -rf /", "description": "oops"});
    let guard = env.run(&["guard"], pre.to_string().as_bytes());
    assert_eq!(
        guard.status.code(),
        Some(2),
        "the starter set blocks rm -rf /"
    );
    record(&env, &pre);
    assert_eq!(row(&env, "toolu_rm").status, "pending");
    record(&env, &payload("claude-stop.json"));
    assert_eq!(row(&env, "toolu_rm").status, "denied");
    // A pending call the guard did not refuse stays pending.
    let mut other = payload("claude-pretooluse.json");
    other["tool_use_id"] = json!("toolu_other");
    record(&env, &other);
    record(&env, &payload("claude-stop.json"));
    assert_eq!(row(&env, "toolu_other").status, "pending");
}

#[test]
fn bad_payloads_exit_zero_silently_and_log() {
    let env = Env::new();
    for bytes in [&b"{not json"[..], b"[1,2]"] {
        let out = env.run(&["record"], bytes);
        assert_eq!(out.status.code(), Some(0));
        assert!(out.stdout.is_empty() && out.stderr.is_empty());
    }
    let log = errors_log(&env);
    assert_eq!(log.lines().count(), 2, "{log}");
    assert!(
        log.contains("not JSON") && log.contains("not a JSON object"),
        "{log}"
    );
    // A store that cannot be opened: still exit 0, still silent.
    let mut env = Env::new();
    env.var("CALLUS_DB", "/proc/definitely/not/here.db");
    let out = env.run(
        &["record"],
        payload("claude-pretooluse.json").to_string().as_bytes(),
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty() && out.stderr.is_empty());
    assert!(errors_log(&env).contains("record:"));
}

// ---------------------------------------------------------------- hook: Codex

/// A Codex payload whose `transcript_path` points at a copy of the real rollout.
fn codex_event(env: &Env, name: &str) -> Value {
    let rollout = env.home_path().join(
        "codex/sessions/rollout-2026-11-29T21-19-16-01a2292d-2dbd-7210-9173-3d6fbc403574.jsonl",
    );
    if !rollout.exists() {
        std::fs::create_dir_all(rollout.parent().unwrap()).unwrap();
        std::fs::copy(fixture("codex-rollout.jsonl"), &rollout).unwrap();
    }
    let mut e = payload(name);
    e["transcript_path"] = json!(rollout.to_string_lossy());
    e
}

#[test]
fn codex_success_and_failure_take_exit_codes_from_the_rollout() {
    let env = Env::new();
    for f in [
        "codex-sessionstart.json",
        "codex-userpromptsubmit.json",
        "codex-pretooluse.json",
        "codex-posttooluse-success.json",
        "codex-posttooluse-failure.json",
        "codex-stop.json",
    ] {
        let e = codex_event(&env, f);
        record(&env, &e);
    }
    let ok = row(&env, "call_e2e_000");
    assert_eq!((ok.status.as_str(), ok.exit_code), ("success", Some(0)));
    assert_eq!(ok.host, "codex");
    let bad = row(&env, "call_e2e_005");
    assert_eq!((bad.status.as_str(), bad.exit_code), ("failure", Some(2)));
    assert_eq!(
        bad.error.as_deref(),
        Some(
            "Exit code 2\nls: cannot access '/nonexistent-callus-e2e': No such file or directory\n"
        )
    );
    assert_eq!(
        bad.signature.as_deref(),
        Some("exit code 2 ls: cannot access 'S': no such file or directory")
    );
    let (host, prompts): (String, i64) = db(&env)
        .query_row(
            "SELECT host, prompts FROM sessions WHERE id = '01a2292d-2dbd-7210-9173-3d6fbc403574'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(
        host, "codex",
        "SessionStart has no turn_id; the rollout path says Codex"
    );
    assert_eq!(prompts, 1);
    assert_eq!(errors_log(&env), "");
}

#[test]
fn a_live_shell_call_keeps_the_time_limit_it_set() {
    let env = Env::new();
    let mut e = payload("codex-posttooluse-failure.json");
    e["transcript_path"] = json!("/nonexistent/rollout-x.jsonl");
    e["tool_use_id"] = json!("call_limited");
    e["tool_input"] = json!({"command": "git status -sb", "timeout_ms": 1000});
    e["tool_response"] = json!("command timed out after 1005 milliseconds\n");
    record(&env, &e);
    e["tool_use_id"] = json!("call_unlimited");
    e["tool_input"] = json!({"command": "git status -sb"});
    record(&env, &e);
    let facts = |id: &str| -> Option<String> {
        db(&env)
            .query_row(
                "SELECT facts FROM tool_calls WHERE tool_use_id = ?1",
                [id],
                |r| r.get(0),
            )
            .unwrap()
    };
    assert_eq!(
        facts("call_limited").as_deref(),
        Some(r#"{"timeout_ms":1000}"#)
    );
    assert_eq!(facts("call_unlimited"), None);
    // A failure event's file-tool facts do not wipe a shell call's limit.
    let mut e = payload("claude-posttoolusefailure.json");
    e["tool_use_id"] = json!("toolu_limited");
    e["tool_input"]["timeout_ms"] = json!(2000);
    record(&env, &e);
    assert_eq!(
        facts("toolu_limited").as_deref(),
        Some(r#"{"timeout_ms":2000}"#)
    );
}

#[test]
fn codex_without_a_rollout_falls_back_to_the_output_text() {
    let env = Env::new();
    let mut e = payload("codex-posttooluse-failure.json");
    e["transcript_path"] = json!("/nonexistent/rollout-x.jsonl");
    e["tool_use_id"] = json!("call_text");
    e["tool_response"] = json!("Chunk ID: 1\nProcess exited with code 3\nOutput:\nboom\n");
    record(&env, &e);
    let r = row(&env, "call_text");
    assert_eq!((r.status.as_str(), r.exit_code), ("failure", Some(3)));

    e["tool_use_id"] = json!("call_plain");
    e["tool_response"] = json!("ls: cannot access 'x'\n");
    record(&env, &e);
    let r = row(&env, "call_plain");
    assert_eq!((r.status.as_str(), r.exit_code), ("success", None));

    // A later import of the rollout corrects a guessed outcome.
    let env = Env::new();
    let mut e = payload("codex-posttooluse-failure.json");
    e["transcript_path"] = json!("/nonexistent/rollout-x.jsonl");
    record(&env, &e);
    assert_eq!(row(&env, "call_e2e_005").status, "success");
    let out = env.run(
        &[
            "record",
            "import",
            fixture("codex-rollout.jsonl").to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let r = row(&env, "call_e2e_005");
    assert_eq!((r.status.as_str(), r.exit_code), ("failure", Some(2)));
    assert_eq!(r.source, "hook", "one row, first writer's source");
}
