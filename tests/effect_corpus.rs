//! Issue 14's corpus, organised by kind: every command in
//! `tests/corpus/effects_dangerous.jsonl` (git's global options and abbreviations, other
//! ways to discard work, delete targets in other spellings, fetched or decoded code,
//! indirection and deep nesting, the control plane through every path tool, disks and
//! permissions, secrets and remote shells, SQL piped into a client) must be denied or
//! blocked by the starter policy, and no command in `effects_benign.jsonl` may be. Each
//! line runs through the real `callus guard`; a failure lists the misses by kind.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::common::{Env, stdout};

fn load(name: &str) -> Vec<Value> {
    let path = format!("{}/tests/corpus/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| serde_json::from_str(l).unwrap_or_else(|e| panic!("{path}:{}: {e}", i + 1)))
        .collect()
}

/// "block", "deny", "nudge" or "allow" for one entry, run in the test repository.
fn decide(env: &Env, entry: &Value) -> String {
    let tool = entry["tool"].as_str().unwrap();
    let input = match entry.get("command") {
        Some(c) => json!({ "command": c }),
        None => entry["input"].clone(),
    };
    crate::common::guard_decision(env, tool, &input)
}

/// Run every entry; returns the failures grouped by kind, and the count per kind.
fn run(name: &str, want_stop: bool) -> (BTreeMap<String, Vec<String>>, BTreeMap<String, usize>) {
    let env = Env::new();
    let mut failures: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for e in load(name) {
        let kind = e["kind"].as_str().unwrap_or("?").to_string();
        *counts.entry(kind.clone()).or_default() += 1;
        let d = decide(&env, &e);
        let stopped = d == "block" || d == "deny";
        if stopped != want_stop {
            let what = e.get("command").cloned().unwrap_or_else(|| e.clone());
            failures
                .entry(kind)
                .or_default()
                .push(format!("{d}: {what}"));
        }
    }
    (failures, counts)
}

fn report(failures: &BTreeMap<String, Vec<String>>, counts: &BTreeMap<String, usize>) -> String {
    counts
        .iter()
        .map(|(k, n)| {
            let missed = failures.get(k).map_or(&[][..], Vec::as_slice);
            format!("{k}: {}/{n}\n  {}", n - missed.len(), missed.join("\n  "))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_dangerous_kind_is_stopped() {
    let (failures, counts) = run("effects_dangerous.jsonl", true);
    let total: usize = counts.values().sum();
    assert!(total >= 250, "corpus too small: {total}");
    assert!(counts.len() >= 9, "kinds: {counts:?}");
    assert!(
        failures.is_empty(),
        "dangerous commands got through:\n{}",
        report(&failures, &counts)
    );
}

#[test]
fn no_benign_command_of_any_kind_is_stopped() {
    let (failures, counts) = run("effects_benign.jsonl", false);
    let total: usize = counts.values().sum();
    assert!(total >= 100, "corpus too small: {total}");
    assert!(
        failures.is_empty(),
        "benign commands refused:\n{}",
        report(&failures, &counts)
    );
}

/// A hook payload for a Bash command run in the test repository.
fn bash_payload(env: &Env, command: &str) -> Vec<u8> {
    json!({
        "session_id": "limits",
        "hook_event_name": "PreToolUse",
        "cwd": env.repo_path(),
        "tool_name": "Bash",
        "tool_input": { "command": command },
        "tool_use_id": "t",
    })
    .to_string()
    .into_bytes()
}

#[test]
fn a_command_past_the_model_limits_is_refused_in_both_fail_modes_and_audited() {
    let deep = format!("eval {}ls{}", "\"$(".repeat(20), ")\"".repeat(20));
    let wrappers = format!("{}ls", "env ".repeat(300));
    for (mode, command, limit) in [
        ("open", deep.as_str(), "nesting-depth"),
        ("closed", deep.as_str(), "nesting-depth"),
        ("open", wrappers.as_str(), "wrappers"),
        ("closed", wrappers.as_str(), "wrappers"),
    ] {
        let mut env = Env::new();
        env.var("CALLUS_FAIL", mode);
        let out = env.run(&["guard"], &bash_payload(&env, command));
        let err = crate::common::stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{mode} {limit}: {err}");
        assert!(
            err.contains(limit),
            "{mode}: the refusal names the limit: {err}"
        );
        let records = crate::guard::audit_records(&env);
        assert!(
            records
                .iter()
                .any(|r| r.to_string().contains(&format!("limit-{limit}"))),
            "{mode}: the refusal is in the audit chain: {records:?}"
        );
    }
}

#[test]
fn guard_test_shows_the_effect_and_the_target_class() {
    let env = Env::new();
    let repo = env.repo_path().to_str().unwrap().to_string();
    let out = env.run(
        &["guard", "test", "--cwd", &repo, "--", "cd / && rm -rf usr"],
        b"",
    );
    let text = stdout(&out);
    assert!(text.contains("decision: block"), "{text}");
    assert!(
        text.contains("because: deletes /usr recursively: a system directory"),
        "{text}"
    );
    let out = env.run(
        &[
            "guard",
            "test",
            "--json",
            "--",
            "git -C . push -f origin main",
        ],
        b"",
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["decision"], "deny");
    assert_eq!(
        v["effects"][0]["line"],
        "pushes mode=force remote=origin ref=main"
    );
    // A benign command shows no effect and no decision.
    let out = env.run(&["guard", "test", "--", "cd build && rm -rf ."], b"");
    let text = stdout(&out);
    assert!(text.contains("decision: allow"), "{text}");
    assert!(
        text.contains("effect:   deletes"),
        "the effect is still shown: {text}"
    );
}

#[test]
fn a_container_delete_is_explained_on_the_host_path_and_crontab_removal_is_denied() {
    let env = Env::new();
    let out = env.run(
        &[
            "guard",
            "test",
            "--",
            "docker run --rm -v /:/host alpine rm -rf /host",
        ],
        b"",
    );
    let text = stdout(&out);
    assert!(text.contains("decision: block"), "{text}");
    assert!(
        text.contains("deletes / recursively: the filesystem root"),
        "the delete is shown on the host's path: {text}"
    );
    // The same delete without the mount is the container's own.
    let out = env.run(
        &["guard", "test", "--", "docker run --rm alpine rm -rf /"],
        b"",
    );
    assert!(stdout(&out).contains("decision: allow"), "{}", stdout(&out));
    let out = env.run(&["guard"], &bash_payload(&env, "crontab -r"));
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    let hook = &answer["hookSpecificOutput"];
    assert_eq!(hook["permissionDecision"], "deny", "{answer}");
    assert!(
        hook["permissionDecisionReason"]
            .as_str()
            .is_some_and(|r| r.contains("crontab -l > cron.bak")),
        "the refusal says what to do instead: {answer}"
    );
    for benign in ["crontab -l > cron.bak", "crontab jobs.txt"] {
        let decision = crate::common::guard_decision(&env, "Bash", &json!({ "command": benign }));
        assert_eq!(decision, "allow", "{benign}");
    }
}
