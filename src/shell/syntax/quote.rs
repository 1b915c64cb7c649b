//! Quoting: turning argv back into text.
//!
//! [`quote`] renders argv as a Bash command that [`split`](crate::shell::split) reads back
//! to the same argv: a word is left bare only when it is non-empty, made of
//! `[A-Za-z0-9_@%+=:,./-]` (no `=` in the program word, which could read as an assignment),
//! and not a reserved word; otherwise it is single-quoted, with `'` written as `'\''`.
//!
//! `render_text` builds [`Segment::text`](crate::shell::Segment::text): words joined by single
//! spaces, single-quoting only words that hold whitespace or are empty, so rules see `$HOME`,
//! globs and `{}` as written while word boundaries stay visible (`echo 'rm -rf /'`).

use std::borrow::Cow;

/// Words Bash treats specially in command position.
const RESERVED: &[&str] = &[
    "if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until", "do",
    "done", "in", "function", "time", "coproc",
];

fn is_safe(c: char) -> bool {
    c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c)
}

fn single_quote_into(out: &mut String, w: &str) {
    out.push('\'');
    for (i, part) in w.split('\'').enumerate() {
        if i > 0 {
            out.push_str("'\\''");
        }
        out.push_str(part);
    }
    out.push('\'');
}

/// Quotes one word for Bash: returned as is when it needs no quoting, else single-quoted.
#[must_use]
pub(crate) fn quote_word(w: &str) -> Cow<'_, str> {
    if !w.is_empty() && w.chars().all(is_safe) && !RESERVED.contains(&w) {
        return Cow::Borrowed(w);
    }
    let mut out = String::with_capacity(w.len() + 2);
    single_quote_into(&mut out, w);
    Cow::Owned(out)
}

/// Renders argv as a Bash command that splits back into the same argv.
#[must_use]
pub fn quote(argv: &[String]) -> String {
    let mut out = String::new();
    for (i, w) in argv.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        if i == 0 && w.contains('=') {
            single_quote_into(&mut out, w);
        } else {
            out.push_str(&quote_word(w));
        }
    }
    out
}

/// The segment text for `argv` (see the module documentation).
pub(crate) fn render_text(argv: &[String]) -> String {
    let mut out = String::with_capacity(argv.iter().map(|w| w.len() + 1).sum());
    for (i, w) in argv.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        if w.is_empty() || w.chars().any(char::is_whitespace) {
            single_quote_into(&mut out, w);
        } else {
            out.push_str(w);
        }
    }
    out
}

/// The common backslash escapes of `echo -e` and `printf` formats.
pub(crate) fn unescape_print(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('\\') | None => out.push('\\'),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
        }
    }
    out
}
