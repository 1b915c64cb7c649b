//! `callus sync push`: this machine's evidence into the team's `PostgreSQL`, in one transaction.
//!
//! The script streamed to `psql`: lock, create the schema if missing (an older one is
//! refused: `sync init` upgrades it), claim the origin for the pushing role or refuse it
//! (below), COPY every local row (tagged with the origin) into temporary tables, then
//! `INSERT … ON CONFLICT DO UPDATE` into the team tables, touching only rows whose values
//! differ, record the chain head pushed as an anchor, and `COMMIT`. So a push is all or
//! nothing, pushing twice adds nothing, and a row that changed locally (a pending call that
//! then failed) is updated in place. An interrupted push (killed, disconnected) commits
//! nothing, so the next push sends everything again and the totals come out exact. Audit
//! records are append-only: a record already there is left alone, and one that differs from
//! what the team holds at the same `(origin, seq)` — this origin's chain was restarted or
//! rewritten — aborts the push rather than fork the chain. A local chain that does not
//! verify is not pushed at all.
//!
//! Origins are authenticated: `callus.origins` binds each origin to the `PostgreSQL` role
//! that first pushed it, and a push by any other role is refused inside the transaction,
//! before a row is written (row-level security enforces the same for roles that do not own
//! the tables, whatever client they use).
//!
//! What is sent is what the local store holds (redacted on the way in), redacted once more
//! (`crate::redact`, for rows an older callus recorded) in its free-text columns; a NUL byte
//! is sent as a stand-in (`copy_text`). Nothing is ever deleted from the team store.
//! [`Mode::DryRun`] runs the same script and rolls back: what a push would do (`sync status`).

use std::io::Write;

use rusqlite::Connection;
use rusqlite::types::ValueRef;
use serde::Serialize;

use super::progress::Progress;
use super::schema::{self, TABLES, Table};
use super::target::{PgUrl, team_url};
use super::{copy_text, origin, psql};
use crate::config::Home;
use crate::{Error, Exit, Result};

/// What happened to one table's rows.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq, Eq)]
pub(crate) struct Counts {
    /// Rows in the local store (all sent).
    pub local: u64,
    /// Rows the team store did not have.
    pub inserted: u64,
    /// Rows the team store had with other values, now updated.
    pub updated: u64,
    /// Rows the team store already had as they are.
    pub unchanged: u64,
}

/// Columns redacted again on the way out (free text; keys, digests and the audit records,
/// which are inside their hash chain, are sent as stored).
const REDACTED: [&str; 4] = ["command", "error", "cwd", "repo_root"];

/// Whether a push commits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Push.
    Commit,
    /// Do everything, report the counts, roll back.
    DryRun,
}

/// The result of one push.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Summary {
    /// The team database (no password).
    pub db: String,
    /// The origin the rows were pushed as.
    pub origin: String,
    /// `sessions`.
    pub sessions: Counts,
    /// `tool_calls`.
    pub tool_calls: Counts,
    /// `audit`.
    pub audit: Counts,
}

/// `callus sync push --db URL [--origin NAME] [--json] [--progress]`: `db` is the team
/// database, `origin` who pushes (default `user@hostname`), `progress` forces progress lines.
pub(crate) fn run(
    home: &Home,
    db: &str,
    origin: Option<&str>,
    json: bool,
    progress: bool,
) -> Result<Exit> {
    let url = team_url(db, "sync push")?;
    let origin = origin::resolve(origin)?;
    let path = home.db_path();
    let conn = crate::store::open_existing(&path)?.ok_or_else(|| {
        Error::Invalid(format!("nothing to push: no store at {}", path.display()))
    })?;
    // One read snapshot for the whole push, so the chain and the calls agree.
    conn.execute_batch("BEGIN")
        .map_err(|e| Error::sql("begin read", e))?;
    let chain = crate::store::audit::verify(&conn, None)?;
    if let Some((seq, why)) = chain.broken {
        eprintln!(
            "callus: the local audit chain is broken at record {seq} ({why}); not pushing — \
             see `callus guard audit verify`"
        );
        return Ok(Exit::Problem);
    }
    let progress = super::progress::wanted(progress);
    let summary = push(&conn, &url, &origin, Mode::Commit, progress)?;
    if json {
        crate::output::print_json(
            &serde_json::to_value(&summary).map_err(|e| Error::json("push summary", e))?,
        );
    } else {
        print!("{}", text(&summary));
    }
    Ok(Exit::Ok)
}

/// Push every row of `conn` to `url` as `origin` (or only count what that would do).
pub(crate) fn push(
    conn: &Connection,
    url: &PgUrl,
    origin: &str,
    mode: Mode,
    progress: bool,
) -> Result<Summary> {
    let mut local = [0u64; 3];
    for (n, table) in local.iter_mut().zip(TABLES) {
        *n = conn
            .query_row(&format!("SELECT count(*) FROM {}", table.name), [], |r| {
                r.get::<_, i64>(0)
            })
            .map_err(|e| Error::sql(format!("count {}", table.name), e))? as u64;
    }
    let mut sent = Progress::new("push: rows sent", local.iter().sum(), progress);
    let out = psql::run(url, "push", |w| script(conn, origin, mode, &mut sent, w))?;
    sent.finish();
    let mut counts = [Counts::default(); 3];
    for line in out.lines() {
        let mut parts = line.split('|');
        let (Some(name), Some(inserted), Some(updated), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        if let Some(i) = TABLES.iter().position(|t| t.name == name) {
            counts[i].inserted = inserted.parse().unwrap_or(0);
            counts[i].updated = updated.parse().unwrap_or(0);
        }
    }
    for (c, n) in counts.iter_mut().zip(local) {
        c.local = n;
        c.unchanged = n.saturating_sub(c.inserted + c.updated);
    }
    Ok(Summary {
        db: url.shown(),
        origin: origin.to_string(),
        sessions: counts[0],
        tool_calls: counts[1],
        audit: counts[2],
    })
}

/// The whole push script, streamed to `out`.
fn script(
    conn: &Connection,
    origin: &str,
    mode: Mode,
    sent: &mut Progress,
    out: &mut dyn Write,
) -> Result<()> {
    let io = |e| Error::io("psql (stdin)", e);
    let mut sql = String::from(
        "SET client_min_messages = warning;\nSET standard_conforming_strings = on;\nBEGIN;\n",
    );
    sql.push_str(&schema::prelude(schema::Upgrade::CreateOnly));
    sql.push_str(&claim(origin));
    out.write_all(sql.as_bytes()).map_err(io)?;
    for table in TABLES {
        write!(
            out,
            "CREATE TEMP TABLE push_{t} (LIKE callus.{t}) ON COMMIT DROP;\n\
             COPY push_{t} (origin, {cols}) FROM STDIN;\n",
            t = table.name,
            cols = table.column_list()
        )
        .map_err(io)?;
        copy_rows(conn, table, origin, sent, out)?;
        out.write_all(b"\\.\n").map_err(io)?;
    }
    out.write_all(audit_guard().as_bytes()).map_err(io)?;
    for table in TABLES {
        out.write_all(upsert(table).as_bytes()).map_err(io)?;
    }
    out.write_all(after_push().as_bytes()).map_err(io)?;
    let end: &[u8] = match mode {
        Mode::Commit => b"COMMIT;\n",
        Mode::DryRun => b"ROLLBACK;\n",
    };
    out.write_all(end).map_err(io)
}

/// Bind `origin` to the pushing role if nobody has it yet; refuse it if another role does.
fn claim(origin: &str) -> String {
    format!(
        "SELECT set_config('callus.origin', {lit}, true) AS callus_ignored \\gset\n\
         INSERT INTO callus.origins (origin, role, first_ms, last_ms) VALUES \
         (current_setting('callus.origin'), current_user, {NOW_MS}, {NOW_MS}) \
         ON CONFLICT (origin) DO NOTHING;\n\
         DO $$ DECLARE owner text; BEGIN\n\
         SELECT role INTO owner FROM callus.origins WHERE origin = current_setting('callus.origin');\n\
         IF owner IS DISTINCT FROM current_user::text THEN RAISE EXCEPTION \
         'origin \"%\" belongs to the PostgreSQL role \"%\", and this push runs as \"%\": push \
         under an origin of your own (--origin), or have the team store''s owner reassign it \
         (docs/team-store.md)', current_setting('callus.origin'), owner, current_user;\n\
         END IF; END $$;\n",
        lit = schema::literal(origin)
    )
}

/// Milliseconds since the epoch, in SQL.
const NOW_MS: &str = "(extract(epoch FROM clock_timestamp()) * 1000)::bigint";

/// After the upserts: the chain head this push carried becomes an anchor, and the origin's
/// last push time moves.
fn after_push() -> String {
    format!(
        "INSERT INTO callus.anchors (origin, seq, hash, pushed_ms, role) \
         SELECT origin, seq, hash, {NOW_MS}, current_user FROM push_audit ORDER BY seq DESC LIMIT 1 \
         ON CONFLICT (origin, seq) DO NOTHING;\n\
         UPDATE callus.origins SET last_ms = {NOW_MS} WHERE origin = current_setting('callus.origin');\n"
    )
}

/// Every row of `table`, as COPY text lines prefixed with the origin.
fn copy_rows(
    conn: &Connection,
    table: &Table,
    origin: &str,
    sent: &mut Progress,
    out: &mut dyn Write,
) -> Result<()> {
    let op = format!("read {} for push", table.name);
    let mut stmt = conn
        .prepare(&format!(
            "SELECT {} FROM {}",
            table.column_list(),
            table.name
        ))
        .map_err(|e| Error::sql(&op, e))?;
    let mut rows = stmt.query([]).map_err(|e| Error::sql(&op, e))?;
    let width = table.columns.len();
    let redacted: Vec<bool> = table
        .columns
        .iter()
        .map(|(name, _)| table.name != schema::AUDIT.name && REDACTED.contains(name))
        .collect();
    let mut texts: Vec<Option<String>> = Vec::with_capacity(width);
    while let Some(row) = rows.next().map_err(|e| Error::sql(&op, e))? {
        texts.clear();
        for (i, &redact) in redacted.iter().enumerate() {
            let value = row.get_ref(i).map_err(|e| Error::sql(&op, e))?;
            texts.push(match value {
                ValueRef::Null => None,
                ValueRef::Integer(n) => Some(n.to_string()),
                ValueRef::Real(x) => Some(x.to_string()),
                ValueRef::Text(t) | ValueRef::Blob(t) => {
                    let text = String::from_utf8_lossy(t);
                    Some(if redact {
                        crate::redact::redact(&text).into_owned()
                    } else {
                        text.into_owned()
                    })
                }
            });
        }
        let mut fields: Vec<Option<&str>> = Vec::with_capacity(width + 1);
        fields.push(Some(origin));
        fields.extend(texts.iter().map(Option::as_deref));
        copy_text::encode_row(out, &fields).map_err(|e| Error::io("psql (stdin)", e))?;
        sent.add(1);
    }
    Ok(())
}

/// Abort when this origin's chain in the team store differs from the local one at any seq.
fn audit_guard() -> String {
    "DO $$ DECLARE bad record; BEGIN\n\
     SELECT p.origin, p.seq INTO bad FROM push_audit p JOIN callus.audit a USING (origin, seq)\n\
     WHERE a.hash <> p.hash ORDER BY p.seq LIMIT 1;\n\
     IF FOUND THEN RAISE EXCEPTION 'the team already holds a different audit record % for origin ''%'': \
     this store''s chain was restarted or rewritten; push it under another --origin', bad.seq, bad.origin;\n\
     END IF; END $$;\n"
        .to_string()
}

/// Upsert the temp table into the team table and print `table|inserted|updated`.
fn upsert(table: &Table) -> String {
    let t = table.name;
    let cols = table.column_list();
    let on_conflict = if t == "audit" {
        // Append-only: what differs was refused by the audit guard; the rest is already there.
        "DO NOTHING".to_string()
    } else {
        let rest: Vec<&str> = table
            .columns
            .iter()
            .map(|(n, _)| *n)
            .filter(|n| *n != table.key)
            .collect();
        let set: Vec<String> = rest.iter().map(|n| format!("{n} = EXCLUDED.{n}")).collect();
        let old: Vec<String> = rest.iter().map(|n| format!("t.{n}")).collect();
        let new: Vec<String> = rest.iter().map(|n| format!("EXCLUDED.{n}")).collect();
        format!(
            "DO UPDATE SET {} WHERE ROW({}) IS DISTINCT FROM ROW({})",
            set.join(", "),
            old.join(", "),
            new.join(", ")
        )
    };
    format!(
        "WITH up AS (INSERT INTO callus.{t} AS t (origin, {cols}) SELECT origin, {cols} FROM push_{t} \
         ON CONFLICT (origin, {key}) {on_conflict} RETURNING (xmax = 0) AS inserted)\n\
         SELECT '{t}', count(*) FILTER (WHERE inserted), count(*) FILTER (WHERE NOT inserted) FROM up;\n",
        key = table.key
    )
}

/// The summary for people.
fn text(s: &Summary) -> String {
    let mut table = crate::output::table(&["", "local", "new", "updated", "unchanged"]);
    for (name, c) in [
        ("sessions", s.sessions),
        ("tool calls", s.tool_calls),
        ("audit records", s.audit),
    ] {
        table.add_row(vec![
            name.to_string(),
            c.local.to_string(),
            c.inserted.to_string(),
            c.updated.to_string(),
            c.unchanged.to_string(),
        ]);
    }
    format!("pushed to {} as {}\n{table}\n", s.db, s.origin)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upserts_only_touch_changed_rows_and_audit_only_appends() {
        let calls = upsert(&schema::TOOL_CALLS);
        assert!(calls.contains(
            "ON CONFLICT (origin, tool_use_id) DO UPDATE SET session_id = EXCLUDED.session_id"
        ));
        assert!(calls.contains("IS DISTINCT FROM"));
        assert!(
            !calls.contains("tool_use_id = EXCLUDED"),
            "the key is not updated"
        );
        let audit = upsert(&schema::AUDIT);
        assert!(
            audit.contains("ON CONFLICT (origin, seq) DO NOTHING"),
            "{audit}"
        );
    }

    #[test]
    fn the_script_copies_every_row_once_and_commits_last() {
        let conn = crate::store::open_in_memory().unwrap();
        conn.execute_batch(
            "INSERT INTO sessions (id, host, source) VALUES ('s1', 'codex', 'hook');
             INSERT INTO tool_calls (tool_use_id, host, source, tool, status, command)
             VALUES ('t1', 'codex', 'hook', 'Bash', 'failure', 'echo a\tb\n\\.');",
        )
        .unwrap();
        let mut buf = Vec::new();
        let mut quiet = Progress::new("test", 0, false);
        script(&conn, "me@box", Mode::Commit, &mut quiet, &mut buf).unwrap();
        let text = String::from_utf8(buf).unwrap();
        assert!(text.contains("me@box\ts1\tcodex\thook\t\\N"), "{text}");
        assert!(text.contains("echo a\\tb\\n\\\\."), "{text}");
        assert_eq!(
            text.matches("\n\\.\n").count(),
            3,
            "one end marker per table"
        );
        assert!(text.trim_end().ends_with("COMMIT;"));
        let claim_at = text.find("INSERT INTO callus.origins").unwrap();
        let first_copy = text.find("COPY push_").unwrap();
        assert!(
            claim_at < first_copy,
            "the origin is checked before any row"
        );
        let mut dry = Vec::new();
        script(&conn, "me@box", Mode::DryRun, &mut quiet, &mut dry).unwrap();
        let dry = String::from_utf8(dry).unwrap();
        assert!(dry.trim_end().ends_with("ROLLBACK;") && !dry.contains("\nCOMMIT;"));
    }
}
