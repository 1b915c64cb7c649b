//! Taking the baseline and verifying a run against it: the I/O around the pure verdict
//! table. Used by `declare`, `verify` and the Stop hook alike, so the command line and the
//! hook can never disagree about a run.

use std::path::PathBuf;

use super::checks::{self, Degraded, Delta};
use super::declare::Declaration;
use super::fingerprint::{self, MAX_FILES, Scope};
use super::state::{Baseline, Run};
use super::verdict::{self, Inputs, Verdict};
use crate::config::Home;
use crate::{Error, Result};

/// What the fingerprint leaves out for `decl`: its `skip` globs and callus's own home.
fn scan_scope<'a>(decl: &'a Declaration, home: &Home) -> Scope<'a> {
    let exclude: Vec<PathBuf> = std::fs::canonicalize(&home.dir).into_iter().collect();
    Scope {
        skip: &decl.skip,
        exclude,
        max_files: MAX_FILES,
    }
}

/// Fingerprint the tree and run every check: the state `verify` compares against.
/// A tree that cannot be fingerprinted is an input error: a run without a baseline could
/// never be verified, so it is refused at declare time rather than discovered at the end.
pub(crate) fn take_baseline(decl: &Declaration, home: &Home) -> Result<Baseline> {
    let files = fingerprint::scan(&decl.root, &scan_scope(decl, home))
        .map_err(|e| Error::Invalid(format!("cannot fingerprint the root: {e}")))?;
    Ok(Baseline {
        taken_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        files,
        checks: checks::run_all(&decl.checks, &decl.root),
    })
}

/// Rescan, re-run the checks, judge, and store the verdict.
pub(crate) fn verify(run: &Run, decl: &Declaration, home: &Home) -> Result<Verdict> {
    let (changes, delta) = match run.baseline() {
        Ok(baseline) => {
            let changes = fingerprint::scan(&decl.root, &scan_scope(decl, home))
                .map(|after| fingerprint::diff(&baseline.files, &after));
            let after = checks::run_all(&decl.checks, &decl.root);
            (changes, checks::compare(&baseline.checks, &after))
        }
        Err(e) => {
            let why = format!("the baseline is unreadable: {e}");
            let degraded = decl
                .checks
                .iter()
                .map(|c| Degraded {
                    check: c.name.clone(),
                    why: why.clone(),
                })
                .collect();
            (
                Err(why),
                Delta {
                    degraded,
                    ..Delta::default()
                },
            )
        }
    };
    let observations = run.observations();
    let verdict = verdict::judge(Inputs {
        decl,
        changes,
        observations: &observations,
        delta,
    });
    run.save_verdict(&verdict)?;
    Ok(verdict)
}
