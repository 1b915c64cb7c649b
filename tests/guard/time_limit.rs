//! A rule on the call's own time limit (`when.timeout_ms_at_most`) through the real binary:
//! answered by the hook from the call's input (Claude Code's Bash `timeout`, Codex's
//! `timeout_ms`), replayed over an imported Codex rollout from the limit the importer kept,
//! and refused by `guard check` when the value is not a number of milliseconds.

use serde_json::{Value, json};

use crate::common::{Env, json as out_json, stderr, stdout};

/// A nudge on `git status` run with a limit of at most 2 s.
fn short_git_status() -> Value {
    json!({"rules": [{"id": "git-status-short-limit", "tool": "Bash", "match": "segment",
        "any": ["^git status\\b"], "message": "git status needs more than 2 s here: raise the limit to 5000 ms",
        "when": {"timeout_ms_at_most": 2000}}]})
}

/// `callus guard` on one Claude Code Bash call; `true` when a rule fired.
fn fires(env: &Env, input: &Value) -> bool {
    let payload = json!({
        "session_id": "sess-limit", "hook_event_name": "PreToolUse", "prompt_id": "p",
        "cwd": env.repo_path(), "tool_name": "Bash", "tool_input": input, "tool_use_id": "t1",
    });
    let out = env.run(&["guard"], payload.to_string().as_bytes());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    !out.stdout.is_empty()
}

#[test]
fn the_hook_fires_only_on_a_call_whose_own_limit_is_short_enough() {
    let env = Env::new();
    env.write_home("rules.json", &short_git_status().to_string());
    assert!(fires(
        &env,
        &json!({"command": "git status -sb", "timeout": 1000})
    ));
    assert!(fires(
        &env,
        &json!({"command": "git status", "timeout": 2000})
    ));
    assert!(!fires(
        &env,
        &json!({"command": "git status", "timeout": 2001})
    ));
    // No limit of its own: the host's default, not a short one.
    assert!(!fires(&env, &json!({"command": "git status"})));
    // Another program with the same short limit.
    assert!(!fires(&env, &json!({"command": "ls", "timeout": 1000})));
}

/// A Codex rollout: `git status` times out at 1000 ms twice and succeeds at 5000 ms; `ls`
/// succeeds 20 times at 1000 ms.
fn rollout(dir: &std::path::Path) {
    let id = "0199c000-0000-7000-8000-000000000025";
    let ts = |s: usize| format!("2026-07-02T10:{:02}:{:02}.000Z", s / 60, s % 60);
    let mut lines = vec![
        json!({"timestamp": ts(0), "type": "session_meta", "payload": {
            "id": id, "timestamp": ts(0), "cwd": "/mnt/c/app",
            "originator": "codex_cli_rs", "cli_version": "0.63.0"}}),
        json!({"timestamp": ts(1), "type": "turn_context", "payload": {
            "cwd": "/mnt/c/app", "approval_policy": "on-request",
            "sandbox_policy": {"type": "workspace-write", "network_access": false},
            "model": "gpt-5.1-codex"}}),
    ];
    let mut calls = vec![("git status -sb", 1000, false), ("git status", 1000, false)];
    calls.extend(std::iter::repeat_n(("ls", 1000, true), 20));
    calls.push(("git status -sb", 5000, true));
    for (i, (command, limit, ok)) in calls.iter().enumerate() {
        let call = format!("call_{i}");
        let args = json!({"command": ["bash", "-lc", command], "workdir": "/mnt/c/app",
            "timeout_ms": limit});
        lines.push(json!({"timestamp": ts(10 + i * 2), "type": "response_item",
            "payload": {"type": "function_call", "name": "shell", "call_id": call,
                "arguments": args.to_string()}}));
        let (text, code) = if *ok {
            ("ok\n".to_string(), 0)
        } else {
            (
                format!("command timed out after {} milliseconds", limit + 19),
                124,
            )
        };
        lines.push(json!({"timestamp": ts(11 + i * 2), "type": "response_item",
            "payload": {"type": "function_call_output", "call_id": call,
                "output": json!({"output": text,
                    "metadata": {"exit_code": code, "duration_seconds": 1.0}}).to_string()}}));
    }
    let text: Vec<String> = lines.iter().map(Value::to_string).collect();
    std::fs::write(
        dir.join(format!("rollout-2026-07-02T10-00-00-{id}.jsonl")),
        text.join("\n") + "\n",
    )
    .unwrap();
}

#[test]
fn history_replays_the_limit_each_call_set() {
    let env = Env::new();
    let dir = env.repo_path().join("rollouts");
    std::fs::create_dir_all(&dir).unwrap();
    rollout(&dir);
    let out = env.run(&["record", "import", dir.to_str().unwrap()], b"");
    assert!(out.status.success(), "{}", stderr(&out));
    let file = env.write_repo("replay.json", &short_git_status().to_string());
    let out = env.run(
        &[
            "guard",
            "check",
            &file.display().to_string(),
            "--history",
            "2026-07-01",
            "--json",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = out_json(&out);
    assert_eq!(v["calls"], 23, "{v:#}");
    let rule = &v["rules"][0];
    assert_eq!(
        (
            &rule["fired"],
            &rule["failed"],
            &rule["succeeded"],
            &rule["unreplayed"]
        ),
        (&json!(2), &json!(2), &json!(0), &json!(0)),
        "{v:#}"
    );
    let fired: Vec<&str> = v["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["tool_use_id"].as_str().unwrap())
        .collect();
    assert_eq!(fired, ["call_0", "call_1"], "{v:#}");
}

#[test]
fn guard_check_refuses_a_limit_that_is_not_milliseconds() {
    let env = Env::new();
    let file = env.write_repo(
        "rules.json",
        r#"{"rules": [{"id": "r", "any": ["x"], "message": "m", "when": {"timeout_ms_at_most": "2s"}}]}"#,
    );
    let out = env.run(&["guard", "check", &file.display().to_string()], b"");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains(
            "'r': field 'when.timeout_ms_at_most': must be a whole number of milliseconds above 0"
        ),
        "{}",
        stdout(&out)
    );
}
