//! Payload samples of every host, as each sends them, for the detection tests: every
//! sample is recognised as its own host and claimed by no other (a test per pair).
//! Sources: Claude Code and Codex measured (DESIGN.md; Claude Code 2.1.328, Codex 0.169);
//! Gemini CLI from `createBaseInput`/`fireBeforeToolEvent` in the 0.61.0 npm bundle;
//! Cursor from cursor.com/docs/agent/hooks ("Common schema", `preToolUse`, `sessionStart`,
//! `beforeShellExecution`); Copilot CLI from the docs.github.com CLI hooks reference
//! ("camelCase input" of `preToolUse`, `postToolUse`, `sessionStart`, `agentStop`).

use serde_json::{Map, Value, json};

use super::{HOSTS, Host, detect};

fn obj(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => unreachable!("samples are objects"),
    }
}

/// `(host, payload)` samples: tool events and session events of each host.
// a data table, one payload per entry as the host sends it: splitting it would scatter the
// samples without naming a step
#[allow(clippy::too_many_lines)]
pub(super) fn samples() -> Vec<(Host, Map<String, Value>)> {
    vec![
        (
            Host::ClaudeCode,
            obj(json!({
            "session_id": "s", "transcript_path": "/h/.claude/projects/p/s.jsonl", "cwd": "/r",
            "prompt_id": "p1", "permission_mode": "default", "hook_event_name": "PreToolUse",
            "tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "toolu_1"})),
        ),
        (
            Host::ClaudeCode,
            obj(json!({
            "session_id": "s", "transcript_path": "/h/.claude/projects/p/s.jsonl", "cwd": "/r",
            "hook_event_name": "SessionStart", "source": "startup"})),
        ),
        (
            Host::Codex,
            obj(json!({
            "session_id": "s", "turn_id": "t1", "cwd": "/r", "hook_event_name": "PreToolUse",
            "model": "gpt-5-codex", "permission_mode": "default", "tool_name": "Bash",
            "tool_input": {"command": "ls"}, "tool_use_id": "call_1"})),
        ),
        (
            Host::Codex,
            obj(json!({
            "session_id": "s", "cwd": "/r", "hook_event_name": "SessionStart",
            "transcript_path": "/h/.codex/sessions/2026/12/01/rollout-2026-12-01T00-00-00-x.jsonl"})),
        ),
        (
            Host::Gemini,
            obj(json!({
            "session_id": "s", "transcript_path": "/h/.gemini/tmp/abc/chats/session-1.json",
            "cwd": "/r", "hook_event_name": "BeforeTool", "timestamp": "2026-12-01T20:00:00.000Z",
            "tool_name": "run_shell_command", "tool_input": {"command": "ls"}})),
        ),
        (
            Host::Gemini,
            obj(json!({
            "session_id": "s", "transcript_path": "", "cwd": "/r",
            "hook_event_name": "SessionStart", "timestamp": "2026-12-01T20:00:00.000Z",
            "source": "startup"})),
        ),
        (
            Host::Cursor,
            obj(json!({
            "conversation_id": "c", "generation_id": "g", "model": "m",
            "hook_event_name": "preToolUse", "cursor_version": "2.3.1",
            "workspace_roots": ["/r"], "user_email": null, "transcript_path": null,
            "tool_name": "Shell", "tool_input": {"command": "ls", "working_directory": "/r"},
            "tool_use_id": "abc", "cwd": "/r"})),
        ),
        (
            Host::Cursor,
            obj(json!({
            "conversation_id": "c", "generation_id": "g", "hook_event_name": "sessionStart",
            "cursor_version": "2.3.1", "workspace_roots": ["/r"], "session_id": "c",
            "is_background_agent": false, "composer_mode": "agent"})),
        ),
        (
            Host::Cursor,
            obj(json!({
            "conversation_id": "c", "generation_id": "g", "hook_event_name": "beforeShellExecution",
            "workspace_roots": ["/r"], "command": "ls", "cwd": "/r", "sandbox": false})),
        ),
        (
            Host::Copilot,
            obj(json!({
            "sessionId": "s", "timestamp": 1_764_619_200_000_i64, "cwd": "/r",
            "toolName": "bash", "toolArgs": "{\"command\":\"ls\"}"})),
        ),
        (
            Host::Copilot,
            obj(json!({
            "sessionId": "s", "timestamp": 1_764_619_200_000_i64, "cwd": "/r",
            "toolName": "bash", "toolArgs": {"command": "ls"},
            "toolResult": {"resultType": "success", "textResultForLlm": "ok"}})),
        ),
        (
            Host::Copilot,
            obj(json!({
            "sessionId": "s", "timestamp": 1_764_619_200_000_i64, "cwd": "/r",
            "source": "startup", "initialPrompt": "hi"})),
        ),
        (
            Host::Copilot,
            obj(json!({
            "sessionId": "s", "timestamp": 1_764_619_200_000_i64, "cwd": "/r",
            "transcriptPath": "/h/.copilot/session-state/s.jsonl", "stopReason": "end_turn"})),
        ),
    ]
}

#[test]
fn every_sample_is_its_own_host_and_claimed_by_no_other() {
    for (host, raw) in samples() {
        assert_eq!(detect(&raw, |_| false), host, "{raw:?}");
        for other in HOSTS.iter().filter(|s| s.host != host) {
            assert!(
                !(other.claims_payload)(&raw),
                "{} claims a {} payload: {raw:?}",
                other.slug,
                host.slug()
            );
        }
    }
}

#[test]
fn every_pair_of_hosts_is_told_apart_by_the_payload() {
    let all = samples();
    for a in HOSTS {
        for b in HOSTS.iter().filter(|b| b.host != a.host) {
            let mine: Vec<_> = all.iter().filter(|(h, _)| *h == a.host).collect();
            assert!(!mine.is_empty(), "no sample of {}", a.slug);
            for (_, raw) in mine {
                // The payload outranks every other host's environment markers, except where
                // nothing in it is the host's own (Claude Code's session events).
                let claimed = HOSTS.iter().any(|s| (s.claims_payload)(raw));
                let with_b_env = detect(raw, |k| b.env_markers.contains(&k));
                if claimed {
                    assert_eq!(
                        with_b_env, a.host,
                        "{} payload, {} env: {raw:?}",
                        a.slug, b.slug
                    );
                }
            }
        }
    }
}

#[test]
fn the_payload_is_read_in_callus_terms_for_every_host() {
    let read =
        |raw: &Map<String, Value>| super::wire::parse(&serde_json::to_vec(raw).unwrap()).unwrap();
    for (host, raw) in samples() {
        let e = read(&raw);
        assert_eq!(e.host, host);
        if e.kind().is_tool_call() {
            assert_eq!(e.tool_name, "Bash", "{raw:?}");
            assert_eq!(e.tool_input["command"], "ls", "{raw:?}");
            assert!(!e.session_id.is_empty(), "{raw:?}");
        }
    }
    let copilot_post = &samples()[10].1;
    assert_eq!(read(copilot_post).kind(), super::Event::PostToolUse);
    let copilot_stop = &samples()[12].1;
    assert_eq!(read(copilot_stop).kind(), super::Event::Stop);
    let cursor_mcp = obj(json!({"conversation_id": "c", "generation_id": "g",
        "hook_event_name": "preToolUse", "tool_name": "MCP:query", "tool_input": "{\"q\":1}"}));
    let e = read(&cursor_mcp);
    assert_eq!(
        (e.tool_name.as_str(), &e.tool_input["q"]),
        ("mcp__query", &json!(1))
    );
}

#[test]
fn a_gemini_chat_log_names_its_session_on_its_first_line() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("session-2026-12-01T20-00-gem12345.jsonl");
    std::fs::write(
        &log,
        "{\"sessionId\":\"gem12345-full-id\",\"projectHash\":\"h\"}\n{\"id\":\"m\"}\n",
    )
    .unwrap();
    let gemini = Host::Gemini.spec();
    assert_eq!(
        (gemini.session_of_log)(&log),
        Some("gem12345-full-id".into())
    );
    let other = dir.path().join("logs.jsonl");
    std::fs::write(&other, "{\"sessionId\":\"x\"}\n").unwrap();
    assert_eq!((gemini.session_of_log)(&other), None);
}
