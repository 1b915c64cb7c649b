//! Command shapes: the short key (`git push`, `psql`, `mcp__github__`) that derive groups
//! calls by, computed once at record time.
//!
//! For a shell command the shape is that of the program the failure is blamed on
//! ([`crate::shell::blame`], the same choice derive makes: the program the error text names,
//! else the one the exit status belongs to; builtins such as `cd`, `export` or `echo` are
//! never chosen), and the blamed segment's text is stored beside it; [`shape_and_blamed`]
//! computes both from one split. A command that ran only builtins keeps the shape of its last segment (`cd build`
//! → `cd`), so every shell call has one. Other tools are their own shape; MCP tools are
//! grouped per server (`mcp__<server>__`).

use crate::host::call::is_shell as is_shell_tool;
use crate::redact;
use crate::shell::{self, blame::blame};

/// Largest stored blamed segment, in bytes (after redaction).
pub(crate) const BLAMED_CAP: usize = 512;

/// The shape of a call: for shell tools, of the failing (or last) segment of `command`;
/// for other tools, the tool group. `None` when a shell command has no words.
#[cfg(test)]
#[must_use]
pub(crate) fn shape(tool: &str, command: Option<&str>, error: Option<&str>) -> Option<String> {
    shape_and_blamed(tool, command, error, false).0
}

/// The text of the segment a shell call's failure is blamed on (the one its shape comes
/// from), redacted and capped at [`BLAMED_CAP`] bytes; `None` for other tools, for a command
/// that ran only builtins, or when nothing is left after redaction.
#[cfg(test)]
#[must_use]
pub(crate) fn blamed(tool: &str, command: Option<&str>, error: Option<&str>) -> Option<String> {
    shape_and_blamed(tool, command, error, true).1
}

/// The call's shape and, when `want_blamed`, its blamed segment's text, from one split and
/// one blame of the command, so the two always agree. The shape: for shell tools, that of the
/// blamed (or last) segment of `command`, `None` when it has no words; for other tools, the
/// tool group. The blamed text: redacted and capped at [`BLAMED_CAP`] bytes; `None` for
/// other tools, for a command that ran only builtins, or when nothing is left.
#[must_use]
pub(crate) fn shape_and_blamed(
    tool: &str,
    command: Option<&str>,
    error: Option<&str>,
    want_blamed: bool,
) -> (Option<String>, Option<String>) {
    if !is_shell_tool(tool) {
        return (Some(tool_group(tool)), None);
    }
    let Some(command) = command else {
        return (None, None);
    };
    let split = shell::split(command);
    let found = blame(&split.segments, error.unwrap_or_default());
    let blamed = found
        .as_ref()
        .filter(|_| want_blamed)
        .map(|b| redact::redact_capped_bytes(b.text(), BLAMED_CAP))
        .filter(|t| !t.is_empty());
    let shape = match found {
        Some(b) => Some(b.program.shape),
        None => split
            .segments
            .iter()
            .rev()
            .map(shell::shape)
            .find(|s| !s.is_empty()),
    };
    (shape.filter(|s| !s.is_empty()), blamed)
}

/// `mcp__<server>__` for MCP tools, else the tool name (callusguard's `_tool_group`).
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
        // The program sudo runs speaks for it, unless the error names sudo.
        assert_eq!(sh("sudo rm -rf x", None).unwrap(), "rm");
        assert_eq!(
            sh("sudo rm -rf x", Some("sudo: a password is required")).unwrap(),
            "sudo"
        );
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
        // `echo` is a builtin, never the failing program: the last program is.
        assert_eq!(sh(cmd, Some("something else")).unwrap(), "psql");
        assert_eq!(sh("cd app && make && ls", Some("oops")).unwrap(), "ls");
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
    fn blamed_is_the_shaped_segment_redacted_and_capped() {
        let b = |cmd: &str, err: Option<&str>| blamed("Bash", Some(cmd), err);
        assert_eq!(
            b("cd x && npm test 2>&1 | tail -5", Some("Exit code 1")).as_deref(),
            Some("npm test")
        );
        assert_eq!(
            sh("cd x && npm test 2>&1 | tail -5", None).unwrap(),
            "npm test"
        );
        assert_eq!(b("cd x", None), None);
        assert_eq!(blamed("Read", Some("x"), None), None);
        assert_eq!(blamed("Bash", None, None), None);
        let long = format!("grep {} f", "y".repeat(2000));
        assert_eq!(b(&long, None).unwrap().len(), BLAMED_CAP);
        let secret = "curl -H 'Authorization: Bearer ghp_abcdefghijklmnopqrstuvwxyz0123456789' x";
        assert!(!b(secret, None).unwrap().contains("ghp_abcdef"));
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
