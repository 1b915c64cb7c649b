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
mod facts;
pub(crate) mod hook;
pub(crate) mod import;
mod merge;
pub(crate) mod outcome;
mod peer_outcome;
mod rollout_tail;
mod rows;
mod shape;
mod signature;
pub(crate) mod spool;
pub(crate) mod stats;
mod summary;

pub(crate) use classify::Status;

/// The hook recorder entry point; always exits 0.
#[must_use]
pub(crate) fn hook() -> u8 {
    hook::run()
}
