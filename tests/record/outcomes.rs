//! The outcome model through the real binary: every class (failure, masked, answer,
//! harness, denied) stored by `record import` and by the hook, counted by `record stats`,
//! and kept out of (or, for masked calls, counted into) what `derive` proposes. The calls are
//! distilled from a real published archive (tests/fixtures/record/README.md).

use super::{fixture, import, payload, record, row};
use crate::common::{Env, json, stderr};

fn outcomes(env: &Env) -> serde_json::Value {
    import(
        env,
        &[
            fixture("claude-outcomes.jsonl"),
            fixture("hook-events.jsonl"),
        ],
    )
}

#[test]
fn every_outcome_class_is_stored_and_counted_on_import() {
    let env = Env::new();
    let s = outcomes(&env);
    assert_eq!(s["calls"], 12, "{s:#}");
    assert_eq!(s["failures"], 4, "three sudo failures and the early push");
    assert_eq!(s["answers"], 2);
    assert_eq!(s["harness"], 2);
    assert_eq!(s["denied"], 3);
    assert_eq!(s["pending"], 0, "a result before its tool_use still pairs");
    assert_eq!(s["unpaired_results"], 0);
    assert_eq!(s["skipped_files"]["hook-event log"], 1, "{s:#}");
    for (id, status) in [
        ("toolu_sudo_0", "failure"),
        ("toolu_masked", "success"),
        ("toolu_answer_defaults", "answer"),
        ("toolu_answer_ssh", "answer"),
        ("toolu_harness_cygpath", "harness"),
        ("toolu_harness_status", "harness"),
        ("toolu_denied_write", "denied"),
        ("toolu_denied_mkdir", "denied"),
        ("toolu_denied_approval", "denied"),
        ("toolu_early", "failure"),
    ] {
        assert_eq!(row(&env, id).status, status, "{id}");
    }
    // The masked call keeps only the error line, signed like the failures it hides.
    let masked = row(&env, "toolu_masked");
    assert!(
        masked
            .signature
            .as_deref()
            .is_some_and(|s| s.starts_with("sudo: a terminal is required")),
        "{masked:?}"
    );
    // The push's signature is its error line, not the output before it.
    assert_eq!(
        row(&env, "toolu_early").signature.as_deref(),
        Some("exit code 1 remote: error: gh#: repository rule violations found for <path>")
    );
}

#[test]
fn stats_show_every_class() {
    let env = Env::new();
    outcomes(&env);
    let out = env.run(&["record", "stats", "--json"], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let s = json(&out);
    assert_eq!(
        (
            s["failures"].as_i64(),
            s["answers"].as_i64(),
            s["harness"].as_i64(),
            s["denied"].as_i64(),
            s["masked"].as_i64()
        ),
        (Some(4), Some(2), Some(2), Some(3), Some(1)),
        "{s:#}"
    );
    // Attempts are successes, answers and failures: 4 of 1 + 2 + 4.
    assert!((s["failure_rate"].as_f64().unwrap() - 4.0 / 7.0).abs() < 1e-9);
    let text = env.run(&["record", "stats"], b"");
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("(1 masked), 4 failed, 2 answers, 2 harness, 3 denied"),
        "{text}"
    );
}

#[test]
fn derive_counts_masked_calls_and_proposes_nothing_from_non_failures() {
    let env = Env::new();
    outcomes(&env);
    let out = env.run(
        &[
            "derive",
            "--since",
            "2026-01-01",
            "--min-attempts",
            "3",
            "--json",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc = json(&out);
    let rules = doc["rules"].as_array().unwrap();
    assert_eq!(rules.len(), 1, "only sudo recurs: {doc:#}");
    let sudo = &rules[0];
    assert_eq!(sudo["any"][0], r"^sudo\b");
    let m = &sudo["meta"];
    assert_eq!(m["fail_count"], 4, "three failures and the masked call");
    assert_eq!(m["attempt_count"], 4);
    assert_eq!(m["masked_count"], 1);
    // Four of four, but all on one day: capped at probabilistic (a nudge) by its spread.
    assert_eq!(m["failure_days"], 1);
    assert_eq!(m["tier"], "probabilistic");
    assert_eq!(m["action_ceiling"], "nudge");
    // The summary reports the harness failures once, as an environment finding.
    let elsewhere = env.home_path().join("elsewhere.json");
    let text = env.run(
        &[
            "derive",
            "--since",
            "2026-01-01",
            "--out",
            &elsewhere.to_string_lossy(),
        ],
        b"",
    );
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains(
            "the Windows shell (Git-Bash/MSYS) failed to start: 2 call(s) of 2 program(s)"
        ),
        "{text}"
    );
}

#[test]
fn a_stale_candidate_file_is_retired_not_an_abort() {
    let env = Env::new();
    outcomes(&env);
    // A candidate whose tier disagrees with its own counts (an older callus wrote it).
    env.write_home(
        "candidates.json",
        r#"{"ruleset":"candidates","rules":[{"id":"derived-bash-old-00000000","tool":"Bash",
            "match":"segment","any":["^old\\b"],"action":"monitor","message":"m",
            "meta":{"tier":"reproducible","fail_count":8,"attempt_count":19}}]}"#,
    );
    let out = env.run(
        &["derive", "--since", "2026-01-01", "--min-attempts", "3"],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("1 retired as stale"),
        "{}",
        stderr(&out)
    );
    let check = env.run(
        &[
            "guard",
            "check",
            &env.home_path().join("candidates.json").to_string_lossy(),
        ],
        b"",
    );
    assert_eq!(check.status.code(), Some(0), "{}", stderr(&check));
}

#[test]
fn the_hook_stores_answers_harness_failures_and_masked_successes() {
    let env = Env::new();
    let base = payload("claude-posttooluse-success.json");
    let event = |id: &str, kind: &str, command: &str, body: serde_json::Value| {
        let mut e = base.clone();
        e["tool_use_id"] = id.into();
        e["hook_event_name"] = kind.into();
        e["tool_input"]["command"] = command.into();
        for (k, v) in body.as_object().unwrap() {
            e[k] = v.clone();
        }
        e
    };
    record(
        &env,
        &event(
            "toolu_h_masked",
            "PostToolUse",
            "sudo launchctl list | head -5",
            serde_json::json!({"tool_response": {"stdout": "", "stderr":
                "sudo: a terminal is required to read the password; either use the -S option",
                "interrupted": false}}),
        ),
    );
    record(
        &env,
        &event(
            "toolu_h_answer",
            "PostToolUseFailure",
            "rg -n needle src",
            serde_json::json!({"error": "Exit code 1"}),
        ),
    );
    record(
        &env,
        &event(
            "toolu_h_harness",
            "PostToolUseFailure",
            "ls",
            serde_json::json!({"error": "Exit code 3221225794"}),
        ),
    );
    let masked = row(&env, "toolu_h_masked");
    assert_eq!(masked.status, "success");
    assert!(masked.signature.is_some(), "{masked:?}");
    assert_eq!(row(&env, "toolu_h_answer").status, "answer");
    assert_eq!(row(&env, "toolu_h_harness").status, "harness");
}

#[test]
fn explain_breaks_failures_down_by_signature_and_shows_masked_calls() {
    let env = Env::new();
    outcomes(&env);
    let out = env.run(
        &["derive", "--since", "2026-01-01", "--min-attempts", "3"],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(env.home_path().join("candidates.json")).unwrap(),
    )
    .unwrap();
    let id = doc["rules"][0]["id"].as_str().unwrap().to_string();
    let out = env.run(&["derive", "explain", &id, "--json"], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let r = json(&out);
    let groups = r["failures"]["by_signature"].as_array().unwrap();
    assert_eq!(groups.len(), 1, "{r:#}");
    assert_eq!(
        (
            groups[0]["failures"].as_u64(),
            groups[0]["sessions"].as_u64()
        ),
        (Some(3), Some(1))
    );
    assert!(
        groups[0]["error_line"]
            .as_str()
            .unwrap()
            .starts_with("sudo: a terminal is required"),
        "the error's line, not the Exit code line: {r:#}"
    );
    let masked = r["masked"].as_array().unwrap();
    assert_eq!(masked.len(), 1);
    assert!(
        masked[0]["command"]
            .as_str()
            .unwrap()
            .contains("| head -30")
    );
    let out = env.run(&["derive", "explain", &id], b"");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("failures by signature"), "{text}");
    assert!(text.contains("masked: 1 call(s) exited 0"), "{text}");
    // Issue 25: the tier line is printed once.
    assert_eq!(
        text.lines().filter(|l| l.starts_with("tier ")).count(),
        1,
        "{text}"
    );
    assert_eq!(text.matches("promote no further than").count(), 1, "{text}");
    // The summary explains each tier shown once, and says "agent guessing" at most once.
    let out = env.run(
        &["derive", "--since", "2026-01-01", "--min-attempts", "3"],
        b"",
    );
    let summary = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        summary
            .lines()
            .filter(|l| l.trim_start().starts_with("probabilistic: "))
            .count(),
        1,
        "{summary}"
    );
    // Four of four, all on one day: the summary says why the tier is not higher.
    assert_eq!(
        summary
            .lines()
            .filter(|l| l.trim_start().starts_with("capped at probabilistic: "))
            .count(),
        1,
        "{summary}"
    );
    assert!(summary.matches("agent guessing").count() <= 1, "{summary}");
}

/// Each host's own phrasings through `record import` (tests/fixtures/record/outcome-hosts,
/// written in each host's log format with the texts the hosts' sources and issue trackers
/// show; the sources are named beside each phrase in `src/record/outcome/harness.rs` and
/// `classify.rs`), then counted by `record stats`.
#[test]
fn each_hosts_phrasings_are_classed_on_import() {
    let env = Env::new();
    let s = import(&env, &[fixture("outcome-hosts")]);
    assert_eq!(s["calls"], 14, "{s:#}");
    for (id, status) in [
        // Claude Code: the shell snapshot failed (harness), a test run's verdict and a
        // hook-rewritten no-match (answers), the runner missing, its own timeout and a real
        // grep error (failures).
        ("toolu_oh_1", "harness"),
        ("toolu_oh_2", "answer"),
        ("toolu_oh_3", "answer"),
        ("toolu_oh_4", "failure"),
        ("toolu_oh_5", "failure"),
        ("toolu_oh_6", "failure"),
        // Gemini CLI: bash could not be spawned, a policy denial, a Ctrl-C, a declined
        // confirmation, the shell tool's own timeout (reported as a result), pytest's verdict.
        ("gem_oh_1", "harness"),
        ("gem_oh_2", "denied"),
        ("gem_oh_3", "interrupted"),
        ("gem_oh_4", "denied"),
        ("gem_oh_5", "failure"),
        ("gem_oh_6", "answer"),
        // Copilot CLI: no pwsh on the machine, a permission it could not ask for.
        ("cop_oh_1", "harness"),
        ("cop_oh_2", "denied"),
    ] {
        assert_eq!(row(&env, id).status, status, "{id}");
    }
    // The timeouts sign without their durations.
    assert_eq!(
        row(&env, "toolu_oh_5").signature.as_deref(),
        Some("command timed out after #m #.#s")
    );
    let out = env.run(&["record", "stats", "--json"], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let st = json(&out);
    assert_eq!(
        (
            st["failures"].as_i64(),
            st["answers"].as_i64(),
            st["harness"].as_i64(),
            st["denied"].as_i64()
        ),
        (Some(4), Some(3), Some(3), Some(3)),
        "{st:#}"
    );
}
