//! What `derive explain` and `derive` tell a reviewer, through the real binary: candidates
//! derived with `--include-tool` or `--out` are explained in the window and with the tools
//! they were derived with, the explanation fits the terminal's width, the failures are
//! broken down by signature with counts, sessions and days, and a window with no calls
//! says which dates the store holds.

use serde_json::Value;

use super::support::{Row, derive, derive_json, insert};
use crate::common::{Env, json, stderr, stdout};

/// Six `Skill` failures (excluded by default) and six sudo failures over two days.
fn store(env: &Env) {
    let mut rows = Vec::new();
    for i in 0..6 {
        rows.push(Row::tool(
            "Skill",
            "failure",
            "Unknown skill: deploy-prod",
            i,
        ));
        rows.push(Row::bash(
            "failure",
            &format!("sudo apt-get install -y pkg{i} && echo done-with-a-long-tail-of-words"),
            "sudo: a terminal is required to read the password; either use the -S option to read from standard input or configure an askpass helper",
            i * 8,
        ));
    }
    for i in 0..6 {
        rows.push(Row::tool("Skill", "success", "", 60 + i));
    }
    insert(env, &rows);
}

fn ids(doc: &Value) -> Vec<String> {
    doc["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn explain_follows_include_tool_and_out_and_breaks_failures_down() {
    let env = Env::new();
    store(&env);
    let file = env.home_path().join("elsewhere.json");
    let out = derive(
        &env,
        &["--include-tool", "Skill", "--out", &file.to_string_lossy()],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let skill = ids(&doc)
        .into_iter()
        .find(|id| id.starts_with("derived-skill-"))
        .expect("a Skill candidate");
    // Without --out, explain cannot know the window or the tools it was derived with.
    let o = env.run(&["derive", "explain", &skill], b"");
    assert_eq!(o.status.code(), Some(3), "{}", stdout(&o));
    let o = env.run(
        &[
            "derive",
            "explain",
            &skill,
            "--out",
            &file.to_string_lossy(),
            "--json",
        ],
        b"",
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = json(&o);
    assert_eq!(r["failures"]["count"], 6);
    let sudo = ids(&doc)
        .into_iter()
        .find(|id| id.starts_with("derived-bash-sudo-"))
        .unwrap();
    let o = env.run(
        &[
            "derive",
            "explain",
            &sudo,
            "--out",
            &file.to_string_lossy(),
            "--json",
        ],
        b"",
    );
    let r = json(&o);
    let g = &r["failures"]["by_signature"][0];
    assert_eq!(
        (
            g["failures"].as_u64(),
            g["sessions"].as_u64(),
            g["days"].as_u64()
        ),
        (Some(6), Some(6), Some(2)),
        "{r:#}"
    );
    assert!(
        g["error_line"]
            .as_str()
            .unwrap()
            .starts_with("sudo: a terminal is required to read the password; either use the -S"),
        "the whole distinguishing line: {g}"
    );
}

#[test]
fn explain_fits_the_terminal_width() {
    for width in [80usize, 120] {
        let mut env = Env::new();
        env.var("COLUMNS", &width.to_string());
        store(&env);
        let doc = derive_json(&env, &[]);
        let sudo = ids(&doc).remove(0);
        assert!(derive(&env, &[]).status.success());
        let o = env.run(&["derive", "explain", &sudo], b"");
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let text = stdout(&o);
        let widest = text.lines().map(|l| l.chars().count()).max().unwrap();
        assert!(widest <= width, "{widest} > {width}:\n{text}");
    }
}

#[test]
fn a_window_without_calls_says_what_the_store_holds() {
    let env = Env::new();
    store(&env);
    let o = env.run(
        &["derive", "--since", "2026-01-01", "--until", "2026-02-01"],
        b"",
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("the store holds calls from 2026-07-01T00:00:00Z to 2026-07-03T")
            && text.contains("(try --since 2026-07-01)"),
        "{text}"
    );
}
