//! The evidence report: funnel and before/after effect per promoted rule.
//!
//! Not built yet: every entry point says so with a usage-class error.

use crate::{Error, Exit, Result};

/// Entry point (not built yet).
pub fn run(_args: &crate::cli::ReportArgs) -> Result<Exit> {
    Err(Error::Invalid("this command is not built yet".into()))
}
