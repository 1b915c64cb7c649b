//! Scope: did a run write only what it said it would? (callusguard's `wroteonly`; README.md#scope.)
//!
//! A run **declares** what it may create, modify and delete, what it must never touch, and
//! which project checks guard it (`callus scope declare`). The tree is fingerprinted and the
//! checks run right then — the baseline. Afterwards `callus scope verify` (or the Stop hook)
//! rescans, diffs against the baseline, re-runs the checks, subtracts the findings that were
//! already there, and judges: `allow`, `warn`, `escalate` or `deny`. During the run,
//! `callus scope hook` refuses write tool calls that leave the declaration before they
//! happen, and refuses to let the agent stop while the run is in violation. Scope verifies;
//! it does not sandbox or roll back.
//!
//! Files: `declare` (the declaration; its glob semantics in `glob`), `fingerprint` (what
//! changed), `checks` (new findings only), `verdict` (the pure verdict table), `verify` (the
//! I/O around it), `state` (files under `$CALLUS_HOME/scope/<run-id>/`, and how the hook finds
//! its run), `render`, `hook`, `commands`.
//!
//! # Exit codes
//! Scope has its own contract, because a CI job branches on it:
//!
//! | code | meaning |
//! |---|---|
//! | 0 | allow, warn or escalate (the report says which) |
//! | 2 | deny: the run violated its declaration |
//! | 3 | bad input: a malformed declaration (the field is named), an unknown run id, **or a
//! command-line usage error** |
//! | 4 | the state directory could not be written |
//!
//! clap reports usage errors with exit 2, the code of a violation (callusguard had the same
//! collision). Rather than ask scripts to tell them apart by parsing stderr,
//! `callus scope …` usage errors exit 3 ([`usage_exit`]): a usage error, like a bad
//! declaration, means "no verdict was reached, fix the invocation". `--help` still exits 0.
//! The hook (`callus scope hook`) follows the hosts' protocol instead: 0 or 2.

mod checks;
pub(crate) mod commands;
mod declare;
mod fingerprint;
mod glob;
mod hook;
mod observation;
mod paths;
mod render;
mod state;
mod verdict;
mod verify;

pub(crate) use declare::DeclareRequest;

/// Exit code: allow, warn or escalate.
pub(crate) const EXIT_OK: u8 = 0;
/// Exit code: the run violated its declaration.
pub(crate) const EXIT_VIOLATION: u8 = 2;
/// Exit code: bad input (declaration, run id, or command line).
pub(crate) const EXIT_BAD_INPUT: u8 = 3;

/// `callus scope hook`: the hosts' protocol (0 or 2), its own exit code.
#[must_use]
pub(crate) fn hook() -> u8 {
    hook::run()
}

/// The exit code for a clap error: `callus scope …` usage errors exit
/// [`EXIT_BAD_INPUT`] so that 2 always means a violation; everything else keeps clap's code
/// (2 for usage, 0 for `--help`/`--version`). `args` are the process arguments after the
/// program name.
#[must_use]
pub(crate) fn usage_exit(
    err: &clap::Error,
    mut args: impl Iterator<Item = std::ffi::OsString>,
) -> u8 {
    let code = u8::try_from(err.exit_code()).unwrap_or(2);
    if code != 0 && args.next().is_some_and(|a| a == "scope") {
        EXIT_BAD_INPUT
    } else {
        code
    }
}
