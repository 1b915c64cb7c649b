//! The telling line of an error, through the real binary: a failure whose cause sits away
//! from its first and last lines (npm's `npm ERR! code X` before lines that differ per
//! subcommand, pytest's `E   XxxError: …` inside a collection report) is stored under the
//! signature of that line, so one cause across different commands is one signature and
//! derive clusters it.

use serde_json::Value;

use super::support::derive_json;
use crate::common::{Env, stderr};

/// A Claude transcript of Bash calls `(command, result, is_error)`, one session each pair of
/// calls, written to the test's home.
fn transcript(env: &Env, calls: &[(&str, &str, bool)]) -> std::path::PathBuf {
    let mut lines = Vec::new();
    for (i, (command, result, is_error)) in calls.iter().enumerate() {
        let s = format!("5e551011-0000-0000-0000-00000000000{}", i / 2);
        let call = serde_json::json!({
            "type": "assistant", "sessionId": s, "uuid": format!("a{i}"), "cwd": "/w",
            "timestamp": format!("2026-07-01T10:{i:02}:00Z"),
            "message": {"role": "assistant", "content": [{"type": "tool_use",
                "id": format!("toolu_{i}"), "name": "Bash", "input": {"command": command}}]}
        });
        let result = serde_json::json!({
            "type": "user", "sessionId": s, "uuid": format!("u{i}"), "cwd": "/w",
            "timestamp": format!("2026-07-01T10:{i:02}:01Z"),
            "message": {"role": "user", "content": [{"type": "tool_result",
                "tool_use_id": format!("toolu_{i}"), "content": result, "is_error": is_error}]}
        });
        lines.push(call.to_string());
        lines.push(result.to_string());
    }
    env.write_home("history/t.jsonl", &(lines.join("\n") + "\n"))
}

fn import(env: &Env, file: &std::path::Path) {
    let out = env.run(&["record", "import", &file.to_string_lossy()], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// The stored signature of each failing call, by command.
fn signatures(env: &Env) -> Vec<(String, String)> {
    let conn = rusqlite::Connection::open(env.db()).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT command, signature FROM tool_calls WHERE status = 'failure' ORDER BY started_ms",
        )
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// Every cluster derive reports, rule or not: (signature, failures).
fn clusters(doc: &Value) -> Vec<(String, u64)> {
    let rules = doc["rules"].as_array().into_iter().flatten().map(|r| {
        (
            r["meta"]["error_signature"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            r["meta"]["fail_count"].as_u64().unwrap_or_default(),
        )
    });
    let not_rules = doc["generated"]["not_rules"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            (
                r["error_signature"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                r["fail_count"].as_u64().unwrap_or_default(),
            )
        });
    rules.chain(not_rules).collect()
}

#[test]
fn one_npm_cause_across_subcommands_is_one_signature_and_one_cluster() {
    let eresolve = |detail: &str| {
        format!(
            "Exit code 1\nnpm ERR! code ERESOLVE\nnpm ERR! ERESOLVE {detail}\nnpm ERR!\nnpm ERR! While resolving: app@1.0.0\nnpm ERR! Found: hardhat@3.0.1"
        )
    };
    let env = Env::new();
    let file = transcript(
        &env,
        &[
            (
                "npm install --save-dev dotenv",
                &eresolve("unable to resolve dependency tree"),
                true,
            ),
            ("npm update hardhat", &eresolve("could not resolve"), true),
            ("npm ci", &eresolve("could not resolve"), true),
            (
                "npm i left-pad",
                &eresolve("unable to resolve dependency tree"),
                true,
            ),
            (
                "npm view nopkg",
                "Exit code 1\nnpm ERR! code E404\nnpm ERR! 404 Not Found - GET https://registry.npmjs.org/nopkg",
                true,
            ),
            (
                "npm install -g x",
                "Exit code 243\nnpm ERR! code EACCES\nnpm ERR! syscall mkdir\nnpm ERR! Error: EACCES: permission denied, mkdir '/usr/lib/node_modules/x'",
                true,
            ),
            ("npm run build", "built", false),
            ("npm test", "ok", false),
        ],
    );
    import(&env, &file);
    let sigs = signatures(&env);
    let eresolve_sigs: Vec<&str> = sigs[..4].iter().map(|(_, s)| s.as_str()).collect();
    assert_eq!(
        eresolve_sigs, ["exit code 1 npm error code eresolve"; 4],
        "{sigs:?}"
    );
    assert_eq!(sigs[4].1, "exit code 1 npm error code e#");
    assert_eq!(sigs[5].1, "exit code 243 npm error code eacces");
    let doc = derive_json(&env, &["--keep-anecdotal"]);
    let found = clusters(&doc);
    // The four share a cluster under the cause's line (derive's similar-signature merge may
    // add the other npm codes to it).
    assert!(
        found
            .iter()
            .any(|(sig, n)| sig == "npm error code eresolve" && *n >= 4),
        "{found:?}"
    );
}

#[test]
fn a_python_failure_is_signed_by_its_exception_not_its_banner() {
    let collect = |test: &str| {
        format!(
            "Exit code 2\n==================== ERRORS ====================\n____ ERROR collecting tests/{test} ____\nImportError while importing test module '/w/tests/{test}'.\nTraceback:\ntests/{test}:2: in <module>\n    from pkg.core import x\nE   ModuleNotFoundError: No module named 'pkg'\n=========== short test summary info ===========\nERROR tests/{test}\n!!!!! Interrupted: 1 error during collection !!!!!"
        )
    };
    let traceback = "Exit code 1\nTraceback (most recent call last):\n  File \"/w/run.py\", line 1, in <module>\n    import pkg\nModuleNotFoundError: No module named 'pkg'";
    let env = Env::new();
    let file = transcript(
        &env,
        &[
            ("pytest -q", &collect("test_a.py"), true),
            ("pytest tests/test_b.py", &collect("test_b.py"), true),
            ("python run.py", traceback, true),
            (
                "python -c 'from pkg import y'",
                "Exit code 1\nTraceback (most recent call last):\n  File \"<string>\", line 1, in <module>\nImportError: cannot import name 'y' from 'pkg'",
                true,
            ),
        ],
    );
    import(&env, &file);
    let sigs: Vec<String> = signatures(&env).into_iter().map(|(_, s)| s).collect();
    assert_eq!(
        sigs,
        [
            "exit code 2 modulenotfounderror: no module named 'S'",
            "exit code 2 modulenotfounderror: no module named 'S'",
            "exit code 1 modulenotfounderror: no module named 'S'",
            "exit code 1 importerror: cannot import name 'S' from 'S'",
        ]
    );
}
