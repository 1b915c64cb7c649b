//! `callus record import` of GitHub Copilot CLI session logs
//! (`~/.copilot/session-state/<id>/events.jsonl`). The fixture is a real 1.0.102 log (see
//! tests/fixtures/record/README.md): seven calls, three of which did not succeed.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{count, fixture, import, row};
use crate::common::{Env, json, stderr};

const SESSION: &str = "f7c88801-5d7a-4a2f-bac5-d3efaba26b16";

fn log() -> PathBuf {
    fixture("copilot/session-state")
        .join(SESSION)
        .join("events.jsonl")
}

fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::fs::copy(from, to).unwrap();
}

fn import_no_path(env: &Env) -> (Value, String) {
    let out = env.run(&["record", "import", "--json"], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    (json(&out), stderr(&out))
}

#[test]
fn copilot_session_log_imports_calls_with_their_outcomes() {
    let env = Env::new();
    let s = import(&env, &[fixture("copilot")]);
    assert_eq!(s["files"], 1, "{s:#}");
    assert_eq!(s["unrecognised_files"].as_array().map(Vec::len), Some(0));
    assert_eq!(
        (s["calls"].as_i64(), s["new_calls"].as_i64()),
        (Some(7), Some(7))
    );
    assert_eq!(
        s["failures"], 3,
        "exit 2, exit 1 and a view of a missing file"
    );
    assert_eq!(
        (s["pending"].as_i64(), s["skipped_lines"].as_i64()),
        (Some(0), Some(0))
    );
    assert_eq!(s["sessions"], 1);

    let ok = row(&env, "toolu_00");
    assert_eq!(
        (ok.host.as_str(), ok.source.as_str(), ok.tool.as_str()),
        ("copilot-cli", "copilot-session", "Bash")
    );
    assert_eq!((ok.status.as_str(), ok.exit_code), ("success", Some(0)));
    assert_eq!(ok.command.as_deref(), Some("echo hello && ls"));
    assert!(ok.duration_ms.is_some_and(|d| d >= 0) && ok.started_ms.is_some());

    // Copilot CLI says `success: true` for a command that exited 2: the exit code decides.
    let failed = row(&env, "toolu_01");
    assert_eq!(
        (failed.status.as_str(), failed.exit_code),
        ("failure", Some(2))
    );
    let error = failed.error.unwrap_or_default();
    assert!(error.contains("cannot access"), "{error}");
    assert!(
        !error.contains("shellId"),
        "the host's trailer is not the error: {error}"
    );
    assert!(
        failed
            .signature
            .as_deref()
            .is_some_and(|s| s.contains("cannot access")),
        "{:?}",
        failed.signature
    );

    let missing = row(&env, "toolu_05");
    assert_eq!(
        (missing.tool.as_str(), missing.status.as_str()),
        ("Read", "failure")
    );
    assert_eq!(missing.error.as_deref(), Some("Path does not exist"));
    let created = row(&env, "toolu_02");
    assert_eq!(
        (created.tool.as_str(), created.status.as_str()),
        ("Write", "success")
    );
    assert_eq!(
        created.command.as_deref(),
        Some("/work/demo/notes.txt"),
        "the path, never the file's text"
    );
    assert_eq!(row(&env, "toolu_04").tool, "Edit");

    // Copilot CLI keeps the token verbatim in its log; the store must not.
    let secret = row(&env, "toolu_06");
    assert_eq!(
        (secret.status.as_str(), secret.exit_code),
        ("failure", Some(1))
    );
    let command = secret.command.unwrap_or_default();
    assert!(command.starts_with("export GITHUB_TOKEN="), "{command}");
    assert!(!command.contains("ghp_"), "{command}");
    let leaked = count(
        &env,
        "SELECT count(*) FROM tool_calls WHERE command LIKE '%ghp_%' OR error LIKE '%ghp_%'",
    );
    assert_eq!(leaked, 0);

    let sql = format!(
        "SELECT count(*) FROM sessions WHERE id = '{SESSION}' AND host = 'copilot-cli'
         AND cwd = '/work/demo' AND prompts = 1"
    );
    assert_eq!(count(&env, &sql), 1);
    let in_session = format!("SELECT count(*) FROM tool_calls WHERE session_id = '{SESSION}'");
    assert_eq!(count(&env, &in_session), 7);
}

#[test]
fn reimporting_a_copilot_log_adds_nothing() {
    let env = Env::new();
    assert_eq!(import(&env, &[log()])["new_calls"], 7);
    let again = import(&env, &[log()]);
    assert_eq!(
        (
            again["new_calls"].as_i64(),
            again["unchanged_files"].as_i64()
        ),
        (Some(0), Some(1))
    );
    // The same log under another path is read again: its ids are the stored ones.
    let elsewhere = env.home_path().join("copy/events.jsonl");
    copy(&log(), &elsewhere);
    let copied = import(&env, &[elsewhere]);
    assert_eq!(
        (copied["calls"].as_i64(), copied["new_calls"].as_i64()),
        (Some(7), Some(0))
    );
    assert_eq!(count(&env, "SELECT count(*) FROM tool_calls"), 7);
}

#[test]
fn a_copilot_session_cut_short_keeps_its_unfinished_call_pending() {
    let env = Env::new();
    // The log up to the second call's start, then a torn line: the session died there.
    let text = std::fs::read_to_string(log()).unwrap();
    let mut kept = Vec::new();
    for line in text.lines() {
        kept.push(line);
        if line.contains(r#""type":"tool.execution_start""#) && line.contains("toolu_01") {
            break;
        }
    }
    let cut = env.home_path().join("cut/events.jsonl");
    std::fs::create_dir_all(cut.parent().unwrap()).unwrap();
    std::fs::write(&cut, format!("{}\n{{\"type\":\"tool.exec", kept.join("\n"))).unwrap();
    let s = import(&env, std::slice::from_ref(&cut));
    assert_eq!(
        (s["calls"].as_i64(), s["pending"].as_i64()),
        (Some(2), Some(1)),
        "{s:#}"
    );
    assert_eq!(s["skipped_lines"], 1, "the torn line");
    let pending = row(&env, "toolu_01");
    assert_eq!(
        (pending.status.as_str(), pending.tool.as_str()),
        ("pending", "Bash")
    );
    assert_eq!(pending.command.as_deref(), Some("ls /nonexistent-dir-xyz"));
    // The whole log later settles it.
    import(&env, &[log()]);
    assert_eq!(row(&env, "toolu_01").status, "failure");
}

#[test]
fn record_import_with_no_path_reads_copilots_session_state() {
    let env = Env::new();
    let home = env.home_path().join("userhome");
    let dir = home.join(".copilot/session-state");
    copy(&log(), &dir.join(SESSION).join("events.jsonl"));
    let (s, err) = import_no_path(&env);
    assert_eq!(s["new_calls"], 7, "{s:#}");
    assert_eq!(s["read_from"], serde_json::json!([dir.to_str().unwrap()]));
    assert!(err.contains("reading copilot history from"), "{err}");

    // `$COPILOT_HOME` moves the whole directory: its `session-state` is read instead.
    let mut moved = Env::new();
    let copilot_home = moved.home_path().join("elsewhere");
    moved.var("COPILOT_HOME", copilot_home.to_str().unwrap());
    copy(&log(), &copilot_home.join("session-state/x/events.jsonl"));
    let (s, _) = import_no_path(&moved);
    assert_eq!(s["new_calls"], 7, "{s:#}");
    let want = copilot_home.join("session-state");
    assert_eq!(s["read_from"], serde_json::json!([want.to_str().unwrap()]));
}

#[test]
fn copilot_format_can_be_forced_on_a_renamed_log() {
    let env = Env::new();
    let copied = env.home_path().join("renamed.jsonl");
    copy(&log(), &copied);
    let out = env.run(
        &[
            "record",
            "import",
            "--json",
            "--format",
            "copilot",
            copied.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json(&out)["new_calls"], 7);
    assert_eq!(row(&env, "toolu_01").host, "copilot-cli");
}

#[test]
fn a_call_a_copilot_hook_denied_is_denied_not_a_failure() {
    let env = Env::new();
    let s = import(&env, &[fixture("copilot-denied")]);
    assert_eq!(
        (s["calls"].as_i64(), s["denied"].as_i64()),
        (Some(2), Some(2)),
        "{s:#}"
    );
    assert_eq!(s["failures"], 0);
    let denied = row(&env, "toolu_deny00");
    assert_eq!((denied.status.as_str(), denied.exit_code), ("denied", None));
    assert!(
        denied
            .error
            .as_deref()
            .is_some_and(|e| e.starts_with("Denied by preToolUse hook")),
        "{:?}",
        denied.error
    );
}
