//! Team-wide evidence in a shared `PostgreSQL`: `callus sync push`, and the `--db` that
//! `derive`, `guard prune`, `report` and `record stats` take.
//!
//! Each machine keeps recording into its own `SQLite` store (the hook path never touches the
//! network); `sync push` uploads that store's rows, tagged with an origin, into the
//! `callus` schema of a `PostgreSQL` database; a reading command given `--db postgres://…`
//! copies everyone's rows into a temporary store and runs unchanged on it. So the team
//! store is a plain mirror of the local schema, and every stage has one code path.
//!
//! - `target`: what a `--db` value names, and the URL with its password taken out.
//! - `psql`: running a script through the user's `psql` (libpq), errors mapped to exit codes.
//! - `copy_text`: the COPY text format both ways.
//! - `schema`: the team tables, keyed by origin, and their idempotent DDL.
//! - `origin`: who is pushing.
//! - `push`: `callus sync push`.
//! - `pull`: the team's rows as a temporary store.

pub(crate) mod anchors;
mod copy_text;
mod origin;
mod psql;
pub(crate) mod pull;
pub(crate) mod push;
mod schema;
pub(crate) mod target;

use crate::cli::SyncCommand;
use crate::config::Home;
use crate::{Exit, Result};

use target::Target;

/// `callus sync …`.
pub(crate) fn run(home: &Home, cmd: &SyncCommand) -> Result<Exit> {
    match cmd {
        SyncCommand::Push(args) => push::run(home, args),
    }
}

pub(crate) use crate::store::evidence::Evidence;

/// Resolve a reading command's `--db`: none → the home's store; a path → that file; a
/// `postgres://` URL → the team's rows, copied into a temporary store (announced on stderr,
/// one line, so the output is never mistaken for this machine's alone).
pub(crate) fn evidence(db: Option<&str>, home: &Home) -> Result<Evidence> {
    match db.map(Target::parse) {
        None => Ok(Evidence::Local(home.db_path())),
        Some(Target::Sqlite(path)) => Ok(Evidence::Local(path)),
        Some(Target::Postgres(url)) => {
            url.refuse_password_on_command_line(db.unwrap_or_default())?;
            let copy = pull::pull(&url)?;
            eprintln!(
                "callus: team-wide evidence from {}: {} origin(s), {} tool call(s), {} audit record(s)",
                url.shown(),
                copy.origins,
                copy.calls,
                copy.audit
            );
            let (dir, path) = copy.into_parts();
            Ok(Evidence::Team {
                _dir: dir,
                path,
                url: url.shown(),
            })
        }
    }
}
