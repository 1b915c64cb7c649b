//! `examples/` cannot rot: every ruleset passes `callus guard check` and does in the layers
//! what its README says, the trace derives exactly the candidates the README lists, and each
//! host's hook file is what `callus install --dry-run` writes.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{Env, json, stderr, stdout};

fn example(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(rel)
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(example(rel)).unwrap_or_else(|e| panic!("examples/{rel}: {e}"))
}

fn rulesets() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(example("rulesets"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    out.sort();
    out
}

#[test]
fn every_example_ruleset_passes_guard_check_with_its_examples() {
    let env = Env::new();
    let files = rulesets();
    assert!(files.len() >= 3, "{files:?}");
    for file in &files {
        let o = env.run(&["guard", "check", file.to_str().unwrap(), "--json"], b"");
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}: {}",
            file.display(),
            stdout(&o)
        );
        let report = &json(&o)["files"][0];
        assert_eq!(report["ok"], true, "{report}");
        assert!(
            report["examples_passed"].as_u64().unwrap() >= 4,
            "{}: every example ruleset carries examples",
            file.display()
        );
    }
}

fn decision(env: &Env, command: &str) -> Value {
    let o = env.run(&["guard", "test", "--json", "--", command], b"");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    json(&o)
}

#[test]
fn the_layers_do_in_place_what_the_readme_says() {
    let env = Env::new();
    env.write_repo(".callus/rules.json", &read("rulesets/team-project.json"));
    env.write_home("rules.json", &read("rulesets/user.json"));
    let o = env.run(&["guard", "check"], b"");
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    // The team's promoted rule denies a bare psql; the user's `disable` removed the starter
    // nudge for it.
    let d = decision(&env, "psql -c 'select 1'");
    assert_eq!(d["decision"], "deny", "{d}");
    assert_eq!(d["winner"], "psql-needs-host");
    let fired: Vec<&str> = d["fired"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap())
        .collect();
    assert!(!fired.contains(&"bare-psql-no-target"), "{fired:?}");
    assert_eq!(
        decision(&env, "psql -h db.internal -c 'select 1'")["decision"],
        "allow"
    );
    assert_eq!(decision(&env, "grep -rn TODO src")["decision"], "nudge");
    // Without the user layer the starter's nudge is back.
    std::fs::remove_file(env.home_path().join("rules.json")).unwrap();
    let d = decision(&env, "psql -c 'select 1'");
    assert!(
        d["fired"].to_string().contains("bare-psql-no-target"),
        "{d}"
    );

    // The segment rule, through CALLUS_RULES as the README runs it.
    let mut env = Env::new();
    env.var(
        "CALLUS_RULES",
        example("rulesets/segment.json").to_str().unwrap(),
    );
    assert_eq!(
        decision(&env, "cd web && npm i left-pad")["decision"],
        "deny"
    );
    assert_eq!(decision(&env, "echo npm install")["decision"], "allow");
}

/// `(id, pattern, unless, tier, failures, attempts)` per README bullet.
type Listed = (String, String, Option<String>, String, u64, u64);

fn readme_candidates() -> Vec<Listed> {
    let readme = read("README.md");
    let section = readme
        .split("<!-- derive proposes -->")
        .nth(1)
        .and_then(|s| s.split("<!-- end -->").next())
        .expect("the derive section");
    let code = |s: &str| s.split('`').nth(1).map(str::to_string);
    section
        .lines()
        .filter(|l| l.starts_with("- `"))
        .map(|l| {
            let (head, rest) = l.split_once(": pattern ").unwrap();
            let unless = rest.split_once(" unless ").and_then(|(_, t)| code(t));
            let words: Vec<&str> = l.rsplit(", ").take(2).collect();
            let counts: Vec<u64> = words[0]
                .split_whitespace()
                .filter_map(|w| w.parse().ok())
                .collect();
            (
                code(head).unwrap(),
                code(rest).unwrap(),
                unless,
                words[1].to_string(),
                counts[0],
                counts[1],
            )
        })
        .collect()
}

#[test]
fn the_trace_derives_exactly_the_candidates_the_readme_lists() {
    let env = Env::new();
    let trace = example("trace/trace.jsonl");
    let o = env.run(
        &[
            "record",
            "import",
            trace.to_str().unwrap(),
            "--format",
            "trace",
        ],
        b"",
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let readme = read("README.md");
    assert!(readme.contains("callus derive --since 2026-11-16 --until 2026-11-23"));
    let o = env.run(
        &[
            "derive",
            "--since",
            "2026-11-16",
            "--until",
            "2026-11-23",
            "--json",
        ],
        b"",
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let mut derived: Vec<Listed> = json(&o)["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["id"].as_str().unwrap().to_string(),
                r["any"][0].as_str().unwrap().to_string(),
                r["unless"][0].as_str().map(str::to_string),
                r["meta"]["tier"].as_str().unwrap().to_string(),
                r["meta"]["fail_count"].as_u64().unwrap(),
                r["meta"]["attempt_count"].as_u64().unwrap(),
            )
        })
        .collect();
    let mut listed = readme_candidates();
    derived.sort();
    listed.sort();
    assert_eq!(listed.len(), 2);
    assert_eq!(derived, listed, "examples/README.md vs callus derive");
    // The team layer is what promoting them gives: it names them.
    let team = read("rulesets/team-project.json");
    for (id, ..) in &listed {
        assert!(team.contains(&format!("\"candidate\": \"{id}\"")), "{id}");
    }
}

/// Strings like `/abs/path/callus guard` become `callus guard`.
fn normalise(v: &mut Value) {
    match v {
        Value::String(s) => {
            for sub in ["guard", "record"] {
                if let Some(bin) = s.strip_suffix(&format!(" {sub}"))
                    && !bin.contains(' ')
                    && (bin == "callus" || bin.ends_with("/callus"))
                {
                    *s = format!("callus {sub}");
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(normalise),
        Value::Object(o) => o.values_mut().for_each(normalise),
        _ => {}
    }
}

#[test]
fn each_hosts_hook_file_is_what_install_dry_run_writes() {
    for (flag, target, file) in [
        (
            "--claude",
            ".claude/settings.json",
            "claude-code.settings.json",
        ),
        ("--codex", ".codex/hooks.json", "codex.hooks.json"),
        (
            "--gemini",
            ".gemini/settings.json",
            "gemini-cli.settings.json",
        ),
        ("--cursor", ".cursor/hooks.json", "cursor.hooks.json"),
        (
            "--copilot",
            ".github/hooks/callus.json",
            "copilot-cli.callus.json",
        ),
    ] {
        let env = Env::new();
        let o = env.run(&["install", flag, "--project", "--dry-run"], b"");
        assert_eq!(o.status.code(), Some(0), "{flag}: {}", stderr(&o));
        let diff = stdout(&o);
        let header = format!("+++ {}", env.repo_path().join(target).display());
        let body: String = diff
            .split(&header)
            .nth(1)
            .unwrap_or_else(|| panic!("{flag}: no {header} in {diff}"))
            .lines()
            .skip(2) // the rest of the header line and the hunk header
            .take_while(|l| !l.starts_with("--- "))
            .filter_map(|l| l.strip_prefix('+'))
            .collect::<Vec<_>>()
            .join("\n");
        let mut written: Value =
            serde_json::from_str(&body).unwrap_or_else(|e| panic!("{flag}: {e}: {body}"));
        normalise(&mut written);
        let example: Value = serde_json::from_str(&read(&format!("hooks/{file}"))).unwrap();
        assert_eq!(
            written, example,
            "examples/hooks/{file} vs install {flag} --dry-run"
        );
    }
}
