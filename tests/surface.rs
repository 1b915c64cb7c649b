//! The command line as a new user meets it (issue 17): exit codes as the README documents
//! them, errors that name their file and line, every `--help` with an example, shell
//! completions and man pages generated from the same definition, tables fitted to the
//! terminal and plain in a pipe, and the home directory the README promises.

use std::collections::BTreeSet;

use crate::common::{Env, json, stderr, stdout};

/// Every command path under `callus`, walked from the `Commands:` sections of `--help`
/// (`["guard"]`, `["guard", "check"]`, …), without `help`.
fn command_paths(env: &Env) -> Vec<Vec<String>> {
    fn walk(env: &Env, path: &[String], out: &mut Vec<Vec<String>>) {
        let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
        args.push("--help");
        let o = env.run(&args, b"");
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        let text = stdout(&o);
        let Some(listing) = text.split("Commands:\n").nth(1) else {
            return;
        };
        let subs: Vec<String> = listing
            .split("\n\n")
            .next()
            .unwrap_or("")
            .lines()
            .filter_map(|l| l.split_whitespace().next())
            .filter(|c| *c != "help")
            .map(str::to_string)
            .collect();
        for sub in subs {
            let mut next = path.to_vec();
            next.push(sub);
            out.push(next.clone());
            walk(env, &next, out);
        }
    }
    let mut out = Vec::new();
    walk(env, &[], &mut out);
    out
}

fn help(env: &Env, path: &[String]) -> String {
    let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
    args.push("--help");
    stdout(&env.run(&args, b""))
}

#[test]
fn every_help_has_an_example_that_names_its_own_command() {
    let env = Env::new();
    let paths = command_paths(&env);
    assert!(paths.len() >= 30, "walked only {paths:?}");
    let mut missing = Vec::new();
    for path in std::iter::once(Vec::new()).chain(paths) {
        let text = help(&env, &path);
        let examples = text.split("\nExamples:\n").nth(1);
        let own = format!("callus {}", path.join(" "));
        let ok = examples.is_some_and(|ex| {
            ex.lines()
                .filter(|l| l.starts_with("  ") && !l.trim_start().starts_with('#'))
                .any(|l| l.contains(own.trim_end()))
        });
        if !ok {
            missing.push(own);
        }
    }
    assert!(
        missing.is_empty(),
        "no example of itself in --help: {missing:?}"
    );
}

#[test]
fn uninstall_help_is_its_own_text() {
    let env = Env::new();
    let install = stdout(&env.run(&["install", "--help"], b""));
    let uninstall = stdout(&env.run(&["uninstall", "--help"], b""));
    assert!(install.contains("Wire Claude Code"), "{install}");
    assert!(
        !uninstall.contains("Wire "),
        "install's wording: {uninstall}"
    );
    assert!(
        !uninstall.contains("Write the"),
        "install's wording: {uninstall}"
    );
    assert!(uninstall.contains("Unwire Claude Code"), "{uninstall}");
    assert!(uninstall.contains("change nothing"), "{uninstall}");
}

#[test]
fn a_bad_time_flag_is_a_usage_error() {
    let env = Env::new();
    for args in [
        &["record", "stats", "--since", "bogus"][..],
        &["report", "--since", "yesterday"],
        &["report", "--until", "soon"],
        &["derive", "--since", "7y"],
    ] {
        let out = env.run(args, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "one line: {err}");
        assert!(err.starts_with("callus: --"), "{err}");
    }
}

#[test]
fn a_file_that_is_no_store_is_named() {
    let env = Env::new();
    std::fs::write(
        env.db(),
        "this is not a database, it is a text file\n".repeat(200),
    )
    .unwrap();
    let out = env.run(&["record", "stats"], b"");
    assert_eq!(out.status.code(), Some(4));
    let err = stderr(&out);
    assert!(err.contains(&env.db().display().to_string()), "{err}");
    assert!(err.contains("not a database"), "{err}");
}

#[test]
fn guard_check_reports_every_error_with_its_line() {
    let env = Env::new();
    let file = env.write_repo(
        "rules/many.json",
        r#"{"rules": [
  {"id": "bad-action", "any": ["x"], "action": "explode", "message": "m"},
  {"id": "fine", "any": ["y"], "message": "m"},
  {"id": "bad-any", "any": "psql", "message": "m"},
  {"id": "fine", "any": ["z"], "message": "m"},
  {"id": "no-message", "any": ["w"], "action": "deny"},
  {"id": "bad-regex", "any": ["(x"], "message": "m"}
]}"#,
    );
    let f = file.display().to_string();
    let out = env.run(&["guard", "check", &f], b"");
    assert_eq!(out.status.code(), Some(1));
    let o = stdout(&out);
    for want in [
        format!("error: {f}:2: rule 'bad-action': field 'action'"),
        format!("error: {f}:4: rule 'bad-any': field 'any'"),
        format!("error: {f}:5: rule 'fine': field 'id': duplicate id (first used at line 3)"),
        format!("error: {f}:6: rule 'no-message': field 'message'"),
    ] {
        assert!(o.contains(&want), "{want}\n{o}");
    }
    // A rule that parses is checked in full beside those that do not.
    assert!(
        o.lines()
            .any(|l| l.starts_with("    error: bad-regex: bad regex '(x'")
                && l.ends_with("(line 7)")),
        "{o}"
    );
    assert!(o.starts_with(&format!("✗ {f}: 6 rules")), "{o}");
    // A valid file's semantic problems carry their line too (after the message, which
    // starts with the rule id).
    let regex = env.write_repo(
        "rules/regex.json",
        "{\"rules\": [\n {\"id\": \"ok\", \"any\": [\"a\"], \"message\": \"m\"},\n {\"id\": \"r\", \"any\": [\"(x\"], \"message\": \"m\"}\n]}",
    );
    let r = regex.display().to_string();
    let out = env.run(&["guard", "check", "--json", &r], b"");
    let errors = json(&out)["files"][0]["errors"].clone();
    let first = errors[0].as_str().unwrap_or_default();
    assert!(
        first.starts_with("r: bad regex") && first.ends_with(" (line 3)"),
        "{errors}"
    );
}

#[test]
fn completions_are_generated_for_every_shell() {
    let env = Env::new();
    let paths = command_paths(&env);
    let tops: BTreeSet<&str> = paths.iter().map(|p| p[0].as_str()).collect();
    for (shell, marker) in [
        ("bash", "complete -F _callus"),
        ("zsh", "#compdef callus"),
        ("fish", "complete -c callus"),
        ("elvish", "edit:completion:arg-completer[callus]"),
        ("powershell", "Register-ArgumentCompleter"),
    ] {
        let out = env.run(&["completions", shell], b"");
        assert_eq!(out.status.code(), Some(0), "{shell}: {}", stderr(&out));
        let script = stdout(&out);
        assert!(script.contains(marker), "{shell}: {marker}");
        for top in &tops {
            assert!(script.contains(top), "{shell} completes {top}");
        }
        assert!(script.contains("since"), "{shell} completes flags");
    }
    // The bash script is valid bash.
    if let Ok(bash) = which("bash") {
        let out = env.run(&["completions", "bash"], b"");
        let check = crate::common::run_cmd(
            {
                let mut c = std::process::Command::new(bash);
                c.arg("-n");
                c
            },
            &out.stdout,
        );
        assert!(check.status.success(), "bash -n: {}", stderr(&check));
    }
    let out = env.run(&["completions", "tcsh"], b"");
    assert_eq!(
        out.status.code(),
        Some(2),
        "an unknown shell is a usage error"
    );
}

fn which(program: &str) -> Result<std::path::PathBuf, ()> {
    std::env::var_os("PATH")
        .and_then(|path| {
            std::env::split_paths(&path)
                .map(|d| d.join(program))
                .find(|p| p.is_file())
        })
        .ok_or(())
}

#[test]
fn man_pages_cover_every_command() {
    let env = Env::new();
    let out = env.run(&["man"], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let page = stdout(&out);
    assert!(page.contains(".TH callus 1"), "{page}");
    assert!(
        page.contains("Examples:"),
        "the examples reach the man page"
    );
    let dir = env.home_path().join("man1");
    let out = env.run(&["man", "--dir", dir.to_str().unwrap()], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let written: BTreeSet<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let mut want: BTreeSet<String> = command_paths(&env)
        .iter()
        .map(|p| format!("callus-{}.1", p.join("-")))
        .collect();
    want.insert("callus.1".into());
    assert_eq!(written, want);
    assert_eq!(
        stdout(&out).lines().count(),
        want.len(),
        "names each page written"
    );
    let check = std::fs::read_to_string(dir.join("callus-guard-check.1")).unwrap();
    assert!(
        check.contains("\\-\\-json") || check.contains("--json"),
        "{check}"
    );
}

/// Lines of a table (its borders and rows).
fn table_lines(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| l.trim_start().starts_with(['│', '┌', '└', '╞', '├']))
        .collect()
}

/// A home with something in every listing: imported calls, a firing in the audit chain.
fn lived_in() -> Env {
    let env = Env::new();
    let transcript = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/record/claude-transcript.jsonl");
    let out = env.run(&["record", "import", transcript.to_str().unwrap()], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        crate::common::guard_decision(
            &env,
            "Bash",
            &serde_json::json!({"command": "git push --force origin main"})
        ),
        "deny"
    );
    env
}

const LISTINGS: &[&[&str]] = &[
    &["record", "stats"],
    &["rules", "list"],
    &["rules", "show", "starter"],
    &["report"],
    &["guard", "audit", "tail"],
];

#[test]
fn tables_fit_the_terminal_and_stay_whole_in_a_pipe() {
    let mut env = lived_in();
    // In a pipe: plain, whole rows. The starter's longest message is on one line.
    let starter = crate::common::starter_rules(&env);
    let longest = starter
        .iter()
        .filter_map(|r| r["message"].as_str())
        .max_by_key(|m| m.len())
        .unwrap()
        .to_string();
    assert!(longest.len() > 100, "{longest}");
    let piped = stdout(&env.run(&["rules", "show", "starter"], b""));
    assert!(
        piped.lines().any(|l| l.contains(&longest)),
        "a message cut in a pipe: {longest}"
    );
    for args in LISTINGS {
        let out = env.run(args, b"");
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        assert!(
            !table_lines(&stdout(&out)).is_empty(),
            "{args:?} prints a table"
        );
    }
    // In a 72-column terminal (`$COLUMNS`, as a terminal's width would be): no table line
    // is wider.
    env.var("COLUMNS", "72");
    for args in LISTINGS {
        let out = env.run(args, b"");
        let text = stdout(&out);
        let wide: Vec<&str> = table_lines(&text)
            .into_iter()
            .filter(|l| l.chars().count() > 72)
            .collect();
        assert!(wide.is_empty(), "{args:?} wider than 72: {wide:#?}");
    }
}

#[test]
fn every_listing_command_takes_json() {
    let env = Env::new();
    // Commands that print no listing: hooks, writers, generators.
    let exempt = [
        "guard",
        "record",
        "scope hook",
        "scope declare",
        "install",
        "uninstall",
        "session resume",
        "rules promote",
        "guard audit export",
        "demo",
        "completions",
        "man",
    ];
    let mut missing = Vec::new();
    for path in command_paths(&env) {
        let name = path.join(" ");
        let text = help(&env, &path);
        let leaf = !text.contains("\nCommands:\n");
        if leaf && !exempt.contains(&name.as_str()) && !text.contains("--json") {
            missing.push(name);
        }
    }
    assert!(
        missing.is_empty(),
        "listing commands without --json: {missing:?}"
    );
}

#[test]
fn the_home_is_callus_home_or_dot_callus_whatever_xdg_says() {
    // The README says why callus keeps ~/.callus and reads no XDG_* variable.
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    assert!(readme.contains("Why `~/.callus` and not `$XDG_DATA_HOME`"));
    let env = Env::new();
    let home = env.home_path().join("userhome");
    let xdg = env.home_path().join("xdg");
    let mut cmd = env.cmd(&["record"]);
    cmd.env_remove("CALLUS_HOME")
        .env("XDG_DATA_HOME", xdg.join("data"))
        .env("XDG_CONFIG_HOME", xdg.join("config"))
        .env("XDG_STATE_HOME", xdg.join("state"));
    let event = serde_json::json!({
        "session_id": "s", "hook_event_name": "PostToolUse", "prompt_id": "p",
        "cwd": env.repo_path(), "tool_name": "Bash", "tool_input": {"command": "ls"},
        "tool_use_id": "toolu_xdg", "tool_response": {"stdout": ""}
    });
    let out = crate::common::run_cmd(cmd, event.to_string().as_bytes());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        home.join(".callus/callus.db").is_file(),
        "the store is in ~/.callus"
    );
    assert!(!xdg.exists(), "nothing under XDG_*");
}
