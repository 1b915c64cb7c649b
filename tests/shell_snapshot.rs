//! The byte-identical check behind issue 26's rebuild of `src/shell/`: every case of every
//! command corpus in the repository (`tests/corpus/*.jsonl`, `tests/fixtures/effects/*.txt`,
//! and the fuzz seeds in `fuzz/seeds/*.txt`) runs through the real binary, and what the
//! shell model and the guard make of it is compared with `tests/snapshots/shell.txt`:
//!
//! - the hook's decision (`block`, `deny`, `nudge`, `allow`) and the rule that decided it, as
//!   `callus guard` answers the host (starter policy, test repository as working directory);
//! - for a `Bash` call, every effect line `callus guard test --json` reports, in order.
//!
//! The snapshot is not a statement that these answers are right (the corpus tests judge
//! that); it is the record that a restructuring changed none of them. A change that is meant
//! to alter an answer re-records the file (`CALLUS_BLESS=1 cargo test --test cli
//! shell_snapshot`) and the diff shows, case by case, which answers moved. On a mismatch the
//! whole new text is written to `target/shell-snapshot.actual` for `diff`.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::{Value, json};

use crate::common::{Env, stderr, stdout};

/// One case: where it was read (`file:line`), the tool and its input.
struct Case {
    at: String,
    tool: String,
    input: Value,
}

/// The JSONL corpora: `{"tool": T, "command": C}` or `{"tool": T, <input fields>}`.
fn jsonl_cases(rel: &str, text: &str) -> Vec<Case> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let mut v: Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{rel}:{}: {e}", n + 1));
        let obj = v.as_object_mut().expect("a corpus line is an object");
        let tool = obj
            .remove("tool")
            .and_then(|t| t.as_str().map(str::to_string))
            .unwrap_or_else(|| "Bash".to_string());
        for label in ["kind", "category", "why"] {
            obj.remove(label);
        }
        let input = match obj.remove("input") {
            Some(input) => input,
            None => Value::Object(obj.clone()),
        };
        out.push(Case {
            at: format!("{rel}:{}", n + 1),
            tool,
            input,
        });
    }
    out
}

/// The text corpora (format in the header of `peer-kinds-dcg.txt`): one Bash command per
/// line, `json:` + a JSON string, or `tool:NAME {json}`; `#` lines are comments.
fn text_cases(rel: &str, text: &str, env: &Env) -> Vec<Case> {
    let repo = env.repo_path().to_str().unwrap().to_string();
    let home = env.home_path().join("userhome");
    let home = home.to_str().unwrap().to_string();
    let mut out = Vec::new();
    for (n, raw) in text.lines().enumerate() {
        if raw.trim().is_empty() || raw.starts_with('#') {
            continue;
        }
        let line = raw.replace("@REPO@", &repo).replace("@HOME@", &home);
        let (tool, input) = if let Some(rest) = line.strip_prefix("tool:") {
            let (tool, input) = rest
                .split_once(' ')
                .unwrap_or_else(|| panic!("{rel}:{}: tool:NAME JSON", n + 1));
            let input: Value =
                serde_json::from_str(input).unwrap_or_else(|e| panic!("{rel}:{}: {e}", n + 1));
            (tool.to_string(), input)
        } else if let Some(rest) = line.strip_prefix("json:") {
            let command: String =
                serde_json::from_str(rest).unwrap_or_else(|e| panic!("{rel}:{}: {e}", n + 1));
            ("Bash".to_string(), json!({ "command": command }))
        } else {
            ("Bash".to_string(), json!({ "command": line }))
        };
        out.push(Case {
            at: format!("{rel}:{}", n + 1),
            tool,
            input,
        });
    }
    out
}

/// Every corpus file in a fixed order: (path relative to the crate, its cases).
fn corpora(env: &Env) -> Vec<Case> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for (dir, ext) in [
        ("tests/corpus", "jsonl"),
        ("tests/fixtures/effects", "txt"),
        ("fuzz/seeds", "txt"),
    ] {
        let Ok(read) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        for entry in read {
            let path = entry.unwrap().path();
            if path.extension().and_then(|e| e.to_str()) == Some(ext) {
                files.push(path);
            }
        }
    }
    files.sort();
    let mut cases = Vec::new();
    for path in files {
        let rel = path
            .strip_prefix(root)
            .unwrap()
            .to_str()
            .unwrap()
            .to_string();
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{rel}: {e}"));
        if path.extension().and_then(|e| e.to_str()) == Some("jsonl") {
            cases.extend(jsonl_cases(&rel, &text));
        } else {
            cases.extend(text_cases(&rel, &text, env));
        }
    }
    cases
}

/// The rule ids an answer names (`(rule ID)` in a refusal, `[rule ID]` per nudge), joined
/// with commas, or `-`.
fn rule_named(text: &str) -> String {
    let mut ids = Vec::new();
    for (open, close) in [("(rule ", ')'), ("[rule ", ']')] {
        let mut rest = text;
        while let Some(at) = rest.find(open) {
            rest = &rest[at + open.len()..];
            ids.push(rest.chars().take_while(|c| *c != close).collect::<String>());
        }
    }
    if ids.is_empty() {
        "-".to_string()
    } else {
        ids.join(",")
    }
}

/// The hook's answer to one call: decision and deciding rule.
fn hook_answer(env: &Env, case: &Case) -> String {
    let payload = json!({
        "session_id": "snapshot",
        "hook_event_name": "PreToolUse",
        "cwd": env.repo_path(),
        "tool_name": case.tool,
        "tool_input": case.input,
        "tool_use_id": "t",
    });
    let out = env.run(&["guard"], payload.to_string().as_bytes());
    match out.status.code() {
        Some(2) => format!("block {}", rule_named(&stderr(&out))),
        Some(0) if out.stdout.is_empty() => "allow -".to_string(),
        Some(0) => {
            let v: Value = serde_json::from_slice(&out.stdout)
                .unwrap_or_else(|e| panic!("{}: guard printed non-JSON ({e})", case.at));
            let hso = &v["hookSpecificOutput"];
            let reason = hso["permissionDecisionReason"]
                .as_str()
                .or_else(|| hso["additionalContext"].as_str())
                .unwrap_or_default();
            let decision = if hso["permissionDecision"] == "deny" {
                "deny"
            } else {
                "nudge"
            };
            format!("{decision} {}", rule_named(reason))
        }
        other => panic!("{}: guard exited {other:?}: {}", case.at, stderr(&out)),
    }
}

/// The effect lines `callus guard test --json` reports for a command.
fn effect_lines(env: &Env, case: &Case, command: &str) -> Vec<String> {
    let out = env.run(&["guard", "test", "--json", "--", command], b"");
    assert_eq!(out.status.code(), Some(0), "{}: {}", case.at, stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out))
        .unwrap_or_else(|e| panic!("{}: guard test printed non-JSON ({e})", case.at));
    v["effects"]
        .as_array()
        .map(|effects| {
            effects
                .iter()
                .map(|e| e["line"].as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// The whole snapshot text, with the test's temporary paths written as `@REPO@`/`@HOME@`.
fn render(env: &Env) -> String {
    let mut text = String::from(
        "# callus shell snapshot: see tests/shell_snapshot.rs. One record per corpus case:\n\
         # `## file:line tool input`, the hook's decision and rule, then the effect lines.\n",
    );
    for case in corpora(env) {
        let _ = writeln!(text, "## {} {} {}", case.at, case.tool, case.input);
        let _ = writeln!(text, "{}", hook_answer(env, &case));
        if case.tool == "Bash"
            && let Some(command) = case.input["command"].as_str()
        {
            for line in effect_lines(env, &case, command) {
                let _ = writeln!(text, "  {line}");
            }
        }
    }
    let repo = env.repo_path().to_str().unwrap().to_string();
    let home = env.home_path().join("userhome");
    let home = home.to_str().unwrap().to_string();
    let callus_home = env.home_path().to_str().unwrap().to_string();
    // The longest first: the user's home lies inside callus's temporary home.
    text.replace(&repo, "@REPO@")
        .replace(&home, "@HOME@")
        .replace(&callus_home, "@CALLUS_HOME@")
}

#[test]
fn every_corpus_case_decides_and_models_as_recorded() {
    let env = Env::new();
    let actual = render(&env);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let path = root.join("tests/snapshots/shell.txt");
    if std::env::var_os("CALLUS_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_default();
    if expected == actual {
        return;
    }
    let dump = root.join("target/shell-snapshot.actual");
    let _ = std::fs::write(&dump, &actual);
    let records = |t: &str| -> Vec<String> {
        t.split("\n## ")
            .map(str::to_string)
            .collect::<Vec<String>>()
    };
    let (want, got) = (records(&expected), records(&actual));
    let moved: Vec<String> = got
        .iter()
        .filter(|r| !want.contains(r))
        .take(12)
        .map(|r| format!("## {r}"))
        .collect();
    panic!(
        "{} of {} snapshot records changed (whole text: {}; re-record with CALLUS_BLESS=1 \
         only for an intended change, listed in the commit). First changed records:\n{}",
        got.iter().filter(|r| !want.contains(r)).count(),
        got.len(),
        dump.display(),
        moved.join("\n")
    );
}

#[test]
fn a_changed_answer_is_a_changed_record() {
    // The comparison above splits on record heads: a decision or an effect line that moves
    // must make its record differ, so the check cannot pass over a real change.
    let env = Env::new();
    let case = Case {
        at: "x:1".into(),
        tool: "Bash".into(),
        input: json!({ "command": "rm -rf ~" }),
    };
    assert_eq!(hook_answer(&env, &case), "block rm-recursive-root-or-home");
    let allowed = Case {
        at: "x:2".into(),
        tool: "Bash".into(),
        input: json!({ "command": "ls" }),
    };
    assert_eq!(hook_answer(&env, &allowed), "allow -");
    let lines = effect_lines(&env, &case, "rm -rf ~");
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].starts_with("deletes class=home recursive=true"),
        "{lines:?}"
    );
}
