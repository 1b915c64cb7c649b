//! The text rendering of a prune report (callusguard's, with callus's extra verdicts).
//!
//! The pinned phrases are kept word for word: the `ALL-TIME` window line, the undated
//! warning, "No readable audit log" and "for lack of evidence", "every verdict predates the
//! window", "Deleting them is the tool working, not rotting" and "Nothing to cut back".

use std::fmt::Write as _;

use super::Report;
use super::verdict::Verdict;

fn heading(v: Verdict) -> &'static str {
    match v {
        Verdict::Harmful => "✗ HARMFUL",
        Verdict::NoEffect => "≈ NO-EFFECT",
        Verdict::Promote => "▲ PROMOTE",
        Verdict::Review => "⚠ REVIEW",
        Verdict::Prune => "✂ PRUNE",
        Verdict::TooYoung => "… TOO-YOUNG",
        Verdict::Keep => "✓ KEEP",
    }
}

/// Render `report` for people.
#[must_use]
pub(crate) fn text(report: &Report) -> String {
    let mut out = String::new();
    let n = report.events_in_window;
    let u = report.undated_events;
    let days = report.window_days;
    let _ = writeln!(
        out,
        "rule lifecycle — {} rule(s) across {}",
        report.rules.len(),
        report.layers.join(", ")
    );
    if u > 0 && u >= n {
        let _ = writeln!(
            out,
            "  {n} verdict(s), ALL-TIME — no verdict carries a timestamp, so the {days}-day window could not be applied"
        );
    } else if u > 0 {
        let _ = writeln!(
            out,
            "  {n} verdict(s) in the last {days} days — {u} of them undated and therefore not windowed"
        );
    } else {
        let _ = writeln!(out, "  {n} verdict(s) in the last {days} days");
    }
    let _ = writeln!(
        out,
        "  {} recorded call(s) in {} to measure effects on",
        report.recorded_calls, report.store
    );
    out.push('\n');
    if u > 0 {
        let _ = writeln!(
            out,
            "  ⚠ {u} verdict(s) carry no `ts` and were counted regardless: dropping them would invent a prune signal. They most likely come from a pre-0.3 callusguard guard; re-check the prune verdicts below with that in mind.\n"
        );
    }
    if !report.audit_readable {
        let _ = writeln!(
            out,
            "  ⚠ No readable audit log. The store ({}) is missing or holds no guard verdicts, so every rule below reads as prune for lack of evidence, not because of evidence. Check that the guard is installed and writing to this store before deleting anything.\n",
            report.store
        );
    } else if n == 0 {
        let _ = writeln!(
            out,
            "  · The audit log is intact, but every verdict predates the window: enforcement ran and these rules did not fire in the last {days} days, which is itself the signal.\n"
        );
    }
    verdicts_text(&mut out, report);
    closing_text(&mut out, report);
    out
}

/// Each verdict's rules, with what they fired and why.
fn verdicts_text(out: &mut String, report: &Report) {
    for v in Verdict::ALL {
        let rows: Vec<_> = report.rules.iter().filter(|r| r.verdict == v).collect();
        if rows.is_empty() {
            continue;
        }
        let _ = writeln!(out, "  {} ({})", heading(v), rows.len());
        for r in rows {
            let _ = writeln!(out, "      {:<38} {}", r.id, r.reason);
            if r.followed.calls > 0 {
                let f = &r.followed;
                let recorded = f.success + f.failure;
                let rate = if recorded > 0 {
                    format!(" ({:.1}%)", f.failure as f64 * 100.0 / recorded as f64)
                } else {
                    String::new()
                };
                let _ = writeln!(
                    out,
                    "      {:<38} followed {} nudged/monitored call(s): {} failed{rate}, {} succeeded, {} not recorded",
                    "",
                    f.calls,
                    f.failure,
                    f.success,
                    f.unrecorded + f.other
                );
            }
            if let Some(note) = &r.note {
                let _ = writeln!(out, "      {:<38} note: {note}", "");
            }
        }
        out.push('\n');
    }
}

/// Rules that fired but are declared nowhere, and what to prune.
fn closing_text(out: &mut String, report: &Report) {
    if !report.orphan_rule_ids.is_empty() {
        let ids: Vec<&str> = report
            .orphan_rule_ids
            .iter()
            .take(8)
            .map(String::as_str)
            .collect();
        let _ = writeln!(
            out,
            "  · fired but no longer declared: {}\n",
            ids.join(", ")
        );
    }
    let pruned = report
        .rules
        .iter()
        .filter(|r| r.verdict == Verdict::Prune)
        .count();
    if pruned > 0 {
        let _ = writeln!(out, "  {pruned} rule(s) have stopped earning their place.");
        let _ = writeln!(out, "  Deleting them is the tool working, not rotting.");
    } else {
        let silent = report
            .rules
            .iter()
            .filter(|r| r.pinned && r.count == 0)
            .count();
        if silent > 0 {
            let _ = writeln!(
                out,
                "  Every declared rule fired at least once or is pinned ({silent} pinned rule(s) stayed silent). Nothing to cut back."
            );
        } else {
            let _ = writeln!(
                out,
                "  Every declared rule fired at least once. Nothing to cut back."
            );
        }
    }
}
