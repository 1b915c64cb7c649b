//! `callus record stats [--since] [--json]`: what has been recorded, at a glance.
//!
//! Calls by outcome class (see `outcome`), sessions and the time span; then per tool and for
//! the top command shapes: calls, failures, answers, harness failures, refusals, masked
//! successes and the failure rate. The failure rate is failures over attempts, where
//! attempts are calls whose program ran to an outcome (success, answer or failure): harness,
//! denied, interrupted and pending calls are shown but are not attempts. A success is
//! `masked` when its output carries the signature of a failure of the same tool and shape.
//! A call's time is its start (its end when the start is unknown).

use rusqlite::{Connection, params};
use serde_json::{Value, json};

use crate::store::evidence::Evidence;
use std::fmt::Write as _;

use crate::output::table;
use crate::{Error, Exit, Result};

/// How many command shapes the report lists.
const TOP_SHAPES: usize = 15;

/// One group's counts.
#[derive(Debug, Default, Clone)]
struct Counts {
    calls: i64,
    success: i64,
    failures: i64,
    denied: i64,
    interrupted: i64,
    pending: i64,
    answers: i64,
    harness: i64,
    masked: i64,
}

impl Counts {
    fn rate(&self) -> Option<f64> {
        let attempts = self.success + self.answers + self.failures;
        (attempts > 0).then(|| self.failures as f64 / attempts as f64)
    }

    fn json(&self) -> Value {
        json!({
            "calls": self.calls,
            "success": self.success,
            "failures": self.failures,
            "denied": self.denied,
            "interrupted": self.interrupted,
            "pending": self.pending,
            "answers": self.answers,
            "harness": self.harness,
            "masked": self.masked,
            "failure_rate": self.rate(),
        })
    }
}

const COUNTS: &str = "count(*),
    sum(status = 'success'), sum(status = 'failure'), sum(status = 'denied'),
    sum(status = 'interrupted'), sum(status = 'pending'), sum(status = 'answer'),
    sum(status = 'harness'),
    sum(status = 'success' AND signature IS NOT NULL AND EXISTS (SELECT 1 FROM tool_calls f
        WHERE f.tool = tool_calls.tool AND f.shape = tool_calls.shape
          AND f.status = 'failure'
          AND substr(f.signature, -length(tool_calls.signature)) = tool_calls.signature
          AND (f.signature = tool_calls.signature OR f.signature LIKE 'exit code %')))";

/// Columns [`COUNTS`] reads.
const COUNT_COLUMNS: usize = 9;

const WHEN: &str = "COALESCE(started_ms, ended_ms)";

/// The number of sessions in `[since, until)` (either end open when `None`): the one
/// definition `record stats` and `report` share. A session counts when it has at least one
/// recorded tool call in the period, timed as every statistic here is (`WHEN`); a session
/// that only started, or whose calls all fall outside the period, is not one.
pub(crate) fn session_count(
    conn: &Connection,
    since: Option<i64>,
    until: Option<i64>,
) -> Result<i64> {
    conn.query_row(
        &format!(
            "SELECT count(DISTINCT session_id) FROM tool_calls
             WHERE (?1 IS NULL OR {WHEN} >= ?1) AND (?2 IS NULL OR {WHEN} < ?2)"
        ),
        params![since, until],
        |r| r.get(0),
    )
    .map_err(|e| Error::sql("count sessions", e))
}

fn counts_at(r: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<Counts> {
    Ok(Counts {
        calls: r.get(at)?,
        success: r.get::<_, Option<i64>>(at + 1)?.unwrap_or(0),
        failures: r.get::<_, Option<i64>>(at + 2)?.unwrap_or(0),
        denied: r.get::<_, Option<i64>>(at + 3)?.unwrap_or(0),
        interrupted: r.get::<_, Option<i64>>(at + 4)?.unwrap_or(0),
        pending: r.get::<_, Option<i64>>(at + 5)?.unwrap_or(0),
        answers: r.get::<_, Option<i64>>(at + 6)?.unwrap_or(0),
        harness: r.get::<_, Option<i64>>(at + 7)?.unwrap_or(0),
        masked: r.get::<_, Option<i64>>(at + 8)?.unwrap_or(0),
    })
}

/// `callus record stats`.
pub(crate) fn run(evidence: &Evidence, since: Option<&str>, json: bool) -> Result<Exit> {
    let now = crate::store::now_ms();
    let since = since
        .map(|s| crate::window::point(s, "--since", now))
        .transpose()?;
    let report = if let Some(conn) = crate::store::open_existing(evidence.path())? {
        gather(&conn, since)?
    } else {
        eprintln!(
            "callus: nothing recorded yet (no store at {})",
            evidence.label()
        );
        Report::default()
    };
    if json {
        crate::output::write_stdout(&crate::output::json_text(&report.json(since)));
    } else {
        crate::output::print_text(&report.text());
    }
    Ok(Exit::Ok)
}

#[derive(Debug, Default)]
struct Report {
    total: Counts,
    sessions: i64,
    first_ms: Option<i64>,
    last_ms: Option<i64>,
    tools: Vec<(String, Counts)>,
    shapes: Vec<(String, String, Counts)>,
}

fn gather(conn: &Connection, since: Option<i64>) -> Result<Report> {
    let window = format!("(?1 IS NULL OR {WHEN} >= ?1)");
    let sql = |e: rusqlite::Error| Error::sql("read statistics", e);
    let (total, first_ms, last_ms) = conn
        .query_row(
            &format!("SELECT {COUNTS}, min({WHEN}), max({WHEN}) FROM tool_calls WHERE {window}"),
            params![since],
            |r| {
                Ok((
                    counts_at(r, 0)?,
                    r.get(COUNT_COLUMNS)?,
                    r.get(COUNT_COLUMNS + 1)?,
                ))
            },
        )
        .map_err(sql)?;
    let sessions = session_count(conn, since, None)?;
    let mut stmt = conn
        .prepare(&format!(
            "SELECT tool, {COUNTS} FROM tool_calls WHERE {window}
             GROUP BY tool ORDER BY count(*) DESC, tool"
        ))
        .map_err(sql)?;
    let tools = stmt
        .query_map(params![since], |r| Ok((r.get(0)?, counts_at(r, 1)?)))
        .map_err(sql)?
        .collect::<rusqlite::Result<Vec<_>>>()
        .map_err(sql)?;
    let mut stmt = conn
        .prepare(&format!(
            "SELECT tool, shape, {COUNTS} FROM tool_calls
             WHERE {window} AND shape IS NOT NULL AND shape <> tool
             GROUP BY tool, shape
             ORDER BY sum(status = 'failure') DESC, count(*) DESC, shape
             LIMIT {TOP_SHAPES}"
        ))
        .map_err(sql)?;
    let shapes = stmt
        .query_map(params![since], |r| {
            Ok((r.get(0)?, r.get(1)?, counts_at(r, 2)?))
        })
        .map_err(sql)?
        .collect::<rusqlite::Result<Vec<_>>>()
        .map_err(sql)?;
    Ok(Report {
        total,
        sessions,
        first_ms,
        last_ms,
        tools,
        shapes,
    })
}

impl Report {
    fn json(&self, since: Option<i64>) -> Value {
        let mut v = self.total.json();
        let o = v.as_object_mut().expect("counts are an object");
        o.insert("since".into(), json!(since.map(iso)));
        o.insert("sessions".into(), json!(self.sessions));
        o.insert("first".into(), json!(self.first_ms.map(iso)));
        o.insert("last".into(), json!(self.last_ms.map(iso)));
        let tools: Vec<Value> = self
            .tools
            .iter()
            .map(|(tool, c)| {
                let mut v = c.json();
                v["tool"] = json!(tool);
                v
            })
            .collect();
        o.insert("tools".into(), json!(tools));
        let shapes: Vec<Value> = self
            .shapes
            .iter()
            .map(|(tool, shape, c)| {
                let mut v = c.json();
                v["tool"] = json!(tool);
                v["shape"] = json!(shape);
                v
            })
            .collect();
        o.insert("shapes".into(), json!(shapes));
        v
    }

    fn text(&self) -> String {
        let t = &self.total;
        let span = match (self.first_ms, self.last_ms) {
            (Some(a), Some(b)) => format!("{} … {}", iso(a), iso(b)),
            _ => "-".to_string(),
        };
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{} calls in {} sessions ({span})\n{} succeeded ({} masked), {} failed, {} answers, {} harness, {} denied, {} interrupted, {} pending; failure rate {}",
            t.calls,
            self.sessions,
            t.success,
            t.masked,
            t.failures,
            t.answers,
            t.harness,
            t.denied,
            t.interrupted,
            t.pending,
            rate(t)
        );
        if self.tools.is_empty() {
            return out;
        }
        let header = [
            "calls",
            "failures",
            "answers",
            "harness",
            "denied",
            "masked",
            "failure rate",
        ];
        let mut tools = table(&[&["tool"][..], &header[..]].concat());
        for (tool, c) in &self.tools {
            tools.add_row(row(vec![tool.clone()], c));
        }
        let _ = writeln!(out, "\nper tool\n{tools}");
        if !self.shapes.is_empty() {
            let mut shapes = table(&[&["tool", "shape"][..], &header[..]].concat());
            for (tool, shape, c) in &self.shapes {
                shapes.add_row(row(vec![tool.clone(), shape.clone()], c));
            }
            let _ = writeln!(out, "\ntop command shapes (by failures)\n{shapes}");
        }
        out
    }
}

fn row(mut cells: Vec<String>, c: &Counts) -> Vec<String> {
    cells.extend([
        c.calls.to_string(),
        c.failures.to_string(),
        c.answers.to_string(),
        c.harness.to_string(),
        c.denied.to_string(),
        c.masked.to_string(),
        rate(c),
    ]);
    cells
}

fn rate(c: &Counts) -> String {
    c.rate()
        .map_or_else(|| "-".to_string(), |r| format!("{:.1}%", r * 100.0))
}

fn iso(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
        .unwrap_or_default()
}
