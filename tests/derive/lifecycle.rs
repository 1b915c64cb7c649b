//! The candidate lifecycle through the real binary: derive → `rules promote` → `guard check`
//! → `guard test`, with promote reading the window derive wrote and re-running the same
//! backtest; and a promoted candidate is not proposed again.

use serde_json::Value;

use super::support::{Row, derive, derive_json, insert};
use crate::common::{Env, json, stderr, stdout};

const FETCH_ERR: &str = "usage: fetch-tool.py [-h] --entity ENTITY\nfetch-tool.py: error: the following arguments are required: --entity";
const PSQL_ERR: &str =
    "psql: error: connection to server on socket \"/tmp/.s.PGSQL.5432\" failed: No such file";

/// July 2026 (derive's test window): fetch-tool fails without `--entity` behind varied
/// prefixes and works with it; bare psql fails and psql with a host works.
fn history(env: &Env) {
    let prefixes = ["", "cd repo && ", "FOO=1 ", "cd /work/x; "];
    let mut rows = Vec::new();
    for i in 0..20 {
        let p = prefixes[i as usize % prefixes.len()];
        let cmd = format!("{p}python3 scripts/fetch-tool.py --since {}d", i % 9 + 1);
        // Every other hour: the failures fall on two days (a tier above probabilistic
        // needs two sessions on two days).
        rows.push(Row::bash("failure", &cmd, FETCH_ERR, i * 2));
    }
    for i in 0..30 {
        let p = prefixes[i as usize % prefixes.len()];
        let cmd = format!("{p}python3 scripts/fetch-tool.py --entity e{i} --since 7d");
        rows.push(Row::bash("success", &cmd, "", 20 + i));
    }
    for i in 0..8 {
        rows.push(Row::bash(
            "failure",
            "cd db && psql -c 'select 1'",
            PSQL_ERR,
            60 + i,
        ));
    }
    for i in 0..4 {
        rows.push(Row::bash("success", "psql -h db -c 'select 1'", "", 70 + i));
    }
    insert(env, &rows);
}

fn candidates(env: &Env) -> Value {
    let text = std::fs::read_to_string(env.home_path().join("candidates.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn by_shape<'a>(doc: &'a Value, shape: &str) -> &'a Value {
    doc["rules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["meta"]["command_shape"] == shape)
        .unwrap_or_else(|| panic!("no {shape} candidate in {doc:#}"))
}

fn promote(env: &Env, id: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["rules", "promote", id, "--message", "pass --entity NAME"];
    args.extend_from_slice(extra);
    env.run(&args, b"")
}

#[test]
#[allow(clippy::many_single_char_names)] // o(utput), c(andidate), b(acktest), r(ule), m(eta)
fn derive_promote_check_and_test_agree_end_to_end() {
    let env = Env::new();
    history(&env);
    let out = derive(&env, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = candidates(&env);
    let c = by_shape(&doc, "python3 scripts/fetch-tool.py").clone();
    let id = c["id"].as_str().unwrap();
    // What promote reads: the candidate's own window, as derive wrote it.
    assert_eq!(c["meta"]["window"]["since"], "2026-07-01T00:00:00Z");
    assert_eq!(c["meta"]["window"]["until"], "2026-07-08T00:00:00Z");
    assert_eq!(doc["window"], c["meta"]["window"]);
    assert_eq!(c["meta"]["tier"], "deterministic");
    let b = &c["meta"]["backtest"];
    assert_eq!(
        (b["matched"].as_u64(), b["crossfire"].as_u64()),
        (Some(20), Some(0))
    );

    // Promote the candidate as it is, at its ceiling's neighbour (deny ≤ block).
    let o = promote(&env, id, &["--action", "deny"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let project = env.repo_path().join(".callus/rules.json");
    let rules: Value = serde_json::from_str(&std::fs::read_to_string(&project).unwrap()).unwrap();
    let r = &rules["rules"][0];
    assert_eq!(r["id"], id);
    assert_eq!(r["meta"]["evidence"]["source"], "candidate");
    assert_eq!(r["meta"]["window"], c["meta"]["window"]);

    // Re-patterning with the very same clause re-runs the backtest over the candidate's
    // window: one backtest, so the evidence is exactly derive's. (Without the window derive
    // wrote, promote would look at the days around today and find no call at all.)
    let unless: Vec<&str> = c["unless"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u.as_str().unwrap())
        .collect();
    let other = env.repo_path().join("other.json");
    let mut args = vec!["--action", "block", "--into", other.to_str().unwrap()];
    for u in &unless {
        args.extend(["--unless", u]);
    }
    let o = promote(&env, id, &args);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let again: Value = serde_json::from_str(&std::fs::read_to_string(&other).unwrap()).unwrap();
    let m = &again["rules"][0]["meta"];
    assert_eq!(m["evidence"]["source"], "backtest");
    assert_eq!(m["attempt_count"], b["matched"]);
    assert_eq!(m["fail_count"], b["failures"]);
    assert_eq!(m["fail_rate"], b["fail_rate"]);
    assert_eq!(m["evidence"]["crossfire"], b["crossfire"]);
    assert_eq!(m["evidence"]["sessions"], b["sessions"]);
    assert_eq!(m["tier"], c["meta"]["tier"]);
    assert_eq!(m["evidence"]["window"]["since"], "2026-07-01T00:00:00Z");

    // The reviewed file passes guard check and the guard decides by it.
    let o = env.run(&["guard", "check", project.to_str().unwrap()], b"");
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let o = env.run(
        &[
            "guard",
            "test",
            "--",
            "cd repo && python3 scripts/fetch-tool.py --since 2d",
        ],
        b"",
    );
    assert!(stdout(&o).contains("decision: deny"), "{}", stdout(&o));
    assert!(stdout(&o).contains(id), "{}", stdout(&o));
    let o = env.run(
        &[
            "guard",
            "test",
            "--",
            "python3 scripts/fetch-tool.py --entity acme",
        ],
        b"",
    );
    assert!(!stdout(&o).contains("decision: deny"), "{}", stdout(&o));
}

#[test]
fn a_promoted_candidate_is_not_proposed_again_and_leaves_the_candidate_file() {
    let env = Env::new();
    history(&env);
    assert!(derive(&env, &[]).status.success());
    let doc = candidates(&env);
    let id = by_shape(&doc, "python3 scripts/fetch-tool.py")["id"]
        .as_str()
        .unwrap()
        .to_string();
    let psql = by_shape(&doc, "psql")["id"].as_str().unwrap().to_string();
    let o = promote(&env, &id, &["--action", "nudge"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));

    // The next run leaves it out, says so, and retires the copy in the candidate file.
    let out = derive(&env, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("already promoted"), "{text}");
    assert!(text.contains(&id), "{text}");
    assert!(
        stderr(&out).contains("1 retired as promoted"),
        "{}",
        stderr(&out)
    );
    let doc = candidates(&env);
    let ids: Vec<&str> = doc["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [psql.as_str()], "only the unpromoted candidate stays");
    let listed = &doc["generated"]["already_promoted"][0];
    assert_eq!(listed["id"], id.as_str());
    assert!(
        listed["layer"]
            .as_str()
            .unwrap()
            .ends_with(".callus/rules.json"),
        "{listed}"
    );
    assert_eq!(listed["fail_count"], 20);
    // The candidate file still passes guard check.
    let path = env.home_path().join("candidates.json");
    let o = env.run(&["guard", "check", path.to_str().unwrap()], b"");
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    // --json alone agrees.
    let doc = derive_json(&env, &[]);
    assert!(
        doc["rules"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["id"] != id.as_str())
    );

    // Its evidence can still be explained (the window comes from the reviewed rule's meta).
    let o = env.run(&["derive", "explain", &id, "--json"], b"");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = json(&o);
    assert_eq!(r["failures"]["count"], 20);
    assert!(
        r["promoted_in"]
            .as_str()
            .unwrap()
            .ends_with(".callus/rules.json")
    );

    // The report's funnel replays what derive proposed in that week, promoted or not.
    let o = env.run(
        &[
            "report",
            "--since",
            "2026-07-01",
            "--until",
            "2026-07-08",
            "--json",
        ],
        b"",
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let f = &json(&o)["funnel"];
    assert_eq!(f["proposed"], 2);
    assert!(
        f["rows"][0]["top"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["id"] == id.as_str()),
        "{f:#}"
    );
}

/// Twelve of twelve failures, but all in one session on one day: one failing loop, not a
/// kind of call that fails. The tier is capped at probabilistic, so the ceiling is a nudge
/// and promoting at deny is refused; the same failures spread over two sessions on two days
/// grade deterministic.
#[test]
fn a_tier_above_probabilistic_needs_failures_in_two_sessions_on_two_days() {
    let rows = |spread: bool| -> Vec<Row> {
        (0..12)
            .map(|i| {
                let mut r = Row::bash(
                    "failure",
                    &format!("yarn test --filter unit{i}"),
                    "error Command failed with exit code 1.",
                    if spread { i * 3 } else { i },
                );
                r.session = if spread {
                    format!("s{}", i % 2)
                } else {
                    "one".into()
                };
                r
            })
            .chain(std::iter::once(Row::bash("success", "ls", "", 40)))
            .collect()
    };
    let one = Env::new();
    insert(&one, &rows(false));
    let out = derive(&one, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = candidates(&one);
    let c = by_shape(&doc, "yarn test");
    let m = &c["meta"];
    assert_eq!(
        (m["fail_count"].as_u64(), m["attempt_count"].as_u64()),
        (Some(12), Some(12))
    );
    assert_eq!(
        (m["failure_sessions"].as_u64(), m["failure_days"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(
        (m["tier"].as_str(), m["action_ceiling"].as_str()),
        (Some("probabilistic"), Some("nudge"))
    );
    let id = c["id"].as_str().unwrap().to_string();
    let o = promote(&one, &id, &["--action", "deny"]);
    assert_ne!(o.status.code(), Some(0), "{}", stdout(&o));
    // `guard check` grades the candidate file the same way: it passes as written.
    let check = one.run(
        &[
            "guard",
            "check",
            one.home_path().join("candidates.json").to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(check.status.code(), Some(0), "{}", stdout(&check));

    let spread = Env::new();
    insert(&spread, &rows(true));
    assert!(derive(&spread, &[]).status.success());
    let doc = candidates(&spread);
    let m = &by_shape(&doc, "yarn test")["meta"];
    assert_eq!(
        (m["failure_sessions"].as_u64(), m["failure_days"].as_u64()),
        (Some(2), Some(2))
    );
    assert_eq!(m["tier"], "deterministic");
}

/// A tool's failures that say their input was over the size limit make a rule conditioned
/// on the file's size (`file_larger_than` the largest Read that succeeded), not one that fires
/// on every Read: replayed, it fires on the over-limit failures only, never on the missing
/// file or the successes. Without recorded sizes nothing is learned and the rule stays
/// unconditioned.
#[test]
fn an_over_limit_read_cluster_is_conditioned_on_the_file_size() {
    let err =
        "File content (31000 tokens) exceeds maximum allowed tokens (25000). Use offset and limit";
    let build = |with_facts: bool| {
        let env = Env::new();
        let mut rows: Vec<Row> = (0..4)
            .map(|i| {
                let mut r = Row::tool("Read", "failure", err, i * 13);
                r.command = format!("/repo/big{i}.log");
                r
            })
            .collect();
        rows.extend((0..3).map(|i| {
            let mut r = Row::tool("Read", "failure", "File does not exist.", 60 + i);
            r.command = format!("/repo/missing{i}.md");
            r
        }));
        rows.extend((0..20).map(|i| {
            let mut r = Row::tool("Read", "success", "", 70 + i);
            r.command = format!("/repo/src/f{i}.rs");
            r
        }));
        insert(&env, &rows);
        if with_facts {
            let conn = rusqlite::Connection::open(env.db()).unwrap();
            conn.execute_batch(
                "UPDATE tool_calls SET facts = '{\"over_limit\": true}' \
                   WHERE status = 'failure' AND error LIKE '%exceeds maximum%';
                 UPDATE tool_calls SET facts = json_object('bytes', 1000 + started_ms % 5000) \
                   WHERE status = 'success';",
            )
            .unwrap();
        }
        let out = derive(&env, &["--keep-anecdotal"]);
        assert!(out.status.success(), "{}", stderr(&out));
        let doc = candidates(&env);
        let c = doc["rules"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| {
                c["meta"]["error_signature"]
                    .as_str()
                    .is_some_and(|s| s.contains("exceeds maximum"))
            })
            .cloned()
            .unwrap_or_else(|| panic!("no over-limit candidate in {doc:#}"));
        (env, c)
    };
    let (env, c) = build(true);
    let bytes = c["when"]["file_larger_than"]["bytes"].as_u64().unwrap();
    let conn = rusqlite::Connection::open(env.db()).unwrap();
    let largest: i64 = conn
        .query_row(
            "SELECT max(json_extract(facts, '$.bytes')) FROM tool_calls WHERE status = 'success'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(bytes, largest as u64);
    assert_eq!(c["when"]["file_larger_than"]["field"], "file_path");
    let m = &c["meta"];
    assert_eq!(m["kind"], "over-size");
    let b = &m["backtest"];
    assert_eq!(
        (
            b["matched"].as_u64(),
            b["failures"].as_u64(),
            b["crossfire"].as_u64()
        ),
        (Some(4), Some(4), Some(0)),
        "{m:#}"
    );
    // A learned threshold is a lower bound: never above a nudge, and graded with the
    // --min-count floor it states.
    assert_eq!(m["tier"], "probabilistic");
    assert_eq!(m["threshold_learned"], true);
    assert_eq!(m["min_attempts"], 3);

    let (_, plain) = build(false);
    assert!(plain.get("when").is_none(), "{plain:#}");
    assert!(plain["meta"]["backtest"]["matched"].as_u64().unwrap() > 4);
}

/// A program the shell could not find in some sessions makes a rule conditioned on the
/// program being absent from PATH: replayed, it fires in the sessions where `gh` was missing
/// and spares the sessions where it ran.
#[test]
fn a_program_missing_in_some_sessions_is_conditioned_on_path() {
    let env = Env::new();
    let mut rows: Vec<Row> = (0..4)
        .map(|i| {
            let mut r = Row::bash(
                "failure",
                &format!("gh pr view {i}"),
                "Exit code 127\nbash: line 1: gh: command not found",
                i * 9,
            );
            r.session = format!("bare{}", i % 2);
            r
        })
        .collect();
    rows.extend((0..12).map(|i| {
        let mut r = Row::bash("success", &format!("gh pr list --limit {i}"), "", 50 + i);
        r.session = "installed".into();
        r
    }));
    insert(&env, &rows);
    assert!(derive(&env, &[]).status.success());
    let doc = candidates(&env);
    let c = by_shape(&doc, "gh");
    assert_eq!(c["when"]["program_absent"], "gh", "{c:#}");
    let m = &c["meta"];
    assert_eq!(m["kind"], "program-absent");
    let b = &m["backtest"];
    assert_eq!(
        (
            b["matched"].as_u64(),
            b["failures"].as_u64(),
            b["crossfire"].as_u64()
        ),
        (Some(4), Some(4), Some(0)),
        "{m:#}"
    );
    assert_eq!(m["min_attempts"], 3);
    // Re-patterned at promotion, the rule is backtested again as the guard would enforce
    // it: its condition answered from the store, so the sessions where gh ran are spared.
    let id = c["id"].as_str().unwrap().to_string();
    let o = promote(
        &env,
        &id,
        &["--action", "monitor", "--pattern", r"^gh\s+pr\b"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        !stderr(&o).contains("matches no recorded call"),
        "{}",
        stderr(&o)
    );
    let rules: Value = serde_json::from_str(
        &std::fs::read_to_string(env.repo_path().join(".callus/rules.json")).unwrap(),
    )
    .unwrap();
    let promoted = &rules["rules"][0]["meta"];
    assert_eq!(
        (
            promoted["attempt_count"].as_u64(),
            promoted["fail_count"].as_u64()
        ),
        (Some(4), Some(4)),
        "{promoted:#}"
    );
    // Prune replays it the same way: it fired on the 4 failures, never on the successes.
    let o = env.run(&["guard", "prune", "--days", "365", "--json"], b"");
    let report = crate::common::json(&o);
    let row = report["rules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == id.as_str())
        .unwrap_or_else(|| panic!("{report:#}"));
    assert_eq!(
        (
            row["matched"]["matched"].as_u64(),
            row["matched"]["failures"].as_u64()
        ),
        (Some(4), Some(4)),
        "{row:#}"
    );
}

/// One Codex rollout (old `shell` tool, argv arrays) of session `n` in `sandbox`, on July
/// `day` 2026: `npm install` `times` times, failing with `error` (exit 1) or succeeding.
fn rollout(
    dir: &std::path::Path,
    n: u32,
    sandbox: &str,
    day: u32,
    times: u32,
    error: Option<&str>,
) {
    let id = format!("0199b000-0000-7000-8000-{n:012}");
    let ts = |s: u32| format!("2026-07-{day:02}T10:{:02}:{:02}.000Z", s / 60, s % 60);
    let mut lines = vec![
        serde_json::json!({"timestamp": ts(0), "type": "session_meta", "payload": {
            "id": id, "timestamp": ts(0), "cwd": "/home/dev/app",
            "originator": "codex_cli_rs", "cli_version": "0.41.0"}}),
        serde_json::json!({"timestamp": ts(1), "type": "turn_context", "payload": {
            "cwd": "/home/dev/app", "approval_policy": "on-request",
            "sandbox_policy": {"mode": sandbox}, "model": "gpt-5-codex"}}),
    ];
    for i in 0..times {
        let call = format!("call_{n}_{i}");
        lines.push(serde_json::json!({"timestamp": ts(10 + i * 10), "type": "response_item",
            "payload": {"type": "function_call", "name": "shell", "call_id": call,
                "arguments": serde_json::json!({"command": ["bash", "-lc", "npm install --no-audit"],
                    "workdir": "/home/dev/app"}).to_string()}}));
        let (text, code) = error.map_or(("added 12 packages\n", 0), |e| (e, 1));
        lines.push(
            serde_json::json!({"timestamp": ts(15 + i * 10), "type": "response_item",
            "payload": {"type": "function_call_output", "call_id": call,
                "output": serde_json::json!({"output": text,
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

#[test]
fn a_command_failing_only_in_one_sandbox_is_conditioned_on_it() {
    let env = Env::new();
    let dir = env.repo_path().join("rollouts");
    std::fs::create_dir_all(&dir).unwrap();
    let erofs = "npm ERR! code EROFS\nnpm ERR! syscall mkdir\nnpm ERR! path /home/dev/.npm/_cacache\nnpm ERR! errno -30";
    for (n, day) in [(1, 1), (2, 2), (3, 3)] {
        rollout(&dir, n, "read-only", day, 2, Some(erofs));
    }
    for (n, day) in [(4, 2), (5, 4)] {
        rollout(&dir, n, "workspace-write", day, 4, None);
    }
    let out = env.run(&["record", "import", dir.to_str().unwrap()], b"");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(derive(&env, &[]).status.success());
    let doc = candidates(&env);
    let c = by_shape(&doc, "npm install");
    // Unconditioned, the rule fired on 6 failures and 8 successes; the failures' sessions
    // all ran read-only, the successes' none did.
    assert_eq!(
        c["when"]["sandbox"],
        serde_json::json!(["read-only"]),
        "{c:#}"
    );
    let b = &c["meta"]["backtest"];
    assert_eq!(
        (
            b["matched"].as_u64(),
            b["failures"].as_u64(),
            b["crossfire"].as_u64()
        ),
        (Some(6), Some(6), Some(0)),
        "{c:#}"
    );
    // guard check --history replays it the same way.
    let path = env.home_path().join("candidates.json");
    let row = super::support::replayed_rule(&env, &path, &c["id"]);
    assert_eq!(row["conditions"], serde_json::json!(["sandbox"]), "{row:#}");
    assert_eq!(
        (row["fired"].as_u64(), row["succeeded"].as_u64()),
        (Some(6), Some(0)),
        "{row:#}"
    );
}
