//! callus turns the tool failures coding agents keep repeating into reviewed guardrails.
//!
//! The pipeline, one module per stage: [`record`] stores every tool call and its outcome;
//! [`derive`](mod@derive) clusters recurring failures into candidate rules with their evidence; [`rules`]
//! is the ruleset format and the matcher; [`guard`] decides each call before it runs and
//! keeps the audit chain; [`prune`] and [`report`] measure whether rules help; [`scope`]
//! checks a run wrote only what it declared; [`install`] wires the hooks in. [`store`] and
//! [`redact`] sit underneath every stage that writes; [`window`] is the one parser of the
//! `--since`/`--until` time windows every stage that looks back over the store takes;
//! [`sync`](mod@sync) shares the evidence with a team through `PostgreSQL`.
//!
//! The hook commands (`callus guard`, `callus record` with no subcommand) are recognised
//! before clap runs so the per-call cost stays at process start-up plus the work itself.

pub mod app;
#[cfg(test)]
mod architecture;
pub mod cli;
pub mod config;
pub mod demo;
pub mod derive;
pub mod digest;
pub mod doctor;
pub mod error;
pub mod guard;
pub mod host;
pub mod install;
pub mod output;
pub mod prune;
pub mod record;
pub mod recuse;
pub mod redact;
pub mod report;
pub mod rules;
pub mod runtime;
pub mod scope;
pub mod session;
pub mod shell;
pub mod store;
pub mod sync;
pub mod untrusted;
pub mod window;

pub use error::{Error, Exit, Result};
