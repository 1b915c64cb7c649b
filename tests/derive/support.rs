//! Test support for derive: put tool calls into the store at the test's `CALLUS_HOME` with
//! the recorder's column semantics, until `callus record import` lands.
//!
//! Columns as the recorder writes them (`migrations/0001_initial.sql`): `command` redacted,
//! `error` redacted, `signature` = the normalised error (spec §6.3), `shape` = the command
//! shape of the first non-builtin segment (spec §6.4; derive re-splits and does not rely on
//! it). When `record import` exists, [`load_trace`] becomes
//! `env.run(&["record", "import", path], b"")` and the tests stay as they are.

use std::path::Path;

use serde_json::Value;

use crate::common::Env;

/// Midnight UTC, 2026-07-01: the start of every test window.
pub(crate) const T0: i64 = 1_782_864_000_000;
/// One hour in milliseconds.
pub(crate) const HOUR: i64 = 3_600_000;

/// One call to insert.
#[derive(Debug, Clone)]
pub(crate) struct Row {
    pub(crate) tool: String,
    pub(crate) status: &'static str,
    pub(crate) command: String,
    pub(crate) error: String,
    pub(crate) session: String,
    pub(crate) started_ms: i64,
}

impl Row {
    /// A Bash call at `T0 + hour` hours.
    pub(crate) fn bash(status: &'static str, command: &str, error: &str, hour: i64) -> Self {
        Row {
            tool: "Bash".into(),
            status,
            command: command.into(),
            error: error.into(),
            session: format!("s{}", hour % 7),
            started_ms: T0 + hour * HOUR,
        }
    }

    /// A call of any tool at `T0 + hour` hours.
    pub(crate) fn tool(tool: &str, status: &'static str, error: &str, hour: i64) -> Self {
        Row {
            tool: tool.into(),
            status,
            command: "{}".into(),
            error: error.into(),
            session: format!("s{}", hour % 7),
            started_ms: T0 + hour * HOUR,
        }
    }
}

/// Insert `rows` into the store at `env`'s home.
pub(crate) fn insert(env: &Env, rows: &[Row]) {
    let mut conn = callus::testing::open_store(&env.db()).expect("open store");
    let tx = conn.transaction().unwrap();
    let base: i64 = tx
        .query_row("SELECT count(*) FROM tool_calls", [], |r| r.get(0))
        .unwrap();
    for (i, r) in rows.iter().enumerate() {
        let command = callus::testing::redact(&r.command).into_owned();
        let error = callus::testing::redact(&r.error).into_owned();
        let failed = r.status == "failure";
        tx.execute(
            "INSERT INTO tool_calls (tool_use_id, session_id, host, source, tool, status,
                 started_ms, ended_ms, command, shape, error, signature)
             VALUES (?1, ?2, 'claude-code', 'trace', ?3, ?4, ?5, ?5, ?6, ?7, ?8, ?9)",
            rusqlite::params![
                format!("toolu_{}", base + i as i64),
                r.session,
                r.tool,
                r.status,
                r.started_ms,
                command,
                shape(&r.tool, &command),
                failed.then_some(error.clone()),
                failed.then(|| signature(&error)),
            ],
        )
        .unwrap();
    }
    tx.commit().unwrap();
}

/// Load a callusguard JSONL trace (spec §6.3) into the store.
pub(crate) fn load_trace(env: &Env, path: &Path) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut rows = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let obj: Value = serde_json::from_str(line).unwrap();
        let tool = obj["tool_name"].as_str().unwrap_or("Bash").to_string();
        let command = match obj["tool_input"].get("command").and_then(Value::as_str) {
            Some(c) if tool == "Bash" => c.to_string(),
            _ => obj["tool_input"].to_string(),
        };
        let error = obj["error"].as_str().unwrap_or_default().to_string();
        let status = match obj["status"]
            .as_str()
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            Some("failure") => "failure",
            Some("success") => "success",
            Some("pending") => "pending",
            Some(_) | None if !error.trim().is_empty() => "failure",
            _ => "success",
        };
        let ts = chrono::DateTime::parse_from_rfc3339(obj["ts"].as_str().unwrap()).unwrap();
        rows.push(Row {
            tool,
            status,
            command,
            error,
            session: obj["session_id"].as_str().unwrap_or("trace").to_string(),
            started_ms: ts.timestamp_millis(),
        });
    }
    insert(env, &rows);
}

/// Spec §6.3 `normalize_error`.
pub(crate) fn signature(err: &str) -> String {
    let quoted = regex::Regex::new(r#"'[^']*'|"[^"]*""#).unwrap();
    let digits = regex::Regex::new(r"[0-9]+").unwrap();
    let space = regex::Regex::new(r"\s+").unwrap();
    let s = err.to_lowercase();
    let s = quoted.replace_all(&s, "'S'");
    let s = digits.replace_all(&s, "#");
    let s = space.replace_all(&s, " ");
    s.trim().chars().take(200).collect()
}

/// Spec §6.4 `command_shape`, on the first segment that is not a builtin.
fn shape(tool: &str, cmd: &str) -> String {
    const MUX: &[&str] = &["git", "npm", "cargo", "python3", "psql", "docker", "make"];
    if tool != "Bash" {
        return tool.to_string();
    }
    for seg in cmd.split(['&', ';', '|']) {
        let words: Vec<&str> = seg
            .split_whitespace()
            .skip_while(|w| w.contains('='))
            .collect();
        let Some(first) = words.first() else { continue };
        let head = first.rsplit('/').next().unwrap_or(first);
        if ["cd", "export", "set", "source"].contains(&head) {
            continue;
        }
        return match words.get(1) {
            Some(next) if MUX.contains(&head) && !next.starts_with('-') => format!("{head} {next}"),
            _ => head.to_string(),
        };
    }
    String::new()
}

/// The fixture trace of spec §6.5 "Tests pin".
pub(crate) fn fixture() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/derive/trace.jsonl")
}

/// `callus derive` over the first week of July 2026 with extra `args`.
pub(crate) fn derive(env: &Env, args: &[&str]) -> std::process::Output {
    let mut all = vec!["derive", "--since", "2026-07-01", "--until", "2026-07-08"];
    all.extend_from_slice(args);
    env.run(&all, b"")
}

/// The candidate document `derive --json` prints.
pub(crate) fn derive_json(env: &Env, args: &[&str]) -> Value {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let out = derive(env, &all);
    assert!(
        out.status.success(),
        "derive failed: {}",
        crate::common::stderr(&out)
    );
    crate::common::json(&out)
}

/// The row `guard check <candidates> --history 2026-07-01 --json` reports for the rule
/// `id` (fails the test when the replay fails or reports no such rule).
pub(crate) fn replayed_rule(env: &Env, candidates: &Path, id: &Value) -> Value {
    let out = env.run(
        &[
            "guard",
            "check",
            candidates.to_str().unwrap(),
            "--history",
            "2026-07-01",
            "--json",
        ],
        b"",
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        crate::common::stderr(&out)
    );
    let replay = crate::common::json(&out);
    replay["rules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == *id)
        .cloned()
        .unwrap_or_else(|| panic!("{replay:#}"))
}

/// Does the candidate `rule` fire on Bash `command` (the real matcher)?
pub(crate) fn fires(rule: &Value, command: &str) -> bool {
    let doc = serde_json::json!({"rules": [rule]});
    let parsed = callus::testing::document_from_value("test", &doc).unwrap();
    let input = serde_json::json!({"command": command});
    let tool = rule["tool"].as_str().unwrap().replace('*', "x");
    parsed.rules[0]
        .fires(&callus::testing::Subject::new(&tool, &input))
        .unwrap()
        .is_some()
}

/// The candidates whose `meta.command_shape` is `shape`.
pub(crate) fn by_shape<'a>(doc: &'a Value, shape: &str) -> Vec<&'a Value> {
    doc["rules"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["meta"]["command_shape"] == shape)
        .collect()
}
