//! A file tool's failures split by cause, through the real binary (`derive/tool_causes`):
//! a Read of a directory, an Edit of a file not Read in the session, a missing path the
//! sessions keep going back to, a file modified since it was read, and the lesson no rule
//! can check (an edit's old text not found). Each history is a synthetic trace of one
//! kind, labelled by what a reviewer would keep; every candidate is replayed with
//! `guard check --history` as the guard would enforce it.

use serde_json::Value;

use super::support::{Row, derive_json, insert};
use crate::common::{Env, json, stderr};

fn row(tool: &str, status: &'static str, path: &str, error: &str, session: &str, hour: i64) -> Row {
    let mut r = Row::tool(tool, status, error, hour);
    r.command = path.to_string();
    r.session = session.to_string();
    r
}

/// Successful Reads of twenty files over four sessions (the tool works).
fn reads(hour: i64) -> Vec<Row> {
    (0..20)
        .map(|i| {
            row(
                "Read",
                "success",
                &format!("/repo/src/f{i}.rs"),
                "",
                &format!("s{}", i % 4),
                hour + i,
            )
        })
        .collect()
}

fn rules(doc: &Value) -> Vec<&Value> {
    doc["rules"].as_array().unwrap().iter().collect()
}

/// The one candidate for `tool` in `doc` (fails the test when there are none or several).
fn only_rule<'a>(doc: &'a Value, tool: &str) -> &'a Value {
    let of_tool: Vec<&Value> = rules(doc)
        .into_iter()
        .filter(|r| r["tool"] == tool)
        .collect();
    assert_eq!(of_tool.len(), 1, "{doc:#}");
    of_tool[0]
}

fn not_rules(doc: &Value) -> Vec<&Value> {
    doc["generated"]["not_rules"]
        .as_array()
        .unwrap()
        .iter()
        .collect()
}

/// The failed calls each rule of `doc` fires on, replayed by `guard check --history`:
/// (rule id, failed, succeeded).
pub(crate) fn replayed(env: &Env, doc: &Value) -> Vec<(String, u64, u64)> {
    let file = env.home_path().join("replayed.json");
    std::fs::write(&file, doc.to_string()).unwrap();
    let out = env.run(
        &[
            "guard",
            "check",
            file.to_str().unwrap(),
            "--history",
            "2026-07-01",
            "--json",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    let mut counts: Vec<(String, u64, u64)> = rules(doc)
        .iter()
        .map(|r| (r["id"].as_str().unwrap().to_string(), 0, 0))
        .collect();
    for d in v["decisions"].as_array().into_iter().flatten() {
        for f in d["fired"].as_array().into_iter().flatten() {
            if let Some(c) = counts.iter_mut().find(|c| c.0 == f["rule"]) {
                if d["failed"] == true {
                    c.1 += 1;
                } else {
                    c.2 += 1;
                }
            }
        }
    }
    counts
}

#[test]
fn a_read_of_a_directory_is_conditioned_on_the_path_being_one() {
    let env = Env::new();
    let eisdir = "EISDIR: illegal operation on a directory, read";
    let mut rows = vec![
        row("Read", "failure", "/repo/src", eisdir, "s0", 1),
        row("Read", "failure", "/repo/docs", eisdir, "s0", 2),
        row("Read", "failure", "/repo/src", eisdir, "s1", 3),
        row("Read", "failure", "/repo/.config", eisdir, "s2", 4),
    ];
    // One-off guesses of the same tool: a different missing path each time.
    for (i, p) in ["/repo/READ.md", "/repo/src/main.ts", "/repo/lib/x.rs"]
        .iter()
        .enumerate()
    {
        rows.push(row(
            "Read",
            "failure",
            p,
            "File does not exist.",
            &format!("s{i}"),
            10 + i as i64,
        ));
    }
    rows.extend(reads(20));
    insert(&env, &rows);
    let doc = derive_json(&env, &[]);
    let c = only_rule(&doc, "Read");
    assert_eq!(
        c["when"],
        serde_json::json!({"path_is_directory": {"field": "file_path"}})
    );
    assert_eq!(c["meta"]["kind"], "path-is-directory");
    assert!(
        c["message"]
            .as_str()
            .unwrap()
            .starts_with("DRAFT — Read of a path that is a directory failed 4x"),
        "{c:#}"
    );
    let b = &c["meta"]["backtest"];
    assert_eq!(
        (b["matched"].as_u64(), b["failures"].as_u64()),
        (Some(4), Some(4)),
        "fires on the directory reads only, not on the missing files: {b:#}"
    );
    // The guesses are a finding, not a rule.
    let guesses: Vec<&Value> = not_rules(&doc)
        .into_iter()
        .filter(|n| n["finding"] == "guess")
        .collect();
    assert_eq!(guesses.len(), 1, "{doc:#}");
    assert_eq!(guesses[0]["fail_count"], 3);
    // Enforced as the guard would: the four directory reads, no success.
    let id = c["id"].as_str().unwrap();
    assert!(
        replayed(&env, &doc).contains(&(id.to_string(), 4, 0)),
        "{:?}",
        replayed(&env, &doc)
    );
}

#[test]
fn an_edit_of_a_file_not_read_in_the_session_is_conditioned_on_the_sessions_reads() {
    let env = Env::new();
    let not_read = "<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>";
    let mut rows = vec![
        row("Edit", "failure", "/repo/a.md", not_read, "s0", 1),
        row("Edit", "failure", "/repo/b.md", not_read, "s1", 2),
    ];
    // Edits of files the session read first succeed.
    for i in 0..6 {
        let s = format!("s{}", i % 3);
        let p = format!("/repo/src/f{i}.rs");
        rows.push(row("Read", "success", &p, "", &s, 10 + 2 * i));
        rows.push(row("Edit", "success", &p, "", &s, 11 + 2 * i));
    }
    rows.extend(reads(40));
    insert(&env, &rows);
    let doc = derive_json(&env, &["--keep-anecdotal"]);
    let c = only_rule(&doc, "Edit");
    assert_eq!(
        c["when"],
        serde_json::json!({"not_read_in_session": "file_path"})
    );
    assert_eq!(c["meta"]["kind"], "not-read-in-session");
    assert_eq!(c["meta"]["min_attempts"], 2);
    let b = &c["meta"]["backtest"];
    assert_eq!(
        (
            b["matched"].as_u64(),
            b["failures"].as_u64(),
            b["crossfire"].as_u64()
        ),
        (Some(2), Some(2), Some(0)),
        "{b:#}"
    );
    let id = c["id"].as_str().unwrap();
    assert!(replayed(&env, &doc).contains(&(id.to_string(), 2, 0)));

    // One session is not a recurrence: below --min-count, nothing is proposed.
    let env = Env::new();
    let mut one = rows.clone();
    one[1].session = "s0".into();
    insert(&env, &one);
    let doc = derive_json(&env, &["--keep-anecdotal"]);
    assert!(rules(&doc).iter().all(|r| r["tool"] != "Edit"), "{doc:#}");
}

#[test]
fn a_missing_path_read_again_in_every_session_is_a_path_rule_and_the_rest_are_guesses() {
    let env = Env::new();
    let missing = "File does not exist. Current working directory: /repo";
    let mut rows: Vec<Row> = (0..3)
        .map(|i| {
            row(
                "Read",
                "failure",
                "/repo/.agent/STATUS.md",
                missing,
                &format!("s{i}"),
                i * 10,
            )
        })
        .collect();
    for (i, p) in ["/repo/a.md", "/repo/b/c.md", "/repo/d.txt", "/repo/e.rs"]
        .iter()
        .enumerate()
    {
        rows.push(row(
            "Read",
            "failure",
            p,
            missing,
            &format!("s{i}"),
            50 + i as i64,
        ));
    }
    rows.extend(reads(60));
    insert(&env, &rows);
    let doc = derive_json(&env, &[]);
    let c = only_rule(&doc, "Read");
    assert_eq!(c["meta"]["kind"], "recurring-path");
    assert_eq!(c["field"], "file_path");
    assert_eq!(c["any"][0], r"^/repo/\.agent/STATUS\.md$");
    assert_eq!(
        c["when"],
        serde_json::json!({"path_missing": {"field": "file_path"}})
    );
    let b = &c["meta"]["backtest"];
    assert_eq!(
        (b["matched"].as_u64(), b["failures"].as_u64()),
        (Some(3), Some(3)),
        "{b:#}"
    );
    let guesses: Vec<&Value> = not_rules(&doc)
        .into_iter()
        .filter(|n| n["finding"] == "guess")
        .collect();
    assert_eq!(guesses.len(), 1, "{doc:#}");
    assert_eq!(guesses[0]["fail_count"], 4);
    let id = c["id"].as_str().unwrap();
    assert!(replayed(&env, &doc).contains(&(id.to_string(), 3, 0)));
}

#[test]
fn an_edit_whose_text_is_not_found_is_a_lesson_and_a_changed_file_is_a_condition() {
    let env = Env::new();
    let mut rows = Vec::new();
    for i in 0..4 {
        rows.push(row(
            "Edit",
            "failure",
            &format!("/repo/src/f{i}.rs"),
            "<tool_use_error>String to replace not found in file.\nString: fn old()</tool_use_error>",
            &format!("s{}", i % 2),
            i,
        ));
    }
    for i in 0..3 {
        rows.push(row(
            "Edit",
            "failure",
            &format!("/repo/src/g{i}.rs"),
            "File has been modified since read, either by the user or by a linter. Read it again before attempting to write it.",
            &format!("s{}", i % 2),
            10 + i,
        ));
    }
    for i in 0..20 {
        rows.push(row(
            "Edit",
            "success",
            &format!("/repo/src/f{i}.rs"),
            "",
            &format!("s{}", i % 3),
            20 + i,
        ));
    }
    insert(&env, &rows);
    let doc = derive_json(&env, &[]);
    // The changed files: the host's own refusal, replayed, fires on them and no success.
    let edit: Vec<&Value> = rules(&doc)
        .into_iter()
        .filter(|r| r["tool"] == "Edit")
        .collect();
    assert_eq!(edit.len(), 1, "no tool-wide Edit rule: {doc:#}");
    assert_eq!(
        edit[0]["when"],
        serde_json::json!({"changed_since_read": "file_path"})
    );
    let id = edit[0]["id"].as_str().unwrap();
    assert!(replayed(&env, &doc).contains(&(id.to_string(), 3, 0)));
    let lessons: Vec<&Value> = not_rules(&doc)
        .into_iter()
        .filter(|n| n["finding"] == "lesson")
        .collect();
    assert_eq!(lessons.len(), 1, "{doc:#}");
    assert_eq!(lessons[0]["fail_count"], 4);
    let out = super::support::derive(&env, &[]);
    assert!(
        crate::common::stdout(&out).contains("1 recurring cluster(s) are lessons"),
        "{}",
        crate::common::stdout(&out)
    );
}

#[test]
fn a_tool_wide_candidate_is_not_left_beside_a_keyed_one_of_the_same_tool() {
    let env = Env::new();
    let eisdir = "EISDIR: illegal operation on a directory, read";
    let mut rows: Vec<Row> = (0..4)
        .map(|i| {
            row(
                "Read",
                "failure",
                &format!("/repo/d{i}"),
                eisdir,
                &format!("s{i}"),
                i,
            )
        })
        .collect();
    // A cause no field or state separates, recurring more than the directories.
    for i in 0..6 {
        rows.push(row(
            "Read",
            "failure",
            &format!("/repo/img{i}.heic"),
            "Unsupported image format: image/heic",
            &format!("s{}", i % 3),
            10 + i,
        ));
    }
    rows.extend(reads(30));
    insert(&env, &rows);
    let doc = derive_json(&env, &[]);
    let read = only_rule(&doc, "Read");
    assert_eq!(read["meta"]["kind"], "path-is-directory");
    let lessons: Vec<&Value> = not_rules(&doc)
        .into_iter()
        .filter(|n| n["finding"] == "lesson")
        .collect();
    assert_eq!(lessons.len(), 1, "{doc:#}");
    assert_eq!(lessons[0]["fail_count"], 6);
    assert!(
        lessons[0]["why"]
            .as_str()
            .unwrap()
            .contains("failures of other causes")
    );

    // Alone, the same tool-wide candidate stays a rule.
    let env = Env::new();
    insert(&env, &rows[4..]);
    let doc = derive_json(&env, &[]);
    assert_eq!(
        rules(&doc).iter().filter(|r| r["tool"] == "Read").count(),
        1,
        "{doc:#}"
    );
}

#[test]
fn one_missing_file_spelled_the_windows_ways_is_one_recurring_path() {
    let env = Env::new();
    let missing = "<tool_use_error>File does not exist.</tool_use_error>";
    // The same file in three spellings (backslashes, forward slashes with a lowercase
    // drive, Git-Bash's `/c/`), none of which recurs across sessions on its own.
    let mut rows = vec![
        row(
            "Read",
            "failure",
            r"C:\Users\x\proj\ARCHITECTURE.md",
            missing,
            "s0",
            1,
        ),
        row(
            "Read",
            "failure",
            "c:/Users/x/proj/ARCHITECTURE.md",
            missing,
            "s1",
            2,
        ),
        row(
            "Read",
            "failure",
            "/c/Users/x/proj/ARCHITECTURE.md",
            missing,
            "s1",
            3,
        ),
    ];
    // One-off guesses, and a file beside it the tool reads fine.
    for (i, p) in [
        r"C:\Users\x\proj\READ.md",
        "C:/Users/x/proj/src/a.ts",
        "/c/Users/x/proj/b.ts",
    ]
    .iter()
    .enumerate()
    {
        rows.push(row(
            "Read",
            "failure",
            p,
            missing,
            &format!("s{i}"),
            10 + i as i64,
        ));
    }
    for i in 0..6 {
        rows.push(row(
            "Read",
            "success",
            &format!(r"C:\Users\x\proj\src\f{i}.ts"),
            "",
            &format!("s{}", i % 3),
            20 + i,
        ));
    }
    rows.extend(reads(40));
    insert(&env, &rows);
    let doc = derive_json(&env, &[]);
    let c = only_rule(&doc, "Read");
    assert_eq!(c["meta"]["kind"], "recurring-path");
    assert_eq!(c["field"], "file_path");
    assert_eq!(
        c["when"],
        serde_json::json!({"path_missing": {"field": "file_path"}})
    );
    let b = &c["meta"]["backtest"];
    assert_eq!(
        (b["matched"].as_u64(), b["failures"].as_u64()),
        (Some(3), Some(3)),
        "every spelling, and nothing else: {b:#}"
    );
    let id = c["id"].as_str().unwrap();
    assert!(
        replayed(&env, &doc).contains(&(id.to_string(), 3, 0)),
        "{:?}",
        replayed(&env, &doc)
    );
    let guesses: Vec<&Value> = not_rules(&doc)
        .into_iter()
        .filter(|n| n["finding"] == "guess")
        .collect();
    assert_eq!(guesses.len(), 1, "{doc:#}");
    assert_eq!(guesses[0]["fail_count"], 3);
}

#[test]
fn an_edit_and_a_write_of_files_not_read_are_one_lesson_across_both_tools() {
    let env = Env::new();
    let not_read = "<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>";
    // One Edit and one Write refused, in two sessions: each tool alone is one session.
    let mut rows = vec![
        row("Edit", "failure", "/repo/a.md", not_read, "s0", 1),
        row("Write", "failure", "/repo/b.md", not_read, "s1", 2),
    ];
    // Edits and Writes of files the session read first succeed.
    for i in 0..6 {
        let s = format!("s{}", i % 3);
        let p = format!("/repo/src/f{i}.rs");
        let tool = if i % 2 == 0 { "Edit" } else { "Write" };
        rows.push(row("Read", "success", &p, "", &s, 10 + 2 * i));
        rows.push(row(tool, "success", &p, "", &s, 11 + 2 * i));
    }
    rows.extend(reads(40));
    insert(&env, &rows);
    let doc = derive_json(&env, &["--keep-anecdotal"]);
    let c: Vec<&Value> = rules(&doc)
        .into_iter()
        .filter(|r| r["meta"]["kind"] == "not-read-in-session")
        .collect();
    assert_eq!(c.len(), 1, "{doc:#}");
    let c = c[0];
    assert_eq!(c["tool"], "{Edit,Write}");
    assert_eq!(
        c["when"],
        serde_json::json!({"not_read_in_session": "file_path"})
    );
    assert_eq!(c["meta"]["min_attempts"], 2);
    let b = &c["meta"]["backtest"];
    assert_eq!(
        (b["matched"].as_u64(), b["failures"].as_u64()),
        (Some(2), Some(2)),
        "{b:#}"
    );
    let id = c["id"].as_str().unwrap();
    assert!(replayed(&env, &doc).contains(&(id.to_string(), 2, 0)));
    assert!(
        rules(&doc)
            .iter()
            .all(|r| r["tool"] != "Edit" && r["tool"] != "Write"),
        "{doc:#}"
    );

    // Both in one session: not a recurrence, nothing proposed.
    let env = Env::new();
    let mut one = rows.clone();
    one[1].session = "s0".into();
    insert(&env, &one);
    let doc = derive_json(&env, &["--keep-anecdotal"]);
    assert!(
        rules(&doc)
            .iter()
            .all(|r| r["meta"]["kind"] != "not-read-in-session"),
        "{doc:#}"
    );
}
