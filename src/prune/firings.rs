//! The firing side of prune: which rules fired, when, and on which calls, read from the audit
//! chain in the store and cut to a window (callusguard's prune, its first steps).
//!
//! Guarantees carried over from callusguard: a record that does not parse is skipped, never
//! fatal; a record whose `ts` does not parse ([`crate::window::absolute`]) is counted anyway
//! and tallied as undated (dropping it would fabricate a prune signal); records older than the
//! window do not count; one record counts once per listed rule id — also when two layers
//! declare the id (a promoted rule still listed in `candidates.json`) and both fired.
//! `error` records (the guard's internal errors) carry no firings and are not events.

use std::collections::{BTreeMap, HashSet};

use chrono::{DateTime, Utc};

use rusqlite::Connection;

use crate::Result;
use crate::store::audit_query;

/// One fired rule on one guarded call.
#[derive(Debug, Clone)]
pub(crate) struct Firing {
    /// The call it fired on (the join key to `tool_calls`).
    pub tool_use_id: Option<String>,
    /// The effective action the guard applied for this rule.
    pub action: String,
}

/// Per-rule tally of the firings in the window.
#[derive(Debug, Clone, Default)]
pub(crate) struct Tally {
    /// Events that listed the rule.
    pub count: u64,
    /// Latest dated firing.
    pub last_seen: Option<DateTime<Utc>>,
    /// Every firing, in chain order.
    pub firings: Vec<Firing>,
}

/// The audit chain, windowed and tallied.
#[derive(Debug, Clone, Default)]
pub(crate) struct Firings {
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

/// Read every decision record and tally those at or after `since_ms` (plus the undated ones).
pub(crate) fn read(conn: &Connection, since_ms: i64) -> Result<Firings> {
    read_range(conn, since_ms, None)
}

/// Like [`read`], with an optional exclusive upper bound for dated records.
pub(crate) fn read_range(
    conn: &Connection,
    since_ms: i64,
    until_ms: Option<i64>,
) -> Result<Firings> {
    let mut out = Firings::default();
    audit_query::for_each_loose(conn, |rec| {
        let Some(rec) = rec else {
            out.corrupt += 1;
            return;
        };
        if rec.kind.as_deref() == Some("error") {
            return;
        }
        out.events_total += 1;
        let ts = rec.ts.as_deref().and_then(crate::window::absolute);
        match ts {
            Some(t) if t < since_ms || until_ms.is_some_and(|u| t >= u) => return,
            Some(_) => {}
            None => out.undated += 1,
        }
        out.events_in_window += 1;
        let mut listed: HashSet<&str> = HashSet::new();
        for f in &rec.fired {
            let Some(id) = f.id.as_deref().filter(|s| !s.is_empty()) else {
                continue;
            };
            if !listed.insert(id) {
                continue;
            }
            let tally = out.by_rule.entry(id.to_string()).or_default();
            tally.count += 1;
            if let Some(t) = ts.and_then(crate::window::utc) {
                tally.last_seen = Some(tally.last_seen.map_or(t, |l| l.max(t)));
            }
            tally.firings.push(Firing {
                tool_use_id: rec.tool_use_id.clone(),
                action: f.action.clone().unwrap_or_default(),
            });
        }
    })?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(records: &[&str]) -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE TABLE audit (seq INTEGER PRIMARY KEY, record TEXT)")
            .unwrap();
        for r in records {
            conn.execute("INSERT INTO audit (record) VALUES (?1)", [r])
                .unwrap();
        }
        conn
    }

    #[test]
    fn a_record_counts_once_per_rule_id_and_undated_records_count() {
        let conn = chain(&[
            r#"{"kind":"decision","ts":"2026-11-29T10:00:00Z","tool_use_id":"t1",
                "fired":[{"id":"p","action":"deny"},{"id":"p","action":"monitor"},{"id":"q","action":"nudge"}]}"#,
            r#"{"kind":"decision","ts":"garbage","fired":[{"id":"p","action":"deny"}]}"#,
            r#"{"kind":"decision","ts":"2026-11-20T10:00:00","fired":[{"id":"p","action":"deny"}]}"#,
            r#"{"kind":"error","ts":"2026-11-29T10:00:00Z"}"#,
            "not json",
        ]);
        let since = crate::window::absolute("2026-11-25").unwrap();
        let f = read(&conn, since).unwrap();
        assert_eq!(
            (f.events_total, f.events_in_window, f.undated, f.corrupt),
            (3, 2, 1, 1)
        );
        assert_eq!(
            f.by_rule["p"].count, 2,
            "one per record, not per layer that fired"
        );
        assert_eq!(f.by_rule["p"].firings[0].action, "deny");
        assert_eq!(f.by_rule["q"].count, 1);
        assert_eq!(
            f.by_rule["p"].last_seen.map(|t| t.to_rfc3339()),
            Some("2026-11-29T10:00:00+00:00".into())
        );
        // A naive ISO time is UTC and counts once the window reaches back to it.
        let f = read(&conn, crate::window::absolute("2026-11-01").unwrap()).unwrap();
        assert_eq!(f.by_rule["p"].count, 3);
    }
}
