//! Human output fitted to the terminal (issue 17): with `$COLUMNS` (as a terminal's width
//! would be) every line of prose a command prints is word-wrapped to that width, and no line
//! is wider unless it is one word (a path, a `code` span) that cannot be broken without
//! breaking a copy of it; without `$COLUMNS` and not on a terminal (as here: stdout is a
//! pipe), the same text comes out unwrapped, with the same words in the same order; `--json`
//! is never wrapped.
//!
//! The store is the bundled example trace (`examples/trace/trace.jsonl`), its two candidates
//! derived and one promoted, so every command has its long lines: rule ids, layer paths,
//! deny messages, notes, caveats.

use std::path::Path;
use std::process::Output;

use unicode_width::UnicodeWidthStr as _;

use crate::common::{Env, run_cmd, stderr, stdout};

const WIDTH: usize = 60;
const WINDOW: [&str; 4] = ["--since", "2026-11-16", "--until", "2026-11-23"];

/// A home holding the example trace, derived once, its sudo candidate promoted into the
/// project layer; a ruleset with errors in the repo.
fn env() -> Env {
    let env = Env::new();
    let trace = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/trace/trace.jsonl");
    let args = [
        "record",
        "import",
        trace.to_str().unwrap(),
        "--format",
        "trace",
    ];
    let o = env.run(&args, b"");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = env.run(&[&["derive"][..], &WINDOW].concat(), b"");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = env.run(
        &[
            "rules",
            "promote",
            "derived-bash-sudo-cad622be",
            "--action",
            "deny",
            "--message",
            "sudo cannot read a password without a terminal: ask the user to run the \
             privileged step themselves",
        ],
        b"",
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // Once more: this run retires the promoted candidate, so the runs compared are alike.
    let o = env.run(&[&["derive"][..], &WINDOW].concat(), b"");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    env.write_repo(
        "bad-ruleset-with-a-long-file-name.json",
        r#"{"rules": [
  {"id": "broken-rule-with-a-long-name", "tool": "Bash", "any": ["(unclosed"], "action": "deny"},
  {"id": "y", "tool": "Bash", "action": "explode", "any": ["x"]}
]}
"#,
    );
    env
}

/// Run `args` at `$COLUMNS=60` and without `$COLUMNS`: (fitted, plain).
fn both(env: &Env, args: &[&str]) -> (Output, Output) {
    let mut fitted = env.cmd(args);
    fitted.env("COLUMNS", WIDTH.to_string());
    let mut plain = env.cmd(args);
    plain.env_remove("COLUMNS");
    (run_cmd(fitted, b""), run_cmd(plain, b""))
}

fn is_table_line(line: &str) -> bool {
    line.trim_start()
        .starts_with(['┌', '│', '╞', '└', '├', '╭', '╰'])
}

/// One word: no space outside a `code` span (a quoted command is copied whole).
fn one_word(line: &str) -> bool {
    let mut in_code = false;
    let mut words = 0;
    let mut in_word = false;
    for c in line.trim().chars() {
        if c == '`' {
            in_code = !in_code;
        }
        if c == ' ' && !in_code {
            in_word = false;
        } else if !in_word {
            in_word = true;
            words += 1;
        }
    }
    words <= 1
}

/// The words of the prose lines (tables are fitted by their own columns, so their cells
/// break differently).
fn prose_words(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| !is_table_line(l))
        .flat_map(str::split_whitespace)
        .collect()
}

/// `text` (fitted) has no line wider than 60 columns but one-word lines, and the same prose
/// as `plain`, which does have lines wider than 60 (else this would prove nothing).
/// How the fitted output's words relate to the plain output's.
#[derive(Clone, Copy)]
enum Words {
    /// The same words in the same order: only line breaks changed.
    Same,
    /// Every plain word, in order, with words added (a table that became blocks).
    Added,
}

fn assert_fitted(what: &str, fitted: &str, plain: &str, words: Words) {
    let wide_plain: Vec<&str> = plain
        .lines()
        .filter(|l| !is_table_line(l) && l.width() > WIDTH)
        .collect();
    assert!(
        !wide_plain.is_empty(),
        "{what}: no line of the plain output is wider than {WIDTH}:\n{plain}"
    );
    let wide: Vec<&str> = fitted
        .lines()
        .filter(|l| l.width() > WIDTH && !one_word(l))
        .collect();
    assert!(
        wide.is_empty(),
        "{what}: wider than {WIDTH} at COLUMNS={WIDTH}: {wide:#?}\n{fitted}"
    );
    match words {
        Words::Same => assert_eq!(
            prose_words(fitted),
            prose_words(plain),
            "{what}: wrapping changed the words"
        ),
        Words::Added => {
            let fitted_words = prose_words(fitted);
            let mut rest = fitted_words.iter();
            for w in prose_words(plain) {
                assert!(
                    rest.any(|f| *f == w),
                    "{what}: wrapping lost or reordered {w:?}"
                );
            }
        }
    }
    // The plain output is exactly what it was before wrapping existed: no line of it was
    // broken (each wide line is there whole).
    for line in wide_plain {
        assert!(
            !fitted.lines().any(|l| l == line),
            "{what}: {line:?} not wrapped"
        );
    }
}

/// Both runs succeed (or fail alike) and stdout is fitted.
fn check(env: &Env, args: &[&str]) -> (Output, Output) {
    check_words(env, args, Words::Same)
}

/// [`check`], with the words of stdout related as `words` says.
fn check_words(env: &Env, args: &[&str], words: Words) -> (Output, Output) {
    let (fitted, plain) = both(env, args);
    assert_eq!(
        fitted.status.code(),
        plain.status.code(),
        "{args:?}: {}",
        stderr(&fitted)
    );
    assert_fitted(&args.join(" "), &stdout(&fitted), &stdout(&plain), words);
    (fitted, plain)
}

#[test]
fn guard_test_is_fitted() {
    let env = env();
    let (o, _) = check(
        &env,
        &[
            "guard", "test", "--", "sudo", "apt-get", "install", "-y", "jq",
        ],
    );
    // The rule's layer file is named whole, on the line its `fired:` hangs from.
    let text = stdout(&o);
    assert!(
        text.contains("fired:    derived-bash-sudo-cad622be [deny] from\n          /"),
        "{text}"
    );
}

#[test]
fn guard_check_is_fitted() {
    let env = env();
    let (o, _) = check(
        &env,
        &["guard", "check", "bad-ruleset-with-a-long-file-name.json"],
    );
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn guard_prune_is_fitted() {
    let env = env();
    check(&env, &["guard", "prune"]);
}

#[test]
fn guard_audit_verify_is_fitted() {
    let env = env();
    check(&env, &["guard", "audit", "verify"]);
}

#[test]
fn derive_and_its_stderr_summary_are_fitted() {
    let env = env();
    // Candidates too wide for a table become blocks: words are added, none lost, and the
    // prose around them is unchanged.
    let args = [&["derive"][..], &WINDOW].concat();
    let (fitted, plain) = check_words(&env, &args, Words::Added);
    // "wrote N candidate rule(s) -> FILE (…)" on stderr is fitted too.
    assert_fitted(
        "derive stderr",
        &stderr(&fitted),
        &stderr(&plain),
        Words::Same,
    );
}

/// Eight columns do not fit 60: each candidate becomes a block whose first line is its id,
/// whole (a reader copies it into `derive explain`); with room, or in a pipe, the table.
#[test]
fn derive_candidates_are_blocks_when_the_table_does_not_fit() {
    let env = env();
    let args = [&["derive"][..], &WINDOW].concat();
    let doc: serde_json::Value =
        serde_json::from_str(&stdout(&env.run(&[&args[..], &["--json"]].concat(), b""))).unwrap();
    let ids: Vec<&str> = doc["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert!(!ids.is_empty(), "{doc:#}");
    let (fitted, plain) = both(&env, &args);
    let (fitted, plain) = (stdout(&fitted), stdout(&plain));
    for id in &ids {
        assert!(
            fitted.lines().any(|l| l == *id),
            "{id} on a line of its own:\n{fitted}"
        );
        assert!(
            plain.lines().any(|l| l.starts_with('│') && l.contains(id)),
            "{id} in a table row:\n{plain}"
        );
    }
    assert!(!fitted.contains('│'), "no table at 60 columns:\n{fitted}");
    assert!(
        fitted.contains("tier deterministic (failed 100% of 5)"),
        "{fitted}"
    );
    let mut wide = env.cmd(&args);
    wide.env("COLUMNS", "200");
    let wide = stdout(&run_cmd(wide, b""));
    assert!(wide.contains('│'), "a table when it fits:\n{wide}");
}

#[test]
fn derive_explain_is_fitted() {
    let env = env();
    check(&env, &["derive", "explain", "derived-bash-sudo-cad622be"]);
}

#[test]
fn report_is_fitted() {
    let env = env();
    check(
        &env,
        &["report", "--since", "2026-11-01", "--until", "2026-12-31"],
    );
}

#[test]
fn record_stats_is_fitted() {
    let env = env();
    check(&env, &["record", "stats", "--since", "2026-11-01"]);
}

#[test]
fn doctor_is_fitted() {
    let env = env();
    check(&env, &["doctor"]);
}

#[test]
fn json_is_never_wrapped() {
    let env = env();
    for args in [
        &["guard", "prune", "--json"][..],
        &[
            "report",
            "--since",
            "2026-11-01",
            "--until",
            "2026-12-31",
            "--json",
        ],
        &["derive", "explain", "derived-bash-sudo-cad622be", "--json"],
        &[
            "guard", "test", "--json", "--", "sudo", "apt-get", "install", "-y", "jq",
        ],
    ] {
        let (fitted, plain) = both(&env, args);
        assert_eq!(
            fitted.status.code(),
            Some(0),
            "{args:?}: {}",
            stderr(&fitted)
        );
        let text = stdout(&fitted);
        assert!(
            text.lines().any(|l| l.width() > WIDTH),
            "{args:?}: a JSON document with nothing wider than {WIDTH} proves nothing"
        );
        assert_eq!(text, stdout(&plain), "{args:?}");
    }
}

#[test]
fn derive_explain_shows_sample_commands_whole_whatever_the_width() {
    // One command that fails half the time: its successes are the candidate's crossfire,
    // listed as sample lines.
    let env = Env::new();
    let command = "make test PROJECT=/home/user/projects/a-long-project-name/services/api";
    let mut trace = String::new();
    for i in 0..10 {
        let mut call = serde_json::json!({
            "ts": format!("2026-11-{:02}T{:02}:00:00Z", 16 + i / 3, 9 + i),
            "session_id": format!("s{}", i % 4),
            "tool_name": "Bash",
            "tool_input": {"command": command},
            "status": if i % 2 == 1 { "success" } else { "failure" },
        });
        if i % 2 == 0 {
            call["error"] = "Exit code 2\nmake: *** [test] Error 2".into();
        }
        trace.push_str(&call.to_string());
        trace.push('\n');
    }
    let path = env.write_repo("flaky.jsonl", &trace);
    let o = env.run(
        &[
            "record",
            "import",
            path.to_str().unwrap(),
            "--format",
            "trace",
        ],
        b"",
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = env.run(&[&["derive", "--json"][..], &WINDOW].concat(), b"");
    let id = crate::common::json(&o)["rules"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let o = env.run(&[&["derive"][..], &WINDOW].concat(), b"");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let (fitted, _) = check(&env, &["derive", "explain", &id]);
    let text = stdout(&fitted);
    // The tables' timestamps are kept whole too (a fitted column would cut them at 60).
    assert!(
        text.lines()
            .any(|l| l.starts_with("│ 2026-11-16T09:00:00Z ")),
        "{text}"
    );
    let path_arg = command.rsplit(' ').next().unwrap();
    let samples: Vec<&str> = text
        .lines()
        .filter(|l| l.trim_start().starts_with("crossfire: 2026"))
        .collect();
    assert_eq!(samples.len(), 5, "{text}");
    // Each sample's command is all there: the path on the line after, whole.
    let lines: Vec<&str> = text.lines().collect();
    for (i, l) in lines.iter().enumerate() {
        if l.trim_start().starts_with("crossfire: 2026") {
            let next = lines[i + 1].trim();
            assert_eq!(next, path_arg, "{text}");
        }
    }
}
