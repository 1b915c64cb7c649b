//! Integration tests: `record` (the hook recorder, `record import`, `record stats`).
//!
//! Hook payloads are the real ones captured from Claude Code 2.1.328 and Codex 0.169
//! (tests/fixtures/record/*.json); transcripts and rollouts are real files or written in the
//! real formats of older client generations.

mod answer_codes;
pub(crate) mod blame;
mod busy;
mod copilot_import;
mod digest;
mod first_hour;
mod hook;
mod import;
mod outcomes;
pub(crate) mod redaction;
mod robustness;

use std::path::{Path, PathBuf};

use rusqlite::Connection;
use serde_json::Value;

use crate::common::{Env, json, stderr, stdout};

pub(super) fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/record")
        .join(name)
}

pub(super) fn payload(name: &str) -> Value {
    serde_json::from_slice(&std::fs::read(fixture(name)).unwrap()).unwrap()
}

/// Feed one event to `callus record`; it must exit 0 and print nothing.
pub(super) fn record(env: &Env, event: &Value) {
    let out = env.run(&["record"], event.to_string().as_bytes());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(out.stdout.is_empty(), "stdout: {}", stdout(&out));
    assert!(out.stderr.is_empty(), "stderr: {}", stderr(&out));
}

pub(super) fn db(env: &Env) -> Connection {
    Connection::open(env.db()).unwrap()
}

#[derive(Debug)]
pub(super) struct Row {
    pub(super) status: String,
    pub(super) exit_code: Option<i64>,
    pub(super) duration_ms: Option<i64>,
    pub(super) shape: Option<String>,
    pub(super) signature: Option<String>,
    pub(super) error: Option<String>,
    pub(super) host: String,
    pub(super) source: String,
    pub(super) tool: String,
    pub(super) command: Option<String>,
    pub(super) started_ms: Option<i64>,
    pub(super) agent_id: Option<String>,
}

pub(super) fn row(env: &Env, id: &str) -> Row {
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

pub(super) fn count(env: &Env, sql: &str) -> i64 {
    db(env).query_row(sql, [], |r| r.get(0)).unwrap()
}

pub(super) fn errors_log(env: &Env) -> String {
    std::fs::read_to_string(env.home_path().join("errors.log")).unwrap_or_default()
}

pub(super) fn import(env: &Env, files: &[PathBuf]) -> Value {
    let mut args = vec!["record".to_string(), "import".into(), "--json".into()];
    args.extend(files.iter().map(|f| f.to_string_lossy().into_owned()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = env.run(&args, b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    json(&out)
}
