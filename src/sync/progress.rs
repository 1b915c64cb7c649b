//! Progress of a long push or team read, on stderr.
//!
//! Shown only when stderr is a terminal (one line, rewritten in place) or when asked for
//! (`sync push --progress`, or `CALLUS_PROGRESS=1` for any command: then one line per step,
//! for logs). Steps are every tenth of the total and at most one a second on a terminal, so
//! a million rows print a handful of lines, never one per row. Nothing is shown otherwise:
//! scripts and hooks see exactly the output they saw before.

use std::io::{IsTerminal as _, Write as _};
use std::time::{Duration, Instant};

/// Least time between two redraws on a terminal.
const TICK: Duration = Duration::from_millis(500);

/// A progress reporter for one phase (`what`) of `total` units.
#[derive(Debug)]
pub(crate) struct Progress {
    what: String,
    total: u64,
    done: u64,
    next_step: u64,
    tty: bool,
    enabled: bool,
    last: Instant,
}

/// Whether progress is wanted: asked for, `CALLUS_PROGRESS=1`, or stderr is a terminal.
#[must_use]
pub(crate) fn wanted(asked: bool) -> bool {
    asked || std::env::var_os("CALLUS_PROGRESS").is_some_and(|v| v == "1") || is_tty()
}

fn is_tty() -> bool {
    std::io::stderr().is_terminal()
}

impl Progress {
    /// Start a phase; prints nothing when `enabled` is false.
    #[must_use]
    pub(crate) fn new(what: impl Into<String>, total: u64, enabled: bool) -> Self {
        Progress {
            what: what.into(),
            total,
            done: 0,
            next_step: step(total),
            tty: is_tty(),
            enabled,
            last: Instant::now(),
        }
    }

    /// Say something once (a phase with no count, like the server-side read).
    pub(crate) fn note(enabled: bool, text: &str) {
        if enabled {
            eprintln!("callus: {text}");
        }
    }

    /// `n` more units done.
    pub(crate) fn add(&mut self, n: u64) {
        self.done += n;
        if !self.enabled || self.done < self.next_step {
            return;
        }
        self.next_step = self.done + step(self.total);
        if self.tty {
            if self.last.elapsed() >= TICK {
                self.last = Instant::now();
                eprint!("\rcallus: {} {}/{}\x1b[K", self.what, self.done, self.total);
                let _ = std::io::stderr().flush();
            }
        } else {
            eprintln!("callus: {} {}/{}", self.what, self.done, self.total);
        }
    }

    /// The phase is over: the final count is shown (a terminal's line is finished).
    pub(crate) fn finish(&self) {
        if !self.enabled || self.total == 0 {
            return;
        }
        if self.tty {
            eprintln!("\rcallus: {} {}/{}\x1b[K", self.what, self.done, self.total);
        } else if self.next_step != self.done + step(self.total) {
            // The last step printed was not the end.
            eprintln!("callus: {} {}/{}", self.what, self.done, self.total);
        }
    }
}

/// A tenth of `total`, at least one.
fn step(total: u64) -> u64 {
    (total / 10).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_are_tenths_of_the_total_and_never_zero() {
        assert_eq!(step(0), 1);
        assert_eq!(step(9), 1);
        assert_eq!(step(1_000_000), 100_000);
        let mut p = Progress::new("x", 100, false);
        p.add(35);
        assert_eq!(p.done, 35);
        assert_eq!(p.next_step, 10, "disabled: no step is taken");
    }
}
