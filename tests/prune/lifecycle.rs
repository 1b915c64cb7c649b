//! `callus guard prune`: callusguard's pinned lifecycle cases (spec §7.3–§7.4) and the measured
//! effect shapes callusguard published (spec §12), on generated histories.

use chrono::{Duration, Utc};
use serde_json::{Value, json};

use super::history::{History, midnight_days_ago};
use crate::common::{Env, json, starter_rules, stderr, stdout};

/// A home whose user layer disables the unpinned starter rules (read from `callus rules show
/// starter --json`), so only `rules` (project layer) and the pinned starter rules are active.
fn env_with(rules: &Value) -> Env {
    let env = Env::new();
    let unpinned: Vec<Value> = starter_rules(&env)
        .iter()
        .filter(|r| r["pinned"] != true)
        .map(|r| r["id"].clone())
        .collect();
    env.write_home("rules.json", &json!({"disable": unpinned}).to_string());
    env.write_repo(".callus/rules.json", &rules.to_string());
    env
}

/// The ids of the built-in starter's pinned rules.
fn pinned_starter_ids(env: &Env) -> Vec<String> {
    starter_rules(env)
        .iter()
        .filter(|r| r["pinned"] == true)
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect()
}

fn prune(env: &Env, extra: &[&str]) -> (Value, String) {
    let mut args = vec!["guard", "prune", "--json"];
    args.extend_from_slice(extra);
    let o = env.run(&args, b"");
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
    let j = json(&o);
    args.retain(|a| *a != "--json");
    let t = env.run(&args, b"");
    assert_eq!(t.status.code(), Some(0), "stderr: {}", stderr(&t));
    (j, stdout(&t))
}

fn rule<'a>(report: &'a Value, id: &str) -> &'a Value {
    report["rules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == id)
        .unwrap_or_else(|| panic!("no rule {id} in {report:#}"))
}

fn r(id: &str, action: &str, extra: &Value) -> Value {
    let mut v = json!({"id": id, "tool": "Bash", "any": [format!("\\b{id}\\b")],
        "action": action, "message": "m"});
    for (k, x) in extra.as_object().unwrap() {
        v[k] = x.clone();
    }
    v
}

#[test]
fn measured_effects_read_as_helped_no_effect_harmful_and_volume_shift() {
    let split = midnight_days_ago(30);
    let date = split.date_naive().to_string();
    let seg = |id: &str, prog: &str| {
        json!({"id": id, "tool": "Bash", "match": "segment", "any": [format!("^{prog}\\b")],
            "unless": ["--entity\\b"], "action": "nudge", "message": "use --entity",
            "meta": {"promoted": date}})
    };
    let env = env_with(&json!({"rules": [
        seg("helped-rule", "alpha"), seg("flat-rule", "beta"),
        seg("worse-rule", "gamma"), seg("shift-rule", "delta"),
    ]}));
    let mut h = History::open(&env);
    h.conn.execute_batch("BEGIN").unwrap();
    let start = midnight_days_ago(60);
    let end = Utc::now() - Duration::hours(1);
    // (program, before n, before fails, after n, after fails): callusguard's published shapes.
    let plan = [
        ("alpha", 131, 25, 142, 2),   // 19.1% → 1.4%
        ("beta", 500, 131, 500, 134), // 26.2% → 26.8%
        ("gamma", 300, 21, 300, 52),  // 7.0% → 17.3%
        ("delta", 980, 74, 174, 33),  // 7.6% → 19.0%, attempts 980 → 174
    ];
    let mut after_ids = Vec::new();
    for (prog, bn, bf, an, af) in plan {
        h.calls(&format!("cd work && {prog} --id 1"), bn, bf, start, split);
        after_ids.push(h.calls(&format!("FOO=1 {prog} --id 2"), an, af, split, end));
        // Exempted by `unless`: all failing, on both sides. Counted, they would move every rate.
        h.calls(&format!("{prog} --entity x"), 40, 40, start, end);
    }
    h.conn.execute_batch("COMMIT").unwrap();
    let fired_at = Utc::now() - Duration::days(2);
    for ((prog, ..), ids) in plan.iter().zip(&after_ids) {
        let id = match *prog {
            "alpha" => "helped-rule",
            "beta" => "flat-rule",
            "gamma" => "worse-rule",
            _ => "shift-rule",
        };
        for call in ids.iter().rev().take(10) {
            h.fire(&[(id, "nudge")], Some(fired_at), Some(call));
        }
    }

    let (report, text) = prune(&env, &[]);
    let helped = rule(&report, "helped-rule");
    assert_eq!(helped["verdict"], "keep");
    assert_eq!(helped["basis"], "helped");
    assert_eq!(helped["effect"]["before"]["attempts"], 131);
    assert_eq!(helped["effect"]["before"]["failures"], 25);
    assert_eq!(helped["effect"]["after"]["attempts"], 142);
    assert_eq!(helped["effect"]["after"]["failures"], 2);
    assert!(helped["effect"]["p_value"].as_f64().unwrap() < 0.001);

    let flat = rule(&report, "flat-rule");
    assert_eq!(flat["verdict"], "no-effect", "{flat:#}");
    assert_eq!(flat["effect"]["after"]["failures"], 134);

    let worse = rule(&report, "worse-rule");
    assert_eq!(worse["verdict"], "harmful", "{worse:#}");

    let shift = rule(&report, "shift-rule");
    assert_eq!(shift["verdict"], "keep", "{shift:#}");
    assert_eq!(shift["basis"], "volume-shift");
    assert!(shift["note"].as_str().unwrap().contains("980 → 174"));
    assert_eq!(shift["effect"]["volume_collapsed"], true);
    for id in ["helped-rule", "flat-rule", "worse-rule"] {
        assert_eq!(
            rule(&report, id)["effect"]["volume_collapsed"],
            false,
            "{id}"
        );
    }

    // Each nudged call followed to its outcome through tool_use_id.
    let expected_failures: i64 = after_ids[0]
        .iter()
        .rev()
        .take(10)
        .map(|id| {
            h.conn
                .query_row(
                    "SELECT status = 'failure' FROM tool_calls WHERE tool_use_id = ?1",
                    [id],
                    |r| r.get::<_, i64>(0),
                )
                .unwrap()
        })
        .sum();
    assert_eq!(helped["followed"]["calls"], 10);
    assert_eq!(helped["followed"]["failure"], expected_failures);
    assert_eq!(helped["followed"]["success"], 10 - expected_failures);

    assert!(text.contains("✗ HARMFUL (1)"), "{text}");
    assert!(text.contains("≈ NO-EFFECT (1)"), "{text}");
    assert!(
        text.contains("note: attempt volume fell 980 → 174"),
        "{text}"
    );
    assert_eq!(report["counts"]["harmful"], 1);
    assert_eq!(report["counts"]["no-effect"], 1);
}

#[test]
fn deterministic_monitor_rule_with_ten_firings_is_promoted_to_block() {
    let env = env_with(&json!({"rules": []}));
    env.write_home(
        "candidates.json",
        &json!({"ruleset": "derived-candidates", "rules": [
            {"id": "derived-bash-psql-1a2b3c", "tool": "Bash", "any": ["\\bpsql\\b"],
             "action": "monitor", "message": "DRAFT",
             "meta": {"tier": "deterministic", "attempt_count": 10, "fail_count": 10}}
        ]})
        .to_string(),
    );
    let mut h = History::open(&env);
    let ids = h.calls(
        "psql -c 'select 1'",
        10,
        10,
        Utc::now() - Duration::days(5),
        Utc::now(),
    );
    for id in &ids {
        h.fire(
            &[("derived-bash-psql-1a2b3c", "monitor")],
            Some(Utc::now() - Duration::days(1)),
            Some(id),
        );
    }
    let (report, text) = prune(&env, &[]);
    let c = rule(&report, "derived-bash-psql-1a2b3c");
    assert_eq!(c["layer"], "candidates");
    assert_eq!(c["verdict"], "promote");
    assert_eq!(c["promote_to"], "block");
    assert_eq!(c["tier"], "deterministic");
    assert_eq!(c["tier_source"], "measured");
    assert_eq!(c["followed"]["failure"], 10);
    assert!(text.contains("▲ PROMOTE (1)"));
    assert!(text.contains("promote to at most block"));
}

#[test]
fn pinned_rules_that_never_fire_stay_and_unpinned_ones_are_pruned() {
    let env = env_with(&json!({"rules": [
        r("guard-rail", "block", &json!({"pinned": true})),
        r("stale", "nudge", &json!({})),
    ]}));
    let h = History::open(&env);
    h.fire(&[("unrelated", "nudge")], Some(Utc::now()), None);
    let (report, text) = prune(&env, &[]);
    assert_eq!(rule(&report, "guard-rail")["verdict"], "keep");
    assert_eq!(rule(&report, "guard-rail")["basis"], "pinned");
    // So are the starter's pinned rules, none of which fired.
    let pinned = pinned_starter_ids(&env);
    assert!(!pinned.is_empty());
    for id in &pinned {
        let r = rule(&report, id);
        assert_eq!(
            (r["verdict"].as_str(), r["basis"].as_str()),
            (Some("keep"), Some("pinned")),
            "{id}"
        );
    }
    assert_eq!(rule(&report, "stale")["verdict"], "prune");
    assert_eq!(report["orphan_rule_ids"], json!(["unrelated"]));
    assert!(text.contains("fired but no longer declared: unrelated"));
    assert!(text.contains("the tool working, not rotting"));
}

#[test]
fn callusguard_classification_cases_from_the_audit_chain() {
    let rules = json!({"rules": [
        r("mon5", "monitor", &json!({})),
        r("mon1", "monitor", &json!({})),
        r("nudge30", "nudge", &json!({})),
        r("block3", "block", &json!({})),
        r("prob50", "monitor", &json!({"meta": {"tier": "probabilistic"}})),
        r("repro7", "monitor", &json!({"meta": {"tier": "reproducible"}})),
        r("never", "nudge", &json!({})),
    ]});
    let env = env_with(&rules);
    let rules_path = env.repo_path().join(".callus/rules.json");
    let before = std::fs::read(&rules_path).unwrap();
    let h = History::open(&env);
    let now = Some(Utc::now() - Duration::hours(1));
    h.fire_n("mon5", "monitor", 5, now);
    h.fire_n("mon1", "monitor", 1, now);
    h.fire_n("nudge30", "nudge", 30, now);
    h.fire_n("block3", "block", 3, now);
    h.fire_n("prob50", "monitor", 50, now);
    h.fire_n("repro7", "monitor", 7, now);
    // A corrupt record is skipped, never fatal.
    h.fire_n("mon1", "monitor", 1, now);
    h.conn
        .execute(
            "UPDATE audit SET record = '{not json' WHERE seq = (SELECT max(seq) FROM audit)",
            [],
        )
        .unwrap();
    let (report, _) = prune(&env, &[]);
    let v = |id: &str| rule(&report, id)["verdict"].as_str().unwrap().to_string();
    assert_eq!(v("mon5"), "promote");
    assert_eq!(v("mon1"), "keep");
    assert_eq!(rule(&report, "mon1")["count"], 1);
    assert_eq!(v("nudge30"), "review");
    assert_eq!(v("block3"), "keep");
    assert_eq!(v("prob50"), "keep");
    assert!(
        rule(&report, "prob50")["reason"]
            .as_str()
            .unwrap()
            .contains("not the same as failing reliably")
    );
    assert_eq!(v("repro7"), "promote");
    assert_eq!(rule(&report, "repro7")["promote_to"], "deny");
    assert_eq!(v("never"), "prune");
    assert_eq!(report["corrupt_events"], 1);
    assert_eq!(
        std::fs::read(&rules_path).unwrap(),
        before,
        "prune edited the ruleset"
    );
}

#[test]
fn review_starts_above_25_firings_and_anecdotal_evidence_is_not_promoted() {
    let rules = json!({"rules": [
        r("nudge25", "nudge", &json!({})),
        r("nudge26", "nudge", &json!({})),
        r("anec9", "monitor", &json!({"meta": {"tier": "anecdotal"}})),
        r("unk9", "monitor", &json!({"meta": {"tier": "unknown"}})),
    ]});
    let env = env_with(&rules);
    let h = History::open(&env);
    let now = Some(Utc::now() - Duration::hours(1));
    h.fire_n("nudge25", "nudge", 25, now);
    h.fire_n("nudge26", "nudge", 26, now);
    h.fire_n("anec9", "monitor", 9, now);
    h.fire_n("unk9", "monitor", 9, now);
    let (report, _) = prune(&env, &[]);
    let at = |id: &str, k: &str| rule(&report, id)[k].clone();
    assert_eq!(at("nudge25", "verdict"), "keep");
    assert_eq!(at("nudge26", "verdict"), "review");
    // Anecdotal evidence (too few attempts) never earns more than monitor, however often the
    // rule fires; unknown evidence may be armed up to a nudge.
    assert_eq!(at("anec9", "verdict"), "keep");
    assert!(
        at("anec9", "reason")
            .as_str()
            .unwrap()
            .contains("its evidence is anecdotal"),
        "{report:#}"
    );
    assert_eq!(at("unk9", "verdict"), "promote");
    assert_eq!(at("unk9", "promote_to"), "nudge");
}

#[test]
fn missing_and_empty_stores_are_loud_not_reassuring() {
    let env = env_with(&json!({"rules": [r("x", "nudge", &json!({}))]}));
    let (report, text) = prune(&env, &[]);
    assert_eq!(report["audit_readable"], false);
    assert!(text.contains("No readable audit log"), "{text}");
    assert!(text.contains("lack of evidence"));
    assert_eq!(rule(&report, "x")["verdict"], "prune");
    // An existing store with an empty chain is no better.
    drop(History::open(&env));
    let (report, text) = prune(&env, &[]);
    assert_eq!(report["audit_readable"], false);
    assert!(text.contains("No readable audit log"));
}

#[test]
fn an_aged_log_is_a_real_prune_signal_and_a_wider_window_recovers_it() {
    let env = env_with(&json!({"rules": [r("old", "nudge", &json!({}))]}));
    let h = History::open(&env);
    h.fire_n("old", "nudge", 1, Some(Utc::now() - Duration::days(60)));
    let (report, text) = prune(&env, &[]);
    assert_eq!(report["audit_readable"], true);
    assert_eq!(report["events_total"], 1);
    assert_eq!(report["events_in_window"], 0);
    assert!(text.contains("every verdict predates the window"), "{text}");
    assert!(!text.contains("No readable audit log"));
    assert_eq!(rule(&report, "old")["verdict"], "prune");
    let (report, _) = prune(&env, &["--days", "90"]);
    assert_eq!(rule(&report, "old")["verdict"], "keep");
}

#[test]
fn undated_events_are_counted_and_labelled() {
    let env = env_with(&json!({"rules": [r("u", "nudge", &json!({}))]}));
    let h = History::open(&env);
    h.fire_n("u", "nudge", 3, None);
    let (report, text) = prune(&env, &[]);
    assert_eq!(report["events_in_window"], 3);
    assert_eq!(report["undated_events"], 3);
    assert_eq!(rule(&report, "u")["verdict"], "keep");
    assert!(text.contains("ALL-TIME"), "{text}");
    assert!(!text.contains("3 verdict(s) in the last 30 days"));
    assert!(text.contains("carry no `ts`"));

    let env = env_with(&json!({"rules": [r("u", "nudge", &json!({}))]}));
    let h = History::open(&env);
    h.fire_n("u", "nudge", 1, None);
    h.fire_n("u", "nudge", 2, Some(Utc::now()));
    let (_, text) = prune(&env, &[]);
    assert!(text.contains("1 of them undated"), "{text}");

    let env = env_with(&json!({"rules": [r("u", "nudge", &json!({}))]}));
    History::open(&env).fire_n("u", "nudge", 2, Some(Utc::now()));
    let (_, text) = prune(&env, &[]);
    assert!(!text.contains("carry no `ts`"));
    assert!(text.contains("Nothing to cut back"), "{text}");
}
