//! A path's written form as the cause (`derive/path_form`), through the real binary: a
//! Claude Code trace on Windows whose Reads of Git-Bash `/c/…` paths fail ("does not
//! exist") while Reads of the same files as `C:/…` succeed is one rule keyed on the form,
//! whatever the files; a form the tool's successes use too is no rule; a missing file that
//! recurs across sessions keeps its own recurring-path rule beside the form's.

use serde_json::Value;

use super::file_tools::replayed;
use super::support::{Row, derive_json, insert};
use crate::common::Env;

const MISSING: &str = "<tool_use_error>File does not exist.</tool_use_error>";

fn read(status: &'static str, path: &str, session: &str, hour: i64) -> Row {
    let error = if status == "failure" { MISSING } else { "" };
    let mut r = Row::tool("Read", status, error, hour);
    r.command = path.to_string();
    r.session = session.to_string();
    r
}

/// Reads of `files` under the project written `C:/…` that succeed, over three sessions.
fn windows_reads(files: &[&str], hour: i64) -> Vec<Row> {
    (0..12)
        .map(|i| {
            let f = files[i % files.len()];
            read(
                "success",
                &format!("C:/Users/x/proj/{f}"),
                &format!("s{}", i % 3),
                hour + i as i64,
            )
        })
        .collect()
}

fn read_rules(doc: &Value) -> Vec<&Value> {
    doc["rules"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["tool"] == "Read")
        .collect()
}

const FILES: [&str; 4] = ["src/main.ts", "README.md", "src/app.ts", "package.json"];

#[test]
fn reads_of_git_bash_paths_that_fail_while_windows_paths_succeed_are_one_form_rule() {
    let env = Env::new();
    // Each file once as `/c/…` (fails though it exists), in two sessions.
    let mut rows: Vec<Row> = FILES
        .iter()
        .enumerate()
        .map(|(i, f)| {
            read(
                "failure",
                &format!("/c/Users/x/proj/{f}"),
                &format!("s{}", i % 2),
                i as i64,
            )
        })
        .collect();
    // A one-off wrong guess spelled the host's way stays a guess.
    rows.push(read("failure", "C:/Users/x/proj/READ.md", "s2", 5));
    rows.extend(windows_reads(&FILES, 10));
    insert(&env, &rows);
    let doc = derive_json(&env, &[]);
    let read = read_rules(&doc);
    assert_eq!(read.len(), 1, "{doc:#}");
    let c = read[0];
    assert_eq!(c["meta"]["kind"], "path-form-git-bash-drive", "{c:#}");
    assert_eq!(c["field"], "file_path");
    assert_eq!(c["any"], serde_json::json!([r"^\s*/[A-Za-z]/"]));
    assert!(
        c["message"]
            .as_str()
            .unwrap()
            .contains("Read of a Git-Bash drive path (/c/…) failed 4x"),
        "{c:#}"
    );
    let id = c["id"].as_str().unwrap().to_string();
    assert!(
        replayed(&env, &doc).contains(&(id, 4, 0)),
        "{:?}",
        replayed(&env, &doc)
    );
}

#[test]
fn a_form_the_tools_successes_use_too_is_no_rule() {
    let env = Env::new();
    // Git-Bash paths are how this host is read: most of its Reads of them succeed.
    let mut rows: Vec<Row> = (0..4)
        .map(|i| {
            read(
                "failure",
                &format!("/c/Users/x/proj/gone{i}.ts"),
                &format!("s{}", i % 2),
                i,
            )
        })
        .collect();
    for i in 0..12 {
        rows.push(read(
            "success",
            &format!("/c/Users/x/proj/{}", FILES[i % 4]),
            &format!("s{}", i % 3),
            10 + i as i64,
        ));
    }
    insert(&env, &rows);
    let doc = derive_json(&env, &[]);
    assert!(read_rules(&doc).is_empty(), "{doc:#}");
}

#[test]
fn a_missing_file_recurring_across_sessions_keeps_its_rule_beside_the_forms() {
    let env = Env::new();
    // The doc, missing, spelled three ways over three sessions (one of them `/c/…`: a file
    // read mostly that way would be the form's lesson, one candidate, not two).
    let mut rows = vec![
        read("failure", r"C:\Users\x\proj\ARCHITECTURE.md", "s0", 1),
        read("failure", "C:/Users/x/proj/ARCHITECTURE.md", "s1", 2),
        read("failure", "/c/Users/x/proj/ARCHITECTURE.md", "s2", 3),
    ];
    for (i, f) in FILES.iter().take(3).enumerate() {
        rows.push(read(
            "failure",
            &format!("/c/Users/x/proj/{f}"),
            &format!("s{i}"),
            4 + i as i64,
        ));
    }
    rows.extend(windows_reads(&FILES, 10));
    insert(&env, &rows);
    let doc = derive_json(&env, &[]);
    let mut kinds: Vec<&str> = read_rules(&doc)
        .iter()
        .map(|r| r["meta"]["kind"].as_str().unwrap())
        .collect();
    kinds.sort_unstable();
    assert_eq!(
        kinds,
        ["path-form-git-bash-drive", "recurring-path"],
        "{doc:#}"
    );
}

#[test]
fn one_sessions_burst_of_a_wrong_form_corrected_at_once_is_a_guess() {
    let env = Env::new();
    let mut rows = Vec::new();
    for (i, f) in FILES.iter().enumerate() {
        rows.push(read(
            "failure",
            &format!("/c/Users/x/proj/{f}"),
            "s0",
            i as i64,
        ));
    }
    rows.extend(windows_reads(&FILES, 10));
    insert(&env, &rows);
    let doc = derive_json(&env, &[]);
    assert!(read_rules(&doc).is_empty(), "{doc:#}");
    let guesses: Vec<&Value> = doc["generated"]["not_rules"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["finding"] == "guess")
        .collect();
    assert_eq!(guesses.len(), 1, "{doc:#}");
    assert_eq!(guesses[0]["fail_count"], 4);
}
