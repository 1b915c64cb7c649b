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
    let evidence = crate::sync::evidence(args.db.as_deref(), home)?;
    crate::record::stats::run(&evidence, args.since.as_deref(), args.json)
}
