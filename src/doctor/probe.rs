//! Doctor fires the configured guard hooks to prove them: each wired guard's command line,
//! run as the host runs it (`sh -c`, the payload on stdin, in the project's folder), gets a
//! benign call (`ls`) and a dangerous one (`rm -rf /`, which the built-in starter set
//! blocks) in that host's payload shape, and its answers are checked against the host's
//! protocol: nothing (Cursor: `{}`) for the benign call; for the dangerous one exit 2 and a
//! stderr reason (Claude Code, Codex, Gemini CLI), exit 2 and `permission: "deny"` (Cursor),
//! or exit 0 and `permissionDecision: "deny"` (Copilot CLI, which skips a failing hook).
//!
//! The probes run against a temporary `CALLUS_HOME` (its audit chain and store are not
//! touched) with `CALLUS_DRYRUN` and `CALLUS_HOST` removed, and are killed after 10 s.

use std::io::{Read as _, Write as _};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{Report, Status};
use crate::host::{Answer, Host};
use crate::install::Target;
use crate::install::settings::Found;

const LIMIT: Duration = Duration::from_secs(10);

/// One hook call's answer.
struct Answered {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// A `PreToolUse` payload of `host` for a shell call of `command` in `cwd` (the shapes of
/// `host::samples`, the smallest each host's detection claims).
fn payload(host: Host, cwd: &Path, command: &str) -> Value {
    let cwd = cwd.display().to_string();
    let session = "callus-doctor-probe";
    match host {
        Host::ClaudeCode => json!({"session_id": session, "prompt_id": "doctor", "cwd": cwd,
            "hook_event_name": "PreToolUse", "tool_name": "Bash",
            "tool_input": {"command": command}, "tool_use_id": "doctor-1"}),
        Host::Codex => json!({"session_id": session, "turn_id": "doctor", "cwd": cwd,
            "hook_event_name": "PreToolUse", "tool_name": "Bash",
            "tool_input": {"command": command}, "tool_use_id": "doctor-1"}),
        Host::Gemini => json!({"session_id": session, "cwd": cwd, "transcript_path": "",
            "hook_event_name": "BeforeTool", "timestamp": "2026-01-01T00:00:00.000Z",
            "tool_name": "run_shell_command", "tool_input": {"command": command}}),
        Host::Cursor => json!({"conversation_id": session, "generation_id": "doctor",
            "hook_event_name": "preToolUse", "cursor_version": "doctor",
            "workspace_roots": [cwd], "cwd": cwd, "tool_name": "Shell",
            "tool_input": {"command": command}, "tool_use_id": "doctor-1"}),
        Host::Copilot => json!({"sessionId": session, "timestamp": 1_764_619_200_000_i64,
            "cwd": cwd, "toolName": "bash",
            "toolArgs": json!({"command": command}).to_string()}),
    }
}

fn fire(command: &str, cwd: &Path, home: &Path, input: &Value) -> Result<Answered, String> {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(command)
        .current_dir(cwd)
        .env("CALLUS_HOME", home)
        .env_remove("CALLUS_DRYRUN")
        .env_remove("CALLUS_HOST")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run `sh -c {command}`: {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(input.to_string().as_bytes());
    }
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if start.elapsed() < LIMIT => std::thread::sleep(Duration::from_millis(10)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("no answer within {} s", LIMIT.as_secs()));
            }
        }
    };
    let mut stdout = String::new();
    let mut stderr = String::new();
    if let Some(mut o) = child.stdout.take() {
        let _ = o.read_to_string(&mut stdout);
    }
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut stderr);
    }
    Ok(Answered {
        code: status.code(),
        stdout,
        stderr,
    })
}

fn json_field(stdout: &str, key: &str) -> Option<String> {
    let v: Value = serde_json::from_str(stdout.trim()).ok()?;
    v.get(key).and_then(Value::as_str).map(str::to_string)
}

/// What is wrong with the answer to the benign call, if anything.
fn benign_problem(shape: Answer, a: &Answered) -> Option<String> {
    let quiet = match shape {
        Answer::Permission => a.stdout.trim() == "{}",
        _ => a.stdout.trim().is_empty(),
    };
    (a.code != Some(0) || !quiet).then(|| {
        format!(
            "a benign `ls` got exit {:?} and stdout {:?} (want exit 0 and no opinion)",
            a.code,
            a.stdout.trim()
        )
    })
}

/// What is wrong with the answer to the dangerous call, if anything.
fn dangerous_problem(shape: Answer, a: &Answered) -> Option<String> {
    let refused = match shape {
        Answer::HookSpecific | Answer::Decision => {
            a.code == Some(2) && a.stderr.contains("BLOCKED by callus")
        }
        Answer::Permission => {
            a.code == Some(2) && json_field(&a.stdout, "permission").as_deref() == Some("deny")
        }
        Answer::PermissionDecision => {
            a.code == Some(0)
                && json_field(&a.stdout, "permissionDecision").as_deref() == Some("deny")
        }
    };
    (!refused).then(|| {
        format!(
            "`rm -rf /` got exit {:?}, stdout {:?}, stderr {:?} (want it refused in the host's shape)",
            a.code,
            a.stdout.trim(),
            a.stderr.trim()
        )
    })
}

/// Fire the guard hooks of one wired target and report what they answered.
pub(crate) fn check(report: &mut Report, target: &Target, found: &[Found], cwd: &Path) {
    let Some(guard) = found
        .iter()
        .find(|f| f.role == crate::host::Role::Guard && f.event == target.host.specs()[0].event)
    else {
        return;
    };
    let label = target.label();
    let Ok(home) = tempfile::Builder::new()
        .prefix("callus-doctor-probe-")
        .tempdir()
    else {
        report.add(
            "firing",
            Status::Warn,
            format!("{label}: no temporary folder to fire the guard in"),
        );
        return;
    };
    let shape = target.host.spec().answer;
    let mut problems = Vec::new();
    for (command, judge) in [
        (
            "ls",
            benign_problem as fn(Answer, &Answered) -> Option<String>,
        ),
        ("rm -rf /", dangerous_problem),
    ] {
        let input = payload(target.host, cwd, command);
        match fire(&guard.command, cwd, home.path(), &input) {
            Ok(a) => problems.extend(judge(shape, &a)),
            Err(e) => problems.push(e),
        }
    }
    if problems.is_empty() {
        report.add(
            "firing",
            Status::Ok,
            format!(
                "{label}: fired `{}` as {} does: a benign call gets no opinion, `rm -rf /` is refused in its shape",
                guard.command,
                target.host.spec().label
            ),
        );
    } else {
        report.add(
            "firing",
            Status::Fail,
            format!(
                "{label}: fired `{}`: {}",
                guard.command,
                problems.join("; ")
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answered(code: i32, stdout: &str, stderr: &str) -> Answered {
        Answered {
            code: Some(code),
            stdout: stdout.into(),
            stderr: stderr.into(),
        }
    }

    #[test]
    fn each_hosts_refusal_is_judged_in_its_own_shape() {
        let block = answered(2, "", "BLOCKED by callus (rule r): no");
        assert!(dangerous_problem(Answer::HookSpecific, &block).is_none());
        assert!(dangerous_problem(Answer::Decision, &block).is_none());
        assert!(dangerous_problem(Answer::PermissionDecision, &block).is_some());
        let copilot = answered(
            0,
            r#"{"permissionDecision":"deny","permissionDecisionReason":"x"}"#,
            "",
        );
        assert!(dangerous_problem(Answer::PermissionDecision, &copilot).is_none());
        let cursor = answered(2, r#"{"permission":"deny"}"#, "x");
        assert!(dangerous_problem(Answer::Permission, &cursor).is_none());
        assert!(dangerous_problem(Answer::HookSpecific, &answered(0, "", "")).is_some());
        assert!(benign_problem(Answer::Permission, &answered(0, "{}", "")).is_none());
        assert!(benign_problem(Answer::HookSpecific, &answered(0, "{}", "")).is_some());
        assert!(benign_problem(Answer::Decision, &answered(0, "", "")).is_none());
    }

    #[test]
    fn every_hosts_probe_payload_is_detected_as_that_host() {
        for spec in crate::host::HOSTS {
            let Value::Object(raw) = payload(spec.host, Path::new("/r"), "ls") else {
                panic!("payloads are objects");
            };
            assert_eq!(crate::host::detect(&raw, |_| false), spec.host, "{raw:?}");
        }
    }
}
