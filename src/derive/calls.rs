//! Reading the window's tool calls out of the store.
//!
//! Two queries, shaped for a store of millions of calls:
//! - the failures in the window (status `failure` only, refined again by the outcome model:
//!   pending, interrupted, denied, harness calls and answers are never evidence that a
//!   command fails), through the status index;
//! - one streaming pass over the settled calls (success or failure) in the window, through
//!   the backtest's [`scan`](crate::rules::backtest::scan), that keeps only the calls a later
//!   stage can use: calls of a tool group that has a cluster, and, for Bash, only calls whose
//!   prefilter text (see [`super::command::prefilter_into`]) contains one of the literals
//!   every derived pattern requires, tagged with the literals they contain. Everything else
//!   is counted and dropped, so memory follows the relevant calls, not the store.

use std::collections::HashMap;

use aho_corasick::AhoCorasick;
use rusqlite::{Connection, params};

use super::command::prefilter_into;
use crate::record::Status;
use crate::record::outcome;
use crate::rules::backtest::{self, Scan};
use crate::window::Window;
use crate::{Error, Result};

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
    /// The host said the call's input was over its size limit (`facts.over_limit`).
    pub over_limit: bool,
}

/// Load the failures in `window`.
pub(crate) fn failures(conn: &Connection, window: &Window) -> Result<Vec<Failure>> {
    let sql = "SELECT tool, coalesce(command, ''), coalesce(error, ''), coalesce(signature, ''),
                      session_id, started_ms, source, exit_code,
                      coalesce(json_extract(facts, '$.over_limit'), 0)
               FROM tool_calls
               WHERE status = 'failure' AND started_ms >= ?1 AND started_ms < ?2
               ORDER BY started_ms, tool_use_id";
    let mut stmt = conn
        .prepare(sql)
        .map_err(|e| Error::sql("prepare failure query", e))?;
    let rows = stmt
        .query_map(params![window.since_ms, window.until_ms], |r| {
            Ok((
                Failure {
                    tool: r.get(0)?,
                    command: r.get(1)?,
                    error: r.get(2)?,
                    signature: r.get(3)?,
                    session: r.get(4)?,
                    started_ms: r.get(5)?,
                    source: r.get(6)?,
                    over_limit: r.get::<_, i64>(8)? != 0,
                },
                r.get::<_, Option<i64>>(7)?,
            ))
        })
        .map_err(|e| Error::sql("read failures", e))?;
    let rows = rows
        .collect::<rusqlite::Result<Vec<_>>>()
        .map_err(|e| Error::sql("read failures", e))?;
    // Rows stored before the outcome model (or under another answer table) are refined
    // here: a refusal, a harness failure or an answer is never a failure's evidence.
    Ok(rows
        .into_iter()
        .filter(|(f, code)| {
            outcome::refine(&f.tool, Some(&f.command), Status::Failure, *code, &f.error)
                == Status::Failure
        })
        .map(|(f, _)| f)
        .collect())
}

/// Stream the settled calls in `window`, keeping those of a tool group in `groups`
/// (index 0 must be Bash, kept only when its prefilter text contains one of `literals`, and
/// tagged with the indices of the literals it contains).
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
    let mut group_of: HashMap<String, Option<usize>> = HashMap::new();
    let mut text = String::new();
    backtest::scan(conn, Some(window), |tool, command, tags| {
        let group = if let Some(g) = group_of.get(tool) {
            *g
        } else {
            let g = groups
                .iter()
                .position(|glob| crate::rules::glob::matches(glob, tool));
            group_of.insert(tool.to_string(), g);
            g
        };
        match group {
            None => false,
            Some(0) => {
                prefilter_into(command, &mut text);
                tags.extend(
                    matcher
                        .find_overlapping_iter(&text)
                        .map(|m| m.pattern().as_u32()),
                );
                tags.sort_unstable();
                tags.dedup();
                !tags.is_empty()
            }
            Some(_) => true,
        }
    })
}

/// The most bytes a successful call of `tool` in `window` returned (`facts.bytes`), if any
/// recorded it.
pub(crate) fn max_success_bytes(
    conn: &Connection,
    window: &Window,
    tool: &str,
) -> Result<Option<u64>> {
    conn.query_row(
        "SELECT max(json_extract(facts, '$.bytes')) FROM tool_calls
         WHERE tool = ?1 AND status = 'success' AND started_ms >= ?2 AND started_ms < ?3
           AND facts IS NOT NULL",
        params![tool, window.since_ms, window.until_ms],
        |r| r.get::<_, Option<i64>>(0),
    )
    .map(|b| b.map(|b| b.max(0) as u64))
    .map_err(|e| Error::sql("read the largest successful read", e))
}
