//! Error signatures: the normalised form of an error message that derive groups failures by.
//!
//! callusguard's normalisation (spec §6.3), in order: lowercase; quoted strings → `'S'`;
//! digits → `#`; whitespace collapsed; trimmed; first 200 characters. callus adds, before
//! the digit step: filesystem paths → `<path>`, UUIDs → `<uuid>`, hex ids of 7+ characters
//! that mix letters and digits → `<hex>`; so two runs of the same failure in different
//! checkouts or with different ids share a signature. A leading `Exit code N` line keeps
//! its number (`exit code 127` and `exit code 1` are different failures).
//!
//! The input must already be redacted: the signature is stored.

use std::sync::OnceLock;

use regex::Regex;

/// Length of a signature, in characters.
pub(crate) const SIGNATURE_CHARS: usize = 200;

struct Patterns {
    quoted: Regex,
    uuid: Regex,
    hex: Regex,
    path: Regex,
    digits: Regex,
    space: Regex,
}

fn patterns() -> &'static Patterns {
    static CELL: OnceLock<Patterns> = OnceLock::new();
    CELL.get_or_init(|| {
        let re = |p: &str| Regex::new(p).expect("signature patterns are valid");
        Patterns {
            quoted: re(r#"'[^']*'|"[^"]*""#),
            uuid: re(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"),
            // Checked for a letter and a digit in `collapse_hex`; the regex finds candidates.
            hex: re(r"\b(?:0x)?[0-9a-f]{7,}\b"),
            // A path: starts at a boundary with `/`, `~/`, `./`, `../`, or is a relative
            // `a/b` with at least one slash.
            path: re(
                r"(?P<pre>^|[\s=(\[<>,;])(?:(?:~|\.{1,2})?/[\w.\-@+~/]*|[\w.\-@+~]+/[\w.\-@+~/]*)",
            ),
            digits: re(r"[0-9]+"),
            space: re(r"\s+"),
        }
    })
}

/// The signature of an (already redacted) error message; `None` for a blank one.
#[must_use]
pub(crate) fn signature(error: &str) -> Option<String> {
    let trimmed = error.trim();
    if trimmed.is_empty() {
        return None;
    }
    let exit = leading_exit_code(trimmed);
    let p = patterns();
    let text = trimmed.to_lowercase();
    let text = p.quoted.replace_all(&text, "'S'");
    let text = p.path.replace_all(&text, "${pre}<path>");
    let text = p.uuid.replace_all(&text, "<uuid>");
    let text = collapse_hex(&p.hex, &text);
    let text = p.digits.replace_all(&text, "#");
    let text = p.space.replace_all(&text, " ");
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

fn collapse_hex(re: &Regex, text: &str) -> String {
    re.replace_all(text, |c: &regex::Captures<'_>| {
        let m = &c[0];
        let body = m.strip_prefix("0x").unwrap_or(m);
        let letter = body.bytes().any(|b| b.is_ascii_alphabetic());
        let digit = body.bytes().any(|b| b.is_ascii_digit());
        if (letter && digit) || m.starts_with("0x") {
            "<hex>".to_string()
        } else {
            m.to_string()
        }
    })
    .into_owned()
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
        // spec §6.3's example: two databases, one signature.
        assert_eq!(
            signature(r#"FATAL: database "kai" does not exist"#).unwrap(),
            "fatal: database 'S' does not exist"
        );
        assert_eq!(
            signature(r#"FATAL: database "kai" does not exist"#),
            signature(r#"FATAL:  database "bob" does not exist"#)
        );
        assert_eq!(
            signature("error at line 42\n\n  col 7").unwrap(),
            "error at line # col #"
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
            signature("GET https://example.com/a failed").unwrap(),
            "get https://example.com/a failed"
        );
        // Plain words made of hex letters are not ids.
        assert_eq!(signature("deadbeef facade").unwrap(), "deadbeef facade");
    }

    #[test]
    fn capped_at_200_chars() {
        let long = "word ".repeat(100);
        assert!(signature(&long).unwrap().chars().count() <= SIGNATURE_CHARS);
    }
}
