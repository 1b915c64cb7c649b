//! Rules with conditions (`when`) through the real binary: answered by the hook at call time
//! (PATH, a real file's size, the Reads the recorder stored), and replayed over an imported
//! history by `guard check --history`.

use serde_json::{Value, json};

use crate::common::{Env, json as out_json, stderr, stdout};

fn rules(env: &Env, rules: &Value) {
    env.write_home("rules.json", &json!({ "rules": rules }).to_string());
}

/// `callus guard` on one Claude Code call of session `sess-cond`; the decision as the host
/// reads it.
fn decide(env: &Env, tool: &str, input: &Value) -> String {
    let payload = json!({
        "session_id": "sess-cond", "hook_event_name": "PreToolUse", "prompt_id": "p",
        "cwd": env.repo_path(), "tool_name": tool, "tool_input": input, "tool_use_id": "t1",
    });
    let out = env.run(&["guard"], payload.to_string().as_bytes());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    if out.stdout.is_empty() {
        return "allow".into();
    }
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    if v["hookSpecificOutput"]["permissionDecision"] == "deny" {
        "deny".into()
    } else {
        "nudge".into()
    }
}

#[test]
fn program_absent_fires_only_while_the_program_is_not_on_path() {
    let mut env = Env::new();
    let bin = env.repo_path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    env.var("PATH", &bin.display().to_string());
    rules(
        &env,
        &json!([{"id": "no-zork", "tool": "Bash", "match": "segment", "any": ["^zorkctl\\b"],
            "action": "deny", "message": "zorkctl is not installed here: use make",
            "when": {"program_absent": "zorkctl"}}]),
    );
    let call = json!({"command": "zorkctl up"});
    assert_eq!(decide(&env, "Bash", &call), "deny");
    let tool = bin.join("zorkctl");
    std::fs::write(&tool, "#!/bin/sh\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    assert_eq!(decide(&env, "Bash", &call), "allow");
    // Patterns first: a call they do not match is allowed whatever PATH holds.
    assert_eq!(decide(&env, "Bash", &json!({"command": "ls"})), "allow");
}

#[test]
fn file_larger_than_reads_the_real_file() {
    let env = Env::new();
    rules(
        &env,
        &json!([{"id": "big-read", "tool": "Read", "field": "file_path",
            "message": "this file is large: pass offset and limit",
            "when": {"file_larger_than": {"field": "file_path", "bytes": 1000}}}]),
    );
    let big = env.write_repo("big.log", &"x".repeat(1001));
    let small = env.write_repo("small.log", &"x".repeat(1000));
    let read = |p: &str| json!({ "file_path": p });
    assert_eq!(
        decide(&env, "Read", &read(&big.display().to_string())),
        "nudge"
    );
    assert_eq!(
        decide(&env, "Read", &read("big.log")),
        "nudge",
        "relative to cwd"
    );
    assert_eq!(
        decide(&env, "Read", &read(&small.display().to_string())),
        "allow"
    );
    assert_eq!(decide(&env, "Read", &read("nope.log")), "allow");
    assert_eq!(decide(&env, "Read", &read(".")), "allow", "a directory");
}

#[test]
fn path_is_directory_stats_the_real_path() {
    let env = Env::new();
    rules(
        &env,
        &json!([{"id": "read-a-dir", "tool": "Read", "field": "file_path", "action": "deny",
            "message": "that path is a directory: list it with LS or Glob",
            "when": {"path_is_directory": {"field": "file_path"}}}]),
    );
    let file = env.write_repo("src/a.rs", "fn main() {}\n");
    let read = |p: &str| json!({ "file_path": p });
    let dir = env.repo_path().join("src");
    assert_eq!(
        decide(&env, "Read", &read(&dir.display().to_string())),
        "deny"
    );
    assert_eq!(
        decide(&env, "Read", &read("src")),
        "deny",
        "relative to cwd"
    );
    assert_eq!(
        decide(&env, "Read", &read(&file.display().to_string())),
        "allow",
        "a file"
    );
    assert_eq!(decide(&env, "Read", &read("nope")), "allow", "missing");
}

#[test]
fn not_read_in_session_follows_the_recorded_reads() {
    let env = Env::new();
    rules(
        &env,
        &json!([{"id": "read-first", "tool": "Edit", "field": "file_path", "action": "deny",
            "message": "Read the file before editing it",
            "when": {"not_read_in_session": "file_path"}}]),
    );
    let file = env.write_repo("src/a.rs", "fn main() {}\n");
    let path = file.display().to_string();
    let edit = json!({"file_path": path, "old_string": "a", "new_string": "b"});
    // No store at all: the guard cannot tell, and fails toward the rule.
    assert_eq!(decide(&env, "Edit", &edit), "deny");
    // A Read of another session, then of this one, recorded by the recorder hook.
    for session in ["other", "sess-cond"] {
        let post = json!({
            "session_id": session, "hook_event_name": "PostToolUse", "prompt_id": "p",
            "cwd": env.repo_path(), "tool_name": "Read", "tool_input": {"file_path": path},
            "tool_use_id": format!("read-{session}"),
            "tool_response": {"type": "text", "file": {"filePath": path,
                "content": "fn main() {}\n", "numLines": 1, "startLine": 1, "totalLines": 1}},
        });
        let out = env.run(&["record"], post.to_string().as_bytes());
        assert_eq!(out.status.code(), Some(0));
        let want = if session == "other" { "deny" } else { "allow" };
        assert_eq!(
            decide(&env, "Edit", &edit),
            want,
            "after a Read in {session}"
        );
    }
    // The Read's size is kept as a fact.
    let conn = rusqlite::Connection::open(env.db()).unwrap();
    let facts: String = conn
        .query_row(
            "SELECT facts FROM tool_calls WHERE tool_use_id = 'read-sess-cond'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&facts).unwrap(),
        json!({"bytes": 13, "lines": 1, "total_lines": 1})
    );
    // Another file was not read: denied while it exists, not while nothing is there.
    let other = json!({"file_path": env.repo_path().join("src/b.rs"), "old_string": "a",
        "new_string": "b"});
    assert_eq!(decide(&env, "Edit", &other), "allow", "no such file");
    env.write_repo(
        "src/b.rs",
        "fn b() {}
",
    );
    assert_eq!(decide(&env, "Edit", &other), "deny");
}

#[test]
fn an_unknown_condition_is_a_check_error_naming_rule_and_key() {
    let env = Env::new();
    let file = env.write_repo(
        "rules.json",
        r#"{"rules": [{"id": "r", "any": ["x"], "message": "m", "when": {"colour": "red"}}]}"#,
    );
    let out = env.run(&["guard", "check", &file.display().to_string()], b"");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains("r: field 'when.colour': unknown condition (host, os,")
            || stdout(&out).contains("rule 'r': field 'when.colour': unknown condition (host, os,"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn history_replays_conditions_with_exact_counts() {
    let env = Env::new();
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/record/conditions-transcript.jsonl");
    let out = env.run(&["record", "import", &fixture.display().to_string()], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let file = env.write_repo(
        "replay.json",
        &json!({"rules": [
            {"id": "pnpm-missing", "tool": "Bash", "match": "segment", "any": ["^pnpm\\b"],
             "action": "deny", "message": "pnpm is not installed",
             "when": {"program_absent": "pnpm"}},
            {"id": "yarn-missing", "tool": "Bash", "match": "segment", "any": ["^yarn\\b"],
             "action": "deny", "message": "yarn is not installed",
             "when": {"program_absent": "yarn"}},
            {"id": "big-read", "tool": "Read", "field": "file_path", "message": "large",
             "when": {"file_larger_than": {"field": "file_path", "bytes": 1000}}},
            {"id": "small-read", "tool": "Read", "field": "file_path", "message": "small",
             "when": {"file_larger_than": {"field": "file_path", "bytes": 5}}},
            {"id": "read-first", "tool": "Edit", "field": "file_path", "action": "deny",
             "message": "read first", "when": {"not_read_in_session": "file_path"}},
            {"id": "missing-path", "tool": "Read", "field": "file_path", "message": "missing",
             "when": {"path_missing": {"field": "file_path"}}},
            {"id": "windows-install", "tool": "Bash", "any": ["install"], "message": "w",
             "when": {"os": ["windows"]}},
            {"id": "linux-install", "tool": "Bash", "any": ["install"], "message": "l",
             "when": {"os": ["linux"], "shell": ["bash"], "host": ["claude-code"]}},
            {"id": "sandboxed-pnpm", "tool": "Bash", "any": ["pnpm"], "message": "s",
             "when": {"sandbox": true}}
        ]})
        .to_string(),
    );
    let out = env.run(
        &[
            "guard",
            "check",
            &file.display().to_string(),
            "--history",
            "2026-11-01",
            "--json",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = out_json(&out);
    assert_eq!(v["calls"], 9, "{v:#}");
    let counts: Vec<(String, u64, u64, u64, u64)> = v["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["id"].as_str().unwrap().to_string(),
                r["fired"].as_u64().unwrap(),
                r["failed"].as_u64().unwrap(),
                r["succeeded"].as_u64().unwrap(),
                r["unreplayed"].as_u64().unwrap(),
            )
        })
        .collect();
    let want = [
        ("pnpm-missing", 2, 2, 0, 0),
        ("yarn-missing", 0, 0, 0, 0),
        ("big-read", 1, 1, 0, 0),
        ("small-read", 2, 1, 1, 0),
        ("read-first", 1, 1, 0, 0),
        ("missing-path", 1, 1, 0, 0),
        ("windows-install", 0, 0, 0, 0),
        ("linux-install", 3, 2, 1, 0),
        ("sandboxed-pnpm", 0, 0, 0, 2),
    ];
    let want: Vec<(String, u64, u64, u64, u64)> = want
        .iter()
        .map(|(id, a, b, c, d)| ((*id).to_string(), *a, *b, *c, *d))
        .collect();
    assert_eq!(counts, want, "{v:#}");
    let sandboxed = &v["rules"][8];
    assert_eq!(sandboxed["unreplayed_by_condition"], json!({"sandbox": 2}));
    assert_eq!(sandboxed["conditions"], json!(["sandbox"]));
    // Each call's decision: the most restrictive rule that fired wins.
    let decisions: Vec<(String, String, String)> = v["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["tool_use_id"].as_str().unwrap().to_string(),
                d["rule"].as_str().unwrap().to_string(),
                d["action"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let want = [
        ("toolu_c1", "pnpm-missing", "deny"),
        ("toolu_c2", "pnpm-missing", "deny"),
        ("toolu_c3", "linux-install", "nudge"),
        ("toolu_c5", "big-read", "nudge"),
        ("toolu_c6", "small-read", "nudge"),
        ("toolu_c8", "read-first", "deny"),
        ("toolu_c9", "missing-path", "nudge"),
    ];
    let want: Vec<(String, String, String)> = want
        .iter()
        .map(|(a, b, c)| ((*a).to_string(), (*b).to_string(), (*c).to_string()))
        .collect();
    assert_eq!(decisions, want, "{v:#}");
    // The human form names the rules that fired and the calls history could not answer.
    let out = env.run(
        &[
            "guard",
            "check",
            &file.display().to_string(),
            "--history",
            "2026-11-01",
        ],
        b"",
    );
    let text = stdout(&out);
    assert!(text.contains("replayed 9 settled call(s)"), "{text}");
    assert!(
        text.contains("pnpm-missing [deny] from")
            && text.contains("fired on 2 — 2 failed (0 masked), 0 succeeded"),
        "{text}"
    );
    assert!(
        text.contains(
            "2 matching call(s) whose conditions history cannot answer, not counted (sandbox 2)"
        ),
        "{text}"
    );
    assert!(
        text.contains("3 rule(s) would have fired on no call"),
        "{text}"
    );
}
