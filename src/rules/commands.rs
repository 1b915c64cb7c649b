//! The `rules` subcommands: list, show and promote.
//!
//! Not built yet: every entry point says so with a usage-class error.

use crate::{Error, Exit, Result};

/// Entry point (not built yet).
pub fn run(_cmd: &crate::cli::RulesCommand) -> Result<Exit> {
    Err(Error::Invalid("this command is not built yet".into()))
}
