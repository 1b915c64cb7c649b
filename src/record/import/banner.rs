//! The login shell's banner: lines a shell profile prints before every command of a session.
//!
//! Codex runs each shell call in a login shell (`bash -lc`, `zsh -lc`), so whatever the
//! user's profile prints (a version manager saying which version it switched to, a greeting,
//! the profile's own complaint) opens the output of every call, before the command ran. The
//! exit status is still the command's, but read with the banner in front, an empty search
//! is no longer silent and the error line is the profile's. Such lines are told by
//! recurrence, never by their wording: a first line is the banner's when it opens at least
//! [`MIN_CALLS`] outputs and three quarters of the session's shell calls that printed
//! anything, of at least [`MIN_PROGRAMS`] different programs (one program run again and
//! again prints its own header: `apply_patch`'s `Success. Updated the following files:`, a
//! test runner's session line). [`strip`] removes it, then looks again at what is left, up
//! to [`MAX_LINES`] lines.

use std::collections::{HashMap, HashSet};

/// Fewest outputs a banner line opens.
const MIN_CALLS: usize = 3;
/// Fewest different programs (the first of each command) whose outputs it opens.
const MIN_PROGRAMS: usize = 3;
/// Most banner lines removed from the front of an output.
const MAX_LINES: usize = 5;

/// One shell call of a session: its command and its output, which [`strip`] may shorten.
pub(super) struct Output<'a> {
    pub command: &'a str,
    pub text: &'a mut String,
}

/// Remove the login shell's banner lines from the front of a session's shell `outputs`.
pub(super) fn strip(outputs: &mut [Output<'_>]) {
    for _ in 0..MAX_LINES {
        let Some(line) = banner_line(outputs) else {
            return;
        };
        for out in outputs.iter_mut() {
            if first_line(out.text) == Some(line.as_str()) {
                let rest = out.text.split_once('\n').map_or("", |(_, rest)| rest);
                *out.text = rest.to_string();
            }
        }
    }
}

/// The first line of an output, without its line ending; `None` when it is blank.
fn first_line(text: &str) -> Option<&str> {
    let line = text.split('\n').next()?.trim_end_matches('\r');
    (!line.trim().is_empty()).then_some(line)
}

/// The first line that opens enough of the outputs, of enough programs, to be the banner.
fn banner_line(outputs: &[Output<'_>]) -> Option<String> {
    let printed = outputs.iter().filter(|o| !o.text.trim().is_empty()).count();
    let mut seen: HashMap<&str, (usize, HashSet<String>)> = HashMap::new();
    for out in outputs {
        if let Some(line) = first_line(out.text) {
            let (n, programs) = seen.entry(line).or_default();
            *n += 1;
            programs.insert(program(out.command));
        }
    }
    // At most one line opens three quarters of the outputs.
    seen.into_iter()
        .find(|(_, (n, programs))| {
            *n >= MIN_CALLS && *n * 4 >= printed * 3 && programs.len() >= MIN_PROGRAMS
        })
        .map(|(line, _)| line.to_string())
}

/// The program of a command's first segment (empty when it has none).
fn program(command: &str) -> String {
    crate::shell::split(command)
        .segments
        .first()
        .and_then(crate::shell::Segment::program)
        .unwrap_or_default()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Strip a session of `(command, output)` calls; the outputs after.
    fn run(calls: &[(&str, &str)]) -> Vec<String> {
        let mut texts: Vec<String> = calls.iter().map(|(_, o)| (*o).to_string()).collect();
        let mut outputs: Vec<Output<'_>> = calls
            .iter()
            .zip(texts.iter_mut())
            .map(|((command, _), text)| Output { command, text })
            .collect();
        strip(&mut outputs);
        texts
    }

    #[test]
    fn a_line_opening_every_command_of_the_session_is_removed() {
        let out = run(&[
            ("ls a", "Profile says hi\r\nProfile line two\n"),
            ("grep x f", "Profile says hi\r\nProfile line two\nx here\n"),
            (
                "cargo fmt",
                "Profile says hi\r\nProfile line two\nerror: boom\n",
            ),
            ("true", ""),
        ]);
        assert_eq!(out, ["", "x here\n", "error: boom\n", ""]);
    }

    #[test]
    fn a_line_opening_the_outputs_of_one_or_two_programs_is_not_a_banner() {
        let header = "Success. Updated the following files:\n";
        let patches = [
            ("apply_patch <<'EOF'\n*** Begin Patch a", header),
            ("apply_patch <<'EOF'\n*** Begin Patch b", header),
            ("cd /w && apply_patch <<'EOF'\n*** Begin Patch c", header),
            ("FOO=1 cat VERSION", header),
        ];
        // Two programs (apply_patch, cat; `cd` opens the third command): not a banner.
        let mut two = patches.to_vec();
        two[2].0 = "apply_patch <<'EOF'\n*** Begin Patch c";
        assert_eq!(run(&two), [header; 4]);
        // Three programs: the banner.
        assert_eq!(run(&patches), [""; 4]);
    }

    #[test]
    fn a_banner_opens_three_calls_and_three_quarters_of_those_that_printed() {
        let banner = [("a", "B\n1"), ("b", "B\n2"), ("c", "B\n3")];
        assert_eq!(run(&banner[..2]), ["B\n1", "B\n2"], "two calls are too few");
        assert_eq!(run(&banner), ["1", "2", "3"]);
        // Three of four that printed: still the banner; three of five: not.
        let mut four = banner.to_vec();
        four.push(("d", "other\n"));
        assert_eq!(run(&four), ["1", "2", "3", "other\n"]);
        let mut five = four.clone();
        five.push(("e", "more\n"));
        assert_eq!(run(&five), ["B\n1", "B\n2", "B\n3", "other\n", "more\n"]);
        // A silent call does not count against it.
        four.push(("e", "  \n"));
        assert_eq!(run(&four)[..3], ["1", "2", "3"]);
    }

    #[test]
    fn blank_first_lines_are_never_a_banner_and_at_most_five_lines_go() {
        assert_eq!(
            run(&[("a", "\nx"), ("b", "\ny"), ("c", "\nz")]),
            ["\nx", "\ny", "\nz"]
        );
        let long = "1\n2\n3\n4\n5\n6\nend";
        assert_eq!(run(&[("a", long), ("b", long), ("c", long)]), ["6\nend"; 3]);
    }

    #[test]
    fn only_the_line_opening_most_outputs_goes() {
        let out = run(&[
            ("a", "P\n1"),
            ("b", "P\n2"),
            ("c", "P\n3"),
            ("d", "P\n4"),
            ("e", "Q\n5"),
        ]);
        assert_eq!(out, ["1", "2", "3", "4", "Q\n5"]);
    }
}
