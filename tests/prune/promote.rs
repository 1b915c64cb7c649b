//! `callus rules promote|list|show`.

use chrono::{Duration, Utc};
use serde_json::{Value, json};

use super::history::History;
use crate::common::{Env, json, stderr, stdout};

const ID: &str = "derived-bash-psql-385101";

/// A candidate as derive writes it: reproducible, 6 of 10 attempts failed, ceiling deny.
fn env_with_candidate() -> Env {
    let env = Env::new();
    let today = Utc::now().date_naive().to_string();
    env.write_home(
        "candidates.json",
        &json!({"ruleset": "derived-candidates", "rules": [{
            "id": ID, "tool": "Bash", "severity": 40, "action": "monitor",
            "message": "DRAFT — recurring Bash failure",
            "meta": {"added": today, "tier": "reproducible", "fail_count": 6, "attempt_count": 10,
                     "fail_rate": 0.6, "action_ceiling": "deny", "command_shape": "psql"},
            "any": ["\\bpsql\\b"], "field": "command", "match": "segment"
        }]})
        .to_string(),
    );
    // The history behind it: bare psql fails every time, psql with a host works.
    let mut h = History::open(&env);
    let (from, to) = (
        Utc::now() - Duration::days(3),
        Utc::now() - Duration::hours(1),
    );
    h.calls("psql -c 'select 1'", 6, 6, from, to);
    h.calls("psql -h db.internal -c 'select 1'", 4, 0, from, to);
    env
}

fn target(env: &Env) -> std::path::PathBuf {
    env.repo_path().join(".callus/rules.json")
}

#[test]
fn an_action_above_the_ceiling_is_refused_and_one_at_it_is_accepted() {
    let env = env_with_candidate();
    let o = env.run(
        &[
            "rules",
            "promote",
            ID,
            "--action",
            "block",
            "--message",
            "m",
        ],
        b"",
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("ceiling for that tier is deny"),
        "{}",
        stderr(&o)
    );
    assert!(
        !target(&env).exists(),
        "a refused promotion wrote the ruleset"
    );

    let msg = "psql with no target uses the local socket; pass -h or a postgresql:// URL";
    let o = env.run(
        &["rules", "promote", ID, "--action", "deny", "--message", msg],
        b"",
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("guard check"));
    let text = std::fs::read_to_string(target(&env)).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    let rule = &doc["rules"][0];
    let keys: Vec<&str> = rule
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "id", "tool", "field", "match", "any", "severity", "action", "message", "meta"
        ]
    );
    assert_eq!(rule["action"], "deny");
    assert_eq!(rule["message"], msg);
    let meta = &rule["meta"];
    assert_eq!(meta["promoted"], Utc::now().date_naive().to_string());
    assert_eq!(meta["evidence"]["source"], "candidate");
    assert_eq!(meta["evidence"]["attempt_count"], 10);
    assert_eq!(meta["tier"], "reproducible");
    let meta_keys: Vec<&String> = meta.as_object().unwrap().keys().collect();
    let mut sorted = meta_keys.clone();
    sorted.sort();
    assert_eq!(meta_keys, sorted, "meta keys are not in a stable order");
    assert!(
        text.ends_with("}\n") && text.contains("\n  \"rules\": ["),
        "not pretty JSON"
    );

    // The written file round-trips through guard check, and the guard enforces it.
    let o = env.run(&["guard", "check", target(&env).to_str().unwrap()], b"");
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let o = env.run(&["guard", "test", "--", "cd db && psql -c 'select 1'"], b"");
    assert!(stdout(&o).contains("decision: deny"), "{}", stdout(&o));

    // Still listed in candidates.json, the promoted rule is judged once, as the project's.
    let o = env.run(&["guard", "prune", "--json"], b"");
    let report = json(&o);
    let mine: Vec<&Value> = report["rules"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["id"] == ID)
        .collect();
    assert_eq!(mine.len(), 1);
    assert_eq!(mine[0]["layer"], "project");
    assert_eq!(mine[0]["action"], "deny");
}

#[test]
fn a_changed_pattern_changes_the_recorded_evidence() {
    let env = env_with_candidate();
    // With hosts exempted, the matched population is the 6 bare calls, all failing.
    let o = env.run(
        &[
            "rules",
            "promote",
            ID,
            "--action",
            "block",
            "--message",
            "pass -h",
            "--unless",
            r"\s-h\s",
        ],
        b"",
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(target(&env)).unwrap()).unwrap();
    let meta = &doc["rules"][0]["meta"];
    assert_eq!(meta["evidence"]["source"], "backtest");
    assert_eq!(meta["attempt_count"], 6);
    assert_eq!(meta["fail_count"], 6);
    assert_eq!(meta["tier"], "deterministic");
    assert_eq!(meta["action_ceiling"], "block");
    assert_eq!(meta["evidence"]["crossfire"], 0);
    assert_eq!(doc["rules"][0]["unless"], json!([r"\s-h\s"]));

    // A pattern that only matches the working calls has no failure behind it: refused.
    let into = env.repo_path().join("other.json");
    let o = env.run(
        &[
            "rules",
            "promote",
            ID,
            "--action",
            "nudge",
            "--message",
            "m",
            "--pattern",
            r"^psql\s+-h\b",
            "--into",
            into.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("anecdotal"), "{}", stderr(&o));
    assert!(!into.exists());
}

#[test]
fn promoting_again_replaces_and_unknown_ids_are_input_errors() {
    let env = env_with_candidate();
    for msg in ["first", "second"] {
        let o = env.run(
            &[
                "rules",
                "promote",
                ID,
                "--action",
                "nudge",
                "--message",
                msg,
            ],
            b"",
        );
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(target(&env)).unwrap()).unwrap();
    assert_eq!(doc["rules"].as_array().unwrap().len(), 1);
    assert_eq!(doc["rules"][0]["message"], "second");
    let o = env.run(
        &[
            "rules",
            "promote",
            "nope",
            "--action",
            "nudge",
            "--message",
            "m",
        ],
        b"",
    );
    assert_eq!(o.status.code(), Some(3));
    assert!(stderr(&o).contains("no candidate 'nope'"));
}

#[test]
fn list_shows_layers_actions_tiers_and_last_firing_and_show_prints_the_starter_set() {
    let env = env_with_candidate();
    let h = History::open(&env);
    h.fire(&[(ID, "monitor")], Some(Utc::now()), None);
    let o = env.run(&["rules", "list", "--json"], b"");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let rows = json(&o);
    let cand = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == ID)
        .unwrap();
    assert_eq!(cand["layer"], "candidates");
    assert_eq!(cand["action"], "monitor");
    assert_eq!(cand["tier"], "reproducible");
    assert!(cand["last_fired"].is_string());
    let starter = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "rm-recursive-root-or-home")
        .unwrap();
    assert_eq!(
        (starter["layer"].as_str(), starter["pinned"].as_bool()),
        (Some("starter"), Some(true))
    );
    assert!(starter["last_fired"].is_null());
    let o = env.run(&["rules", "list"], b"");
    assert!(stdout(&o).contains(ID));

    let o = env.run(&["rules", "show", "starter", "--json"], b"");
    assert_eq!(json(&o)["ruleset"], "starter");
    let o = env.run(&["rules", "show", "starter"], b"");
    assert!(stdout(&o).contains("rm-recursive-root-or-home"));
    let o = env.run(&["rules", "show", "candidates"], b"");
    assert!(stdout(&o).contains(ID));
}

#[test]
fn an_anecdotal_candidate_is_promoted_at_monitor_at_most() {
    let env = Env::new();
    let id = "derived-bash-terraform-1";
    env.write_home(
        "candidates.json",
        &json!({"ruleset": "derived-candidates", "rules": [{
            "id": id, "tool": "Bash", "action": "monitor", "message": "DRAFT",
            "meta": {"added": Utc::now().date_naive().to_string(), "tier": "anecdotal",
                     "fail_count": 3, "attempt_count": 3},
            "any": ["\\bterraform\\b"]
        }]})
        .to_string(),
    );
    let promote = |action: &str| {
        env.run(
            &["rules", "promote", id, "--action", action, "--message", "m"],
            b"",
        )
    };
    let o = promote("nudge");
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(
            "its evidence is anecdotal — too few attempts to say anything (100% of 3 attempts); the ceiling for that tier is monitor"
        ),
        "{}",
        stderr(&o)
    );
    assert!(!target(&env).exists());
    let o = promote("monitor");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(target(&env)).unwrap()).unwrap();
    assert_eq!(doc["rules"][0]["action"], "monitor");
    assert_eq!(doc["rules"][0]["meta"]["tier"], "anecdotal");
}
