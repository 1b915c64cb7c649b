//! Quoting and expansions inside words: `'…'`, `"…"`, `$'…'` (ANSI-C escapes decoded),
//! `$"…"`, `$(…)`, `<(…)`/`>(…)`, backticks, `${…}`, `$((…))`, array literals, `$IFS`.
//! Each scan appends the word's value after quote removal (substitutions kept as written)
//! and collects the nested commands it met; each recursion goes through `enter` (bounded
//! lexical nesting) or the depth check (bounded substitution depth).

use crate::shell::MAX_DEPTH;
use crate::shell::syntax::lexer::{Dollar, Lexer, MAX_NEST, is_ident};
use crate::shell::syntax::token::{Sub, SubKind, Tok, Word, rebase};

impl Lexer<'_> {
    /// `'…'` at `self.pos`: appends the literal contents.
    pub(crate) fn squote(&mut self, value: &mut String) {
        let from = self.pos + 1;
        let close = self
            .b
            .get(from..)
            .and_then(|r| r.iter().position(|&c| c == b'\''));
        if let Some(i) = close {
            value.push_str(self.src.get(from..from + i).unwrap_or(""));
            self.pos = from + i + 1;
        } else {
            value.push_str(self.src.get(from..).unwrap_or(""));
            self.bail("unterminated single quote");
        }
    }

    /// The inside of `"…"` (opening quote consumed). With `heredoc`, there is no closing
    /// quote: scans to the end, and `\"` is not an escape.
    pub(crate) fn dquote(&mut self, w: &mut Word, heredoc: bool) {
        let mut run = self.pos;
        loop {
            let Some(c) = self.at(self.pos) else {
                self.push_run(&mut w.value, run);
                if !heredoc {
                    self.problem("unterminated double quote");
                }
                return;
            };
            match c {
                b'"' if !heredoc => {
                    self.push_run(&mut w.value, run);
                    self.pos += 1;
                    return;
                }
                b'\\' => match self.at(self.pos + 1) {
                    Some(e @ (b'$' | b'`' | b'\\' | b'"')) if e != b'"' || !heredoc => {
                        self.push_run(&mut w.value, run);
                        w.value.push(char::from(e));
                        self.pos += 2;
                        run = self.pos;
                    }
                    Some(b'\n') => {
                        self.push_run(&mut w.value, run);
                        self.pos += 2;
                        run = self.pos;
                    }
                    _ => self.pos += 1,
                },
                b'$' => {
                    self.push_run(&mut w.value, run);
                    self.dollar(w, true);
                    run = self.pos;
                }
                b'`' => {
                    self.push_run(&mut w.value, run);
                    self.backtick(w, !heredoc);
                    run = self.pos;
                }
                _ => self.pos += 1,
            }
        }
    }

    /// Whatever starts with the `$` at `self.pos`. Appends its text (substitutions as
    /// written) to `w.value` and its substitutions to `w.subs`.
    pub(crate) fn dollar(&mut self, w: &mut Word, in_dq: bool) -> Dollar {
        let at = self.pos;
        match self.at(at + 1) {
            Some(b'\'') if !in_dq => {
                w.quoted = true;
                self.pos += 2;
                self.ansi_c(&mut w.value);
            }
            Some(b'"') if !in_dq => {
                w.quoted = true;
                self.pos += 2;
                if self.enter() {
                    self.dquote(w, false);
                    self.leave();
                }
            }
            Some(b'(') => {
                if self.at(at + 2) == Some(b'(') && self.arith_closes(at + 3) {
                    self.pos = at + 3;
                    self.arith(&mut w.subs);
                    w.value.push_str(self.src.get(at..self.pos).unwrap_or(""));
                    return Dollar::Done;
                }
                self.pos = at + 2;
                if let Some(s) = self.cmdsub(SubKind::Command) {
                    w.subs.push(s);
                }
                w.value.push_str(self.src.get(at..self.pos).unwrap_or(""));
            }
            Some(b'{') => {
                let ifs = !in_dq
                    && self.b[at + 2..].starts_with(b"IFS")
                    && !self.at(at + 5).is_some_and(is_ident);
                self.pos = at + 2;
                self.param(&mut w.subs);
                if ifs {
                    return Dollar::Ifs;
                }
                w.value.push_str(self.src.get(at..self.pos).unwrap_or(""));
            }
            _ if !in_dq
                && self.b[at + 1..].starts_with(b"IFS")
                && !self.at(at + 4).is_some_and(is_ident) =>
            {
                self.pos = at + 4;
                return Dollar::Ifs;
            }
            _ => {
                w.value.push('$');
                self.pos += 1;
            }
        }
        Dollar::Done
    }

    /// `$(…)`/`<(…)`/`>(…)` with `self.pos` just inside the `(`: lexes the inner list.
    pub(crate) fn cmdsub(&mut self, kind: SubKind) -> Option<Sub> {
        if self.depth >= MAX_DEPTH {
            self.too_deep(&format!("nesting deeper than {MAX_DEPTH} levels"));
            return None;
        }
        if !self.enter() {
            return None;
        }
        self.depth += 1;
        let inner = self.pos;
        let (mut tokens, closed) = self.list(true);
        self.depth -= 1;
        self.leave();
        let inner_end = if closed { self.pos - 1 } else { self.pos };
        if !closed {
            self.problem(if kind == SubKind::Command {
                "unterminated $("
            } else {
                "unterminated process substitution"
            });
        }
        rebase(&mut tokens, inner);
        Some(Sub {
            kind,
            text: self.src.get(inner..inner_end).unwrap_or("").to_owned(),
            tokens,
        })
    }

    /// Backticks at `self.pos`: unescapes the inside and lexes it as a nested command.
    pub(crate) fn backtick(&mut self, w: &mut Word, in_dq: bool) {
        let at = self.pos;
        self.pos += 1;
        let mut inner = String::new();
        let mut run = self.pos;
        let mut closed = false;
        while let Some(c) = self.at(self.pos) {
            match c {
                b'`' => {
                    self.push_run(&mut inner, run);
                    self.pos += 1;
                    closed = true;
                    break;
                }
                b'\\' => match self.at(self.pos + 1) {
                    Some(e @ (b'$' | b'`' | b'\\' | b'"')) if e != b'"' || in_dq => {
                        self.push_run(&mut inner, run);
                        inner.push(char::from(e));
                        self.pos += 2;
                        run = self.pos;
                    }
                    Some(b'\n') => {
                        self.push_run(&mut inner, run);
                        self.pos += 2;
                        run = self.pos;
                    }
                    _ => self.pos += 1,
                },
                _ => self.pos += 1,
            }
        }
        if !closed {
            self.push_run(&mut inner, run);
            self.problem("unterminated backquote");
        }
        w.value.push_str(self.src.get(at..self.pos).unwrap_or(""));
        if self.depth >= MAX_DEPTH {
            self.too_deep(&format!("nesting deeper than {MAX_DEPTH} levels"));
            return;
        }
        let mut lx = Lexer::new(&inner, self.depth + 1, self.nest + 1);
        if lx.nest > MAX_NEST {
            self.too_deep("nesting too deep");
            return;
        }
        let (tokens, _) = lx.list(false);
        if let Some(p) = lx.problem {
            self.problem(&p);
        }
        w.subs.push(Sub {
            kind: SubKind::Command,
            text: inner,
            tokens,
        });
    }

    /// `${…}` with `self.pos` after `${`: skips to the matching `}`, collecting substitutions.
    pub(crate) fn param(&mut self, subs: &mut Vec<Sub>) {
        if !self.enter() {
            return;
        }
        let mut level = 1u32;
        loop {
            let Some(c) = self.at(self.pos) else {
                self.problem("unterminated ${");
                break;
            };
            match c {
                b'{' => {
                    level += 1;
                    self.pos += 1;
                }
                b'}' => {
                    self.pos += 1;
                    level -= 1;
                    if level == 0 {
                        break;
                    }
                }
                _ => self.inner_char(subs),
            }
        }
        self.leave();
    }

    /// One step inside `${…}`, `$((…))` or an array literal: quotes, escapes and nested
    /// substitutions are skipped as units, their substitutions collected.
    pub(crate) fn inner_char(&mut self, subs: &mut Vec<Sub>) {
        let mut scratch = Word::default();
        match self.b[self.pos] {
            b'\\' => self.pos = self.after_escape(),
            b'\'' => self.squote(&mut scratch.value),
            b'"' => {
                self.pos += 1;
                if self.enter() {
                    self.dquote(&mut scratch, false);
                    self.leave();
                }
            }
            b'$' => {
                self.dollar(&mut scratch, true);
            }
            b'`' => self.backtick(&mut scratch, false),
            _ => self.pos += 1,
        }
        subs.append(&mut scratch.subs);
    }

    /// Whether the `((` whose inside starts at `from` closes with `))` — arithmetic — rather
    /// than singly (`( (…) … )`, `$( (…) … )`). A flat scan (quotes skipped, no recursion),
    /// so deciding costs O(n) per level and the inside is lexed once, whatever the nesting.
    pub(crate) fn arith_closes(&self, from: usize) -> bool {
        let mut level = 0u32;
        let mut i = from;
        while let Some(&c) = self.b.get(i) {
            match c {
                b'\\' => i += 1,
                b'\'' | b'"' => {
                    i += 1;
                    while let Some(&q) = self.b.get(i) {
                        if q == c {
                            break;
                        }
                        i += if q == b'\\' && c == b'"' { 2 } else { 1 };
                    }
                }
                b'(' => level += 1,
                b')' if level > 0 => level -= 1,
                b')' => return self.b.get(i + 1) == Some(&b')'),
                _ => {}
            }
            i += 1;
        }
        true
    }

    /// After `((` or `$((`: scans to the matching `))`. When the parens close singly after
    /// all (the flat [`arith_closes`](Self::arith_closes) misjudged quoting), the scan stops
    /// there with a problem; it never backtracks.
    pub(crate) fn arith(&mut self, subs: &mut Vec<Sub>) {
        if !self.enter() {
            return;
        }
        let mut level = 0u32;
        loop {
            let Some(c) = self.at(self.pos) else {
                self.problem("unterminated ((");
                break;
            };
            match c {
                b'(' => {
                    level += 1;
                    self.pos += 1;
                }
                b')' if level > 0 => {
                    level -= 1;
                    self.pos += 1;
                }
                b')' if self.at(self.pos + 1) == Some(b')') => {
                    self.pos += 2;
                    break;
                }
                b')' => {
                    self.problem("ambiguous ((");
                    break;
                }
                _ => self.inner_char(subs),
            }
        }
        self.leave();
    }

    /// An array literal `NAME=(…)` with `self.pos` at `(`: appended to the word as written.
    pub(crate) fn array(&mut self, w: &mut Word) {
        let at = self.pos;
        self.pos += 1;
        if !self.enter() {
            return;
        }
        let (tokens, closed) = self.list(true);
        self.leave();
        if !closed {
            self.problem("unterminated array literal");
        }
        for t in tokens {
            if let Tok::Word(mut inner) = t {
                w.subs.append(&mut inner.subs);
            }
        }
        w.value.push_str(self.src.get(at..self.pos).unwrap_or(""));
    }

    /// The inside of `$'…'` (opening consumed): decodes ANSI-C escapes into `value`.
    pub(crate) fn ansi_c(&mut self, value: &mut String) {
        let mut run = self.pos;
        let mut nul = false;
        loop {
            let Some(c) = self.at(self.pos) else {
                if !nul {
                    self.push_run(value, run);
                }
                self.problem("unterminated $'");
                return;
            };
            match c {
                b'\'' => {
                    if !nul {
                        self.push_run(value, run);
                    }
                    self.pos += 1;
                    return;
                }
                b'\\' => {
                    if !nul {
                        self.push_run(value, run);
                    }
                    let ch = self.ansi_escape();
                    if ch == Some('\0') {
                        nul = true;
                    } else if let (Some(ch), false) = (ch, nul) {
                        value.push(ch);
                    }
                    run = self.pos;
                }
                _ => self.pos += 1,
            }
        }
    }

    /// One escape at `self.pos` (a backslash) inside `$'…'`; `None` for a backslash kept
    /// literally (then only the backslash is consumed and pushed by the caller's run).
    pub(crate) fn ansi_escape(&mut self) -> Option<char> {
        let Some(e) = self.at(self.pos + 1) else {
            self.pos += 1;
            return Some('\\');
        };
        let simple = match e {
            b'a' => Some('\x07'),
            b'b' => Some('\x08'),
            b'e' | b'E' => Some('\x1b'),
            b'f' => Some('\x0c'),
            b'n' => Some('\n'),
            b'r' => Some('\r'),
            b't' => Some('\t'),
            b'v' => Some('\x0b'),
            b'\\' | b'\'' | b'"' | b'?' => Some(char::from(e)),
            _ => None,
        };
        if let Some(ch) = simple {
            self.pos += 2;
            return Some(ch);
        }
        let (radix, max, skip) = match e {
            b'0'..=b'7' => (8, 3, 1),
            b'x' => (16, 2, 2),
            b'u' => (16, 4, 2),
            b'U' => (16, 8, 2),
            b'c' => {
                let Some(x) = self.at(self.pos + 2) else {
                    self.pos += 2;
                    return None;
                };
                self.pos += 3;
                return Some(char::from(x & 0x1f));
            }
            _ => {
                self.pos += 1;
                return Some('\\');
            }
        };
        let digits_at = self.pos + skip;
        let mut n = 0u32;
        let mut count = 0;
        while count < max {
            let Some(d) = self
                .at(digits_at + count)
                .and_then(|d| char::from(d).to_digit(radix))
            else {
                break;
            };
            n = n * radix + d;
            count += 1;
        }
        if count == 0 {
            self.pos += 1;
            return Some('\\');
        }
        self.pos = digits_at + count;
        Some(char::from_u32(n).unwrap_or('\u{fffd}'))
    }
}
