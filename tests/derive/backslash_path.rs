//! A Windows backslash path bash mangles, through the real binary (`derive/backslash_path`,
//! a `shared` structure): a Git-Bash session whose commands name `C:\…` paths unquoted
//! (bash eats the backslashes) or double-quoted with a trailing backslash (the quote is
//! escaped) fail whatever the program, while the same paths with forward slashes succeed.
//! One rule keyed on the structure, firing on those failures and on none of the successes.

use serde_json::Value;

use super::file_tools::replayed;
use super::support::{Row, derive_json, fires, insert};
use crate::common::Env;

fn bash(status: &'static str, command: &str, error: &str, session: &str, hour: i64) -> Row {
    let mut r = Row::bash(status, command, error, hour);
    r.session = session.to_string();
    r
}

#[test]
fn backslash_paths_bash_mangles_are_one_structural_rule_across_programs() {
    let env = Env::new();
    let mut rows = vec![
        bash(
            "failure",
            r"cd C:\Users\x\proj && npm test",
            "/usr/bin/bash: line 1: cd: C:Usersxproj: No such file or directory",
            "s0",
            1,
        ),
        bash(
            "failure",
            r"ls C:\Users\x\proj\src",
            "ls: cannot access 'C:Usersxprojsrc': No such file or directory",
            "s0",
            2,
        ),
        bash(
            "failure",
            r#"npx jest "C:\Users\x\proj\tests\unit\""#,
            "/usr/bin/bash: eval: line 1: unexpected EOF while looking for matching `\"'",
            "s0",
            3,
        ),
        bash(
            "failure",
            r#"rm -rf "C:\Users\x\proj\dist\""#,
            "/usr/bin/bash: eval: line 1: unexpected EOF while looking for matching `\"'",
            "s0",
            4,
        ),
    ];
    // The same paths written the ways bash reads, and other work, succeed.
    for (i, cmd) in [
        "cd C:/Users/x/proj && npm test",
        "ls /c/Users/x/proj/src",
        r#"npx jest "C:\Users\x\proj\tests\unit""#,
        "rm -rf C:/Users/x/proj/dist",
        r"cat 'C:\Users\x\proj\README.md'",
        "git status",
        "npm test",
        "ls",
    ]
    .iter()
    .enumerate()
    {
        for s in ["s0", "s1"] {
            rows.push(bash("success", cmd, "", s, 10 + i as i64));
        }
    }
    insert(&env, &rows);
    let doc = derive_json(&env, &[]);
    let rules: Vec<&Value> = doc["rules"].as_array().unwrap().iter().collect();
    assert_eq!(rules.len(), 1, "{doc:#}");
    let c = rules[0];
    assert_eq!(c["meta"]["kind"], "backslash-path", "{c:#}");
    assert_eq!(c["match"], "text");
    assert!(fires(c, r"cd D:\work"));
    assert!(!fires(c, "cd D:/work"));
    let id = c["id"].as_str().unwrap().to_string();
    assert!(
        replayed(&env, &doc).contains(&(id, 4, 0)),
        "{:?}",
        replayed(&env, &doc)
    );
}
