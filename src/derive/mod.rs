//! Derive: cluster recorded failures into candidate rules with their evidence.
//!
//! Not built yet: every entry point says so with a usage-class error.

use crate::{Error, Exit, Result};

/// Entry point (not built yet).
pub fn run(_args: &crate::cli::DeriveArgs) -> Result<Exit> {
    Err(Error::Invalid("this command is not built yet".into()))
}
