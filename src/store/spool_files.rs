//! A spool directory's files, shared by the recorder's event spool (`record::spool`) and
//! the guard's audit spool (`store::audit_spool`): one entry per file, claimed by renaming
//! it before it is replayed so that two processes never replay the same entry, a claim
//! whose process died taken over after [`STALE_CLAIM`], and a spooler's half-written
//! temporary file removed after the same age.
//!
//! Guarantees: [`drain`] replays each claimable entry at most once per claim, oldest name
//! first, at most `batch` per call; an entry the store cannot take now is put back under
//! its own name; an entry that can never be replayed is removed and reported; an emptied
//! directory is removed, so the next call's check is one failed `read_dir`.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// Age after which another process's claim is taken over.
pub(crate) const STALE_CLAIM: Duration = Duration::from_secs(60);

const CLAIM: &str = ".claim-";

/// What replaying one entry came to.
pub(crate) enum Replayed {
    /// Stored: the file goes.
    Stored,
    /// Not an entry (nothing will ever make it one): the file goes, and this is reported.
    Bad(String),
    /// The store refused it for now: put back, and the drain stops here.
    Retry(String),
}

/// Replay what `dir` holds, oldest first, at most `batch` entries; `problem` hears of every
/// bad entry and of the first refusal. Returns how many were stored.
pub(crate) fn drain(
    dir: &Path,
    batch: usize,
    mut replay: impl FnMut(&Path) -> Replayed,
    mut problem: impl FnMut(String),
) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0; // no spool: the common case, one failed syscall
    };
    let mut names: Vec<PathBuf> = Vec::new();
    for path in entries.filter_map(|e| e.ok().map(|e| e.path())) {
        if claimable(&path) {
            names.push(path);
        } else if abandoned_temp(&path) {
            let _ = std::fs::remove_file(&path); // a spooler killed mid-write
        }
    }
    names.sort();
    let mut stored = 0;
    for path in names.into_iter().take(batch) {
        let claimed = claimed_name(&path);
        if std::fs::rename(&path, &claimed).is_err() {
            continue; // another process took it
        }
        match replay(&claimed) {
            Replayed::Stored => {
                let _ = std::fs::remove_file(&claimed);
                stored += 1;
            }
            Replayed::Bad(why) => {
                problem(format!(
                    "{} dropped: {why}",
                    original_name(&claimed).display()
                ));
                let _ = std::fs::remove_file(&claimed);
            }
            Replayed::Retry(why) => {
                let _ = std::fs::rename(&claimed, original_name(&claimed));
                problem(why);
                break;
            }
        }
    }
    // Fails, harmlessly, while anything is left in it.
    let _ = std::fs::remove_dir(dir);
    stored
}

/// Entries waiting in `dir` (claims included: a claim is an entry not yet stored).
pub(crate) fn waiting(dir: &Path) -> usize {
    std::fs::read_dir(dir).map_or(0, |entries| {
        entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                let name = original_name(p);
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| !n.starts_with('.'))
                    && name
                        .extension()
                        .is_some_and(|e| e.eq_ignore_ascii_case("json"))
            })
            .count()
    })
}

/// A spooled entry, or a claim old enough to be abandoned.
pub(crate) fn claimable(path: &Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    if name.starts_with('.') {
        return false; // still being written
    }
    if Path::new(name)
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"))
    {
        return true;
    }
    name.contains(CLAIM) && older_than(path, STALE_CLAIM)
}

/// A temporary file of a spooler that died before renaming it into place.
pub(crate) fn abandoned_temp(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with(".tmp"))
        && older_than(path, STALE_CLAIM)
}

fn older_than(path: &Path, age: Duration) -> bool {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_some_and(|a| a > age)
}

/// `X.json` → `X.json.claim-PID` (a claim keeps its original name in front).
pub(crate) fn claimed_name(path: &Path) -> PathBuf {
    let original = original_name(path);
    let mut name = original.into_os_string();
    name.push(format!("{CLAIM}{}", std::process::id()));
    PathBuf::from(name)
}

/// `X.json.claim-PID` → `X.json`.
pub(crate) fn original_name(path: &Path) -> PathBuf {
    let text = path.to_string_lossy();
    match text.find(CLAIM) {
        Some(at) => PathBuf::from(&text[..at]),
        None => path.to_path_buf(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_round_trip_and_fresh_claims_are_left_alone() {
        let tmp = tempfile::tempdir().unwrap();
        let spooled = tmp.path().join("0000000000001-7-000000001.json");
        std::fs::write(&spooled, "{}").unwrap();
        let claimed = claimed_name(&spooled);
        assert!(
            claimed
                .to_string_lossy()
                .ends_with(&format!(".json{CLAIM}{}", std::process::id()))
        );
        assert_eq!(original_name(&claimed), spooled);
        assert_eq!(claimed_name(&claimed), claimed);
        assert!(claimable(&spooled));
        std::fs::rename(&spooled, &claimed).unwrap();
        assert!(!claimable(&claimed), "a fresh claim belongs to its process");
        assert_eq!(waiting(tmp.path()), 1, "a claim still waits");
        let half_written = tmp.path().join(".tmp-abc");
        std::fs::write(&half_written, "{").unwrap();
        assert!(!claimable(&half_written));
        assert_eq!(waiting(tmp.path()), 1);
        assert!(
            !abandoned_temp(&half_written),
            "a fresh temporary file is still being written"
        );
    }

    #[test]
    fn a_drain_stores_bad_entries_go_and_a_refusal_puts_back_and_stops() {
        let tmp = tempfile::tempdir().unwrap();
        for (i, body) in ["ok", "bad", "later", "after"].iter().enumerate() {
            std::fs::write(tmp.path().join(format!("{i:013}.json")), body).unwrap();
        }
        let mut problems = Vec::new();
        let stored = drain(
            tmp.path(),
            10,
            |p| match std::fs::read_to_string(p).unwrap().as_str() {
                "ok" => Replayed::Stored,
                "bad" => Replayed::Bad("not an entry".into()),
                _ => Replayed::Retry("busy".into()),
            },
            |p| problems.push(p),
        );
        assert_eq!(stored, 1);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].ends_with("0000000000001.json dropped: not an entry"));
        assert_eq!(problems[1], "busy");
        // "later" is back under its own name; "after" was never tried.
        let mut left: Vec<String> = std::fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["0000000000002.json", "0000000000003.json"]);
    }
}
