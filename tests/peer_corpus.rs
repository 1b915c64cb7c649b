//! The starter policy against corpora written from other guards' documented coverage
//! (`tests/fixtures/effects/peer-kinds-{dcg,cc-safety-net,openmoat}.txt`: dcg's packs,
//! cc-safety-net's README and test kinds, openmoat's `MoatBench` scenario kinds, each line
//! written for callus) and an adversarial file of new spellings built from bash semantics
//! (`adversarial-spellings.txt`). Every line runs through the real `callus guard` hook in a
//! test repository. Issue 14's thresholds: at least 95% of the dangerous commands of each
//! peer file denied or blocked, at least 90% of the adversarial ones, and no benign command
//! of any file denied or blocked. A failure prints the rate per kind and every miss.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::common::{Env, guard_decision};

/// One corpus line: its section's kind, whether it must be stopped, the tool and its input.
struct Case {
    kind: String,
    stop: bool,
    tool: String,
    input: Value,
    text: String,
}

/// Parse a corpus file (format in the header of `peer-kinds-dcg.txt`); `@REPO@` and
/// `@HOME@` become the test repository and the user's home.
fn load(name: &str, env: &Env) -> Vec<Case> {
    let path = format!(
        "{}/tests/fixtures/effects/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let repo = env.repo_path().to_str().unwrap().to_string();
    let home = env.home_path().join("userhome");
    let home = home.to_str().unwrap().to_string();
    let mut section: Option<(String, bool)> = None;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.replace("@REPO@", &repo).replace("@HOME@", &home);
        if let Some(head) = line.strip_prefix("## ") {
            let field = |k: &str| {
                head.split_whitespace()
                    .find_map(|w| w.strip_prefix(k))
                    .map(str::to_string)
            };
            let kind = field("kind=").unwrap_or_else(|| panic!("{path}:{}: no kind=", n + 1));
            let expect = field("expect=").unwrap_or_default();
            assert!(
                expect == "stop" || expect == "allow",
                "{path}:{}: expect= must be stop or allow",
                n + 1
            );
            section = Some((kind, expect == "stop"));
            continue;
        }
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let (kind, stop) = section
            .clone()
            .unwrap_or_else(|| panic!("{path}:{}: a case before any section", n + 1));
        let (tool, input) = if let Some(rest) = line.strip_prefix("tool:") {
            let (tool, input) = rest
                .split_once(' ')
                .unwrap_or_else(|| panic!("{path}:{}: tool:NAME JSON", n + 1));
            let input: Value =
                serde_json::from_str(input).unwrap_or_else(|e| panic!("{path}:{}: {e}", n + 1));
            (tool.to_string(), input)
        } else if let Some(rest) = line.strip_prefix("json:") {
            let command: String =
                serde_json::from_str(rest).unwrap_or_else(|e| panic!("{path}:{}: {e}", n + 1));
            ("Bash".to_string(), json!({ "command": command }))
        } else {
            ("Bash".to_string(), json!({ "command": line }))
        };
        out.push(Case {
            kind,
            stop,
            tool,
            input,
            text: line.clone(),
        });
    }
    out
}

/// Per kind: (cases, correct, misses).
type Tally = BTreeMap<(bool, String), (usize, usize, Vec<String>)>;

fn run(name: &str) -> Tally {
    let env = Env::new();
    let mut tally = Tally::new();
    for case in load(name, &env) {
        let d = guard_decision(&env, &case.tool, &case.input);
        let stopped = d == "block" || d == "deny";
        let entry = tally.entry((case.stop, case.kind)).or_default();
        entry.0 += 1;
        if stopped == case.stop {
            entry.1 += 1;
        } else {
            entry.2.push(format!("{d}: {}", case.text));
        }
    }
    tally
}

fn rate(tally: &Tally, stop: bool) -> (usize, usize) {
    tally
        .iter()
        .filter(|((s, _), _)| *s == stop)
        .fold((0, 0), |(n, ok), (_, (c, k, _))| (n + c, ok + k))
}

fn report(tally: &Tally) -> String {
    tally
        .iter()
        .map(|((stop, kind), (n, ok, misses))| {
            let want = if *stop { "stop" } else { "allow" };
            format!("{want} {kind}: {ok}/{n}\n  {}", misses.join("\n  "))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `name` meets `min_percent` of its dangerous lines stopped and refuses none of its benign
/// lines; each file must hold enough of both to mean something.
fn check(name: &str, min_percent: usize) {
    check_sized(name, min_percent, 50, 15);
}

fn check_sized(name: &str, min_percent: usize, min_bad: usize, min_good: usize) {
    let tally = run(name);
    let (bad, bad_ok) = rate(&tally, true);
    let (good, good_ok) = rate(&tally, false);
    assert!(
        bad >= min_bad && good >= min_good,
        "{name}: too small ({bad} dangerous, {good} benign)"
    );
    assert!(
        bad_ok * 100 >= bad * min_percent,
        "{name}: {bad_ok}/{bad} dangerous stopped, below {min_percent}%:\n{}",
        report(&tally)
    );
    assert_eq!(
        good_ok,
        good,
        "{name}: benign commands refused:\n{}",
        report(&tally)
    );
}

#[test]
fn dcg_kinds_are_stopped_and_their_safe_patterns_allowed() {
    check("peer-kinds-dcg.txt", 95);
}

#[test]
fn cc_safety_net_kinds_are_stopped_and_their_allowed_list_allowed() {
    check("peer-kinds-cc-safety-net.txt", 95);
}

#[test]
fn openmoat_scenario_kinds_are_stopped_and_their_benign_ones_allowed() {
    check("peer-kinds-openmoat.txt", 95);
}

#[test]
fn adversarial_spellings_from_bash_semantics_are_stopped() {
    check("adversarial-spellings.txt", 90);
}

#[test]
fn a_second_batch_written_after_the_fixes_is_stopped_too() {
    check("held-out-batch-2.txt", 95);
}

#[test]
fn a_third_batch_of_bash_semantics_and_remote_commands_is_stopped() {
    check_sized("probe-batch-3.txt", 95, 25, 10);
}

/// Written from sh-guard, bash-vet-mcp, claude-bash-guard and cc-bash-guard (the file's
/// header says which kinds from which), measured before the model was changed for it.
#[test]
fn a_fourth_batch_from_guards_not_used_before_is_stopped() {
    check("held-out-batch-4.txt", 95);
}
