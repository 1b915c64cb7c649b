//! `callus report` and `callus guard prune`: the command line turned into the reading
//! commands' requests.

use crate::cli::{PruneArgs, ReportArgs};
use crate::config::Home;
use crate::{Exit, Result};

/// `callus report [--since] [--until] [--json | --html FILE] [--db]`.
pub(super) fn report(home: &Home, args: &ReportArgs) -> Result<Exit> {
    crate::report::run(
        home,
        &crate::report::Request {
            since: args.since.clone(),
            until: args.until.clone(),
            db: args.db.clone(),
            html: args.html.clone(),
            json: args.json,
        },
    )
}

/// `callus guard prune [--days N] [--json] [--db]`.
pub(super) fn prune(home: &Home, args: &PruneArgs) -> Result<Exit> {
    crate::prune::run(
        home,
        &crate::prune::Request {
            days: args.days,
            json: args.json,
            db: args.db.clone(),
        },
    )
}
