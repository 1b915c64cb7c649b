//! Command shapes: the short key (`git push`, `psql`, `mcp__github__`) that derive groups
//! calls by, computed once at record time.
//!
//! For a shell command the shape is callusguard's (spec §6.4) taken from one segment: the
//! program's basename after leading `VAR=val` words, plus the next word when the program is
//! a multiplexer (`git`, `npm`, `cargo`, …) and that word is not a flag. When a command has
//! several segments (`cd x && FOO=1 psql …`) the shape comes from the segment that failed:
//! one whose program the error text names, else the last one; `cd`, `export`, `set`,
//! `source` and shell keywords are never chosen while another segment exists. Other tools
//! are their own shape; MCP tools are grouped per server (`mcp__<server>__`).
//!
//! [`segment_shape`] is the one place that turns a segment into a shape, so it can delegate
//! to the shell module's own once that lands.

use crate::shell::{self, MULTIPLEXERS, Segment, is_assignment};

/// Segments that set up the shell rather than do the work; never the failing segment while
/// another exists.
const SETUP: &[&str] = &[
    "cd", "pushd", "popd", "export", "set", "unset", "source", ".", "for", "while", "until", "do",
    "done", "if", "then", "else", "elif", "fi", "case", "esac", "in", "{", "}", "!", "function",
    "select", "local", "declare", "alias", "ulimit", "umask",
];

/// Tools whose input is a shell command.
#[must_use]
pub(crate) fn is_shell_tool(tool: &str) -> bool {
    matches!(
        tool,
        "Bash" | "PowerShell" | "shell" | "exec_command" | "local_shell" | "shell_command"
    )
}

/// The shape of a call: for shell tools, of the failing (or last) segment of `command`;
/// for other tools, the tool group. `None` when a shell command has no words.
#[must_use]
pub(crate) fn shape(tool: &str, command: Option<&str>, error: Option<&str>) -> Option<String> {
    if !is_shell_tool(tool) {
        return Some(tool_group(tool));
    }
    let split = shell::split(command?);
    let segment = failing_segment(&split.segments, error)?;
    let s = segment_shape(segment);
    (!s.is_empty()).then_some(s)
}

/// `mcp__<server>__` for MCP tools, else the tool name (spec §6.4 `_tool_group`).
#[must_use]
pub(crate) fn tool_group(tool: &str) -> String {
    if let Some(rest) = tool.strip_prefix("mcp__")
        && let Some((server, _)) = rest.split_once("__")
        && !server.is_empty()
    {
        return format!("mcp__{server}__");
    }
    tool.to_string()
}

/// Pick the segment that failed: the last one whose program the error names (preferring
/// one whose second shape word is named too), else the last segment that is not set-up.
#[must_use]
pub(crate) fn failing_segment<'a>(
    segments: &'a [Segment],
    error: Option<&str>,
) -> Option<&'a Segment> {
    let work: Vec<&Segment> = segments
        .iter()
        .filter(|s| program(s).is_some_and(|p| !SETUP.contains(&p)))
        .collect();
    if work.is_empty() {
        return segments.iter().rev().find(|s| program(s).is_some());
    }
    if let Some(error) = error
        .map(str::to_lowercase)
        .filter(|e| !e.trim().is_empty())
    {
        let mut best: Option<(usize, &Segment)> = None;
        for seg in &work {
            let tokens = shape_tokens(seg);
            let Some(head) = tokens.first() else { continue };
            if !names(&error, &head.to_lowercase()) {
                continue;
            }
            let score = 1 + usize::from(
                tokens
                    .get(1)
                    .is_some_and(|t| names(&error, &t.to_lowercase())),
            );
            if best.is_none_or(|(b, _)| score >= b) {
                best = Some((score, seg));
            }
        }
        if let Some((_, seg)) = best {
            return Some(seg);
        }
    }
    // A wrapper's own segment (`sudo rm -rf x` → `sudo`) speaks for the command it runs,
    // as callusguard's shape does, unless the error named the wrapped program above.
    work.iter()
        .rev()
        .find(|s| !matches!(s.origin, crate::shell::Origin::Wrapped(_)))
        .or(work.last())
        .copied()
}

/// The shape of one segment: basename of the program after `VAR=val` words, plus the next
/// word for multiplexers.
#[must_use]
pub(crate) fn segment_shape(segment: &Segment) -> String {
    shape_tokens(segment).join(" ")
}

fn shape_tokens(segment: &Segment) -> Vec<&str> {
    let mut words = segment
        .argv
        .iter()
        .map(String::as_str)
        .skip_while(|w| is_assignment(w));
    let Some(first) = words.next() else {
        return Vec::new();
    };
    let head = basename(first);
    match words.next() {
        Some(next) if MULTIPLEXERS.contains(&head) && !next.starts_with('-') => vec![head, next],
        _ => vec![head],
    }
}

/// The segment's program, when its first word can name one (not a number or a
/// redirection left over by a split such as `2>&1`).
fn program(segment: &Segment) -> Option<&str> {
    segment
        .argv
        .iter()
        .map(String::as_str)
        .find(|w| !is_assignment(w))
        .filter(|w| {
            w.chars().next().is_some_and(|c| {
                c.is_alphanumeric() || matches!(c, '.' | '/' | '_' | '~' | '{' | '}' | '!')
            }) && !w
                .chars()
                .all(|c| c.is_ascii_digit() || c == '>' || c == '<' || c == '&')
        })
        .map(basename)
}

fn basename(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// Whether `error` (lowercased) mentions `word` as a whole word.
fn names(error: &str, word: &str) -> bool {
    if word.is_empty() {
        return false;
    }
    let is_word = |c: char| c.is_alphanumeric() || c == '_' || c == '-';
    error.match_indices(word).any(|(i, _)| {
        let before = error[..i].chars().next_back();
        let after = error[i + word.len()..].chars().next();
        !before.is_some_and(is_word) && !after.is_some_and(is_word)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(cmd: &str, err: Option<&str>) -> Option<String> {
        shape("Bash", Some(cmd), err)
    }

    #[test]
    fn callusguard_examples() {
        assert_eq!(sh("PGPASSWORD=x ./bin/psql -h h", None).unwrap(), "psql");
        assert_eq!(sh("git push origin main", None).unwrap(), "git push");
        assert_eq!(sh("git -C x status", None).unwrap(), "git");
        assert_eq!(
            sh("python3 scripts/fetch-tool.py --x", None).unwrap(),
            "python3 scripts/fetch-tool.py"
        );
        assert_eq!(sh("sudo rm -rf x", None).unwrap(), "sudo");
        assert_eq!(sh("/usr/bin/ls -la", None).unwrap(), "ls");
    }

    #[test]
    fn setup_segments_are_skipped() {
        assert_eq!(sh("cd build && ls", None).unwrap(), "ls");
        assert_eq!(
            sh("cd x && FOO=1 psql -c 'select 1'", None).unwrap(),
            "psql"
        );
        assert_eq!(
            sh("export A=1; set -e; make test", None).unwrap(),
            "make test"
        );
        assert_eq!(sh("cd build", None).unwrap(), "cd");
        assert_eq!(sh("", None), None);
    }

    #[test]
    fn the_segment_the_error_names_wins() {
        let cmd = "cd app && psql -c 'select 1' && echo done";
        assert_eq!(
            sh(cmd, Some("psql: error: connection refused")).unwrap(),
            "psql"
        );
        assert_eq!(sh(cmd, Some("something else")).unwrap(), "echo");
        // Both segments are npm: the one whose subcommand is named wins.
        let cmd = "npm install && npm test && ls";
        assert_eq!(
            sh(cmd, Some("npm ERR! install failed: E404")).unwrap(),
            "npm install"
        );
        // Leftovers of a redirection are not programs.
        assert_eq!(sh("cargo test 2>&1", None).unwrap(), "cargo test");
        // A word inside another word does not count.
        assert_eq!(sh("ls x; cat y", Some("class not found")).unwrap(), "cat");
    }

    #[test]
    fn other_tools_are_their_group() {
        assert_eq!(shape("Read", None, None).unwrap(), "Read");
        assert_eq!(
            shape("mcp__github__create_issue", None, None).unwrap(),
            "mcp__github__"
        );
        assert_eq!(shape("mcp__x", None, None).unwrap(), "mcp__x");
    }
}
