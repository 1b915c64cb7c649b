//! Reading the team store (issue 18), against the real `PostgreSQL` of `server.rs`: windowed
//! reads, `sync status` and `guard audit verify --db`.

use serde_json::{Value, json};

use super::server::{self, server};
use super::team::{bulk, init, role_env};
use super::{PSQL_ERROR, fail, guarded, push, succeed, team_env};
use crate::common::{Env, json, run_cmd, stderr, stdout};

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
    assert_eq!(after["schema_version"], 3);
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
