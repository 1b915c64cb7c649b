//! What a recorded Bash command is made of, as derive needs it: the program each simple
//! command runs, its shape (spec §6.4), the segment that most likely failed, whether the
//! command is a poll loop, which host a name-resolution failure was about, and the argument
//! tokens the missing-flag contrast compares.
//!
//! Works on [`crate::shell::split`]'s segments (`argv`, `text`) and re-does the cheap parts of
//! normalisation itself (control words, wrappers, path prefixes), so it gives the same answer
//! whether the splitter already unwrapped `timeout 5 psql` or not. Builtins and control words
//! are never a program: a cluster is never keyed on `cd`, `set`, `for` or `sleep`.

use std::sync::OnceLock;

use crate::rules::Pattern;
use crate::shell::{MULTIPLEXERS, Origin, Segment, is_assignment};

/// Shell builtins and control words: never a candidate's program.
const NOT_PROGRAMS: &[&str] = &[
    "cd", "export", "set", "unset", "source", ".", "for", "while", "until", "if", "then", "else",
    "elif", "fi", "do", "done", "case", "esac", "in", "select", "function", "echo", "printf",
    "sleep", "true", "false", ":", "test", "[", "[[", "]]", "exit", "return", "local", "declare",
    "typeset", "readonly", "shift", "wait", "read", "trap", "pushd", "popd", "dirs", "alias",
    "unalias", "ulimit", "umask", "break", "continue", "let", "{", "}", "!", "type", "hash",
    "shopt", "eval", "exec", "builtin", "command",
];

/// Words that open a compound command and are followed by a command (`while ! pg_isready`).
const LEADING_CONTROL: &[&str] = &[
    "!", "{", "(", "do", "then", "else", "elif", "if", "while", "until", "time",
];

/// The regex that recognises a poll loop in a command's text; also the loop candidates'
/// pattern, so cluster membership and the backtest agree by construction.
pub(crate) const POLL_LOOP_PATTERN: &str =
    r"(?:^|[;&|({]|\n)\s*(?:while|until|for)\s[\s\S]*?\bdo\b[\s\S]*?\bsleep\b[\s\S]*?\bdone\b";

/// Error text that means a host name did not resolve.
const RESOLUTION_MARKERS: &[&str] = &[
    "could not resolve host",
    "unable to resolve host",
    "name or service not known",
    "temporary failure in name resolution",
    "nodename nor servname provided",
    "no address associated with hostname",
    "getaddrinfo enotfound",
    "unknown host",
    "failed to resolve",
];

/// The program a simple command runs, found past control words, wrappers and assignments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Program {
    /// The shape: the program's basename, plus the subcommand for multiplexers.
    pub shape: String,
    /// The program's basename (the shape's first word).
    pub head: String,
    /// Whether the program was spelled with a path (`./bin/psql`, `/usr/bin/psql`).
    pub pathed: bool,
    /// The argument words after the shape, as the contrast compares them.
    pub tokens: Vec<String>,
}

/// Find the program of one segment; `None` for a builtin, a control word or an empty one.
pub(crate) fn program(seg: &Segment) -> Option<Program> {
    let mut words = seg.argv.iter().map(String::as_str).peekable();
    // Control words that introduce a command, and leading assignments.
    while let Some(w) = words.peek() {
        let bare = w
            .trim_start_matches(['(', '{', '`'])
            .trim_start_matches("$(");
        if bare.is_empty() || LEADING_CONTROL.contains(&bare) || is_assignment(bare) {
            words.next();
        } else {
            break;
        }
    }
    let mut rest: Vec<&str> = words.collect();
    unwrap_wrappers(&mut rest);
    let first = rest.first()?;
    let word = first
        .trim_start_matches(['(', '{', '`', '\\'])
        .trim_start_matches("$(")
        .trim_end_matches([')', ';', '`']);
    let head = word.rsplit('/').next().unwrap_or(word);
    // The splitter strips the program's path from `argv`; the source slice still shows it.
    let pathed = word.contains('/')
        || seg
            .raw
            .split_whitespace()
            .any(|w| w.strip_suffix(head).is_some_and(|p| p.ends_with('/')));
    if head.is_empty() || NOT_PROGRAMS.contains(&head) || head.starts_with('$') {
        return None;
    }
    let mut shape = head.to_string();
    let mut used = 1;
    if MULTIPLEXERS.contains(&head)
        && let Some(next) = rest.get(1)
        && is_subcommand(next)
    {
        shape.push(' ');
        shape.push_str(next);
        used = 2;
    }
    let tokens = rest[used.min(rest.len())..]
        .iter()
        .filter_map(|w| arg_token(w))
        .collect();
    Some(Program {
        shape,
        head: head.to_string(),
        pathed,
        tokens,
    })
}

/// A second word that names a subcommand or script, not a flag or a value.
fn is_subcommand(word: &str) -> bool {
    !word.is_empty()
        && !word.starts_with(['-', '$'])
        && !word.contains("://")
        && !word.contains(['@', '=', '\'', '"'])
}

/// Drop `env`, `command`, `exec`, `nohup`, `time`, `nice`, `timeout`, `stdbuf` and their
/// options from the front of `words`.
fn unwrap_wrappers(words: &mut Vec<&str>) {
    loop {
        let Some(first) = words.first() else { return };
        let name = first.rsplit('/').next().unwrap_or(first);
        let skip = match name {
            "env" => {
                1 + words[1..]
                    .iter()
                    .take_while(|w| w.starts_with('-') || is_assignment(w))
                    .count()
            }
            "command" | "exec" | "nohup" | "time" | "builtin" => {
                1 + words[1..].iter().take_while(|w| w.starts_with('-')).count()
            }
            "nice" | "stdbuf" => {
                let mut n = 1;
                while let Some(w) = words.get(n) {
                    if *w == "-n" {
                        n += 2;
                    } else if w.starts_with('-') {
                        n += 1;
                    } else {
                        break;
                    }
                }
                n
            }
            "timeout" => {
                let mut n = 1;
                while let Some(w) = words.get(n) {
                    if matches!(*w, "-s" | "-k" | "--signal" | "--kill-after") {
                        n += 2;
                    } else if w.starts_with('-') {
                        n += 1;
                    } else {
                        break;
                    }
                }
                // The duration.
                n + 1
            }
            _ => return,
        };
        words.drain(..skip.min(words.len()));
    }
}

/// The contrast's view of one argument word: a flag without its value (`--host=x` →
/// `--host`), or a positional word; `None` for words too long to be a useful token.
pub(crate) fn arg_token(word: &str) -> Option<String> {
    let w = word.trim_end_matches([';', ')']);
    if w.is_empty() || w == "-" || w == "--" {
        return None;
    }
    let token = if w.starts_with('-') {
        w.split_once('=').map_or(w, |(flag, _)| flag)
    } else {
        w
    };
    (token.len() <= 64).then(|| token.to_string())
}

/// The segment that most likely failed: the last one whose program the error text names,
/// else the last one that runs a program at all. `None` when only builtins ran.
pub(crate) fn failing_program(segments: &[Segment], error: &str) -> Option<Program> {
    let programs: Vec<(bool, Program)> = segments
        .iter()
        .filter_map(|s| Some((matches!(s.origin, Origin::Wrapped(_)), program(s)?)))
        .collect();
    let lower = error.to_ascii_lowercase();
    programs
        .iter()
        .rev()
        .find(|(_, p)| names_word(&lower, &p.head.to_ascii_lowercase()))
        // A wrapper (`sudo rm x` → `sudo`) speaks for the command it runs, as in spec §6.4,
        // unless the error named the wrapped program.
        .or_else(|| programs.iter().rev().find(|(wrapped, _)| !wrapped))
        .or_else(|| programs.last())
        .map(|(_, p)| p.clone())
}

/// Does `text` contain `word` delimited by characters that cannot be part of a program name?
fn names_word(text: &str, word: &str) -> bool {
    let part = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.');
    text.match_indices(word).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + word.len()..].chars().next();
        !before.is_some_and(part) && !after.is_some_and(|c| part(c) && c != '.')
    })
}

/// The compiled poll-loop detector.
pub(crate) fn poll_loop() -> &'static Pattern {
    static P: OnceLock<Pattern> = OnceLock::new();
    P.get_or_init(|| Pattern::new(POLL_LOOP_PATTERN, false))
}

/// Is `command` a `while/until/for … do … sleep … done` poll loop?
pub(crate) fn is_poll_loop(command: &str) -> bool {
    command.contains("sleep") && poll_loop().is_match(command).unwrap_or(false)
}

/// The host a name-resolution failure was about: named in the error, else the single host
/// of the command's URLs. `None` when the error is not a resolution failure.
pub(crate) fn dead_host(error: &str, command: &str) -> Option<String> {
    static NAMED: OnceLock<regex::Regex> = OnceLock::new();
    static URL: OnceLock<regex::Regex> = OnceLock::new();
    let lower = error.to_ascii_lowercase();
    if !RESOLUTION_MARKERS.iter().any(|m| lower.contains(m)) {
        return None;
    }
    // curl, ssh, node, wget, java/python spellings of "this host did not resolve".
    let named = NAMED.get_or_init(|| {
        regex::Regex::new(
            r"(?:could not resolve host(?:name)?:?|resolve host address|enotfound|unknown host:?|failed to resolve)\s+['\x22]?([a-z0-9][a-z0-9.-]*[a-z0-9])",
        )
        .expect("valid")
    });
    if let Some(c) = named.captures(&lower) {
        return Some(c[1].to_string());
    }
    let url = URL.get_or_init(|| {
        regex::Regex::new(
            r"(?i)\b[a-z][a-z0-9+.-]*://(?:[^/\s'\x22@]+@)?([a-z0-9][a-z0-9.-]*[a-z0-9])",
        )
        .expect("valid")
    });
    let mut hosts: Vec<String> = url
        .captures_iter(command)
        .map(|c| c[1].to_ascii_lowercase())
        .collect();
    hosts.sort();
    hosts.dedup();
    match hosts.as_slice() {
        [one] => Some(one.clone()),
        _ => None,
    }
}

/// The text the backtest's literal prefilter searches, written into a reused buffer:
/// lowercased, with quotes and backslashes removed, so `p"s"ql` and `\psql` still contain
/// `psql` as the splitter will see them.
pub(crate) fn prefilter_into(command: &str, out: &mut String) {
    out.clear();
    out.extend(
        command
            .chars()
            .filter(|c| !matches!(c, '\'' | '"' | '\\'))
            .map(|c| c.to_ascii_lowercase()),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::split;

    fn prog(cmd: &str, err: &str) -> Option<Program> {
        failing_program(&split(cmd).segments, err)
    }

    #[test]
    fn the_failing_segment_is_never_a_builtin() {
        let p = prog("cd db && PGPASSWORD=x psql -c 'select 1'", "").unwrap();
        assert_eq!(p.shape, "psql");
        assert_eq!(p.tokens, vec!["-c", "select 1"]);
        assert!(prog("cd /nope", "cd: no such file").is_none());
        assert!(prog("export A=1; set -e; sleep 2; echo hi", "").is_none());
        let p = prog("while ! pg_isready -h db; do sleep 1; done", "").unwrap();
        assert_eq!(p.shape, "pg_isready");
    }

    #[test]
    fn the_error_names_the_failing_program() {
        let p = prog(
            "psql -c 'select 1' | head -5",
            "psql: error: connection refused",
        )
        .unwrap();
        assert_eq!(p.shape, "psql");
        let p = prog("psql -c 'select 1' | head -5", "").unwrap();
        assert_eq!(p.shape, "head");
        // `make` inside `cmake` is not a mention of make.
        let p = prog("make build; ./run", "cmake failed").unwrap();
        assert_eq!(p.head, "run");
    }

    #[test]
    fn shapes_follow_spec_6_4_with_wrappers_and_paths() {
        let p = prog("timeout 30 /usr/bin/git push origin main", "").unwrap();
        assert_eq!((p.shape.as_str(), p.pathed), ("git push", true));
        assert_eq!(prog("git -C x status", "").unwrap().shape, "git");
        assert_eq!(
            prog("env FOO=1 python3 scripts/fetch-tool.py --x=1", "")
                .unwrap()
                .shape,
            "python3 scripts/fetch-tool.py"
        );
        assert_eq!(prog("psql postgres://h/db -c x", "").unwrap().shape, "psql");
        // The splitter unwraps `sudo` (a `^rm\b` segment rule catches `sudo rm …`), so the
        // program that failed is the one sudo ran.
        assert_eq!(prog("sudo rm -rf x", "").unwrap().shape, "sudo");
        assert_eq!(
            prog("fetch --entity=a b", "").unwrap().tokens,
            vec!["--entity", "b"]
        );
    }

    #[test]
    fn poll_loops_and_dead_hosts() {
        assert!(is_poll_loop(
            "until curl -sf localhost:8080/health; do sleep 2; done"
        ));
        assert!(is_poll_loop(
            "cd app && for i in $(seq 30); do nc -z db 5432 && break; sleep 1; done"
        ));
        assert!(!is_poll_loop("for f in *.log; do gzip $f; done"));
        assert!(!is_poll_loop("sleep 5 && curl x"));
        assert_eq!(
            dead_host(
                "curl: (6) Could not resolve host: api.dead.example",
                "curl x"
            )
            .as_deref(),
            Some("api.dead.example")
        );
        assert_eq!(
            dead_host(
                "getaddrinfo failed: Name or service not known",
                "wget -q https://Old.Mirror.example/pkg.tgz"
            )
            .as_deref(),
            Some("old.mirror.example")
        );
        assert_eq!(
            dead_host("connection refused", "curl http://x.example"),
            None
        );
    }

    #[test]
    fn prefilter_text_sees_through_quotes() {
        let mut out = String::from("stale");
        prefilter_into(r#"P"s"ql \ls"#, &mut out);
        assert_eq!(out, "psql ls");
    }
}
