//! `callus session resume ID`: lift the RECUSE halt on a session.
//!
//! A halted session is nothing but its marker file under `$CALLUS_HOME/halted/` (written by
//! [`crate::recuse::scan`], read by `callus guard`), so resuming removes that file and says
//! what the halt was. Resuming a session that is not halted is not an error: it says so.

use crate::config::Home;
use crate::{Error, Exit, Result};

/// `callus session resume ID`: remove session `id`'s halt marker and say what it was.
pub(crate) fn resume(home: &Home, id: &str) -> Result<Exit> {
    if id.trim().is_empty() {
        return Err(Error::Invalid("session id is empty".into()));
    }
    let marker = crate::recuse::marker_path(home, id);
    match std::fs::read_to_string(&marker) {
        Ok(text) => {
            std::fs::remove_file(&marker).map_err(|e| Error::io(&marker, e))?;
            let reason = text.lines().next().unwrap_or("halt").trim();
            println!("session {id} resumed: lifted the halt ({reason})");
            Ok(Exit::Ok)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            println!("session {id} was not halted: nothing to lift");
            Ok(Exit::Ok)
        }
        Err(e) => Err(Error::io(&marker, e)),
    }
}
