//! The recorder: every tool call and its outcome, from hooks and from history.
//!
//! - `hook`: `callus record`, the hook command (any event on stdin → the store; always
//!   exits 0, never prints).
//! - `import`: `callus record import`, backfill from Claude Code transcripts, Codex
//!   rollouts and callusguard JSONL traces; idempotent, merged with live rows by
//!   `tool_use_id`.
//! - `stats`: `callus record stats`, calls, failures and failure rates.
//!
//! Every path that stores text goes through `rows::write_call`, which redacts before it
//! caps, and computes the command shape and error signature from the redacted text, so
//! derive can group without re-parsing and nothing secret reaches disk.

mod classify;
pub(crate) mod error_line;
pub mod hook;
pub mod import;
mod merge;
pub(crate) mod outcome;
mod rollout_tail;
mod rows;
mod shape;
mod signature;
pub mod stats;
mod summary;

use crate::{Exit, Result};
pub(crate) use classify::Status;

/// `callus record import PATH…`.
pub fn import(args: &crate::cli::ImportArgs) -> Result<Exit> {
    import::run(args)
}

/// `callus record stats`.
pub fn stats(args: &crate::cli::StatsArgs) -> Result<Exit> {
    stats::run(args)
}

/// Write a command's output to stdout. A reader that went away (`… | head`) is not an error
/// worth a panic or a message: the output was simply not wanted any more.
fn write_stdout(text: &str) {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}

/// Pretty JSON plus a newline, for `--json`.
fn json_text(value: &serde_json::Value) -> String {
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.push('\n');
    text
}

/// The hook recorder entry point; always exits 0.
#[must_use]
pub fn hook() -> u8 {
    hook::run()
}
