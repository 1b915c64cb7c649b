//! Failures the host's sandbox causes, through the real binary: Codex rollouts where a
//! program is refused in `workspace-write` sessions and works in a `danger-full-access` one.
//! Such a program is proposed from two failures (below `--min-count`), conditioned on the
//! sandbox, so the replayed rule never fires outside it; a permission error outside any
//! sandbox, or a program that also succeeded under the sandbox, gets no lowered floor.

use serde_json::{Value, json};

use super::support::derive_json;
use crate::common::{Env, stderr};

/// The rustup refusal Codex's Seatbelt sandbox gives every cargo call outside the workspace.
const EPERM: &str = "info: syncing channel updates for 'stable'\nerror: could not create temp file /home/dev/.rustup/tmp/q1_file: Operation not permitted (os error 1)\n";

/// Marks a command the agent ran with escalated permissions (outside the sandbox).
const ESCALATED: &str = "escalated: ";

/// One Codex rollout (old `shell` tool, argv arrays) of session `n` in `sandbox`, on July
/// `day` 2026: each command with its error (exit 1) or none (exit 0).
fn rollout(dir: &std::path::Path, n: u32, sandbox: &str, day: u32, calls: &[(&str, Option<&str>)]) {
    let id = format!("0199c000-0000-7000-8000-{n:012}");
    let ts = |s: usize| format!("2026-07-{day:02}T10:{:02}:{:02}.000Z", s / 60, s % 60);
    let mut lines = vec![
        json!({"timestamp": ts(0), "type": "session_meta", "payload": {
            "id": id, "timestamp": ts(0), "cwd": "/home/dev/app",
            "originator": "codex_cli_rs", "cli_version": "0.63.0"}}),
        json!({"timestamp": ts(1), "type": "turn_context", "payload": {
            "cwd": "/home/dev/app", "approval_policy": "on-request",
            "sandbox_policy": {"type": sandbox, "network_access": false},
            "model": "gpt-5.1-codex"}}),
    ];
    for (i, (command, error)) in calls.iter().enumerate() {
        let call = format!("call_{n}_{i}");
        // `ESCALATED` before a command: the agent asked to run it outside the sandbox.
        let args = match command.strip_prefix(ESCALATED) {
            Some(c) => json!({"command": ["bash", "-lc", c], "workdir": "/home/dev/app",
                "with_escalated_permissions": true, "justification": "needs ~/.rustup"}),
            None => json!({"command": ["bash", "-lc", command], "workdir": "/home/dev/app"}),
        };
        lines.push(
            json!({"timestamp": ts(10 + i * 10), "type": "response_item",
            "payload": {"type": "function_call", "name": "shell", "call_id": call,
                "arguments": args.to_string()}}),
        );
        let (text, code) = error.map_or(("ok\n", 0), |e| (e, 1));
        lines.push(
            json!({"timestamp": ts(15 + i * 10), "type": "response_item",
            "payload": {"type": "function_call_output", "call_id": call,
                "output": json!({"output": text,
                    "metadata": {"exit_code": code, "duration_seconds": 1.0}}).to_string()}}),
        );
    }
    let text: Vec<String> = lines.iter().map(Value::to_string).collect();
    std::fs::write(
        dir.join(format!("rollout-2026-07-{day:02}T10-00-00-{id}.jsonl")),
        text.join("\n") + "\n",
    )
    .unwrap();
}

/// Import the rollouts `build` writes and derive over July 2026.
fn derived(build: impl FnOnce(&std::path::Path)) -> Value {
    derived_in(&Env::new(), build)
}

/// [`derived`] in `env`.
fn derived_in(env: &Env, build: impl FnOnce(&std::path::Path)) -> Value {
    let dir = env.repo_path().join("rollouts");
    std::fs::create_dir_all(&dir).unwrap();
    build(&dir);
    let out = env.run(&["record", "import", dir.to_str().unwrap()], b"");
    assert!(out.status.success(), "{}", stderr(&out));
    derive_json(env, &[])
}

/// The candidates whose sample command starts with `cargo fmt`.
fn cargo_fmt(doc: &Value) -> Vec<&Value> {
    doc["rules"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| {
            r["meta"]["sample_command"]
                .as_str()
                .is_some_and(|c| c.contains("cargo fmt"))
        })
        .collect()
}

#[test]
fn a_program_the_sandbox_refuses_is_proposed_from_two_failures_under_that_sandbox() {
    let doc = derived(|dir| {
        rollout(
            dir,
            1,
            "workspace-write",
            1,
            &[
                ("ls", None),
                ("cargo fmt", Some(EPERM)),
                ("cargo fmt", Some(EPERM)),
            ],
        );
        rollout(
            dir,
            2,
            "danger-full-access",
            2,
            &[
                ("cargo fmt", None),
                ("cargo fmt", None),
                ("cargo fmt", None),
            ],
        );
    });
    let found = cargo_fmt(&doc);
    assert_eq!(found.len(), 1, "{doc:#}");
    let c = found[0];
    assert_eq!(c["when"]["sandbox"], json!(["workspace-write"]), "{c:#}");
    assert_eq!(c["meta"]["kind"], "sandbox-denied", "{c:#}");
    // Replayed with its condition it fires on the two refusals and on none of the
    // unsandboxed successes.
    let b = &c["meta"]["backtest"];
    assert_eq!(
        (b["matched"].as_u64(), b["failures"].as_u64()),
        (Some(2), Some(2)),
        "{c:#}"
    );
    // One session: a nudge at most, whatever its rate.
    assert_eq!(c["meta"]["tier"], "probabilistic", "{c:#}");
    assert_eq!(c["meta"]["min_attempts"], 2, "{c:#}");
    assert!(
        c["message"]
            .as_str()
            .is_some_and(|m| m.contains("workspace-write sandbox")),
        "{c:#}"
    );
}

#[test]
fn a_permission_error_outside_a_sandbox_keeps_the_ordinary_floor() {
    let denied = "touch: cannot touch '/etc/x': Permission denied\n";
    let doc = derived(|dir| {
        rollout(
            dir,
            3,
            "danger-full-access",
            1,
            &[("cargo fmt", Some(EPERM)), ("cargo fmt", Some(denied))],
        );
        rollout(dir, 4, "danger-full-access", 2, &[("ls", None)]);
    });
    assert!(cargo_fmt(&doc).is_empty(), "{doc:#}");
}

#[test]
fn a_program_that_also_succeeds_under_the_sandbox_gets_no_lowered_floor() {
    let doc = derived(|dir| {
        rollout(
            dir,
            5,
            "workspace-write",
            1,
            &[
                ("cargo fmt", Some(EPERM)),
                ("cargo fmt", Some(EPERM)),
                ("cargo fmt", None),
            ],
        );
        rollout(dir, 6, "danger-full-access", 2, &[("ls", None)]);
    });
    assert!(cargo_fmt(&doc).is_empty(), "{doc:#}");
}

#[test]
fn a_refusal_that_names_no_denial_keeps_the_ordinary_floor() {
    let doc = derived(|dir| {
        rollout(
            dir,
            7,
            "workspace-write",
            1,
            &[
                ("cargo fmt", Some("error: could not find `Cargo.toml`\n")),
                ("cargo fmt", Some("error: could not find `Cargo.toml`\n")),
            ],
        );
        rollout(dir, 8, "danger-full-access", 2, &[("ls", None)]);
    });
    assert!(cargo_fmt(&doc).is_empty(), "{doc:#}");
}

#[test]
fn a_refused_program_at_the_ordinary_floor_stays_proposed_despite_a_success() {
    let doc = derived(|dir| {
        rollout(
            dir,
            9,
            "workspace-write",
            1,
            &[
                ("cargo fmt", Some(EPERM)),
                ("cargo fmt", Some(EPERM)),
                ("cargo fmt", Some(EPERM)),
                ("cargo fmt", None),
            ],
        );
        rollout(dir, 10, "danger-full-access", 2, &[("cargo fmt", None)]);
    });
    let found = cargo_fmt(&doc);
    assert_eq!(found.len(), 1, "{doc:#}");
    let b = &found[0]["meta"]["backtest"];
    assert_eq!(
        (b["matched"].as_u64(), b["failures"].as_u64()),
        (Some(4), Some(3)),
        "{doc:#}"
    );
}

#[test]
fn an_escalated_retry_that_succeeds_ran_outside_the_sandbox() {
    let env = Env::new();
    let doc = derived_in(&env, |dir| {
        rollout(
            dir,
            11,
            "workspace-write",
            1,
            &[
                ("cargo fmt", Some(EPERM)),
                ("cargo fmt", Some(EPERM)),
                ("escalated: cargo fmt", None),
            ],
        );
        rollout(dir, 12, "danger-full-access", 2, &[("ls", None)]);
    });
    let found = cargo_fmt(&doc);
    assert_eq!(found.len(), 1, "{doc:#}");
    let c = found[0];
    assert_eq!(c["when"]["sandbox"], json!(["workspace-write"]), "{c:#}");
    let b = &c["meta"]["backtest"];
    assert_eq!(
        (b["matched"].as_u64(), b["failures"].as_u64()),
        (Some(2), Some(2)),
        "{c:#}"
    );
    // guard check --history replays it the same way: the escalated call is spared.
    let path = env.home_path().join("sandbox-candidates.json");
    std::fs::write(&path, doc.to_string()).unwrap();
    let row = super::support::replayed_rule(&env, &path, &c["id"]);
    assert_eq!(
        (row["fired"].as_u64(), row["succeeded"].as_u64()),
        (Some(2), Some(0)),
        "{row:#}"
    );
}

#[test]
fn writes_refused_outside_the_workspace_are_keyed_on_that_directory() {
    let denied = |p: &str| format!("touch: {p}: Operation not permitted\n");
    let (a, b) = (
        denied("/home/dev/.cache/tool/a"),
        denied("/home/dev/.cache/tool/sub/b"),
    );
    let doc = derived(|dir| {
        rollout(
            dir,
            13,
            "workspace-write",
            1,
            &[
                ("touch /home/dev/.cache/tool/a", Some(&a)),
                ("touch src/new.rs", None),
                ("touch /home/dev/.cache/tool/sub/b", Some(&b)),
                ("touch src/other.rs", None),
            ],
        );
        rollout(dir, 14, "danger-full-access", 2, &[("ls", None)]);
    });
    let c = doc["rules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["meta"]["kind"] == "sandbox-denied")
        .unwrap_or_else(|| panic!("{doc:#}"));
    assert_eq!(
        c["any"],
        json!([r"^touch\b.*/home/dev/\.cache/tool/"]),
        "{c:#}"
    );
    // The touches inside the workspace are spared.
    let b = &c["meta"]["backtest"];
    assert_eq!(
        (b["matched"].as_u64(), b["failures"].as_u64()),
        (Some(2), Some(2)),
        "{c:#}"
    );
}

#[test]
fn a_program_refused_under_two_shapes_is_one_rule_on_the_program() {
    let doc = derived(|dir| {
        rollout(
            dir,
            15,
            "workspace-write",
            1,
            &[
                ("cargo fmt", Some(EPERM)),
                ("cargo check", Some(EPERM)),
                ("cargo fmt", Some(EPERM)),
                ("cargo check", Some(EPERM)),
            ],
        );
        rollout(dir, 16, "danger-full-access", 2, &[("cargo check", None)]);
    });
    let refused: Vec<&Value> = doc["rules"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["meta"]["kind"] == "sandbox-denied")
        .collect();
    assert_eq!(refused.len(), 1, "{doc:#}");
    assert_eq!(refused[0]["any"], json!([r"^cargo\b"]), "{doc:#}");
    let b = &refused[0]["meta"]["backtest"];
    assert_eq!(
        (b["matched"].as_u64(), b["failures"].as_u64()),
        (Some(4), Some(4)),
        "{doc:#}"
    );
}

#[test]
fn a_program_refused_under_one_shape_keeps_that_shape() {
    let doc = derived(|dir| {
        rollout(
            dir,
            17,
            "workspace-write",
            1,
            &[
                ("cargo fmt", Some(EPERM)),
                ("cargo test", None),
                ("cargo fmt", Some(EPERM)),
                ("cargo test", None),
            ],
        );
        rollout(dir, 18, "danger-full-access", 2, &[("ls", None)]);
    });
    let found = cargo_fmt(&doc);
    assert_eq!(found.len(), 1, "{doc:#}");
    assert_eq!(found[0]["any"], json!([r"^cargo\s+fmt\b"]), "{doc:#}");
    let b = &found[0]["meta"]["backtest"];
    assert_eq!(
        (b["matched"].as_u64(), b["failures"].as_u64()),
        (Some(2), Some(2)),
        "{doc:#}"
    );
}
