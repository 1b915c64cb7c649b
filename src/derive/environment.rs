//! Environment findings: failures of the host's shell or tool (outcome class `harness`)
//! and recurring failures whose cause is outside the command (the network: see
//! `finding`), reported once per kind with how many calls, programs and sessions they hit,
//! never as a candidate rule against the programs that did not get to run or could not
//! reach anything. And, for a window with no calls at all, the dates the store does hold.

use std::collections::{BTreeMap, BTreeSet};

use rusqlite::{Connection, params};

use crate::record::outcome;
use crate::window::Window;
use crate::{Error, Result};

/// One kind of harness failure in the window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Finding {
    /// What went wrong, in words.
    pub kind: &'static str,
    /// Calls it hit.
    pub calls: u64,
    /// Distinct command shapes among them (programs that never ran).
    pub programs: u64,
    /// Distinct sessions.
    pub sessions: u64,
}

/// Calls, shapes and sessions seen of one kind.
type Seen = (u64, BTreeSet<String>, BTreeSet<String>);

/// The window's harness failures, grouped by kind, most calls first.
pub(crate) fn findings(conn: &Connection, window: &Window) -> Result<Vec<Finding>> {
    let err = |e| Error::sql("read harness failures", e);
    let mut stmt = conn
        .prepare(
            "SELECT coalesce(error, ''), exit_code, coalesce(shape, ''), coalesce(session_id, '')
             FROM tool_calls
             WHERE status = 'harness' AND started_ms >= ?1 AND started_ms < ?2",
        )
        .map_err(err)?;
    let mut rows = stmt
        .query(params![window.since_ms, window.until_ms])
        .map_err(err)?;
    let mut by_kind: BTreeMap<&'static str, Seen> = BTreeMap::new();
    while let Some(r) = rows.next().map_err(err)? {
        let error: String = r.get(0).map_err(err)?;
        let code: Option<i64> = r.get(1).map_err(err)?;
        let kind = outcome::harness_kind(&error, code);
        let e = by_kind.entry(kind).or_default();
        e.0 += 1;
        e.1.insert(r.get(2).map_err(err)?);
        e.2.insert(r.get(3).map_err(err)?);
    }
    let mut out: Vec<Finding> = by_kind
        .into_iter()
        .map(|(kind, (calls, programs, sessions))| Finding {
            kind,
            calls,
            programs: programs.len() as u64,
            sessions: sessions.len() as u64,
        })
        .collect();
    out.sort_by_key(|f| std::cmp::Reverse(f.calls));
    Ok(out)
}

/// The recurring clusters the outcome model judged environment findings, one per kind.
pub(crate) fn from_clusters(dv: &super::Derivation) -> Vec<Finding> {
    let mut by_kind: BTreeMap<&'static str, Seen> = BTreeMap::new();
    for (d, verdict) in &dv.not_rules {
        let super::FindingKind::Environment(kind) = *verdict else {
            continue;
        };
        let e = by_kind.entry(kind).or_default();
        for &i in &d.clusters {
            let c = &dv.clusters[i];
            e.0 += c.count() as u64;
            e.1.insert(c.shape.clone());
            e.2.extend(
                c.failures
                    .iter()
                    .map(|&f| dv.failures[f].session.clone().unwrap_or_default()),
            );
        }
    }
    by_kind
        .into_iter()
        .map(|(kind, (calls, programs, sessions))| Finding {
            kind,
            calls,
            programs: programs.len() as u64,
            sessions: sessions.len() as u64,
        })
        .collect()
}

/// The first and last call start in the whole store, when it holds any.
pub(crate) fn store_span(conn: &Connection) -> Result<Option<(i64, i64)>> {
    conn.query_row(
        "SELECT min(started_ms), max(started_ms) FROM tool_calls",
        [],
        |r| Ok(r.get::<_, Option<i64>>(0)?.zip(r.get::<_, Option<i64>>(1)?)),
    )
    .map_err(|e| Error::sql("read the store's span", e))
}
