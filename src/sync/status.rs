//! `callus sync status`: what this machine has pushed and has pending, and the team's origins
//! with their roles and audit anchors.
//!
//! Two reads. The team side (one read-only `psql` run): the schema version and, per origin,
//! the role it is bound to, its first and last push, its rows, its chain's head in the team
//! store and the newest anchor a push recorded. This machine's side: its local rows and what
//! a push would do now, measured exactly by running the push itself as a dry run (`push`
//! with [`Mode::DryRun`]: the same script, rolled back), so "pending" counts the rows a push
//! would insert or update, never an estimate. A push that would be refused (another role's
//! origin, an older schema) makes `pending` that refusal, and the exit status 1.

use std::fmt::Write as _;

use serde::Serialize;
use serde_json::Value;

use super::push::{self, Counts, Mode};
use super::target::{PgUrl, team_url};
use crate::config::Home;
use crate::{Error, Exit, Result};

/// One origin the team store holds.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct OriginRow {
    /// The origin.
    pub origin: String,
    /// The `PostgreSQL` role it is bound to (`None` before schema 2).
    pub role: Option<String>,
    /// First and last push, RFC 3339.
    pub first_push: Option<String>,
    /// Last push.
    pub last_push: Option<String>,
    /// Its tool calls in the team store.
    pub tool_calls: u64,
    /// Its audit records there.
    pub audit: u64,
    /// The head of its chain there (`0`: none).
    pub head_seq: i64,
    /// The newest anchor a push recorded: `SEQ:HASH`.
    pub anchor: Option<String>,
    /// When that push was.
    pub anchored_at: Option<String>,
}

/// What `sync status` found.
#[derive(Debug, Clone, Serialize)]
struct Status {
    db: String,
    schema_version: u64,
    origin: String,
    local: Option<[u64; 3]>,
    pending: Option<Pending>,
    pending_error: Option<String>,
    origins: Vec<OriginRow>,
}

/// Rows a push would send that the team does not hold as they are.
#[derive(Debug, Clone, Serialize)]
struct Pending {
    sessions: u64,
    tool_calls: u64,
    audit: u64,
}

fn pending(c: Counts) -> u64 {
    c.inserted + c.updated
}

/// `callus sync status --db URL [--origin NAME] [--json]`: `db` is the team database,
/// `origin` this machine's (default `user@hostname`).
pub(crate) fn run(home: &Home, db: &str, origin: Option<&str>, json: bool) -> Result<Exit> {
    let url = team_url(db, "sync status")?;
    let origin = super::origin::resolve(origin)?;
    let (schema_version, origins) = team(&url)?;
    let path = home.db_path();
    let mut status = Status {
        db: url.shown(),
        schema_version,
        origin: origin.clone(),
        local: None,
        pending: None,
        pending_error: None,
        origins,
    };
    if let Some(conn) = crate::store::open_existing(&path)? {
        match push::push(&conn, &url, &origin, Mode::DryRun, false) {
            Ok(s) => {
                status.local = Some([s.sessions.local, s.tool_calls.local, s.audit.local]);
                status.pending = Some(Pending {
                    sessions: pending(s.sessions),
                    tool_calls: pending(s.tool_calls),
                    audit: pending(s.audit),
                });
            }
            Err(e @ Error::Team { .. }) => status.pending_error = Some(e.to_string()),
            Err(e) => return Err(e),
        }
    }
    if json {
        crate::output::print_json(
            &serde_json::to_value(&status).map_err(|e| Error::json("sync status", e))?,
        );
    } else {
        print!("{}", text(&status));
    }
    Ok(if status.pending_error.is_some() {
        Exit::Problem
    } else {
        Exit::Ok
    })
}

/// The team side: schema version (0: none) and the origins.
fn team(url: &PgUrl) -> Result<(u64, Vec<OriginRow>)> {
    let script = "SET client_min_messages = warning;\n\
         BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY;\n\
         SELECT to_regclass('callus.meta') IS NOT NULL AS present, \
         to_regclass('callus.origins') IS NOT NULL AS bound \\gset\n\
         \\if :present\n\
         SELECT 'version|' || coalesce((SELECT value FROM callus.meta WHERE key = 'schema'), '0');\n\
         \\if :bound\n\
         SELECT json_build_object('origin', o.origin, 'role', o.role, 'first', o.first_ms, 'last', o.last_ms, \
         'calls', (SELECT count(*) FROM callus.tool_calls t WHERE t.origin = o.origin), \
         'audit', (SELECT count(*) FROM callus.audit a WHERE a.origin = o.origin), \
         'head', (SELECT coalesce(max(seq), 0) FROM callus.audit a WHERE a.origin = o.origin), \
         'anchor', (SELECT n.seq || ':' || n.hash FROM callus.anchors n WHERE n.origin = o.origin ORDER BY n.seq DESC LIMIT 1), \
         'anchored', (SELECT n.pushed_ms FROM callus.anchors n WHERE n.origin = o.origin ORDER BY n.seq DESC LIMIT 1))::text \
         FROM callus.origins o ORDER BY o.origin;\n\
         \\else\n\
         SELECT json_build_object('origin', p.origin, \
         'calls', (SELECT count(*) FROM callus.tool_calls t WHERE t.origin = p.origin), \
         'audit', (SELECT count(*) FROM callus.audit a WHERE a.origin = p.origin), \
         'head', (SELECT coalesce(max(seq), 0) FROM callus.audit a WHERE a.origin = p.origin))::text \
         FROM (SELECT origin FROM callus.tool_calls UNION SELECT origin FROM callus.sessions \
         UNION SELECT origin FROM callus.audit) p ORDER BY p.origin;\n\
         \\endif\n\
         \\endif\n\
         COMMIT;\n";
    let out = super::psql::run(url, "status", |w| {
        w.write_all(script.as_bytes())
            .map_err(|e| Error::io("psql (stdin)", e))
    })?;
    let mut version = 0;
    let mut origins = Vec::new();
    for line in out.lines() {
        if let Some(v) = line.strip_prefix("version|") {
            version = v.trim().parse().unwrap_or(0);
            continue;
        }
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let iso = |k: &str| v[k].as_i64().map(crate::window::iso);
        origins.push(OriginRow {
            origin: v["origin"].as_str().unwrap_or_default().to_string(),
            role: v["role"].as_str().map(str::to_string),
            first_push: iso("first"),
            last_push: iso("last"),
            tool_calls: v["calls"].as_u64().unwrap_or(0),
            audit: v["audit"].as_u64().unwrap_or(0),
            head_seq: v["head"].as_i64().unwrap_or(0),
            anchor: v["anchor"].as_str().map(str::to_string),
            anchored_at: iso("anchored"),
        });
    }
    Ok((version, origins))
}

fn text(s: &Status) -> String {
    let mut out = format!(
        "team store {} (schema version {})\n",
        s.db, s.schema_version
    );
    match (&s.local, &s.pending, &s.pending_error) {
        (_, _, Some(e)) => {
            let _ = writeln!(
                out,
                "this machine ({}): a push would be refused: {e}",
                s.origin
            );
        }
        (Some(l), Some(p), None) => {
            let _ = writeln!(
                out,
                "this machine ({}): {} tool call(s), {} audit record(s) locally; pending: {} tool call(s), {} audit record(s), {} session(s)",
                s.origin, l[1], l[2], p.tool_calls, p.audit, p.sessions
            );
        }
        _ => {
            let _ = writeln!(
                out,
                "this machine ({}): no local store, nothing to push",
                s.origin
            );
        }
    }
    let mut table = crate::output::table(&[
        "origin",
        "role",
        "tool calls",
        "audit",
        "head",
        "anchor",
        "last push",
    ]);
    for o in &s.origins {
        table.add_row(vec![
            o.origin.clone(),
            o.role.clone().unwrap_or_else(|| "-".into()),
            o.tool_calls.to_string(),
            o.audit.to_string(),
            o.head_seq.to_string(),
            o.anchor.clone().unwrap_or_else(|| "-".into()),
            o.last_push.clone().unwrap_or_else(|| "-".into()),
        ]);
    }
    let _ = writeln!(out, "{table}");
    out
}
