//! `callus scope declare|verify|show|hook`: the command line turned into scope's calls, with
//! scope's own exit codes (see [`crate::scope`]).

use crate::cli::ScopeCommand;
use crate::config::Home;
use crate::scope::DeclareRequest;

/// Run a `callus scope` subcommand; returns the process exit code.
#[must_use]
pub(super) fn run(home: &Home, cmd: &ScopeCommand) -> u8 {
    let result = match cmd {
        ScopeCommand::Hook => return crate::scope::hook(),
        ScopeCommand::Declare(args) => crate::scope::commands::declare(
            &DeclareRequest {
                run_id: args.run_id.clone(),
                root: args.root.clone(),
                create: args.create.clone(),
                modify: args.modify.clone(),
                delete: args.delete.clone(),
                forbid: args.forbid.clone(),
                check: args.check.clone(),
                from: args.from.clone(),
            },
            home,
        ),
        ScopeCommand::Verify { run_id, json } => {
            crate::scope::commands::verify(run_id, *json, home)
        }
        ScopeCommand::Show { run_id, json } => crate::scope::commands::show(run_id, *json, home),
    };
    result.unwrap_or_else(|e| {
        eprintln!("callus: {e}");
        e.exit().code()
    })
}
