//! Integration tests: the README's command table says what `callus --help` says.

use crate::common::{Env, stdout};

/// The subcommands `callus --help` lists (without `help`).
fn help_commands(env: &Env) -> Vec<String> {
    let out = env.run(&["--help"], b"");
    assert!(out.status.success());
    let text = stdout(&out);
    let listing = text
        .split("Commands:\n")
        .nth(1)
        .and_then(|rest| rest.split("\n\n").next())
        .expect("a Commands: section");
    listing
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_string)
        .collect()
}

/// The first word after `callus` of every row of the README's command table.
fn readme_commands() -> Vec<String> {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md");
    let table = readme
        .split("## Commands")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .expect("a Commands section");
    let rows: Vec<&str> = table
        .lines()
        .filter(|l| l.starts_with("| `callus "))
        .collect();
    // One table, unbroken: no blank line between its first and last row.
    let body = table
        .lines()
        .skip_while(|l| !l.starts_with("| `callus "))
        .take_while(|l| l.starts_with('|'))
        .count();
    assert_eq!(
        body,
        rows.len(),
        "the README's command table is broken by a non-row line"
    );
    let mut out = Vec::new();
    for row in rows {
        for cell_cmd in row.split('`').skip(1).step_by(2) {
            if let Some(rest) = cell_cmd.strip_prefix("callus ") {
                let word = rest.split_whitespace().next().unwrap_or("");
                if !out.iter().any(|w| w == word) {
                    out.push(word.to_string());
                }
            }
        }
    }
    out
}

#[test]
fn the_readme_command_table_lists_every_command_and_only_those() {
    let env = Env::new();
    let mut help = help_commands(&env);
    let mut readme = readme_commands();
    help.sort();
    readme.sort();
    assert_eq!(readme, help, "README command table vs `callus --help`");
}
