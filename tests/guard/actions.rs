//! The hook's exact output and exit code for each action, on both hosts; events other than
//! `PreToolUse`; `CALLUS_DRYRUN`; and what each decision leaves in the audit chain.

use serde_json::json;

use super::{
    ACTIONS_RULES, HOSTS, Host, audit_records, bash, deny_json, guard, nudge_json, payload,
    starter_deny_json,
};
use crate::common::{Env, stderr, stdout};

fn env_with_actions() -> Env {
    let env = Env::new();
    env.write_home("rules.json", ACTIONS_RULES);
    env
}

#[test]
fn nudge_prints_additional_context_and_exits_0_on_both_hosts() {
    for host in HOSTS {
        let env = env_with_actions();
        let out = guard(&env, &bash(&env, host, "nudgeme --now"));
        assert_eq!(out.status.code(), Some(0), "{host:?}");
        assert_eq!(
            stdout(&out),
            nudge_json("callus:\n- Use scripts/wrapper.sh instead. [rule t-nudge]"),
            "{host:?}: identical messages are delivered once"
        );
        assert_eq!(stderr(&out), "", "{host:?}");
        let records = audit_records(&env);
        assert_eq!(records.len(), 1);
        let r = &records[0];
        assert_eq!(r["kind"], "decision");
        assert_eq!(r["host"], host.slug());
        assert_eq!(r["decision"], "nudge");
        assert_eq!(r["winner"], json!(null));
        assert_eq!(
            r["fired"],
            json!([
                {"id": "t-nudge", "layer": "user", "file": env.home_path().join("rules.json"), "action": "nudge"},
                {"id": "t-nudge-same", "layer": "user", "file": env.home_path().join("rules.json"), "action": "nudge"},
            ])
        );
        assert_eq!(
            r["tool_use_id"],
            if host == Host::Claude {
                "toolu_01"
            } else {
                "call_01"
            }
        );
        assert_eq!(r["cwd"], json!(env.repo_path()));
        assert_eq!(r["acs"]["decision"], "allow");
        assert_eq!(r["acs"]["warnings"][0]["reason"], "callus:t-nudge");
    }
}

#[test]
fn several_nudges_are_delivered_in_order() {
    for host in HOSTS {
        let env = env_with_actions();
        let out = guard(&env, &bash(&env, host, "nudgeme twice"));
        assert_eq!(out.status.code(), Some(0));
        assert_eq!(
            stdout(&out),
            nudge_json(
                "callus:\n- Use scripts/wrapper.sh instead. [rule t-nudge]\n- Pass --twice explicitly. [rule t-nudge-2]"
            ),
            "{host:?}"
        );
    }
}

#[test]
fn deny_prints_the_permission_decision_and_exits_0_on_both_hosts() {
    for host in HOSTS {
        let env = env_with_actions();
        let out = guard(&env, &bash(&env, host, "denyme please; nudgeme"));
        assert_eq!(out.status.code(), Some(0), "{host:?}");
        assert_eq!(
            stdout(&out),
            deny_json("callus denied this call (rule t-deny): Run it through scripts/safe.sh."),
            "{host:?}: a deny drops the nudges"
        );
        assert_eq!(stderr(&out), "");
        let r = &audit_records(&env)[0];
        assert_eq!(
            (r["decision"].as_str(), r["winner"].as_str()),
            (Some("deny"), Some("t-deny"))
        );
        assert_eq!(
            r["acs"],
            json!({"decision": "deny", "reason": "callus:t-deny", "message": "Run it through scripts/safe.sh."})
        );
    }
}

#[test]
fn block_exits_2_with_the_reason_on_stderr_on_both_hosts() {
    for host in HOSTS {
        let env = env_with_actions();
        let out = guard(&env, &bash(&env, host, "denyme && blockme && nudgeme"));
        assert_eq!(out.status.code(), Some(2), "{host:?}");
        assert_eq!(stdout(&out), "", "{host:?}");
        assert_eq!(
            stderr(&out),
            "BLOCKED by callus (rule t-block): Never run this; query the read replica.\n"
        );
        let r = &audit_records(&env)[0];
        assert_eq!(
            (r["decision"].as_str(), r["winner"].as_str()),
            (Some("block"), Some("t-block"))
        );
        assert_eq!(r["fired"].as_array().unwrap().len(), 4);
    }
}

#[test]
fn allow_prints_nothing_and_opens_no_store() {
    for host in HOSTS {
        let env = env_with_actions();
        let out = guard(&env, &bash(&env, host, "ls -la src/"));
        assert_eq!(out.status.code(), Some(0));
        assert_eq!((stdout(&out).as_str(), stderr(&out).as_str()), ("", ""));
        assert!(
            !env.db().exists(),
            "{host:?}: a quiet call must not open the store"
        );
    }
}

#[test]
fn monitor_is_silent_but_audited() {
    for host in HOSTS {
        let env = env_with_actions();
        let out = guard(&env, &bash(&env, host, "watchme"));
        assert_eq!(out.status.code(), Some(0));
        assert_eq!((stdout(&out).as_str(), stderr(&out).as_str()), ("", ""));
        let r = &audit_records(&env)[0];
        assert_eq!(r["decision"], "allow");
        assert_eq!(r["fired"][0]["action"], "monitor");
        assert_eq!(r["acs"], json!({"decision": "allow"}));
    }
}

#[test]
fn never_prints_allow() {
    let env = env_with_actions();
    for cmd in ["nudgeme", "denyme", "blockme", "watchme", "ls"] {
        for host in HOSTS {
            let out = guard(&env, &bash(&env, host, cmd));
            assert!(!stdout(&out).contains("allow"), "{cmd}: {}", stdout(&out));
        }
    }
}

#[test]
fn codex_apply_patch_is_matched_on_the_patch_text() {
    let env = Env::new();
    let patch = |file: &str| {
        payload(
            Host::Codex,
            "apply_patch",
            &json!({"command": format!("*** Begin Patch\n*** Add File: {file}\n+KEY=1\n*** End Patch")}),
            env.repo_path(),
        )
        .to_string()
    };
    // The starter's pinned deny reads the file names out of the patch text.
    let out = guard(&env, patch(".env").as_bytes());
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        stdout(&out),
        starter_deny_json(&env, "apply-patch-writes-secret-file")
    );
    let r = &audit_records(&env)[0];
    assert_eq!(r["tool"], "apply_patch");
    assert_eq!(r["winner"], "apply-patch-writes-secret-file");
    let out = guard(&env, patch(".env.example").as_bytes());
    assert_eq!((out.status.code(), stdout(&out).as_str()), (Some(0), ""));
    assert_eq!(audit_records(&env).len(), 1, "the template fired nothing");
}

#[test]
fn events_other_than_pre_tool_use_are_ignored() {
    let env = env_with_actions();
    for event in [
        "PostToolUse",
        "PostToolUseFailure",
        "UserPromptSubmit",
        "Stop",
    ] {
        let mut p = payload(
            Host::Claude,
            "Bash",
            &json!({"command": "blockme"}),
            env.repo_path(),
        );
        p["hook_event_name"] = json!(event);
        let out = guard(&env, p.to_string().as_bytes());
        assert_eq!(out.status.code(), Some(0), "{event}");
        assert_eq!(
            (stdout(&out).as_str(), stderr(&out).as_str()),
            ("", ""),
            "{event}"
        );
    }
    assert!(audit_records(&env).is_empty());
    // No event name at all (callusguard's fixtures) is decided as a pre-tool call.
    let mut p = payload(
        Host::Claude,
        "Bash",
        &json!({"command": "blockme"}),
        env.repo_path(),
    );
    p.as_object_mut().unwrap().remove("hook_event_name");
    assert_eq!(guard(&env, p.to_string().as_bytes()).status.code(), Some(2));
}

#[test]
fn dryrun_decides_and_audits_but_prints_nothing() {
    for host in HOSTS {
        let mut env = env_with_actions();
        env.var("CALLUS_DRYRUN", "1");
        for cmd in ["blockme", "denyme", "nudgeme"] {
            let out = guard(&env, &bash(&env, host, cmd));
            assert_eq!(out.status.code(), Some(0), "{cmd}");
            assert_eq!(
                (stdout(&out).as_str(), stderr(&out).as_str()),
                ("", ""),
                "{cmd}"
            );
        }
        let records = audit_records(&env);
        let decisions: Vec<_> = records
            .iter()
            .map(|r| r["decision"].as_str().unwrap())
            .collect();
        assert_eq!(decisions, ["block", "deny", "nudge"], "{host:?}");
        assert!(records.iter().all(|r| r["dryrun"] == true));
    }
}

#[test]
fn host_detection_follows_the_payload_over_the_environment() {
    let mut env = env_with_actions();
    // CLAUDECODE leaks into shells Claude spawns; a Codex payload is still Codex.
    env.var("CLAUDECODE", "1");
    guard(&env, &bash(&env, Host::Codex, "watchme"));
    // And a payload with neither marker under CODEX_HOME is Codex.
    let mut p = payload(
        Host::Claude,
        "Bash",
        &json!({"command": "watchme"}),
        env.repo_path(),
    );
    p.as_object_mut().unwrap().remove("prompt_id");
    let mut env2 = env_with_actions();
    env2.var("CODEX_HOME", "/nonexistent");
    guard(&env2, p.to_string().as_bytes());
    assert_eq!(audit_records(&env)[0]["host"], "codex");
    assert_eq!(audit_records(&env2)[0]["host"], "codex");
}
