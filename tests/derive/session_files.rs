//! Failures caused by the file's state in the session, through the real binary: a Write
//! over an existing file the session never Read (while Writes creating files succeed
//! unread), an Edit of a file changed after the session's last Read (by the session's own
//! shell or from outside), and the same refusal where the recorded state does not separate
//! the failures from the successes. Each history is a synthetic trace of one kind,
//! labelled by what a reviewer would keep; every candidate is replayed with `guard check
//! --history` as the guard would enforce it.

use serde_json::{Value, json};

use super::file_tools::replayed;
use super::support::{Row, derive_json, insert};
use crate::common::Env;

const NOT_READ: &str = "<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>";
const CHANGED: &str = "<tool_use_error>File has been modified since read, either by the user or by a linter. Read it again before attempting to write it.</tool_use_error>";

fn row(
    tool: &str,
    status: &'static str,
    command: &str,
    error: &str,
    session: &str,
    hour: i64,
) -> Row {
    let mut r = Row::tool(tool, status, error, hour);
    r.command = command.to_string();
    r.session = session.to_string();
    r
}

fn ok(tool: &str, command: &str, session: &str, hour: i64) -> Row {
    row(tool, "success", command, "", session, hour)
}

/// The rules of `doc` on `tool`.
fn rules_on<'d>(doc: &'d Value, tool: &str) -> Vec<&'d Value> {
    doc["rules"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["tool"].as_str().is_some_and(|t| t.contains(tool)))
        .collect()
}

#[test]
fn a_write_over_an_unread_file_is_a_rule_and_writes_creating_files_are_not_its_calls() {
    let env = Env::new();
    let mut rows = vec![
        row("Write", "failure", "/repo/a.md", NOT_READ, "s0", 1),
        row("Write", "failure", "/repo/b.md", NOT_READ, "s1", 2),
    ];
    // The agent creates eight files without reading them: the host lets it.
    for i in 0..8 {
        rows.push(ok(
            "Write",
            &format!("/repo/new{i}.md"),
            &format!("s{}", i % 4),
            10 + i,
        ));
    }
    // Read, then Write over it: fine; and an Edit of a file the session wrote itself.
    for i in 0..4 {
        let p = format!("/repo/old{i}.md");
        let s = format!("s{}", i % 4);
        rows.push(ok("Read", &p, &s, 30 + 3 * i));
        rows.push(ok("Write", &p, &s, 31 + 3 * i));
    }
    rows.push(ok("Edit", "/repo/new0.md", "s0", 50));
    insert(&env, &rows);
    let doc = derive_json(&env, &["--keep-anecdotal"]);
    let write = rules_on(&doc, "Write");
    assert_eq!(write.len(), 1, "{doc:#}");
    assert_eq!(
        write[0]["when"],
        json!({"not_read_in_session": "file_path"})
    );
    let b = &write[0]["meta"]["backtest"];
    assert_eq!(
        (b["matched"].as_u64(), b["failures"].as_u64()),
        (Some(2), Some(2)),
        "{b:#}"
    );
    let id = write[0]["id"].as_str().unwrap();
    assert!(replayed(&env, &doc).contains(&(id.to_string(), 2, 0)));
}

#[test]
fn an_edit_of_a_file_changed_since_its_read_is_a_rule_on_the_sessions_file_state() {
    let env = Env::new();
    let rows = vec![
        // s0: the session's own shell rewrote the file after the Read.
        ok("Read", "/repo/x.sol", "s0", 1),
        ok("Bash", "sed -i 's/a/b/' /repo/x.sol", "s0", 2),
        row("Edit", "failure", "/repo/x.sol", CHANGED, "s0", 3),
        ok("Read", "/repo/x.sol", "s0", 4),
        ok("Edit", "/repo/x.sol", "s0", 5),
        // s1: changed from outside (an editor): only the host's refusal says so.
        ok("Read", "/repo/y.sol", "s1", 6),
        row("Edit", "failure", "/repo/y.sol", CHANGED, "s1", 7),
        ok("Read", "/repo/y.sol", "s1", 8),
        ok("Edit", "/repo/y.sol", "s1", 9),
        // s2: the session's own Edits and a shell that only reads change nothing.
        ok("Read", "/repo/z.sol", "s2", 10),
        ok("Edit", "/repo/z.sol", "s2", 11),
        ok("Edit", "/repo/z.sol", "s2", 12),
        ok("Bash", "cat /repo/z.sol > /tmp/z.copy", "s2", 13),
        ok("Edit", "/repo/z.sol", "s2", 14),
        ok("Read", "/repo/w.sol", "s2", 15),
        ok("Bash", "sed -i 's/a/b/' /repo/w.sol", "s2", 16),
        ok("Read", "/repo/w.sol", "s2", 17),
        ok("Edit", "/repo/w.sol", "s2", 18),
    ];
    insert(&env, &rows);
    let doc = derive_json(&env, &["--keep-anecdotal"]);
    let edit = rules_on(&doc, "Edit");
    assert_eq!(edit.len(), 1, "{doc:#}");
    assert_eq!(edit[0]["when"], json!({"changed_since_read": "file_path"}));
    assert_eq!(edit[0]["meta"]["kind"], "changed-since-read");
    let id = edit[0]["id"].as_str().unwrap();
    assert!(
        replayed(&env, &doc).contains(&(id.to_string(), 2, 0)),
        "{:?}",
        replayed(&env, &doc)
    );
}

#[test]
fn a_changed_file_refusal_the_recorded_state_does_not_separate_is_a_lesson() {
    let env = Env::new();
    let mut rows = vec![
        row("Edit", "failure", "/repo/x.sol", CHANGED, "s0", 1),
        row("Edit", "failure", "/repo/y.sol", CHANGED, "s1", 2),
    ];
    // A host that does not check: Edits after the session's shell rewrote the file succeed.
    for i in 0..6 {
        let p = format!("/repo/f{i}.sol");
        let s = format!("s{}", i % 3);
        rows.push(ok("Read", &p, &s, 10 + 3 * i));
        rows.push(ok("Bash", &format!("echo x >> {p}"), &s, 11 + 3 * i));
        rows.push(ok("Edit", &p, &s, 12 + 3 * i));
    }
    insert(&env, &rows);
    let doc = derive_json(&env, &["--keep-anecdotal"]);
    assert!(rules_on(&doc, "Edit").is_empty(), "{doc:#}");
    let lessons: Vec<&Value> = doc["generated"]["not_rules"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["finding"] == "lesson" && n["fail_count"] == 2)
        .collect();
    assert_eq!(lessons.len(), 1, "{doc:#}");
}
