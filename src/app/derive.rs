//! `callus derive [explain ID]`: the command line turned into derive's requests.

use crate::cli::{DeriveArgs, DeriveCommand};
use crate::config::Home;
use crate::derive::{ExplainRequest, Request};
use crate::{Exit, Result};

/// `callus derive`, or `callus derive explain ID` when the subcommand is given.
pub(super) fn run(home: &Home, args: &DeriveArgs) -> Result<Exit> {
    let request = Request {
        since: args.since.clone(),
        until: args.until.clone(),
        min_count: args.min_count,
        min_attempts: args.min_attempts,
        keep_anecdotal: args.keep_anecdotal,
        exclude_tool: args.exclude_tool.clone(),
        include_tool: args.include_tool.clone(),
        json: args.json,
        out: args.out.clone(),
        db: args.db.clone(),
    };
    match &args.command {
        Some(DeriveCommand::Explain { id, json, db, out }) => crate::derive::explain(
            home,
            &request,
            &ExplainRequest {
                id: id.clone(),
                json: *json,
                db: db.clone(),
                out: out.clone(),
            },
        ),
        None => crate::derive::run(home, &request),
    }
}
