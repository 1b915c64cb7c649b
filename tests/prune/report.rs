//! `callus report`: numbers checked against hand computation on a small fixture, and the HTML
//! page rendered in headless Chromium.

use std::path::Path;
use std::process::Command;

use chrono::{DateTime, Duration, Utc};
use serde_json::{Value, json};

use super::history::{History, midnight_days_ago};
use crate::common::{Env, json, stderr};

const PSQL_SIG: &str = "fatal: database 'S' does not exist";

/// Two weeks from `d0`, laid out so every number below can be counted by hand.
fn fixture() -> (Env, DateTime<Utc>) {
    let d0 = midnight_days_ago(21);
    let d = |days: i64, hours: i64| d0 + Duration::days(days) + Duration::hours(hours);
    let env = Env::new();
    let promoted = (d0 + Duration::days(7)).date_naive().to_string();
    env.write_repo(
        ".callus/rules.json",
        &json!({"rules": [
            {"id": "psql-rule", "tool": "Bash", "match": "segment", "any": ["^psql\\b"],
             "action": "nudge", "message": "pass -h",
             "meta": {"promoted": promoted, "tier": "reproducible"}},
            {"id": "authored-rule", "tool": "Bash", "any": ["\\bgit\\s+push\\b"],
             "action": "nudge", "message": "m", "meta": {"promoted": promoted}},
        ]})
        .to_string(),
    );
    let mut h = History::open(&env);
    let mut c = |s: &str, tool: &str, cmd: &str, status: &str, at, shape, sig| {
        h.call_shaped(s, tool, cmd, status, at, shape, sig);
    };
    // Week 1: psql 4 failed of 6 (reproducible → proposed); make test 3/3 (anecdotal →
    // withheld); git push 2 failed (below min-count); one denied call (not an attempt).
    for i in 0..6 {
        let status = if i < 4 { "failure" } else { "success" };
        c(
            "a",
            "Bash",
            "cd db && psql -c 'select 1'",
            status,
            d(0, i + 1),
            Some("psql"),
            Some(PSQL_SIG),
        );
    }
    for i in 0..3 {
        c(
            "a",
            "Bash",
            "make test",
            "failure",
            d(1, i),
            Some("make test"),
            Some("e1"),
        );
    }
    for i in 0..7 {
        let status = if i < 2 { "failure" } else { "success" };
        c(
            "b",
            "Bash",
            "git push origin x",
            status,
            d(2, i),
            Some("git push"),
            Some("e2"),
        );
    }
    c(
        "b",
        "Bash",
        "rm -rf build",
        "denied",
        d(3, 0),
        Some("rm"),
        None,
    );
    // Week 2: psql 3 failed of 5 (same cluster again); WebFetch 3 of 6 (tool-wide, proposed);
    // Glob 5 failures (excluded tool).
    for i in 0..5 {
        let status = if i < 3 { "failure" } else { "success" };
        c(
            "b",
            "Bash",
            "psql -c 'select 2'",
            status,
            d(8, i),
            Some("psql"),
            Some(PSQL_SIG),
        );
    }
    for i in 0..6 {
        let status = if i < 3 { "failure" } else { "success" };
        c(
            "c",
            "WebFetch",
            "https://dead.example/x",
            status,
            d(9, i),
            None,
            Some("e3"),
        );
    }
    for i in 0..5 {
        c(
            "c",
            "Glob",
            "/nope",
            "failure",
            d(10, i),
            Some("Glob"),
            Some("e4"),
        );
    }
    // Outside the period: must not count anywhere.
    c(
        "z",
        "Bash",
        "psql -c 'x'",
        "failure",
        d(-1, 0),
        Some("psql"),
        Some(PSQL_SIG),
    );
    c(
        "z",
        "Bash",
        "psql -c 'x'",
        "failure",
        d(14, 1),
        Some("psql"),
        Some(PSQL_SIG),
    );
    h.fire(&[("psql-rule", "nudge")], Some(d(8, 0)), None);
    h.fire(&[("psql-rule", "nudge")], Some(d(8, 1)), None);
    h.fire(&[("some-candidate", "monitor")], Some(d(9, 0)), None);
    h.fire(&[("psql-rule", "nudge")], Some(d(-2, 0)), None);
    (env, d0)
}

fn period(d0: DateTime<Utc>) -> (String, String) {
    (
        d0.date_naive().to_string(),
        (d0 + Duration::days(14)).date_naive().to_string(),
    )
}

#[test]
#[allow(clippy::many_single_char_names)] // a hand count reads best with short names
fn json_numbers_match_a_hand_count() {
    let (env, d0) = fixture();
    let (since, until) = period(d0);
    let o = env.run(
        &["report", "--since", &since, "--until", &until, "--json"],
        b"",
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = json(&o);
    let t = &r["totals"];
    assert_eq!(t["sessions"], 3); // a, b, c
    assert_eq!(t["tool_calls"], 6 + 3 + 7 + 1 + 5 + 6 + 5);
    assert_eq!(t["failures"], 4 + 3 + 2 + 3 + 3 + 5);
    assert_eq!(t["denied"], 1);
    assert!((t["fail_rate"].as_f64().unwrap() - 20.0 / 32.0).abs() < 1e-12);
    assert_eq!(t["verdicts"], json!({"nudge": 2, "allow": 1}));

    let f = &r["funnel"];
    assert_eq!(f["windows"], 2);
    assert_eq!(f["proposed"], 3);
    assert_eq!(f["unique"], 2);
    assert_eq!(f["withheld"], 1);
    assert_eq!(f["rows"][0]["proposed"], 1);
    assert_eq!(f["rows"][0]["top"][0]["attempt_count"], 6);
    // Its rate is reproducible, but its failures come from one session: capped by spread.
    assert_eq!(f["rows"][0]["top"][0]["tier"], "probabilistic");
    assert_eq!(f["rows"][1]["proposed"], 2);

    let p = &r["promoted"];
    assert_eq!(p["ids"], json!(["psql-rule", "authored-rule"]));
    assert_eq!(
        (p["derived"].as_u64(), p["authored"].as_u64()),
        (Some(1), Some(1))
    );
    assert!((p["rate"].as_f64().unwrap() - 0.5).abs() < 1e-12);

    let e = &r["effect"][0];
    assert_eq!(e["id"], "psql-rule");
    let eff = &e["effect"];
    assert_eq!(eff["before"]["attempts"], 6);
    assert_eq!(eff["before"]["failures"], 4);
    assert_eq!(eff["after"]["attempts"], 5);
    assert_eq!(eff["after"]["failures"], 3);
    let pooled: f64 = 7.0 / 11.0;
    let z = (3.0 / 5.0 - 4.0 / 6.0) / (pooled * (1.0 - pooled) * (1.0 / 6.0 + 1.0 / 5.0)).sqrt();
    assert!((eff["z"].as_f64().unwrap() - z).abs() < 1e-9);
    assert!(eff["p_value"].as_f64().unwrap() > 0.05);
    assert_eq!(e["reading"], "too-little-data");
    let days = |s: &Value| s["days"].as_f64().unwrap();
    let vol = (5.0 / days(&eff["after"])) / (6.0 / days(&eff["before"])) - 1.0;
    assert!((eff["volume_change"].as_f64().unwrap() - vol).abs() < 1e-9);
    // A hand-written rule without an explicit `field` is measured too (callusguard skipped it).
    assert_eq!(r["effect"][1]["effect"]["before"]["attempts"], 7);
    assert_eq!(r["effect"][1]["effect"]["before"]["failures"], 2);
}

#[test]
fn the_funnel_is_callus_derive_replayed_one_week_at_a_time() {
    let (env, d0) = fixture();
    let (since, until) = period(d0);
    let o = env.run(
        &["report", "--since", &since, "--until", &until, "--json"],
        b"",
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let f = &json(&o)["funnel"];
    let mut unique = std::collections::BTreeSet::new();
    for (i, row) in f["rows"].as_array().unwrap().iter().enumerate() {
        let start = (d0 + Duration::days(7 * i as i64)).date_naive().to_string();
        let end = (d0 + Duration::days(7 * i as i64 + 7))
            .date_naive()
            .to_string();
        assert_eq!(row["start"], start.as_str());
        let o = env.run(
            &["derive", "--since", &start, "--until", &end, "--json"],
            b"",
        );
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let doc = json(&o);
        let rules = doc["rules"].as_array().unwrap();
        assert_eq!(row["proposed"], rules.len(), "week {start}");
        assert_eq!(
            row["withheld"],
            doc["dropped_anecdotal"].as_array().unwrap().len()
        );
        for (p, r) in row["top"].as_array().unwrap().iter().zip(rules) {
            assert_eq!(p["id"], r["id"]);
            assert_eq!(p["tool"], r["tool"]);
            assert_eq!(
                p["pattern"],
                r["any"].get(0).cloned().unwrap_or(Value::Null)
            );
            assert_eq!(p["fail_count"], r["meta"]["fail_count"]);
            assert_eq!(p["attempt_count"], r["meta"]["attempt_count"]);
            assert_eq!(p["tier"], r["meta"]["tier"]);
        }
        unique.extend(rules.iter().map(|r| r["id"].as_str().unwrap().to_string()));
    }
    assert_eq!(f["unique"], unique.len());
    // Derive's own patterns, not the recorder's shape column: the psql failures behind
    // `cd db &&` are one `^psql\b` candidate in both weeks.
    assert_eq!(f["rows"][0]["top"][0]["pattern"], r"^psql\b");
    assert_eq!(f["rows"][1]["top"][0]["id"], f["rows"][0]["top"][0]["id"]);
}

fn chromium() -> Option<&'static str> {
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .into_iter()
        .find(|p| Path::new(p).exists())
}

#[test]
fn html_is_self_contained_and_renders_in_headless_chromium() {
    let (env, d0) = fixture();
    let (since, until) = period(d0);
    let page = env.home_path().join("report.html");
    let o = env.run(
        &[
            "report",
            "--since",
            &since,
            "--until",
            &until,
            "--html",
            page.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    for needle in [
        "psql-rule",
        "authored-rule",
        "<svg",
        "<style>",
        "Evidence funnel",
    ] {
        assert!(html.contains(needle), "missing {needle}");
    }
    for banned in ["http://", "https://", "<script", "<link", "@import", "url("] {
        assert!(
            !html.contains(banned),
            "the page would make an external request: {banned}"
        );
    }

    let Some(chromium) = chromium() else {
        // .ci/run installs Chromium and sets this: there, a missing browser is a failure.
        assert!(
            std::env::var_os("CALLUS_REQUIRE_CHROMIUM").is_none(),
            "CALLUS_REQUIRE_CHROMIUM is set but no chromium binary was found"
        );
        eprintln!(
            "\n*** SKIPPED the headless-Chromium render of the report: no chromium binary. \
             Install it with `apt-get install -y chromium` (Debian's package, /usr/bin/chromium). ***\n"
        );
        return;
    };
    let profile = tempfile::tempdir().unwrap();
    let shot = env.home_path().join("report.png");
    let url = format!("file://{}", page.display());
    let run = |extra: &[&str]| {
        Command::new(chromium)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--enable-logging=stderr",
                "--v=0",
                "--window-size=1200,900",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .args(extra)
            .arg(&url)
            .output()
            .expect("run chromium")
    };
    let shot_arg = format!("--screenshot={}", shot.display());
    let o = run(&[&shot_arg]);
    let log = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "chromium failed: {log}");
    let png = std::fs::read(&shot).expect("screenshot written");
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 10_000,
        "screenshot is empty"
    );
    for bad in ["Uncaught", "Failed to load resource", "ERR_"] {
        let hit = log
            .lines()
            .find(|l| l.contains(bad) && l.contains("CONSOLE"));
        assert!(hit.is_none(), "console error: {hit:?}");
    }
    let o = run(&["--dump-dom"]);
    let dom = String::from_utf8_lossy(&o.stdout);
    for id in ["psql-rule", "authored-rule"] {
        assert!(
            dom.contains(&format!("id=\"rule-{id}\"")),
            "rendered page lacks {id}"
        );
    }
    if let Ok(dir) = std::env::var("CALLUS_KEEP_SCREENSHOT") {
        std::fs::copy(&shot, Path::new(&dir).join("report.png")).unwrap();
        std::fs::copy(&page, Path::new(&dir).join("report.html")).unwrap();
    }
}
