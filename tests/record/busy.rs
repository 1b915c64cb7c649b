//! A store held by another process past the hook busy timeout (issue 15 item 9): `record`
//! never drops the event (it spools it, redacted, and the next successful write merges it)
//! and the guard's firing call returns within a bounded time under its fail policy.

use std::time::{Duration, Instant};

use rusqlite::Connection;
use serde_json::json;

use super::{count, db, record, row};
use crate::common::{Env, stderr, stdout};

fn pre(id: &str, command: &str) -> serde_json::Value {
    json!({
        "session_id": "s-busy", "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": {"command": command}, "tool_use_id": id, "cwd": "/tmp"
    })
}

fn spooled(env: &Env) -> Vec<std::path::PathBuf> {
    match std::fs::read_dir(env.home_path().join("spool")) {
        Ok(entries) => entries.map(|e| e.unwrap().path()).collect(),
        Err(_) => Vec::new(),
    }
}

/// Hold the store's write lock from this process, as another writer would.
fn hold(env: &Env) -> Connection {
    let conn = Connection::open(env.db()).unwrap();
    conn.execute_batch("BEGIN EXCLUSIVE").unwrap();
    conn.execute(
        "INSERT INTO sessions (id, host, source) VALUES ('holder', 'codex', 'hook')",
        [],
    )
    .unwrap();
    conn
}

#[test]
fn a_busy_store_spools_the_event_and_the_next_write_merges_it() {
    let env = Env::new();
    record(&env, &pre("toolu_before", "ls"));
    let lock = hold(&env);
    let started = Instant::now();
    record(
        &env,
        &pre("toolu_spooled", "PGPASSWORD=hunter2busy psql -h db"),
    );
    let waited = started.elapsed();
    assert!(
        waited < Duration::from_secs(4),
        "record waited {waited:?} on the busy store"
    );
    let files = spooled(&env);
    assert_eq!(files.len(), 1, "{files:?}");
    let text = std::fs::read_to_string(&files[0]).unwrap();
    assert!(
        !text.contains("hunter2busy"),
        "the spool holds the secret: {text}"
    );
    assert!(text.contains("PGPASSWORD=***"), "{text}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&files[0]).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    assert_eq!(
        count(
            &env,
            "SELECT count(*) FROM tool_calls WHERE tool_use_id = 'toolu_spooled'"
        ),
        0
    );
    drop(lock); // rolls back: the holder wrote nothing
    // The next write stores its own event and merges the spooled one, as it was.
    record(&env, &pre("toolu_after", "ls -la"));
    assert!(spooled(&env).is_empty(), "{:?}", spooled(&env));
    // An emptied spool leaves no directory for every later call to list.
    assert!(!env.home_path().join("spool").exists());
    let merged = row(&env, "toolu_spooled");
    assert_eq!(merged.command.as_deref(), Some("PGPASSWORD=*** psql -h db"));
    assert_eq!(merged.status, "pending");
    assert!(merged.started_ms.is_some());
    assert_eq!(merged.shape.as_deref(), Some("psql"));
    assert_eq!(count(&env, "SELECT count(*) FROM tool_calls"), 3);
    // Merged once: a further write finds nothing to replay.
    record(&env, &pre("toolu_later", "pwd"));
    assert_eq!(count(&env, "SELECT count(*) FROM tool_calls"), 4);
    let sessions: i64 = db(&env)
        .query_row(
            "SELECT count(*) FROM sessions WHERE id = 's-busy'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(sessions, 1);
}

#[test]
fn the_guard_on_a_busy_store_answers_in_bounded_time_under_its_fail_policy() {
    let env = Env::new();
    record(&env, &pre("toolu_first", "ls"));
    // The starter policy denies a force push: the guard must append an audit record.
    let payload = json!({
        "session_id": "s-busy", "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": {"command": "git push --force origin main"},
        "tool_use_id": "toolu_guarded", "cwd": env.repo_path()
    })
    .to_string();
    let lock = hold(&env);
    for (policy, want_exit) in [("closed", 2), ("open", 0)] {
        let mut cmd = env.cmd(&["guard"]);
        cmd.env("CALLUS_FAIL", policy);
        let started = Instant::now();
        let out = crate::common::run_cmd(cmd, payload.as_bytes());
        let waited = started.elapsed();
        assert!(
            waited < Duration::from_secs(4),
            "{policy}: the guard waited {waited:?}"
        );
        let said = format!("{}{}", stdout(&out), stderr(&out));
        assert!(said.contains("audit chain not written"), "{policy}: {said}");
        if policy == "closed" {
            assert!(said.contains("BLOCKED by callus (fail-closed)"), "{said}");
        } else {
            assert!(said.contains("failing open"), "{said}");
            // The rule that loaded still refuses the call.
            assert!(said.contains(r#""permissionDecision":"deny""#), "{said}");
        }
        assert_eq!(out.status.code(), Some(want_exit), "{policy}: {said}");
        assert!(
            said.contains("spooled for the next call"),
            "{policy}: {said}"
        );
    }
    // Both decisions wait in the audit spool; the chain has not seen them yet.
    let waiting =
        || std::fs::read_dir(env.home_path().join("audit-spool")).map_or(0, Iterator::count);
    assert_eq!(waiting(), 2);
    let doctor = env.run(&["doctor"], b"");
    assert!(
        stdout(&doctor).contains("2 audit record(s) waiting"),
        "{}",
        stdout(&doctor)
    );
    drop(lock);
    // The next write (here the recorder's) appends them, and the chain verifies.
    record(&env, &pre("toolu_after", "ls"));
    assert_eq!(waiting(), 0);
    let conn = db(&env);
    let audited: i64 = conn
        .query_row(
            "SELECT count(*) FROM audit WHERE tool_use_id = 'toolu_guarded'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(audited, 2, "both spooled decisions reached the chain");
    let verify = env.run(&["guard", "audit", "verify"], b"");
    assert!(
        !stdout(&verify).contains("broken") && verify.status.code() == Some(0),
        "{}{}",
        stdout(&verify),
        stderr(&verify)
    );
}
