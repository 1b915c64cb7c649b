//! Command shape (as `docs/outcomes.md` defines it): the key failures and attempts are
//! grouped by.
//!
//! The program's basename, plus the next word when the program is a multiplexer whose
//! subcommand matters (`git push`, `docker compose`, `python3 scripts/x.py`) and that word
//! does not start with `-` (`git -C x status` → `git`). Taken from a [`Segment`], so leading
//! assignments and transparent wrappers are already gone (`PGPASSWORD=x ./bin/psql -h h` →
//! `psql`) and a `sudo` segment has shape `sudo` while the command it runs has its own.

use crate::shell::Segment;
use crate::shell::programs::{Shape, find};

/// The command shape of `segment`: `""` for a segment without a program.
#[must_use]
pub(crate) fn shape(segment: &Segment) -> String {
    let mut words = segment.argv.iter();
    let Some(head) = words.next() else {
        return String::new();
    };
    let head = head
        .rsplit('/')
        .next()
        .filter(|h| !h.is_empty())
        .unwrap_or(head);
    match words.next() {
        Some(next)
            if find(head).is_some_and(|r| r.shape == Shape::Subcommand)
                && !next.is_empty()
                && !next.starts_with('-') =>
        {
            format!("{head} {next}")
        }
        _ => head.to_owned(),
    }
}
