//! The recorder: every tool call and its outcome, from hooks and from history.
//!
//! Not built yet: every entry point says so with a usage-class error.

use crate::{Error, Exit, Result};

/// Entry point (not built yet).
pub fn import(_args: &crate::cli::ImportArgs) -> Result<Exit> {
    Err(Error::Invalid("this command is not built yet".into()))
}

/// Entry point (not built yet).
pub fn stats(_args: &crate::cli::StatsArgs) -> Result<Exit> {
    Err(Error::Invalid("this command is not built yet".into()))
}

/// The hook recorder entry point; always exits 0.
#[must_use]
pub fn hook() -> u8 {
    0
}
