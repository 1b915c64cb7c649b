//! `callus record import PATH…`: backfill the store from history files.
//!
//! Paths are files or directories (searched recursively for `*.jsonl`). Each file's format
//! is detected from its first lines (or forced with `--format`): a Claude Code transcript
//! (`claude`), a Codex rollout of any of the three generations in circulation (`codex`),
//! a Gemini CLI session log (`gemini`), a GitHub Copilot CLI session log (`copilot`), or a
//! callusguard JSONL trace (`trace`).
//!
//! Guarantees:
//! - Idempotent: rows are keyed by `tool_use_id` (traces without one get a stable id from the
//!   line's content), so importing the same files twice adds nothing, and a session also
//!   recorded live merges into one row per call (see `rows`). A file whose size and
//!   modification time are unchanged since its last import is not read again.
//! - Corrupt lines (not UTF-8, not JSON, not an object) are counted and reported as
//!   `file:line`, never fatal. An unreadable file is reported and the others still import;
//!   the command then exits 3.
//! - Counts are of distinct calls: `calls` is one per `tool_use_id` over the whole run (a
//!   resumed session that copies earlier lines, a subagent log, a result settling a call
//!   read from another file add nothing), `duplicate_ids` the sightings that repeated one,
//!   and the outcome classes are read back from the store for those ids.
//! - One transaction per file; memory stays bounded by one file's unanswered calls (the
//!   run's ids are kept in a temporary table).
//! - A progress line on stderr when stderr is a terminal; the summary on stdout.

mod banner;
mod claude;
mod codex;
mod copilot;
mod gemini;
mod places;
mod stamp;
mod trace;

use std::collections::HashSet;
use std::fmt::Write as _;
use std::fs::File;
use std::io::{BufRead, BufReader, IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rusqlite::{Connection, OptionalExtension, TransactionBehavior};
use serde_json::{Value, json};

use super::classify::Status;
use super::rows::{self, Call, Session};
use crate::config::Home;
use crate::{Error, Exit, Result};

/// `SQLite` page cache of an import, in KiB.
const IMPORT_CACHE_KIB: i64 = 64 * 1024;

/// How many corrupt lines the text summary lists by `file:line` (JSON lists them all).
const LISTED_CORRUPT: usize = 20;

/// What `callus record import` was asked to read.
#[derive(Debug, Clone)]
pub(crate) struct Request {
    /// Files or directories (searched recursively); none: the hosts' known places.
    pub paths: Vec<PathBuf>,
    /// The format to read every file as; `None` detects each file's.
    pub format: Option<Format>,
    /// Print the summary as JSON.
    pub json: bool,
}

/// A history file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    /// Claude Code session transcript.
    Claude,
    /// Codex rollout.
    Codex,
    /// Gemini CLI session log.
    Gemini,
    /// GitHub Copilot CLI session log (`events.jsonl`).
    Copilot,
    /// callusguard JSONL trace.
    Trace,
}

impl Format {
    fn as_str(self) -> &'static str {
        match self {
            Format::Claude => "claude",
            Format::Codex => "codex",
            Format::Gemini => "gemini",
            Format::Copilot => "copilot",
            Format::Trace => "trace",
        }
    }
}

/// Totals of one import run.
#[derive(Debug, Default)]
struct Totals {
    /// The known places read when no path was given.
    read_from: Vec<String>,
    files: usize,
    unchanged: usize,
    unrecognised: Vec<String>,
    /// Files that hold no tool calls to import, by why: `empty`, `summary only`,
    /// `hook-event log` (a log of hook payloads is not a history: it would invent calls).
    skipped: std::collections::BTreeMap<&'static str, usize>,
    unreadable: Vec<String>,
    sessions: HashSet<String>,
    /// Distinct calls read in this run: one per `tool_use_id`, however many files or lines
    /// carry it.
    calls: usize,
    /// Sightings of an id this run had already read (a resumed session's copy of earlier
    /// lines, a `tool_use` written twice, a result settling a call read from another file):
    /// they update the call, never add one.
    duplicates: usize,
    new_calls: i64,
    failures: usize,
    denied: usize,
    interrupted: usize,
    pending: usize,
    answers: usize,
    harness: usize,
    unpaired: usize,
    /// Lines of a forced-format file that are no tool call (hook events without a tool).
    not_calls: usize,
    corrupt: Vec<String>,
}

/// `callus record import`.
pub(crate) fn run(home: &Home, args: &Request) -> Result<Exit> {
    let mut read_from = Vec::new();
    let files = if args.paths.is_empty() {
        let known = places::known();
        let (found, missing): (Vec<_>, Vec<_>) = known.into_iter().partition(|p| p.dir.is_dir());
        for p in &found {
            eprintln!(
                "callus: reading {} history from {}",
                p.host,
                p.dir.display()
            );
        }
        if found.is_empty() {
            let looked: Vec<String> = missing
                .iter()
                .map(|p| p.dir.display().to_string())
                .collect();
            eprintln!(
                "callus: no history found; looked in {} (name files or directories to import)",
                looked.join(", ")
            );
        }
        read_from = found;
        collect(&read_from.iter().map(|p| p.dir.clone()).collect::<Vec<_>>())?
    } else {
        collect(&args.paths)?
    };
    let db = home.db_path();
    let conn = crate::store::open(&db)?;
    // A big page cache keeps the tool_use_id index in memory during bulk upserts.
    conn.pragma_update(None, "cache_size", -IMPORT_CACHE_KIB)
        .map_err(|e| Error::sql("set cache size", e))?;
    let before = count_calls(&conn)?;
    // The ids this run read, across files: the counts are of distinct calls.
    conn.execute_batch(
        "CREATE TEMP TABLE IF NOT EXISTS import_run_ids (id TEXT PRIMARY KEY) WITHOUT ROWID;
         DELETE FROM import_run_ids;",
    )
    .map_err(|e| Error::sql("create import id table", e))?;
    let mut totals = Totals::default();
    let total_bytes: u64 = files
        .iter()
        .filter_map(|f| std::fs::metadata(f).ok())
        .map(|m| m.len())
        .sum();
    let mut progress = Progress::new(total_bytes, files.len());
    for path in &files {
        if let Err(e) = import_file(&conn, path, args.format, &mut totals, &mut progress) {
            totals.unreadable.push(format!("{}: {e}", path.display()));
        }
        progress.file_done();
    }
    progress.clear();
    totals.new_calls = count_calls(&conn)? - before;
    count_outcomes(&conn, &mut totals)?;
    crate::store::trim_wal(&conn, &db)?;
    totals.read_from = read_from
        .iter()
        .map(|p| p.dir.display().to_string())
        .collect();
    crate::output::write_stdout(&summary_text(&totals, args.json));
    for u in &totals.unreadable {
        eprintln!("callus: {u}");
    }
    Ok(if totals.unreadable.is_empty() {
        Exit::Ok
    } else {
        Exit::Input
    })
}

/// The outcome classes of the distinct calls this run read, as the store now holds them
/// (one per id, after every file's lines and any live record merged into it).
fn count_outcomes(conn: &Connection, t: &mut Totals) -> Result<()> {
    let mut stmt = conn
        .prepare(
            "SELECT c.status, count(*) FROM tool_calls c
             JOIN import_run_ids r ON r.id = c.tool_use_id GROUP BY c.status",
        )
        .map_err(|e| Error::sql("count import outcomes", e))?;
    let rows = stmt
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))
        .map_err(|e| Error::sql("count import outcomes", e))?;
    for row in rows {
        let (status, n) = row.map_err(|e| Error::sql("count import outcomes", e))?;
        let n = n as usize;
        match Status::parse(&status) {
            Some(Status::Failure) => t.failures += n,
            Some(Status::Denied) => t.denied += n,
            Some(Status::Interrupted) => t.interrupted += n,
            Some(Status::Pending) => t.pending += n,
            Some(Status::Answer) => t.answers += n,
            Some(Status::Harness) => t.harness += n,
            Some(Status::Success) | None => {}
        }
    }
    Ok(())
}

fn count_calls(conn: &Connection) -> Result<i64> {
    conn.query_row("SELECT count(*) FROM tool_calls", [], |r| r.get(0))
        .map_err(|e| Error::sql("count tool calls", e))
}

/// Expand the arguments into files: files as given, directories walked for `*.jsonl`
/// (sorted, so runs are reproducible). A path that does not exist is an input error.
fn collect(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in paths {
        let meta = std::fs::metadata(p).map_err(|e| Error::io(p, e))?;
        if meta.is_dir() {
            walk(p, &mut out)?;
        } else {
            out.push(p.clone());
        }
    }
    let mut seen = HashSet::new();
    out.retain(|p| seen.insert(p.clone()));
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| Error::io(dir, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for p in entries {
        // Do not follow symlinked directories: history trees can contain loops.
        let Ok(meta) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        if meta.is_dir() {
            walk(&p, out)?;
        } else if p.extension().is_some_and(|e| e == "jsonl") {
            out.push(p);
        }
    }
    Ok(())
}

fn import_file(
    conn: &Connection,
    path: &Path,
    forced: Option<Format>,
    totals: &mut Totals,
    progress: &mut Progress,
) -> Result<()> {
    let stamp = stamp::Stamp::of(path)?;
    let format = match forced {
        Some(format) => Some(format),
        None => detect(path)?,
    };
    let Some(format) = format else {
        match skip_reason(path)? {
            Some(reason) => *totals.skipped.entry(reason).or_default() += 1,
            None => totals.unrecognised.push(path.display().to_string()),
        }
        progress.advance(stamp.size as u64);
        return Ok(());
    };
    if stamp.unchanged(conn, format)? {
        totals.unchanged += 1;
        progress.advance(stamp.size as u64);
        return Ok(());
    }
    let tx = rusqlite::Transaction::new_unchecked(conn, TransactionBehavior::Immediate)
        .map_err(|e| Error::sql("begin import", e))?;
    let mut sink = Sink {
        conn: &tx,
        writer: rows::CallWriter::new(&tx),
        display: path.display().to_string(),
        totals,
        progress,
        calls: 0,
    };
    match format {
        Format::Claude => claude::import(path, &mut sink)?,
        Format::Codex => codex::import(path, &mut sink)?,
        Format::Gemini => gemini::import(path, &mut sink)?,
        Format::Copilot => copilot::import(path, &mut sink)?,
        Format::Trace => trace::import(path, &mut sink)?,
    }
    let calls = sink.calls;
    drop(sink);
    stamp.remember(&tx, format, calls)?;
    tx.commit().map_err(|e| Error::sql("commit import", e))?;
    totals.files += 1;
    Ok(())
}

/// Detect a file's format from its name and first lines; `None` when nothing fits.
pub(crate) fn detect(path: &Path) -> Result<Option<Format>> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if name.starts_with("rollout-") {
        return Ok(Some(Format::Codex));
    }
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let mut reader = BufReader::new(file);
    let mut buf = Vec::new();
    let mut seen = 0;
    while seen < 50 {
        buf.clear();
        let n = reader
            .read_until(b'\n', &mut buf)
            .map_err(|e| Error::io(path, e))?;
        if n == 0 {
            break;
        }
        let Ok(Value::Object(obj)) = serde_json::from_slice::<Value>(&buf) else {
            continue;
        };
        // A Claude Code file can open with many `summary` lines (one per resumed branch):
        // they say nothing about the format and do not use up the lines read.
        if obj.get("type").and_then(Value::as_str) == Some("summary") && obj.len() <= 3 {
            continue;
        }
        seen += 1;
        if let Some(format) = detect_line(&obj) {
            return Ok(Some(format));
        }
    }
    Ok(None)
}

/// Why a file no format fits holds nothing to import, when it is a known kind of such file:
/// `empty`, `summary only` (a Claude Code file of `summary` lines), `hook-event log`.
fn skip_reason(path: &Path) -> Result<Option<&'static str>> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let mut lines = 0;
    let mut summaries = 0;
    for line in BufReader::new(file).split(b'\n').take(200) {
        let line = line.map_err(|e| Error::io(path, e))?;
        let Ok(Value::Object(obj)) = serde_json::from_slice::<Value>(&line) else {
            continue;
        };
        lines += 1;
        if obj.contains_key("hook_event_name") {
            return Ok(Some("hook-event log"));
        }
        if obj.get("type").and_then(Value::as_str) == Some("summary") {
            summaries += 1;
        }
    }
    Ok(match (lines, summaries) {
        (0, _) => Some("empty"),
        (n, s) if n == s => Some("summary only"),
        _ => None,
    })
}

fn detect_line(obj: &serde_json::Map<String, Value>) -> Option<Format> {
    // A hook payload (what `callus record` reads on stdin) is not a history line.
    if obj.contains_key("hook_event_name") {
        return None;
    }
    // Copilot CLI's events nest their ids under `data`: no other format's line claims them.
    if copilot::claims(obj) {
        return Some(Format::Copilot);
    }
    let kind = obj.get("type").and_then(Value::as_str).unwrap_or("");
    let codex_kinds = [
        "session_meta",
        "response_item",
        "event_msg",
        "turn_context",
        "compacted",
    ];
    let codex_items = [
        "function_call",
        "function_call_output",
        "local_shell_call",
        "custom_tool_call",
        "custom_tool_call_output",
        "reasoning",
    ];
    if (codex_kinds.contains(&kind) && obj.contains_key("payload"))
        || codex_items.contains(&kind)
        || obj.contains_key("record_type")
        || (obj.contains_key("instructions") && obj.contains_key("id"))
    {
        return Some(Format::Codex);
    }
    // Gemini CLI's metadata line also has a `sessionId`: its `projectHash` comes first.
    if obj.contains_key("projectHash")
        || (matches!(kind, "gemini" | "info") && obj.contains_key("toolCalls"))
    {
        return Some(Format::Gemini);
    }
    if obj.contains_key("sessionId")
        || (matches!(kind, "user" | "assistant" | "summary") && obj.contains_key("uuid"))
    {
        return Some(Format::Claude);
    }
    let has = |k: &str| obj.contains_key(k);
    if (has("tool_name") || has("tool"))
        && (has("ts") || has("status") || has("error") || has("tool_input") || has("command"))
    {
        return Some(Format::Trace);
    }
    None
}

/// Where importers put what they read.
pub(crate) struct Sink<'a> {
    conn: &'a Connection,
    writer: rows::CallWriter<'a>,
    display: String,
    totals: &'a mut Totals,
    progress: &'a mut Progress,
    calls: usize,
}

impl Sink<'_> {
    /// Store one call, and count it once per id over the whole run: a line that repeats an
    /// id (a `tool_use` written again, a resumed session's copy, a result settling a call
    /// read from another file) settles the same call.
    pub(crate) fn call(&mut self, call: &Call) -> Result<()> {
        self.writer.write(call)?;
        self.calls += 1;
        let new = self
            .conn
            .prepare_cached("INSERT OR IGNORE INTO import_run_ids (id) VALUES (?1)")
            .and_then(|mut s| s.execute([&call.tool_use_id]))
            .map_err(|e| Error::sql("note imported id", e))?;
        if new == 0 {
            self.totals.duplicates += 1;
        } else {
            self.totals.calls += 1;
        }
        if let Some(s) = &call.session_id
            && !self.totals.sessions.contains(s)
        {
            self.totals.sessions.insert(s.clone());
        }
        Ok(())
    }

    /// Store one session.
    pub(crate) fn session(&mut self, session: &Session) -> Result<()> {
        if session.id.is_empty() {
            return Ok(());
        }
        rows::upsert_session(self.conn, session)?;
        if !self.totals.sessions.contains(&session.id) {
            self.totals.sessions.insert(session.id.clone());
        }
        Ok(())
    }

    /// The tool of an already stored call (to settle a result whose `tool_use` is in
    /// another file).
    pub(crate) fn stored_tool(&self, tool_use_id: &str) -> Result<Option<String>> {
        self.conn
            .query_row(
                "SELECT tool FROM tool_calls WHERE tool_use_id = ?1",
                [tool_use_id],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| Error::sql("look up call", e))
    }

    /// A line that is no tool call (a hook event such as `SessionStart` or `Stop`).
    pub(crate) fn not_a_call(&mut self) {
        self.totals.not_calls += 1;
    }

    /// A result with no call to attach it to.
    pub(crate) fn unpaired(&mut self) {
        self.totals.unpaired += 1;
    }

    /// Read `path` line by line: `each(sink, raw line, object)` for every JSON object line;
    /// other non-blank lines are counted as corrupt.
    pub(crate) fn lines(
        &mut self,
        path: &Path,
        mut each: impl FnMut(&mut Self, &[u8], serde_json::Map<String, Value>) -> Result<()>,
    ) -> Result<()> {
        let file = File::open(path).map_err(|e| Error::io(path, e))?;
        let mut reader = BufReader::with_capacity(256 * 1024, file);
        let mut buf = Vec::new();
        let mut number = 0;
        loop {
            buf.clear();
            let n = reader
                .read_until(b'\n', &mut buf)
                .map_err(|e| Error::io(path, e))?;
            if n == 0 {
                break;
            }
            number += 1;
            self.progress.advance(n as u64);
            if buf.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match serde_json::from_slice::<Value>(&buf) {
                Ok(Value::Object(obj)) => each(self, trim_newline(&buf), obj)?,
                _ => self
                    .totals
                    .corrupt
                    .push(format!("{}:{number}", self.display)),
            }
        }
        Ok(())
    }
}

fn trim_newline(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// Unix ms of an ISO-8601 timestamp string or a number of seconds or milliseconds.
#[must_use]
pub(crate) fn timestamp_ms(v: Option<&Value>) -> Option<i64> {
    match v? {
        Value::String(s) => chrono::DateTime::parse_from_rfc3339(s.trim())
            .ok()
            .map(|t| t.timestamp_millis())
            .or_else(|| {
                chrono::NaiveDateTime::parse_from_str(s.trim(), "%Y-%m-%dT%H:%M:%S%.f")
                    .ok()
                    .map(|t| t.and_utc().timestamp_millis())
            }),
        Value::Number(n) => {
            let x = n.as_f64()?;
            Some(if x > 1e12 {
                x as i64
            } else {
                (x * 1000.0) as i64
            })
        }
        _ => None,
    }
}

fn summary_text(t: &Totals, as_json: bool) -> String {
    if as_json {
        return crate::output::json_text(&json!({
            "read_from": t.read_from,
            "files": t.files,
            "unchanged_files": t.unchanged,
            "unrecognised_files": t.unrecognised,
            "skipped_files": t.skipped,
            "unreadable_files": t.unreadable,
            "sessions": t.sessions.len(),
            "calls": t.calls,
            "duplicate_ids": t.duplicates,
            "new_calls": t.new_calls,
            "failures": t.failures,
            "denied": t.denied,
            "interrupted": t.interrupted,
            "pending": t.pending,
            "answers": t.answers,
            "harness": t.harness,
            "unpaired_results": t.unpaired,
            "not_call_lines": t.not_calls,
            "skipped_lines": t.corrupt.len(),
            "corrupt_lines": t.corrupt,
        }));
    }
    let mut table = crate::output::table(&["import", "count"]);
    let rows: [(&str, String); 15] = [
        ("files imported", t.files.to_string()),
        ("files unchanged since last import", t.unchanged.to_string()),
        ("files not recognised", t.unrecognised.len().to_string()),
        ("sessions", t.sessions.len().to_string()),
        ("calls read (one per id)", t.calls.to_string()),
        (
            "lines repeating an id already read",
            t.duplicates.to_string(),
        ),
        ("new calls stored", t.new_calls.to_string()),
        ("failures", t.failures.to_string()),
        ("answers (exit status is the answer)", t.answers.to_string()),
        ("harness (host shell or tool failed)", t.harness.to_string()),
        ("denied", t.denied.to_string()),
        ("interrupted", t.interrupted.to_string()),
        ("pending (no result)", t.pending.to_string()),
        ("skipped lines", t.corrupt.len().to_string()),
        (
            "lines that are no tool call (hook events)",
            t.not_calls.to_string(),
        ),
    ];
    for (k, v) in rows {
        table.add_row(vec![k.to_string(), v]);
    }
    let mut out = format!("{table}\n");
    for f in &t.unrecognised {
        let _ = writeln!(out, "not recognised: {f}");
    }
    for (why, n) in &t.skipped {
        let _ = writeln!(out, "skipped {n} file(s): {why} (no tool calls to import)");
    }
    for c in t.corrupt.iter().take(LISTED_CORRUPT) {
        let _ = writeln!(out, "skipped corrupt line: {c}");
    }
    if t.corrupt.len() > LISTED_CORRUPT {
        let _ = writeln!(
            out,
            "… and {} more corrupt lines (--json lists them all)",
            t.corrupt.len() - LISTED_CORRUPT
        );
    }
    out
}

/// A one-line progress display on stderr, only when stderr is a terminal.
struct Progress {
    enabled: bool,
    total: u64,
    done: u64,
    files: usize,
    files_done: usize,
    last: Instant,
}

impl Progress {
    fn new(total: u64, files: usize) -> Self {
        Progress {
            enabled: std::io::stderr().is_terminal() && total > 0,
            total,
            done: 0,
            files,
            files_done: 0,
            last: Instant::now(),
        }
    }

    fn advance(&mut self, bytes: u64) {
        self.done += bytes;
        if self.enabled && self.last.elapsed() >= Duration::from_millis(100) {
            self.draw();
        }
    }

    fn file_done(&mut self) {
        self.files_done += 1;
        if self.enabled {
            self.draw();
        }
    }

    fn draw(&mut self) {
        self.last = Instant::now();
        let pct = (self.done.min(self.total) * 100) / self.total.max(1);
        let width = 30;
        let filled = (pct as usize * width) / 100;
        let mut err = std::io::stderr().lock();
        let _ = write!(
            err,
            "\rimporting [{}{}] {pct:>3}%  {}/{} files",
            "#".repeat(filled),
            " ".repeat(width - filled),
            self.files_done,
            self.files
        );
        let _ = err.flush();
    }

    fn clear(&self) {
        if self.enabled {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r{}\r", " ".repeat(60));
            let _ = err.flush();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps() {
        let v = json!("2026-11-29T21:19:15.277Z");
        assert_eq!(timestamp_ms(Some(&v)), Some(1_795_987_155_277));
        assert_eq!(
            timestamp_ms(Some(&json!(1_795_987_155))),
            Some(1_795_987_155_000)
        );
        assert_eq!(
            timestamp_ms(Some(&json!(1_795_987_155_277_i64))),
            Some(1_795_987_155_277)
        );
        assert_eq!(timestamp_ms(Some(&json!("yesterday"))), None);
    }

    #[test]
    fn formats_are_detected_from_lines() {
        let obj = |v: Value| v.as_object().unwrap().clone();
        assert_eq!(
            detect_line(&obj(json!({"type": "session_meta", "payload": {}}))),
            Some(Format::Codex)
        );
        assert_eq!(
            detect_line(&obj(
                json!({"id": "x", "timestamp": "t", "instructions": ""})
            )),
            Some(Format::Codex)
        );
        assert_eq!(
            detect_line(&obj(json!({"type": "user", "sessionId": "s", "uuid": "u"}))),
            Some(Format::Claude)
        );
        assert_eq!(
            detect_line(&obj(
                json!({"ts": "t", "tool_name": "Bash", "status": "failure"})
            )),
            Some(Format::Trace)
        );
        assert_eq!(detect_line(&obj(json!({"hello": 1}))), None);
    }
}
