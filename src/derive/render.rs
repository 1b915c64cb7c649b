//! The human summary of a derive run: a table of candidates (count, tool, pattern, tier,
//! failure rate, ceiling, crossfire) with what each tier shown means under it, then what was
//! withheld and why, then the caveat that the rates are observational. stdout only; the
//! "wrote …" line goes to stderr from the caller.

use std::fmt::Write as _;

use super::candidates::CAVEAT;
use super::cluster::Kind;
use super::finding::FindingKind;
use super::merge::Written;
use super::{Derivation, Derived};
use crate::output::table;
use crate::rules::tier;
use crate::window::iso;

/// Most withheld clusters listed by name.
const MAX_WITHHELD_LISTED: usize = 10;

/// Print the summary of `dv` to stdout.
pub(crate) fn summary(dv: &Derivation, written: Option<&Written>) {
    crate::output::print_text(&summary_text(dv, written));
}

/// The summary as text (tested without a terminal).
pub(crate) fn summary_text(dv: &Derivation, written: Option<&Written>) -> String {
    let o = &dv.options;
    let mut out = String::new();
    candidates_text(&mut out, dv);
    context_text(&mut out, dv);
    not_rules_text(&mut out, dv);
    held_back_text(&mut out, dv);
    if let Some(w) = written
        && w.retired > 0
    {
        let _ = writeln!(
            out,
            "\n{} earlier candidate(s) were retired from the candidate file: a reviewed ruleset now declares them.",
            w.retired
        );
    }
    if !dv.unpatterned.is_empty() {
        let _ = writeln!(
            out,
            "\n{} cluster(s) ran only shell builtins (cd, export, set, …): nothing a rule could safely match:",
            dv.unpatterned.len()
        );
        for &i in dv.unpatterned.iter().take(MAX_WITHHELD_LISTED) {
            let c = &dv.clusters[i];
            let sig: String = c.signature.chars().take(60).collect();
            let _ = writeln!(out, "  · {}x  {sig}", c.count());
        }
    }
    if dv.below_min > 0 {
        let _ = writeln!(
            out,
            "\n{} smaller cluster(s) had fewer than {} failures and are not shown.",
            dv.below_min, o.min_count
        );
    }
    if let Some(w) = written
        && w.kept > 0
    {
        let _ = writeln!(
            out,
            "\n{} earlier candidate(s) did not recur in this window and were kept as they were.",
            w.kept
        );
    }
    if !dv.candidates.is_empty() || !dv.withheld.is_empty() {
        let _ = writeln!(out, "\n{CAVEAT}");
    }
    out
}

/// The candidates proposed, or why there are none.
fn candidates_text(out: &mut String, dv: &Derivation) {
    let o = &dv.options;
    let days = o.window.days();
    if dv.candidates.is_empty() && dv.promoted.is_empty() {
        let _ = writeln!(
            out,
            "No recurring failures (>= {} in {days}d). Nothing to propose.",
            o.min_count
        );
    } else if dv.candidates.is_empty() {
        let _ = writeln!(
            out,
            "No new candidate rule: every recurring failure (>= {} in {days}d) is already promoted.",
            o.min_count
        );
    } else {
        let _ = writeln!(
            out,
            "{} candidate rule(s) from recurring failures (>= {} in {days}d, {} .. {}):",
            dv.candidates.len(),
            o.min_count,
            iso(o.window.since_ms),
            iso(o.window.until_ms)
        );
        let mut t = table(&[
            "id",
            "fails",
            "tool",
            "pattern",
            "tier",
            "failed",
            "ceiling",
            "crossfire",
        ]);
        let rows: Vec<Vec<String>> = dv.candidates.iter().map(|d| row(dv, d)).collect();
        for r in &rows {
            t.add_row(r.clone());
        }
        if crate::output::fits(&t) {
            let _ = writeln!(out, "{t}");
        } else {
            // Too narrow for eight columns: one block per candidate, its id whole on a line
            // of its own (what a reader copies into `derive explain`), the rest as prose the
            // printer wraps.
            for r in &rows {
                let _ = writeln!(out, "{}\n", blocks(r));
            }
        }
        // What each tier shown means, once, under the table (a column of prose would make
        // every row several lines tall on a narrow terminal).
        let mut tiers: Vec<tier::Tier> = Vec::new();
        for d in &dv.candidates {
            if !tiers.contains(&d.tier) {
                tiers.push(d.tier);
            }
        }
        for t in tiers {
            let _ = writeln!(out, "  {}: {}", t.label(), t.one_liner());
        }
        if dv.candidates.iter().any(|d| {
            d.tier == tier::Tier::Probabilistic
                && d.rate.is_some_and(|r| r >= tier::REPRODUCIBLE_AT)
        }) {
            let _ = writeln!(out, "  {}", tier::CAPPED);
        }
        let _ = writeln!(
            out,
            "Look closer with `callus derive explain ID`; promote with `callus rules promote ID --action A --message M`."
        );
    }
}

/// The store's span when the window is empty, and the environment's failures.
fn context_text(out: &mut String, dv: &Derivation) {
    let o = &dv.options;
    if let Some((first, last)) = dv.store_span {
        let _ = writeln!(
            out,
            "The window {} .. {} holds no recorded calls; the store holds calls from {} to {} (try --since {}).",
            iso(o.window.since_ms),
            iso(o.window.until_ms),
            iso(first),
            iso(last),
            chrono::DateTime::from_timestamp_millis(first)
                .map(|t| t.date_naive().to_string())
                .unwrap_or_default()
        );
    }
    if !dv.environment.is_empty() {
        let _ = writeln!(
            out,
            "\nEnvironment findings (the host's shell or tool failed, or the network did not answer; not failures of the commands, never candidates):"
        );
        for f in &dv.environment {
            let _ = writeln!(
                out,
                "  · {}: {} call(s) of {} program(s) over {} session(s)",
                f.kind, f.calls, f.programs, f.sessions
            );
        }
    }
}

/// The guesses and the lessons: recurring failures no rule is proposed for.
fn not_rules_text(out: &mut String, dv: &Derivation) {
    let guesses: Vec<&Derived> = dv
        .not_rules
        .iter()
        .filter(|(_, k)| *k == FindingKind::Guess)
        .map(|(d, _)| d)
        .collect();
    if !guesses.is_empty() {
        let _ = writeln!(
            out,
            "\n{} recurring cluster(s) are the agent guessing, not rules: a different operand in every failing call, which the error says does not exist, while the tool succeeds on most calls it matches:",
            guesses.len()
        );
        for d in guesses.iter().take(MAX_WITHHELD_LISTED) {
            let c = &dv.clusters[d.clusters[0]];
            let sig: String = c.signature.chars().take(60).collect();
            let _ = writeln!(
                out,
                "  · {}  {}x, {} of {} matched calls failed  [{sig}]",
                d.id(),
                d.fail_count(&dv.clusters),
                d.backtest.failures,
                d.backtest.matched
            );
        }
    }
    let lessons: Vec<(&Derived, &str)> = dv
        .not_rules
        .iter()
        .filter_map(|(d, k)| match k {
            FindingKind::Lesson(why) => Some((d, *why)),
            _ => None,
        })
        .collect();
    if !lessons.is_empty() {
        let _ = writeln!(
            out,
            "\n{} recurring cluster(s) are lessons for the agent, not rules (nothing the guard can check separates them from the tool's successes):",
            lessons.len()
        );
        for (d, why) in lessons.iter().take(MAX_WITHHELD_LISTED) {
            let c = &dv.clusters[d.clusters[0]];
            let sig: String = c.signature.chars().take(60).collect();
            let why: String = why.chars().take(100).collect();
            let _ = writeln!(
                out,
                "  · {}  {}x over {} session(s)  [{sig}]: {why}…",
                d.id(),
                d.fail_count(&dv.clusters),
                d.backtest.sessions
            );
        }
    }
}

/// The anecdotal clusters withheld and the candidates already promoted.
fn held_back_text(out: &mut String, dv: &Derivation) {
    let o = &dv.options;
    let days = o.window.days();
    if !dv.withheld.is_empty() {
        let _ = writeln!(
            out,
            "\n{} cluster(s) withheld as anecdotal (< {} attempts — too thin to grade):",
            dv.withheld.len(),
            o.min_attempts
        );
        for d in dv.withheld.iter().take(MAX_WITHHELD_LISTED) {
            let c = &dv.clusters[d.clusters[0]];
            let shape = if c.kind == Kind::ToolWide {
                "(tool-wide)".to_string()
            } else {
                c.shape.chars().take(40).collect()
            };
            let _ = writeln!(
                out,
                "  · {:<16} {:<40} {}",
                c.group.glob,
                shape,
                tier::describe(d.tier, d.rate, d.attempts.unwrap_or(0))
            );
        }
        if dv.withheld.len() > MAX_WITHHELD_LISTED {
            let _ = writeln!(
                out,
                "  · … and {} more",
                dv.withheld.len() - MAX_WITHHELD_LISTED
            );
        }
        let _ = writeln!(
            out,
            "  (re-run with --keep-anecdotal to propose them anyway, capped at monitor)"
        );
    }
    if !dv.promoted.is_empty() {
        let _ = writeln!(
            out,
            "\n{} recurring cluster(s) already promoted into a reviewed ruleset, not proposed again \
             (`callus guard prune` measures them against their promotion date):",
            dv.promoted.len()
        );
        for (d, layer) in dv.promoted.iter().take(MAX_WITHHELD_LISTED) {
            let _ = writeln!(
                out,
                "  · {}  {}x in {days}d  ({layer})",
                d.id(),
                d.fail_count(&dv.clusters)
            );
        }
        if dv.promoted.len() > MAX_WITHHELD_LISTED {
            let _ = writeln!(
                out,
                "  · … and {} more",
                dv.promoted.len() - MAX_WITHHELD_LISTED
            );
        }
    }
}

/// One candidate as a block, for a terminal too narrow for the table: the cells of [`row`].
fn blocks(r: &[String]) -> String {
    let [id, fails, tool, pattern, tier, failed, ceiling, crossfire] = r else {
        return r.join("  ");
    };
    format!(
        "{id}\n  {tool}: {pattern}\n  {fails} fails; tier {tier} (failed {failed}); ceiling \
         {ceiling}; crossfire {crossfire}",
        pattern = pattern.replace('\n', " "),
    )
}

/// The "failed" cell: the failure rate over the attempts it is measured on (`60% of 5`), or
/// `-` when there is no attempt count.
fn failed_share(rate: Option<f64>, attempts: u64) -> String {
    match rate {
        Some(rate) if attempts > 0 => {
            format!("{}% of {attempts}", tier::round_half_even(rate * 100.0))
        }
        _ => "-".to_string(),
    }
}

fn row(dv: &Derivation, d: &Derived) -> Vec<String> {
    let c = &dv.clusters[d.clusters[0]];
    let mut pattern = d
        .proposal
        .any
        .first()
        .cloned()
        .unwrap_or_else(|| "(tool-wide)".into());
    if let Some(u) = &d.proposal.field_unless {
        let _ = write!(pattern, "\nunless it passes `{}`", u.field);
    } else {
        for u in &d.proposal.unless {
            let _ = write!(pattern, "\nunless {u}");
        }
    }
    if let Some(serde_json::Value::Object(when)) = &d.proposal.when {
        let keys: Vec<&str> = when.keys().map(String::as_str).collect();
        let _ = write!(pattern, "\nwhen {}", keys.join(", "));
    }
    let crossfire = if d.backtest.crossfire == 0 {
        "0".to_string()
    } else {
        format!("{} of {}", d.backtest.crossfire, d.backtest.matched)
    };
    vec![
        d.id().to_string(),
        d.fail_count(&dv.clusters).to_string(),
        c.group.glob.clone(),
        pattern,
        d.tier.label().to_string(),
        failed_share(d.rate, d.attempts.unwrap_or(0)),
        d.tier.ceiling().to_string(),
        crossfire,
    ]
}
