//! The outcome model's verdict on a recurring cluster, through the real binary: a failure
//! whose cause is the network is an environment finding, a missing operand that differs in
//! every call of a working tool is a guess, and neither is a candidate; a wrong spelling of
//! a file that recurs over sessions, and a field only the successes carry, shape the
//! candidate instead.

use serde_json::Value;

use super::support::{HOUR, Row, T0, derive, derive_json, insert};
use crate::common::{Env, stdout};

fn read(status: &'static str, input: &str, error: &str, hour: i64, session: &str) -> Row {
    Row {
        tool: "Read".into(),
        status,
        command: input.into(),
        error: error.into(),
        session: session.into(),
        started_ms: T0 + hour * HOUR,
    }
}

fn not_rules(doc: &Value) -> Vec<(String, String)> {
    doc["generated"]["not_rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["shape"].as_str().unwrap().to_string(),
                n["finding"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn network_failures_and_guesses_are_findings_not_candidates() {
    let env = Env::new();
    let mut rows = Vec::new();
    // The network: one resolver timing out for whatever name is asked.
    for (i, name) in ["a.org", "b.org", "c.org", "d.org"].iter().enumerate() {
        rows.push(Row::bash(
            "failure",
            &format!("dig {name} @10.0.0.1 +short"),
            ";; connection timed out; no servers could be reached",
            i as i64,
        ));
    }
    for i in 0..6 {
        rows.push(Row::bash(
            "success",
            &format!("dig e{i}.org +short"),
            "",
            10 + i,
        ));
    }
    // Guesses: a different URL each time, 404; the same program works on others.
    for (i, u) in ["x/a.zip", "y/b.tar", "z/c"].iter().enumerate() {
        rows.push(Row::bash(
            "failure",
            &format!("curl -fsSO https://dl.example/{u}"),
            "curl: (22) The requested URL returned error: 404 Not Found",
            20 + i as i64,
        ));
    }
    for i in 0..9 {
        rows.push(Row::bash(
            "success",
            &format!("curl -fsSO https://dl.example/ok{i}.zip"),
            "",
            30 + i,
        ));
    }
    // And a Read of a different missing file each time, Read working on the rest.
    for (i, p) in ["/home/u/.zshrc", "/srv/app/NOTES.md", "/opt/x/launcher"]
        .iter()
        .enumerate()
    {
        rows.push(read(
            "failure",
            p,
            "File does not exist.",
            40 + i as i64,
            "s1",
        ));
    }
    for i in 0..12 {
        rows.push(read(
            "success",
            &format!("/srv/app/f{i}.rs"),
            "",
            50 + i,
            "s2",
        ));
    }
    // A real rule alongside: sudo without a terminal.
    for i in 0..6 {
        rows.push(Row::bash(
            "failure",
            &format!("sudo systemctl restart svc{i}"),
            "sudo: a terminal is required to read the password",
            70 + i,
        ));
    }
    insert(&env, &rows);
    let doc = derive_json(&env, &[]);
    let ids: Vec<&str> = doc["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["meta"]["command_shape"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(ids, vec!["sudo"], "{doc:#}");
    let mut found = not_rules(&doc);
    found.sort();
    assert_eq!(
        found,
        vec![
            ("Read".into(), "guess".into()),
            ("curl".into(), "guess".into()),
            ("dig".into(), "environment".into()),
        ]
    );
    let env_kinds = doc["generated"]["environment"].as_array().unwrap();
    assert_eq!(env_kinds.len(), 1, "{env_kinds:?}");
    assert_eq!(env_kinds[0]["calls"], 4);
    // The summary shows each once, apart from the candidates.
    let text = stdout(&derive(&env, &[]));
    assert!(
        text.contains("the network did not answer (connection refused, timed out or unreachable; no DNS server): 4 call(s) of 1 program(s)"),
        "{text}"
    );
    assert!(
        text.contains("2 recurring cluster(s) are the agent guessing"),
        "{text}"
    );
    // explain says what it is instead of refusing the id.
    let dig = doc["generated"]["not_rules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["shape"] == "dig")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    // (its window comes from the candidate file the summary run wrote)
    let out = env.run(&["derive", "explain", &dig], b"");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        crate::common::stderr(&out)
    );
    assert!(
        stdout(&out).contains("NOT PROPOSED — environment finding"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_wrong_spelling_that_recurs_over_sessions_stays_a_rule() {
    let env = Env::new();
    let mut rows = Vec::new();
    for (i, (f, s)) in [("README.md", "s1"), ("LICENSE", "s2"), ("Cargo.toml", "s3")]
        .iter()
        .enumerate()
    {
        rows.push(read(
            "failure",
            &format!("/c/Users/u/repo/{f}"),
            "File does not exist.",
            i as i64,
            s,
        ));
        rows.push(read(
            "success",
            &format!(r"C:\Users\u\repo\{f}"),
            "",
            i as i64 + 1,
            s,
        ));
    }
    for i in 0..10 {
        rows.push(read(
            "success",
            &format!(r"C:\Users\u\repo\src\m{i}.rs"),
            "",
            20 + i,
            "s4",
        ));
    }
    insert(&env, &rows);
    let doc = derive_json(&env, &[]);
    assert_eq!(doc["rules"].as_array().unwrap().len(), 1, "{doc:#}");
    assert!(not_rules(&doc).is_empty());
}

#[test]
fn a_field_only_successes_pass_exempts_them_from_a_tool_wide_candidate() {
    let env = Env::new();
    let mut rows = Vec::new();
    let big = "File content (40000 tokens) exceeds maximum allowed tokens (25000). Please use offset and limit parameters to read specific portions of the file.";
    for i in 0..4 {
        rows.push(read("failure", &format!("/logs/chat{i}.md"), big, i, "s1"));
    }
    for i in 0..5 {
        rows.push(read(
            "success",
            &format!(
                r#"{{"file_path":"/logs/chat{i}.md","offset":{},"limit":100}}"#,
                i * 100
            ),
            "",
            10 + i,
            "s2",
        ));
    }
    for i in 0..10 {
        rows.push(read("success", &format!("/src/m{i}.rs"), "", 20 + i, "s3"));
    }
    insert(&env, &rows);
    let doc = derive_json(&env, &[]);
    let c = &doc["rules"][0];
    assert_eq!(c["tool"], "Read", "{doc:#}");
    assert_eq!(
        c["field"], "limit",
        "offset and limit tie; limit sorts first"
    );
    assert_eq!(c["meta"]["field_contrast"]["in_successes"], 5);
    assert_eq!(
        c["meta"]["backtest"]["matched"], 14,
        "the five ranged reads are spared"
    );
    let note = c["meta"]["crossfire_note"].as_str().unwrap();
    assert!(
        note.contains("calls that pass `limit` are spared"),
        "{note}"
    );
}

#[test]
fn one_error_from_several_programs_is_one_environment_finding() {
    let env = Env::new();
    let mut rows = Vec::new();
    let mut hour = 0;
    for prog in ["node", "python3", "ruby"] {
        for i in 0..3 {
            rows.push(Row::bash(
                "failure",
                &format!("{prog} -v --trace={i}"),
                &format!("{prog}: error while loading shared libraries: libssl.so.3: cannot open shared object file"),
                hour,
            ));
            hour += 1;
        }
        for i in 0..3 {
            rows.push(Row::bash(
                "success",
                &format!("{prog} --version #{i}"),
                "",
                hour,
            ));
            hour += 1;
        }
    }
    insert(&env, &rows);
    let doc = derive_json(&env, &[]);
    assert!(doc["rules"].as_array().unwrap().is_empty(), "{doc:#}");
    let found = not_rules(&doc);
    assert_eq!(found.len(), 3, "{found:?}");
    assert!(found.iter().all(|(_, k)| k == "environment"));
    let kinds = doc["generated"]["environment"].as_array().unwrap();
    assert_eq!(kinds.len(), 1, "reported once: {kinds:?}");
    assert_eq!(
        (kinds[0]["calls"].as_u64(), kinds[0]["programs"].as_u64()),
        (Some(9), Some(3))
    );
}
