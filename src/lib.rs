//! callus turns the tool failures coding agents keep repeating into reviewed guardrails.
//!
//! The pipeline, one module per stage: `record` stores every tool call and its outcome;
//! `derive` clusters recurring failures into candidate rules with their evidence; `rules` is
//! the ruleset format and the matcher; `guard` decides each call before it runs; `prune` and
//! `report` measure whether rules help; `scope` checks a run wrote only what it declared;
//! `install` wires the hooks in; `sync` shares the evidence with a team through
//! `PostgreSQL`. Beneath them sit the basics every stage uses (`store` with the audit chain,
//! `host`, `runtime`, `digest`, `redact`, `output`, `window`, `config`, `error`); `app` is
//! the command layer on top. `docs/architecture.md` draws the layers, and
//! `src/architecture.rs` (a test) keeps imports running down them.
//!
//! Every module is private to the crate: the binary's entry is [`main_entry`], and the
//! integration tests and fuzz targets reach in through [`testing`] only.
//!
//! The hook commands (`callus guard`, `callus record` with no subcommand) are recognised
//! before clap runs so the per-call cost stays at process start-up plus the work itself.

#![forbid(unsafe_code)]

pub(crate) mod app;
#[cfg(test)]
mod architecture;
pub(crate) mod cli;
pub(crate) mod config;
pub(crate) mod demo;
pub(crate) mod derive;
pub(crate) mod digest;
pub(crate) mod doctor;
pub(crate) mod error;
pub(crate) mod guard;
pub(crate) mod host;
pub(crate) mod install;
pub(crate) mod output;
pub(crate) mod prune;
pub(crate) mod record;
pub(crate) mod recuse;
pub(crate) mod redact;
pub(crate) mod report;
pub(crate) mod rules;
pub(crate) mod runtime;
pub(crate) mod scope;
pub(crate) mod session;
pub(crate) mod shell;
pub(crate) mod store;
pub(crate) mod sync;
pub(crate) mod untrusted;
pub(crate) mod window;

pub use app::{main_code, main_entry};
pub use error::{Error, Exit, Result};
pub mod testing;
