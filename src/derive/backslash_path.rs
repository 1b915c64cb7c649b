//! A Bash command holding a Windows path with backslashes in a form bash mangles: a word
//! that starts `C:\…` unquoted (bash eats each backslash: `cd C:\Users\x` runs `cd
//! C:Usersx`), or a double-quoted `"C:\…\"` whose trailing backslash escapes the closing
//! quote (`unexpected EOF while looking for matching`). The same path single-quoted,
//! double-quoted without the trailing backslash, or with forward slashes works, so the
//! structure is visible in the command whatever the program (a `shared` structure).
//!
//! Guarantees: [`PATTERN`] matches exactly what [`is_mangled`] says (it is the detector),
//! every match holds [`LITERAL`] (and, as the scan's prefilter sees it, [`PREFILTER`]), a
//! path bash reads as written (single quotes, `C:/…`, `/c/…`, `"C:\…"` without a trailing
//! backslash) never matches. Like a path form, its pattern matches only the calls written
//! in the structure, so it is graded on `--min-count` attempts ([`keyed`]).

use std::sync::OnceLock;

use super::cluster::SharedPattern;
use crate::rules::Pattern;

/// An unquoted word starting with a drive and a backslash, or a double-quoted drive path
/// ending in a backslash before its closing quote.
pub(crate) const PATTERN: &str =
    r#"(?:^|[\s;&|(])[A-Za-z]:\\[^\s'"]|"[A-Za-z]:\\[^"]*\\"(?:[\s;&|)]|$)"#;

/// What every match holds in the raw command (the detector's quick test).
const LITERAL: &str = r":\";

/// What every match holds as the scan's prefilter sees it (lowercase, quotes and
/// backslashes removed): the drive's colon.
const PREFILTER: &str = ":";

/// The compiled detector.
fn detector() -> &'static Pattern {
    static P: OnceLock<Pattern> = OnceLock::new();
    P.get_or_init(|| Pattern::new(PATTERN, false))
}

/// Does `command` hold a Windows backslash path bash mangles?
pub(crate) fn is_mangled(command: &str) -> bool {
    command.contains(LITERAL) && detector().is_match(command).unwrap_or(false)
}

/// Is this proposal keyed on the structure?
pub(crate) fn keyed(p: &super::pattern::Proposal) -> bool {
    p.kind == KIND
}

/// The proposal kind.
const KIND: &str = "backslash-path";

/// The structure's candidate pattern.
pub(crate) fn pattern() -> SharedPattern {
    SharedPattern {
        kind: KIND,
        element:
            "Windows backslash path bash mangles (unquoted, or quoted with a trailing backslash)"
                .into(),
        any: PATTERN.to_string(),
        text: true,
        literal: PREFILTER.to_string(),
        separates: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mangled_spellings_match_and_the_ones_bash_reads_do_not() {
        for bad in [
            r"cd C:\Users\x\proj",
            r"cd /tmp && ls C:\Users\x",
            r"(cd D:\a)",
            r#"npx jest "C:\Users\x\tests\unit\""#,
            r#"ls "C:\a\" && echo"#,
            r#"ls "C:\a\""#,
        ] {
            assert!(is_mangled(bad), "{bad}");
        }
        for ok in [
            "cd C:/Users/x/proj",
            "cd /c/Users/x/proj",
            r"cd 'C:\Users\x\proj'",
            r#"cd "C:\Users\x\proj""#,
            r"echo xC:\a",
            r"cd C:\ ",
            r#"ls "C:\a\"b""#,
            "ls",
        ] {
            assert!(!is_mangled(ok), "{ok}");
        }
        let p = pattern();
        assert_eq!(
            (p.kind, p.text, p.literal.as_str()),
            ("backslash-path", true, ":")
        );
        assert_eq!(p.any, PATTERN);
    }
}
