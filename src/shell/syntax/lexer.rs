//! Lexer: Bash source → tokens (words, control operators, redirections, arithmetic commands).
//!
//! Words come out after quote removal (`'…'`, `"…"`, `$'…'` with its escapes decoded, `$"…"`,
//! backslashes, line continuations), with every command substitution, backtick and process
//! substitution inside them (also inside `"…"`, `${…}`, `$((…))`, array literals) lexed into a
//! self-contained [`Sub`]. Substitutions stay in the word's value as written (`$(ls)`); an
//! unquoted `$IFS`/`${IFS…}` ends the word like a blank. Heredoc bodies are read at the next
//! newline token and attached to their redirection; an unquoted body's substitutions are lexed.
//!
//! This file holds the token loop, words, redirections and heredocs; the scanners for quotes
//! and expansions are in `expand.rs`.
//!
//! Guarantees: never panics on any input (every slice is cut at an ASCII byte or the end);
//! always makes progress; each byte is lexed once per enclosing substitution level at most;
//! recursion is bounded by [`MAX_DEPTH`](crate::shell::MAX_DEPTH) substitution levels and
//! [`MAX_NEST`] lexical levels — past either, lexing stops with a problem recorded. The first
//! problem met (unterminated quote, unbalanced paren …) is kept in [`Lexed::problem`].

use crate::shell::syntax::token::{Heredoc, Op, Redir, Sub, SubKind, Tok, Word};

/// Lexical nesting (quotes in `${…}` in `$(…)` …) allowed before lexing gives up.
pub(crate) const MAX_NEST: u32 = 64;

/// The lexer's output.
pub(crate) struct Lexed {
    pub(crate) tokens: Vec<Tok>,
    pub(crate) problem: Option<String>,
    /// Lexing stopped because something was nested too deep.
    pub(crate) too_deep: bool,
}

/// Lexes `src`, whose commands sit at segment depth `depth`.
pub(crate) fn lex(src: &str, depth: u8) -> Lexed {
    let mut lx = Lexer::new(src, depth, 0);
    let (tokens, _) = lx.list(false);
    Lexed {
        tokens,
        problem: lx.problem,
        too_deep: lx.too_deep,
    }
}

/// The words of `src` (values only), e.g. for `env -S STRING`. Operators are skipped.
pub(crate) fn words(src: &str, depth: u8) -> (Vec<String>, Option<String>) {
    let lexed = lex(src, depth);
    let words = lexed
        .tokens
        .into_iter()
        .filter_map(|t| match t {
            Tok::Word(w) if !w.value.is_empty() || w.quoted => Some(w.value),
            _ => None,
        })
        .collect();
    (words, lexed.problem)
}

/// What `$` turned out to start.
pub(crate) enum Dollar {
    Done,
    /// An unquoted `$IFS`/`${IFS…}`: a word break.
    Ifs,
}

/// The lexer's state over one source text.
pub(crate) struct Lexer<'a> {
    pub(crate) src: &'a str,
    pub(crate) b: &'a [u8],
    pub(crate) pos: usize,
    /// Segment depth of the commands being lexed (bounded by [`MAX_DEPTH`](crate::shell::MAX_DEPTH)).
    pub(crate) depth: u8,
    /// Lexical nesting so far (bounded by [`MAX_NEST`]).
    pub(crate) nest: u32,
    pub(crate) problem: Option<String>,
    /// Set by [`Lexer::too_deep`]: the model's `nesting-depth` limit.
    pub(crate) too_deep: bool,
}

pub(crate) fn is_blank(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r')
}

pub(crate) fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// `NAME=` or `NAME+=`: a word that, followed by `(`, starts an array literal.
pub(crate) fn is_array_prefix(v: &str) -> bool {
    let name = v.strip_suffix("+=").or_else(|| v.strip_suffix('='));
    name.is_some_and(|n| {
        n.bytes()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
            && n.bytes().all(is_ident)
    })
}

/// Whether a word can be the fd prefix of a redirection: `2` in `2>x`, `{fd}` in `{fd}>x`.
pub(crate) fn is_fd_prefix(w: &Word, start: usize, pos: usize) -> bool {
    if w.quoted || !w.subs.is_empty() || w.value.is_empty() || pos - start != w.value.len() {
        return false;
    }
    let v = w.value.as_bytes();
    v.iter().all(u8::is_ascii_digit)
        || (v.len() > 2
            && v[0] == b'{'
            && v[v.len() - 1] == b'}'
            && v[1..v.len() - 1].iter().all(|&c| is_ident(c)))
}

/// Whether the next word would be in command position (for spotting `case` inside `$(…)`).
pub(crate) fn at_command_start(toks: &[Tok]) -> bool {
    match toks.last() {
        None => true,
        Some(Tok::Op(op, ..)) => *op != Op::RParen,
        Some(Tok::Word(w)) => {
            !w.quoted
                && matches!(
                    w.value.as_str(),
                    "then" | "do" | "else" | "elif" | "if" | "while" | "until" | "{" | "!"
                )
        }
        Some(_) => false,
    }
}

impl<'a> Lexer<'a> {
    pub(crate) fn new(src: &'a str, depth: u8, nest: u32) -> Self {
        Lexer {
            src,
            b: src.as_bytes(),
            pos: 0,
            depth,
            nest,
            problem: None,
            too_deep: false,
        }
    }

    pub(crate) fn problem(&mut self, p: &str) {
        if self.problem.is_none() {
            self.problem = Some(p.to_owned());
        }
    }

    pub(crate) fn at(&self, i: usize) -> Option<u8> {
        self.b.get(i).copied()
    }

    pub(crate) fn eof(&self) -> bool {
        self.pos >= self.b.len()
    }

    /// Gives up on the rest of the input (too deep): every enclosing scan then sees the end.
    pub(crate) fn bail(&mut self, p: &str) {
        self.problem(p);
        self.pos = self.b.len();
    }

    /// Gives up on the rest of the input because it is nested too deep.
    pub(crate) fn too_deep(&mut self, p: &str) {
        self.too_deep = true;
        self.bail(p);
    }

    /// Enters one lexical level; `false` (after bailing) when nested too deep.
    pub(crate) fn enter(&mut self) -> bool {
        self.nest += 1;
        if self.nest > MAX_NEST {
            self.too_deep("nesting too deep");
            return false;
        }
        true
    }

    pub(crate) fn leave(&mut self) {
        self.nest = self.nest.saturating_sub(1);
    }

    /// Position after the character at `self.pos`.
    pub(crate) fn after_char(&self) -> usize {
        let len = self
            .src
            .get(self.pos..)
            .and_then(|s| s.chars().next())
            .map_or(1, char::len_utf8);
        (self.pos + len).min(self.b.len())
    }

    /// Position after the character escaped by the backslash at `self.pos`.
    pub(crate) fn after_escape(&self) -> usize {
        let next = self.pos + 1;
        let len = self
            .src
            .get(next..)
            .and_then(|s| s.chars().next())
            .map_or(0, char::len_utf8);
        (next + len).min(self.b.len())
    }

    pub(crate) fn push_run(&self, value: &mut String, from: usize) {
        if let Some(s) = self.src.get(from..self.pos) {
            value.push_str(s);
        }
    }

    pub(crate) fn skip_blanks(&mut self) {
        while let Some(c) = self.at(self.pos) {
            if is_blank(c) {
                self.pos += 1;
            } else if c == b'\\' && self.at(self.pos + 1) == Some(b'\n') {
                self.pos += 2;
            } else {
                break;
            }
        }
    }

    /// Lexes a command list until the end, or — with `subst` — until the `)` closing a
    /// `$(`/`<(` (consumed; the `bool` says it was found).
    #[allow(clippy::too_many_lines)]
    // The lexer's outer state machine: one arm per byte that starts a token, sharing the
    // paren, `case` and pending-heredoc counters; split, those would be threaded through
    // every piece.
    pub(crate) fn list(&mut self, subst: bool) -> (Vec<Tok>, bool) {
        let mut toks = Vec::with_capacity(if subst { 8 } else { self.b.len() / 6 + 2 });
        let mut pending: Vec<usize> = Vec::new();
        let (mut parens, mut cases) = (0u32, 0u32);
        loop {
            self.skip_blanks();
            let Some(c) = self.at(self.pos) else { break };
            let start = self.pos;
            let next = self.at(self.pos + 1);
            let op = |o: Op, len: usize| (o, len);
            let simple = match c {
                b'\n' => Some(op(Op::Newline, 1)),
                b';' => Some(match (next, self.at(self.pos + 2)) {
                    (Some(b';'), Some(b'&')) => op(Op::DSemiAmp, 3),
                    (Some(b';'), _) => op(Op::DSemi, 2),
                    (Some(b'&'), _) => op(Op::SemiAmp, 2),
                    _ => op(Op::Semi, 1),
                }),
                b'&' if next == Some(b'&') => Some(op(Op::And, 2)),
                b'&' if next != Some(b'>') => Some(op(Op::Amp, 1)),
                b'|' => Some(match next {
                    Some(b'|') => op(Op::Or, 2),
                    Some(b'&') => op(Op::PipeAmp, 2),
                    _ => op(Op::Pipe, 1),
                }),
                _ => None,
            };
            if let Some((o, len)) = simple {
                self.pos += len;
                toks.push(Tok::Op(o, start, self.pos));
                if o == Op::Newline && !pending.is_empty() {
                    self.heredoc_bodies(&mut toks, &mut pending);
                }
                continue;
            }
            match c {
                b'#' => {
                    while self.at(self.pos).is_some_and(|c| c != b'\n') {
                        self.pos += 1;
                    }
                }
                b'(' => {
                    if next == Some(b'(') && self.arith_closes(start + 2) {
                        let mut subs = Vec::new();
                        self.pos += 2;
                        self.arith(&mut subs);
                        toks.push(Tok::Arith(subs, start, self.pos));
                        continue;
                    }
                    parens += 1;
                    self.pos += 1;
                    toks.push(Tok::Op(Op::LParen, start, self.pos));
                }
                b')' => {
                    self.pos += 1;
                    if subst && parens == 0 && cases == 0 {
                        self.end_pending(&pending);
                        return (toks, true);
                    }
                    parens = parens.saturating_sub(1);
                    toks.push(Tok::Op(Op::RParen, start, self.pos));
                }
                b'<' | b'>' | b'&' if next != Some(b'(') || c == b'&' => {
                    let r = Box::new(self.redirect(String::new(), start));
                    self.push_redir(&mut toks, &mut pending, r);
                }
                _ => match self.word(true) {
                    Some(Tok::Redir(r)) => self.push_redir(&mut toks, &mut pending, r),
                    Some(Tok::Word(w)) => {
                        if subst && !w.quoted {
                            match w.value.as_str() {
                                "case" if at_command_start(&toks) => cases += 1,
                                "esac" => cases = cases.saturating_sub(1),
                                _ => {}
                            }
                        }
                        toks.push(Tok::Word(w));
                    }
                    Some(t) => toks.push(t),
                    None if self.pos == start => self.pos = self.after_char(),
                    None => {}
                },
            }
        }
        self.end_pending(&pending);
        (toks, false)
    }

    pub(crate) fn end_pending(&mut self, pending: &[usize]) {
        if !pending.is_empty() {
            self.problem("unterminated heredoc");
        }
    }

    pub(crate) fn push_redir(
        &mut self,
        toks: &mut Vec<Tok>,
        pending: &mut Vec<usize>,
        r: Box<Redir>,
    ) {
        if (r.op.ends_with("<<") || r.op.ends_with("<<-")) && !r.op.ends_with("<<<") {
            if r.target.is_some() {
                pending.push(toks.len());
            } else {
                self.problem("heredoc without a delimiter");
            }
        }
        toks.push(Tok::Redir(r));
    }

    /// Reads the bodies of the heredocs declared on the line just ended.
    pub(crate) fn heredoc_bodies(&mut self, toks: &mut [Tok], pending: &mut Vec<usize>) {
        for idx in pending.drain(..) {
            let Some(Tok::Redir(r)) = toks.get_mut(idx) else {
                continue;
            };
            let Some(delim) = &r.target else { continue };
            let strip = r.op.ends_with("<<-");
            let quoted = delim.quoted;
            let mut body = String::new();
            let mut found = false;
            while !self.eof() {
                let line_end = self.b[self.pos..]
                    .iter()
                    .position(|&c| c == b'\n')
                    .map_or(self.b.len(), |i| self.pos + i);
                let line = self.src.get(self.pos..line_end).unwrap_or("");
                let line = if strip {
                    line.trim_start_matches('\t')
                } else {
                    line
                };
                self.pos = (line_end + 1).min(self.b.len());
                if line == delim.value {
                    found = true;
                    break;
                }
                body.push_str(line);
                body.push('\n');
            }
            if !found {
                self.problem("unterminated heredoc");
            }
            let subs = if quoted {
                Vec::new()
            } else {
                self.body_subs(&body)
            };
            r.heredoc = Some(Heredoc { body, subs });
        }
    }

    /// The substitutions in an unquoted heredoc body (expanded like a double-quoted string).
    pub(crate) fn body_subs(&mut self, body: &str) -> Vec<Sub> {
        let mut lx = Lexer::new(body, self.depth, self.nest);
        let mut w = Word::default();
        lx.dquote(&mut w, true);
        if let Some(p) = lx.problem {
            self.problem(&p);
        }
        w.subs
    }

    /// Lexes a redirection operator at `self.pos` (after any fd `prefix`) and its target.
    pub(crate) fn redirect(&mut self, prefix: String, start: usize) -> Redir {
        let rest = &self.b[self.pos..];
        let op = [
            "&>>", "&>", "<<<", "<<-", "<<", "<>", "<&", ">>", ">|", ">&", "<", ">",
        ]
        .into_iter()
        .find(|o| rest.starts_with(o.as_bytes()))
        .unwrap_or(">");
        self.pos = (self.pos + op.len()).min(self.b.len());
        let mut op_s = prefix;
        op_s.push_str(op);
        self.skip_blanks();
        let target = match self.word(false) {
            Some(Tok::Word(w)) => Some(w),
            _ => None,
        };
        if target.is_none() {
            self.problem("redirection without a target");
        }
        Redir {
            op: op_s,
            target,
            heredoc: None,
            start,
            end: self.pos,
        }
    }

    /// Lexes one word at `self.pos`. With `allow_fd`, a word like `2` directly followed by
    /// `>` becomes the fd prefix of a redirection instead. `None` when nothing was there.
    #[allow(clippy::too_many_lines)]
    // The word's state machine: one arm per byte that changes how the word is read
    // (quotes, escapes, `$`, backticks, `(`, redirections), all sharing the word being built
    // and the start of the unquoted run not yet copied; each arm already calls out to its
    // own reader.
    pub(crate) fn word(&mut self, allow_fd: bool) -> Option<Tok> {
        let mut w = Word::default();
        let mut start = self.pos;
        let mut run = self.pos;
        while let Some(c) = self.at(self.pos) {
            match c {
                b' ' | b'\t' | b'\r' | b'\n' | b';' | b'&' | b'|' | b')' => break,
                b'(' => {
                    self.push_run(&mut w.value, run);
                    if w.quoted || !is_array_prefix(&w.value) {
                        run = self.pos;
                        break;
                    }
                    self.array(&mut w);
                    run = self.pos;
                }
                b'<' | b'>' => {
                    self.push_run(&mut w.value, run);
                    if self.at(self.pos + 1) == Some(b'(') {
                        let at = self.pos;
                        self.pos += 2;
                        if let Some(s) = self.cmdsub(SubKind::Process) {
                            w.subs.push(s);
                        }
                        w.value.push_str(self.src.get(at..self.pos).unwrap_or(""));
                        run = self.pos;
                        continue;
                    }
                    run = self.pos;
                    if allow_fd && is_fd_prefix(&w, start, self.pos) {
                        return Some(Tok::Redir(Box::new(self.redirect(w.value, start))));
                    }
                    break;
                }
                b'\\' => {
                    self.push_run(&mut w.value, run);
                    match self.at(self.pos + 1) {
                        None => {
                            w.value.push('\\');
                            self.pos += 1;
                        }
                        Some(b'\n') => self.pos += 2,
                        Some(_) => {
                            w.quoted = true;
                            let after = self.after_escape();
                            w.value
                                .push_str(self.src.get(self.pos + 1..after).unwrap_or(""));
                            self.pos = after;
                        }
                    }
                    run = self.pos;
                }
                b'\'' => {
                    self.push_run(&mut w.value, run);
                    w.quoted = true;
                    self.squote(&mut w.value);
                    run = self.pos;
                }
                b'"' => {
                    self.push_run(&mut w.value, run);
                    w.quoted = true;
                    self.pos += 1;
                    if self.enter() {
                        self.dquote(&mut w, false);
                        self.leave();
                    }
                    run = self.pos;
                }
                b'`' => {
                    self.push_run(&mut w.value, run);
                    self.backtick(&mut w, false);
                    run = self.pos;
                }
                b'$' => {
                    self.push_run(&mut w.value, run);
                    let before = self.pos;
                    let d = self.dollar(&mut w, false);
                    run = self.pos;
                    if let Dollar::Ifs = d {
                        if w.value.is_empty() && !w.quoted && w.subs.is_empty() {
                            start = self.pos;
                            continue;
                        }
                        w.start = start;
                        w.end = before;
                        return Some(Tok::Word(w));
                    }
                }
                _ => self.pos += 1,
            }
        }
        self.push_run(&mut w.value, run);
        if w.value.is_empty() && !w.quoted && w.subs.is_empty() {
            return None;
        }
        w.start = start;
        w.end = self.pos;
        Some(Tok::Word(w))
    }
}
