//! Simple shell state followed through one command string: variables assigned in it
//! (`X=rm; $X -rf /`, `CMD="rm -rf /"; $CMD`, `export D=/`) and `$(echo WORDS)` /
//! `` `echo WORDS` `` substitutions are expanded textually, so the re-split command shows
//! what would run. `NAME=(WORDS)` arrays (`"${a[@]}"`, `${a[0]}`, `$a`), `for NAME in WORDS`
//! loop variables (every word, as a list) and the defaults of unset names (`${X:-rm}`,
//! `${X:=rm}`) are followed the same way. Functions need nothing here: the splitter already
//! yields their bodies.
//! Bounded: at most [`MAX_EXPANSIONS`] expansions in at most three rounds.

use super::limits::{MAX_EXPANSIONS, MAX_LEN};
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

/// One name the command defines.
struct Def {
    name: String,
    value: String,
    kind: Kind,
}

/// How a name's value expands.
#[derive(Clone, Copy)]
enum Kind {
    /// `NAME=VALUE`: one word (when quoted).
    Scalar,
    /// `NAME=(WORDS)`: `"${NAME[@]}"` is every word, each on its own; `$NAME` the first.
    Array,
    /// `for NAME in WORDS`: the body runs with each word; followed as all of them at once.
    Loop,
    /// `alias NAME=VALUE`: `NAME` in program position is `VALUE` (not `$NAME`).
    Alias,
}

/// `for NAME in WORDS; do`: the loop variable takes every word.
fn loop_variables(text: &str, out: &mut Vec<Def>) {
    let mut rest = text;
    while let Some(at) = rest.find("for ") {
        let before = rest[..at].chars().next_back();
        let after = &rest[at + 4..];
        rest = after;
        if before.is_some_and(|c| !matches!(c, ' ' | '\t' | '\n' | ';' | '&' | '|' | '(' | '{')) {
            continue;
        }
        let after = after.trim_start();
        let name_len = after.bytes().take_while(|c| ident(*c)).count();
        if name_len == 0 || !after.as_bytes().first().copied().is_some_and(ident_start) {
            continue;
        }
        let Some(words) = after[name_len..].trim_start().strip_prefix("in ") else {
            continue;
        };
        let end = words.find([';', '\n']).unwrap_or(words.len());
        let words = words[..end]
            .trim()
            .trim_end_matches(" do")
            .replace(['\'', '"'], "");
        out.push(Def {
            name: after[..name_len].to_string(),
            value: words,
            kind: Kind::Loop,
        });
    }
}

/// `alias NAME=VALUE` (the name then stands for its words in program position) and
/// `printf -v NAME FORMAT` (a literal format assigns it, as `NAME=FORMAT`).
fn builtin_definitions(text: &str, out: &mut Vec<Def>) {
    for (at, _) in text.match_indices("printf -v ") {
        let rest = &text[at + "printf -v ".len()..];
        let n = rest.bytes().take_while(|c| ident(*c)).count();
        if n == 0 {
            continue;
        }
        let (value, _) = value_at(rest[n..].trim_start(), 0);
        if !value.contains('%') {
            out.push(Def {
                name: rest[..n].to_string(),
                value,
                kind: Kind::Scalar,
            });
        }
    }
    for (at, _) in text.match_indices("alias ") {
        let rest = &text[at + "alias ".len()..];
        let n = rest.bytes().take_while(|c| ident(*c) || *c == b'-').count();
        if n == 0 || rest.as_bytes().get(n) != Some(&b'=') {
            continue;
        }
        let (value, _) = value_at(rest, n + 1);
        out.push(Def {
            name: rest[..n].to_string(),
            value,
            kind: Kind::Alias,
        });
    }
}

/// The words of a simple command starting at `text[start..]`, quotes removed, up to its
/// end (`;`, `&`, `|`, a newline, `}` or `)`).
fn command_words(text: &str, start: usize) -> Vec<String> {
    let mut words = Vec::new();
    let b = text.as_bytes();
    let mut i = start;
    loop {
        while i < b.len() && matches!(b[i], b' ' | b'\t') {
            i += 1;
        }
        if i >= b.len() || matches!(b[i], b';' | b'&' | b'|' | b'\n' | b'}' | b')') {
            return words;
        }
        let (w, end) = value_at(text, i);
        if end <= i {
            return words;
        }
        words.push(w);
        i = end;
    }
}

/// Is `text[at..]` at the start of a command (after a separator, or the string's start)?
fn command_start(text: &str, at: usize) -> bool {
    text[..at]
        .trim_end_matches([' ', '\t'])
        .chars()
        .next_back()
        .is_none_or(|c| matches!(c, ';' | '&' | '|' | '\n' | '(' | '{'))
        || text[..at].trim_end().ends_with(" then")
        || text[..at].trim_end().ends_with(" do")
}

/// The positional parameters the command gives itself: `set -- WORDS`, and the arguments
/// of the first call of a function it defines (`f(){ rm -rf "$1"; }; f ~`), so `$1` … `$9`,
/// `$@` and `$*` expand to them.
fn positional(text: &str, defs: &mut Vec<Def>) {
    let mut words: Option<Vec<String>> = None;
    for (at, _) in text.match_indices("set ") {
        if !command_start(text, at) {
            continue;
        }
        let w = command_words(text, at + 4);
        match w.first().map(String::as_str) {
            Some("--") => words = Some(w[1..].to_vec()),
            Some(f) if !f.starts_with(['-', '+']) => words = Some(w),
            _ => {}
        }
    }
    if words.is_none() {
        words = function_call_words(text);
    }
    let Some(words) = words else {
        return;
    };
    for (n, w) in words.iter().enumerate().take(9) {
        defs.push(Def {
            name: (n + 1).to_string(),
            value: w.clone(),
            kind: Kind::Scalar,
        });
    }
    defs.push(Def {
        name: "@".into(),
        value: words.join(" "),
        kind: Kind::Loop,
    });
}

/// The arguments of the first call of a function the command defines (`NAME() {` or
/// `function NAME`).
fn function_call_words(text: &str) -> Option<Vec<String>> {
    let mut names: Vec<&str> = Vec::new();
    for (at, _) in text.match_indices("()") {
        let before = text[..at].trim_end();
        let n = before.bytes().rev().take_while(|c| ident(*c)).count();
        if n > 0 && command_start(text, before.len() - n) {
            names.push(&before[before.len() - n..]);
        }
    }
    for (at, _) in text.match_indices("function ") {
        let rest = &text[at + "function ".len()..];
        let n = rest.bytes().take_while(|c| ident(*c)).count();
        if n > 0 && command_start(text, at) {
            names.push(&rest[..n]);
        }
    }
    // A bounded number of names, each found by one scan of the text.
    for name in names.into_iter().take(16) {
        for (at, _) in text.match_indices(name) {
            let after = &text[at + name.len()..];
            let boundary = after.is_empty() || after.starts_with([' ', '\t', ';', '\n', '&', '|']);
            if !boundary || !command_start(text, at) || after.trim_start().starts_with('(') {
                continue;
            }
            if text[..at].trim_end().ends_with("function") {
                continue;
            }
            return Some(command_words(text, at + name.len()));
        }
    }
    None
}

/// Replace each alias name in program position (the start of a command) by its value.
fn aliases(text: &str, defs: &[Def], count: &mut usize) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut changed = false;
    let mut command_start = true;
    for word in text.split_inclusive([' ', ';', '&', '|', '\n', '(', '{']) {
        let bare = word.trim_end_matches([' ', ';', '&', '|', '\n', '(', '{']);
        let alias = defs
            .iter()
            .rev()
            .find(|d| matches!(d.kind, Kind::Alias) && d.name == bare);
        match alias {
            Some(d) if command_start && !bare.is_empty() => {
                out.push_str(&d.value);
                out.push_str(&word[bare.len()..]);
                changed = true;
                *count += 1;
            }
            _ => out.push_str(word),
        }
        if !bare.is_empty() {
            command_start = matches!(bare, "then" | "do" | "else" | "!" | "time");
        }
        if word.ends_with([';', '&', '|', '\n', '(', '{']) {
            command_start = true;
        }
    }
    changed.then_some(out)
}

/// `NAME=VALUE` definitions at word start, in source order, values with quotes removed.
fn definitions(text: &str) -> Vec<Def> {
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
        if b.get(j + 1) == Some(&b'(') {
            let close = text[j + 2..].find(')').map_or(b.len(), |e| j + 2 + e);
            out.push(Def {
                name,
                value: text[j + 2..close].replace(['\'', '"'], ""),
                kind: Kind::Array,
            });
            i = close + 1;
            continue;
        }
        let (value, end) = value_at(text, j + 1);
        out.push(Def {
            name,
            value,
            kind: Kind::Scalar,
        });
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
            // `X=$(which rm)`: a substitution is one piece of the word, blanks and all (when
            // it closes within a short span; otherwise the word ends at a blank as before).
            b'$' if b.get(i + 1) == Some(&b'(')
                && let Some(end) = substitution_end(b, i + 1) =>
            {
                v.push_str(&text[i..end]);
                i = end;
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

/// Longest `$(…)` taken as one piece of an assigned value.
const MAX_SUBSTITUTION: usize = 256;

/// The end (past the `)`) of the substitution whose `(` is at `b[open]`, if it closes within
/// [`MAX_SUBSTITUTION`] bytes.
fn substitution_end(b: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (k, c) in b.iter().enumerate().skip(open).take(MAX_SUBSTITUTION) {
        match c {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(k + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// `${…}` at `text[i]`: the name, an index (`@`, `*` or a number), a default for an unset
/// name (`:-`, `:=`, `-`, `=`), and where it ends.
fn braced(text: &str, i: usize) -> Option<(&str, Option<&str>, Option<&str>, usize)> {
    let close = i + 2 + text[i + 2..].find('}')?;
    let inner = &text[i + 2..close];
    let n = inner.bytes().take_while(|c| ident(*c)).count();
    let (name, tail) = inner.split_at(n);
    // A name, or a positional parameter (`${1}`).
    if name.is_empty()
        || !ident_start(name.as_bytes()[0]) && !name.bytes().all(|c| c.is_ascii_digit())
    {
        return None;
    }
    if tail.is_empty() {
        return Some((name, None, None, close + 1));
    }
    if let Some(idx) = tail.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
        return Some((name, Some(idx), None, close + 1));
    }
    // `${X:?msg}`: X's value when it is set (the shell stops when it is not).
    if tail.starts_with(":?") || tail.starts_with('?') {
        return Some((name, None, None, close + 1));
    }
    let default = ["-", ":-", ":=", "="]
        .iter()
        .find_map(|op| tail.strip_prefix(op))
        .filter(|d| !d.contains(['$', '`', '{', '(']))?;
    Some((name, None, Some(default), close + 1))
}

/// Replace `$NAME` / `${NAME}` for each defined name, and `$(echo W)` / `` `echo W` ``.
/// `value` as an unquoted expansion splits it when the command set `IFS`: its characters
/// become blanks.
fn split_on(value: &str, ifs: Option<&str>) -> String {
    match ifs {
        Some(chars) if !chars.is_empty() => value
            .chars()
            .map(|c| if chars.contains(c) { ' ' } else { c })
            .collect(),
        _ => value.to_string(),
    }
}

/// The variable reference at `text[i]` (a `$` with a byte after it): its name (`@` for
/// `$@`/`$*`), its `[index]`, its `:-default`, and the index just after it.
fn reference(text: &str, i: usize) -> (&str, Option<&str>, Option<&str>, usize) {
    let b = text.as_bytes();
    if matches!(b[i + 1], b'@' | b'*') {
        ("@", None, None, i + 2)
    } else if text[i..].starts_with("${@}") || text[i..].starts_with("${*}") {
        ("@", None, None, i + 4)
    } else if b[i + 1] == b'{' {
        braced(text, i).unwrap_or(("", None, None, i + 1))
    } else {
        let mut j = i + 1;
        while j < b.len() && ident(b[j]) {
            j += 1;
        }
        (&text[i + 1..j], None, None, j)
    }
}

/// What a reference expands to, given the variable's last definition: the text, and
/// whether it is a list whose words stand on their own (`"${a[@]}"`, a loop variable).
fn value(
    def: Option<&Def>,
    index: Option<&str>,
    default: Option<&str>,
    ifs: Option<&str>,
) -> Option<(String, bool)> {
    match (def, default) {
        (Some(d), _) => match (d.kind, index) {
            (Kind::Loop, None) | (Kind::Array, Some("@" | "*")) => Some((d.value.clone(), true)),
            (Kind::Array, None) => Some((
                d.value.split_whitespace().next().unwrap_or("").into(),
                false,
            )),
            (Kind::Array, Some(k)) => k.parse::<usize>().ok().map(|k| {
                (
                    d.value.split_whitespace().nth(k).unwrap_or("").into(),
                    false,
                )
            }),
            (Kind::Scalar, None | Some("0" | "@" | "*")) => Some((split_on(&d.value, ifs), false)),
            _ => None,
        },
        (None, Some(word)) => Some((word.to_string(), false)),
        (None, None) => None,
    }
}

fn round(text: &str, defs: &[Def], count: &mut usize) -> Option<String> {
    let ifs = defs
        .iter()
        .rev()
        .find(|d| d.name == "IFS" && matches!(d.kind, Kind::Scalar))
        .map(|d| d.value.as_str());
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut changed = false;
    while i < b.len() {
        if b[i] == b'$' && i + 1 < b.len() {
            let (name, index, default, end) = reference(text, i);
            let def = defs
                .iter()
                .rev()
                .find(|d| d.name == name && !name.is_empty());
            if let Some((v, list)) = value(def, index, default, ifs) {
                // `"${a[@]}"`, `"$d"` of a loop: each word on its own, so drop the quotes.
                if list && out.ends_with('"') && text[end..].starts_with('"') {
                    out.pop();
                    out.push_str(&v);
                    i = end + 1;
                } else {
                    out.push_str(&v);
                    i = end;
                }
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
    // `$(which rm)`, `$(command -v rm)`, `$(type -P rm)` print the program's path.
    if let Some(name) = ["which ", "command -v ", "type -P ", "type -p "]
        .iter()
        .find_map(|p| inner.strip_prefix(p))
        .map(str::trim)
        .filter(|n| !n.is_empty() && !n.contains([' ', '\'', '"']))
    {
        return Some((name.to_string(), inner_start + end + close.len()));
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
    if !uses_state && !text.contains("alias ") {
        return Expanded::None;
    }
    let mut defs = if text.contains('=') {
        definitions(text)
    } else {
        Vec::new()
    };
    if text.contains("for ") {
        loop_variables(text, &mut defs);
    }
    if text.contains("alias ") || text.contains("printf -v ") {
        builtin_definitions(text, &mut defs);
    }
    positional(text, &mut defs);
    let mut count = 0;
    let mut current = text.to_string();
    let mut any = false;
    if let Some(next) = aliases(&current, &defs, &mut count) {
        current = next;
        any = true;
    }
    for _ in 0..3 {
        match round(&current, &defs, &mut count) {
            Some(next) => {
                current = next;
                any = true;
            }
            None => break,
        }
        if count > MAX_EXPANSIONS || current.len() > MAX_LEN {
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
    fn an_assigned_substitution_is_one_word_only_when_it_closes_nearby() {
        assert_eq!(value_at("$(which rm); x", 0).0, "$(which rm)");
        assert_eq!(value_at("a$(b (c) d)e f", 0).0, "a$(b (c) d)e");
        // Unclosed, or closed too far away: the word ends at a blank, as without `$(`.
        assert_eq!(value_at("$(a b", 0).0, "$(a");
        let far = format!("$(a {} )", "x".repeat(MAX_SUBSTITUTION));
        assert_eq!(value_at(&far, 0).0, "$(a");
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
