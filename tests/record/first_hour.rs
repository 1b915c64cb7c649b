//! `record import` as a new user meets it (issue 17): a log of hook events is no history, no
//! path means the hosts' own places, a repeated id is one call, and `record stats` and
//! `report` count sessions alike.

use std::path::Path;

use serde_json::Value;

use super::{fixture, import, record, row};
use crate::common::{Env, json, stderr};

fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::fs::copy(from, to).unwrap();
}

/// `record import ARGS… --json` (any exit code).
fn import_args(env: &Env, args: &[&str]) -> (Option<i32>, Value, String) {
    let mut all = vec!["record", "import", "--json"];
    all.extend(args);
    let out = env.run(&all, b"");
    (out.status.code(), json(&out), stderr(&out))
}

const HOOK_LOG: &str = r#"{"session_id":"s1","hook_event_name":"SessionStart","source":"startup","cwd":"/tmp","transcript_path":"/x"}
{"session_id":"s1","hook_event_name":"Notification","message":"Claude needs your permission","cwd":"/tmp"}
{"session_id":"s1","hook_event_name":"Stop","stop_hook_active":false,"cwd":"/tmp"}
"#;

#[test]
fn a_log_of_hook_events_is_no_history_even_read_as_a_trace() {
    let env = Env::new();
    let log = env.write_repo("hooks.jsonl", HOOK_LOG);
    let log = log.to_str().unwrap();
    let (code, auto, _) = import_args(&env, &[log]);
    assert_eq!(code, Some(0));
    assert_eq!(auto["calls"], 0, "{auto:#}");
    assert_eq!(auto["skipped_files"]["hook-event log"], 1, "{auto:#}");
    // Forced to the trace format, whose lines default to Bash: still no call is invented.
    let (code, forced, _) = import_args(&env, &["--format", "trace", log]);
    assert_eq!(code, Some(0));
    assert_eq!(forced["calls"], 0, "{forced:#}");
    assert_eq!(forced["new_calls"], 0, "{forced:#}");
    assert_eq!(forced["not_call_lines"], 3, "{forced:#}");
    assert_eq!(super::count(&env, "SELECT count(*) FROM tool_calls"), 0);
    // A real call in the same forced trace is still read.
    let mixed = env.write_repo(
        "mixed.jsonl",
        &format!(
            "{HOOK_LOG}{}\n",
            r#"{"ts":"2026-11-29T10:00:00Z","tool_name":"Bash","tool_input":{"command":"make"},"status":"failure","error":"make: *** No rule"}"#
        ),
    );
    let (_, mixed, _) = import_args(&env, &["--format", "trace", mixed.to_str().unwrap()]);
    assert_eq!(
        (mixed["calls"].as_i64(), mixed["not_call_lines"].as_i64()),
        (Some(1), Some(3))
    );
}

#[test]
fn empty_and_summary_only_transcripts_are_named_as_such() {
    let env = Env::new();
    let empty = env.write_repo("p/empty.jsonl", "");
    let summary = env.write_repo(
        "p/summary.jsonl",
        "{\"type\":\"summary\",\"summary\":\"Fix the build\",\"leafUuid\":\"u1\"}\n",
    );
    let s = import(&env, &[empty, summary]);
    assert_eq!(s["unrecognised_files"], serde_json::json!([]), "{s:#}");
    assert_eq!(s["skipped_files"]["empty"], 1, "{s:#}");
    assert_eq!(s["skipped_files"]["summary only"], 1, "{s:#}");
}

#[test]
fn no_path_imports_from_the_hosts_own_places_and_names_them() {
    let mut env = Env::new();
    let home = env.home_path().join("userhome");
    let claude_dir = env.home_path().join("claude-config");
    let codex_dir = env.home_path().join("codex-home");
    env.var("CLAUDE_CONFIG_DIR", claude_dir.to_str().unwrap())
        .var("CODEX_HOME", codex_dir.to_str().unwrap());
    copy(
        &fixture("claude-transcript.jsonl"),
        &home.join(".claude/projects/-repo/a.jsonl"),
    );
    copy(
        &fixture("agent-a7f3c2.jsonl"),
        &claude_dir.join("projects/-repo/agent-a7f3c2.jsonl"),
    );
    let rollout = "rollout-2026-03-01T09-00-00-019c0000-0000-7000-8000-000000000111.jsonl";
    copy(
        &fixture(rollout),
        &codex_dir.join("sessions/2026/03/01").join(rollout),
    );
    // What each file holds on its own, imported by path into a fresh store.
    let alone: i64 = [
        fixture("claude-transcript.jsonl"),
        fixture("agent-a7f3c2.jsonl"),
        fixture(rollout),
    ]
    .into_iter()
    .map(|f| import(&Env::new(), &[f])["new_calls"].as_i64().unwrap())
    .sum();
    assert!(alone > 0);
    let (code, s, err) = import_args(&env, &[]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(s["new_calls"].as_i64(), Some(alone), "{s:#}");
    let read: Vec<&str> = s["read_from"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let want = [
        claude_dir.join("projects"),
        home.join(".claude/projects"),
        codex_dir.join("sessions"),
    ];
    assert_eq!(
        read,
        want.iter().map(|p| p.to_str().unwrap()).collect::<Vec<_>>()
    );
    for dir in &want {
        assert!(
            err.contains(&dir.display().to_string()),
            "names {}: {err}",
            dir.display()
        );
    }
    // Nothing there at all: said so, and nothing is wrong.
    let bare = Env::new();
    let (code, s, err) = import_args(&bare, &[]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(s["files"], 0);
    assert!(
        err.contains("no history found") && err.contains(".claude/projects"),
        "{err}"
    );
}

#[test]
fn a_repeated_id_is_one_call_settled_by_its_result() {
    let env = Env::new();
    // The result comes first (newer Claude Code writes some so), then the tool_use, then the
    // same tool_use again (a resumed session repeats it).
    let use_line = |uuid: &str, ts: &str| {
        format!(
            r#"{{"type":"assistant","sessionId":"S1","uuid":"{uuid}","timestamp":"{ts}","message":{{"role":"assistant","content":[{{"type":"tool_use","id":"toolu_rep","name":"Bash","input":{{"command":"cargo test"}}}}]}}}}"#
        )
    };
    let result = r#"{"type":"user","sessionId":"S1","uuid":"u0","timestamp":"2026-11-29T21:19:16.000Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_rep","content":"error: could not compile","is_error":true}]}}"#;
    let file = env.write_repo(
        "t.jsonl",
        &format!(
            "{result}\n{}\n{}\n",
            use_line("u1", "2026-11-29T21:19:15.000Z"),
            use_line("u2", "2026-11-29T21:19:17.000Z")
        ),
    );
    let s = import(&env, &[file]);
    assert_eq!(s["new_calls"], 1, "{s:#}");
    assert_eq!(s["duplicate_ids"], 1, "{s:#}");
    assert_eq!(s["failures"], 1, "{s:#}");
    assert_eq!(
        s["pending"], 0,
        "the repeated tool_use is no pending call: {s:#}"
    );
    assert_eq!(row(&env, "toolu_rep").status, "failure");
}

#[test]
fn record_stats_and_report_count_the_same_sessions() {
    let env = Env::new();
    // A session that only started (no tool call), and one with calls.
    record(
        &env,
        &serde_json::json!({
            "session_id": "only-started", "hook_event_name": "SessionStart", "source": "startup",
            "cwd": env.repo_path(), "transcript_path": "/nonexistent", "prompt_id": "p"
        }),
    );
    import(&env, &[fixture("claude-transcript.jsonl")]);
    let stats = json(&env.run(&["record", "stats", "--json"], b""));
    let report = json(&env.run(&["report", "--json"], b""));
    assert_eq!(stats["sessions"], 1, "{stats:#}");
    assert_eq!(
        report["totals"]["sessions"], stats["sessions"],
        "{report:#}"
    );
}
