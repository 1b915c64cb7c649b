//! The HTML rendering of the evidence report: one self-contained file, inline CSS and SVG, no
//! script and no external request of any kind, so it opens anywhere and can be attached to a
//! pull request or mailed as is. Every text that came from data is HTML-escaped.

// Renderers take the page being built as `h` and the report as `r`; SVG geometry reads best
// with short coordinate names.
#![allow(clippy::many_single_char_names)]

use std::fmt::Write as _;

use super::charts::escape;
use super::evidence::p_text;
use super::{Report, candidate_evidence, pct};
use crate::prune::effect::{Effect, Outcome};

const STYLE: &str = r#"
:root { --ink:#1d2330; --muted:#5f6b7a; --line:#e3e7ee; --bg:#f7f8fa; --card:#fff;
  --before:#9aa5b8; --after:#2f6fde; --good:#1f8a4c; --bad:#c23b30; --warn:#b7791f; }
* { box-sizing: border-box; }
body { margin:0; font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;
  color:var(--ink); background:var(--bg); }
main { max-width:1080px; margin:0 auto; padding:32px 28px 48px; }
h1 { font-size:26px; margin:0 0 4px; letter-spacing:-0.01em; }
h2 { font-size:18px; margin:36px 0 12px; }
.sub { color:var(--muted); margin:0 0 20px; }
.cards { display:grid; grid-template-columns:repeat(5,1fr); gap:12px; }
.card { background:var(--card); border:1px solid var(--line); border-radius:10px; padding:14px 16px; }
.card .n { font-size:24px; font-weight:650; font-variant-numeric:tabular-nums; }
.card .l { color:var(--muted); font-size:13px; }
.panel { background:var(--card); border:1px solid var(--line); border-radius:10px; padding:18px 20px; }
.rules { display:grid; grid-template-columns:repeat(2,1fr); gap:12px; }
.rule h3 { font-size:15px; margin:0 0 2px; font-family:ui-monospace,SFMono-Regular,Menlo,monospace; }
.rule .meta { color:var(--muted); font-size:13px; margin-bottom:6px; }
.badge { display:inline-block; border-radius:999px; padding:1px 10px; font-size:12px; font-weight:600;
  color:#fff; background:var(--muted); margin-left:6px; vertical-align:1px; }
.badge.helped { background:var(--good); } .badge.harmful { background:var(--bad); }
.badge.volume-shift { background:var(--warn); } .badge.no-effect { background:#6b7280; }
.note { font-size:13px; color:var(--warn); margin-top:4px; }
.rule .pattern { margin:2px 0; overflow-wrap:anywhere; }
.rule .message { margin:4px 0 8px; font-size:14px; }
table { border-collapse:collapse; width:100%; font-size:14px; font-variant-numeric:tabular-nums; }
th, td { text-align:left; padding:6px 10px; border-bottom:1px solid var(--line); }
th { color:var(--muted); font-weight:600; font-size:13px; }
td.num { text-align:right; }
code { font-family:ui-monospace,SFMono-Regular,Menlo,monospace; font-size:13px; }
.caveat { color:var(--muted); font-size:13px; margin-top:28px; }
svg text { font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif; }
"#;

/// Render the whole page.
#[must_use]
pub(crate) fn render(r: &Report) -> String {
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>callus evidence report {} .. {}</title><style>{STYLE}</style></head><body><main>",
        escape(&r.since[..10]),
        escape(&r.until[..10])
    );
    let _ = write!(
        h,
        "<h1>callus evidence report</h1><p class=\"sub\">{} .. {} ({:.0} days) — what was recorded, what derive proposed, what was promoted, and whether it helped.</p>",
        escape(&r.since[..10]),
        escape(&r.until[..10]),
        r.days
    );
    cards(&mut h, r);
    failures(&mut h, r);
    candidates(&mut h, r);
    funnel(&mut h, r);
    effects(&mut h, r);
    let _ = writeln!(
        h,
        "<p class=\"caveat\">{}</p></main></body></html>",
        escape(r.caveat)
    );
    h
}

fn cards(h: &mut String, r: &Report) {
    let t = &r.totals;
    let decisions: u64 = t.verdicts.values().sum();
    let items = [
        (t.sessions.to_string(), "sessions".to_string()),
        (t.tool_calls.to_string(), "tool calls".to_string()),
        (
            t.failures.to_string(),
            format!("failures ({})", pct(t.fail_rate)),
        ),
        (t.denied.to_string(), "denied (not attempts)".to_string()),
        (
            decisions.to_string(),
            "guard decisions with a firing".to_string(),
        ),
    ];
    h.push_str("<div class=\"cards\">");
    for (n, l) in items {
        let _ = write!(
            h,
            "<div class=\"card\"><div class=\"n\">{}</div><div class=\"l\">{}</div></div>",
            escape(&n),
            escape(&l)
        );
    }
    h.push_str("</div>");
}

fn funnel(h: &mut String, r: &Report) {
    h.push_str("<h2>Evidence funnel</h2><div class=\"panel\">");
    let f = r.funnel.as_ref();
    let stages: [(&str, u64); 4] = [
        ("failures recorded", r.totals.failures),
        ("candidates proposed", f.map_or(0, |f| f.proposed)),
        ("unique candidates", f.map_or(0, |f| f.unique)),
        ("promoted from evidence", r.promoted.derived),
    ];
    let max = stages.iter().map(|s| s.1).max().unwrap_or(0).max(1) as f64;
    let (w, row, label_w) = (1000.0, 38.0, 210.0);
    let height = row * stages.len() as f64 + 8.0;
    let _ = write!(
        h,
        "<svg role=\"img\" aria-label=\"evidence funnel\" viewBox=\"0 0 {w} {height}\" width=\"100%\">"
    );
    for (i, (label, n)) in stages.iter().enumerate() {
        let y = i as f64 * row + 4.0;
        // Linear: a bar's length is its count, so 7 candidates are drawn at 7/187 of the
        // failures' width (a log scale drew them at half of it).
        let frac = *n as f64 / max;
        let bw = ((w - label_w - 90.0) * frac).max(2.0);
        let _ = write!(
            h,
            "<text x=\"0\" y=\"{:.1}\" font-size=\"14\" fill=\"#1d2330\">{}</text>\
             <rect x=\"{label_w}\" y=\"{y:.1}\" width=\"{bw:.1}\" height=\"26\" rx=\"4\" fill=\"#2f6fde\" opacity=\"{:.2}\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" font-size=\"14\" font-weight=\"600\" fill=\"#1d2330\">{n}</text>",
            y + 18.0,
            escape(label),
            1.0 - i as f64 * 0.18,
            label_w + bw + 8.0,
            y + 18.0
        );
    }
    h.push_str("</svg>");
    let rate = r
        .promoted
        .rate
        .map_or_else(|| "n/a".to_string(), |x| format!("{:.0}%", x * 100.0));
    let _ = write!(
        h,
        "<p class=\"sub\" style=\"margin:8px 0 0\">Bars to scale (linear). Promotion rate {} (derived promotions over unique candidates); {} promoted in all, {} written from principle.",
        escape(&rate),
        r.promoted.ids.len(),
        r.promoted.authored
    );
    if let Some(f) = f {
        let _ = write!(
            h,
            " Derive replayed {} seven-day window(s) with attempt counts; {} cluster(s) withheld as anecdotal.",
            f.windows, f.withheld
        );
    }
    h.push_str("</p>");
    if let Some(f) = f {
        super::charts::weekly(h, &f.rows);
    }
    h.push_str("</div>");
}

fn failures(h: &mut String, r: &Report) {
    h.push_str("<h2>Top recurring failures</h2><div class=\"panel\" id=\"failures\">");
    if r.failures.is_empty() {
        h.push_str("No failure recurred in this period.</div>");
        return;
    }
    h.push_str("<table><thead><tr><th class=\"num\">failures</th><th class=\"num\">of calls</th><th class=\"num\">sessions</th><th>tool</th><th>program</th><th>error signature</th></tr></thead><tbody>");
    for f in &r.failures {
        let _ = write!(
            h,
            "<tr class=\"failure\"><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td><td><code>{}</code></td><td><code>{}</code></td></tr>",
            f.failures,
            f.attempts,
            f.sessions,
            escape(&f.tool),
            escape(f.program.as_deref().unwrap_or("-")),
            escape(&cut(f.signature.as_deref().unwrap_or("-"), 160)),
        );
    }
    h.push_str("</tbody></table></div>");
}

fn candidates(h: &mut String, r: &Report) {
    h.push_str("<h2>Candidates</h2><div class=\"panel\" id=\"candidates\">");
    if r.candidates.is_empty() {
        h.push_str("Derive proposes no candidate over this period.</div>");
        return;
    }
    h.push_str("<p class=\"sub\" style=\"margin:0 0 8px\">What <code>callus derive</code> proposes over the whole period; promote one with <code>callus rules promote ID</code>.</p><table><thead><tr><th>candidate</th><th>tool</th><th>pattern</th><th>tier</th><th>evidence</th></tr></thead><tbody>");
    for c in &r.candidates {
        let _ = write!(
            h,
            "<tr class=\"candidate\" id=\"candidate-{id}\"><td><code>{id}</code></td><td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td></tr>",
            escape(&c.tool),
            escape(c.pattern.as_deref().unwrap_or("(tool-wide)")),
            escape(c.tier),
            escape(&candidate_evidence(c)),
            id = escape(&c.id),
        );
    }
    h.push_str("</tbody></table></div>");
}

/// `s` cut to `n` characters, with an ellipsis when cut.
fn cut(s: &str, n: usize) -> String {
    match s.char_indices().nth(n) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

fn effects(h: &mut String, r: &Report) {
    h.push_str("<h2>Effect of promotion</h2>");
    if r.effect.is_empty() {
        h.push_str("<div class=\"panel\">No promoted rule (none carries <code>meta.promoted</code>).</div>");
        return;
    }
    h.push_str("<div class=\"rules\">");
    for row in &r.effect {
        let _ = write!(
            h,
            "<div class=\"panel rule\" id=\"rule-{id}\"><h3>{id}<span class=\"badge {reading}\">{reading}</span></h3>\
             <div class=\"meta\">{action} · {tool} · {layer} layer · promoted {date}</div>",
            id = escape(&row.id),
            reading = escape(row.reading),
            action = escape(row.action.as_str()),
            tool = escape(&row.tool),
            layer = escape(row.layer),
            date = escape(&row.promoted)
        );
        for pattern in &row.patterns {
            let _ = write!(
                h,
                "<div class=\"pattern\"><code>{}</code></div>",
                escape(pattern)
            );
        }
        if let Some(m) = &row.message {
            let _ = write!(h, "<p class=\"message\">{}</p>", escape(m));
        }
        match &row.effect {
            Some(e) => before_after(h, e),
            None if row.promoted.as_str() >= r.until.get(..10).unwrap_or("") => h.push_str("<div class=\"meta\">Promoted after this period ends: choose a later <code>--until</code> to measure it.</div>"),
            None => h.push_str("<div class=\"meta\">Promoted on or before the first recorded call of this period: nothing before it to compare.</div>"),
        }
        super::charts::rate_series(h, &row.series);
        if let Some(n) = &row.note {
            let _ = write!(h, "<div class=\"note\">{}</div>", escape(n));
        }
        h.push_str("</div>");
    }
    h.push_str("</div><h2>Effect table</h2><div class=\"panel\"><table><thead><tr><th>rule</th><th>action</th><th>promoted</th><th class=\"num\">before</th><th class=\"num\">after</th><th class=\"num\">p</th><th class=\"num\">volume</th><th>reading</th></tr></thead><tbody>");
    for row in &r.effect {
        let cells = row.effect.as_ref().map_or_else(
            || ["-".to_string(), "-".into(), "-".into(), "-".into()],
            |e| {
                [
                    format!("{} of {}", pct(e.before.rate()), e.before.attempts),
                    format!("{} of {}", pct(e.after.rate()), e.after.attempts),
                    e.p_value.map_or("-".into(), p_text),
                    e.volume_change
                        .map_or("-".into(), |v| format!("{:+.0}%/day", v * 100.0)),
                ]
            },
        );
        let _ = write!(
            h,
            "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
            escape(&row.id),
            escape(row.action.as_str()),
            escape(&row.promoted),
            escape(&cells[0]),
            escape(&cells[1]),
            escape(&cells[2]),
            escape(&cells[3]),
            escape(row.reading)
        );
    }
    h.push_str("</tbody></table></div>");
}

/// Two horizontal bars, before and after, on a shared scale.
fn before_after(h: &mut String, e: &Effect) {
    let rb = e.before.rate().unwrap_or(0.0);
    let ra = e.after.rate().unwrap_or(0.0);
    let top = (rb.max(ra) * 1.15).max(0.05);
    let (w, label_w, bar_max) = (480.0, 60.0, 300.0);
    let after_colour = match e.outcome {
        Outcome::Helped => "#1f8a4c",
        Outcome::Harmful => "#c23b30",
        Outcome::VolumeShift => "#b7791f",
        _ => "#2f6fde",
    };
    let _ = write!(
        h,
        "<svg role=\"img\" aria-label=\"failure rate before and after\" viewBox=\"0 0 {w} 70\" width=\"100%\">"
    );
    for (i, (label, side, rate, colour)) in [
        ("before", &e.before, rb, "#9aa5b8"),
        ("after", &e.after, ra, after_colour),
    ]
    .into_iter()
    .enumerate()
    {
        let y = i as f64 * 32.0 + 4.0;
        let bw = (rate / top * bar_max).max(1.5);
        let _ = write!(
            h,
            "<text x=\"0\" y=\"{:.1}\" font-size=\"13\" fill=\"#5f6b7a\">{label}</text>\
             <rect x=\"{label_w}\" y=\"{y:.1}\" width=\"{bw:.1}\" height=\"22\" rx=\"3\" fill=\"{colour}\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" font-size=\"13\" fill=\"#1d2330\">{} of {} failed</text>",
            y + 16.0,
            label_w + bw + 8.0,
            y + 16.0,
            escape(&pct(side.rate())),
            side.attempts
        );
    }
    h.push_str("</svg>");
    let _ = write!(
        h,
        "<div class=\"meta\">attempts per day {:.1} → {:.1}{}</div>",
        e.before.per_day(),
        e.after.per_day(),
        e.p_value.map_or_else(String::new, |p| {
            let p = p_text(p);
            let sign = if p.starts_with('<') { "" } else { "= " };
            format!(" · two-proportion test p {sign}{}", escape(&p))
        })
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_covers_markup_and_quotes() {
        assert_eq!(
            escape(r#"<a href="x">&'"#),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }
}
