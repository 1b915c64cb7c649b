//! `callus sync push|init|status`: the command line turned into the team store's calls.

use crate::cli::SyncCommand;
use crate::config::Home;
use crate::{Exit, Result};

/// `callus sync …`.
pub(super) fn run(home: &Home, cmd: &SyncCommand) -> Result<Exit> {
    match cmd {
        SyncCommand::Push(a) => {
            crate::sync::push::run(home, &a.team.db, a.origin.as_deref(), a.json, a.progress)
        }
        SyncCommand::Init(a) => crate::sync::init::run(&a.team.db, &a.grant, a.json),
        SyncCommand::Status(a) => {
            crate::sync::status::run(home, &a.team.db, a.origin.as_deref(), a.json)
        }
    }
}
