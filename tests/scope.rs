//! Integration tests: `scope` — declare, verify, show and the hook, through the real binary.

use std::process::Output;

use serde_json::{Value, json};

use crate::common::{self, Env};

fn code(o: &Output) -> i32 {
    o.status.code().expect("exited")
}

/// Run and demand an exit code, showing both streams when it differs.
fn expect(env: &Env, args: &[&str], want: i32) -> Output {
    let o = env.run(args, b"");
    assert_eq!(
        code(&o),
        want,
        "callus {args:?}\nstdout: {}\nstderr: {}",
        common::stdout(&o),
        common::stderr(&o)
    );
    o
}

fn declare(env: &Env, run: &str, extra: &[&str]) -> Output {
    let mut args = vec!["scope", "declare", "--run-id", run];
    args.extend_from_slice(extra);
    expect(env, &args, 0)
}

fn verify_json(env: &Env, run: &str, want: i32) -> Value {
    common::json(&expect(
        env,
        &["scope", "verify", "--run-id", run, "--json"],
        want,
    ))
}

fn hook(env: &Env, payload: &Value) -> Output {
    env.run(&["scope", "hook"], payload.to_string().as_bytes())
}

fn repo(env: &Env) -> String {
    env.repo_path().to_string_lossy().into_owned()
}

fn pre_write(env: &Env, session: &str, tool: &str, rel: &str) -> Value {
    json!({
        "session_id": session, "prompt_id": "p1", "hook_event_name": "PreToolUse",
        "cwd": repo(env), "tool_name": tool, "tool_use_id": "toolu_1",
        "tool_input": {"file_path": env.repo_path().join(rel), "content": "x"},
    })
}

fn stop_claude(env: &Env, session: &str, active: bool) -> Value {
    json!({
        "session_id": session, "prompt_id": "p1", "hook_event_name": "Stop",
        "cwd": repo(env), "stop_hook_active": active, "last_assistant_message": "done",
    })
}

fn stop_codex(env: &Env, session: &str) -> Value {
    json!({
        "session_id": session, "turn_id": "t1", "hook_event_name": "Stop", "model": "gpt-5.5",
        "cwd": repo(env), "stop_hook_active": false, "last_assistant_message": "done",
    })
}

fn violation_paths(verdict: &Value) -> Vec<String> {
    verdict["evidence"]["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["path"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn in_scope_run_is_allowed_and_the_state_is_kept_for_show() {
    let env = Env::new();
    env.write_repo("src/lib.rs", "fn a() {}\n");
    let out = declare(
        &env,
        "job1",
        &["--create", "docs/**/*.md", "--modify", "src/*.rs"],
    );
    assert!(common::stdout(&out).contains("fingerprinted 1 file(s)"));
    env.write_repo("docs/guide/intro.md", "# hi\n");
    env.write_repo("src/lib.rs", "fn a() { b() }\n");
    let v = verify_json(&env, "job1", 0);
    assert_eq!(v["decision"], "allow");
    assert_eq!(v["reason"], "scope:clean");
    assert_eq!(v["evidence"]["counts"]["permitted"], 2);
    // ACS shape: nothing but these four keys at the top.
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["decision", "reason", "message", "evidence"]);
    // verify kept the state (callusguard deleted it): show works and has the verdict.
    let shown = common::json(&expect(&env, &["scope", "show", "job1", "--json"], 0));
    assert_eq!(shown["verdict"]["decision"], "allow");
    assert_eq!(shown["baseline"]["files"], 1);
    let table = common::stdout(&expect(&env, &["scope", "show", "job1"], 0));
    assert!(table.contains("allow"), "{table}");
    // Human output of verify.
    let o = expect(&env, &["scope", "verify", "--run-id", "job1"], 0);
    assert!(common::stdout(&o).starts_with("✓ callus scope: allow"));
}

#[test]
fn write_outside_the_declaration_is_denied_naming_the_path() {
    let env = Env::new();
    declare(&env, "job2", &["--create", "docs/*.md"]);
    env.write_repo("docs/a.md", "ok\n");
    env.write_repo("src/other.py", "print(1)\n");
    let o = expect(&env, &["scope", "verify", "--run-id", "job2"], 2);
    let text = common::stdout(&o);
    assert!(text.starts_with("✗ callus scope: deny"), "{text}");
    assert!(text.contains("src/other.py"), "{text}");
    let v = verify_json(&env, "job2", 2);
    assert_eq!(v["reason"], "scope:undeclared_write");
    assert_eq!(violation_paths(&v), ["src/other.py"]);
    assert_eq!(v["evidence"]["violations"][0]["rule"], "undeclared");
}

#[test]
fn modifying_a_file_declared_only_for_creation_is_denied() {
    let env = Env::new();
    env.write_repo("docs/a.md", "old\n");
    declare(&env, "job-c", &["--create", "docs/*.md"]);
    env.write_repo("docs/a.md", "new\n");
    let v = verify_json(&env, "job-c", 2);
    assert_eq!(violation_paths(&v), ["docs/a.md"]);
    assert_eq!(v["evidence"]["violations"][0]["kind"], "modify");
}

#[test]
fn forbidden_paths_are_denied_including_under_a_dot_directory() {
    let env = Env::new();
    env.write_repo(".claude/settings.json", "{}\n");
    env.write_repo("src/a.rs", "a\n");
    declare(
        &env,
        "job3",
        &[
            "--modify",
            "**",
            "--forbid",
            ".claude/**",
            "--forbid",
            "**/*.env",
        ],
    );
    env.write_repo(".claude/settings.json", "{\"hooks\": {}}\n");
    env.write_repo("config/prod.env", "X=1\n");
    env.write_repo("src/a.rs", "b\n");
    let v = verify_json(&env, "job3", 2);
    assert_eq!(v["reason"], "scope:forbidden_path");
    // Report order: created, then deleted, then modified.
    assert_eq!(
        violation_paths(&v),
        ["config/prod.env", ".claude/settings.json"]
    );
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .contains(".claude/settings.json")
    );
    // git internals are not fingerprinted by default: churn there is not a write.
    assert_eq!(v["evidence"]["counts"]["changed"], 3);
}

#[test]
fn git_internals_are_skipped_but_other_dot_directories_are_seen() {
    let env = Env::new();
    declare(&env, "job-git", &["--create", "src/**"]);
    env.write_repo(".git/index", "churn");
    env.write_repo(".github/workflows/ci.yml", "on: push\n");
    let v = verify_json(&env, "job-git", 2);
    assert_eq!(violation_paths(&v), [".github/workflows/ci.yml"]);
}

#[test]
fn deletions_need_a_delete_declaration() {
    let env = Env::new();
    env.write_repo("tmp/scratch.txt", "x\n");
    env.write_repo("src/keep.rs", "x\n");
    declare(&env, "job4", &["--modify", "src/**", "--delete", "tmp/*"]);
    std::fs::remove_file(env.repo_path().join("tmp/scratch.txt")).unwrap();
    assert_eq!(verify_json(&env, "job4", 0)["decision"], "allow");
    // modify does not cover deleting.
    std::fs::remove_file(env.repo_path().join("src/keep.rs")).unwrap();
    let v = verify_json(&env, "job4", 2);
    assert_eq!(v["reason"], "scope:undeclared_delete");
    assert_eq!(violation_paths(&v), ["src/keep.rs"]);
    assert_eq!(v["evidence"]["violations"][0]["kind"], "delete");
}

#[test]
fn a_write_made_through_bash_is_seen() {
    let env = Env::new();
    env.write_repo("src/app.py", "x = 1\n");
    declare(&env, "job5", &["--modify", "src/app.py"]);
    // The agent's shell, not a Write tool: a heredoc and an in-place edit.
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg("cat > notes.txt <<'EOF'\nstray\nEOF\nsed -i 's/1/2/' src/app.py")
        .current_dir(env.repo_path())
        .status()
        .unwrap();
    assert!(status.success());
    let v = verify_json(&env, "job5", 2);
    assert_eq!(violation_paths(&v), ["notes.txt"]);
    assert_eq!(v["evidence"]["permitted"][0]["path"], "src/app.py");
    assert_eq!(v["evidence"]["permitted"][0]["kind"], "modify");
}

#[test]
fn a_check_failing_before_the_run_does_not_fail_it_but_a_new_finding_does() {
    let env = Env::new();
    env.write_repo("src/a.py", "x = 1\n# FIXME old debt\n");
    // A "linter": grep prints path:line:text and exits 0 on findings, 1 on none.
    declare(
        &env,
        "job6",
        &[
            "--modify",
            "src/**",
            "--create",
            "src/**",
            "--check",
            "fixme=grep -Hn FIXME src/*.py",
        ],
    );
    // The old finding moves to another line: not new.
    env.write_repo("src/a.py", "x = 1\ny = 2\nz = 3\n# FIXME old debt\n");
    let v = verify_json(&env, "job6", 0);
    assert_eq!(v["decision"], "allow", "{v:#}");
    assert_eq!(v["evidence"]["counts"]["new_findings"], 0);
    // A new one appears: deny, and the report shows it.
    env.write_repo("src/b.py", "# FIXME new shortcut\n");
    let v = verify_json(&env, "job6", 2);
    assert_eq!(v["reason"], "scope:new_errors");
    let new = &v["evidence"]["new_findings"]["fixme"];
    assert_eq!(new.as_array().unwrap().len(), 1);
    assert_eq!(new[0]["path"], "src/b.py");
    let text = common::stdout(&expect(&env, &["scope", "verify", "--run-id", "job6"], 2));
    assert!(
        text.contains("fixme: src/b.py:1:# FIXME new shortcut"),
        "{text}"
    );
}

#[test]
fn a_check_that_starts_failing_silently_is_a_new_finding() {
    let env = Env::new();
    env.write_repo("VERSION", "1\n");
    declare(
        &env,
        "job6b",
        &["--delete", "VERSION", "--check", "version=test -f VERSION"],
    );
    assert_eq!(verify_json(&env, "job6b", 0)["decision"], "allow");
    std::fs::remove_file(env.repo_path().join("VERSION")).unwrap();
    let v = verify_json(&env, "job6b", 2);
    assert_eq!(v["reason"], "scope:new_errors");
}

#[test]
fn a_check_that_cannot_run_degrades_instead_of_blaming_the_run() {
    let env = Env::new();
    let o = declare(
        &env,
        "job6c",
        &["--create", "a", "--check", "lint=no-such-linter-xyz ."],
    );
    assert!(common::stderr(&o).contains("did not run"));
    let v = verify_json(&env, "job6c", 0);
    assert_eq!(v["decision"], "warn");
    assert_eq!(v["reason"], "scope:check_command_failed");
    assert_eq!(v["evidence"]["degraded"], true);
}

#[test]
fn stop_hook_refuses_on_every_stop_until_the_stray_write_is_reverted() {
    let env = Env::new();
    declare(&env, "job7", &["--create", "docs/**"]);
    // A stray write made through Bash (no PreToolUse would have caught it).
    env.write_repo("src/via_bash.py", "oops\n");
    let o = hook(&env, &stop_claude(&env, "s1", false));
    assert_eq!(code(&o), 2, "{}", common::stderr(&o));
    assert!(common::stderr(&o).contains("src/via_bash.py"));
    assert!(common::stdout(&o).is_empty());
    // The retry carries stop_hook_active: it is verified again, not waved through.
    let o = hook(&env, &stop_claude(&env, "s1", true));
    assert_eq!(code(&o), 2);
    assert!(common::stderr(&o).contains("src/via_bash.py"));
    // The agent reverts; the next Stop is accepted silently.
    std::fs::remove_file(env.repo_path().join("src/via_bash.py")).unwrap();
    std::fs::remove_dir(env.repo_path().join("src")).unwrap();
    let o = hook(&env, &stop_claude(&env, "s1", true));
    assert_eq!(code(&o), 0, "{}", common::stderr(&o));
    assert!(common::stdout(&o).is_empty() && common::stderr(&o).is_empty());
    let shown = common::json(&expect(&env, &["scope", "show", "job7", "--json"], 0));
    assert_eq!(shown["verdict"]["decision"], "allow");
    assert_eq!(shown["session"], "s1");
    assert_eq!(shown["stop_refusals"], 0);
}

#[test]
fn stop_hook_on_codex_blocks_with_decision_json() {
    let env = Env::new();
    declare(&env, "job8", &["--create", "docs/**"]);
    env.write_repo("src/x.py", "oops\n");
    let o = hook(&env, &stop_codex(&env, "c1"));
    assert_eq!(code(&o), 0);
    let out = common::json(&o);
    assert_eq!(out["decision"], "block");
    assert!(out["reason"].as_str().unwrap().contains("src/x.py"));
}

#[test]
fn stop_hook_warnings_reach_the_user_as_system_message() {
    let env = Env::new();
    // Forbid-only: other writes are not violations but need a person (escalate).
    declare(&env, "job9", &["--forbid", ".claude/**"]);
    env.write_repo("README.md", "hi\n");
    let o = hook(&env, &stop_claude(&env, "s9", false));
    assert_eq!(code(&o), 0);
    let out = common::json(&o);
    assert!(out["systemMessage"].as_str().unwrap().contains("escalate"));
}

#[test]
fn stop_refusals_are_capped_so_codex_cannot_loop_forever() {
    let mut env = Env::new();
    env.var("CALLUS_SCOPE_MAX_STOP_REFUSALS", "2");
    declare(&env, "job10", &["--create", "docs/**"]);
    env.write_repo("stray.txt", "x\n");
    for _ in 0..2 {
        assert_eq!(
            common::json(&hook(&env, &stop_codex(&env, "c2")))["decision"],
            "block"
        );
    }
    let out = common::json(&hook(&env, &stop_codex(&env, "c2")));
    assert!(out.get("decision").is_none());
    assert!(
        out["systemMessage"]
            .as_str()
            .unwrap()
            .contains("still violates")
    );
    // The run itself is still in violation.
    verify_json(&env, "job10", 2);
}

#[test]
fn pre_tool_use_refuses_undeclared_forbidden_and_outside_writes() {
    let env = Env::new();
    env.write_repo("docs/old.md", "old\n");
    declare(
        &env,
        "job11",
        &["--create", "docs/**/*.md", "--forbid", "**/*.env"],
    );
    let deny_reason = |o: &Output| -> String {
        assert_eq!(code(o), 0, "{}", common::stderr(o));
        let v = common::json(o);
        assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny");
        v["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .to_string()
    };
    // Declared: no opinion.
    let o = hook(&env, &pre_write(&env, "s11", "Write", "docs/new/page.md"));
    assert_eq!(code(&o), 0);
    assert!(common::stdout(&o).is_empty());
    // Undeclared.
    let r = deny_reason(&hook(&env, &pre_write(&env, "s11", "Write", "src/x.py")));
    assert!(
        r.contains("src/x.py") && r.contains("outside the declared write set"),
        "{r}"
    );
    assert!(r.starts_with("callus scope:"));
    // Forbidden (even though nothing else would match it either).
    let r = deny_reason(&hook(
        &env,
        &pre_write(&env, "s11", "Edit", "conf/prod.env"),
    ));
    assert!(r.contains("forbidden"), "{r}");
    // Declared for creation only, but it already existed.
    let r = deny_reason(&hook(&env, &pre_write(&env, "s11", "Edit", "docs/old.md")));
    assert!(r.contains("existed"), "{r}");
    // Outside the root.
    let mut p = pre_write(&env, "s11", "Write", "x");
    p["tool_input"]["file_path"] = json!("/etc/callus-scope-test");
    let r = deny_reason(&hook(&env, &p));
    assert!(r.contains("outside the root"), "{r}");
    // Reads and Bash are not write tools.
    let mut read = pre_write(&env, "s11", "Read", "src/x.py");
    read["tool_input"] = json!({"file_path": env.repo_path().join("src/x.py")});
    assert!(common::stdout(&hook(&env, &read)).is_empty());
    // The permitted write was observed, for attribution.
    let shown = common::json(&expect(&env, &["scope", "show", "job11", "--json"], 0));
    assert_eq!(shown["observations"], 1);
}

#[test]
fn pre_tool_use_reads_codex_apply_patch_paths() {
    let env = Env::new();
    declare(&env, "job12", &["--create", "docs/**"]);
    let payload = |patch: &str| {
        json!({"session_id": "c12", "turn_id": "t", "hook_event_name": "PreToolUse",
            "cwd": repo(&env), "tool_name": "apply_patch", "tool_use_id": "call_1",
            "tool_input": {"command": patch}})
    };
    let ok = hook(
        &env,
        &payload("*** Begin Patch\n*** Add File: docs/a.md\n+hi\n*** End Patch\n"),
    );
    assert!(common::stdout(&ok).is_empty());
    let o = hook(
        &env,
        &payload(
            "*** Begin Patch\n*** Add File: docs/b.md\n+x\n*** Add File: m-patched.txt\n+hi\n*** End Patch\n",
        ),
    );
    let v = common::json(&o);
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny");
    assert!(
        v["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .contains("m-patched.txt")
    );
}

#[test]
fn forbid_only_declaration_is_enforced_before_the_write() {
    let env = Env::new();
    declare(&env, "job13", &["--forbid", ".claude/**"]);
    let o = hook(
        &env,
        &pre_write(&env, "s13", "Write", ".claude/settings.json"),
    );
    assert_eq!(
        common::json(&o)["hookSpecificOutput"]["permissionDecision"],
        "deny"
    );
    let o = hook(&env, &pre_write(&env, "s13", "Write", "src/ok.rs"));
    assert!(common::stdout(&o).is_empty());
}

#[test]
fn the_hook_finds_its_run_by_cwd_claims_it_per_session_or_takes_the_env() {
    let mut env = Env::new();
    declare(&env, "job14", &["--create", "docs/**"]);
    // The first session whose event finds the run claims it.
    let o = hook(&env, &pre_write(&env, "first", "Write", "src/x.py"));
    assert_eq!(
        common::json(&o)["hookSpecificOutput"]["permissionDecision"],
        "deny"
    );
    // Another session in the same repository is not held to this run.
    let o = hook(&env, &pre_write(&env, "second", "Write", "src/x.py"));
    assert!(common::stdout(&o).is_empty());
    // An event outside the root: no run, no opinion.
    let mut elsewhere = pre_write(&env, "first", "Write", "x");
    elsewhere["cwd"] = json!(env.home_path());
    elsewhere["tool_input"]["file_path"] = json!(env.home_path().join("x"));
    assert!(common::stdout(&hook(&env, &elsewhere)).is_empty());
    // CALLUS_SCOPE_RUN names the run outright, whatever the session.
    env.var("CALLUS_SCOPE_RUN", "job14");
    let o = hook(&env, &pre_write(&env, "second", "Write", "src/x.py"));
    assert_eq!(
        common::json(&o)["hookSpecificOutput"]["permissionDecision"],
        "deny"
    );
}

#[test]
fn hook_never_wedges_on_garbage_or_unknown_events() {
    let env = Env::new();
    declare(&env, "job15", &["--create", "docs/**"]);
    for stdin in [&b""[..], b"not json at all", b"[]", b"null"] {
        let o = env.run(&["scope", "hook"], stdin);
        assert_eq!(code(&o), 0, "stdin {stdin:?}");
        assert!(common::stdout(&o).is_empty());
    }
    let o = hook(
        &env,
        &json!({"hook_event_name": "PreCompact", "cwd": repo(&env)}),
    );
    assert_eq!(code(&o), 0);
    // Fail-closed turns an unusable payload into a refusal.
    let mut closed = Env::new();
    closed.var("CALLUS_FAIL", "closed");
    let o = closed.run(&["scope", "hook"], b"not json");
    assert_eq!(
        common::json(&o)["hookSpecificOutput"]["permissionDecision"],
        "deny"
    );
}

#[test]
fn redeclaring_resets_observations_verdict_and_claim() {
    let env = Env::new();
    declare(&env, "job16", &["--create", "docs/**"]);
    hook(&env, &pre_write(&env, "s16", "Write", "docs/a.md"));
    env.write_repo("docs/a.md", "x\n");
    verify_json(&env, "job16", 0);
    let before = common::json(&expect(&env, &["scope", "show", "job16", "--json"], 0));
    assert_eq!(before["observations"], 1);
    assert_eq!(before["session"], "s16");
    declare(&env, "job16", &["--create", "docs/**"]);
    let after = common::json(&expect(&env, &["scope", "show", "job16", "--json"], 0));
    assert_eq!(after["observations"], 0);
    assert!(after["verdict"].is_null());
    assert!(after["session"].is_null());
    // The new baseline includes docs/a.md: nothing changed since.
    assert_eq!(
        verify_json(&env, "job16", 0)["evidence"]["counts"]["changed"],
        0
    );
}

#[test]
fn root_is_stored_absolute_so_verify_works_from_anywhere() {
    let env = Env::new();
    let o = env.run(
        &[
            "scope", "declare", "--run-id", "job17", "--root", ".", "--create", "a.txt",
        ],
        b"",
    );
    assert_eq!(code(&o), 0, "{}", common::stderr(&o));
    let shown = common::json(&expect(&env, &["scope", "show", "job17", "--json"], 0));
    let root = shown["declaration"]["root"].as_str().unwrap().to_string();
    assert!(std::path::Path::new(&root).is_absolute());
    assert_eq!(
        std::path::PathBuf::from(&root),
        std::fs::canonicalize(env.repo_path()).unwrap()
    );
    env.write_repo("b.txt", "stray\n");
    let mut cmd = env.cmd(&["scope", "verify", "--run-id", "job17", "--json"]);
    cmd.current_dir(env.home_path());
    let o = common::run_cmd(cmd, b"");
    assert_eq!(code(&o), 2);
    assert_eq!(violation_paths(&common::json(&o)), ["b.txt"]);
}

#[test]
fn bad_declarations_exit_3_naming_the_field() {
    let env = Env::new();
    let cases: &[(Value, &str)] = &[
        (json!({"run_id": "j", "create": 7}), "field 'create'"),
        (
            json!({"run_id": "j", "create": ["a"], "fail_direction": "sideways"}),
            "field 'fail_direction'",
        ),
        (
            json!({"run_id": "j", "create": ["a"], "checks": [{"name": "x"}]}),
            "checks[0].command",
        ),
        (json!({"run_id": "j", "forbidd": ["a"]}), "field 'forbidd'"),
        (
            json!({"run_id": "other", "create": ["a"]}),
            "field 'run_id'",
        ),
        (json!({"run_id": "j", "create": ["../x"]}), "field 'create'"),
        (json!({"run_id": "j"}), "names no paths"),
    ];
    for (decl, want) in cases {
        let file = env.write_home("decl.json", &decl.to_string());
        let o = env.run(
            &[
                "scope",
                "declare",
                "--run-id",
                "j",
                "--from",
                file.to_str().unwrap(),
            ],
            b"",
        );
        assert_eq!(code(&o), 3, "{decl}: {}", common::stderr(&o));
        assert!(
            common::stderr(&o).contains(want),
            "{decl}: {}",
            common::stderr(&o)
        );
    }
    let file = env.write_home("broken.json", "{not json");
    let o = env.run(
        &[
            "scope",
            "declare",
            "--run-id",
            "j",
            "--from",
            file.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(code(&o), 3);
    assert!(common::stderr(&o).contains("invalid JSON"));
    // Nothing was stored by any refused declaration.
    expect(&env, &["scope", "show", "j"], 3);
    // Flag forms.
    let o = expect(
        &env,
        &[
            "scope",
            "declare",
            "--run-id",
            "j",
            "--create",
            "a",
            "--check",
            "ruff check --select=E",
        ],
        3,
    );
    assert!(common::stderr(&o).contains("NAME=CMD"));
    let o = expect(&env, &["scope", "declare", "--run-id", "j"], 3);
    assert!(common::stderr(&o).contains("names no paths"));
    let o = expect(
        &env,
        &["scope", "declare", "--run-id", "../x", "--create", "a"],
        3,
    );
    assert!(common::stderr(&o).contains("field 'run_id'"));
    let o = expect(
        &env,
        &[
            "scope",
            "declare",
            "--run-id",
            "j",
            "--create",
            "a",
            "--root",
            "/no/such/dir",
        ],
        3,
    );
    assert!(common::stderr(&o).contains("field 'root'"));
    // A run that was never declared.
    let o = expect(&env, &["scope", "verify", "--run-id", "never"], 3);
    assert!(common::stderr(&o).contains("no run state for 'never'"));
}

#[test]
fn a_good_declaration_file_is_accepted() {
    let env = Env::new();
    let decl = json!({"run_id": "jf", "intent": "docs only", "create": "docs/*.md",
        "forbid": [".claude/**"], "fail_direction": "closed",
        "checks": [{"name": "none", "command": "true"}]});
    let file = env.write_home("decl.json", &decl.to_string());
    expect(
        &env,
        &[
            "scope",
            "declare",
            "--run-id",
            "jf",
            "--from",
            file.to_str().unwrap(),
        ],
        0,
    );
    let shown = common::json(&expect(&env, &["scope", "show", "jf", "--json"], 0));
    assert_eq!(shown["declaration"]["intent"], "docs only");
    assert_eq!(shown["declaration"]["fail_direction"], "closed");
    assert_eq!(shown["declaration"]["skip"], json!(["**/.git"]));
}

#[test]
fn scope_usage_errors_exit_3_so_2_always_means_a_violation() {
    let env = Env::new();
    // Missing required flag, unknown flag, missing subcommand.
    for args in [
        &["scope", "verify"][..],
        &["scope", "declare", "--run-id", "x", "--bogus"],
        &["scope"],
    ] {
        let o = env.run(args, b"");
        assert_eq!(code(&o), 3, "{args:?}: {}", common::stderr(&o));
        assert!(common::stderr(&o).contains("error:") || common::stderr(&o).contains("Usage"));
    }
    // Help is still success, and other commands keep clap's usage code.
    assert_eq!(code(&env.run(&["scope", "verify", "--help"], b"")), 0);
    assert_eq!(code(&env.run(&["rules", "--bogus"], b"")), 2);
}

#[test]
fn forbid_everything_asserts_the_run_writes_nothing() {
    let env = Env::new();
    env.write_repo("a.txt", "a\n");
    declare(&env, "job18", &["--forbid", "**"]);
    assert_eq!(verify_json(&env, "job18", 0)["decision"], "allow");
    env.write_repo("a.txt", "b\n");
    let v = verify_json(&env, "job18", 2);
    assert_eq!(v["reason"], "scope:forbidden_path");
}
