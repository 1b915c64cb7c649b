//! The firing side of prune: which rules fired, when, and on which calls, read from the audit
//! chain in the store and cut to a window (callusguard spec §7.3 steps 1–4).
//!
//! Guarantees carried over from callusguard: a record that does not parse is skipped, never
//! fatal; a record whose `ts` does not parse is counted anyway and tallied as undated (dropping
//! it would fabricate a prune signal); records older than the window do not count; one record
//! counts once per listed rule id. `error` records (the guard's internal errors) carry no
//! firings and are not events.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use rusqlite::Connection;
use serde_json::Value;

use crate::{Error, Result};

/// One fired rule on one guarded call.
#[derive(Debug, Clone)]
pub struct Firing {
    /// The call it fired on (the join key to `tool_calls`).
    pub tool_use_id: Option<String>,
    /// The effective action the guard applied for this rule.
    pub action: String,
}

/// Per-rule tally of the firings in the window.
#[derive(Debug, Clone, Default)]
pub struct Tally {
    /// Events that listed the rule.
    pub count: u64,
    /// Latest dated firing.
    pub last_seen: Option<DateTime<Utc>>,
    /// Every firing, in chain order.
    pub firings: Vec<Firing>,
}

/// The audit chain, windowed and tallied.
#[derive(Debug, Clone, Default)]
pub struct Firings {
    /// Decision records that parsed, over the whole chain.
    pub events_total: u64,
    /// Records in the window (dated in-window plus undated).
    pub events_in_window: u64,
    /// Records without a parseable `ts` (counted regardless).
    pub undated: u64,
    /// Records that did not parse (skipped).
    pub corrupt: u64,
    /// Per rule id.
    pub by_rule: BTreeMap<String, Tally>,
}

/// Parse an audit `ts`: RFC 3339 (`Z` accepted) or a naive ISO date-time taken as UTC.
#[must_use]
pub fn parse_ts(ts: &str) -> Option<DateTime<Utc>> {
    let ts = ts.trim();
    if ts.is_empty() {
        return None;
    }
    if let Ok(t) = DateTime::parse_from_rfc3339(ts) {
        return Some(t.with_timezone(&Utc));
    }
    ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%d %H:%M:%S%.f"]
        .iter()
        .find_map(|f| chrono::NaiveDateTime::parse_from_str(ts, f).ok())
        .map(|n| n.and_utc())
}

/// Read every decision record and tally those at or after `since` (plus the undated ones).
pub fn read(conn: &Connection, since: DateTime<Utc>) -> Result<Firings> {
    read_range(conn, since, None)
}

/// Like [`read`], with an optional exclusive upper bound for dated records.
pub fn read_range(
    conn: &Connection,
    since: DateTime<Utc>,
    until: Option<DateTime<Utc>>,
) -> Result<Firings> {
    let mut stmt = conn
        .prepare("SELECT record FROM audit ORDER BY seq")
        .map_err(|e| Error::sql("read audit chain", e))?;
    let mut rows = stmt
        .query([])
        .map_err(|e| Error::sql("read audit chain", e))?;
    let mut out = Firings::default();
    while let Some(row) = rows.next().map_err(|e| Error::sql("read audit chain", e))? {
        let text: String = row.get(0).map_err(|e| Error::sql("read audit record", e))?;
        let Ok(Value::Object(rec)) = serde_json::from_str::<Value>(&text) else {
            out.corrupt += 1;
            continue;
        };
        if rec.get("kind").and_then(Value::as_str) == Some("error") {
            continue;
        }
        out.events_total += 1;
        let ts = rec.get("ts").and_then(Value::as_str).and_then(parse_ts);
        match ts {
            Some(t) if t < since || until.is_some_and(|u| t >= u) => continue,
            Some(_) => {}
            None => out.undated += 1,
        }
        out.events_in_window += 1;
        let tool_use_id = rec
            .get("tool_use_id")
            .and_then(Value::as_str)
            .map(str::to_string);
        let fired = rec.get("fired").and_then(Value::as_array);
        for f in fired.into_iter().flatten() {
            let Some(id) = f
                .get("id")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
            else {
                continue;
            };
            let tally = out.by_rule.entry(id.to_string()).or_default();
            tally.count += 1;
            if let Some(t) = ts {
                tally.last_seen = Some(tally.last_seen.map_or(t, |l| l.max(t)));
            }
            tally.firings.push(Firing {
                tool_use_id: tool_use_id.clone(),
                action: f
                    .get("action")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_parse_with_zone_or_naive() {
        assert!(parse_ts("2026-11-29T10:00:00.000Z").is_some());
        assert!(parse_ts("2026-11-29T10:00:00+02:00").is_some());
        assert_eq!(
            parse_ts("2026-11-29T10:00:00"),
            parse_ts("2026-11-29T10:00:00Z")
        );
        assert!(parse_ts("").is_none());
        assert!(parse_ts("yesterday").is_none());
    }
}
