//! The team store for a real team (issue 18), against the real `PostgreSQL` of `server.rs`:
//! origins bound to roles, migrations from the previous release's schema, windowed reads,
//! NUL bytes, an interrupted push, `sync status` and `guard audit verify --db`.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::server::{self, Role, Server, server};
use super::{PSQL_ERROR, counts, fail, guarded, push, succeed, team_env};
use crate::common::{Env, json, run_cmd, stderr, stdout};

/// The released schema (before migrations), verbatim.
const SCHEMA_V1: &str = include_str!("../fixtures/sync/schema-v1.sql");

/// A home whose runs authenticate as `role`.
fn role_env(role: &Role) -> Env {
    let mut env = Env::new();
    env.var("PGPASSWORD", &role.password);
    env
}

/// `sync init --json` as the superuser (the schema's owner), granting `roles`.
fn init(url: &str, roles: &[&Role]) -> Value {
    let mut args = vec!["sync", "init", "--db", url, "--json"];
    for r in roles {
        args.extend(["--grant", r.name.as_str()]);
    }
    let out = team_env().run(&args, b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    json(&out)
}

/// Fill a local store with `n` successful calls, `age_ms` old, tool ids `prefix0…`.
fn bulk(env: &Env, prefix: &str, n: u64, age_ms: i64, command: &str) {
    let conn = rusqlite::Connection::open(env.db()).unwrap();
    let now = chrono::Utc::now().timestamp_millis();
    conn.execute(
        "INSERT INTO tool_calls (tool_use_id, host, source, tool, status, started_ms, ended_ms, command, error)
         WITH RECURSIVE k(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM k WHERE i + 1 < ?1)
         SELECT ?2 || i, 'claude-code', 'hook', 'Bash', 'failure', ?3 - i, ?3 - i, ?4, ?5 FROM k",
        rusqlite::params![n as i64, prefix, now - age_ms, command, PSQL_ERROR],
    )
    .unwrap();
}

/// Wait until `sql` (in `url`) returns `want`.
fn wait_for(pg: &Server, url: &str, sql: &str, want: &str) {
    let start = Instant::now();
    while pg.psql(url, sql) != want {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "waited 30 s for {sql} = {want}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_spoofed_origin_is_refused_and_row_level_security_holds() {
    let Some(pg) = server() else { return };
    let url = pg.create_db();
    let (alice, bob) = (pg.create_role(&url, "alice"), pg.create_role(&url, "bob"));
    init(&url, &[&alice, &bob]);
    let (a, b) = (role_env(&alice), role_env(&bob));
    fail(&a, "toolu_a1", "psql -c 'select 1'", PSQL_ERROR);
    fail(
        &b,
        "toolu_b1",
        "ls /nope",
        "Exit code 2\nls: cannot access '/nope'",
    );
    let a_url = pg.url_as(&url, &alice);
    let b_url = pg.url_as(&url, &bob);
    assert_eq!(counts(&push(&a, &a_url, "alice@a"), "tool_calls").1, 1);

    // Bob claims alice's origin: refused, on one line, before any row is written.
    let out = b.run(
        &["sync", "push", "--db", &b_url, "--origin", "alice@a"],
        b"",
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(
        err.contains(&format!(
            "origin \"alice@a\" belongs to the PostgreSQL role \"{}\", and this push runs as \"{}\"",
            alice.name, bob.name
        )),
        "{err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert_eq!(
        pg.psql(
            &url,
            "SELECT count(*) FROM callus.tool_calls WHERE tool_use_id = 'toolu_b1'"
        ),
        "0"
    );
    // The table owner is held to the binding too (it bypasses RLS, not the push's check).
    let owner = team_env();
    fail(
        &owner,
        "toolu_o1",
        "ls /x",
        "Exit code 2\nls: cannot access '/x'",
    );
    let out = owner.run(&["sync", "push", "--db", &url, "--origin", "alice@a"], b"");
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    // Under an origin of his own, bob's push goes in and binds it to him.
    assert_eq!(counts(&push(&b, &b_url, "bob@b"), "tool_calls").1, 1);
    assert_eq!(
        pg.psql(
            &url,
            "SELECT origin || '=' || role FROM callus.origins ORDER BY origin"
        ),
        format!("alice@a={}\nbob@b={}", alice.name, bob.name)
    );

    // Row-level security: whatever client bob uses, alice's rows are not his to write.
    let insert = "INSERT INTO callus.tool_calls (origin, tool_use_id, host, source, tool, status) \
                  VALUES ('alice@a', 'forged', 'claude-code', 'hook', 'Bash', 'success')";
    let refused = pg.psql_as(&url, &bob, insert).unwrap_err();
    assert!(refused.contains("row-level security"), "{refused}");
    let steal = "UPDATE callus.origins SET role = current_user WHERE origin = 'alice@a'";
    assert_eq!(pg.psql_as(&url, &bob, steal).as_deref(), Ok("UPDATE 0"));
    let rewrite = "UPDATE callus.tool_calls SET status = 'success' WHERE origin = 'alice@a'";
    assert_eq!(pg.psql_as(&url, &bob, rewrite).as_deref(), Ok("UPDATE 0"));
    assert_eq!(
        pg.psql(
            &url,
            "SELECT role FROM callus.origins WHERE origin = 'alice@a'"
        ),
        alice.name,
        "the binding did not move"
    );
    assert_eq!(
        pg.psql(
            &url,
            "SELECT status FROM callus.tool_calls WHERE origin = 'alice@a'"
        ),
        "failure",
        "alice's row did not change"
    );
    // Bob still reads everyone's evidence: the team-wide derive sees both origins.
    let out = b.run(&["record", "stats", "--db", &b_url, "--json"], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json(&out)["calls"], 2);
}

#[test]
fn a_database_at_the_previous_schema_upgrades() {
    let Some(pg) = server() else { return };
    let url = pg.create_db();
    pg.psql(&url, SCHEMA_V1);
    // What the previous release pushed: an origin's calls, a session and its audit chain.
    let old = team_env();
    guarded(&old, "toolu_g1");
    guarded(&old, "toolu_g2");
    let local = rusqlite::Connection::open(old.db()).unwrap();
    let mut stmt = local
        .prepare("SELECT seq, ts_ms, tool_use_id, session_id, record, prev, hash FROM audit ORDER BY seq")
        .unwrap();
    let rows: Vec<(i64, i64, String, String, String, String, String)> = stmt
        .query_map([], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
                r.get(6)?,
            ))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(rows.len(), 2);
    let q = |s: &str| format!("'{}'", s.replace('\'', "''"));
    for (seq, ts, id, session, record, prev, hash) in &rows {
        pg.psql(
            &url,
            &format!(
                "INSERT INTO callus.audit VALUES ('old@box', {seq}, {ts}, {}, {}, {}, {}, {})",
                q(id),
                q(session),
                q(record),
                q(prev),
                q(hash)
            ),
        );
    }
    pg.psql(
        &url,
        "INSERT INTO callus.tool_calls (origin, tool_use_id, host, source, tool, status, started_ms, command) \
         VALUES ('old@box', 'toolu_old', 'claude-code', 'hook', 'Bash', 'failure', 1, 'ls /x'); \
         INSERT INTO callus.sessions (origin, id, host, source) VALUES ('old@box', 's-old', 'claude-code', 'hook')",
    );

    // This callus neither writes to an old schema nor upgrades it behind the owner's back.
    let newer = team_env();
    fail(
        &newer,
        "toolu_new",
        "ls /y",
        "Exit code 2\nls: cannot access '/y'",
    );
    let out = newer.run(&["sync", "push", "--db", &url, "--origin", "new@box"], b"");
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("the team schema is version 1, older than this callus writes (version 2): run `callus sync init"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        pg.psql(&url, "SELECT to_regclass('callus.origins') IS NULL"),
        "t"
    );
    // Reading an old schema works: the evidence tables are the same.
    let out = newer.run(&["record", "stats", "--db", &url, "--json"], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json(&out)["calls"], 1);

    let up = init(&url, &[]);
    assert_eq!(
        (up["from"].as_u64(), up["to"].as_u64()),
        (Some(1), Some(2)),
        "{up}"
    );
    assert_eq!(
        pg.psql(&url, "SELECT value FROM callus.meta WHERE key = 'schema'"),
        "2"
    );
    assert_eq!(
        pg.psql(&url, "SELECT origin || '=' || role FROM callus.origins"),
        "old@box=postgres",
        "pushed origins are bound to the upgrading role"
    );
    assert_eq!(
        pg.psql(
            &url,
            "SELECT seq || ':' || hash FROM callus.anchors WHERE origin = 'old@box'"
        ),
        format!("2:{}", rows[1].6),
        "the head already pushed is anchored"
    );
    assert_eq!(
        pg.psql(&url, "SELECT (SELECT count(*) FROM callus.tool_calls) || '/' || (SELECT count(*) FROM callus.audit) || '/' || (SELECT count(*) FROM callus.sessions)"),
        "1/2/1",
        "no row lost"
    );
    // Idempotent: a second init changes nothing.
    let again = init(&url, &[]);
    assert_eq!(
        (again["from"].as_u64(), again["to"].as_u64()),
        (Some(2), Some(2))
    );

    // The upgraded schema is the one a fresh init builds.
    let fresh = pg.create_db();
    init(&fresh, &[]);
    for sql in [
        "SELECT table_name || '.' || column_name || ':' || data_type || ':' || is_nullable \
         FROM information_schema.columns WHERE table_schema = 'callus' ORDER BY table_name, ordinal_position",
        "SELECT tablename || '.' || policyname || ':' || cmd FROM pg_policies WHERE schemaname = 'callus' ORDER BY 1",
        "SELECT indexdef FROM pg_indexes WHERE schemaname = 'callus' ORDER BY indexname",
        "SELECT relname || ':' || relrowsecurity FROM pg_class WHERE relnamespace = 'callus'::regnamespace AND relkind = 'r' ORDER BY 1",
    ] {
        assert_eq!(pg.psql(&url, sql), pg.psql(&fresh, sql), "{sql}");
    }
    // Every local column reaches the team: the team tables mirror a fresh local store.
    let local_cols: Vec<String> = ["sessions", "tool_calls", "audit"]
        .iter()
        .flat_map(|t| {
            let mut s = local
                .prepare(&format!("SELECT name FROM pragma_table_info('{t}')"))
                .unwrap();
            let names: Vec<String> = s
                .query_map([], |r| r.get::<_, String>(0))
                .unwrap()
                .map(|n| format!("{t}.{}", n.unwrap()))
                .collect();
            std::iter::once(format!("{t}.origin"))
                .chain(names)
                .collect::<Vec<_>>()
        })
        .collect();
    let team_cols = pg.psql(
        &fresh,
        "SELECT table_name || '.' || column_name FROM information_schema.columns WHERE table_schema = 'callus' \
         AND table_name IN ('sessions', 'tool_calls', 'audit') \
         ORDER BY array_position(ARRAY['sessions', 'tool_calls', 'audit']::text[], table_name::text), ordinal_position",
    );
    assert_eq!(team_cols, local_cols.join("\n"));

    // After the upgrade: pushes go in, the old chain verifies against its anchor, and a
    // schema newer than this callus is refused by every command.
    assert_eq!(counts(&push(&newer, &url, "new@box"), "tool_calls").1, 1);
    let out = newer.run(
        &[
            "guard", "audit", "verify", "--db", &url, "--origin", "old@box", "--json",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert_eq!(json(&out)["origins"][0]["status"], "intact");
    pg.psql(
        &url,
        "UPDATE callus.meta SET value = '3' WHERE key = 'schema'",
    );
    for args in [
        vec!["sync", "push", "--db", url.as_str(), "--origin", "new@box"],
        vec!["sync", "init", "--db", url.as_str()],
        vec!["derive", "--db", url.as_str()],
    ] {
        let out = newer.run(&args, b"");
        assert_eq!(out.status.code(), Some(4), "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("newer than this callus"),
            "{}",
            stderr(&out)
        );
    }
}

#[test]
fn a_nul_byte_pushes_and_pushes_again_unchanged() {
    let Some(pg) = server() else { return };
    let url = pg.create_db();
    let env = team_env();
    fail(
        &env,
        "toolu_nul",
        "printf 'a\u{0}b'",
        "Exit code 1\nbad\u{0}byte",
    );
    fail(
        &env,
        "toolu_nul2",
        "ls /x",
        "Exit code 2\nls: cannot access '/x'",
    );
    let conn = rusqlite::Connection::open(env.db()).unwrap();
    conn.execute_batch(
        "UPDATE tool_calls SET command = 'echo a' || char(0) || 'b', error = 'x' || char(0) \
         WHERE tool_use_id = 'toolu_nul2'",
    )
    .unwrap();
    let n: i64 = conn
        .query_row(
            "SELECT count(*) FROM tool_calls WHERE instr(command, char(0)) > 0",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(n >= 1, "the local store holds a NUL byte");
    let out = env.run(
        &[
            "sync",
            "push",
            "--db",
            &url,
            "--origin",
            "me@box",
            "--json",
            "--progress",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let first = json(&out);
    assert_eq!(counts(&first, "tool_calls"), (2, 2, 0, 0), "{first}");
    let total = counts(&first, "sessions").0 + 2;
    assert!(
        stderr(&out).contains(&format!("callus: push: rows sent {total}/{total}")),
        "progress ends at the total: {}",
        stderr(&out)
    );
    assert_eq!(
        pg.psql(
            &url,
            "SELECT command || '|' || error FROM callus.tool_calls WHERE tool_use_id = 'toolu_nul2'"
        ),
        "echo a\u{2400}b|x\u{2400}"
    );
    let again = push(&env, &url, "me@box");
    assert_eq!(counts(&again, "tool_calls"), (2, 0, 0, 2), "{again}");
    // Without --progress and not on a terminal: no progress lines.
    let out = env.run(&["sync", "push", "--db", &url, "--origin", "me@box"], b"");
    assert!(!stderr(&out).contains("rows sent"), "{}", stderr(&out));
}

#[test]
fn a_push_killed_midway_resumes_with_exact_totals() {
    let Some(pg) = server() else { return };
    let url = pg.create_db();
    let env = team_env();
    fail(
        &env,
        "toolu_first",
        "ls /x",
        "Exit code 2\nls: cannot access '/x'",
    );
    assert_eq!(
        counts(&push(&env, &url, "me@box"), "tool_calls"),
        (1, 1, 0, 0)
    );
    let n: u64 = 40_000;
    bulk(&env, "bulk_", n, 3_600_000, "psql -c 'select 1'");

    // Hold the team table so the push stops midway, with its rows in flight; then kill it.
    let hold = pg.hold(
        &url,
        "LOCK TABLE callus.tool_calls IN ACCESS EXCLUSIVE MODE",
    );
    let mut cmd = env.cmd(&[
        "sync",
        "push",
        "--db",
        &url,
        "--origin",
        "me@box",
        "--progress",
    ]);
    cmd.stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut child = cmd.spawn().unwrap();
    wait_for(
        pg,
        &url,
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() \
         AND application_name = 'callus' AND wait_event_type = 'Lock'",
        "1",
    );
    std::thread::sleep(Duration::from_millis(300));
    child.kill().unwrap();
    let status = child.wait().unwrap();
    assert!(!status.success(), "the push was killed, not finished");
    hold.release();
    wait_for(
        pg,
        &url,
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'callus'",
        "0",
    );
    assert_eq!(
        pg.psql(&url, "SELECT count(*) FROM callus.tool_calls"),
        "1",
        "the killed push committed nothing"
    );

    let resumed = push(&env, &url, "me@box");
    assert_eq!(
        counts(&resumed, "tool_calls"),
        (n + 1, n, 0, 1),
        "{resumed}"
    );
    assert_eq!(
        pg.psql(
            &url,
            "SELECT count(*) || '/' || count(DISTINCT (origin, tool_use_id)) FROM callus.tool_calls"
        ),
        format!("{}/{}", n + 1, n + 1),
        "exact totals, no duplicates"
    );
    assert_eq!(
        counts(&push(&env, &url, "me@box"), "tool_calls"),
        (n + 1, 0, 0, n + 1)
    );
}

/// The numbers in the team-wide note: (calls moved, team calls).
fn moved(out: &std::process::Output) -> (u64, u64) {
    let err = stderr(out);
    let note = err
        .lines()
        .find(|l| l.starts_with("callus: team-wide evidence from"))
        .unwrap_or_else(|| panic!("no team-wide note: {err}"));
    let (_, rest) = note
        .split_once(" row(s) moved (")
        .unwrap_or_else(|| panic!("{note}"));
    let mut words = rest.split(' ');
    let calls = words.next().unwrap().parse().unwrap();
    let team = words.nth(3).unwrap().parse().unwrap();
    (calls, team)
}

#[test]
fn windowed_reads_move_only_the_window_and_agree_with_a_whole_copy() {
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
    }
    // Alice's history: 300 old failures of the same kind, 40 days back.
    bulk(&alice, "old_", 300, 40 * 86_400_000, "psql -c 'select 9'");
    push(&alice, &url, "alice@a");
    push(&bob, &url, "bob@b");

    let derive = |since: &str| {
        let out = lead.run(&["derive", "--since", since, "--db", &url, "--json"], b"");
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        out
    };
    let week = derive("7d");
    assert_eq!(moved(&week), (6, 306), "{}", stderr(&week));
    assert!(stderr(&week).contains("2 origin(s)"), "{}", stderr(&week));
    let found = super::psql_candidates(&json(&week));
    assert_eq!(found.len(), 1, "{}", stdout(&week));
    assert_eq!(
        (
            found[0]["meta"]["fail_count"].as_u64(),
            found[0]["meta"]["attempt_count"].as_u64()
        ),
        (Some(4), Some(6)),
        "neither origin alone reaches --min-count 3; together they do"
    );
    let all = derive("60d");
    assert_eq!(moved(&all), (306, 306));
    assert_eq!(
        super::psql_candidates(&json(&all))[0]["meta"]["fail_count"],
        304
    );

    // The same window over a whole copy of the same rows gives the same candidates.
    let whole = team_env();
    let conn = rusqlite::Connection::open({
        fail(&whole, "toolu_seed", "true", "Exit code 1\nx");
        whole.db()
    })
    .unwrap();
    conn.execute("DELETE FROM tool_calls", []).unwrap();
    drop(conn);
    for env in [&alice, &bob] {
        let src = env.db().display().to_string();
        let c = rusqlite::Connection::open(whole.db()).unwrap();
        c.execute("ATTACH ?1 AS src", [&src]).unwrap();
        c.execute(
            "INSERT OR IGNORE INTO tool_calls SELECT * FROM src.tool_calls",
            [],
        )
        .unwrap();
    }
    let out = whole.run(&["derive", "--since", "7d", "--json"], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let strip = |doc: &Value| -> Vec<Value> {
        super::psql_candidates(doc)
            .into_iter()
            .map(|c| json!([c["id"], c["meta"]["fail_count"], c["meta"]["attempt_count"]]))
            .collect()
    };
    assert_eq!(strip(&json(&out)), strip(&json(&week)));

    let stats = |args: &[&str]| {
        let mut a = vec!["record", "stats", "--db", url.as_str(), "--json"];
        a.extend_from_slice(args);
        let mut cmd = lead.cmd(&a);
        cmd.env("CALLUS_PROGRESS", "1");
        let out = run_cmd(cmd, b"");
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        out
    };
    let out = stats(&["--since", "7d"]);
    assert_eq!(moved(&out).0, 6);
    assert_eq!(json(&out)["calls"], 6);
    assert!(
        stderr(&out).contains("callus: reading the team store"),
        "{}",
        stderr(&out)
    );
    assert_eq!(json(&stats(&[]))["calls"], 306);
    let out = lead.run(&["report", "--since", "7d", "--db", &url, "--json"], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(moved(&out).0, 6);
}

#[test]
fn sync_status_shows_pushed_pending_and_each_origins_anchor() {
    let Some(pg) = server() else { return };
    let url = pg.create_db();
    let env = team_env();
    guarded(&env, "toolu_g1");
    guarded(&env, "toolu_g2");
    fail(
        &env,
        "toolu_f1",
        "ls /x",
        "Exit code 2\nls: cannot access '/x'",
    );
    let status = |env: &Env| {
        let out = env.run(
            &[
                "sync", "status", "--db", &url, "--origin", "me@box", "--json",
            ],
            b"",
        );
        (out.status.code(), json(&out))
    };
    let (code, before) = status(&env);
    assert_eq!(code, Some(0), "{before}");
    assert_eq!(before["pending"]["tool_calls"], 1, "{before}");
    assert_eq!(before["pending"]["audit"], 2, "{before}");
    assert_eq!(
        before["origins"],
        json!([]),
        "a dry run leaves nothing behind"
    );
    assert_eq!(
        pg.psql(&url, "SELECT to_regclass('callus.meta') IS NULL"),
        "t"
    );

    push(&env, &url, "me@box");
    let (_, after) = status(&env);
    assert_eq!(
        (
            after["pending"]["tool_calls"].as_u64(),
            after["pending"]["audit"].as_u64()
        ),
        (Some(0), Some(0)),
        "{after}"
    );
    assert_eq!(after["schema_version"], 2);
    let me = &after["origins"][0];
    let head = pg.psql(&url, "SELECT hash FROM callus.audit WHERE seq = 2");
    assert_eq!(
        (
            me["origin"].as_str(),
            me["role"].as_str(),
            me["tool_calls"].as_u64(),
            me["head_seq"].as_i64()
        ),
        (Some("me@box"), Some("postgres"), Some(1), Some(2)),
        "{me}"
    );
    assert_eq!(me["anchor"], format!("2:{head}"));

    fail(
        &env,
        "toolu_f2",
        "ls /y",
        "Exit code 2\nls: cannot access '/y'",
    );
    let (_, later) = status(&env);
    assert_eq!(later["pending"]["tool_calls"], 1, "{later}");
    let out = env.run(&["sync", "status", "--db", &url, "--origin", "me@box"], b"");
    assert!(
        stdout(&out).contains("pending: 1 tool call(s), 0 audit record(s)"),
        "{}",
        stdout(&out)
    );

    // Another role's origin: status says the push would be refused, exit 1.
    let eve = pg.create_role(&url, "eve");
    init(&url, &[&eve]);
    let e = role_env(&eve);
    fail(
        &e,
        "toolu_e1",
        "ls /z",
        "Exit code 2\nls: cannot access '/z'",
    );
    let out = e.run(
        &[
            "sync",
            "status",
            "--db",
            &pg.url_as(&url, &eve),
            "--origin",
            "me@box",
            "--json",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        json(&out)["pending_error"]
            .as_str()
            .unwrap()
            .contains("belongs to the PostgreSQL role \"postgres\""),
        "{}",
        stdout(&out)
    );
    assert!(!stdout(&out).contains(server::PASSWORD));
}

#[test]
fn guard_audit_verify_db_walks_each_origins_chain_in_the_team_store() {
    let Some(pg) = server() else { return };
    let url = pg.create_db();
    let (alice, bob) = (team_env(), team_env());
    guarded(&alice, "toolu_a1");
    guarded(&alice, "toolu_a2");
    guarded(&bob, "toolu_b1");
    push(&alice, &url, "alice@a");
    push(&bob, &url, "bob@b");
    // Nobody's local store is needed: the lead has none.
    let lead = team_env();
    let verify = |extra: &[&str]| {
        let mut args = vec!["guard", "audit", "verify", "--db", url.as_str(), "--json"];
        args.extend_from_slice(extra);
        let out = lead.run(&args, b"");
        (out.status.code(), json(&out))
    };
    let (code, v) = verify(&[]);
    assert_eq!(code, Some(0), "{v}");
    let statuses: Vec<(String, String, i64)> = v["origins"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["origin"].as_str().unwrap().to_string(),
                o["status"].as_str().unwrap().to_string(),
                o["records"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        statuses,
        [
            ("alice@a".to_string(), "intact".to_string(), 2),
            ("bob@b".to_string(), "intact".to_string(), 1)
        ]
    );
    assert_eq!(
        verify(&["--origin", "bob@b"]).1["origins"]
            .as_array()
            .unwrap()
            .len(),
        1
    );

    // A record edited in the team store breaks that origin's chain, and only that one.
    pg.psql(
        &url,
        "UPDATE callus.audit SET record = replace(record, 'deny', 'allow') WHERE origin = 'bob@b'",
    );
    let (code, v) = verify(&[]);
    assert_eq!(code, Some(1), "{v}");
    assert_eq!(v["origins"][0]["status"], "intact");
    assert_eq!(v["origins"][1]["status"], "broken");
    assert!(
        v["origins"][1]["problem"]
            .as_str()
            .unwrap()
            .contains("record 1"),
        "{v}"
    );
    // A tail cut off in the team store still walks from GENESIS, but the push anchor says
    // record 2 was there.
    pg.psql(
        &url,
        "DELETE FROM callus.audit WHERE origin = 'alice@a' AND seq = 2",
    );
    let (code, v) = verify(&["--origin", "alice@a"]);
    assert_eq!(code, Some(1), "{v}");
    assert!(
        v["origins"][0]["problem"]
            .as_str()
            .unwrap()
            .contains("truncated"),
        "{v}"
    );
    let out = lead.run(
        &[
            "guard", "audit", "verify", "--db", &url, "--origin", "alice@a",
        ],
        b"",
    );
    assert!(
        stdout(&out).starts_with("TAMPERED — alice@a:"),
        "{}",
        stdout(&out)
    );
    // An origin the team store holds nothing of is not "intact".
    let (code, v) = verify(&["--origin", "nobody@nowhere"]);
    assert_eq!(
        (code, v["origins"][0]["status"].as_str()),
        (Some(1), Some("missing")),
        "{v}"
    );
}
