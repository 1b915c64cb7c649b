//! Typed readers over the audit chain's JSON records, for the stages that look back at
//! what the guard decided (prune, report, rules, doctor, the recorder).
//!
//! Guarantees: this file and [`super::audit`] are the only places that know how a record's
//! fields are spelled inside the stored JSON, so renaming a field is a compile-checked edit
//! here, not a silent break in another stage's SQL. Readers are lenient where the stages
//! were: a record that is not JSON is reported as corrupt, never fatal; a field of the wrong
//! type reads as absent.

use std::collections::HashMap;

use rusqlite::{Connection, OptionalExtension as _, params};
use serde::{Deserialize, Deserializer};
use serde_json::Value;

use crate::{Error, Result};

/// One fired rule as a lenient reader sees it.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct LooseFired {
    /// Rule id (`None` when absent, empty or not a string).
    #[serde(default, deserialize_with = "lenient_str")]
    pub id: Option<String>,
    /// Effective action (`None` when absent or not a string).
    #[serde(default, deserialize_with = "lenient_str")]
    pub action: Option<String>,
}

/// An audit record as a lenient reader sees it: the fields the look-back stages use, each
/// `None` (or empty) when absent or of the wrong type.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct LooseRecord {
    /// `decision` or `error`.
    #[serde(default, deserialize_with = "lenient_str")]
    pub kind: Option<String>,
    /// UTC time as written (RFC 3339, or whatever an old writer left).
    #[serde(default, deserialize_with = "lenient_str")]
    pub ts: Option<String>,
    /// The call the decision was on.
    #[serde(default, deserialize_with = "lenient_str")]
    pub tool_use_id: Option<String>,
    /// Fired rules; elements that are not objects are dropped.
    #[serde(default, deserialize_with = "lenient_fired")]
    pub fired: Vec<LooseFired>,
}

fn lenient_str<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Option<String>, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::String(s) => Some(s),
        _ => None,
    })
}

fn lenient_fired<'de, D: Deserializer<'de>>(
    d: D,
) -> std::result::Result<Vec<LooseFired>, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::Array(items) => items
            .into_iter()
            .filter(Value::is_object)
            .filter_map(|v| serde_json::from_value(v).ok())
            .collect(),
        _ => Vec::new(),
    })
}

/// Visit every record in chain order: `Some` for a JSON object, `None` for a record that is
/// not one (corrupt).
pub(crate) fn for_each_loose(
    conn: &Connection,
    mut visit: impl FnMut(Option<LooseRecord>),
) -> Result<()> {
    let err = |e| Error::sql("read audit chain", e);
    let mut stmt = conn
        .prepare("SELECT record FROM audit ORDER BY seq")
        .map_err(err)?;
    let mut rows = stmt.query([]).map_err(err)?;
    while let Some(row) = rows.next().map_err(err)? {
        let text: String = row.get(0).map_err(|e| Error::sql("read audit record", e))?;
        let record = match serde_json::from_str::<Value>(&text) {
            Ok(v @ Value::Object(_)) => serde_json::from_value(v).ok(),
            _ => None,
        };
        visit(record);
    }
    Ok(())
}

/// Decision records dated in `[since_ms, until_ms)`, counted per decision
/// (`allow`, `nudge`, `deny`, `block`).
pub(crate) fn decision_counts(
    conn: &Connection,
    since_ms: i64,
    until_ms: i64,
) -> Result<Vec<(String, u64)>> {
    let err = |e| Error::sql("count verdicts", e);
    let mut stmt = conn
        .prepare(
            "SELECT json_extract(record, '$.decision'), count(*) FROM audit
             WHERE ts_ms >= ?1 AND ts_ms < ?2 AND json_valid(record)
               AND json_extract(record, '$.kind') = 'decision'
             GROUP BY 1",
        )
        .map_err(err)?;
    stmt.query_map([since_ms, until_ms], |r| {
        Ok((
            r.get::<_, Option<String>>(0)?.unwrap_or_default(),
            r.get::<_, i64>(1)? as u64,
        ))
    })
    .map_err(err)?
    .collect::<rusqlite::Result<_>>()
    .map_err(err)
}

/// The latest firing time (unix ms) of each rule id in the chain.
pub(crate) fn last_firings(conn: &Connection) -> Result<HashMap<String, i64>> {
    let err = |e| Error::sql("read last firings", e);
    let mut stmt = conn
        .prepare(
            "SELECT json_extract(f.value, '$.id'), max(a.ts_ms)
             FROM audit a, json_each(a.record, '$.fired') f
             WHERE json_valid(a.record)
             GROUP BY 1",
        )
        .map_err(err)?;
    let rows = stmt
        .query_map([], |r| {
            Ok((r.get::<_, Option<String>>(0)?, r.get::<_, Option<i64>>(1)?))
        })
        .map_err(err)?;
    let mut out = HashMap::new();
    for row in rows {
        if let (Some(id), Some(ms)) = row.map_err(err)? {
            out.insert(id, ms);
        }
    }
    Ok(out)
}

/// The newest audit record of `host` that names a session: (session id, unix ms).
pub(crate) fn latest_for_host(
    conn: &Connection,
    host: &str,
) -> rusqlite::Result<Option<(String, i64)>> {
    conn.query_row(
        "SELECT session_id, ts_ms FROM audit
         WHERE session_id IS NOT NULL AND json_extract(record, '$.host') = ?1
         ORDER BY ts_ms DESC LIMIT 1",
        [host],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .optional()
}

/// In `host`'s latest guarded session: how many allow/nudge decisions older than
/// `before_ms` there are on calls with an id, and how many of those calls the recorder
/// never stored — (session id, decisions, unrecorded).
pub(crate) fn unrecorded_outcomes(
    conn: &Connection,
    host: &str,
    before_ms: i64,
) -> rusqlite::Result<Option<(String, i64, i64)>> {
    conn.query_row(
        "SELECT a.session_id,
                count(*),
                sum(t.tool_use_id IS NULL)
         FROM audit a LEFT JOIN tool_calls t ON t.tool_use_id = a.tool_use_id
         WHERE a.session_id = (
                 SELECT session_id FROM audit
                 WHERE session_id IS NOT NULL AND json_extract(record, '$.host') = ?1
                 ORDER BY seq DESC LIMIT 1)
           AND a.tool_use_id IS NOT NULL
           AND a.ts_ms < ?2
           AND json_extract(a.record, '$.kind') = 'decision'
           AND json_extract(a.record, '$.decision') IN ('allow', 'nudge')
         GROUP BY a.session_id",
        params![host, before_ms],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )
    .optional()
}

/// The SQL condition "`tool_calls.tool_use_id` is a call of session `?1` that the guard
/// denied or blocked for real (not a dry run)", for the recorder's sweep of pending calls.
pub(crate) const REFUSED_IN_SESSION: &str = "tool_use_id IN (
         SELECT tool_use_id FROM audit
         WHERE session_id = ?1 AND tool_use_id IS NOT NULL
           AND json_extract(record, '$.decision') IN ('deny', 'block')
           AND json_extract(record, '$.dryrun') = 0)";

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(records: &[&str]) -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE TABLE audit (seq INTEGER PRIMARY KEY, ts_ms INTEGER, record TEXT)",
        )
        .unwrap();
        for r in records {
            conn.execute("INSERT INTO audit (ts_ms, record) VALUES (1, ?1)", [r])
                .unwrap();
        }
        conn
    }

    #[test]
    fn loose_reader_keeps_what_parses_and_flags_the_rest() {
        let conn = chain(&[
            r#"{"kind":"decision","ts":7,"fired":[{"id":"p","action":"deny"},3,{"id":5}]}"#,
            "not json",
            "[1,2]",
            r#"{"kind":"decision","fired":"x","tool_use_id":"t"}"#,
        ]);
        let mut seen = Vec::new();
        for_each_loose(&conn, |r| seen.push(r)).unwrap();
        assert_eq!(seen.len(), 4);
        let first = seen[0].as_ref().unwrap();
        assert_eq!(first.kind.as_deref(), Some("decision"));
        assert_eq!(first.ts, None, "a number is not a time");
        assert_eq!(first.fired.len(), 2, "the non-object element is dropped");
        assert_eq!(first.fired[0].id.as_deref(), Some("p"));
        assert_eq!(first.fired[1].id, None);
        assert!(seen[1].is_none() && seen[2].is_none());
        let last = seen[3].as_ref().unwrap();
        assert!(last.fired.is_empty());
        assert_eq!(last.tool_use_id.as_deref(), Some("t"));
    }

    #[test]
    fn decision_counts_skip_errors_and_invalid_records() {
        let conn = chain(&[
            r#"{"kind":"decision","decision":"deny"}"#,
            r#"{"kind":"decision","decision":"deny"}"#,
            r#"{"kind":"decision","decision":"nudge"}"#,
            r#"{"kind":"error","decision":"allow"}"#,
            "garbage",
        ]);
        let mut counts = decision_counts(&conn, 0, 10).unwrap();
        counts.sort();
        assert_eq!(counts, vec![("deny".into(), 2), ("nudge".into(), 1)]);
        assert!(decision_counts(&conn, 2, 10).unwrap().is_empty());
    }
}
