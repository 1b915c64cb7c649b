//! `tool_calls.blamed`: a failed shell call is stored with the segment it is blamed on, and
//! its shape is that segment's program, so one cause written in several compound commands is
//! one shape (issue 25, item 1). Through `callus record import` of a trace by kind.

use serde_json::json;

use super::{db, import};
use crate::common::Env;

/// (kind, command, error); each kind spelled several ways.
pub(crate) const FAILURES: &[(&str, &str, &str)] = &[
    (
        "own-pkill",
        "pkill -f 'node server.js'; sleep 1; node server.js &",
        "Exit code 143",
    ),
    (
        "own-pkill",
        "sleep 1; pkill -f vite || true; npm run dev",
        "Exit code 143",
    ),
    (
        "own-pkill",
        "cd web && pkill -9 -f uvicorn && uvicorn app:app --port 8000",
        "Exit code 143",
    ),
    (
        "own-pkill",
        "pkill -f 'python -m http.server' 2>/dev/null; python3 -m http.server 8080 | tail -3",
        "Exit code 143\n",
    ),
    (
        "own-pkill",
        "pkill -f celery; celery -A proj worker --detach && sleep 2",
        "Exit code 143",
    ),
    (
        "expect-timeout",
        "timeout 90 expect -f deploy.exp | tail -5",
        "Command timed out after 2m 0.0s",
    ),
    (
        "expect-timeout",
        "cd ops && expect -f login.exp 2>&1 | tail -n 20",
        "Command timed out after 2m 0.0s",
    ),
    (
        "expect-timeout",
        "timeout 60 expect deploy.exp | head -40",
        "Command timed out after 2m 0.0s",
    ),
    (
        "ssh-under-git",
        "git ls-remote git@github.com:o/r.git | grep main",
        "Exit code 1\nssh: connect to host github.com port 22: Connection refused\nfatal: Could not read from remote repository.",
    ),
    (
        "ssh-under-git",
        "cd repo; git ls-remote --heads origin | grep -q feature && echo yes",
        "Exit code 1\nssh: connect to host github.com port 22: Operation timed out",
    ),
    (
        "powershell-pipeline",
        "Get-ChildItem -Recurse C:/w/src | Select-Object -First 5",
        "Exit code 1\nGet-ChildItem : Access to the path 'C:/w/src/x' is denied.",
    ),
    (
        "powershell-pipeline",
        "Get-ChildItem C:/w/logs | Where-Object { $_.Length -gt 0 } | Select-Object Name",
        "Exit code 1",
    ),
];

/// The trace lines of `FAILURES`, one a day, plus one success.
pub(crate) fn trace(env: &Env) -> std::path::PathBuf {
    let mut lines: Vec<String> = FAILURES
        .iter()
        .enumerate()
        .map(|(i, (_, cmd, err))| {
            json!({"ts": format!("2026-07-0{}T1{}:00:00Z", 1 + i % 3, i % 10),
                   "session_id": format!("s{}", i % 4), "tool_name": "Bash",
                   "tool_input": {"command": cmd}, "status": "failure", "error": err})
            .to_string()
        })
        .collect();
    lines.push(
        json!({"ts": "2026-07-01T09:00:00Z", "session_id": "s0", "tool_name": "Bash",
               "tool_input": {"command": "cargo test | tail -3"}, "status": "success"})
        .to_string(),
    );
    let path = env.home_path().join("blame-trace.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

#[test]
fn failed_shell_calls_store_the_blamed_segment_and_one_shape_per_cause() {
    let env = Env::new();
    import(&env, &[trace(&env)]);
    let conn = db(&env);
    let stored = |cmd: &str| -> (Option<String>, Option<String>) {
        conn.query_row(
            "SELECT shape, blamed FROM tool_calls WHERE command = ?1",
            [cmd],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap()
    };
    let mut shapes: std::collections::BTreeMap<&str, std::collections::BTreeSet<String>> =
        std::collections::BTreeMap::new();
    for (kind, cmd, _) in FAILURES {
        let (shape, blamed) = stored(cmd);
        let (shape, blamed) = (shape.unwrap(), blamed.unwrap());
        // The shape is the blamed segment's program.
        assert!(
            blamed
                .to_ascii_lowercase()
                .starts_with(&shape.to_ascii_lowercase()),
            "{cmd}: shape {shape} blamed {blamed}"
        );
        shapes.entry(kind).or_default().insert(shape);
    }
    let one = |kind: &str| shapes[kind].iter().cloned().collect::<Vec<_>>();
    assert_eq!(one("own-pkill"), ["pkill"]);
    assert_eq!(one("expect-timeout"), ["expect"]);
    assert_eq!(one("ssh-under-git"), ["git ls-remote"]);
    assert_eq!(one("powershell-pipeline"), ["Get-ChildItem"]);
    assert_eq!(
        stored("timeout 90 expect -f deploy.exp | tail -5")
            .1
            .as_deref(),
        Some("expect -f deploy.exp")
    );
    // A success is shaped too (by the stage its exit status belongs to) but blames nothing.
    assert_eq!(
        stored("cargo test | tail -3"),
        (Some("cargo test".into()), None)
    );
}
