//! Error signatures: the normalised form of an error message that derive groups failures by.
//!
//! A signature is taken from the error, not the whole output: [`super::error_line`] picks the
//! line that carries the error (dropping unrelated output printed before it), and a leading
//! `Exit code N` line keeps its number in front (`exit code 127` and `exit code 1` are
//! different failures). That line is then normalised ([`normalise`]), callusguard's way
//! in order: lowercase; quoted strings → `'S'`; digits → `#`; whitespace
//! collapsed; trimmed. callus keeps what tells a cause apart: a quoted Windows path keeps its
//! drive and a Git-Bash history-expansion `!` in front (`'!C:/x'` → `'!c:S'`, not `'S'`), and an
//! unquoted one its drive (`c:\x\y` → `c:<path>`); a leading `./` is dropped (`./Use cases/x`
//! and `Use cases/x` are one signature). It adds, before the digit step: filesystem paths →
//! `<path>`, UUIDs → `<uuid>`, hex ids of 7+ characters that mix letters and digits → `<hex>`; and
//! after it ([`super::error_line::varying`]) URLs → `<url>`, hosts, `user@host` and IPs →
//! `<host>`, `[REDACTED_*]` → `<redacted>`; so two runs of the same failure in different
//! checkouts, against different hosts or with different ids share a signature. At most 200
//! characters.
//!
//! The input must already be redacted: the signature is stored.

use super::error_line::{error_line, varying};

/// Length of a signature, in characters.
pub(crate) const SIGNATURE_CHARS: usize = 200;

/// The signature of an (already redacted) error message; `None` for a blank one.
#[must_use]
pub(crate) fn signature(error: &str) -> Option<String> {
    let trimmed = error.trim();
    if trimmed.is_empty() {
        return None;
    }
    let exit = leading_exit_code(trimmed);
    let line = error_line(trimmed)
        .map(|l| varying(&normalise(&l).unwrap_or_default()))
        .unwrap_or_default();
    let text = match exit {
        Some(code) if line.is_empty() => format!("exit code {code}"),
        Some(code) => format!("exit code {code} {line}"),
        None if line.is_empty() => normalise(trimmed)?,
        None => line,
    };
    Some(cap(text))
}

fn cap(text: String) -> String {
    match text.char_indices().nth(SIGNATURE_CHARS) {
        Some((cut, _)) => text[..cut].trim_end().to_string(),
        None => text,
    }
}

/// The normalisation of a whole text (callusguard's, plus paths and ids; see the module
/// doc); `None` for a blank one.
///
/// Hand-written rather than a chain of regexes: the hook computes one signature per failed
/// call, and compiling Unicode-aware patterns cost more than the rest of the hook together.
/// The tests check it against the regex formulation.
#[must_use]
pub(crate) fn normalise(error: &str) -> Option<String> {
    let trimmed = error.trim();
    if trimmed.is_empty() {
        return None;
    }
    let exit = leading_exit_code(trimmed);
    let text = trimmed.to_lowercase();
    let text = quoted(&text);
    let text = paths(&text);
    let text = ids(&text);
    let mut text = digits_and_space(&text);
    if let Some(code) = exit
        && let Some(rest) = text.strip_prefix("exit code #")
    {
        text = format!("exit code {code}{rest}");
    }
    Some(cap(text))
}

/// The markers a quoted or bare Windows path keeps: `!` (Git Bash's history expansion) and
/// the drive, when `text` starts with `[!]x:/` or `[!]x:\`; their length in bytes.
fn drive_marker(text: &str) -> Option<usize> {
    let b = text.as_bytes();
    let bang = usize::from(b.first() == Some(&b'!'));
    let ok = b.get(bang).is_some_and(u8::is_ascii_lowercase)
        && b.get(bang + 1) == Some(&b':')
        && matches!(b.get(bang + 2), Some(b'/' | b'\\'));
    ok.then_some(bang + 2)
}

/// `'…'` and `"…"` → `'S'`, keeping a drive path's markers (`'!c:S'`); an unclosed quote
/// stays as it is.
fn quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(['\'', '"']) {
        let quote = &rest[i..=i];
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(j) = after.find(quote) {
            out.push('\'');
            if let Some(m) = drive_marker(&after[..j]) {
                out.push_str(&after[..m]);
            }
            out.push_str("S'");
            rest = &after[j + 1..];
        } else {
            out.push_str(quote);
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn is_path_char(c: char) -> bool {
    is_word(c) || matches!(c, '.' | '-' | '@' | '+' | '~' | '/')
}

/// A run of path characters that starts at the text's start or after whitespace or one of
/// `=([<>,;`, and holds a `/`, → `<path>`; a leading `./` is dropped first (`./x` is `x`). A
/// drive path there (`c:/…`, `c:\…`, `!c:/…`) → its markers and `<path>`.
fn paths(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut boundary = true;
    let mut i = 0;
    while let Some(c) = text[i..].chars().next() {
        if boundary && let Some(m) = drive_marker(&text[i..]) {
            let end = text[i + m..]
                .find(|c: char| !is_path_char(c) && c != '\\')
                .map_or(text.len(), |j| i + m + j);
            out.push_str(&text[i..i + m]);
            out.push_str("<path>");
            i = end;
            boundary = false;
            continue;
        }
        if boundary && is_path_char(c) {
            let dot = text[i..].starts_with("./")
                && text[i + 2..].chars().next().is_some_and(is_path_char);
            let from = if dot { i + 2 } else { i };
            let end = text[from..]
                .find(|c: char| !is_path_char(c))
                .map_or(text.len(), |j| from + j);
            let run = &text[from..end];
            out.push_str(if run.contains('/') { "<path>" } else { run });
            i = end;
            boundary = false;
            continue;
        }
        out.push(c);
        boundary = c.is_whitespace() || matches!(c, '=' | '(' | '[' | '<' | '>' | ',' | ';');
        i += c.len_utf8();
    }
    out
}

/// UUIDs → `<uuid>`; whole words of 7+ hex digits mixing letters and digits, or with a
/// `0x` prefix → `<hex>`.
fn ids(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while let Some(c) = text[i..].chars().next() {
        if !is_word(c) {
            out.push(c);
            i += c.len_utf8();
            continue;
        }
        let end = word_end(text, i);
        if let Some(uuid_end) = uuid_at(text, i) {
            out.push_str("<uuid>");
            i = uuid_end;
            continue;
        }
        let word = &text[i..end];
        out.push_str(if is_hex_id(word) { "<hex>" } else { word });
        i = end;
    }
    out
}

fn word_end(text: &str, from: usize) -> usize {
    text[from..]
        .find(|c: char| !is_word(c))
        .map_or(text.len(), |j| from + j)
}

/// The end of a UUID (8-4-4-4-12 lowercase hex words joined by `-`) starting at `from`.
fn uuid_at(text: &str, from: usize) -> Option<usize> {
    let mut at = from;
    for (n, len) in [8, 4, 4, 4, 12].into_iter().enumerate() {
        if n > 0 {
            at = at + text[at..].strip_prefix('-').map(|_| 1)?;
        }
        let end = word_end(text, at);
        let word = &text[at..end];
        if word.len() != len
            || !word
                .bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        {
            return None;
        }
        at = end;
    }
    Some(at)
}

fn is_hex_id(word: &str) -> bool {
    let lower_hex = |s: &str| {
        s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    };
    if let Some(body) = word.strip_prefix("0x")
        && body.len() >= 7
        && lower_hex(body)
    {
        return true;
    }
    word.len() >= 7
        && lower_hex(word)
        && word.bytes().any(|b| b.is_ascii_digit())
        && word.bytes().any(|b| b.is_ascii_alphabetic())
}

/// Digit runs → `#`, whitespace runs → one space, trimmed.
fn digits_and_space(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut prev_digit = false;
    let mut prev_space = false;
    for c in text.trim().chars() {
        if c.is_ascii_digit() {
            if !prev_digit {
                out.push('#');
            }
            prev_digit = true;
            prev_space = false;
        } else if c.is_whitespace() {
            if !prev_space {
                out.push(' ');
            }
            prev_space = true;
            prev_digit = false;
        } else {
            out.push(c);
            prev_digit = false;
            prev_space = false;
        }
    }
    out
}

/// `N` when the text starts with an `Exit code N` line (Claude Code's Bash failures).
#[must_use]
pub(crate) fn leading_exit_code(text: &str) -> Option<i64> {
    let first = text.trim_start().lines().next()?;
    first
        .strip_prefix("Exit code ")
        .or_else(|| first.strip_prefix("Exit code: "))
        .and_then(|n| n.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn callusguard_normalisation_holds() {
        // callusguard's own example: two databases, one signature.
        assert_eq!(
            signature(r#"FATAL: database "kai" does not exist"#).unwrap(),
            "fatal: database 'S' does not exist"
        );
        assert_eq!(
            signature(r#"FATAL: database "kai" does not exist"#),
            signature(r#"FATAL:  database "bob" does not exist"#)
        );
        assert_eq!(
            normalise("error at line 42\n\n  col 7").unwrap(),
            "error at line # col #"
        );
        // The signature is the error's line, not the whole text.
        assert_eq!(
            signature("error at line 42\n\n  col 7").unwrap(),
            "error at line #"
        );
        assert_eq!(signature("   \n"), None);
    }

    #[test]
    fn exit_code_line_keeps_its_number() {
        let s = signature("Exit code 127\nbash: line 1: foo: command not found").unwrap();
        assert_eq!(s, "exit code 127 bash: line #: foo: command not found");
        assert_ne!(
            signature("Exit code 1\nboom"),
            signature("Exit code 2\nboom")
        );
        assert_eq!(leading_exit_code("Exit code 2\nls: x"), Some(2));
        assert_eq!(leading_exit_code("Exit code: 0\nWall time"), Some(0));
        assert_eq!(leading_exit_code("no exit"), None);
    }

    #[test]
    fn paths_ids_and_uuids_collapse() {
        let a = signature(
            "error: /home/ann/src/app/main.rs: failed (id 3f2a9c1b7e, run 0b1c2d3e-1111-2222-3333-444455556666)",
        )
        .unwrap();
        let b = signature(
            "error: /srv/ci/work/app/lib.rs: failed (id 9e8d7c6b5a, run aaaaaaaa-bbbb-cccc-dddd-eeeeffff0000)",
        )
        .unwrap();
        assert_eq!(a, b);
        assert!(
            a.contains("<path>") && a.contains("<hex>") && a.contains("<uuid>"),
            "{a}"
        );
        // Relative paths and ~ paths too; URLs keep their host.
        assert_eq!(
            signature("cannot open src/foo.rs").unwrap(),
            signature("cannot open tests/bar.rs").unwrap()
        );
        assert!(signature("see ~/x/y").unwrap().contains("<path>"));
        assert_eq!(
            normalise("GET https://example.com/a failed").unwrap(),
            "get https://example.com/a failed"
        );
        assert_eq!(
            signature("GET https://example.com/a failed").unwrap(),
            "get <url> failed"
        );
        // Plain words made of hex letters are not ids.
        assert_eq!(signature("deadbeef facade").unwrap(), "deadbeef facade");
    }

    /// The regex formulation of the same normalisation (the reference the hand-written
    /// one must agree with).
    fn by_regex(error: &str) -> Option<String> {
        static CACHE: std::sync::Mutex<Vec<(String, Regex)>> = std::sync::Mutex::new(Vec::new());
        use regex::Regex;
        let trimmed = error.trim();
        if trimmed.is_empty() {
            return None;
        }
        let exit = leading_exit_code(trimmed);
        let re = |p: &str| {
            let mut cache = CACHE.lock().unwrap();
            if let Some((_, r)) = cache.iter().find(|(k, _)| k == p) {
                return r.clone();
            }
            let r = Regex::new(p).unwrap();
            cache.push((p.to_string(), r.clone()));
            r
        };
        let text = trimmed.to_lowercase();
        let marker = re(r"^!?[a-z]:[/\\]");
        let text = re(r#"'([^']*)'|"([^"]*)""#).replace_all(&text, |c: &regex::Captures<'_>| {
            let inner = c.get(1).or_else(|| c.get(2)).unwrap().as_str();
            match marker.find(inner) {
                Some(m) => format!("'{}S'", &m.as_str()[..m.len() - 1]),
                None => "'S'".to_string(),
            }
        });
        let text = re(
            r"(?P<pre>^|[\s=(\[<>,;])(?:(?P<drive>!?[a-z]:)[/\\][\w.\-@+~/\\]*|(?:\./)?(?P<run>[\w.\-@+~/]+))",
        )
        .replace_all(&text, |c: &regex::Captures<'_>| {
            let pre = &c["pre"];
            match (c.name("drive"), c.name("run")) {
                (Some(d), _) => format!("{pre}{}<path>", d.as_str()),
                (_, Some(r)) if r.as_str().contains('/') => format!("{pre}<path>"),
                (_, Some(r)) => format!("{pre}{}", r.as_str()),
                _ => unreachable!(),
            }
        });
        let text = re(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
            .replace_all(&text, "<uuid>");
        let text = re(r"\b(?:0x)?[0-9a-f]{7,}\b").replace_all(&text, |c: &regex::Captures<'_>| {
            let m = &c[0];
            let body = m.strip_prefix("0x").unwrap_or(m);
            let mixed = body.bytes().any(|b| b.is_ascii_alphabetic())
                && body.bytes().any(|b| b.is_ascii_digit());
            if mixed || m.starts_with("0x") {
                "<hex>".to_string()
            } else {
                m.to_string()
            }
        });
        let text = re(r"[0-9]+").replace_all(&text, "#");
        let text = re(r"\s+").replace_all(&text, " ");
        let mut text = text.trim().to_string();
        if let Some(code) = exit
            && let Some(rest) = text.strip_prefix("exit code #")
        {
            text = format!("exit code {code}{rest}");
        }
        Some(match text.char_indices().nth(SIGNATURE_CHARS) {
            Some((cut, _)) => text[..cut].trim_end().to_string(),
            None => text,
        })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]
        #[test]
        fn agrees_with_the_regex_formulation(
            s in r#"(Exit code [0-9]{1,3}\n)?(0x|\./|[a-f0-9]{4,12}|[a-fA-F0-9xg_ /.~:'"=(<>,;\[\]@+!\\\n\t-]){0,30}"#
        ) {
            proptest::prop_assert_eq!(normalise(&s), by_regex(&s));
        }
    }

    #[test]
    fn agrees_on_real_errors() {
        for e in [
            "Exit code 2\nls: cannot access '/nonexistent-callus-e2e': No such file or directory",
            "error: /home/ann/src/app/main.rs: failed (id 3f2a9c1b7e, run 0b1c2d3e-1111-2222-3333-444455556666)",
            "PreToolUse:Bash hook error: [/work/x/probe-hook.sh]: EXIT2-REASON-43 blocked",
            "fatal: unable to access 'https://github.com/x/y.git/': Could not resolve host",
            "npm ERR! code E404\nnpm ERR! 404 Not Found - GET https://registry.npmjs.org/nope",
            "commit 0x1f2e3d4c5b ~/x/y ../a ./b a/b c=d/e (f/g) [h/i] <j/k> l,m/n;o/p",
            "Ünïcödé pâth /tmp/dé/fi 12345678-abcd-ef01-2345-6789abcdef01x",
        ] {
            assert_eq!(normalise(e), by_regex(e), "{e}");
        }
    }

    #[test]
    fn one_failure_behind_different_preambles_is_one_signature() {
        let a = signature(
            "Exit code 128\nTo github.com:o/r.git\nCounting objects: 12\nfatal: could not read Username for 'https://github.com': terminal prompts disabled",
        );
        let b = signature(
            "Exit code 128\nremote: Enumerating objects: 3, done.\nfatal: could not read Username for 'https://github.com': terminal prompts disabled",
        );
        assert_eq!(a, b);
        assert_eq!(
            signature(
                "Exit code 255\nssh: Could not resolve hostname nas.lan: nodename nor servname provided"
            ),
            signature(
                "Exit code 255\n** WARNING: x\nssh: Could not resolve hostname pi.local: nodename nor servname provided"
            )
        );
        assert_eq!(signature("Exit code 1\n").unwrap(), "exit code 1");
        assert_eq!(
            signature("Exit code 1\nping [REDACTED_IP]: timed out"),
            signature("Exit code 1\nping 10.0.0.1: timed out")
        );
    }

    #[test]
    fn what_tells_a_cause_apart_stays() {
        // A Git-Bash history expansion of a drive path is not any quoted string.
        let bang = signature("bash: !C:/Users/ann/x: event not found").unwrap();
        assert_eq!(bang, "bash: !c:<path>: event not found");
        let quoted = signature("cannot access '!C:/Users/ann/proj/a.txt'").unwrap();
        assert_eq!(quoted, "cannot access '!c:S'");
        assert_ne!(
            quoted,
            signature("cannot access '/home/ann/a.txt'").unwrap()
        );
        assert_eq!(
            signature("cannot access 'D:\\work\\b.txt'").unwrap(),
            "cannot access 'd:S'"
        );
        // Different users, one drive path.
        assert_eq!(
            signature("Get-Item: Cannot find path C:\\Users\\ann\\x.txt").unwrap(),
            signature("Get-Item: Cannot find path C:\\Users\\bob\\y.txt").unwrap()
        );
        // A leading `./` never splits a signature.
        assert_eq!(
            signature("sed: can't read ./Use cases/spec.md: No such file or directory"),
            signature("sed: can't read Use cases/spec.md: No such file or directory")
        );
        assert_eq!(
            signature("./run.sh: Permission denied"),
            signature("run.sh: Permission denied")
        );
        // `./` alone, `../` and `.//` are still paths.
        assert_eq!(normalise("cd ./ x").unwrap(), "cd <path> x");
        assert_eq!(normalise("at ../x").unwrap(), "at <path>");
        assert_eq!(normalise("at .//x").unwrap(), "at <path>");
        // Numbers, ids and hosts still vary; program and option names stay.
        assert_eq!(
            signature("grep: invalid option -- 'P' at 2024-05-01T10:00:00").unwrap(),
            "grep: invalid option -- 'S' at #-#-#t#:#:#"
        );
        assert!(drive_marker("c:/x").is_some() && drive_marker("c:x").is_none());
        assert_eq!(drive_marker("!c:\\x"), Some(3));
        assert_eq!(drive_marker("!c/x"), None);
        assert_eq!(drive_marker("C:/x"), None);
    }

    #[test]
    fn capped_at_200_chars() {
        let long = "word ".repeat(100);
        assert!(signature(&long).unwrap().chars().count() <= SIGNATURE_CHARS);
    }
}
