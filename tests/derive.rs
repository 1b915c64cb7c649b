//! Integration tests: `derive` and `derive explain`, through the real binary over a store
//! filled the way the recorder fills it (see `derive/support.rs`).

mod backslash_path;
mod blame;
mod evidence;
mod file_tools;
mod findings;
mod lifecycle;
mod path_form;
mod realdata;
mod rule_level;
mod sandbox;
mod session_files;
mod shared;
mod support;
mod telling_line;

use serde_json::Value;

use crate::common::{Env, json, stderr, stdout};
use support::{Row, by_shape, derive, derive_json, fires, insert, load_trace};

fn rules(doc: &Value) -> &Vec<Value> {
    doc["rules"].as_array().unwrap()
}

// ---- spec §6.5 "Tests pin": the 13-line fixture ------------------------------------------

#[test]
fn fixture_yields_one_psql_candidate_reproducible_at_60_percent() {
    let env = Env::new();
    load_trace(&env, &support::fixture());
    let doc = derive_json(&env, &[]);
    let psql = by_shape(&doc, "psql");
    assert_eq!(psql.len(), 1, "{doc:#}");
    let c = psql[0];
    assert_eq!(c["any"][0], r"^psql\b");
    assert_eq!(c["match"], "segment");
    assert_eq!(c["action"], "monitor");
    let m = &c["meta"];
    assert_eq!(
        m["fail_count"], 3,
        "quoted db names normalise into one cluster"
    );
    assert_eq!(m["attempt_count"], 5, "successes are the denominator");
    assert_eq!(m["tier"], "reproducible");
    assert_eq!(m["fail_rate"], 0.6);
    assert_eq!(m["action_ceiling"], "deny");
    assert_eq!(
        m["tier_basis"],
        "failed on most attempts (60% of 5 attempts)"
    );
    assert_eq!(
        m["error_signature"],
        "psql: error: connection to server failed: fatal: database 'S' does not exist"
    );
    assert_eq!(m["backtest"]["crossfire"], 2);
    assert_eq!(m["telemetry_ref"], "callus:trace");
    assert!(c["id"].as_str().unwrap().starts_with("derived-bash-psql-"));
}

#[test]
fn fixture_yields_one_tool_wide_mcp_candidate_with_attempts_max_not_sum() {
    let env = Env::new();
    load_trace(&env, &support::fixture());
    let doc = derive_json(&env, &[]);
    let mcp: Vec<&Value> = rules(&doc)
        .iter()
        .filter(|r| r["tool"] == "mcp__Acme__*")
        .collect();
    assert_eq!(mcp.len(), 1);
    let c = mcp[0];
    assert!(c.get("any").is_none(), "tool-wide: no pattern");
    assert_eq!(c["meta"]["fail_count"], 3);
    assert_eq!(c["meta"]["attempt_count"], 6, "6, not 12");
    assert_eq!(c["meta"]["distinct_signatures"], 3);
    assert_eq!(c["meta"]["tier"], "reproducible");
    assert!(
        c["message"]
            .as_str()
            .unwrap()
            .contains("consider action=deny"),
        "the advice names the ceiling: {}",
        c["message"]
    );
    // The single WebFetch failure is below --min-count.
    assert!(rules(&doc).iter().all(|r| r["tool"] != "WebFetch"));
    assert_eq!(rules(&doc).len(), 2);
}

#[test]
fn fixture_candidates_pass_guard_check_and_land_in_the_candidate_layer() {
    let env = Env::new();
    load_trace(&env, &support::fixture());
    let out = derive(&env, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let path = env.home_path().join("candidates.json");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains("s3cr3t-hunter2"), "secrets never reach disk");
    let doc: Value = serde_json::from_str(&text).unwrap();
    for key in doc.as_object().unwrap().keys() {
        assert!(
            callus::testing::TOP_LEVEL_KEYS.contains(&key.as_str()),
            "{key}"
        );
    }
    assert!(rules(&doc).iter().all(|r| r["action"] == "monitor"));
    let check = env.run(&["guard", "check", path.to_str().unwrap()], b"");
    assert_eq!(
        check.status.code(),
        Some(0),
        "{}{}",
        stdout(&check),
        stderr(&check)
    );
    // The examples are the candidate's own evidence and guard check ran them.
    assert!(
        stdout(&check).contains("example assertion"),
        "{}",
        stdout(&check)
    );
    // The human summary: a table, the tier basis, the caveat.
    let s = stdout(&out);
    assert!(s.contains("2 candidate rule(s)"), "{s}");
    assert!(
        s.contains("^psql\\b")
            && s.contains("60% of 5")
            && s.contains("reproducible: failed on most attempts"),
        "{s}"
    );
    assert!(s.contains("observational"), "{s}");
    assert!(stderr(&out).contains("wrote 2 candidate rule(s)"));
}

// ---- spec §6.5 row-level cases, as store histories -------------------------------------

/// `fails` failures and `ok` successes of a `WebFetch` call, plus one unrelated success so the
/// window has a denominator.
fn webfetch(env: &Env, fails: i64, ok: i64) {
    let mut rows: Vec<Row> = (0..fails)
        .map(|i| {
            Row::tool(
                "WebFetch",
                "failure",
                "Request failed with status code 404",
                // Every third hour: twelve failures fall on two days (a tier above
                // probabilistic needs two sessions on two days).
                i * 3,
            )
        })
        .collect();
    rows.extend((0..ok).map(|i| Row::tool("WebFetch", "success", "", 50 + i)));
    rows.push(Row::bash("success", "ls", "", 80));
    insert(env, &rows);
}

#[test]
fn anecdotal_is_withheld_reported_and_kept_on_request() {
    let env = Env::new();
    webfetch(&env, 3, 0);
    let doc = derive_json(&env, &[]);
    assert!(rules(&doc).is_empty());
    let dropped = doc["dropped_anecdotal"].as_array().unwrap();
    assert_eq!(dropped.len(), 1);
    assert_eq!(dropped[0]["tier"], "anecdotal");
    assert_eq!(dropped[0]["tool"], "WebFetch");
    let out = derive(&env, &[]);
    assert!(
        stdout(&out).contains("1 cluster(s) withheld as anecdotal"),
        "{}",
        stdout(&out)
    );
    assert!(stdout(&out).contains("--keep-anecdotal"));

    let doc = derive_json(&env, &["--keep-anecdotal"]);
    assert_eq!(rules(&doc).len(), 1);
    assert_eq!(rules(&doc)[0]["meta"]["tier"], "anecdotal");
    assert_eq!(rules(&doc)[0]["meta"]["action_ceiling"], "monitor");
    assert!(
        rules(&doc)[0]["message"]
            .as_str()
            .unwrap()
            .contains("keep it at monitor")
    );
}

#[test]
fn twelve_of_twelve_is_deterministic() {
    let env = Env::new();
    webfetch(&env, 12, 0);
    let doc = derive_json(&env, &[]);
    let m = &rules(&doc)[0]["meta"];
    assert_eq!(
        (m["tier"].as_str(), m["action_ceiling"].as_str()),
        (Some("deterministic"), Some("block"))
    );
    assert_eq!(m["fail_rate"], 1.0);
}

#[test]
fn no_successes_in_the_window_means_no_denominator() {
    let env = Env::new();
    let rows: Vec<Row> = (0..9)
        .map(|i| Row::bash("failure", "make deploy", "make: *** [deploy] Error 2", i))
        .collect();
    insert(&env, &rows);
    let out = derive(&env, &["--json"]);
    assert!(out.status.success());
    assert!(
        stderr(&out).contains("no failure rate can be computed"),
        "{}",
        stderr(&out)
    );
    let doc = json(&out);
    assert_eq!(rules(&doc).len(), 1, "unknown is still proposed");
    let m = &rules(&doc)[0]["meta"];
    assert_eq!(m["tier"], "unknown");
    assert!(m["attempt_count"].is_null() && m["fail_rate"].is_null());
    assert_eq!(m["action_ceiling"], "nudge");
}

#[test]
fn bookkeeping_tools_are_excluded_by_default_read_is_not() {
    let env = Env::new();
    let mut rows = Vec::new();
    rows.extend((0..47).map(|i| Row::tool("Read", "failure", "File does not exist.", i)));
    rows.extend((0..5).map(|i| Row::tool("Skill", "failure", "Unknown skill", i)));
    rows.extend((0..9).map(|i| Row::tool("WebFetch", "failure", "HTTP 500", i)));
    rows.push(Row::bash("success", "ls", "", 90));
    insert(&env, &rows);
    let tools = |doc: &Value| -> Vec<String> {
        rules(doc)
            .iter()
            .map(|r| r["tool"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(tools(&derive_json(&env, &[])), vec!["Read", "WebFetch"]);
    let without_read = tools(&derive_json(&env, &["--exclude-tool", "Read"]));
    assert_eq!(without_read, vec!["WebFetch"]);
    let with_skill = tools(&derive_json(&env, &["--include-tool", "Skill"]));
    assert_eq!(with_skill, vec!["Read", "WebFetch", "Skill"]);
    let none = derive_json(
        &env,
        &["--exclude-tool", "WebFetch", "--exclude-tool", "Read"],
    );
    assert!(rules(&none).is_empty());
}

// ---- generated histories with planted failures ------------------------------------------

const PREFIXES: &[&str] = &[
    "",
    "cd repo && ",
    "FOO=1 ",
    "source .venv/bin/activate && ",
    "cd /work/x; ",
];

#[test]
fn a_missing_flag_becomes_an_unless_clause() {
    let env = Env::new();
    let err = "usage: fetch-tool.py [-h] --entity ENTITY\nfetch-tool.py: error: the following arguments are required: --entity";
    let mut rows = Vec::new();
    let mut failing = Vec::new();
    let mut flagged = Vec::new();
    for i in 0..30 {
        let p = PREFIXES[i as usize % PREFIXES.len()];
        let cmd = format!(
            "{p}python3 scripts/fetch-tool.py --since {}d --format json",
            i % 9 + 1
        );
        failing.push(cmd.clone());
        rows.push(Row::bash("failure", &cmd, err, i));
    }
    for i in 0..60 {
        let p = PREFIXES[i as usize % PREFIXES.len()];
        let cmd = format!("{p}python3 scripts/fetch-tool.py --entity acct-{i} --since 7d");
        flagged.push(cmd.clone());
        rows.push(Row::bash("success", &cmd, "", 40 + i));
    }
    // Other python3 work that must not be caught in the crossfire.
    rows.extend((0..40).map(|i| Row::bash("success", "python3 -m pytest -q", "", 110 + i)));
    insert(&env, &rows);
    let doc = derive_json(&env, &[]);
    let c = by_shape(&doc, "python3 scripts/fetch-tool.py");
    assert_eq!(c.len(), 1, "{doc:#}");
    let c = c[0];
    assert_eq!(c["meta"]["kind"], "missing-flag");
    let unless = c["unless"].as_array().unwrap();
    assert!(
        unless
            .iter()
            .any(|u| u.as_str().unwrap().contains("--entity")),
        "{c:#}"
    );
    let hit = failing.iter().filter(|f| fires(c, f)).count();
    assert!(
        hit * 10 >= failing.len() * 9,
        "matched {hit} of {} planted failures",
        failing.len()
    );
    assert!(
        flagged.iter().all(|s| !fires(c, s)),
        "no flagged success is matched"
    );
    assert!(!fires(c, "python3 -m pytest -q"));
    assert_eq!(c["meta"]["backtest"]["crossfire"], 0);
    assert_eq!(c["meta"]["tier"], "deterministic");
    assert_eq!(c["meta"]["contrast"]["unless"][0]["in_successes"], 60);
    assert_eq!(c["meta"]["contrast"]["unless"][0]["in_failures"], 0);
    assert!(
        c["examples"]["should_not_fire"]
            .as_array()
            .is_some_and(|a| !a.is_empty())
    );
}

#[test]
fn a_bare_command_behind_cd_is_keyed_on_the_command_not_cd() {
    let env = Env::new();
    let err = "psql: error: connection to server on socket \"/tmp/.s.PGSQL.5432\" failed: No such file or directory";
    let mut rows = Vec::new();
    for i in 0..8 {
        rows.push(Row::bash(
            "failure",
            &format!("cd services/db{} && psql -c 'select {i}'", i % 3),
            err,
            i,
        ));
    }
    for i in 0..20 {
        rows.push(Row::bash(
            "success",
            &format!("cd services/db{} && ls -la", i % 3),
            "",
            20 + i,
        ));
    }
    // A failing bare `cd` recurs too: it must never become a rule.
    for i in 0..6 {
        rows.push(Row::bash(
            "failure",
            "cd /does/not/exist",
            "cd: no such file or directory: /does/not/exist",
            50 + i,
        ));
    }
    rows.push(Row::bash(
        "success",
        "psql -h db.internal -c 'select 1'",
        "",
        70,
    ));
    insert(&env, &rows);
    let doc = derive_json(&env, &[]);
    for r in rules(&doc) {
        let any = r["any"].to_string();
        assert!(!any.contains("cd"), "a candidate keyed on cd: {r:#}");
        assert_ne!(r["meta"]["command_shape"], "cd");
    }
    let psql = by_shape(&doc, "psql");
    assert_eq!(psql.len(), 1);
    assert_eq!(psql[0]["any"][0], r"^psql\b");
    assert_eq!(psql[0]["meta"]["fail_count"], 8);
    assert!(fires(psql[0], "cd x && FOO=1 psql -c 'select 1'"));
    assert!(!fires(psql[0], "cd services/db1 && ls -la"));
    let out = derive(&env, &[]);
    assert!(
        stdout(&out).contains("ran only shell builtins"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_poll_loop_yields_a_loop_pattern_not_sleep() {
    let env = Env::new();
    let mut rows = Vec::new();
    for i in 0..6 {
        let cmd = if i % 2 == 0 {
            format!(
                "until curl -sf http://localhost:{}/health; do sleep 2; done",
                8080 + i
            )
        } else {
            "cd app && while ! pg_isready -h localhost; do sleep 1; done".to_string()
        };
        rows.push(Row::bash(
            "failure",
            &cmd,
            "Command timed out after 2m 0.0s",
            i * 6,
        ));
    }
    for i in 0..10 {
        rows.push(Row::bash("success", "sleep 5", "", 10 + i));
        rows.push(Row::bash(
            "success",
            "curl -sf http://localhost:8080/health",
            "",
            30 + i,
        ));
    }
    insert(&env, &rows);
    let doc = derive_json(&env, &[]);
    assert_eq!(rules(&doc).len(), 1, "{doc:#}");
    let c = &rules(&doc)[0];
    assert_eq!(c["meta"]["kind"], "poll-loop");
    assert_eq!(c["match"], "text");
    assert!(!c["any"][0].as_str().unwrap().starts_with(r"\bsleep"));
    assert!(fires(c, "while true; do curl -s x && break; sleep 3; done"));
    assert!(!fires(c, "sleep 5"));
    assert!(!fires(c, "curl -sf http://localhost:8080/health"));
    assert_eq!(c["meta"]["fail_count"], 6);
    assert_eq!(c["meta"]["tier"], "deterministic");
}

#[test]
fn a_dead_host_yields_a_host_pattern() {
    let env = Env::new();
    let mut rows = Vec::new();
    for i in 0..5 {
        rows.push(Row::bash(
            "failure",
            &format!("curl -sf https://api.dead.example/v1/items?page={i}"),
            "curl: (6) Could not resolve host: api.dead.example",
            i * 6,
        ));
    }
    rows.push(Row::bash(
        "failure",
        "wget -q https://api.dead.example/v1/dump.json",
        "wget: unable to resolve host address 'api.dead.example'",
        30,
    ));
    for i in 0..20 {
        rows.push(Row::bash(
            "success",
            &format!("curl -sf https://api.live.example/v1/items?page={i}"),
            "",
            10 + i,
        ));
    }
    insert(&env, &rows);
    let doc = derive_json(&env, &[]);
    assert_eq!(rules(&doc).len(), 1, "{doc:#}");
    let c = &rules(&doc)[0];
    assert_eq!(c["meta"]["kind"], "dead-host");
    assert_eq!(
        c["meta"]["fail_count"], 6,
        "curl and wget failures on one host cluster together"
    );
    assert!(fires(c, "git clone https://api.dead.example/repo.git"));
    assert!(!fires(c, "curl -sf https://api.live.example/v1/items"));
    assert_eq!(c["meta"]["backtest"]["crossfire"], 0);
    assert_eq!(c["meta"]["tier"], "deterministic");
}

#[test]
fn a_flaky_command_is_probabilistic_and_capped_at_nudge() {
    let env = Env::new();
    let mut rows = Vec::new();
    for i in 0..40 {
        let (status, err) = if i % 4 == 0 {
            (
                "failure",
                "FAIL src/net.test.ts › retries › times out (5003 ms)",
            )
        } else {
            ("success", "")
        };
        rows.push(Row::bash(status, "npm test", err, i));
    }
    insert(&env, &rows);
    let doc = derive_json(&env, &[]);
    let c = by_shape(&doc, "npm test");
    assert_eq!(c.len(), 1, "{doc:#}");
    let m = &c[0]["meta"];
    assert_eq!(m["tier"], "probabilistic");
    assert_eq!(m["fail_rate"], 0.25);
    assert_eq!(m["action_ceiling"], "nudge");
    assert_eq!(m["attempt_count"], 40);
    assert!(
        m["crossfire_note"]
            .as_str()
            .unwrap()
            .contains("lowers its ceiling from block to nudge")
    );
}

#[test]
fn three_of_three_is_withheld() {
    let env = Env::new();
    let mut rows: Vec<Row> = (0..3)
        .map(|i| {
            Row::bash(
                "failure",
                "terraform plan",
                "Error: No valid credential sources found",
                i,
            )
        })
        .collect();
    rows.push(Row::bash("success", "git status", "", 9));
    insert(&env, &rows);
    let doc = derive_json(&env, &[]);
    assert!(rules(&doc).is_empty());
    assert_eq!(doc["dropped_anecdotal"][0]["shape"], "terraform");
    assert_eq!(doc["dropped_anecdotal"][0]["attempt_count"], 3);
}

// ---- what is evidence, the window, ids, merge, outputs -----------------------------------

#[test]
fn denied_interrupted_and_pending_calls_are_not_evidence() {
    let env = Env::new();
    load_trace(&env, &support::fixture());
    let mut rows = Vec::new();
    for (i, status) in ["denied", "denied", "interrupted", "pending", "denied"]
        .iter()
        .enumerate()
    {
        rows.push(Row::bash(
            status,
            "psql -c 'drop table users'",
            "The user doesn't want to take this action",
            100 + i as i64,
        ));
    }
    insert(&env, &rows);
    let doc = derive_json(&env, &[]);
    let m = &by_shape(&doc, "psql")[0]["meta"];
    assert_eq!(
        (m["fail_count"].as_u64(), m["attempt_count"].as_u64()),
        (Some(3), Some(5))
    );
}

#[test]
fn the_window_is_half_open() {
    let env = Env::new();
    let err = "make: *** No rule to make target 'deploy'.  Stop.";
    let mut rows: Vec<Row> = (0..5)
        .map(|i| Row::bash("failure", "make deploy", err, i))
        .collect();
    rows.push(Row::bash("success", "ls", "", 5));
    // Exactly at --until: outside. Before --since: outside.
    let mut at_end = Row::bash("failure", "make deploy", err, 0);
    at_end.started_ms = support::T0 + 7 * 24 * support::HOUR;
    let mut before = Row::bash("failure", "make deploy", err, 0);
    before.started_ms = support::T0 - 1;
    rows.extend([at_end, before]);
    insert(&env, &rows);
    let doc = derive_json(&env, &[]);
    assert_eq!(by_shape(&doc, "make deploy")[0]["meta"]["fail_count"], 5);
    assert_eq!(doc["window"]["since"], "2026-07-01T00:00:00Z");
    assert_eq!(doc["window"]["days"], 7);
    let bad = env.run(
        &["derive", "--since", "2026-07-09", "--until", "2026-07-08"],
        b"",
    );
    assert_eq!(bad.status.code(), Some(3), "{}", stderr(&bad));
}

#[test]
fn ids_are_stable_and_a_rerun_keeps_human_review_notes() {
    let env = Env::new();
    load_trace(&env, &support::fixture());
    assert!(derive(&env, &[]).status.success());
    let path = env.home_path().join("candidates.json");
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let id = by_shape(&doc, "psql")[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let psql = doc["rules"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|r| r["id"] == id.as_str())
        .unwrap();
    psql["meta"]["review"] = "bare psql: point at scripts/db.py — kai".into();
    psql["message"] = "Bare psql has no database here: use scripts/db.py.".into();
    std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();

    // More failures of the same cluster next time: the count moves, the id does not.
    insert(
        &env,
        &[Row::bash(
            "failure",
            "psql -c 'select 2'",
            "psql: error: connection to server failed: FATAL:  database \"zed\" does not exist",
            100,
        )],
    );
    let out = derive(&env, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("0 new, 2 updated"),
        "{}",
        stderr(&out)
    );
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let psql = by_shape(&doc, "psql");
    assert_eq!(psql.len(), 1);
    assert_eq!(psql[0]["id"], id.as_str());
    assert_eq!(psql[0]["meta"]["fail_count"], 4);
    assert_eq!(
        psql[0]["meta"]["review"],
        "bare psql: point at scripts/db.py — kai"
    );
    assert_eq!(
        psql[0]["message"],
        "Bare psql has no database here: use scripts/db.py."
    );
}

#[test]
fn out_writes_elsewhere_and_json_alone_writes_nothing() {
    let env = Env::new();
    load_trace(&env, &support::fixture());
    let out = derive(&env, &["--json"]);
    assert!(out.status.success());
    assert!(!env.home_path().join("candidates.json").exists());
    let file = env.repo_path().join("review.json");
    let out = derive(&env, &["--out", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(file.exists());
    assert!(!env.home_path().join("candidates.json").exists());
    // A file that is not a candidate document is never clobbered.
    std::fs::write(&file, "[1, 2]").unwrap();
    let out = derive(&env, &["--out", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "[1, 2]");
}

#[test]
fn repeated_runs_give_the_same_document() {
    let env = Env::new();
    load_trace(&env, &support::fixture());
    let strip = |mut d: Value| {
        d["generated"]["at"] = Value::Null;
        d
    };
    let first = strip(derive_json(&env, &[]));
    for _ in 0..3 {
        assert_eq!(strip(derive_json(&env, &[])), first);
    }
}

#[test]
fn explain_shows_failures_successes_contrast_and_backtest() {
    let env = Env::new();
    let err = "fetch-tool.py: error: the following arguments are required: --entity";
    let mut rows: Vec<Row> = (0..6)
        .map(|i| {
            Row::bash(
                "failure",
                &format!("cd x && python3 scripts/fetch-tool.py --since {i}d"),
                err,
                i * 6,
            )
        })
        .collect();
    rows.extend((0..10).map(|i| {
        Row::bash(
            "success",
            &format!("python3 scripts/fetch-tool.py --entity e{i}"),
            "",
            10 + i,
        )
    }));
    insert(&env, &rows);
    let out = derive(&env, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: Value = serde_json::from_str(
        &std::fs::read_to_string(env.home_path().join("candidates.json")).unwrap(),
    )
    .unwrap();
    let id = rules(&doc)[0]["id"].as_str().unwrap().to_string();
    // The window comes from the candidate file, so no --since is needed here.
    let out = env.run(&["derive", "explain", &id, "--json"], b"");
    assert!(out.status.success(), "{}", stderr(&out));
    let r = json(&out);
    assert_eq!(r["failures"]["count"], 6);
    assert_eq!(r["successes_of_shape"]["successes"], 10);
    assert_eq!(r["backtest"]["matched"], 6);
    let entity = r["contrast"]["tokens"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["token"] == "--entity")
        .unwrap();
    assert_eq!(entity["verdict"], "unless");
    let out = env.run(&["derive", "explain", &id], b"");
    let text = stdout(&out);
    for section in [
        "failing calls (6)",
        "successful calls of shape",
        "contrast",
        "backtest over",
        "tier deterministic",
    ] {
        assert!(text.contains(section), "missing '{section}' in:\n{text}");
    }
    let out = env.run(&["derive", "explain", "derived-nope-00000000"], b"");
    assert_eq!(out.status.code(), Some(3));
    assert!(stderr(&out).contains("no candidate or cluster"));
    // The hint names an option `derive explain` has (it named --since, which it refuses).
    assert!(stderr(&out).contains("--out FILE"), "{}", stderr(&out));
}

#[test]
fn no_store_is_an_input_error_that_says_what_to_do() {
    let env = Env::new();
    let out = derive(&env, &[]);
    assert_eq!(out.status.code(), Some(3));
    assert!(
        stderr(&out).contains("record some tool calls first"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn rules_that_fire_on_the_same_failures_are_one_candidate() {
    let env = Env::new();
    let mut rows = Vec::new();
    // Two signatures of one tool: each cluster proposes the same tool-wide rule, which as
    // enforced fires on both clusters' failures. One lesson, one candidate.
    for i in 0..6 {
        rows.push(Row::tool("WebFetch", "failure", "HTTP 500 Internal", i * 5));
        rows.push(Row::tool(
            "WebFetch",
            "failure",
            "socket hang up",
            i * 5 + 1,
        ));
    }
    rows.extend((0..20).map(|i| Row::tool("WebFetch", "success", "", 40 + i)));
    // Two programs failing on their own: two lessons.
    for i in 0..6 {
        rows.push(Row::bash(
            "failure",
            "make deploy",
            "make: *** No rule to make target 'deploy'.  Stop.",
            i * 5 + 2,
        ));
        rows.push(Row::bash(
            "failure",
            "terraform plan",
            "Error: No valid credential sources found",
            i * 5 + 3,
        ));
    }
    rows.extend((0..6).map(|i| Row::bash("success", "make build", "", 70 + i)));
    insert(&env, &rows);
    let doc = derive_json(&env, &[]);
    let web: Vec<&Value> = rules(&doc)
        .iter()
        .filter(|r| r["tool"] == "WebFetch")
        .collect();
    assert_eq!(web.len(), 1, "{doc:#}");
    let m = &web[0]["meta"];
    assert_eq!(m["cluster_fail_count"], 12, "{m:#}");
    assert_eq!(m["clusters"].as_array().map(Vec::len), Some(2), "{m:#}");
    assert_eq!(by_shape(&doc, "make deploy").len(), 1, "{doc:#}");
    assert_eq!(by_shape(&doc, "terraform").len(), 1, "{doc:#}");
    // No two candidates share a failure they fire on.
    assert_eq!(rules(&doc).len(), 3, "{doc:#}");
}
