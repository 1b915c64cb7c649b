//! Doctor's store checks: `integrity_check`, the schema version, the audit chain against its
//! anchors (intact and anchored, unanchored, or broken against the last anchor: the same
//! verdict as a plain `guard audit verify`), the recorder's spool backlog, whether the wired
//! hooks actually fire, and the sessions halted by RECUSE.
//!
//! "Firing" compares the host's own newest session (Claude Code transcripts under
//! `~/.claude/projects/`, Codex rollouts under `$CODEX_HOME/sessions/`) with what the store
//! holds: a session newer than the hooks file that left no trace means the hooks do not run.
//! A session whose guard decisions let calls run but whose outcomes never arrived means
//! `PostToolUse` does not run. The store is opened read-only and never migrated.

use std::path::Path;
use std::time::{Duration, SystemTime};

use rusqlite::{Connection, OpenFlags, OptionalExtension};

use super::wiring::Wired;
use super::{Report, Status};
use crate::config::Home;
use crate::host::Host;

/// Decisions younger than this may belong to a call still running.
const OUTCOME_GRACE: Duration = Duration::from_secs(300);

/// Run the store checks.
pub(crate) fn check(home: &Home, wired: &[Wired], report: &mut Report) {
    let db = home.db_path();
    let conn = if db.exists() {
        match Connection::open_with_flags(&db, OpenFlags::SQLITE_OPEN_READ_ONLY) {
            Ok(c) => Some(c),
            Err(e) => {
                report.add(
                    "store",
                    Status::Fail,
                    format!("{}: cannot open: {e}", db.display()),
                );
                None
            }
        }
    } else {
        report.add(
            "store",
            Status::Warn,
            format!(
                "no store at {} yet: nothing has been recorded",
                db.display()
            ),
        );
        None
    };
    if let Some(conn) = &conn {
        let _ = conn.busy_timeout(crate::store::BUSY_TIMEOUT);
        integrity(conn, &db, report);
        audit(home, &db, conn, report);
    }
    spool(home, report);
    for w in wired {
        firing(conn.as_ref(), w, report);
    }
    halts(home, report);
}

fn integrity(conn: &Connection, db: &Path, report: &mut Report) {
    match conn.query_row("PRAGMA integrity_check", [], |r| r.get::<_, String>(0)) {
        Ok(s) if s == "ok" => report.add(
            "store",
            Status::Ok,
            format!("{}: integrity_check ok", db.display()),
        ),
        Ok(s) => report.add(
            "store",
            Status::Fail,
            format!("{}: integrity_check: {s}", db.display()),
        ),
        Err(e) => report.add(
            "store",
            Status::Fail,
            format!("{}: integrity_check failed: {e}", db.display()),
        ),
    }
    let target = crate::store::MIGRATIONS.len() as i64;
    match crate::store::current_version(conn) {
        Ok(v) if v == target => {
            report.add("store", Status::Ok, format!("schema current (version {v})"));
        }
        Ok(v) if v < target => report.add(
            "store",
            Status::Warn,
            format!("schema at version {v} of {target}: the next hook or command applies the rest"),
        ),
        Ok(v) => report.add(
            "store",
            Status::Fail,
            format!("schema at version {v}, newer than this callus ({target}): upgrade callus"),
        ),
        Err(e) => report.add("store", Status::Fail, e.to_string()),
    }
}

/// The chain on its own, then against every place `guard audit anchor` wrote to.
fn audit(home: &Home, db: &Path, conn: &Connection, report: &mut Report) {
    let v = match crate::store::audit::verify(conn, None) {
        Ok(v) => v,
        Err(e) => {
            report.add(
                "audit",
                Status::Fail,
                format!("cannot verify the chain: {e}"),
            );
            return;
        }
    };
    if let Some((seq, why)) = v.broken {
        report.add(
            "audit",
            Status::Fail,
            format!("chain TAMPERED at record {seq}: {why}"),
        );
        return;
    }
    let standing = match crate::store::anchor::standing(home, db, conn) {
        Ok(s) => s,
        Err(e) => {
            report.add(
                "audit",
                Status::Fail,
                format!("cannot check the anchors: {e}"),
            );
            return;
        }
    };
    if let Some((_, why)) = &standing.broken {
        report.add(
            "audit",
            Status::Fail,
            format!("chain broken against the last anchor: {why}"),
        );
    } else if let Some(why) = standing.unreadable.first() {
        report.add(
            "audit",
            Status::Fail,
            format!("anchor unreadable, the chain cannot be checked against it: {why}"),
        );
    } else if let Some(a) = &standing.latest {
        let since = match standing.since_anchor {
            0 => String::new(),
            n => format!("; {n} record(s) since, not yet anchored"),
        };
        report.add(
            "audit",
            Status::Ok,
            format!(
                "chain intact: {} record(s), anchored at record {} in {}{since}",
                v.records, a.seq, a.source
            ),
        );
    } else {
        report.add(
            "audit",
            Status::Warn,
            format!(
                "chain UNANCHORED: {} record(s), consistent{}, but nothing outside the store \
                 vouches for it (a rewrite, a truncation or an emptied table would look the \
                 same): `callus guard audit anchor --to FILE|git:`",
                v.records,
                v.head.map(|h| format!(", head {h}")).unwrap_or_default()
            ),
        );
    }
}

/// Events the recorder spooled because the store could not take them.
fn spool(home: &Home, report: &mut Report) {
    let dir = crate::record::spool::dir(home);
    match crate::record::spool::backlog(home) {
        Ok((0, _)) => report.add("spool", Status::Ok, "no events waiting in the spool"),
        Ok((n, oldest)) => {
            let full = n > crate::record::spool::SPOOL_CAP;
            report.add(
                "spool",
                if full { Status::Fail } else { Status::Warn },
                format!(
                    "{}{n} event(s) waiting in {}{}: the store was busy or failing when they \
                     were recorded; the next recorder call that writes merges them{}",
                    if full { "more than " } else { "" },
                    dir.display(),
                    oldest
                        .map(|ms| format!(" (oldest {})", ago_ms(ms)))
                        .unwrap_or_default(),
                    if full {
                        "; the spool is full, so new events are dropped"
                    } else {
                        ""
                    },
                ),
            );
        }
        Err(e) => report.add("spool", Status::Fail, format!("cannot read the spool: {e}")),
    }
    let held = crate::store::audit_spool::backlog(home);
    if held > 0 {
        let full = held >= crate::store::audit_spool::CAP;
        report.add(
            "audit spool",
            if full { Status::Fail } else { Status::Warn },
            format!(
                "{held} audit record(s) waiting in {}: the store was busy when the guard \
                 decided; the next guard call that gets the store appends them{}",
                crate::store::audit_spool::dir(home).display(),
                if full {
                    "; the spool is full, so new records are dropped"
                } else {
                    ""
                }
            ),
        );
    }
}

/// The newest session the host itself knows about: `(session id, last written)`.
fn latest_host_session(host: Host) -> Option<(String, SystemTime)> {
    let spec = host.spec();
    let (root, pick) = ((spec.history_dir)(), spec.session_of_log);
    let mut best: Option<(String, SystemTime)> = None;
    walk(&root, 4, &mut |p| {
        if let (Some(id), Ok(t)) = (pick(p), std::fs::metadata(p).and_then(|m| m.modified()))
            && best.as_ref().is_none_or(|(_, bt)| t > *bt)
        {
            best = Some((id, t));
        }
    });
    best
}

fn walk(dir: &Path, depth: usize, f: &mut dyn FnMut(&Path)) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        match e.file_type() {
            Ok(t) if t.is_dir() && depth > 0 => walk(&p, depth - 1, f),
            Ok(t) if t.is_file() => f(&p),
            _ => {}
        }
    }
}

/// How much the store knows about a session: (tool calls, audit records, session row).
fn session_evidence(conn: &Connection, id: &str) -> rusqlite::Result<(i64, i64, bool)> {
    let calls = conn.query_row(
        "SELECT count(*) FROM tool_calls WHERE session_id = ?1",
        [id],
        |r| r.get(0),
    )?;
    let audits = conn.query_row(
        "SELECT count(*) FROM audit WHERE session_id = ?1",
        [id],
        |r| r.get(0),
    )?;
    let row = conn
        .query_row("SELECT 1 FROM sessions WHERE id = ?1", [id], |_| Ok(()))
        .optional()?
        .is_some();
    Ok((calls, audits, row))
}

/// The newest event the store holds for `host`: (session id, unix ms).
fn latest_stored(conn: &Connection, host: &str) -> rusqlite::Result<Option<(String, i64)>> {
    conn.query_row(
        "SELECT sid, ms FROM (
             SELECT id AS sid, coalesce(last_event_ms, ended_ms, started_ms, 0) AS ms FROM sessions WHERE host = ?1
             UNION ALL
             SELECT session_id, coalesce(ended_ms, started_ms, 0) FROM tool_calls WHERE host = ?1 AND session_id IS NOT NULL
         ) ORDER BY ms DESC LIMIT 1",
        [host],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .optional()
    .and_then(|stored| {
        let audited = crate::store::audit_query::latest_for_host(conn, host)?;
        Ok(match (stored, audited) {
            (Some(s), Some(a)) => Some(if a.1 > s.1 { a } else { s }),
            (s, a) => s.or(a),
        })
    })
}

fn firing(conn: Option<&Connection>, w: &Wired, report: &mut Report) {
    let host = w.host.slug();
    let latest = latest_host_session(w.host);
    let evidence = |id: &str| conn.and_then(|c| session_evidence(c, id).ok());
    match latest {
        Some((id, when)) => {
            let (calls, audits, row) = evidence(&id).unwrap_or((0, 0, false));
            let after_install = w.modified.is_none_or(|m| when >= m);
            if calls > 0 || audits > 0 || row {
                report.add(
                    "firing",
                    Status::Ok,
                    format!(
                        "{host}: the last session ({id}, {}) was recorded: {calls} tool call(s), {audits} guard decision(s)",
                        ago(when)
                    ),
                );
            } else if after_install {
                report.add(
                    "firing",
                    Status::Fail,
                    format!(
                        "{host}: the last session ({id}, {}) left no events in the store: the hooks are not firing (start a new session after install; check `callus record` runs)",
                        ago(when)
                    ),
                );
            } else {
                report.add(
                    "firing",
                    Status::Warn,
                    format!("{host}: no session since the hooks were installed: start one and run doctor again"),
                );
            }
        }
        None => match conn.and_then(|c| latest_stored(c, host).ok().flatten()) {
            Some((id, ms)) => report.add(
                "firing",
                Status::Ok,
                format!(
                    "{host}: last recorded event in session {id} ({})",
                    ago_ms(ms)
                ),
            ),
            None => report.add(
                "firing",
                Status::Warn,
                format!("{host}: no session recorded yet: start one and run doctor again"),
            ),
        },
    }
    if let Some(conn) = conn {
        missing_outcomes(conn, host, report);
    }
}

/// The newest session of `host` with guard decisions on calls that ran (allow/nudge) but no
/// recorded outcome for them.
fn missing_outcomes(conn: &Connection, host: &str, report: &mut Report) {
    let cutoff = crate::store::now_ms() - OUTCOME_GRACE.as_millis() as i64;
    let row = crate::store::audit_query::unrecorded_outcomes(conn, host, cutoff);
    match row {
        Ok(Some((sid, total, missing))) if missing > 0 => report.add(
            "firing",
            Status::Fail,
            format!(
                "{host}: session {sid} has {missing} of {total} guard decision(s) on calls that ran but no recorded outcome: PostToolUse is not firing"
            ),
        ),
        Ok(_) => {}
        Err(e) => report.add("firing", Status::Warn, format!("{host}: cannot join decisions to outcomes: {e}")),
    }
}

fn halts(home: &Home, report: &mut Report) {
    let Ok(entries) = std::fs::read_dir(home.halts_dir()) else {
        return;
    };
    let ids: Vec<String> = entries
        .flatten()
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .collect();
    if !ids.is_empty() {
        report.add(
            "halts",
            Status::Warn,
            format!(
                "{} session(s) halted by a RECUSE signal: {} (lift with `callus session resume ID`)",
                ids.len(),
                ids.join(", ")
            ),
        );
    }
}

fn ago(t: SystemTime) -> String {
    let secs = SystemTime::now()
        .duration_since(t)
        .map_or(0, |d| d.as_secs());
    human(secs)
}

fn ago_ms(ms: i64) -> String {
    human(((crate::store::now_ms() - ms).max(0) / 1000) as u64)
}

fn human(secs: u64) -> String {
    match secs {
        0..120 => format!("{secs}s ago"),
        120..7200 => format!("{}m ago", secs / 60),
        7200..172_800 => format!("{}h ago", secs / 3600),
        _ => format!("{}d ago", secs / 86_400),
    }
}
