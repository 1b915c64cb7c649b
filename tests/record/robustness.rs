//! The recorder under stress: parallel writers, a kill mid-write, and secrets.

use std::process::{Command, Stdio};

use rusqlite::Connection;
use serde_json::json;

use super::{count, db, errors_log, import, payload, record};
use crate::common::Env;

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

#[test]
fn a_long_non_ascii_command_is_cut_on_a_character_boundary_within_the_cap() {
    let env = Env::new();
    // 10 000 bytes of 2-byte characters: the 8 KiB cap leaves 8189 bytes before the 3-byte
    // ellipsis, an odd count, so the cut must step back one byte to a boundary.
    let command = "é".repeat(5000);
    let error = format!("Exit code 1\n{}", "€".repeat(2000));
    let event = json!({
        "session_id": "s", "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp", "prompt_id": "p",
        "hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
        "tool_input": {"command": command}, "tool_use_id": "toolu_long",
        "error": error, "duration_ms": 5
    });
    record(&env, &event);
    let (stored, err): (String, String) = db(&env)
        .query_row(
            "SELECT command, error FROM tool_calls WHERE tool_use_id = 'toolu_long'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(stored, format!("{}…", "é".repeat(4094)));
    assert_eq!(stored.len(), 8191);
    // The error cap (4 KiB) cuts inside a 3-byte character the same way.
    assert!(err.len() <= 4096 && err.ends_with('…'), "{}", err.len());
    assert_eq!(err, format!("Exit code 1\n{}…", "€".repeat(1360)));
}
