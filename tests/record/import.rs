//! `callus record import` of every history format, and `callus record stats`.

use super::{count, db, fixture, import, payload, record, row};
use crate::common::{Env, json, stderr, stdout};

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
    // `pytest -x` reporting a failed test has given its verdict on the code: an answer
    // (docs/outcomes.md), not a failure of pytest.
    assert_eq!(pytest.status, "answer");
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
    assert_eq!(
        bad.status.code(),
        Some(2),
        "a bad flag value is a usage error"
    );
    assert!(stderr(&bad).contains("--since"));
}

#[test]
fn trace_status_words_are_read_not_guessed() {
    let env = Env::new();
    let trace = env.home_path().join("statuses.jsonl");
    let words = [
        ("interrupted", "interrupted"),
        ("aborted", "interrupted"),
        ("denied", "denied"),
        ("blocked", "denied"),
        ("Rejected", "denied"),
        ("ok", "success"),
        ("error", "failure"),
        ("done", "success"),
    ];
    let lines: Vec<String> = words
        .iter()
        .enumerate()
        .map(|(i, (word, _))| {
            serde_json::json!({"ts": format!("2026-05-01T10:0{i}:00Z"), "tool_use_id": format!("t-{word}"),
                "tool_name": "Bash", "tool_input": {"command": format!("step{i}")}, "status": word})
            .to_string()
        })
        .collect();
    std::fs::write(&trace, lines.join("\n") + "\n").unwrap();
    assert_eq!(import(&env, &[trace])["new_calls"], words.len());
    for (word, status) in words {
        assert_eq!(row(&env, &format!("t-{word}")).status, status, "{word}");
    }
}

/// The distinct `tool_use` ids of the Claude Code transcripts under `dir`, read
/// independently of the importer (every `assistant` line's `tool_use` blocks).
fn distinct_tool_use_ids(dir: &std::path::Path) -> std::collections::BTreeSet<String> {
    let mut ids = std::collections::BTreeSet::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        for line in text.lines() {
            let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
                continue;
            };
            for b in v["message"]["content"].as_array().into_iter().flatten() {
                if b["type"] == "tool_use" {
                    ids.insert(b["id"].as_str().unwrap().to_string());
                }
            }
        }
    }
    ids
}

#[test]
fn import_counts_each_call_once_across_resumed_sessions_subagents_and_repeated_lines() {
    let env = Env::new();
    let dir = fixture("resumed");
    let ids = distinct_tool_use_ids(&dir);
    assert_eq!(ids.len(), 4);
    let s = import(&env, &[dir]);
    assert_eq!(s["calls"], ids.len(), "{s:#}");
    assert_eq!(s["new_calls"], ids.len());
    // The resumed file's copies of the two earlier calls; the tool_use written twice
    // before its result is paired once and never reaches the store twice.
    assert_eq!(s["duplicate_ids"], 2, "{s:#}");
    // Outcomes are counted per call too: the make failure once, not once per file.
    assert_eq!(s["failures"], 1, "{s:#}");
    assert_eq!(s["pending"], 0);
    assert_eq!(count(&env, "SELECT count(*) FROM tool_calls"), 4);
    assert_eq!(
        row(&env, "toolu_r_agent").agent_id.as_deref(),
        Some("a1b2c3d"),
        "the subagent's call is its own, with its agent"
    );
    // The text summary says what the numbers are.
    let again = Env::new();
    let out = again.run(
        &["record", "import", &fixture("resumed").to_string_lossy()],
        b"",
    );
    let text = stdout(&out);
    assert!(text.contains("calls read (one per id)"), "{text}");
    assert!(
        text.contains("lines repeating an id already read"),
        "{text}"
    );
}

/// The real archive (when present): import's count is the number of distinct `tool_use`
/// ids an independent reader finds, however many files repeat them.
#[test]
fn import_of_the_real_archive_counts_distinct_tool_use_ids() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/realdata/m-claude/Archives");
    if !dir.is_dir() {
        eprintln!("SKIPPED: {} is absent", dir.display());
        return;
    }
    let ids = distinct_tool_use_ids(&dir);
    let env = Env::new();
    let s = import(&env, &[dir]);
    assert_eq!(s["calls"], ids.len(), "{s:#}");
    assert_eq!(s["new_calls"], ids.len());
}

/// One Codex `shell_command` call and its output, as a 0.6x rollout writes them.
fn shell_command_lines(id: &str, command: &str, code: i64, output: &str) -> String {
    let args = serde_json::json!({ "command": command, "workdir": "/w" }).to_string();
    let call = serde_json::json!({"timestamp": "2025-12-06T21:14:17.095Z", "type": "response_item",
        "payload": {"type": "function_call", "name": "shell_command", "arguments": args, "call_id": id}});
    let text = format!("Exit code: {code}\nWall time: 0.8 seconds\nOutput:\n{output}");
    let out = serde_json::json!({"timestamp": "2025-12-06T21:14:18.095Z", "type": "response_item",
        "payload": {"type": "function_call_output", "call_id": id, "output": text}});
    format!("{call}\n{out}\n")
}

#[test]
fn the_login_shells_banner_does_not_make_an_answer_a_failure() {
    // A profile that prints a line before every command of the session (a version manager
    // announcing itself): the exit status is the command's, the banner is not its output.
    let env = Env::new();
    let banner = "Profile: using toolchain v9 (profile v1)\n";
    let mut rollout = String::from(
        r#"{"timestamp":"2025-12-06T21:11:37.969Z","type":"session_meta","payload":{"id":"019af581-0000-7000-8000-0000000000b1","cwd":"/w","originator":"codex_cli_rs"}}"#,
    );
    rollout.push('\n');
    for (id, command, code, output) in [
        ("b_grep", "git branch | grep -E '^feature$'", 1, ""),
        ("b_probe", "ls Dockerfile* 2>/dev/null", 1, ""),
        ("b_list", "ls src", 0, "main.rs\n"),
        ("b_fmt", "cargo fmt", 0, ""),
        (
            "b_fail",
            "git fetch --all",
            255,
            "fatal: cannot open '.git/FETCH_HEAD': Operation not permitted\n",
        ),
        (
            "b_plain",
            "ls Makefile",
            1,
            "ls: Makefile: No such file or directory\n",
        ),
    ] {
        rollout.push_str(&shell_command_lines(
            id,
            command,
            code,
            &format!("{banner}{output}"),
        ));
    }
    // Patches do not run in the login shell: their outputs neither carry the banner nor
    // count against it.
    for id in ["b_patch1", "b_patch2"] {
        let call = serde_json::json!({"timestamp": "2025-12-06T21:15:00.000Z",
            "type": "response_item", "payload": {"type": "custom_tool_call", "name": "apply_patch",
            "call_id": id, "input": "*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch\n"}});
        let out = serde_json::json!({"timestamp": "2025-12-06T21:15:01.000Z",
            "type": "response_item", "payload": {"type": "custom_tool_call_output", "call_id": id,
            "output": "Success. Updated the following files:\nA a.txt\n"}});
        for line in [call, out] {
            rollout.push_str(&line.to_string());
            rollout.push('\n');
        }
    }
    let file = env.write_home(
        "sessions/rollout-2025-12-06T15-11-37-019af581-0000-7000-8000-0000000000b1.jsonl",
        &rollout,
    );
    import(&env, &[file]);
    assert_eq!(row(&env, "b_grep").status, "answer");
    assert_eq!(row(&env, "b_probe").status, "answer");
    assert_eq!(row(&env, "b_list").status, "success");
    let fail = row(&env, "b_fail");
    assert_eq!(
        (fail.status.as_str(), fail.exit_code),
        ("failure", Some(255))
    );
    assert!(
        !fail.error.as_deref().unwrap().contains("Profile"),
        "{fail:?}"
    );
    let signature = fail.signature.as_deref().unwrap();
    assert!(signature.ends_with("operation not permitted"), "{fail:?}");
    // A probe that kept its error stream said why it failed: a failure.
    assert_eq!(row(&env, "b_plain").status, "failure");
    assert_eq!(row(&env, "b_patch1").status, "success");
}

#[test]
fn a_codex_timeout_is_a_failure_stored_with_the_limit_the_call_set() {
    // Codex 0.5x `shell` calls carry their own time limit; the host kills the command at it.
    let env = Env::new();
    let call = |id: &str, cmd: &str, ms: u64| {
        let args = serde_json::json!({"command": ["bash", "-lc", cmd], "workdir": "/w",
            "timeout_ms": ms})
        .to_string();
        serde_json::json!({"timestamp": "2025-11-13T02:18:30.000Z", "type": "response_item",
            "payload": {"type": "function_call", "name": "shell", "arguments": args, "call_id": id}})
    };
    let output = |id: &str, text: &str, code: i64| {
        let envelope = serde_json::json!({"output": text,
            "metadata": {"exit_code": code, "duration_seconds": 1.0}})
        .to_string();
        serde_json::json!({"timestamp": "2025-11-13T02:18:31.000Z", "type": "response_item",
            "payload": {"type": "function_call_output", "call_id": id, "output": envelope}})
    };
    let lines = [
        call("t_slow", "git status -sb", 1000),
        output("t_slow", "command timed out after 1005 milliseconds\n", 124),
        call("t_fast", "git log -1", 1000),
        output("t_fast", "commit abc\n", 0),
    ];
    let text = lines
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n");
    let file = env.write_home(
        "sessions/rollout-2025-11-13T16-00-16-019a7fa9-0000-7000-8000-0000000000c1.jsonl",
        &text,
    );
    import(&env, &[file]);
    let slow = row(&env, "t_slow");
    assert_eq!(
        (slow.status.as_str(), slow.exit_code),
        ("failure", Some(124))
    );
    assert!(
        slow.error
            .as_deref()
            .unwrap()
            .contains("timed out after 1005 milliseconds")
    );
    let facts = |id: &str| -> Option<String> {
        db(&env)
            .query_row(
                "SELECT facts FROM tool_calls WHERE tool_use_id = ?1",
                [id],
                |r| r.get(0),
            )
            .unwrap()
    };
    assert_eq!(facts("t_slow").as_deref(), Some(r#"{"timeout_ms":1000}"#));
    assert_eq!(facts("t_fast").as_deref(), Some(r#"{"timeout_ms":1000}"#));
    assert_eq!(row(&env, "t_fast").status, "success");
}

#[test]
fn a_claude_bash_call_keeps_the_time_limit_it_set() {
    let env = Env::new();
    let session = "0b5c7e1a-0000-4000-8000-0000000000c2";
    let use_line = |id: &str, input: serde_json::Value, at: &str| {
        serde_json::json!({"type": "assistant", "sessionId": session, "cwd": "/w",
            "timestamp": at, "uuid": format!("u-{id}"),
            "message": {"role": "assistant", "content": [
                {"type": "tool_use", "id": id, "name": "Bash", "input": input}]}})
    };
    let result_line = |id: &str, text: &str, error: bool, at: &str| {
        serde_json::json!({"type": "user", "sessionId": session, "cwd": "/w", "timestamp": at,
            "uuid": format!("r-{id}"), "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": id, "content": text, "is_error": error}]}})
    };
    let lines = [
        use_line(
            "toolu_slow",
            serde_json::json!({"command": "git status", "timeout": 1000}),
            "2026-11-29T21:19:10.000Z",
        ),
        result_line(
            "toolu_slow",
            "Command timed out after 1s",
            true,
            "2026-11-29T21:19:11.100Z",
        ),
        use_line(
            "toolu_ok",
            serde_json::json!({"command": "ls", "timeout": 1000}),
            "2026-11-29T21:19:12.000Z",
        ),
        result_line("toolu_ok", "a\nb", false, "2026-11-29T21:19:12.100Z"),
        use_line(
            "toolu_plain",
            serde_json::json!({"command": "ls"}),
            "2026-11-29T21:19:13.000Z",
        ),
        result_line("toolu_plain", "a\nb", false, "2026-11-29T21:19:13.100Z"),
    ];
    let text = lines
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n");
    let file = env.write_home(&format!("projects/w/{session}.jsonl"), &text);
    import(&env, &[file]);
    let facts = |id: &str| -> Option<String> {
        db(&env)
            .query_row(
                "SELECT facts FROM tool_calls WHERE tool_use_id = ?1",
                [id],
                |r| r.get(0),
            )
            .unwrap()
    };
    assert_eq!(row(&env, "toolu_slow").status, "failure");
    assert_eq!(
        facts("toolu_slow").as_deref(),
        Some(r#"{"timeout_ms":1000}"#)
    );
    assert_eq!(facts("toolu_ok").as_deref(), Some(r#"{"timeout_ms":1000}"#));
    assert_eq!(facts("toolu_plain"), None);
}
