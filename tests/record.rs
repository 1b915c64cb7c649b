//! Integration tests: `record` (the hook recorder, `record import`, `record stats`).
//!
//! Hook payloads are the real ones captured from Claude Code 2.1.328 and Codex 0.169
//! (tests/fixtures/record/*.json); transcripts and rollouts are real files or written in the
//! real formats of older client generations.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use rusqlite::Connection;
use serde_json::{Value, json};

use crate::common::{Env, json, stderr, stdout};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/record")
        .join(name)
}

fn payload(name: &str) -> Value {
    serde_json::from_slice(&std::fs::read(fixture(name)).unwrap()).unwrap()
}

/// Feed one event to `callus record`; it must exit 0 and print nothing.
fn record(env: &Env, event: &Value) {
    let out = env.run(&["record"], event.to_string().as_bytes());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(out.stdout.is_empty(), "stdout: {}", stdout(&out));
    assert!(out.stderr.is_empty(), "stderr: {}", stderr(&out));
}

fn db(env: &Env) -> Connection {
    Connection::open(env.db()).unwrap()
}

#[derive(Debug)]
struct Row {
    status: String,
    exit_code: Option<i64>,
    duration_ms: Option<i64>,
    shape: Option<String>,
    signature: Option<String>,
    error: Option<String>,
    host: String,
    source: String,
    tool: String,
    command: Option<String>,
    started_ms: Option<i64>,
    agent_id: Option<String>,
}

fn row(env: &Env, id: &str) -> Row {
    db(env)
        .query_row(
            "SELECT status, exit_code, duration_ms, shape, signature, error, host, source, tool,
                    command, started_ms, agent_id
             FROM tool_calls WHERE tool_use_id = ?1",
            [id],
            |r| {
                Ok(Row {
                    status: r.get(0)?,
                    exit_code: r.get(1)?,
                    duration_ms: r.get(2)?,
                    shape: r.get(3)?,
                    signature: r.get(4)?,
                    error: r.get(5)?,
                    host: r.get(6)?,
                    source: r.get(7)?,
                    tool: r.get(8)?,
                    command: r.get(9)?,
                    started_ms: r.get(10)?,
                    agent_id: r.get(11)?,
                })
            },
        )
        .unwrap_or_else(|e| panic!("no row {id}: {e}"))
}

fn count(env: &Env, sql: &str) -> i64 {
    db(env).query_row(sql, [], |r| r.get(0)).unwrap()
}

fn errors_log(env: &Env) -> String {
    std::fs::read_to_string(env.home_path().join("errors.log")).unwrap_or_default()
}

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
    assert_eq!(ok.shape.as_deref(), Some("echo"));
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

// ---------------------------------------------------------------- import

fn import(env: &Env, files: &[PathBuf]) -> Value {
    let mut args = vec!["record".to_string(), "import".into(), "--json".into()];
    args.extend(files.iter().map(|f| f.to_string_lossy().into_owned()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = env.run(&args, b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    json(&out)
}

#[test]
fn claude_transcript_import_pairs_uses_and_results() {
    let env = Env::new();
    let s = import(&env, &[fixture("claude-transcript.jsonl")]);
    assert_eq!(s["calls"], 6);
    assert_eq!(s["new_calls"], 6);
    assert_eq!(s["failures"], 1);
    assert_eq!(
        s["denied"], 2,
        "the two hook refusals are denied, not failures"
    );
    assert_eq!(s["skipped_lines"], 0);
    assert_eq!(s["sessions"], 1);
    let deny = row(&env, "toolu_e2e_001");
    assert_eq!(
        (deny.status.as_str(), deny.source.as_str()),
        ("denied", "claude-transcript")
    );
    let fail = row(&env, "toolu_e2e_005");
    assert_eq!((fail.status.as_str(), fail.exit_code), ("failure", Some(2)));
    assert_eq!(fail.duration_ms, Some(85), "timestamps from the transcript");
    assert_eq!(
        fail.signature.as_deref(),
        Some("exit code 2 ls: cannot access 'S': no such file or directory")
    );
    assert_eq!(row(&env, "toolu_e2e_003").status, "success");
    let prompts = count(
        &env,
        "SELECT prompts FROM sessions WHERE id = 'ea7f5b04-cf4f-481a-a783-2a7cf8ed84dc'",
    );
    assert_eq!(prompts, 1);
}

#[test]
fn subagent_transcripts_carry_the_agent_and_refusals() {
    let env = Env::new();
    let s = import(&env, &[fixture("agent-a7f3c2.jsonl")]);
    assert_eq!(s["calls"], 3);
    let pytest = row(&env, "toolu_agent_01");
    assert_eq!(pytest.status, "failure");
    assert_eq!(
        pytest.shape.as_deref(),
        Some("pytest"),
        "not the cd segment"
    );
    assert_eq!(pytest.agent_id.as_deref(), Some("a7f3c2"));
    assert_eq!(pytest.duration_ms, Some(6500));
    let read = row(&env, "toolu_agent_02");
    assert_eq!(
        (read.status.as_str(), read.tool.as_str()),
        ("success", "Read")
    );
    assert_eq!(
        read.command.as_deref(),
        Some("/home/dev/app/tests/test_api.py")
    );
    assert_eq!(row(&env, "toolu_agent_03").status, "denied");
}

#[test]
fn codex_rollouts_of_every_generation() {
    let env = Env::new();
    let s = import(
        &env,
        &[
            fixture("codex-rollout.jsonl"),
            fixture("rollout-2025-09-01T10-00-00-0199a000-0000-7000-8000-000000000040.jsonl"),
            fixture("rollout-2026-03-01T09-00-00-019c0000-0000-7000-8000-000000000111.jsonl"),
        ],
    );
    assert_eq!(s["files"], 3);
    assert_eq!(s["sessions"], 3);
    assert_eq!(s["skipped_lines"], 0);
    // 0.169: CommandExecution records; hook-denied calls have only the blocked output.
    assert_eq!(row(&env, "call_e2e_005").exit_code, Some(2));
    assert_eq!(row(&env, "call_e2e_001").status, "denied");
    assert_eq!(row(&env, "call_e2e_000").exit_code, Some(0));
    // 0.41: JSON envelopes.
    let ok = row(&env, "call_040_ok");
    assert_eq!((ok.status.as_str(), ok.exit_code), ("success", Some(0)));
    assert_eq!(ok.command.as_deref(), Some("cargo test"));
    assert_eq!(ok.shape.as_deref(), Some("cargo test"));
    let fail = row(&env, "call_040_fail");
    assert_eq!((fail.status.as_str(), fail.exit_code), ("failure", Some(2)));
    assert_eq!(fail.shape.as_deref(), Some("psql"));
    assert_eq!(fail.duration_ms, Some(400));
    assert_eq!(row(&env, "call_040_rejected").status, "denied");
    assert_eq!(row(&env, "call_040_aborted").status, "interrupted");
    // 0.113: exit codes in the text; a long process settles through its poll.
    let build = row(&env, "call_111_build");
    assert_eq!(
        (build.status.as_str(), build.exit_code),
        ("failure", Some(1))
    );
    assert_eq!(
        build.signature.as_deref(),
        Some("exit code 1 sh: #: tsc: not found")
    );
    let long = row(&env, "call_111_long");
    assert_eq!((long.status.as_str(), long.exit_code), ("success", Some(0)));
    let patch = row(&env, "call_111_patch");
    assert_eq!(patch.tool, "apply_patch");
    assert_eq!(patch.command.as_deref(), Some("apply_patch src/index.ts"));
    assert_eq!(patch.status, "success");
    assert_eq!(
        count(
            &env,
            "SELECT count(*) FROM tool_calls WHERE tool_use_id = 'call_111_poll'"
        ),
        0
    );
}

#[test]
fn trace_import_reports_corrupt_lines_and_reimport_adds_nothing() {
    let env = Env::new();
    let trace = env.home_path().join("traces/trace.jsonl");
    std::fs::create_dir_all(trace.parent().unwrap()).unwrap();
    std::fs::copy(fixture("trace.jsonl"), &trace).unwrap();
    let files = [
        trace.clone(),
        fixture("claude-transcript.jsonl"),
        fixture("codex-rollout.jsonl"),
    ];
    let first = import(&env, &files);
    assert_eq!(first["skipped_lines"], 1);
    let corrupt = first["corrupt_lines"][0].as_str().unwrap();
    assert!(corrupt.ends_with("trace.jsonl:4"), "{corrupt}");
    assert_eq!(first["new_calls"], 6 + 6 + 6);
    assert_eq!(
        row(&env, first_trace_id(&env, "git push --force").as_str()).status,
        "denied"
    );
    let total = count(&env, "SELECT count(*) FROM tool_calls");

    // Unchanged files are skipped outright…
    let again = import(&env, &files);
    assert_eq!(again["unchanged_files"], 3);
    assert_eq!(again["new_calls"], 0);
    // …and changed ones are read again without adding a row.
    let now = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
    for f in &files[..1] {
        std::fs::File::options()
            .append(true)
            .open(f)
            .unwrap()
            .set_modified(now)
            .unwrap();
    }
    let reread = import(&env, &files);
    assert_eq!(reread["files"], 1);
    assert_eq!(reread["calls"], 6);
    assert_eq!(reread["new_calls"], 0);
    assert_eq!(count(&env, "SELECT count(*) FROM tool_calls"), total);

    // The text summary names the corrupt line too (on a fresh store).
    let env2 = Env::new();
    let out = env2.run(&["record", "import", trace.to_str().unwrap()], b"");
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout(&out).contains("trace.jsonl:4"), "{}", stdout(&out));
}

fn first_trace_id(env: &Env, command: &str) -> String {
    db(env)
        .query_row(
            "SELECT tool_use_id FROM tool_calls WHERE command = ?1",
            [command],
            |r| r.get(0),
        )
        .unwrap()
}

#[test]
fn trace_rows_group_by_shape_and_signature() {
    let env = Env::new();
    import(&env, &[fixture("trace.jsonl")]);
    let psql: Vec<(String, String, Option<String>)> = {
        let conn = db(&env);
        let mut stmt = conn
            .prepare(
                "SELECT status, shape, signature FROM tool_calls
                 WHERE command LIKE '%psql%' ORDER BY started_ms",
            )
            .unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    assert_eq!(psql.len(), 3);
    assert!(psql.iter().all(|(_, shape, _)| shape == "psql"), "{psql:?}");
    assert_eq!(psql[0].2, psql[1].2, "kai and bob share one signature");
    assert_eq!(
        psql[0].2.as_deref(),
        Some("fatal: database 'S' does not exist")
    );
    let npm = row(&env, &first_trace_id(&env, "npm test"));
    assert_eq!((npm.status.as_str(), npm.exit_code), ("failure", Some(1)));
    // The PGPASSWORD value is redacted in the stored command.
    let stored: String = db(&env)
        .query_row(
            "SELECT command FROM tool_calls WHERE command LIKE 'PGPASSWORD%'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(stored, "PGPASSWORD=*** psql -h db -U kai");
}

#[test]
fn live_rows_and_transcript_rows_merge_by_tool_use_id() {
    let env = Env::new();
    for f in [
        "claude-pretooluse.json",
        "claude-posttooluse-success.json",
        "claude-posttoolusefailure.json",
    ] {
        record(&env, &payload(f));
    }
    let s = import(&env, &[fixture("claude-transcript.jsonl")]);
    assert_eq!(s["calls"], 6);
    assert_eq!(s["new_calls"], 4, "two calls were already recorded live");
    assert_eq!(count(&env, "SELECT count(*) FROM tool_calls"), 6);
    let live = row(&env, "toolu_e2e_000");
    assert_eq!((live.source.as_str(), live.duration_ms), ("hook", Some(36)));
    assert_eq!(count(&env, "SELECT count(*) FROM sessions"), 1);
}

#[test]
fn directories_are_walked_and_unknown_files_reported() {
    let env = Env::new();
    let dir = env.home_path().join("history");
    std::fs::create_dir_all(dir.join("projects/-home-dev-app")).unwrap();
    std::fs::copy(
        fixture("claude-transcript.jsonl"),
        dir.join("projects/-home-dev-app/ea7f5b04.jsonl"),
    )
    .unwrap();
    std::fs::copy(
        fixture("codex-rollout.jsonl"),
        dir.join("rollout-2026-11-29T21-19-16-01a2292d-2dbd-7210-9173-3d6fbc403574.jsonl"),
    )
    .unwrap();
    std::fs::write(dir.join("notes.jsonl"), "{\"hello\": 1}\n").unwrap();
    std::fs::write(dir.join("readme.txt"), "not jsonl").unwrap();
    let s = import(&env, &[dir]);
    assert_eq!(s["files"], 2);
    assert_eq!(s["unrecognised_files"].as_array().unwrap().len(), 1);
    assert_eq!(s["calls"], 12);
    let missing = env.run(&["record", "import", "/no/such/dir"], b"");
    assert_eq!(missing.status.code(), Some(3));
}

#[test]
fn forced_format() {
    let env = Env::new();
    let odd = env.home_path().join("odd.log");
    std::fs::write(
        &odd,
        "{\"tool_name\":\"Bash\",\"command\":\"ls\"}\n{\"tool_name\":\"Bash\",\"command\":\"false\",\"error\":\"Exit code 1\"}\n",
    )
    .unwrap();
    let out = env.run(
        &[
            "record",
            "import",
            "--format",
            "trace",
            "--json",
            odd.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let s = json(&out);
    assert_eq!(
        (s["calls"].as_i64(), s["failures"].as_i64()),
        (Some(2), Some(1))
    );
}

// ---------------------------------------------------------------- stats

#[test]
fn stats_after_an_import() {
    let env = Env::new();
    let empty = env.run(&["record", "stats", "--json"], b"");
    assert_eq!(empty.status.code(), Some(0));
    assert_eq!(json(&empty)["calls"], 0);

    import(
        &env,
        &[fixture("trace.jsonl"), fixture("claude-transcript.jsonl")],
    );
    let out = env.run(&["record", "stats", "--json"], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let s = json(&out);
    assert_eq!(s["calls"], 12);
    assert_eq!(s["failures"], 4);
    assert_eq!(s["denied"], 3);
    // 4 failures over 9 attempts (success + failure); refusals are not attempts.
    let rate = s["failure_rate"].as_f64().unwrap();
    assert!((rate - 4.0 / 9.0).abs() < 1e-9, "{rate}");
    let bash = s["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["tool"] == "Bash")
        .unwrap();
    assert_eq!(bash["calls"], 11);
    let top = &s["shapes"][0];
    assert_eq!(
        (top["shape"].as_str(), top["failures"].as_i64()),
        (Some("psql"), Some(2))
    );
    assert_eq!(s["first"], "2026-05-01T10:00:00Z");

    let later = env.run(&["record", "stats", "--since", "2026-06-01", "--json"], b"");
    assert_eq!(json(&later)["calls"], 6, "only the November transcript");
    let text = env.run(&["record", "stats"], b"");
    assert!(stdout(&text).contains("psql"), "{}", stdout(&text));
    let bad = env.run(&["record", "stats", "--since", "soon"], b"");
    assert_eq!(bad.status.code(), Some(3));
    assert!(stderr(&bad).contains("--since"));
}

// ---------------------------------------------------------------- robustness

fn post_event(i: usize, session: &str) -> String {
    json!({
        "session_id": session,
        "transcript_path": "/tmp/t.jsonl",
        "cwd": "/tmp",
        "prompt_id": "p",
        "hook_event_name": if i.is_multiple_of(2) { "PostToolUse" } else { "PostToolUseFailure" },
        "tool_name": "Bash",
        "tool_input": {"command": format!("cargo test --test t{i}")},
        "tool_use_id": format!("toolu_{session}_{i}"),
        "tool_response": {"stdout": "ok", "stderr": "", "interrupted": false},
        "error": "Exit code 101\nerror: test failed",
        "duration_ms": 5
    })
    .to_string()
}

#[test]
fn sixteen_parallel_recorders_lose_nothing() {
    let env = Env::new();
    std::thread::scope(|scope| {
        for w in 0..16 {
            let env = &env;
            scope.spawn(move || {
                for i in 0..200 {
                    let out = env.run(&["record"], post_event(i, &format!("w{w}")).as_bytes());
                    assert_eq!(out.status.code(), Some(0));
                }
            });
        }
    });
    assert_eq!(count(&env, "SELECT count(*) FROM tool_calls"), 3200);
    assert_eq!(
        count(
            &env,
            "SELECT count(*) FROM tool_calls WHERE status = 'failure'"
        ),
        1600
    );
    assert_eq!(count(&env, "SELECT count(*) FROM sessions"), 16);
    assert_eq!(errors_log(&env), "", "no recorder failed");
}

#[test]
fn sigkill_mid_import_keeps_the_store_intact() {
    let env = Env::new();
    // Committed before the kill: 50 live rows.
    for i in 0..50 {
        let out = env.run(&["record"], post_event(i, "live").as_bytes());
        assert_eq!(out.status.code(), Some(0));
    }
    // Many trace files: one transaction each, so some commit before the kill.
    let dir = env.home_path().join("big");
    std::fs::create_dir_all(&dir).unwrap();
    for f in 0..30 {
        let mut text = String::new();
        for i in 0..1000 {
            text.push_str(
                &json!({"ts": 1_780_000_000 + i, "tool_name": "Bash",
                        "tool_input": {"command": format!("make target{f}_{i}")},
                        "status": if i % 3 == 0 { "failure" } else { "success" },
                        "error": "make: *** [all] Error 2"})
                .to_string(),
            );
            text.push('\n');
        }
        std::fs::write(dir.join(format!("t{f:02}.jsonl")), text).unwrap();
    }
    let mut cmd: Command = env.cmd(&["record", "import", dir.to_str().unwrap()]);
    cmd.stdout(Stdio::null()).stderr(Stdio::null());
    let mut child = cmd.spawn().unwrap();
    // Wait until at least one file has committed, then kill mid-write.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let done = Connection::open(env.db())
            .ok()
            .and_then(|c| {
                c.query_row("SELECT count(*) FROM import_files", [], |r| {
                    r.get::<_, i64>(0)
                })
                .ok()
            })
            .unwrap_or(0);
        if done >= 2 || std::time::Instant::now() > deadline {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL
    let status = child.wait().unwrap();
    assert!(
        !status.success(),
        "the import was killed before it finished"
    );

    let conn = db(&env);
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
    assert_eq!(
        count(
            &env,
            "SELECT count(*) FROM tool_calls WHERE tool_use_id LIKE 'toolu_live_%'"
        ),
        50
    );
    // Every file the import recorded as done has all of its rows.
    let files = count(&env, "SELECT count(*) FROM import_files");
    let recorded = count(&env, "SELECT COALESCE(sum(calls), 0) FROM import_files");
    assert!((2..30).contains(&files), "killed mid-run: {files} files");
    assert_eq!(recorded, files * 1000);
    let traced = count(
        &env,
        "SELECT count(*) FROM tool_calls WHERE source = 'trace'",
    );
    assert_eq!(traced, recorded, "no partial file survives");
    // The store keeps working: a re-run completes the import.
    let out = env.run(&["record", "import", "--json", dir.to_str().unwrap()], b"");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        count(
            &env,
            "SELECT count(*) FROM tool_calls WHERE source = 'trace'"
        ),
        30_000
    );
}

/// The secrets of the redaction tests, in every place a recorder stores text.
const SECRETS: &[&str] = &[
    "AKIAIOSFODNN7EXAMPLE",
    "sk-abcdefghijklmnopqrstuvwx",
    "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "glpat-abcdefghijklmnopqrstu",
    "xoxb-1234567890-abcdef",
    "hunter2hunter2",
    "abc.def-ghi_jkl123",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "s3cr3tpass",
    "sk-ant-api03-abcdefghijklmnopqrstuvwxyz",
    "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
    "AIzaSyA1234567890abcdefghijklmnopqrstuv",
    "sk_live_abcdefghij1234567890",
    "MIIEpAIBAAKCAQEA",
];

#[test]
fn no_secret_reaches_the_database_files() {
    let env = Env::new();
    let cmd = format!(
        "AWS_KEY={} OPENAI_API_KEY={} git clone https://{}@github.com/x && psql postgresql://u:{}@h/db && curl -H 'Authorization: Bearer {}' x && mysql --password: {} && echo {} {} {} {} {} {} {} && cat <<EOF\n-----BEGIN RSA PRIVATE KEY-----\n{}\n-----END RSA PRIVATE KEY-----\nEOF",
        SECRETS[0],
        SECRETS[1],
        SECRETS[2],
        SECRETS[8],
        SECRETS[6],
        SECRETS[5],
        SECRETS[3],
        SECRETS[4],
        SECRETS[7],
        SECRETS[9],
        SECRETS[10],
        SECRETS[11],
        SECRETS[12],
        SECRETS[13]
    );
    let error = format!("Exit code 1\nfailed with token={} and {}", SECRETS[1], cmd);
    // Imports first (an import may empty the WAL when done): a trace and a transcript.
    let trace = env.home_path().join("secret-trace.jsonl");
    std::fs::write(
        &trace,
        format!(
            "{}\n",
            json!({"ts": "2026-01-01T00:00:00Z", "tool_name": "Bash",
                   "tool_input": {"command": cmd}, "status": "failure", "error": error})
        ),
    )
    .unwrap();
    let transcript = env.home_path().join("secret-session.jsonl");
    let lines = [
        json!({"type": "assistant", "sessionId": "sec", "uuid": "a", "timestamp": "2026-01-01T00:00:00Z",
               "message": {"content": [{"type": "tool_use", "id": "toolu_tx_secret", "name": "Bash",
                                         "input": {"command": cmd}}]}}),
        json!({"type": "user", "sessionId": "sec", "uuid": "b", "timestamp": "2026-01-01T00:00:01Z",
               "message": {"content": [{"type": "tool_result", "tool_use_id": "toolu_tx_secret",
                                         "is_error": true, "content": error}]}}),
    ];
    std::fs::write(
        &transcript,
        lines
            .iter()
            .map(|l| l.to_string() + "\n")
            .collect::<String>(),
    )
    .unwrap();
    import(&env, &[trace, transcript]);
    // Then live events, whose rows are still in the WAL when the files are grepped.
    let mut pre = payload("claude-pretooluse.json");
    pre["tool_use_id"] = json!("toolu_secret");
    pre["tool_input"] = json!({"command": cmd});
    record(&env, &pre);
    let mut fail = pre.clone();
    fail["hook_event_name"] = json!("PostToolUseFailure");
    fail["error"] = json!(error);
    record(&env, &fail);
    // A live Codex event (text fallback) and a non-Bash tool.
    let mut codex = payload("codex-posttooluse-failure.json");
    codex["tool_use_id"] = json!("call_secret");
    codex["transcript_path"] = json!("/nonexistent/rollout-x.jsonl");
    codex["tool_input"] = json!({"command": cmd});
    codex["tool_response"] = json!(format!("Process exited with code 1\n{error}"));
    record(&env, &codex);
    let mut mcp = payload("claude-posttoolusefailure.json");
    mcp["tool_use_id"] = json!("toolu_mcp_secret");
    mcp["tool_name"] = json!("mcp__db__query");
    mcp["tool_input"] = json!({"dsn": format!("postgresql://u:{}@h/db", SECRETS[8]), "token": format!("token: {}", SECRETS[1])});
    mcp["error"] = json!(error);
    record(&env, &mcp);
    // The last writer may have emptied the WAL (store::trim_wal); one more secret-bearing
    // call then lands in a short WAL that no trim touches.
    let wal = env.home_path().join("callus.db-wal");
    if std::fs::metadata(&wal).map_or(0, |m| m.len()) == 0 {
        mcp["tool_use_id"] = json!("toolu_mcp_secret_2");
        record(&env, &mcp);
    }
    // Grep the raw bytes of every file in the home (db, -wal, -shm, errors.log) before
    // this test opens the store itself: closing our connection would checkpoint the WAL.
    assert!(
        std::fs::metadata(env.home_path().join("callus.db-wal")).is_ok_and(|m| m.len() > 0),
        "rows are still in the WAL (callus never checkpoints on close)"
    );
    let mut checked = 0;
    for entry in std::fs::read_dir(env.home_path()).unwrap() {
        let path = entry.unwrap().path();
        if !path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("callus.db")
            && !path.ends_with("errors.log")
        {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        for s in SECRETS {
            assert!(
                !bytes.windows(s.len()).any(|w| w == s.as_bytes()),
                "{s} found in {}",
                path.display()
            );
        }
        checked += 1;
    }
    assert!(checked >= 3, "the db, its WAL and its shm were checked");
    assert!(count(&env, "SELECT count(*) FROM tool_calls") >= 5);
}
