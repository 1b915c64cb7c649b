//! Integration tests: `callus sync push` and `--db` on the reading commands, through the
//! real binary against a real `PostgreSQL` (see `sync/server.rs`), with stores filled by the
//! real hooks (`callus record`, `callus guard`).

mod reads;
mod server;
mod team;

use std::path::Path;

use serde_json::{Value, json};

use crate::common::{Env, json, stderr, stdout};
use server::server;

/// A fresh home whose runs give `psql` the server's password in `PGPASSWORD` (callus refuses
/// a password on its own command line).
fn team_env() -> Env {
    let mut env = Env::new();
    env.var("PGPASSWORD", server::PASSWORD);
    env
}

/// A Claude Code hook payload from the recorder's fixtures, re-aimed at one call.
fn event(kind: &str, id: &str, session: &str, command: &str) -> Value {
    let file = match kind {
        "PreToolUse" => "claude-pretooluse.json",
        "PostToolUse" => "claude-posttooluse-success.json",
        _ => "claude-posttoolusefailure.json",
    };
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/record")
        .join(file);
    let mut e: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    e["tool_use_id"] = json!(id);
    e["session_id"] = json!(session);
    e["tool_input"] = json!({ "command": command });
    e
}

/// Feed one event to the recorder hook.
fn record(env: &Env, e: &Value) {
    let out = env.run(&["record"], e.to_string().as_bytes());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// A failed Bash call.
fn fail(env: &Env, id: &str, command: &str, error: &str) {
    let mut e = event("PostToolUseFailure", id, "s-fail", command);
    e["error"] = json!(error);
    record(env, &e);
}

/// A successful Bash call.
fn succeed(env: &Env, id: &str, command: &str) {
    record(env, &event("PostToolUse", id, "s-ok", command));
}

/// One guarded call that the starter's force-push rule denies: one audit record.
fn guarded(env: &Env, id: &str) {
    let e = event("PreToolUse", id, "s-guard", "git push --force origin main");
    let out = env.run(&["guard"], e.to_string().as_bytes());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("deny"), "{}", stdout(&out));
}

const PSQL_ERROR: &str = "Exit code 2\npsql: error: connection to server on socket \
     \"/var/run/postgresql/.s.PGSQL.5432\" failed: No such file or directory";

/// `sync push --json` as `origin`; must succeed.
fn push(env: &Env, url: &str, origin: &str) -> Value {
    let out = env.run(
        &["sync", "push", "--db", url, "--origin", origin, "--json"],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    json(&out)
}

fn counts(summary: &Value, table: &str) -> (u64, u64, u64, u64) {
    let c = &summary[table];
    let n = |k: &str| c[k].as_u64().unwrap();
    (n("local"), n("inserted"), n("updated"), n("unchanged"))
}

fn psql_candidates(doc: &Value) -> Vec<Value> {
    doc["rules"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["any"][0] == r"^psql\b")
        .cloned()
        .collect()
}

/// The team-wide note: one stderr line naming the database, never its password.
fn assert_team_note(out: &std::process::Output, origins: u32) {
    let err = stderr(out);
    let note = err
        .lines()
        .find(|l| l.starts_with("callus: team-wide evidence from postgres://postgres@/"))
        .unwrap_or_else(|| panic!("no team-wide note: {err}"));
    assert!(note.contains(&format!("{origins} origin(s)")), "{note}");
    assert!(!err.contains(server::PASSWORD), "{err}");
}

#[test]
fn two_origins_reach_a_candidate_neither_reaches_alone() {
    let Some(pg) = server() else { return };
    let url = pg.create_db();
    let (alice, bob, lead) = (team_env(), team_env(), team_env());
    for (env, tag) in [(&alice, "a"), (&bob, "b")] {
        fail(
            env,
            &format!("toolu_{tag}1"),
            "psql -c 'select 1'",
            PSQL_ERROR,
        );
        fail(
            env,
            &format!("toolu_{tag}2"),
            "psql -c 'select 2'",
            PSQL_ERROR,
        );
        succeed(env, &format!("toolu_{tag}3"), "psql -h db -c 'select 3'");
        // Below --min-count 3 on each machine alone.
        let out = env.run(&["derive", "--json"], b"");
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert!(psql_candidates(&json(&out)).is_empty(), "{}", stdout(&out));
    }
    assert_eq!(
        counts(&push(&alice, &url, "alice@a"), "tool_calls"),
        (3, 3, 0, 0)
    );
    assert_eq!(
        counts(&push(&bob, &url, "bob@b"), "tool_calls"),
        (3, 3, 0, 0)
    );

    let out = lead.run(&["derive", "--db", &url, "--json"], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_team_note(&out, 2);
    let found = psql_candidates(&json(&out));
    assert_eq!(found.len(), 1, "{}", stdout(&out));
    assert_eq!(found[0]["meta"]["fail_count"], 4, "both machines' failures");
    assert_eq!(
        found[0]["meta"]["attempt_count"], 6,
        "and both machines' successes"
    );
    let id = found[0]["id"].as_str().unwrap();
    let out = lead.run(&["derive", "explain", id, "--db", &url, "--json"], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains(id), "{}", stdout(&out));

    let out = lead.run(&["record", "stats", "--db", &url, "--json"], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_team_note(&out, 2);
    let stats = json(&out);
    assert_eq!(
        (stats["calls"].as_u64(), stats["failures"].as_u64()),
        (Some(6), Some(4))
    );
    // The lead's own store was never created: the team copy was temporary.
    assert!(!lead.db().exists());
}

#[test]
fn pushing_twice_adds_nothing_and_a_settled_call_updates() {
    let Some(pg) = server() else { return };
    let url = pg.create_db();
    let env = team_env();
    record(&env, &event("PreToolUse", "toolu_slow", "s1", "make test"));
    fail(
        &env,
        "toolu_done",
        "ls /nope",
        "Exit code 2\nls: cannot access '/nope'",
    );
    guarded(&env, "toolu_guard");

    let first = push(&env, &url, "me@box");
    // The guard audits the call; only the recorder makes call rows.
    assert_eq!(counts(&first, "tool_calls"), (2, 2, 0, 0), "{first}");
    assert_eq!(counts(&first, "audit"), (1, 1, 0, 0), "{first}");
    let again = push(&env, &url, "me@box");
    for table in ["sessions", "tool_calls", "audit"] {
        let (local, inserted, updated, unchanged) = counts(&again, table);
        assert_eq!(
            (inserted, updated, unchanged),
            (0, 0, local),
            "{table}: {again}"
        );
    }
    let rows = |sql: &str| pg.psql(&url, sql);
    assert_eq!(rows("SELECT count(*) FROM callus.tool_calls"), "2");
    assert_eq!(rows("SELECT count(*) FROM callus.audit"), "1");
    let pending = "SELECT status FROM callus.tool_calls WHERE tool_use_id = 'toolu_slow'";
    assert_eq!(rows(pending), "pending");

    let mut done = event("PostToolUseFailure", "toolu_slow", "s1", "make test");
    done["error"] = json!("Exit code 2\nmake: *** [test] Error 1");
    record(&env, &done);
    let third = push(&env, &url, "me@box");
    assert_eq!(counts(&third, "tool_calls"), (2, 0, 1, 1), "{third}");
    assert_eq!(rows(pending), "failure");
    assert_eq!(rows("SELECT count(*) FROM callus.tool_calls"), "2");
    assert_eq!(
        rows("SELECT DISTINCT origin FROM callus.tool_calls"),
        "me@box",
        "every row carries the origin"
    );
}

#[test]
fn no_secret_reaches_the_team_store() {
    let Some(pg) = server() else { return };
    let url = pg.create_db();
    let env = team_env();
    fail(
        &env,
        "toolu_secret",
        "PGPASSWORD=hunter2-team-secret psql -h db -c 'select 1'",
        "Exit code 2\npsql: error: postgres://bob:s3cr3t-in-error@db/x: password authentication failed",
    );
    let e = event(
        "PreToolUse",
        "toolu_guard_secret",
        "s-guard",
        "GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789 git push --force origin main",
    );
    let out = env.run(&["guard"], e.to_string().as_bytes());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let summary = push(&env, &url, "me@box");
    assert_eq!(counts(&summary, "audit").1, 1, "{summary}");
    let dump = pg.dump(&url);
    assert!(
        dump.contains("PGPASSWORD=***"),
        "the redacted row arrived:\n{dump}"
    );
    for secret in [
        "hunter2-team-secret",
        "s3cr3t-in-error",
        "ghp_abcdefghijklmnop",
    ] {
        assert!(
            !dump.contains(secret),
            "{secret} reached PostgreSQL:\n{dump}"
        );
    }
    // The push's own password never lands in the data or the output either.
    assert!(!dump.contains(server::PASSWORD));
    assert!(!summary.to_string().contains(server::PASSWORD), "{summary}");
}

#[test]
fn report_and_prune_read_every_origins_firings_and_the_chains_stay_whole() {
    let Some(pg) = server() else { return };
    let url = pg.create_db();
    let (alice, bob, lead) = (team_env(), team_env(), team_env());
    guarded(&alice, "toolu_ga");
    guarded(&alice, "toolu_ga2");
    guarded(&bob, "toolu_gb");
    push(&alice, &url, "alice@a");
    push(&bob, &url, "bob@b");
    // Each origin's chain is whole in PostgreSQL: its own 1, 2, … from GENESIS.
    assert_eq!(
        pg.psql(&url, "SELECT origin || ':' || seq || ':' || (prev = 'GENESIS') FROM callus.audit ORDER BY origin, seq"),
        "alice@a:1:true\nalice@a:2:false\nbob@b:1:true"
    );

    let out = lead.run(&["guard", "prune", "--db", &url, "--json"], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_team_note(&out, 2);
    let prune = json(&out);
    let rule = prune["rules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "git-push-force-protected")
        .unwrap_or_else(|| panic!("{prune}"));
    assert_eq!(rule["count"], 3, "firings from both origins: {rule}");
    assert!(
        prune["store"]
            .as_str()
            .unwrap()
            .starts_with("postgres://postgres@/")
    );

    let out = lead.run(&["report", "--db", &url, "--json"], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_team_note(&out, 2);
    assert!(json(&out)["totals"].is_object(), "{}", stdout(&out));

    // Pushing left each local chain as it was.
    for env in [&alice, &bob] {
        let out = env.run(&["guard", "audit", "verify"], b"");
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
}

#[test]
fn a_restarted_chain_under_the_same_origin_is_refused_whole() {
    let Some(pg) = server() else { return };
    let url = pg.create_db();
    let (first, second) = (team_env(), team_env());
    guarded(&first, "toolu_one");
    push(&first, &url, "shared@box");
    guarded(&second, "toolu_two");
    fail(
        &second,
        "toolu_new",
        "ls /x",
        "Exit code 2\nls: cannot access '/x'",
    );
    let out = second.run(
        &["sync", "push", "--db", &url, "--origin", "shared@box"],
        b"",
    );
    assert_eq!(out.status.code(), Some(4), "{}", stdout(&out));
    let err = stderr(&out);
    assert!(err.contains("different audit record 1"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    // All or nothing: not even the new call went in.
    assert_eq!(
        pg.psql(
            &url,
            "SELECT count(*) FROM callus.tool_calls WHERE tool_use_id = 'toolu_new'"
        ),
        "0"
    );
    assert_eq!(pg.psql(&url, "SELECT count(*) FROM callus.audit"), "1");
    // Under its own origin it goes in beside the first chain.
    assert_eq!(counts(&push(&second, &url, "second@box"), "audit").1, 1);
}

#[test]
fn bad_credentials_and_an_unreachable_server_are_one_line_exit_4_without_the_password() {
    let Some(pg) = server() else { return };
    let url = pg.create_db();
    let env = team_env();
    fail(
        &env,
        "toolu_x",
        "ls /x",
        "Exit code 2\nls: cannot access '/x'",
    );
    let unreachable = "postgres://alice@127.0.0.1:1/team";
    for (db, secret) in [
        (url.as_str(), "wrong-pw-9d2c"),
        (unreachable, "s3cretpw-41"),
    ] {
        for args in [
            vec!["sync", "push", "--db", db],
            vec!["derive", "--db", db],
            vec!["record", "stats", "--db", db],
        ] {
            let mut cmd = env.cmd(&args);
            cmd.env("PGPASSWORD", secret);
            let out = crate::common::run_cmd(cmd, b"");
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(4), "{args:?}: {err}");
            assert_eq!(
                err.trim_end().lines().count(),
                1,
                "{args:?}: one line: {err}"
            );
            assert!(err.starts_with("callus: team store postgres://"), "{err}");
            assert!(!err.contains(secret), "{args:?} leaked the password: {err}");
            assert!(stdout(&out).is_empty());
        }
    }
    // Nothing was pushed with the wrong password.
    assert_eq!(
        pg.psql(&url, "SELECT to_regclass('callus.tool_calls') IS NULL"),
        "t"
    );
}

#[test]
fn a_password_on_the_command_line_is_refused_and_the_environment_works() {
    let Some(pg) = server() else { return };
    let url = pg.create_db();
    let name = url.split("@/").nth(1).unwrap().split('?').next().unwrap();
    let with_password = pg.url(name, server::PASSWORD);
    let env = Env::new();
    fail(
        &env,
        "toolu_argv",
        "ls /x",
        "Exit code 2\nls: cannot access '/x'",
    );
    for args in [
        vec!["sync", "push", "--db", with_password.as_str()],
        vec!["record", "stats", "--db", with_password.as_str()],
        vec!["derive", "--db", with_password.as_str()],
        vec!["guard", "prune", "--db", with_password.as_str()],
        vec!["report", "--db", with_password.as_str()],
    ] {
        let out = env.run(&args, b"");
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {err}");
        assert!(err.contains("PGPASSWORD"), "{err}");
        assert!(!err.contains(server::PASSWORD), "{err}");
    }
    let joined = format!("--db={with_password}");
    let out = env.run(&["sync", "push", &joined], b"");
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert_eq!(
        pg.psql(&url, "SELECT to_regclass('callus.tool_calls') IS NULL"),
        "t",
        "nothing was pushed"
    );
    // The same URL from the environment: no argv, and the push goes through.
    let mut cmd = env.cmd(&["sync", "push", "--json"]);
    cmd.env("CALLUS_SYNC_DB", &with_password);
    let out = crate::common::run_cmd(cmd, b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!stdout(&out).contains(server::PASSWORD));
}

#[test]
fn psql_missing_from_path_is_exit_3() {
    let mut env = team_env();
    fail(
        &env,
        "toolu_x",
        "ls /x",
        "Exit code 2\nls: cannot access '/x'",
    );
    let empty = tempfile::tempdir().unwrap();
    env.var("PATH", &empty.path().display().to_string());
    env.var("PGPASSWORD", "pw-never-shown");
    for args in [
        vec!["sync", "push", "--db", "postgres://u@db/team"],
        vec!["derive", "--db", "postgres://u@db/team"],
    ] {
        let out = env.run(&args, b"");
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{err}");
        assert!(err.contains("psql not found"), "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(!err.contains("pw-never-shown"), "{err}");
    }
}

#[test]
fn a_db_path_is_that_sqlite_store_and_push_needs_a_url() {
    let (machine, other) = (team_env(), team_env());
    fail(
        &machine,
        "toolu_x",
        "ls /x",
        "Exit code 2\nls: cannot access '/x'",
    );
    let db = machine.db().display().to_string();
    let out = other.run(&["record", "stats", "--db", &db, "--json"], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json(&out)["failures"], 1);
    assert!(!stderr(&out).contains("team-wide"));
    let out = machine.run(&["sync", "push", "--db", &db], b"");
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("expected a postgres://"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn an_empty_team_database_says_push_first() {
    let Some(pg) = server() else { return };
    let url = pg.create_db();
    let out = team_env().run(&["derive", "--db", &url], b"");
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("no team evidence"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn no_form_of_the_corpus_reaches_the_team_store() {
    let Some(pg) = server() else { return };
    let url = pg.create_db();
    let env = team_env();
    let forms = crate::record::redaction::forms();
    for (i, (_, _, text)) in forms.iter().enumerate() {
        fail(
            &env,
            &format!("toolu_c{i}"),
            text,
            &format!("Exit code 1\nerror: rejected {text}"),
        );
    }
    let summary = push(&env, &url, "me@box");
    assert_eq!(
        counts(&summary, "tool_calls").1,
        forms.len() as u64,
        "{summary}"
    );
    let dump = pg.dump(&url);
    let leaked: Vec<&str> = forms
        .iter()
        .filter(|(_, secret, _)| dump.contains(secret.as_str()))
        .map(|(kind, _, _)| kind.as_str())
        .collect();
    assert!(leaked.is_empty(), "reached PostgreSQL verbatim: {leaked:?}");
}

#[test]
fn the_team_store_anchors_each_origins_chain() {
    let Some(pg) = server() else { return };
    let url = pg.create_db();
    let env = team_env();
    for i in 0..3 {
        guarded(&env, &format!("toolu_anchor_{i}"));
    }
    let verify = |extra: &[&str]| {
        let mut args = vec!["guard", "audit", "verify", "--json", "--anchor", &url];
        args.extend_from_slice(extra);
        let out = env.run(&args, b"");
        (out.status.code(), json(&out))
    };
    // Nothing pushed yet: the team holds no record of this origin, so nothing vouches.
    let (code, v) = verify(&["--origin", "me@box"]);
    assert_eq!(
        (code, v["status"].as_str()),
        (Some(0), Some("unanchored")),
        "{v}"
    );
    push(&env, &url, "me@box");
    let (code, v) = verify(&["--origin", "me@box"]);
    assert_eq!(
        (code, v["status"].as_str()),
        (Some(0), Some("intact")),
        "{v}"
    );
    assert_eq!(v["anchor"]["seq"], 3);
    // Another origin's chain anchors nothing of this one.
    assert_eq!(
        verify(&["--origin", "someone@else"]).1["status"],
        "unanchored"
    );
    // Cut locally after the push: the team's copy says so.
    let conn = rusqlite::Connection::open(env.db()).unwrap();
    conn.execute("DELETE FROM audit WHERE seq = 3", []).unwrap();
    let (code, v) = verify(&["--origin", "me@box"]);
    assert_eq!(code, Some(1), "{v}");
    assert!(v["problem"].as_str().unwrap().contains("truncated"), "{v}");
}
