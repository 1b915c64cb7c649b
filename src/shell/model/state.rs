//! Simple shell state followed through one command string: variables assigned in it
//! (`X=rm; $X -rf /`, `CMD="rm -rf /"; $CMD`, `export D=/`) and `$(echo WORDS)` /
//! `` `echo WORDS` `` substitutions are expanded textually, so the re-split command shows
//! what would run. Functions need nothing here: the splitter already yields their bodies.
//! Bounded: at most [`super::MAX_EXPANSIONS`] expansions in at most three rounds.

use super::MAX_EXPANSIONS;
use crate::shell::Split;

/// What expansion produced.
pub(crate) enum Expanded {
    /// Nothing to expand.
    None,
    /// Too many expansions: the limit fires.
    TooMany,
    /// The command with its variables and echo substitutions expanded.
    Text(String),
}

fn ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

fn ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// `NAME=VALUE` definitions at word start, in source order, values with quotes removed.
fn definitions(text: &str) -> Vec<(String, String)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let at_start = i == 0
            || matches!(
                b[i - 1],
                b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'(' | b'{'
            );
        if !(at_start && ident_start(b[i])) {
            i += 1;
            continue;
        }
        let mut j = i;
        while j < b.len() && ident(b[j]) {
            j += 1;
        }
        if j >= b.len() || b[j] != b'=' {
            i = j.max(i + 1);
            continue;
        }
        let name = text[i..j].to_string();
        let (value, end) = value_at(text, j + 1);
        out.push((name, value));
        i = end.max(j + 1);
    }
    out
}

/// The word starting at `start`, quotes removed, and where it ends.
fn value_at(text: &str, start: usize) -> (String, usize) {
    let b = text.as_bytes();
    let mut v = String::new();
    let mut i = start;
    while i < b.len() {
        match b[i] {
            b'\'' => {
                let end = text[i + 1..].find('\'').map_or(b.len(), |e| i + 1 + e);
                v.push_str(&text[(i + 1).min(end)..end]);
                i = end + 1;
            }
            b'"' => {
                let mut k = i + 1;
                while k < b.len() && b[k] != b'"' {
                    if b[k] == b'\\' && k + 1 < b.len() {
                        k += 1;
                    }
                    k += 1;
                }
                v.push_str(&text[(i + 1).min(k)..k.min(b.len())]);
                i = k + 1;
            }
            b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b')' => break,
            _ => {
                let ch = text[i..].chars().next().unwrap_or(' ');
                v.push(ch);
                i += ch.len_utf8();
            }
        }
    }
    (v, i.min(b.len()))
}

/// Replace `$NAME` / `${NAME}` for each defined name, and `$(echo W)` / `` `echo W` ``.
fn round(text: &str, defs: &[(String, String)], count: &mut usize) -> Option<String> {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut changed = false;
    while i < b.len() {
        if b[i] == b'$' && i + 1 < b.len() {
            let (name, end) = if b[i + 1] == b'{' {
                let close = text[i + 2..].find('}').map(|e| i + 2 + e);
                match close {
                    Some(c) if text[i + 2..c].bytes().all(ident) => (&text[i + 2..c], c + 1),
                    _ => ("", i + 1),
                }
            } else {
                let mut j = i + 1;
                while j < b.len() && ident(b[j]) {
                    j += 1;
                }
                (&text[i + 1..j], j)
            };
            if !name.is_empty()
                && let Some((_, v)) = defs.iter().rev().find(|(n, _)| n == name)
            {
                out.push_str(v);
                i = end;
                changed = true;
                *count += 1;
                continue;
            }
            if let Some(words) = echo_substitution(&text[i..], "$(", ")") {
                out.push_str(&words.0);
                i += words.1;
                changed = true;
                *count += 1;
                continue;
            }
        }
        if b[i] == b'`'
            && let Some(words) = echo_substitution(&text[i..], "`", "`")
        {
            out.push_str(&words.0);
            i += words.1;
            changed = true;
            *count += 1;
            continue;
        }
        let ch = text[i..].chars().next().unwrap_or(' ');
        out.push(ch);
        i += ch.len_utf8();
    }
    changed.then_some(out)
}

/// `$(echo WORDS)` at the start of `s`: the words and the length consumed.
fn echo_substitution(s: &str, open: &str, close: &str) -> Option<(String, usize)> {
    let inner_start = open.len();
    let rest = s.get(inner_start..)?;
    let end = rest.find(close)?;
    let inner = rest[..end].trim();
    if inner.contains(['(', '`', '$', '|', ';', '&', '<', '>']) {
        return None;
    }
    let words = inner
        .strip_prefix("echo ")
        .or_else(|| inner.strip_prefix("printf "))?;
    if words.contains('%') {
        return None;
    }
    let words = words.replace(['\'', '"'], "");
    Some((words.trim().to_string(), inner_start + end + close.len()))
}

/// Expand what the command itself defines; see the module documentation.
pub(crate) fn expand(text: &str, split: &Split) -> Expanded {
    let uses_state = split
        .segments
        .iter()
        .any(|s| s.argv.iter().any(|w| w.contains('$') || w.contains('`')));
    if !uses_state {
        return Expanded::None;
    }
    let defs = if text.contains('=') {
        definitions(text)
    } else {
        Vec::new()
    };
    let mut count = 0;
    let mut current = text.to_string();
    let mut any = false;
    for _ in 0..3 {
        match round(&current, &defs, &mut count) {
            Some(next) => {
                current = next;
                any = true;
            }
            None => break,
        }
        if count > MAX_EXPANSIONS || current.len() > super::MAX_LEN {
            return Expanded::TooMany;
        }
    }
    if any {
        Expanded::Text(current)
    } else {
        Expanded::None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::split;

    fn exp(s: &str) -> Option<String> {
        match expand(s, &split(s)) {
            Expanded::Text(t) => Some(t),
            _ => None,
        }
    }

    #[test]
    fn variables_and_echo_substitutions_expand() {
        assert_eq!(exp("X=rm; $X -rf /").as_deref(), Some("X=rm; rm -rf /"));
        assert_eq!(
            exp("CMD=\"rm -rf /\"; ${CMD}").as_deref(),
            Some("CMD=\"rm -rf /\"; rm -rf /")
        );
        assert_eq!(exp("$(echo rm) -rf /").as_deref(), Some("rm -rf /"));
        assert_eq!(exp("`echo rm` -rf /").as_deref(), Some("rm -rf /"));
        assert_eq!(exp("rm -rf \"$DIR\""), None);
        assert_eq!(exp("ls -la"), None);
    }

    #[test]
    fn self_reference_is_bounded() {
        let s = "X='$X$X'; $X";
        assert!(matches!(
            expand(s, &split(s)),
            Expanded::TooMany | Expanded::Text(_)
        ));
        let defs: Vec<String> = (0..70).map(|i| format!("A{i}=x;")).collect();
        let uses: Vec<String> = (0..70).map(|i| format!("$A{i}")).collect();
        let many = format!("{} {}", defs.join(" "), uses.join(" "));
        assert!(matches!(expand(&many, &split(&many)), Expanded::TooMany));
    }
}
