//! The derivation funnel: derive replayed one 7-day window at a time over the report period,
//! with attempt counts, so tiers are real and anecdotal clusters are withheld exactly as a
//! weekly `callus derive` would (callusguard's report ran derive without denominators, so every
//! cluster tiered unknown and nothing was withheld: spec §15.1 item 58).
//!
//! The replay groups each window's failures as derive does: Bash by (command shape of the
//! failing segment, error signature) as recorded by the recorder, other tools by tool group
//! (MCP: per server), with the attempt denominator every settled call of that shape or group in
//! the window. A candidate's identity is that grouping key, which is what derive's stable ids
//! are made of, so `unique` counts each recurring failure once however many windows it
//! recurs in. (When `derive` exposes its window function, the replay should call it instead.)

use std::collections::{BTreeMap, HashSet};

use chrono::{DateTime, Utc};
use rusqlite::Connection;
use serde::Serialize;

use crate::rules::tier::{self, Tier};
use crate::{Error, Result};

/// Length of one replayed window.
pub const WINDOW_DAYS: i64 = 7;
/// Tools derive leaves out by default (spec §6.1).
pub const EXCLUDED_TOOLS: &[&str] = &["Read", "Skill", "Glob", "Grep", "TodoWrite", "NotebookRead"];

/// Replay settings (derive's defaults).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Settings {
    /// Fewest failures a cluster needs.
    pub min_count: u64,
    /// Fewest attempts for a tier better than anecdotal.
    pub min_attempts: u64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            min_count: 3,
            min_attempts: tier::MIN_ATTEMPTS,
        }
    }
}

/// One candidate a window proposed.
#[derive(Debug, Clone, Serialize)]
pub struct Proposal {
    /// Grouping key: `Bash <shape> | <signature>` or the tool group.
    pub key: String,
    /// Failures in the window.
    pub fail_count: u64,
    /// Settled calls of the shape or group in the window.
    pub attempt_count: u64,
    /// Evidence tier.
    pub tier: &'static str,
}

/// One replayed window.
#[derive(Debug, Clone, Serialize)]
pub struct Window {
    /// Start (inclusive), `YYYY-MM-DD`.
    pub start: String,
    /// Candidates proposed.
    pub proposed: u64,
    /// Clusters withheld as anecdotal.
    pub withheld: u64,
    /// The three largest proposals.
    pub top: Vec<Proposal>,
}

/// The whole funnel.
#[derive(Debug, Clone, Serialize)]
pub struct Funnel {
    /// Replay settings.
    pub settings: Settings,
    /// Candidates proposed, summed over windows.
    pub proposed: u64,
    /// Distinct candidates.
    pub unique: u64,
    /// Clusters withheld as anecdotal, summed over windows.
    pub withheld: u64,
    /// Windows replayed.
    pub windows: u64,
    /// Windows that proposed nothing.
    pub empty_windows: u64,
    /// Per window.
    pub rows: Vec<Window>,
}

struct Row {
    tool: String,
    shape: String,
    signature: String,
    failed: bool,
    started_ms: i64,
}

fn tool_group(tool: &str) -> String {
    let parts: Vec<&str> = tool.split("__").collect();
    if tool.starts_with("mcp__") && parts.len() >= 3 && !parts[1].is_empty() {
        format!("mcp__{}__*", parts[1])
    } else {
        tool.to_string()
    }
}

/// Replay derive over `[since, until)`.
pub fn replay(
    conn: &Connection,
    since: DateTime<Utc>,
    until: DateTime<Utc>,
    settings: Settings,
) -> Result<Funnel> {
    let mut stmt = conn
        .prepare(
            "SELECT tool, coalesce(shape, ''), coalesce(signature, ''), status, started_ms
             FROM tool_calls
             WHERE status IN ('success', 'failure') AND started_ms >= ?1 AND started_ms < ?2",
        )
        .map_err(|e| Error::sql("read calls for the funnel", e))?;
    let rows = stmt
        .query_map([since.timestamp_millis(), until.timestamp_millis()], |r| {
            Ok(Row {
                tool: r.get(0)?,
                shape: r.get(1)?,
                signature: r.get(2)?,
                failed: r.get::<_, String>(3)? == "failure",
                started_ms: r.get(4)?,
            })
        })
        .map_err(|e| Error::sql("read calls for the funnel", e))?
        .collect::<rusqlite::Result<Vec<_>>>()
        .map_err(|e| Error::sql("read calls for the funnel", e))?;
    let step = chrono::Duration::days(WINDOW_DAYS);
    let mut funnel = Funnel {
        settings,
        proposed: 0,
        unique: 0,
        withheld: 0,
        windows: 0,
        empty_windows: 0,
        rows: Vec::new(),
    };
    let mut unique = HashSet::new();
    let mut start = since;
    while start < until {
        let end = (start + step).min(until);
        let (s, e) = (start.timestamp_millis(), end.timestamp_millis());
        let in_window = rows
            .iter()
            .filter(|r| r.started_ms >= s && r.started_ms < e);
        let w = derive_window(in_window, settings, &mut unique);
        funnel.windows += 1;
        funnel.proposed += w.0.len() as u64;
        funnel.withheld += w.1;
        if w.0.is_empty() {
            funnel.empty_windows += 1;
        }
        let mut top = w.0;
        top.sort_by(|a, b| b.fail_count.cmp(&a.fail_count).then(a.key.cmp(&b.key)));
        let proposed = top.len() as u64;
        top.truncate(3);
        funnel.rows.push(Window {
            start: start.format("%Y-%m-%d").to_string(),
            proposed,
            withheld: w.1,
            top,
        });
        start = end;
    }
    funnel.unique = unique.len() as u64;
    Ok(funnel)
}

/// One window's candidates and the number withheld as anecdotal.
fn derive_window<'a>(
    rows: impl Iterator<Item = &'a Row>,
    settings: Settings,
    unique: &mut HashSet<String>,
) -> (Vec<Proposal>, u64) {
    // (fails, attempts) per Bash (shape, signature) cluster and per shape; per tool group.
    let mut clusters: BTreeMap<(String, String), u64> = BTreeMap::new();
    let mut shape_attempts: BTreeMap<String, u64> = BTreeMap::new();
    let mut groups: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for r in rows.filter(|r| !EXCLUDED_TOOLS.contains(&r.tool.as_str())) {
        if r.tool == "Bash" {
            if r.shape.is_empty() {
                continue;
            }
            *shape_attempts.entry(r.shape.clone()).or_default() += 1;
            if r.failed {
                *clusters
                    .entry((r.shape.clone(), r.signature.clone()))
                    .or_default() += 1;
            }
        } else {
            let g = groups.entry(tool_group(&r.tool)).or_default();
            g.1 += 1;
            g.0 += u64::from(r.failed);
        }
    }
    let mut out = Vec::new();
    let mut withheld = 0;
    let candidates = clusters
        .into_iter()
        .map(|((shape, sig), fails)| {
            let attempts = shape_attempts.get(&shape).copied().unwrap_or(0);
            (format!("Bash {shape} | {sig}"), fails, attempts)
        })
        .chain(groups.into_iter().map(|(g, (f, a))| (g, f, a)));
    for (key, fails, attempts) in candidates {
        if fails < settings.min_count {
            continue;
        }
        let (t, _) = tier::classify(fails, attempts, settings.min_attempts);
        if t == Tier::Anecdotal {
            withheld += 1;
            continue;
        }
        unique.insert(key.clone());
        out.push(Proposal {
            key,
            fail_count: fails,
            attempt_count: attempts,
            tier: t.label(),
        });
    }
    (out, withheld)
}
