//! Issue 15's adversarial re-review, through the real hook: routes the first round did not
//! try, each of which got a call through before its fix. Lifting a RECUSE halt from another
//! session with the program computed (`$(which callus)`, `` `which callus` ``, `$CMD`,
//! `"$CALLUS_BIN"`) or from an interpreter's inline code was allowed; so was replacing the
//! callus executable the hooks run, which switches every rule off without a trace. And a
//! FIFO put where a hook appends or reads a file of its own (the errors log, the RECUSE
//! signals log, a spooled event, a Codex rollout) hung the recorder hook without limit.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{Env, guard_decision};

fn bash(env: &Env, command: &str) -> String {
    guard_decision(env, "Bash", &json!({ "command": command }))
}

#[test]
fn resuming_a_halt_through_a_computed_program_or_inline_code_is_blocked() {
    let env = Env::new();
    for command in [
        "\"$(command -v callus)\" session resume sess-1",
        "$(which callus) session resume sess-1",
        "`which callus` session resume sess-1",
        "CMD=callus; $CMD session resume sess-1",
        "\"$CALLUS_BIN\" session resume sess-1",
        "${CALLUS} session resume sess-1",
        "python3 -c \"import subprocess; subprocess.run(['callus','session','resume','s'])\"",
        "node -e \"require('child_process').execSync('callus session resume s')\"",
        "perl -e 'system(\"callus\", \"session\", \"resume\", \"s\")'",
    ] {
        assert_eq!(bash(&env, command), "block", "{command}");
    }
    // Near misses stay allowed: the words as data, another program's subcommand.
    for command in [
        "echo 'callus session resume'",
        "\"$EDITOR\" notes/session.md",
        "python3 -c \"print('resume the session')\"",
        "$(which tmux) attach-session -t resume",
    ] {
        assert_eq!(bash(&env, command), "allow", "{command}");
    }
}

#[test]
fn replacing_the_callus_executable_is_denied() {
    let env = Env::new();
    for command in [
        "cp /bin/true ~/.cargo/bin/callus",
        "install -m 755 /tmp/fake /usr/local/bin/callus",
        "printf '#!/bin/sh\\nexit 0\\n' > ~/.local/bin/callus",
        "ln -sf /bin/true /usr/local/bin/callus",
    ] {
        assert_eq!(bash(&env, command), "deny", "{command}");
    }
    for command in [
        "cp target/release/callus /tmp/callus-copy",
        "cargo build --release",
        "ls -l ~/.cargo/bin/callus",
    ] {
        assert_eq!(bash(&env, command), "allow", "{command}");
    }
}

/// `callus ARGS` with `stdin`, failing the test (instead of hanging it) past 10 s; the exit code.
fn hook_within(env: &Env, args: &[&str], stdin: &[u8]) -> Option<i32> {
    use std::io::Write as _;
    let mut cmd = env.cmd(args);
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let _ = child.stdin.take().unwrap().write_all(stdin);
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        if start.elapsed() > Duration::from_secs(10) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("callus {args:?} still running after 10 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[cfg(unix)]
fn fifo(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let made = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(made.success());
}

fn post(env: &Env, id: &str, stdout: &str) -> Value {
    json!({"session_id": "s-fifo", "hook_event_name": "PostToolUse", "tool_name": "Bash",
           "prompt_id": "p", "cwd": env.repo_path(), "tool_input": {"command": "ls"},
           "tool_response": {"stdout": stdout, "stderr": "", "interrupted": false},
           "tool_use_id": id})
}

#[cfg(unix)]
#[test]
fn a_fifo_where_a_hook_keeps_its_own_files_never_hangs_it() {
    // The errors log: a malformed payload is logged there.
    let env = Env::new();
    fifo(&env.home_path().join("errors.log"));
    assert_eq!(hook_within(&env, &["record"], b"{"), Some(0));
    assert_eq!(hook_within(&env, &["guard"], b"{"), Some(0));

    // The RECUSE signals log: a halt signal in a tool result is logged there.
    let env = Env::new();
    fifo(&env.home_path().join("signals.log"));
    let halt = post(
        &env,
        "t-halt",
        "output\nRECUSE/0.2 halt; reason=operator-request\n",
    );
    assert_eq!(
        hook_within(&env, &["record"], halt.to_string().as_bytes()),
        Some(0)
    );

    // A spooled event: the next recorder call merges the spool.
    let env = Env::new();
    let first = post(&env, "t1", "x").to_string();
    assert_eq!(hook_within(&env, &["record"], first.as_bytes()), Some(0));
    fifo(&env.home_path().join("spool/0000000000001-1-000000001.json"));
    let second = post(&env, "t2", "x").to_string();
    assert_eq!(hook_within(&env, &["record"], second.as_bytes()), Some(0));
    let conn = rusqlite::Connection::open(env.db()).unwrap();
    let stored: i64 = conn
        .query_row(
            "SELECT count(*) FROM tool_calls WHERE tool_use_id IN ('t1', 't2')",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(stored, 2, "both events are stored");

    // A Codex rollout: the recorder reads the exit code from it.
    let env = Env::new();
    let rollout = env.home_path().join("codex/rollout.jsonl");
    fifo(&rollout);
    let codex = json!({"session_id": "s-codex", "turn_id": "turn-1", "hook_event_name": "PostToolUse",
                       "tool_name": "Bash", "tool_input": {"command": "false"}, "tool_response": "x",
                       "transcript_path": rollout, "cwd": env.repo_path(), "tool_use_id": "call_1"});
    assert_eq!(
        hook_within(&env, &["record"], codex.to_string().as_bytes()),
        Some(0)
    );
}

#[cfg(unix)]
#[test]
fn a_fifo_in_a_scope_runs_state_never_hangs_the_scope_hook() {
    // The agent can write `$CALLUS_HOME/scope/<run>/` as the same user: a FIFO in place of
    // the hook's bookkeeping or its observation log must be refused at once.
    for file in ["gate.json", "observed.jsonl", "declaration.json"] {
        let mut env = Env::new();
        let declared = env.run(
            &[
                "scope", "declare", "--run-id", "fifo-run", "--create", "docs/**",
            ],
            b"",
        );
        assert_eq!(declared.status.code(), Some(0), "{file}: declare");
        let path = env.home_path().join("scope/fifo-run").join(file);
        let _ = std::fs::remove_file(&path);
        fifo(&path);
        env.var("CALLUS_SCOPE_RUN", "fifo-run");
        let write = json!({"session_id": "s-scope", "prompt_id": "p", "hook_event_name": "PreToolUse",
                           "cwd": env.repo_path(), "tool_name": "Write", "tool_use_id": "t",
                           "tool_input": {"file_path": env.repo_path().join("src/x.py"), "content": "x"}});
        let stop =
            json!({"session_id": "s-scope", "hook_event_name": "Stop", "cwd": env.repo_path()});
        for event in [write, stop] {
            let code = hook_within(&env, &["scope", "hook"], event.to_string().as_bytes());
            // Answered at once, under the default fail policy (open: an unreadable state file
            // is the hook's internal error, not a verdict).
            assert_eq!(code, Some(0), "{file}: {}", event["hook_event_name"]);
        }
    }
}
