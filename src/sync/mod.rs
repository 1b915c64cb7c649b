//! Team-wide evidence in a shared `PostgreSQL`: `callus sync push|init|status`, the `--db`
//! that `derive`, `guard prune`, `report` and `record stats` take, and `guard audit verify
//! --db`.
//!
//! Each machine keeps recording into its own `SQLite` store (the hook path never touches the
//! network); `sync push` uploads that store's rows, tagged with an origin bound to the
//! pushing `PostgreSQL` role, into the `callus` schema of a `PostgreSQL` database; a reading
//! command given `--db postgres://…` copies the rows its window needs into a temporary store
//! and runs unchanged on it. So the team store is a plain mirror of the local schema, and
//! every stage has one code path. Team setup: `docs/team-store.md`.
//!
//! - `target`: what a `--db` value names, and the URL with its password taken out.
//! - `psql`: running a script through the user's `psql` (libpq), errors mapped to exit codes.
//! - `copy_text`: the COPY text format both ways.
//! - `schema`: the team tables, keyed by origin, and their migrations.
//! - `origin`: who is pushing.
//! - `push`: `callus sync push`.
//! - `init`: `callus sync init`.
//! - `status`: `callus sync status`.
//! - `pull`: the rows a reading command needs, as a temporary store.
//! - `verify`: each origin's audit chain, walked in the team store.
//! - `progress`: progress lines on stderr.

pub(crate) mod anchors;
mod copy_text;
pub(crate) mod init;
mod origin;
pub(crate) mod progress;
mod psql;
pub(crate) mod pull;
pub(crate) mod push;
mod schema;
pub(crate) mod status;
pub(crate) mod target;
pub(crate) mod verify;

use crate::Result;
use crate::config::Home;

use target::Target;

pub(crate) use crate::store::evidence::Evidence;

pub(crate) use pull::{Range, Scope};

/// Resolve a reading command's `--db` reading everything (see [`evidence_in`]).
pub(crate) fn evidence(db: Option<&str>, home: &Home) -> Result<Evidence> {
    evidence_in(db, home, &Scope::ALL)
}

/// Resolve a reading command's `--db`: none → the home's store; a path → that file; a
/// `postgres://` URL → the team's rows that `scope` covers, copied into a temporary store
/// (announced on stderr, one line, so the output is never mistaken for this machine's
/// alone, with how many rows came, from how many origins, of how many the team holds).
pub(crate) fn evidence_in(db: Option<&str>, home: &Home, scope: &Scope) -> Result<Evidence> {
    match db.map(Target::parse) {
        None => Ok(Evidence::Local(home.db_path())),
        Some(Target::Sqlite(path)) => Ok(Evidence::Local(path)),
        Some(Target::Postgres(url)) => {
            url.refuse_password_on_command_line(db.unwrap_or_default())?;
            let copy = pull::pull(&url, scope, progress::wanted(false))?;
            eprintln!(
                "callus: team-wide evidence from {}: {} origin(s), {} tool call(s), {} audit record(s); {} row(s) moved ({} of the team's {} tool calls, {} of its {} audit records{})",
                url.shown(),
                copy.origins,
                copy.calls,
                copy.audit,
                copy.moved,
                copy.calls,
                copy.team_calls,
                copy.audit,
                copy.team_audit,
                if scope.calls.is_all() && scope.audit.is_all() {
                    ""
                } else {
                    "; windowed on the server"
                }
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
