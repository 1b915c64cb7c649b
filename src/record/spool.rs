//! The recorder's spool: where an event waits when the store cannot take it, so `record`
//! never drops one (issue 15 item 9).
//!
//! When the store stays busy past `store::HOOK_BUSY_TIMEOUT` (another process holds the
//! write lock) or cannot be written at all, the hook writes the event to
//! `$CALLUS_HOME/spool/` instead: one file per event, named by its time so a merge replays
//! in order, holding the payload **redacted** (every string value goes through
//! `crate::redact`: the spool is on disk like the store), the host, and the event's time.
//! Each file is written privately (0600) under a temporary name and renamed into place, so
//! a merge never reads half of one.
//!
//! The next recorder call that writes successfully merges the spool after its own event:
//! it claims each file by renaming it (only one process can win a rename), replays it
//! exactly as the hook would have stored it then (its own time; redaction is idempotent,
//! so the stored text and digest are what they would have been), and deletes it; a replay
//! that fails puts the file back for the next writer. A merge takes at most
//! [`MERGE_BATCH`] files, so one hook call stays short; a claim left by a process that
//! died is taken over after `store::spool_files::STALE_CLAIM`, and its half-written temporary file removed.
//! A spool past [`SPOOL_CAP`] files takes no more
//! (the error log says so): the disk is not filled behind a store that never comes back.
//! Spooling because the store was busy is expected under load and is not logged; spooling
//! because the store failed otherwise (unreadable, corrupt) is.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use rusqlite::Connection;

use crate::store::spool_files::{self, Replayed};
use serde_json::{Value, json};

use crate::config::Home;
use crate::host::wire::{HookEvent, Host};
use crate::{Error, Result};

/// Most spooled events one merge replays.
pub(crate) const MERGE_BATCH: usize = 500;
/// Most events the spool holds.
pub(crate) const SPOOL_CAP: usize = 100_000;
/// Most bytes one spooled event is read to (a hook payload is at most 16 MiB).
const SPOOLED_CAP: u64 = 32 << 20;

/// How a replayed event is stored: the recorder hook's own write, handed in so the spool
/// does not import the hook that calls it.
pub(crate) type StoreEvent = fn(&Connection, &HookEvent, i64) -> Result<()>;

/// The spool directory of `home`.
#[must_use]
pub(crate) fn dir(home: &Home) -> PathBuf {
    home.dir.join("spool")
}

/// Keep `event` (observed at `now`) for a later merge.
pub(crate) fn keep(home: &Home, event: &HookEvent, now: i64) -> Result<PathBuf> {
    let dir = dir(home);
    crate::config::ensure_private_dir(&dir)?;
    let held = std::fs::read_dir(&dir)
        .map_err(|e| Error::io(&dir, e))?
        .take(SPOOL_CAP + 1)
        .count();
    if held > SPOOL_CAP {
        return Err(Error::Invalid(format!(
            "the spool {} is full ({SPOOL_CAP} events): event dropped",
            dir.display()
        )));
    }
    let mut payload = Value::Object(event.raw.clone());
    redact_strings(&mut payload);
    let entry = json!({"v": 1, "now": now, "host": event.host.slug(), "event": payload});
    let nanos = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let path = dir.join(format!("{now:013}-{}-{nanos:09}.json", std::process::id()));
    // Written whole and synced (the point of the spool is not to lose the event). A merge
    // that emptied the spool removes its directory; if that raced this write, make it again.
    let bytes = entry.to_string();
    if crate::config::replace_file(&path, bytes.as_bytes()).is_err() {
        crate::config::ensure_private_dir(&dir)?;
        crate::config::replace_file(&path, bytes.as_bytes())?;
    }
    Ok(path)
}

/// Replay what the spool holds into `conn` (best effort: problems are logged, never
/// returned, since the caller's own event is already stored). Returns how many events were
/// merged.
pub(crate) fn merge(home: &Home, conn: &Connection, store: StoreEvent) -> usize {
    spool_files::drain(
        &dir(home),
        MERGE_BATCH,
        |claimed| match replay(conn, claimed, store) {
            Ok(()) => Replayed::Stored,
            Err(Replay::Bad(why)) => Replayed::Bad(why),
            Err(Replay::Store(e)) => Replayed::Retry(format!("record: spool merge: {e}")),
        },
        |problem| {
            let problem = if problem.starts_with("record:") {
                problem
            } else {
                format!("record: spooled event {problem}")
            };
            crate::runtime::log_error(home, &problem);
        },
    )
}

enum Replay {
    /// The file is not a spooled event (nothing will ever make it one).
    Bad(String),
    /// The store refused it; it may take it later.
    Store(Error),
}

fn replay(conn: &Connection, path: &Path, store: StoreEvent) -> std::result::Result<(), Replay> {
    // Anything can be put in the spool: a FIFO there must not block the hook that merges.
    let mut bytes = Vec::new();
    crate::untrusted::open_regular(path)
        .and_then(|f| f.take(SPOOLED_CAP).read_to_end(&mut bytes))
        .map_err(|e| Replay::Bad(e.to_string()))?;
    let entry: Value = serde_json::from_slice(&bytes).map_err(|e| Replay::Bad(e.to_string()))?;
    let now = entry["now"]
        .as_i64()
        .ok_or_else(|| Replay::Bad("no time".into()))?;
    let host = entry["host"]
        .as_str()
        .and_then(Host::from_slug)
        .ok_or_else(|| Replay::Bad("no host".into()))?;
    let payload = serde_json::to_vec(&entry["event"]).map_err(|e| Replay::Bad(e.to_string()))?;
    let mut event = crate::host::wire::parse(&payload).map_err(|e| Replay::Bad(e.to_string()))?;
    event.host = host;
    store(conn, &event, now).map_err(Replay::Store)
}

/// The events waiting in the spool: how many, and the time (unix ms) of the oldest. Files
/// being written (`.tmp…`) are not counted; claims in progress are (they are still events
/// the store does not hold). An unreadable spool directory is an error; a missing one, none.
pub(crate) fn backlog(home: &Home) -> Result<(usize, Option<i64>)> {
    let dir = dir(home);
    let entries = match std::fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((0, None)),
        Err(e) => return Err(Error::io(&dir, e)),
    };
    let mut count = 0;
    let mut oldest: Option<i64> = None;
    for entry in entries.flatten().take(SPOOL_CAP + 1) {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if name.starts_with('.') {
            continue;
        }
        count += 1;
        let ms = name.split('-').next().and_then(|t| t.parse::<i64>().ok());
        if let Some(ms) = ms {
            oldest = Some(oldest.map_or(ms, |o| o.min(ms)));
        }
    }
    Ok((count, oldest))
}

pub(crate) use crate::store::is_busy;

/// Redact every string in `value`, in place.
fn redact_strings(value: &mut Value) {
    match value {
        Value::String(s) => {
            if let std::borrow::Cow::Owned(clean) = crate::redact::redact(s) {
                *s = clean;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact_strings),
        Value::Object(map) => map.values_mut().for_each(redact_strings),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_string_is_redacted() {
        let mut v = json!({"tool_input": {"command": "PGPASSWORD=hunter2 psql"},
                           "list": ["token=abc123xyz"], "n": 3});
        redact_strings(&mut v);
        let text = v.to_string();
        assert!(
            !text.contains("hunter2") && !text.contains("abc123xyz"),
            "{text}"
        );
        assert_eq!(v["n"], 3);
    }
}
