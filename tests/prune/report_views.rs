//! What the report shows a new user (issue 17): the recurring failures and candidates by
//! name, rule cards with pattern and message, a linear funnel, a weekly chart with axes and
//! labels that do not crowd, each rule's failure rate over time around its promotion,
//! bounded p-values, a rule promoted today inside the period, and a default period fitted to
//! the data. Checked in the file and, where Chromium is installed, in the rendered DOM.

use std::path::Path;
use std::process::Command;

use chrono::{DateTime, Duration, Utc};
use serde_json::{Value, json};

use super::history::{History, midnight_days_ago, spread};
use crate::common::{Env, json, stderr, stdout};

const PSQL_SIG: &str = "psql: error: connection to server on socket failed";

/// Five weeks of psql calls failing 8 of 10 a week, then, after the rule's promotion, 1 of 10;
/// a make failure that recurs; ls successes.
fn history(promoted_days_ago: i64) -> (Env, DateTime<Utc>) {
    let d0 = midnight_days_ago(70);
    let promoted = midnight_days_ago(promoted_days_ago);
    let env = Env::new();
    env.write_repo(
        ".callus/rules.json",
        &json!({"rules": [
            {"id": "psql-needs-host", "tool": "Bash", "match": "segment", "any": ["^psql\\b"],
             "action": "nudge", "message": "Pass -h db.internal: the socket is not local.",
             "meta": {"promoted": promoted.date_naive().to_string(), "tier": "reproducible"}},
        ]})
        .to_string(),
    );
    let mut h = History::open(&env);
    for (i, at) in spread(d0, d0 + Duration::days(63), 120)
        .into_iter()
        .enumerate()
    {
        let after = at >= promoted;
        let failed = if after { i % 10 == 0 } else { i % 10 < 8 };
        let status = if failed { "failure" } else { "success" };
        h.call_shaped(
            &format!("s{}", i % 9),
            "Bash",
            "psql -c 'select 1'",
            status,
            at,
            Some("psql"),
            Some(PSQL_SIG),
        );
        let make = if i % 3 == 0 { "failure" } else { "success" };
        h.call_shaped(
            &format!("s{}", i % 9),
            "Bash",
            "make test",
            make,
            at + Duration::minutes(5),
            Some("make test"),
            Some("make: *** [test] Error 2"),
        );
    }
    (env, d0)
}

fn html(env: &Env, args: &[&str]) -> String {
    let page = env.home_path().join("report.html");
    let mut all = vec!["report"];
    all.extend_from_slice(args);
    let path = page.to_str().unwrap().to_string();
    all.extend(["--html", &path]);
    let o = env.run(&all, b"");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    std::fs::read_to_string(&page).unwrap()
}

/// The DOM headless Chromium renders from `page` (`None` without Chromium, unless
/// `CALLUS_REQUIRE_CHROMIUM` demands it).
fn rendered(page: &Path) -> Option<String> {
    let Some(chromium) = ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .into_iter()
        .find(|p| Path::new(p).exists())
    else {
        assert!(
            std::env::var_os("CALLUS_REQUIRE_CHROMIUM").is_none(),
            "CALLUS_REQUIRE_CHROMIUM is set but no chromium binary was found"
        );
        eprintln!("*** SKIPPED the Chromium render: no chromium binary ***");
        return None;
    };
    let profile = tempfile::tempdir().unwrap();
    let o = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--dump-dom",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("run chromium");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    Some(String::from_utf8_lossy(&o.stdout).into_owned())
}

/// The `<svg …>…</svg>` element whose opening tag contains `marker`.
fn svg<'a>(page: &'a str, marker: &str) -> &'a str {
    let at = page.find(marker).unwrap_or_else(|| panic!("no {marker}"));
    let start = page[..at].rfind("<svg").unwrap();
    let end = at + page[at..].find("</svg>").unwrap();
    &page[start..end]
}

/// Every value of attribute `attr` on `tag` elements in `text`.
fn attrs(text: &str, tag: &str, attr: &str) -> Vec<String> {
    text.split(&format!("<{tag} "))
        .skip(1)
        .filter_map(|t| {
            let t = format!(" {}", &t[..t.find('>')?]);
            let at = t.find(&format!(" {attr}=\"")).map(|i| i + attr.len() + 3)?;
            Some(t[at..at + t[at..].find('"')?].to_string())
        })
        .collect()
}

#[test]
fn the_page_names_failures_candidates_and_each_rules_pattern_and_message() {
    let (env, _) = history(28);
    let page = html(&env, &[]);
    // The top recurring failures, with program, signature and counts.
    let failures = &page[page.find("id=\"failures\"").unwrap()..];
    let failures = &failures[..failures.find("</table>").unwrap()];
    assert!(failures.contains("<code>psql</code>"), "{failures}");
    assert!(failures.contains(PSQL_SIG));
    assert!(failures.contains("<code>make test</code>"));
    assert!(failures.contains("make: *** [test] Error 2"));
    // The candidates derive proposes, with pattern, tier and evidence: the same as derive.
    let o = env.run(&["report", "--json"], b"");
    let r = json(&o);
    let since = r["since"].as_str().unwrap()[..10].to_string();
    let until = r["until"].as_str().unwrap()[..10].to_string();
    let d = json(&env.run(
        &["derive", "--since", &since, "--until", &until, "--json"],
        b"",
    ));
    let derived = d["rules"].as_array().unwrap();
    assert!(!derived.is_empty());
    let listed = r["candidates"].as_array().unwrap();
    assert_eq!(listed.len(), derived.len());
    for (c, d) in listed.iter().zip(derived) {
        assert_eq!(c["id"], d["id"]);
        assert_eq!(c["tier"], d["meta"]["tier"]);
        let row = format!("id=\"candidate-{}\"", c["id"].as_str().unwrap());
        let row = &page[page.find(&row).expect("candidate row")..];
        let row = &row[..row.find("</tr>").unwrap()];
        assert!(row.contains(c["tier"].as_str().unwrap()), "{row}");
        let pattern = d["any"][0].as_str().unwrap_or("(tool-wide)");
        assert!(row.contains(&html_escape(pattern)), "{row} lacks {pattern}");
        assert!(row.contains(&format!(
            "{} of {} matched calls failed",
            d["meta"]["fail_count"], d["meta"]["attempt_count"]
        )));
    }
    // The rule card: its pattern and message, not only its id.
    let card = &page[page.find("id=\"rule-psql-needs-host\"").unwrap()..];
    let card = &card[..card.find("</svg>").unwrap()];
    assert!(card.contains("<code>^psql\\b</code>"), "{card}");
    assert!(card.contains("Pass -h db.internal: the socket is not local."));

    if let Some(dom) = rendered(&env.home_path().join("report.html")) {
        for needle in [
            "id=\"failures\"",
            "class=\"candidate\"",
            "class=\"pattern\"",
            "class=\"message\"",
            "class=\"chart weekly\"",
            "class=\"chart series\"",
            "class=\"promotion\"",
        ] {
            assert!(dom.contains(needle), "rendered page lacks {needle}");
        }
    }
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

#[test]
fn the_funnel_is_linear_and_the_weekly_chart_has_axes_and_failures() {
    let (env, _) = history(28);
    let r = json(&env.run(&["report", "--json"], b""));
    let page = html(&env, &[]);
    let funnel = svg(&page, "aria-label=\"evidence funnel\"");
    let widths: Vec<f64> = attrs(funnel, "rect", "width")
        .iter()
        .map(|w| w.parse().unwrap())
        .collect();
    let failures = r["totals"]["failures"].as_f64().unwrap();
    let proposed = r["funnel"]["proposed"].as_f64().unwrap();
    assert!(proposed > 0.0 && failures > proposed);
    // Bars to scale: the candidates' bar is proposed/failures of the failures' bar.
    assert!(
        (widths[1] / widths[0] - proposed / failures).abs() < 0.01,
        "{widths:?} for {failures} failures and {proposed} candidates"
    );
    let weekly = svg(&page, "class=\"chart weekly\"");
    // A y-axis for each band, with labelled round ticks from 0.
    let ticks = weekly.matches("class=\"tick\"").count();
    assert!(ticks >= 4, "{ticks} ticks");
    assert!(weekly.contains("class=\"tick\">0</text>"));
    // Failures are counted per week, not only candidates.
    let weeks = r["funnel"]["rows"].as_array().unwrap();
    let per_week: u64 = weeks.iter().map(|w| w["failures"].as_u64().unwrap()).sum();
    assert_eq!(per_week, r["totals"]["failures"].as_u64().unwrap());
    assert!(weekly.contains(&format!(
        "{}: {} failures",
        weeks[0]["start"].as_str().unwrap(),
        weeks[0]["failures"]
    )));
}

#[test]
fn over_a_long_period_the_weekly_labels_are_thinned_so_they_cannot_overlap() {
    let (env, _) = history(28);
    let page = html(&env, &["--since", "333d"]);
    let weekly = svg(&page, "class=\"chart weekly\"");
    let xs: Vec<f64> = attrs(weekly, "text", "x")
        .iter()
        .zip(weekly.split("<text ").skip(1))
        .filter(|(_, t)| t.contains("class=\"xlabel\""))
        .map(|(x, _)| x.parse().unwrap())
        .collect();
    assert!(
        (2..=10).contains(&xs.len()),
        "{} labels for 48 weeks",
        xs.len()
    );
    // A label is 10 characters of 11 px text, about 60 units wide: they are further apart.
    for pair in xs.windows(2) {
        assert!(pair[1] - pair[0] > 70.0, "labels at {pair:?} overlap");
    }
}

#[test]
fn the_rules_failure_rate_is_drawn_week_by_week_around_its_promotion() {
    let (env, _) = history(28);
    let r = json(&env.run(&["report", "--json"], b""));
    let series = r["effect"][0]["series"].as_array().unwrap();
    let week = |k: i64| series.iter().find(|p| p["week"] == k).unwrap();
    assert!(series.iter().any(|p| p["week"].as_i64().unwrap() < 0));
    // Before: 8 of 10 fail; after: 1 of 10.
    let rate = |p: &Value| p["failures"].as_f64().unwrap() / p["attempts"].as_f64().unwrap();
    assert!(rate(week(-2)) > 0.6, "{:?}", week(-2));
    assert!(rate(week(1)) < 0.3, "{:?}", week(1));
    let page = html(&env, &[]);
    let chart = svg(&page, "class=\"chart series\"");
    assert!(chart.contains("class=\"promotion\""));
    assert!(chart.contains(&format!(
        "{}: {} of {} failed",
        week(1)["start"].as_str().unwrap(),
        week(1)["failures"],
        week(1)["attempts"]
    )));
}

#[test]
fn a_tiny_p_value_reads_below_a_thousandth_never_zero() {
    let (env, _) = history(28);
    let r = json(&env.run(&["report", "--json"], b""));
    let p = r["effect"][0]["effect"]["p_value"].as_f64().unwrap();
    assert!(p < 0.001, "the fixture's change is stark: p = {p}");
    let page = html(&env, &[]);
    assert!(page.contains("p &lt; 0.001"), "card");
    assert!(page.contains(">&lt; 0.001<"), "table");
    assert!(!page.contains("0.000"));
    let text = stdout(&env.run(&["report"], b""));
    assert!(text.contains("< 0.001"), "{text}");
    assert!(!text.contains("0.000"), "{text}");
}

#[test]
fn a_rule_promoted_today_is_inside_the_period() {
    let (env, _) = history(0);
    let r = json(&env.run(&["report", "--json"], b""));
    let today = Utc::now().date_naive().to_string();
    assert!(
        r["until"].as_str().unwrap() > today.as_str(),
        "{}",
        r["until"]
    );
    let e = &r["effect"][0];
    assert_eq!(e["promoted"], today.as_str());
    assert_ne!(e["reading"], "not-measurable");
    assert_eq!(e["effect"]["after"]["attempts"], 0);
    let page = html(&env, &[]);
    assert!(!page.contains("outside"), "a rule promoted today is inside");
    // And with an explicit --since, which ends now.
    let r = json(&env.run(&["report", "--since", "90d", "--json"], b""));
    assert_ne!(r["effect"][0]["reading"], "not-measurable");
    // A period that ends before the promotion says so, not "outside".
    let page = html(&env, &["--since", "90d", "--until", &today]);
    assert!(page.contains("Promoted after this period ends"), "{page}");
}

#[test]
fn the_default_period_runs_from_the_first_recorded_day_to_the_last() {
    let (env, d0) = history(28);
    let r = json(&env.run(&["report", "--json"], b""));
    // The last call is on day 62 (119/120 of 63 days in).
    let last_day = d0 + Duration::days(62);
    assert_eq!(
        r["since"].as_str().unwrap()[..10],
        d0.date_naive().to_string()
    );
    assert_eq!(
        r["until"].as_str().unwrap()[..10],
        (last_day + Duration::days(1)).date_naive().to_string()
    );
    assert!(r["days"].as_f64().unwrap() <= 65.0, "{}", r["days"]);
}
