//! The team store for a real team (issue 18), against the real `PostgreSQL` of `server.rs`:
//! origins bound to roles, migrations from the previous release's schema, NUL bytes and an
//! interrupted push (windowed reads, `sync status` and `guard audit verify --db`: `reads.rs`).

use std::time::{Duration, Instant};

use serde_json::Value;

use super::server::{Role, Server, server};
use super::{PSQL_ERROR, counts, fail, guarded, push, team_env};
use crate::common::{Env, json, stderr, stdout};

/// The released schema (before migrations), verbatim.
const SCHEMA_V1: &str = include_str!("../fixtures/sync/schema-v1.sql");

/// A home whose runs authenticate as `role`.
pub(super) fn role_env(role: &Role) -> Env {
    let mut env = Env::new();
    env.var("PGPASSWORD", &role.password);
    env
}

/// `sync init --json` as the superuser (the schema's owner), granting `roles`.
pub(super) fn init(url: &str, roles: &[&Role]) -> Value {
    let mut args = vec!["sync", "init", "--db", url, "--json"];
    for r in roles {
        args.extend(["--grant", r.name.as_str()]);
    }
    let out = team_env().run(&args, b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    json(&out)
}

/// Fill a local store with `n` successful calls, `age_ms` old, tool ids `prefix0…`.
pub(super) fn bulk(env: &Env, prefix: &str, n: u64, age_ms: i64, command: &str) {
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
        stderr(&out).contains("the team schema is version 1, older than this callus writes (version 3): run `callus sync init"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        pg.psql(&url, "SELECT to_regclass('callus.origins') IS NULL"),
        "t"
    );
    // Reading an old schema is refused too: its evidence tables lack the columns version 3
    // added (the blamed segment, a call's facts, the session's context), and the error says
    // how to upgrade.
    let out = newer.run(&["record", "stats", "--db", &url, "--json"], b"");
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("older than this callus reads (version 3): run `callus sync init"),
        "{}",
        stderr(&out)
    );

    let up = init(&url, &[]);
    assert_eq!(
        (up["from"].as_u64(), up["to"].as_u64()),
        (Some(1), Some(3)),
        "{up}"
    );
    assert_eq!(
        pg.psql(&url, "SELECT value FROM callus.meta WHERE key = 'schema'"),
        "3"
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
        (Some(3), Some(3))
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
        "UPDATE callus.meta SET value = '4' WHERE key = 'schema'",
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
