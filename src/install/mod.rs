//! Install: wire callus's hooks into Claude Code and Codex.
//!
//! Not built yet: every entry point says so with a usage-class error.

use crate::{Error, Exit, Result};

/// Entry point (not built yet).
pub fn install(_args: &crate::cli::InstallArgs) -> Result<Exit> {
    Err(Error::Invalid("this command is not built yet".into()))
}

/// Entry point (not built yet).
pub fn uninstall(_args: &crate::cli::InstallArgs) -> Result<Exit> {
    Err(Error::Invalid("this command is not built yet".into()))
}
