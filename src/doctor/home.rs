//! Doctor's check that `$CALLUS_HOME` can be written: the hooks write every event, the
//! audit chain and their own errors log there, so a home they cannot write loses all of it
//! without a word (the hooks never fail a tool call over it). That is a failure, not the
//! "no store yet" of a fresh install.
//!
//! The probe is a temporary file created and removed at once, in the home or, when the home
//! does not exist yet, in the folder it would be created in; nothing else is written.

use std::path::Path;

use super::{Report, Status};
use crate::config::Home;

/// Add a `store` failure when `home` cannot be written.
pub(crate) fn check(home: &Home, report: &mut Report) {
    if let Err(why) = writable(&home.dir) {
        report.add(
            "store",
            Status::Fail,
            format!(
                "CALLUS_HOME {} is not writable ({why}): every hook event is lost, and the hooks' errors log with it (set CALLUS_HOME to a folder you can write)",
                home.dir.display()
            ),
        );
    }
}

/// Whether a file can be created in `dir`, or `dir` itself created.
fn writable(dir: &Path) -> Result<(), String> {
    let Some(existing) = dir.ancestors().find(|a| a.exists()) else {
        return Err("no part of the path exists".into());
    };
    if !existing.is_dir() {
        return Err(format!("{} is not a folder", existing.display()));
    }
    tempfile::Builder::new()
        .prefix(".callus-doctor-")
        .tempfile_in(existing)
        .map(drop)
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_home_under_a_file_or_missing_is_judged_by_what_exists() {
        let tmp = tempfile::tempdir().unwrap();
        assert!(writable(tmp.path()).is_ok());
        assert!(
            writable(&tmp.path().join("not/yet")).is_ok(),
            "created on first use"
        );
        let file = tmp.path().join("f");
        std::fs::write(&file, "").unwrap();
        let e = writable(&file.join("home")).unwrap_err();
        assert!(e.contains("is not a folder"), "{e}");
    }
}
