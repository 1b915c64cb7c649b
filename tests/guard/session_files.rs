//! The session-state conditions through the real binary, answered by the hook at call time
//! from the rows the recorder stored and the file system: `not_read_in_session` only for a
//! file that exists (a Write creating a file needs no Read), and `changed_since_read` when
//! a shell command of the session wrote the file after its last Read, or its modification
//! time is newer than that Read.

use std::time::{Duration, SystemTime};

use serde_json::{Value, json};

use crate::common::{Env, stderr};

fn rules(env: &Env, rules: &Value) {
    env.write_home("rules.json", &json!({ "rules": rules }).to_string());
}

/// `callus guard` on one Claude Code call of session `sess-files`: the host's decision.
fn decide(env: &Env, tool: &str, input: &Value) -> &'static str {
    let payload = json!({
        "session_id": "sess-files", "hook_event_name": "PreToolUse", "prompt_id": "p",
        "cwd": env.repo_path(), "tool_name": tool, "tool_input": input, "tool_use_id": "t1",
    });
    let out = env.run(&["guard"], payload.to_string().as_bytes());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    if out.stdout.is_empty() {
        return "allow";
    }
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    if v["hookSpecificOutput"]["permissionDecision"] == "deny" {
        "deny"
    } else {
        "nudge"
    }
}

/// Record a successful call of session `sess-files` through the recorder hook.
fn record(env: &Env, id: &str, tool: &str, input: &Value, response: &Value) {
    let post = json!({
        "session_id": "sess-files", "hook_event_name": "PostToolUse", "prompt_id": "p",
        "cwd": env.repo_path(), "tool_name": tool, "tool_input": input,
        "tool_use_id": id, "tool_response": response,
    });
    let out = env.run(&["record"], post.to_string().as_bytes());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // The next event starts in a later millisecond.
    std::thread::sleep(Duration::from_millis(5));
}

fn read(env: &Env, id: &str, path: &str) {
    let response = json!({"type": "text", "file": {"filePath": path, "content": "x\n",
        "numLines": 1, "startLine": 1, "totalLines": 1}});
    record(env, id, "Read", &json!({"file_path": path}), &response);
}

fn touch(path: &std::path::Path, at: SystemTime) {
    let f = std::fs::File::options().write(true).open(path).unwrap();
    f.set_modified(at).unwrap();
}

#[test]
fn not_read_in_session_leaves_a_write_creating_a_file_alone() {
    let env = Env::new();
    rules(
        &env,
        &json!([{"id": "read-first", "tool": "{Edit,Write}", "field": "file_path",
            "action": "deny", "message": "Read the file before writing it",
            "when": {"not_read_in_session": "file_path"}}]),
    );
    let old = env.write_repo("src/old.rs", "fn main() {}\n");
    let old = old.display().to_string();
    let new = env.repo_path().join("src/new.rs").display().to_string();
    let write = |p: &str| json!({"file_path": p, "content": "x"});
    read(&env, "r-other", "/elsewhere/x.rs");
    assert_eq!(decide(&env, "Write", &write(&new)), "allow", "a new file");
    assert_eq!(
        decide(&env, "Write", &write(&old)),
        "deny",
        "an existing file"
    );
    // The session's own Write counts as seen: an Edit of the file it created is fine.
    record(
        &env,
        "w-new",
        "Write",
        &write(&new),
        &json!({"type": "create", "filePath": new}),
    );
    std::fs::write(&new, "x").unwrap();
    let edit = json!({"file_path": new, "old_string": "x", "new_string": "y"});
    assert_eq!(decide(&env, "Edit", &edit), "allow");
    read(&env, "r-old", &old);
    assert_eq!(decide(&env, "Write", &write(&old)), "allow", "read first");
}

#[test]
fn changed_since_read_follows_the_shell_writes_and_the_modification_time() {
    let env = Env::new();
    rules(
        &env,
        &json!([{"id": "read-again", "tool": "Edit", "field": "file_path",
            "action": "deny", "message": "the file changed since you read it: Read it again",
            "when": {"changed_since_read": "file_path"}}]),
    );
    let file = env.write_repo("src/a.rs", "fn main() {}\n");
    let path = file.display().to_string();
    let edit = json!({"file_path": path, "old_string": "a", "new_string": "b"});
    let hour_ago = SystemTime::now() - Duration::from_secs(3600);
    touch(&file, hour_ago);
    // No store yet: the guard cannot tell, and fails toward the rule.
    assert_eq!(decide(&env, "Edit", &edit), "deny");
    read(&env, "r0", "/elsewhere/a.rs");
    assert_eq!(
        decide(&env, "Edit", &edit),
        "allow",
        "never read: not this condition"
    );
    read(&env, "r1", &path);
    assert_eq!(
        decide(&env, "Edit", &edit),
        "allow",
        "unchanged since the Read"
    );
    // Changed from outside (an editor, a formatter): newer than the Read.
    touch(&file, SystemTime::now() + Duration::from_secs(60));
    assert_eq!(decide(&env, "Edit", &edit), "deny");
    touch(&file, hour_ago);
    read(&env, "r2", &path);
    assert_eq!(decide(&env, "Edit", &edit), "allow");
    // The session's own shell command wrote it after the Read (whatever its mtime says).
    let bash = json!({"command": "sed -i 's/main/start/' src/a.rs"});
    record(
        &env,
        "b1",
        "Bash",
        &bash,
        &json!({"stdout": "", "stderr": "", "interrupted": false}),
    );
    touch(&file, hour_ago);
    assert_eq!(
        decide(&env, "Edit", &edit),
        "deny",
        "written by the session's shell"
    );
    read(&env, "r3", &path);
    assert_eq!(decide(&env, "Edit", &edit), "allow", "read again");
    // Another file, and a file not there at all, changed nothing.
    let other = json!({"file_path": env.repo_path().join("src/b.rs"), "old_string": "a",
        "new_string": "b"});
    assert_eq!(decide(&env, "Edit", &other), "allow");
}
