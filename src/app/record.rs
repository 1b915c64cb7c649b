//! `callus record import|stats`: the command line turned into the recorder's requests.

use crate::cli::{ImportArgs, ImportFormat, StatsArgs};
use crate::config::Home;
use crate::record::import::{Format, Request};
use crate::{Exit, Result};

/// `callus record import PATH…`.
pub(super) fn import(home: &Home, args: &ImportArgs) -> Result<Exit> {
    crate::record::outcome::check_settings(home)?;
    let format = match args.format {
        ImportFormat::Auto => None,
        ImportFormat::Claude => Some(Format::Claude),
        ImportFormat::Codex => Some(Format::Codex),
        ImportFormat::Gemini => Some(Format::Gemini),
        ImportFormat::Copilot => Some(Format::Copilot),
        ImportFormat::Trace => Some(Format::Trace),
    };
    crate::record::import::run(
        home,
        &Request {
            paths: args.paths.clone(),
            format,
            json: args.json,
        },
    )
}

/// `callus record stats [--since] [--db]`.
pub(super) fn stats(home: &Home, args: &StatsArgs) -> Result<Exit> {
    // `--since` goes to the team store too (stats parses it again, the same way).
    let since = args
        .since
        .as_deref()
        .map(|s| crate::window::point(s, "--since", crate::store::now_ms()))
        .transpose()?;
    let calls = crate::sync::Range { since, until: None };
    let scope = crate::sync::Scope {
        calls,
        audit: calls,
    };
    let evidence = crate::sync::evidence_in(args.db.as_deref(), home, &scope)?;
    crate::record::stats::run(&evidence, args.since.as_deref(), args.json)
}
