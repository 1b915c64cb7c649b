//! Reading the window's tool calls out of the store.
//!
//! Two queries, shaped for a store of millions of calls:
//! - the failures in the window (status `failure` only: pending, interrupted and denied calls
//!   are never evidence that a command fails), through the partial index of migration 0003;
//! - one streaming pass over the settled calls (success or failure) in the window that keeps
//!   only the calls a later stage can use: calls of a tool group that has a cluster, and, for
//!   Bash, only calls whose prefilter text (see [`super::command::prefilter_into`]) contains
//!   one of the literals every derived pattern requires. Everything else is counted and
//!   dropped, so memory follows the relevant calls, not the store.

use std::collections::HashMap;

use aho_corasick::AhoCorasick;
use rusqlite::{Connection, params};

use super::command::prefilter_into;
use super::window::Window;
use crate::{Error, Result};

/// A settled outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// The call worked.
    Success,
    /// The call failed.
    Failure,
}

/// One recorded failure, with everything clustering and the samples need.
#[derive(Debug, Clone)]
pub(crate) struct Failure {
    /// The tool name.
    pub tool: String,
    /// The redacted command (Bash) or input summary.
    pub command: String,
    /// The redacted error.
    pub error: String,
    /// The stored error signature (may be empty).
    pub signature: String,
    /// The session, when known.
    pub session: Option<String>,
    /// When the call started (Unix ms).
    pub started_ms: i64,
    /// Where the row came from (`hook`, `trace`, …).
    pub source: String,
}

/// One settled call kept for contrast and backtest.
#[derive(Debug, Clone)]
pub(crate) struct Call {
    /// Index of the tool group this call belongs to, in the `groups` given to [`scan`] (Bash is 0).
    pub group: usize,
    /// The tool name.
    pub tool: String,
    /// Success or failure.
    pub outcome: Outcome,
    /// The redacted command (Bash) or input summary.
    pub command: String,
    /// Interned session id, when known.
    pub session: Option<u32>,
    /// When the call started (Unix ms).
    pub started_ms: i64,
    /// The prefilter literals (indices into the literal list) this call's text contains.
    pub literals: Vec<u32>,
}

/// What the streaming pass kept and counted.
#[derive(Debug, Default)]
pub(crate) struct Scan {
    /// The calls later stages use, in time order.
    pub calls: Vec<Call>,
    /// Settled calls seen in the window (every tool).
    pub settled: u64,
    /// Successful calls seen in the window (every tool): zero means no denominator.
    pub successes: u64,
}

/// Load the failures in `window`.
pub(crate) fn failures(conn: &Connection, window: &Window) -> Result<Vec<Failure>> {
    let sql = "SELECT tool, coalesce(command, ''), coalesce(error, ''), coalesce(signature, ''),
                      session_id, started_ms, source
               FROM tool_calls
               WHERE status = 'failure' AND started_ms >= ?1 AND started_ms < ?2
               ORDER BY started_ms, tool_use_id";
    let mut stmt = conn
        .prepare(sql)
        .map_err(|e| Error::sql("prepare failure query", e))?;
    let rows = stmt
        .query_map(params![window.since_ms, window.until_ms], |r| {
            Ok(Failure {
                tool: r.get(0)?,
                command: r.get(1)?,
                error: r.get(2)?,
                signature: r.get(3)?,
                session: r.get(4)?,
                started_ms: r.get(5)?,
                source: r.get(6)?,
            })
        })
        .map_err(|e| Error::sql("read failures", e))?;
    rows.collect::<rusqlite::Result<Vec<_>>>()
        .map_err(|e| Error::sql("read failures", e))
}

/// Stream the settled calls in `window`, keeping those of a tool group in `groups`
/// (index 0 must be Bash, kept only when its prefilter text contains one of `literals`).
///
/// `groups[i]` is a tool-name glob; `literals` are lowercase.
pub(crate) fn scan(
    conn: &Connection,
    window: &Window,
    groups: &[String],
    literals: &[String],
) -> Result<Scan> {
    let matcher = AhoCorasick::new(literals)
        .map_err(|e| Error::Invalid(format!("derive: cannot build the literal prefilter: {e}")))?;
    // `+started_ms` keeps SQLite from walking the time index row by row when the window covers
    // most of the store; a narrow window in a large store still uses it.
    let sql = if covers_most(conn, window)? {
        "SELECT tool, status, command, session_id, started_ms FROM tool_calls
         WHERE +started_ms >= ?1 AND +started_ms < ?2 AND status IN ('success', 'failure')"
    } else {
        "SELECT tool, status, command, session_id, started_ms FROM tool_calls
         WHERE started_ms >= ?1 AND started_ms < ?2 AND status IN ('success', 'failure')"
    };
    let mut stmt = conn
        .prepare(sql)
        .map_err(|e| Error::sql("prepare call scan", e))?;
    let mut rows = stmt
        .query(params![window.since_ms, window.until_ms])
        .map_err(|e| Error::sql("scan calls", e))?;
    let mut out = Scan::default();
    let mut sessions: HashMap<String, u32> = HashMap::new();
    let mut group_of: HashMap<String, Option<usize>> = HashMap::new();
    let mut hits: Vec<u32> = Vec::new();
    let mut text = String::new();
    while let Some(row) = rows.next().map_err(|e| Error::sql("scan calls", e))? {
        let status = row.get_ref(1).map_err(|e| Error::sql("scan calls", e))?;
        let outcome = match status.as_str().unwrap_or_default() {
            "success" => Outcome::Success,
            _ => Outcome::Failure,
        };
        out.settled += 1;
        if outcome == Outcome::Success {
            out.successes += 1;
        }
        let tool_ref = row.get_ref(0).map_err(|e| Error::sql("scan calls", e))?;
        let tool = tool_ref.as_str().unwrap_or_default();
        let group = if let Some(g) = group_of.get(tool) {
            *g
        } else {
            let g = groups
                .iter()
                .position(|glob| crate::rules::glob::matches(glob, tool));
            group_of.insert(tool.to_string(), g);
            g
        };
        let Some(group) = group else { continue };
        let command_ref = row.get_ref(2).map_err(|e| Error::sql("scan calls", e))?;
        let command = command_ref.as_str().unwrap_or_default();
        hits.clear();
        if group == 0 {
            prefilter_into(command, &mut text);
            hits.extend(
                matcher
                    .find_overlapping_iter(&text)
                    .map(|m| m.pattern().as_u32()),
            );
            if hits.is_empty() {
                continue;
            }
            hits.sort_unstable();
            hits.dedup();
        }
        let session: Option<String> = row.get(3).map_err(|e| Error::sql("scan calls", e))?;
        let session = session.map(|s| {
            let next = sessions.len() as u32;
            *sessions.entry(s).or_insert(next)
        });
        out.calls.push(Call {
            group,
            tool: tool.to_string(),
            outcome,
            command: command.to_string(),
            session,
            started_ms: row.get(4).map_err(|e| Error::sql("scan calls", e))?,
            literals: hits.clone(),
        });
    }
    out.calls
        .sort_by(|a, b| (a.started_ms, &a.command).cmp(&(b.started_ms, &b.command)));
    Ok(out)
}

/// Does the window hold more than a third of the store? (Then a table scan beats the index.)
fn covers_most(conn: &Connection, window: &Window) -> Result<bool> {
    let (inside, total): (i64, i64) = conn
        .query_row(
            "SELECT (SELECT count(*) FROM tool_calls WHERE started_ms >= ?1 AND started_ms < ?2),
                    (SELECT count(*) FROM tool_calls)",
            params![window.since_ms, window.until_ms],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .map_err(|e| Error::sql("size the window", e))?;
    Ok(inside * 3 > total)
}
