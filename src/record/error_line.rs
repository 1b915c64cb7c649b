//! The line of an output that carries its error, and what varies per call within it.
//!
//! A failing command often prints unrelated output before its error (a progress log, a
//! banner, an ssh warning, the lines of an earlier pipeline stage): a signature of the whole
//! text splits one failure into as many signatures as there were preambles. [`error_line`]
//! picks the line that carries the error: after a leading `Exit code N` line, inside a
//! host's wrapper (`failed in sandbox … exit code: N, stdout: …`) and with ANSI colour codes
//! removed, the telling line where a tool prints one away from its first and last lines
//! (npm's `npm ERR! code X`, read as `npm error code X`; pytest's first `E   XxxError: …`),
//! else the first line that reads as an error (`prog: …` with an error
//! word, `error:`, `fatal:`, `… not found`, `Permission denied`, …; for a Python
//! traceback, its last exception line), else the last non-empty line. Banner and warning
//! lines (`** WARNING: …` from ssh, `warning:`, `hint:`) are never the error; an output of
//! nothing else has no error line. [`varying`] then
//! replaces what differs from call to call and that the shared normalisation (see
//! `signature`) leaves: URLs, `user@host`, domain names, `[REDACTED_*]` markers.
//!
//! [`masked_line`] is the stricter test for a *successful* call's output: only a line that
//! names a program of the command and carries an error word (`sudo: a terminal is required
//! …` hidden by `| head`) counts, so ordinary output is never mistaken for an error.

/// Words that make a line read as an error, lowercase.
const ERROR_WORDS: &[&str] = &[
    "error",
    "fatal",
    "failed",
    "failure",
    "not found",
    "no such file",
    "permission denied",
    "denied",
    "cannot",
    "can't",
    "could not",
    "couldn't",
    "unable to",
    "invalid",
    "unrecognized",
    "unrecognised",
    "unknown option",
    "illegal option",
    "not recognized",
    "is required",
    "required to",
    "refused",
    "rejected",
    "timed out",
    "exceeds",
    "does not exist",
    "not permitted",
    "no module named",
    "unexpected",
    "usage:",
    "must ",
    "missing",
    "violation",
];

/// Does a lowercase line read as an error?
fn reads_as_error(lower: &str) -> bool {
    !is_noise(lower) && ERROR_WORDS.iter().any(|w| lower.contains(w))
}

/// A short line ending in `:` that only announces what follows (`Collected errors:`).
fn is_header(line: &str) -> bool {
    let t = line.trim();
    t.ends_with(':') && t.split_whitespace().count() <= 3
}

/// Claude Code wraps a tool's own refusal or error in `<tool_use_error>…</tool_use_error>`.
fn unwrap_tool_error(text: &str) -> String {
    text.replace("<tool_use_error>", "")
        .replace("</tool_use_error>", "")
}

/// A line that is never the error: an ssh banner or warning (`** WARNING: …`, `@@@…`),
/// a `warning:` or `hint:` line, or a host's own trailer (Copilot CLI's shell tool ends its
/// output with `<shellId: N completed with exit code N>`, the same on every failure).
fn is_noise(line: &str) -> bool {
    let t = line.trim_start();
    let lower = t.to_ascii_lowercase();
    t.starts_with("**")
        || t.starts_with("@@@")
        || lower.starts_with("warning")
        || lower.starts_with("hint:")
        || lower.starts_with("<shellid:")
}

/// Remove ANSI escape sequences (`ESC [ … letter`).
fn strip_ansi(line: &str) -> std::borrow::Cow<'_, str> {
    if !line.contains('\u{1b}') {
        return std::borrow::Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.peek() == Some(&'[') {
                chars.next();
                for d in chars.by_ref() {
                    if d.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
            continue;
        }
        out.push(c);
    }
    std::borrow::Cow::Owned(out)
}

/// The text after a leading `Exit code N` line (or the text itself).
pub(super) fn body(text: &str) -> &str {
    let t = text.trim_start();
    if t.starts_with("Exit code") {
        t.split_once('\n').map_or("", |(_, rest)| rest)
    } else {
        t
    }
}

/// A Python-style exception line: `ModuleNotFoundError: …`, `ValueError: …`.
fn is_exception_line(line: &str) -> bool {
    let Some((head, _)) = line.split_once(": ") else {
        return false;
    };
    !head.contains(' ')
        && (head.ends_with("Error") || head.ends_with("Exception"))
        && head.chars().next().is_some_and(char::is_alphabetic)
}

/// A host's wrapper around a command's output (`failed in sandbox … exit code: 2, stdout: …`):
/// the same first line on every failure, so the output it wraps is read instead, from the
/// text after its `stdout:`; a wrapper with nothing after it stays the line.
fn unwrapped(mut lines: Vec<std::borrow::Cow<'_, str>>) -> Vec<std::borrow::Cow<'_, str>> {
    let Some((head, after)) = lines[0].split_once("stdout:") else {
        return lines;
    };
    if !head.to_ascii_lowercase().contains("exit code")
        || lines.len() < 2 && after.trim().is_empty()
    {
        return lines;
    }
    let after = after.trim().to_string();
    if after.is_empty() {
        lines.remove(0);
    } else {
        lines[0] = std::borrow::Cow::Owned(after);
    }
    lines
}

/// npm's telling line, `npm ERR! code ERESOLVE` (npm 10+: `npm error code ERESOLVE`): the
/// cause's code, which the many `npm ERR!` lines after it word differently per subcommand
/// (`could not resolve`, `unable to resolve dependency tree`); both spellings read as
/// `npm error code <code>`, so one cause is one signature across npm versions.
fn package_manager_code(line: &str) -> Option<String> {
    let lower = line.to_ascii_lowercase();
    let code = lower
        .strip_prefix("npm err! code ")
        .or_else(|| lower.strip_prefix("npm error code "))?
        .trim();
    (!code.contains(' ')).then(|| format!("npm error code {code}"))
}

/// The line of `text` that carries its error (see the module doc); `None` for a text with
/// no line after its `Exit code N` line.
#[must_use]
pub(crate) fn error_line(text: &str) -> Option<String> {
    let text = unwrap_tool_error(text);
    let lines: Vec<std::borrow::Cow<'_, str>> = body(&text)
        .lines()
        .map(strip_ansi)
        .filter(|l| !l.trim().is_empty() && !is_noise(l))
        .collect();
    if lines.is_empty() {
        return None;
    }
    let lines = unwrapped(lines);
    if let Some(code) = lines.iter().find_map(|l| package_manager_code(l.trim())) {
        return Some(code);
    }
    if let Some(e) = lines.iter().find_map(|l| {
        let rest = l.trim().strip_prefix("E ")?.trim();
        is_exception_line(rest).then(|| rest.to_string())
    }) {
        return Some(e);
    }
    if lines.iter().any(|l| {
        l.trim_start()
            .starts_with("Traceback (most recent call last)")
    }) && let Some(last) = lines.iter().rev().find(|l| is_exception_line(l.trim()))
    {
        return Some(last.trim().to_string());
    }
    let at = lines
        .iter()
        .position(|l| reads_as_error(&l.trim().to_lowercase()))
        .unwrap_or(lines.len() - 1);
    // A header such as `Collected errors:` introduces the error on the next line.
    let pick = match lines.get(at + 1) {
        Some(next) if is_header(&lines[at]) => next,
        _ => &lines[at],
    };
    Some(pick.trim().to_string())
}

/// In a successful call's output, the line that names `programs` (lowercase basenames) as
/// `prog: …` and reads as an error, if any.
#[must_use]
pub(crate) fn masked_line(output: &str, programs: &[String]) -> Option<String> {
    output.lines().map(strip_ansi).find_map(|l| {
        let t = l.trim();
        let (head, rest) = t.split_once(": ")?;
        let head = head.to_ascii_lowercase();
        (programs.contains(&head) && reads_as_error(&rest.to_lowercase())).then(|| t.to_string())
    })
}

/// Top-level domains that mark a word as a host name.
const TLDS: &[&str] = &[
    "com", "org", "net", "io", "dev", "app", "ai", "co", "local", "lan", "internal", "example",
    "test", "edu", "gov", "uk", "de", "fr", "jp", "cn", "ru", "us", "eu", "me", "sh", "cloud",
    "home", "arpa",
];

/// Replace URLs, `user@host`, host names and `[REDACTED_*]` markers (input lowercase).
#[must_use]
pub(crate) fn varying(text: &str) -> String {
    let unmarked = redactions(text);
    let mut out = String::with_capacity(unmarked.len());
    let mut rest = unmarked.as_str();
    while !rest.is_empty() {
        let start = rest
            .find(|c: char| !c.is_whitespace())
            .unwrap_or(rest.len());
        out.push_str(&rest[..start]);
        rest = &rest[start..];
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let word = &rest[..end];
        out.push_str(&varying_word(word));
        rest = &rest[end..];
    }
    out
}

/// `[redacted_…]` → `<redacted>`.
fn redactions(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("[redacted") {
        out.push_str(&rest[..i]);
        let Some(j) = rest[i..].find(']') else {
            out.push_str(&rest[i..]);
            rest = "";
            break;
        };
        let marker = &rest[i..i + j];
        out.push_str(if marker.contains("ip") || marker.contains("host") {
            "<host>"
        } else {
            "<redacted>"
        });
        rest = &rest[i + j + 1..];
    }
    out.push_str(rest);
    out
}

fn varying_word(word: &str) -> std::borrow::Cow<'_, str> {
    use std::borrow::Cow;
    let trimmed = word.trim_matches(|c: char| {
        matches!(
            c,
            '(' | ')' | ',' | ';' | '\'' | '"' | '<' | '>' | '[' | ']'
        )
    });
    let lead = &word[..word.find(trimmed).unwrap_or(0)];
    let tail = &word[lead.len() + trimmed.len()..];
    let core = trimmed.trim_end_matches(['.', ':']);
    let after = &trimmed[core.len()..];
    let replaced = if core.contains("://") {
        Some("<url>")
    } else if let Some((user, host)) = core.split_once('@')
        && !user.is_empty()
        && is_host(host.split(':').next().unwrap_or(host))
    {
        Some("<host>")
    } else if is_host(core.split(':').next().unwrap_or(core)) {
        Some("<host>")
    } else {
        None
    };
    match replaced {
        Some(r) => Cow::Owned(format!("{lead}{r}{after}{tail}")),
        None => Cow::Borrowed(word),
    }
}

/// `a.b.tld` with a known TLD, or a dotted IPv4 address.
fn is_host(word: &str) -> bool {
    let labels: Vec<&str> = word.split('.').collect();
    if labels.len() < 2
        || labels.iter().any(|l| {
            l.is_empty()
                || !l
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '#')
        })
    {
        return false;
    }
    if labels.len() == 4
        && labels
            .iter()
            .all(|l| l.chars().all(|c| c.is_ascii_digit() || c == '#'))
    {
        return true;
    }
    TLDS.contains(labels.last().unwrap_or(&""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_error_line_skips_preceding_output() {
        let push = "Exit code 1\nEnumerating objects: 5, done.\nWriting objects: 100% (3/3)\nremote: error: GH013: Repository rule violations found for refs/heads/x.\nremote: - GITHUB PUSH PROTECTION";
        assert_eq!(
            error_line(push).unwrap(),
            "remote: error: GH013: Repository rule violations found for refs/heads/x."
        );
        let ssh = "Exit code 1\n** WARNING: connection is not using a post-quantum key exchange algorithm.\n** This session may be vulnerable\nps: unrecognized option: a\nBusyBox v1.36.1";
        assert_eq!(error_line(ssh).unwrap(), "ps: unrecognized option: a");
        let sudo = "Exit code 1\nsudo: a terminal is required to read the password; either use the -S option";
        assert!(
            error_line(sudo)
                .unwrap()
                .starts_with("sudo: a terminal is required")
        );
        let py = "Exit code 1\nTraceback (most recent call last):\n  File \"x.py\", line 1, in <module>\nModuleNotFoundError: No module named 'requests'";
        assert_eq!(
            error_line(py).unwrap(),
            "ModuleNotFoundError: No module named 'requests'"
        );
        // No error word anywhere: the last line.
        assert_eq!(
            error_line("Exit code 3\nstep one\nstep two\n").unwrap(),
            "step two"
        );
        assert_eq!(error_line("Exit code 1\n\n"), None);
        let banner = "Exit code 1\n** WARNING: connection is not using a post-quantum key exchange algorithm.\n** The server may need to be upgraded. See https://openssh.com/pq.html";
        assert_eq!(error_line(banner), None);
        assert_eq!(
            error_line("Exit code 255\nCollected errors:\n * opkg_conf_load: Could not lock /var/lock/opkg.lock").unwrap(),
            "* opkg_conf_load: Could not lock /var/lock/opkg.lock"
        );
        assert_eq!(
            error_line("<tool_use_error>File does not exist.</tool_use_error>").unwrap(),
            "File does not exist."
        );
        assert_eq!(
            error_line("\u{1b}[31merror: boom\u{1b}[0m").unwrap(),
            "error: boom"
        );
        // Copilot CLI's trailer names the exit code on every failure: never the error line.
        assert_eq!(
            error_line("step one\nboom happened\n<shellId: 3 completed with exit code 1>\n")
                .unwrap(),
            "boom happened"
        );
        assert_eq!(error_line("<shellId: 0 completed with exit code 2>"), None);
    }

    #[test]
    fn the_telling_line_is_found_away_from_the_edges() {
        // npm: the code line, one spelling for both npm generations, whatever follows.
        let old = "Exit code 1\nnpm ERR! code ERESOLVE\nnpm ERR! ERESOLVE could not resolve\nnpm ERR! While resolving: a@1";
        let new = "npm error code ERESOLVE\nnpm error ERESOLVE unable to resolve dependency tree";
        assert_eq!(error_line(old).unwrap(), "npm error code eresolve");
        assert_eq!(error_line(new).unwrap(), "npm error code eresolve");
        assert_eq!(
            error_line("npm ERR! code E404\nnpm ERR! 404 Not Found - GET https://r.example/x")
                .unwrap(),
            "npm error code e404"
        );
        // A code line without a code, or not one word, is not npm's.
        assert_eq!(
            error_line("npm error code \nboom failed").unwrap(),
            "npm error code"
        );
        assert_eq!(
            error_line("npm ERR! code two words\nnpm ERR! bad thing failed").unwrap(),
            "npm ERR! bad thing failed"
        );
        // pytest: the `E` line's exception, not the collection banner or the traceback.
        let pytest = "==== ERRORS ====\n____ ERROR collecting tests/test_a.py ____\nImportError while importing test module 'x'.\nTraceback:\ntests/test_a.py:2: in <module>\n    from opk.core import b\nE   ModuleNotFoundError: No module named 'opk'";
        assert_eq!(
            error_line(pytest).unwrap(),
            "ModuleNotFoundError: No module named 'opk'"
        );
        // An `E` line that is no exception is not the telling line.
        assert_eq!(
            error_line("E   assert 1 == 2\nfailed: boom").unwrap(),
            "failed: boom"
        );
        // A sandbox wrapper: the output after its `stdout:`.
        let wrapped = "failed in sandbox X with execution error: sandbox denied exec error, exit code: 2, stdout: \nTraceback (most recent call last):\n  File \"a.py\"\nImportError: cannot import name 'b'";
        assert_eq!(
            error_line(wrapped).unwrap(),
            "ImportError: cannot import name 'b'"
        );
        assert_eq!(
            error_line(
                "sandbox error, exit code: 1, stdout: zsh: no such file or directory: x\nmore"
            )
            .unwrap(),
            "zsh: no such file or directory: x"
        );
        assert_eq!(
            error_line("x, exit code: 1, stdout: boom failed").unwrap(),
            "boom failed"
        );
        assert_eq!(
            error_line("x, exit code: 1, stdout:\nboom failed").unwrap(),
            "boom failed"
        );
        // Nothing after the wrapper: the wrapper stays the line.
        let bare = "failed in sandbox with execution error, exit code: 1, stdout: ";
        assert_eq!(error_line(bare).unwrap(), bare.trim());
        // `stdout:` without an exit code is ordinary output.
        assert_eq!(
            error_line("printing stdout: x\nerror: late").unwrap(),
            "error: late"
        );
    }

    #[test]
    fn masked_lines_name_a_program_of_the_command() {
        let out = "total 0\nsudo: a terminal is required to read the password\n";
        assert!(masked_line(out, &["sudo".into()]).is_some());
        assert!(masked_line(out, &["ls".into()]).is_none());
        assert!(masked_line("sudo: ok done\n", &["sudo".into()]).is_none());
    }

    #[test]
    fn hosts_urls_and_redactions_vary() {
        assert_eq!(
            varying("ssh: could not resolve hostname router.lan: nodename nor servname"),
            "ssh: could not resolve hostname <host>: nodename nor servname"
        );
        assert_eq!(
            varying("connect to root@gw.example.com failed"),
            "connect to <host> failed"
        );
        assert_eq!(
            varying("get https://x.dev/a?b=1 failed"),
            "get <url> failed"
        );
        assert_eq!(
            varying("ping [redacted_ip] timed out"),
            "ping <host> timed out"
        );
        assert_eq!(varying("token [redacted_key] bad"), "token <redacted> bad");
        assert_eq!(varying("host #.#.#.#: refused"), "host <host>: refused");
        // File names are not hosts.
        assert_eq!(varying("cannot open main.rs"), "cannot open main.rs");
    }
}
