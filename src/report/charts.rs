//! The report's SVG charts, drawn by hand (no script, no external request): a weekly chart
//! of failures recorded and candidates proposed, each band with its own labelled y-axis, and
//! a rule's failure rate week by week with its promotion date marked.
//!
//! Scales are linear and start at zero; axis ticks are round numbers ([`ticks`]); x labels
//! are thinned so that at most [`MAX_X_LABELS`] are drawn whatever the period's length (a
//! 48-week period labels every fifth week), so they never overlap.

// SVG geometry reads best with short coordinate names.
#![allow(clippy::many_single_char_names)]

use std::fmt::Write as _;

use super::evidence::Point;
use super::funnel::Week;

/// Escape text for HTML element content and attribute values.
#[must_use]
pub(crate) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// At most this many x-axis labels per chart.
pub(crate) const MAX_X_LABELS: usize = 10;
const MUTED: &str = "#5f6b7a";
const GRID: &str = "#e3e7ee";

/// A round top for an axis over values up to `max`, and its tick step: 1, 2 or 5 × 10^k.
#[must_use]
pub(crate) fn ticks(max: f64) -> (f64, f64) {
    if max <= 0.0 || !max.is_finite() {
        return (1.0, 1.0);
    }
    let raw = max / 4.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    // Counts are whole: a step below one would label 0.5 calls.
    let step = if max >= 1.0 { step.max(1.0) } else { step };
    ((max / step).ceil() * step, step)
}

/// Label every `k`-th of `n` slots so that at most [`MAX_X_LABELS`] are drawn.
#[must_use]
pub(crate) fn label_every(n: usize) -> usize {
    n.div_ceil(MAX_X_LABELS).max(1)
}

/// A plot band: the axis at `x0`, gridlines to `x1`, value `max` at `top`, zero at `base`.
#[derive(Clone, Copy)]
struct Band {
    x0: f64,
    x1: f64,
    top: f64,
    base: f64,
}

/// The band's y-axis: round ticks up to `max` every `step`, labelled with `fmt`.
fn y_axis(h: &mut String, band: Band, (max, step): (f64, f64), fmt: &dyn Fn(f64) -> String) {
    let Band { x0, x1, top, base } = band;
    let mut v = 0.0;
    while v <= max + step * 1e-9 {
        let y = base - (v / max) * (base - top);
        let _ = write!(
            h,
            "<line x1=\"{x0:.1}\" y1=\"{y:.1}\" x2=\"{x1:.1}\" y2=\"{y:.1}\" stroke=\"{GRID}\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"end\" fill=\"{MUTED}\" class=\"tick\">{}</text>",
            x0 - 6.0,
            y + 4.0,
            escape(&fmt(v))
        );
        v += step;
    }
    let _ = write!(
        h,
        "<line x1=\"{x0:.1}\" y1=\"{top:.1}\" x2=\"{x0:.1}\" y2=\"{base:.1}\" stroke=\"{MUTED}\"/>"
    );
}

fn count(v: f64) -> String {
    format!("{v:.0}")
}

/// The weekly chart: failures recorded per week above, candidates proposed (and clusters
/// withheld as anecdotal) below, on one shared, thinned date axis.
pub(crate) fn weekly(h: &mut String, rows: &[Week]) {
    if rows.is_empty() {
        return;
    }
    let (w, left, right) = (1000.0, 56.0, 12.0);
    let plot = w - left - right;
    let slot = plot / rows.len() as f64;
    let bw = (slot * 0.7).clamp(1.0, 40.0);
    let (fail_top, fail_base) = (22.0, 132.0);
    let (cand_top, cand_base) = (170.0, 250.0);
    let height = cand_base + 44.0;
    let (fmax, fstep) = ticks(rows.iter().map(|r| r.failures).max().unwrap_or(0) as f64);
    let (cmax, cstep) = ticks(
        rows.iter()
            .map(|r| r.proposed + r.withheld)
            .max()
            .unwrap_or(0) as f64,
    );
    let _ = write!(
        h,
        "<svg role=\"img\" aria-label=\"failures and candidates per week\" class=\"chart weekly\" viewBox=\"0 0 {w} {height}\" width=\"100%\" style=\"margin-top:14px\">\
         <text x=\"{left}\" y=\"12\" font-size=\"12\" fill=\"{MUTED}\">failures recorded per week</text>\
         <text x=\"{left}\" y=\"{:.1}\" font-size=\"12\" fill=\"{MUTED}\">candidates per week (blue: proposed, grey: withheld as anecdotal)</text>",
        cand_top - 10.0
    );
    let band = |top, base| Band {
        x0: left,
        x1: w - right,
        top,
        base,
    };
    y_axis(h, band(fail_top, fail_base), (fmax, fstep), &count);
    y_axis(h, band(cand_top, cand_base), (cmax, cstep), &count);
    let every = label_every(rows.len());
    for (i, row) in rows.iter().enumerate() {
        let x = left + i as f64 * slot + (slot - bw) / 2.0;
        let hf = row.failures as f64 / fmax * (fail_base - fail_top);
        let hp = row.proposed as f64 / cmax * (cand_base - cand_top);
        let hw = row.withheld as f64 / cmax * (cand_base - cand_top);
        let start = escape(&row.start);
        let _ = write!(
            h,
            "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"{bw:.1}\" height=\"{hf:.1}\" fill=\"#9aa5b8\"><title>{start}: {} failures</title></rect>\
             <rect x=\"{x:.1}\" y=\"{:.1}\" width=\"{bw:.1}\" height=\"{hp:.1}\" fill=\"#2f6fde\"><title>{start}: {} proposed</title></rect>\
             <rect x=\"{x:.1}\" y=\"{:.1}\" width=\"{bw:.1}\" height=\"{hw:.1}\" fill=\"#c9d2e0\"><title>{start}: {} withheld</title></rect>",
            fail_base - hf,
            row.failures,
            cand_base - hp,
            row.proposed,
            cand_base - hp - hw,
            row.withheld,
        );
        if i % every == 0 {
            let _ = write!(
                h,
                "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"middle\" fill=\"{MUTED}\" class=\"xlabel\">{}</text>",
                x + bw / 2.0,
                cand_base + 16.0,
                start
            );
        }
    }
    let _ = write!(
        h,
        "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"middle\" fill=\"{MUTED}\">week starting</text></svg>",
        left + plot / 2.0,
        cand_base + 36.0
    );
}

/// A rule's failure rate per week (points sized by attempts, a line through the weeks with
/// attempts), the promotion week marked.
pub(crate) fn rate_series(h: &mut String, points: &[Point]) {
    if points.is_empty() {
        return;
    }
    let (w, left, right, top, base) = (480.0, 44.0, 10.0, 16.0, 116.0);
    let plot = w - left - right;
    let slot = plot / points.len() as f64;
    let most = points.iter().map(|p| p.attempts).max().unwrap_or(0).max(1) as f64;
    let _ = write!(
        h,
        "<svg role=\"img\" aria-label=\"failure rate per week around the promotion\" class=\"chart series\" viewBox=\"0 0 {w} 150\" width=\"100%\">"
    );
    let band = Band {
        x0: left,
        x1: w - right,
        top,
        base,
    };
    y_axis(h, band, (1.0, 0.25), &|v| format!("{:.0}%", v * 100.0));
    let x_of = |i: usize| left + (i as f64 + 0.5) * slot;
    if let Some(i) = points.iter().position(|p| p.week == 0) {
        let x = left + i as f64 * slot;
        let _ = write!(
            h,
            "<line x1=\"{x:.1}\" y1=\"{top}\" x2=\"{x:.1}\" y2=\"{base}\" stroke=\"#b7791f\" stroke-dasharray=\"4 3\" class=\"promotion\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" fill=\"#b7791f\">promoted</text>",
            x + 3.0,
            top + 8.0
        );
    }
    let pts: Vec<(f64, f64, &Point)> = points
        .iter()
        .enumerate()
        .filter(|(_, p)| p.attempts > 0)
        .map(|(i, p)| {
            let rate = p.failures as f64 / p.attempts as f64;
            (x_of(i), base - rate * (base - top), p)
        })
        .collect();
    if pts.len() > 1 {
        let line: Vec<String> = pts
            .iter()
            .map(|(x, y, _)| format!("{x:.1},{y:.1}"))
            .collect();
        let _ = write!(
            h,
            "<polyline points=\"{}\" fill=\"none\" stroke=\"#2f6fde\" stroke-width=\"1.5\"/>",
            line.join(" ")
        );
    }
    for (x, y, p) in &pts {
        let r = 2.5 + 3.5 * (p.attempts as f64 / most).sqrt();
        let fill = if p.week < 0 { "#9aa5b8" } else { "#2f6fde" };
        let _ = write!(
            h,
            "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"{r:.1}\" fill=\"{fill}\"><title>{}: {} of {} failed</title></circle>",
            escape(&p.start),
            p.failures,
            p.attempts
        );
    }
    let every = label_every(points.len()).max(2);
    for (i, p) in points.iter().enumerate() {
        if i % every == 0 {
            let _ = write!(
                h,
                "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\" text-anchor=\"middle\" fill=\"{MUTED}\" class=\"xlabel\">{}</text>",
                x_of(i),
                base + 14.0,
                escape(p.start.get(5..).unwrap_or(&p.start))
            );
        }
    }
    let _ = write!(
        h,
        "<text x=\"{left}\" y=\"146\" font-size=\"11\" fill=\"{MUTED}\">failure rate of the calls it matches, per week (dot size: calls)</text></svg>"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_cover_the_maximum() {
        assert_eq!(ticks(187.0), (200.0, 50.0));
        assert_eq!(ticks(7.0), (8.0, 2.0));
        assert_eq!(ticks(3.0), (3.0, 1.0));
        assert_eq!(ticks(0.0), (1.0, 1.0));
        assert_eq!(ticks(1.0), (1.0, 1.0));
    }

    #[test]
    fn labels_are_thinned_to_ten() {
        assert_eq!(label_every(2), 1);
        assert_eq!(label_every(10), 1);
        assert_eq!(label_every(11), 2);
        assert_eq!(label_every(48), 5);
        assert_eq!(48usize.div_ceil(label_every(48)), 10);
    }
}
