//! The team store as an audit anchor: each origin's pushed chain, read back.
//!
//! `sync push` refuses a chain that differs from what the team already holds for its origin,
//! so once pushed, every `(seq, hash)` the team store holds for an origin vouches for that
//! record of the local chain. `guard audit verify --anchor postgres://…` reads them here and
//! checks the local chain against them (`crate::store::anchor`): a record rewritten, cut
//! off or emptied locally after a push is found, even with every local hash recomputed.

use super::psql;
use super::target::PgUrl;
use crate::store::anchor::Anchor;
use crate::{Error, Result};

/// Every record of `origin`'s chain (default `user@hostname`, as `sync push` names it) that
/// the team store at `url` holds, as anchors.
pub(crate) fn team_anchors(url: &PgUrl, origin: Option<&str>) -> Result<Vec<Anchor>> {
    let origin = super::origin::resolve(origin)?;
    let quoted = origin.replace('\'', "''");
    let out = psql::run(url, "read anchors", |w| {
        // No schema yet (nothing pushed): no anchors, not an error.
        writeln!(
            w,
            "SELECT to_regclass('callus.audit') IS NOT NULL AS present \\gset\n\
             \\if :present\n\
             SELECT seq, hash FROM callus.audit WHERE origin = '{quoted}' ORDER BY seq;\n\
             \\endif"
        )
        .map_err(|e| Error::io("psql (stdin)", e))
    })?;
    let source = format!("the team store {} (origin {origin})", url.shown());
    Ok(out
        .lines()
        .filter_map(|l| {
            let (seq, hash) = l.split_once('|')?;
            Some(Anchor {
                seq: seq.trim().parse().ok()?,
                hash: hash.trim().to_string(),
                source: source.clone(),
            })
        })
        .collect())
}
