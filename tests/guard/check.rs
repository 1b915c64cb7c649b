//! `guard check` and `guard test` through the binary: callusguard's shipped rulesets pass
//! unchanged with the same counts, examples and ceilings fail a file, typed validation names
//! the file/rule/field, the pinned tier cases of spec §5.2, and the `--json` shapes.

use serde_json::{Value, json};

use super::fixture_ruleset;
use crate::common::{Env, json as out_json, stderr, stdout};

fn check(env: &Env, files: &[&std::path::Path], json: bool) -> std::process::Output {
    let mut args: Vec<String> = vec!["guard".into(), "check".into()];
    args.extend(files.iter().map(|p| p.display().to_string()));
    if json {
        args.push("--json".into());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    env.run(&args, b"")
}

#[test]
fn callusguards_three_shipped_rulesets_pass_unchanged() {
    let env = Env::new();
    let files = [
        fixture_ruleset("project-repo.rules.json"),
        fixture_ruleset("readonly-db.rules.json"),
        fixture_ruleset("starter.rules.json"),
    ];
    let refs: Vec<&std::path::Path> = files.iter().map(std::path::PathBuf::as_path).collect();
    let out = check(&env, &refs, false);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert_eq!(
        stdout(&out),
        format!(
            "✓ {}: 5 rules\n✓ {}: 15 rules, 4 example assertion(s) across 2 rule(s)\n✓ {}: 6 rules, 28 example assertion(s) across 6 rule(s)\n\nOK — 3 file(s)\n",
            files[0].display(),
            files[1].display(),
            files[2].display()
        )
    );
}

#[test]
fn a_failing_example_fails_the_file() {
    let env = Env::new();
    let file = env.write_repo(
        "rules/bad-examples.json",
        r#"{"rules": [{"id": "psql", "tool": "Bash", "any": ["\\bpsql\\b"], "message": "m",
            "examples": {"should_fire": ["psql -c x", "mysql -e x"], "should_not_fire": ["ls", "echo psql"]}}]}"#,
    );
    let out = check(&env, &[&file], false);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stdout(&out),
        format!(
            "✗ {}: 1 rules, 2 example assertion(s) across 1 rule(s)\n    example FAIL: psql: should_fire did NOT fire: 'mysql -e x' (line 1)\n    example FAIL: psql: should_not_fire DID fire: 'echo psql' (line 1)\n\nFAILED — 1 file(s)\n",
            file.display()
        )
    );
}

#[test]
fn typed_validation_names_the_file_rule_and_field() {
    let env = Env::new();
    let cases = [
        (
            r#"{"rules": [{"id": "r1", "any": "psql", "message": "m"}]}"#,
            "rule 'r1': field 'any': must be an array of strings",
        ),
        (
            r#"{"rules": [{"id": "r2", "any": ["x"], "action": "explode", "message": "m"}]}"#,
            "rule 'r2': field 'action': unknown action 'explode'",
        ),
        (
            r#"{"rules": [{"id": "r3", "any": ["x"], "action": "deny"}]}"#,
            "rule 'r3': field 'message': a deny rule needs a message",
        ),
        (
            r#"{"rules": [{"id": "r4", "any": ["x"], "colour": "red", "message": "m"}]}"#,
            "rule 'r4': field 'colour': unknown rule key",
        ),
        (
            r#"{"rules": [{"id": "r5", "any": ["x"], "severity": "high", "message": "m"}]}"#,
            "rule 'r5': field 'severity': must be a number",
        ),
        (
            r#"{"rules": [{"id": "r6", "any": ["x"], "flags": "im", "message": "m"}]}"#,
            "rule 'r6': field 'flags'",
        ),
        (
            r#"{"rules": [{"id": "r7", "any": ["x"], "match": "word", "message": "m"}]}"#,
            "rule 'r7': field 'match'",
        ),
        (
            r#"{"rules": [{"id": "r8", "any": ["x"], "pinned": "yes", "message": "m"}]}"#,
            "rule 'r8': field 'pinned'",
        ),
        (
            r#"{"rules": [{"id": "r9", "any": ["x"], "message": "m", "meta": {"promoted": "last week"}}]}"#,
            "rule 'r9': field 'meta.promoted'",
        ),
        (r#"{"rulez": []}"#, "field 'rulez': unknown top-level key"),
        (
            r#"{"rules": [{"id": "r10", "any": ["(x"], "message": "m"}]}"#,
            "r10: bad regex '(x'",
        ),
        ("{nope", "does not parse"),
    ];
    for (i, (text, want)) in cases.iter().enumerate() {
        let file = env.write_repo(&format!("rules/case{i}.json"), text);
        let out = check(&env, &[&file], false);
        assert_eq!(out.status.code(), Some(1), "{want}");
        let o = stdout(&out);
        assert!(o.starts_with(&format!("✗ {}", file.display())), "{o}");
        assert!(o.contains(want), "{want}: {o}");
        if !want.starts_with("does not") && !want.contains("bad regex") {
            assert!(
                o.contains(&format!("error: {}", file.display())),
                "names the file: {o}"
            );
        }
    }
}

#[test]
fn the_new_keys_are_accepted() {
    let env = Env::new();
    let file = env.write_repo(
        "rules/new.json",
        r#"{"rules": [{"id": "seg", "tool": "Bash", "match": "segment", "pinned": true, "any": ["^psql\\b"],
            "action": "nudge", "message": "m", "meta": {"promoted": "2026-11-01", "added": "2026-10-01"},
            "examples": {"should_fire": ["cd x && psql -c 1"], "should_not_fire": ["echo psql"]}},
           {"id": "look", "tool": "Bash", "any": ["fetch-tool\\.py\\b(?!.*--entity)"], "message": "pass --entity",
            "examples": {"should_fire": ["python3 fetch-tool.py --id 3"], "should_not_fire": ["python3 fetch-tool.py --entity x"]}}]}"#,
    );
    let out = check(&env, &[&file], false);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(
        stdout(&out).contains(
            "warn: look: regex 'fetch-tool\\.py\\b(?!.*--entity)' needs the backtracking engine"
        ),
        "{}",
        stdout(&out)
    );
}

/// Spec §5.2's pinned cases, enforced through the tier ceiling: each evidence pair allows
/// exactly the action of its tier's ceiling, and one step more fails `check`.
#[test]
fn pinned_tier_cases_through_the_ceiling() {
    let cases: [(Value, Value, &str, Option<&str>); 9] = [
        (json!(20), json!(20), "deterministic", Some("block")),
        (json!(6), json!(10), "reproducible", Some("deny")),
        (json!(3), json!(30), "probabilistic", Some("nudge")),
        (json!(95), json!(100), "deterministic", Some("block")),
        (json!(50), json!(100), "reproducible", Some("deny")),
        (json!(49), json!(100), "probabilistic", Some("nudge")),
        (json!(99), json!(0), "unknown", Some("nudge")),
        (json!(99), Value::Null, "unknown", Some("nudge")),
        (json!("x"), json!("y"), "unknown", Some("nudge")),
    ];
    let order = ["monitor", "nudge", "deny", "block"];
    let env = Env::new();
    for (fails, attempts, tier, ceiling) in cases {
        let ceiling = ceiling.unwrap();
        let at = order.iter().position(|a| *a == ceiling).unwrap();
        let rule = |action: &str, stated: bool| {
            let mut meta = json!({"fail_count": fails, "attempt_count": attempts});
            if stated {
                meta["tier"] = json!(tier);
            }
            json!({"rules": [{"id": "r", "tool": "Bash", "any": ["x"], "action": action, "message": "m", "meta": meta}]})
                .to_string()
        };
        for stated in [true, false] {
            let ok = env.write_repo("rules/tier-ok.json", &rule(ceiling, stated));
            let out = check(&env, &[&ok], false);
            assert_eq!(
                out.status.code(),
                Some(0),
                "{fails}/{attempts} at {ceiling}: {}",
                stdout(&out)
            );
            if let Some(over) = order.get(at + 1) {
                let bad = env.write_repo("rules/tier-bad.json", &rule(over, stated));
                let out = check(&env, &[&bad], false);
                assert_eq!(out.status.code(), Some(1), "{fails}/{attempts} at {over}");
                assert!(
                    stdout(&out).contains(&format!(
                        "r: action '{over}' exceeds the ceiling for tier '{tier}' ('{ceiling}')"
                    )),
                    "{}",
                    stdout(&out)
                );
            }
        }
    }
    // Too few attempts is anecdotal (monitor only), whatever the rate; 5/5 is deterministic.
    let four = env.write_repo(
        "rules/four.json",
        r#"{"rules": [{"id": "r", "any": ["x"], "action": "nudge", "message": "m", "meta": {"fail_count": 4, "attempt_count": 4}}]}"#,
    );
    assert!(
        stdout(&check(&env, &[&four], false))
            .contains("exceeds the ceiling for tier 'anecdotal' ('monitor')")
    );
    // A stated tier its own numbers contradict cannot unlock an action.
    let forged = env.write_repo(
        "rules/forged.json",
        r#"{"rules": [{"id": "r", "any": ["x"], "action": "block", "message": "m", "meta": {"tier": "deterministic", "fail_count": 3, "attempt_count": 30}}]}"#,
    );
    let out = check(&env, &[&forged], false);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("meta.tier 'deterministic' does not match its own evidence (3 of 30 attempts → 'probabilistic')"), "{}", stdout(&out));
    // An unrecognised tier never widens authority.
    let odd = env.write_repo(
        "rules/odd.json",
        r#"{"rules": [{"id": "r", "any": ["x"], "action": "nudge", "message": "m", "meta": {"tier": "legendary"}}]}"#,
    );
    assert!(
        stdout(&check(&env, &[&odd], false))
            .contains("exceeds the ceiling for tier 'legendary' ('monitor')")
    );
}

#[test]
fn check_json_shape() {
    let env = Env::new();
    let good = fixture_ruleset("readonly-db.rules.json");
    let bad = env.write_repo("rules/bad.json", r#"{"rules": [{"id": "a", "any": ["x"], "message": "m", "examples": {"should_fire": ["y"]}}]}"#);
    let out = check(&env, &[&good, &bad], true);
    assert_eq!(out.status.code(), Some(1));
    let v = out_json(&out);
    assert_eq!(v["ok"], false);
    assert_eq!(
        v["files"][0],
        json!({
            "name": good.display().to_string(), "ok": true, "rules": 15, "examples_passed": 4,
            "rules_with_examples": 2, "errors": [], "example_failures": [], "warnings": []
        })
    );
    assert_eq!(v["files"][1]["ok"], false);
    assert_eq!(
        v["files"][1]["example_failures"],
        json!(["a: should_fire did NOT fire: 'y' (line 1)"])
    );
}

#[test]
fn check_without_files_checks_every_active_layer() {
    let mut env = Env::new();
    let user = env.write_home(
        "rules.json",
        r#"{"disable": ["remote-script-to-shell"], "rules": []}"#,
    );
    let project = env.write_repo(
        ".callus/rules.json",
        r#"{"disable": ["rm-recursive-root-or-home"], "rules": []}"#,
    );
    let extra = env.write_home("extra.json", r#"{"rules": []}"#);
    let cands = env.write_home(
        "candidates.json",
        r#"{"rules": [{"id": "c", "any": ["x"], "action": "monitor"}]}"#,
    );
    env.var("CALLUS_RULES", extra.to_str().unwrap());
    let out = env.run(&["guard", "check", "--json"], b"");
    let v = out_json(&out);
    let names: Vec<&str> = v["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "starter",
            user.to_str().unwrap(),
            project.to_str().unwrap(),
            extra.to_str().unwrap(),
            cands.to_str().unwrap()
        ]
    );
    // The project's disable list is flagged: it is honoured only in the user file. The user's
    // names a real starter rule, so it draws no warning (an unknown id would).
    assert_eq!(v["files"][1]["warnings"], json!([]));
    assert!(
        v["files"][2]["warnings"][0]
            .as_str()
            .unwrap()
            .contains("honoured only in $CALLUS_HOME/rules.json")
    );
}

#[test]
fn guard_test_explains_the_decision() {
    let env = Env::new();
    // The starter denies this push too (git-push-force-protected, pinned, severity 80): with
    // two denies the higher severity wins, so the project rule (90) is the winner explained.
    let project = env.write_repo(
        ".callus/rules.json",
        r#"{"rules": [{"id": "no-force", "tool": "Bash", "any": ["\\bgit\\s+push\\b.*--force\\b"], "action": "deny",
            "severity": 90, "message": "Open a pull request instead.", "meta": {"tier": "reproducible", "fail_rate": 0.8, "attempt_count": 10, "fail_count": 8}}]}"#,
    );
    let out = env.run(
        &[
            "guard", "test", "--", "git", "push", "--force", "origin", "main",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let o = stdout(&out);
    assert!(o.starts_with("decision: deny\n"), "{o}");
    assert!(
        o.contains(&format!("winner:   no-force (deny, {})", project.display())),
        "{o}"
    );
    assert!(
        o.contains("fired:    git-push-force-protected [deny] from starter"),
        "{o}"
    );
    assert!(
        o.contains("evidence: tier reproducible, fail rate 0.8, attempts 10"),
        "{o}"
    );
    assert!(o.contains("agent sees (deny reason):\ncallus denied this call (rule no-force): Open a pull request instead."), "{o}");

    let out = env.run(
        &[
            "guard",
            "test",
            "--json",
            "--",
            "git push --force origin main",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0));
    let v = out_json(&out);
    assert_eq!(v["decision"], "deny");
    assert_eq!(v["winner"], "no-force");
    assert_eq!(v["tool"], "Bash");
    assert_eq!(v["value"], "git push --force origin main");
    assert_eq!(
        v["acs"],
        json!({"decision": "deny", "reason": "callus:no-force", "message": "Open a pull request instead."})
    );
    let fired = v["fired"].as_array().unwrap();
    assert_eq!(fired.len(), 2);
    assert_eq!(
        (fired[0]["id"].as_str(), fired[0]["layer"].as_str()),
        (Some("git-push-force-protected"), Some("starter"))
    );
    assert_eq!(fired[1]["layer"], "project");
    assert_eq!(fired[1]["layer_file"], project.display().to_string());
    assert_eq!(fired[1]["pattern"], "\\bgit\\s+push\\b.*--force\\b");
    assert_eq!(
        fired[1]["evidence"],
        json!({"tier": "reproducible", "fail_rate": 0.8, "attempts": 10, "pinned": false})
    );
    assert_eq!(fired[0]["evidence"]["pinned"], true);

    // Another tool and field; --cwd outside the repo drops the project layer.
    let out = env.run(
        &[
            "guard",
            "test",
            "--tool",
            "apply_patch",
            "--cwd",
            "/",
            "--json",
            "--",
            "*** Begin Patch\n*** Add File: .env\n*** End Patch",
        ],
        b"",
    );
    let v = out_json(&out);
    assert_eq!(v["decision"], "deny");
    assert_eq!(v["winner"], "apply-patch-writes-secret-file");
    assert_eq!(v["fired"].as_array().map(Vec::len), Some(1));
    let out = env.run(&["guard", "test", "--", "ls"], b"");
    assert_eq!(stdout(&out), "decision: allow\nno rule fired\n");
}

/// A reader that closes the pipe early (`callus rules show starter | head -1`) is not an
/// error: exit 0, no panic message.
#[test]
fn a_closed_stdout_is_not_a_panic() {
    let env = Env::new();
    let mut cmd = env.cmd(&["rules", "show", "starter", "--json"]);
    cmd.stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    drop(child.stdout.take()); // close the read end before callus writes
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(out.status.code(), Some(0), "{err}");
}
