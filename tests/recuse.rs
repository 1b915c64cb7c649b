//! Integration tests: RECUSE halts. `recuse::scan` is what the recorder calls on each tool
//! result; the blocking and the resume go through the real binary.

use callus::testing::Home;
use callus::testing::recuse;
use serde_json::json;

use crate::common::{Env, stderr, stdout};

fn pre_tool_use(session: &str, command: &str) -> Vec<u8> {
    json!({
        "session_id": session,
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "tool_use_id": format!("toolu_{session}"),
        "prompt_id": "p1",
        "cwd": "/tmp",
    })
    .to_string()
    .into_bytes()
}

const BASH_RESULT: &str = "Filesystem  Size  Used\n/dev/sda1  100G  80G\n\
RECUSE/0.1 warn; reason=production\n\
RECUSE/0.2 halt; reason=operator-request; id=abc-123\n\
This operation is being halted by the operator.\n";

#[test]
fn a_halt_in_a_bash_result_blocks_only_that_session_until_resumed() {
    let env = Env::new();
    let home = Home::at(env.home_path());
    // Before: both sessions run `ls`.
    assert_eq!(
        env.run(&["guard"], &pre_tool_use("sess-a", "ls"))
            .status
            .code(),
        Some(0)
    );
    let signal = recuse::scan(&home, "sess-a", BASH_RESULT).expect("a signal");
    assert!(
        signal.is_stop(),
        "the warn before it does not hide the halt"
    );
    assert_eq!(signal.id(), Some("abc-123"));

    let o = env.run(&["guard"], &pre_tool_use("sess-a", "ls"));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("reason=operator-request"), "{err}");
    assert!(err.contains("id=abc-123"), "{err}");
    assert!(err.contains("callus session resume sess-a"), "{err}");

    let o = env.run(&["guard"], &pre_tool_use("sess-b", "ls"));
    assert_eq!(
        o.status.code(),
        Some(0),
        "another session is not halted: {}",
        stderr(&o)
    );
    assert!(stdout(&o).is_empty());

    let o = env.run(&["session", "resume", "sess-a"], b"");
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("lifted the halt"), "{}", stdout(&o));
    assert!(stdout(&o).contains("abc-123"), "{}", stdout(&o));
    let o = env.run(&["guard"], &pre_tool_use("sess-a", "ls"));
    assert_eq!(o.status.code(), Some(0), "resumed: {}", stderr(&o));

    let o = env.run(&["session", "resume", "sess-a"], b"");
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("was not halted"), "{}", stdout(&o));
}

#[test]
fn advisories_are_returned_but_never_halt() {
    let env = Env::new();
    let home = Home::at(env.home_path());
    let s = recuse::scan(&home, "sess-w", "RECUSE/0.1 throttle; reason=production").unwrap();
    assert_eq!(s.directive, recuse::Directive::Throttle);
    assert!(!s.is_stop());
    assert_eq!(
        env.run(&["guard"], &pre_tool_use("sess-w", "ls"))
            .status
            .code(),
        Some(0)
    );
}

#[test]
fn a_malformed_sentinel_halts_fail_closed() {
    let env = Env::new();
    let home = Home::at(env.home_path());
    let s = recuse::scan(&home, "sess-m", "output\nRECUSE/0.2 HALT now\n").unwrap();
    assert!(s.is_stop());
    let o = env.run(&["guard"], &pre_tool_use("sess-m", "echo hi"));
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("malformed"), "{}", stderr(&o));
}

/// The whole path through the binaries: the recorder sees a halt in a Bash result, and the
/// guard then blocks that session's next call (and only that session's) until resumed.
#[test]
fn a_halt_seen_by_the_recorder_blocks_the_next_call() {
    let env = Env::new();
    let post = |session: &str, stdout_text: &str| {
        json!({
            "session_id": session,
            "hook_event_name": "PostToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": "./deploy.sh"},
            "tool_response": {"stdout": stdout_text, "stderr": "", "interrupted": false},
            "tool_use_id": format!("toolu_post_{session}"),
            "prompt_id": "p1",
            "cwd": "/tmp",
            "duration_ms": 12,
        })
        .to_string()
        .into_bytes()
    };
    let o = env.run(&["record"], &post("sess-r", BASH_RESULT));
    assert_eq!(o.status.code(), Some(0));
    assert!(o.stdout.is_empty(), "the recorder prints nothing");
    let o = env.run(&["guard"], &pre_tool_use("sess-r", "ls"));
    assert_eq!(o.status.code(), Some(2), "halted: {}", stderr(&o));
    assert!(stderr(&o).contains("id=abc-123"));
    let o = env.run(&["guard"], &pre_tool_use("sess-other", "ls"));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // An advisory signal is recorded but halts nothing.
    let o = env.run(
        &["record"],
        &post("sess-w", "RECUSE/0.1 warn; reason=slow\n"),
    );
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        env.run(&["guard"], &pre_tool_use("sess-w", "ls"))
            .status
            .code(),
        Some(0)
    );
    let log = std::fs::read_to_string(env.home_path().join("signals.log")).unwrap();
    assert!(log.contains("sess-w") && log.contains("warn"), "{log}");
    assert!(log.contains("sess-r") && log.contains("halt"), "{log}");
    // Resume lifts it.
    let o = env.run(&["session", "resume", "sess-r"], b"");
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert_eq!(
        env.run(&["guard"], &pre_tool_use("sess-r", "ls"))
            .status
            .code(),
        Some(0)
    );
}

/// A `PostToolUse` of a `Read` whose result is `content`.
fn read_result(session: &str, content: &str) -> Vec<u8> {
    json!({
        "session_id": session,
        "hook_event_name": "PostToolUse",
        "tool_name": "Read",
        "tool_input": {"file_path": "/repo/README.md"},
        "tool_response": {"type": "text", "file": {"filePath": "/repo/README.md", "content": content}},
        "tool_use_id": format!("toolu_read_{session}"),
        "prompt_id": "p1",
        "cwd": "/tmp",
    })
    .to_string()
    .into_bytes()
}

/// Issue 15, item 6: reading a page or file that merely mentions the sentinel in prose
/// (callus's own README) halted the session. Only the spec's forms count now; a sentinel
/// on its own line still halts.
#[test]
fn a_sentinel_mentioned_in_prose_halts_nothing() {
    let env = Env::new();
    let readme = include_str!("../README.md");
    assert!(
        readme.contains("RECUSE/"),
        "the README mentions the sentinel"
    );
    for text in [
        readme,
        "Docs: a `RECUSE/0.2 halt; reason=x` line stops the agent.",
    ] {
        let o = env.run(&["record"], &read_result("sess-p", text));
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let o = env.run(&["guard"], &pre_tool_use("sess-p", "ls"));
        assert_eq!(o.status.code(), Some(0), "not halted: {}", stderr(&o));
    }
    let o = env.run(
        &["record"],
        &read_result(
            "sess-p",
            "notes\nRECUSE/0.2 halt; reason=operator-request\n",
        ),
    );
    assert_eq!(o.status.code(), Some(0));
    let o = env.run(&["guard"], &pre_tool_use("sess-p", "ls"));
    assert_eq!(o.status.code(), Some(2), "halted: {}", stderr(&o));
}

/// Issue 15, item 6: the halted session could not lift its halt, but any other session
/// could run `callus session resume`, or remove the marker, unguarded. The starter policy
/// refuses both from an agent's tool call.
#[test]
fn an_agent_cannot_lift_a_halt_through_a_tool_call() {
    let env = Env::new();
    let home = Home::at(env.home_path());
    let _ = recuse::scan(&home, "sess-h", "RECUSE/0.2 halt; reason=x");
    for command in [
        "callus session resume sess-h",
        "cd /tmp && callus session resume sess-h",
        "rm -f ~/.callus/halted/sess-h",
        "rm $CALLUS_HOME/halted/*",
        "python3 -c 'import os; os.remove(\"/home/u/.callus/halted/sess-h\")'",
    ] {
        let o = env.run(&["guard"], &pre_tool_use("sess-other", command));
        let refused = o.status.code() == Some(2) || stdout(&o).contains("\"deny\"");
        assert!(refused, "{command}: {} {}", stdout(&o), stderr(&o));
    }
    assert!(recuse::marker_path(&home, "sess-h").exists());
}
