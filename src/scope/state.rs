//! Run state: one directory per run under `$CALLUS_HOME/scope/<run-id>/`, plain files.
//!
//! | file | written by | holds |
//! |---|---|---|
//! | `declaration.json` | `declare` (last, so its presence means the baseline is complete) | the declaration, root absolute |
//! | `baseline.json` | `declare` | the fingerprint and the baseline check runs |
//! | `observed.jsonl` | the `PreToolUse` hook | one line per permitted write call: tool, id, paths (attribution only) |
//! | `verdict.json` | `verify` and the Stop hook | the last verdict |
//! | `gate.json` | the hook | the session that claimed the run and consecutive refused Stops |
//!
//! Files, not the `SQLite` store: a run is a handful of documents read whole, the baseline of
//! a big tree is megabytes, and an operator can inspect or archive a run with `ls` and `jq`.
//! JSON files are replaced atomically (temp file in the same directory, then rename) and
//! are private to the user. Re-declaring a run id deletes the whole directory first, so no
//! stale observation, verdict or claim survives; `verify` never deletes it.
//!
//! Which run a hook event belongs to: `$CALLUS_SCOPE_RUN` names it explicitly; otherwise it
//! is the most recently declared run whose root contains the event's `cwd` and that is not
//! claimed by another session. The first session whose event finds an unclaimed run claims
//! it, so a later, unrelated session in the same repository is not held to an old
//! declaration.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::checks::CheckRun;
use super::declare::{Declaration, RootFrom};
use super::fingerprint::Snapshot;
use super::observation::Observation;
use super::verdict::Verdict;
use crate::config::{Home, replace_file};
use crate::{Error, Result};

/// The environment variable naming the run the hook enforces.
pub(crate) const RUN_ENV: &str = "CALLUS_SCOPE_RUN";

const DECLARATION: &str = "declaration.json";
const BASELINE: &str = "baseline.json";
const OBSERVED: &str = "observed.jsonl";
const VERDICT: &str = "verdict.json";
const GATE: &str = "gate.json";

/// The baseline taken at declare time.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Baseline {
    /// When it was taken (RFC 3339, UTC).
    pub(crate) taken_at: String,
    /// The fingerprint of the tree.
    pub(crate) files: Snapshot,
    /// The baseline run of every check.
    pub(crate) checks: Vec<CheckRun>,
}

/// The hook's bookkeeping for one run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Gate {
    /// The session that claimed the run.
    pub(crate) session: Option<String>,
    /// Consecutive Stops refused since the last accepted one.
    pub(crate) stop_refusals: u32,
}

/// One run's state directory.
#[derive(Debug, Clone)]
pub(crate) struct Run {
    /// The run id.
    pub(crate) id: String,
    /// `$CALLUS_HOME/scope/<id>`.
    pub(crate) dir: PathBuf,
}

/// `$CALLUS_HOME/scope`.
pub(crate) fn runs_dir(home: &Home) -> PathBuf {
    home.dir.join("scope")
}

impl Run {
    /// A fresh, empty state directory for `id` (validated), replacing any earlier one.
    pub(crate) fn create(home: &Home, id: &str) -> Result<Run> {
        let dir = runs_dir(home).join(id);
        if dir.exists() {
            std::fs::remove_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        }
        crate::config::ensure_private_dir(&dir)?;
        Ok(Run {
            id: id.to_string(),
            dir,
        })
    }

    /// The existing run `id`; an input error when it was never declared.
    pub(crate) fn open(home: &Home, id: &str) -> Result<Run> {
        let id = super::declare::valid_run_id(id, "--run-id")?;
        let dir = runs_dir(home).join(&id);
        if !dir.join(DECLARATION).is_file() {
            return Err(Error::Invalid(format!(
                "no run state for '{id}' under {}; run `callus scope declare --run-id {id} …` first",
                runs_dir(home).display()
            )));
        }
        Ok(Run { id, dir })
    }

    /// The stored declaration.
    pub(crate) fn declaration(&self) -> Result<Declaration> {
        let path = self.dir.join(DECLARATION);
        let value = read_json(&path)?;
        Declaration::from_value(&value, &path.display().to_string(), None, RootFrom::Stored)
    }

    /// Store the declaration (the last step of `declare`).
    pub(crate) fn save_declaration(&self, decl: &Declaration) -> Result<()> {
        replace_file(&self.dir.join(DECLARATION), &pretty(&decl.to_json()))
    }

    /// The stored baseline.
    pub(crate) fn baseline(&self) -> Result<Baseline> {
        let path = self.dir.join(BASELINE);
        let bytes = read_bytes(&path).map_err(|e| Error::io(&path, e))?;
        serde_json::from_slice(&bytes).map_err(|e| Error::json(path.display().to_string(), e))
    }

    /// Store the baseline (compact: it can be megabytes).
    pub(crate) fn save_baseline(&self, baseline: &Baseline) -> Result<()> {
        let path = self.dir.join(BASELINE);
        let bytes =
            serde_json::to_vec(baseline).map_err(|e| Error::json(path.display().to_string(), e))?;
        replace_file(&path, &bytes)
    }

    /// Append one observation (one compact JSON line; a single `write` so parallel hooks
    /// do not interleave).
    pub(crate) fn observe(&self, obs: &Observation) -> Result<()> {
        let path = self.dir.join(OBSERVED);
        let mut line =
            serde_json::to_vec(obs).map_err(|e| Error::json(path.display().to_string(), e))?;
        line.push(b'\n');
        let mut file = crate::untrusted::open_append(&path).map_err(|e| Error::io(&path, e))?;
        file.write_all(&line).map_err(|e| Error::io(&path, e))
    }

    /// Every readable observation, in order (a torn line is skipped: attribution only).
    pub(crate) fn observations(&self) -> Vec<Observation> {
        read_bytes(&self.dir.join(OBSERVED))
            .ok()
            .and_then(|b| String::from_utf8(b).ok())
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// The last verdict, if any.
    pub(crate) fn verdict(&self) -> Result<Option<Verdict>> {
        let path = self.dir.join(VERDICT);
        if !path.exists() {
            return Ok(None);
        }
        let value = read_json(&path)?;
        serde_json::from_value(value)
            .map(Some)
            .map_err(|e| Error::json(path.display().to_string(), e))
    }

    /// Store the last verdict.
    pub(crate) fn save_verdict(&self, verdict: &Verdict) -> Result<()> {
        let path = self.dir.join(VERDICT);
        let value = serde_json::to_value(verdict)
            .map_err(|e| Error::json(path.display().to_string(), e))?;
        replace_file(&path, &pretty(&value))
    }

    /// The hook's bookkeeping (default when absent or unreadable).
    pub(crate) fn gate(&self) -> Gate {
        read_bytes(&self.dir.join(GATE))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
    }

    /// Store the hook's bookkeeping.
    pub(crate) fn save_gate(&self, gate: &Gate) -> Result<()> {
        let value = serde_json::to_value(gate)
            .map_err(|e| Error::json(self.dir.join(GATE).display().to_string(), e))?;
        replace_file(&self.dir.join(GATE), &pretty(&value))
    }
}

/// The run a hook event in `cwd` from `session` belongs to, claiming it for the session if
/// it is unclaimed. `None`: scope has no opinion about this event.
pub(crate) fn active(home: &Home, cwd: &Path, session: &str) -> Result<Option<(Run, Declaration)>> {
    if let Some(id) = std::env::var(RUN_ENV).ok().filter(|v| !v.trim().is_empty()) {
        let run = Run::open(home, id.trim())?;
        let decl = run.declaration()?;
        return Ok(Some((run, decl)));
    }
    let cwd = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
    let Ok(entries) = std::fs::read_dir(runs_dir(home)) else {
        return Ok(None);
    };
    let mut best: Option<(Run, Declaration)> = None;
    for entry in entries.flatten() {
        let Some(id) = entry.file_name().to_str().map(str::to_string) else {
            continue;
        };
        let Ok(run) = Run::open(home, &id) else {
            continue; // not a run, or one still being declared
        };
        // A damaged run is left out rather than wedging every session; `show` reports it.
        let Ok(decl) = run.declaration() else {
            continue;
        };
        if !cwd.starts_with(&decl.root) {
            continue;
        }
        let claimed = run.gate().session;
        if claimed.is_some_and(|s| s != session) {
            continue;
        }
        if best
            .as_ref()
            .is_none_or(|(_, b)| decl.declared_at > b.declared_at)
        {
            best = Some((run, decl));
        }
    }
    if let Some((run, _)) = &best {
        let mut gate = run.gate();
        if gate.session.is_none() && !session.is_empty() {
            gate.session = Some(session.to_string());
            run.save_gate(&gate)?;
        }
    }
    Ok(best)
}

/// Largest state file read (a baseline of a huge tree stays far below it).
const STATE_CAP: u64 = 256 << 20;

/// The bytes of a state file, read as an untrusted one: the agent can write this
/// directory too, so a FIFO or device in a file's place is refused at once (never a hang)
/// and a file past [`STATE_CAP`] is refused.
fn read_bytes(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read as _;
    let file = crate::untrusted::open_regular(path)?;
    let mut bytes = Vec::new();
    file.take(STATE_CAP + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > STATE_CAP {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("over the {STATE_CAP}-byte cap"),
        ));
    }
    Ok(bytes)
}

fn read_json(path: &Path) -> Result<Value> {
    let bytes = read_bytes(path).map_err(|e| Error::io(path, e))?;
    serde_json::from_slice(&bytes).map_err(|e| Error::json(path.display().to_string(), e))
}

fn pretty(value: &Value) -> Vec<u8> {
    let mut bytes = serde_json::to_vec_pretty(value).unwrap_or_default();
    bytes.push(b'\n');
    bytes
}
