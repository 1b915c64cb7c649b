//! Command shape (callusguard spec §6.4): the key failures and attempts are grouped by.
//!
//! The program's basename, plus the next word when the program is a multiplexer whose
//! subcommand matters (`git push`, `docker compose`, `python3 scripts/x.py`) and that word
//! does not start with `-` (`git -C x status` → `git`). Taken from a [`Segment`], so leading
//! assignments and transparent wrappers are already gone (`PGPASSWORD=x ./bin/psql -h h` →
//! `psql`) and a `sudo` segment has shape `sudo` while the command it runs has its own.

use crate::shell::Segment;

/// Programs whose first non-option argument is part of the shape (spec §6.4, in its order).
pub(crate) const MULTIPLEXERS: &[&str] = &[
    "git",
    "npm",
    "pnpm",
    "yarn",
    "docker",
    "kubectl",
    "cargo",
    "go",
    "pip",
    "pip3",
    "python",
    "python3",
    "psql",
    "aws",
    "gcloud",
    "make",
    "brew",
    "apt",
    "apt-get",
    "systemctl",
    "launchctl",
];

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
            if MULTIPLEXERS.contains(&head) && !next.is_empty() && !next.starts_with('-') =>
        {
            format!("{head} {next}")
        }
        _ => head.to_owned(),
    }
}
