//! `callus sync init`: create the team schema, or upgrade it to this callus's version, and
//! grant members what pushing needs.
//!
//! One transaction: the schema prelude applies every missing migration (`schema::prelude`
//! with [`Upgrade::Apply`]), then each `--grant ROLE` gets read access to the schema and
//! insert/update on the tables a push writes (row-level security then limits its writes to
//! the origins bound to it). Run it as the role that owns the schema (the first `init` or
//! the first push created it): only the owner may alter the tables.

use std::fmt::Write as _;

use serde_json::json;

use super::schema::{self, Upgrade};
use super::target::team_url;
use crate::{Error, Exit, Result};

/// `callus sync init --db URL [--grant ROLE]… [--json]`: `db` is the team database,
/// `grant` the roles to let push.
pub(crate) fn run(db: &str, grant: &[String], json: bool) -> Result<Exit> {
    let url = team_url(db, "sync init")?;
    let mut grants = String::new();
    for role in grant {
        let role = role.trim();
        if role.is_empty() || role.chars().any(char::is_control) {
            return Err(Error::Invalid(format!(
                "--grant '{}': expected a role name",
                role.escape_debug()
            )));
        }
        let r = format!("\"{}\"", role.replace('"', "\"\""));
        let _ = write!(
            grants,
            "GRANT USAGE ON SCHEMA callus TO {r};\n\
             GRANT SELECT ON callus.meta TO {r};\n\
             GRANT SELECT, INSERT, UPDATE ON callus.sessions, callus.tool_calls, callus.origins TO {r};\n\
             GRANT SELECT, INSERT ON callus.audit, callus.anchors TO {r};\n"
        );
    }
    let script = format!(
        "SET client_min_messages = warning;\nSET standard_conforming_strings = on;\nBEGIN;\n{}{grants}COMMIT;\n",
        schema::prelude(Upgrade::Apply)
    );
    let out = super::psql::run(&url, "init", |w| {
        w.write_all(script.as_bytes())
            .map_err(|e| Error::io("psql (stdin)", e))
    })?;
    let from: usize = out
        .lines()
        .find_map(|l| l.strip_prefix("schema|")?.split('|').next()?.parse().ok())
        .unwrap_or(0);
    let to = schema::VERSION;
    if json {
        crate::output::print_json(&json!({
            "db": url.shown(),
            "from": from,
            "to": to,
            "applied": (from + 1..=to).collect::<Vec<_>>(),
            "granted": grant,
        }));
    } else if from == to {
        println!("team store {}: schema at version {to} already", url.shown());
    } else if from == 0 {
        println!("team store {}: schema created at version {to}", url.shown());
    } else {
        println!(
            "team store {}: schema upgraded from version {from} to {to}",
            url.shown()
        );
    }
    if !json {
        for role in grant {
            println!("granted {role}: read the team store, push its own origins");
        }
    }
    Ok(Exit::Ok)
}
