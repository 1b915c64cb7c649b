//! `callus guard prune` on young rules: a rule enforced for less than the window, or on
//! fewer attempts than a verdict needs, is `too-young`, never `prune`.

use chrono::{Duration, Utc};
use serde_json::json;

use super::history::History;
use crate::common::{Env, json, stderr, stdout};

fn rules_env(rules: &serde_json::Value) -> Env {
    let env = Env::new();
    env.write_repo(".callus/rules.json", &rules.to_string());
    env
}

#[test]
fn a_rule_promoted_days_ago_is_too_young_not_pruned() {
    let today = Utc::now().date_naive();
    let young = (today - Duration::days(3)).to_string();
    let old = (today - Duration::days(200)).to_string();
    let env = rules_env(&json!({"rules": [
        {"id": "young", "tool": "Bash", "any": ["\\byoung-tool\\b"], "action": "nudge",
         "message": "m", "meta": {"promoted": young}},
        {"id": "old", "tool": "Bash", "any": ["\\bold-tool\\b"], "action": "nudge",
         "message": "m", "meta": {"promoted": old}},
        {"id": "thin", "tool": "Bash", "any": ["\\bthin-tool\\b"], "action": "nudge",
         "message": "m", "meta": {"promoted": old}},
    ]}));
    let mut h = History::open(&env);
    // The old rule's program ran often since its promotion: an honest prune.
    for i in 0..10 {
        h.call(
            "s",
            "Bash",
            "old-tool run",
            "success",
            Utc::now() - Duration::days(i + 1),
        );
    }
    // The thin rule is old, but its program ran twice since: fewer attempts than a verdict
    // needs (--min-attempts), so too young as well.
    for i in 0..2 {
        h.call(
            "s",
            "Bash",
            "thin-tool run",
            "success",
            Utc::now() - Duration::days(i + 1),
        );
    }
    h.fire(&[("unrelated", "nudge")], Some(Utc::now()), None);
    let o = env.run(&["guard", "prune", "--json"], b"");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let report = json(&o);
    let verdict = |id: &str| {
        report["rules"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["id"] == id)
            .map(|r| r["verdict"].as_str().unwrap_or_default().to_string())
            .unwrap()
    };
    assert_eq!(verdict("young"), "too-young", "{report:#}");
    assert_eq!(verdict("old"), "prune");
    assert_eq!(verdict("thin"), "too-young", "{report:#}");
    let thin = report["rules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "thin")
        .unwrap()
        .to_string();
    assert!(thin.contains("only 2 matching attempt(s)"), "{thin}");
    let text = stdout(&env.run(&["guard", "prune"], b""));
    assert!(text.contains("TOO-YOUNG"), "{text}");
}

#[test]
fn a_rule_that_measurably_helped_is_kept_however_often_it_fires() {
    let split = super::history::midnight_days_ago(30);
    let env = rules_env(&json!({"rules": [
        {"id": "helped-rule", "tool": "Bash", "match": "segment", "any": ["^alpha\\b"],
         "action": "nudge", "message": "use --entity",
         "meta": {"promoted": split.date_naive().to_string()}},
    ]}));
    let mut h = History::open(&env);
    h.conn.execute_batch("BEGIN").unwrap();
    let start = super::history::midnight_days_ago(60);
    let end = Utc::now() - Duration::hours(1);
    h.calls("alpha --id 1", 131, 25, start, split);
    let after = h.calls("alpha --id 2", 142, 2, split, end);
    h.conn.execute_batch("COMMIT").unwrap();
    // 40 firings: well above the review threshold.
    for call in after.iter().rev().take(40) {
        h.fire(
            &[("helped-rule", "nudge")],
            Some(Utc::now() - Duration::days(2)),
            Some(call),
        );
    }
    let o = env.run(&["guard", "prune", "--json"], b"");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let report = json(&o);
    let r = report["rules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "helped-rule")
        .unwrap();
    assert_eq!(
        (r["verdict"].as_str(), r["basis"].as_str()),
        (Some("keep"), Some("helped")),
        "{r:#}"
    );
}
