//! Parser: tokens → simple commands, handed one by one to [`normalise`].
//!
//! A flat state machine with an explicit stack of open compounds (subshell, group, `if`,
//! loops, `case`), so deeply nested parens cannot overflow the call stack; it recurses only
//! into substitutions, whose depth the lexer bounds. Keywords count only unquoted and in
//! command position; loop frames give each segment its [`LoopCtx`]. `for`/`case` headers,
//! `case` patterns and `(( … ))` emit no segment, but the substitutions in them are split.
//! Inside `[[ … ]]` operators are words. Syntax errors (stray `)` or `fi`, `&&` with nothing
//! before or after it, an unclosed `if` …) are recorded as the problem and parsing goes on.
//!
//! Segments are emitted in execution order: a command's substitutions before the command.

use crate::shell::syntax::lexer::lex;
use crate::shell::syntax::normalise::{self, Command};
use crate::shell::syntax::sink::{Ctx, Sink};
use crate::shell::syntax::token::{Op, Redir, Sub, SubKind, Tok, Word};
use crate::shell::{LoopCtx, LoopKind, MAX_DEPTH, Origin, Redirect};

/// Lexes and parses `src`, whose commands sit at `depth`.
pub(crate) fn split_into(src: &str, depth: u8, ctx: &Ctx, sink: &mut Sink) {
    if depth > MAX_DEPTH {
        sink.too_deep = true;
        sink.problem(&format!("nesting deeper than {MAX_DEPTH} levels"));
        return;
    }
    let lexed = lex(src, depth);
    if let Some(p) = &lexed.problem {
        sink.problem(p);
    }
    sink.too_deep |= lexed.too_deep;
    parse(&lexed.tokens, src, depth, ctx, sink);
}

/// An open compound command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Frame {
    Subshell,
    Group,
    If,
    Loop { kind: LoopKind, body: bool },
    Case { body: bool },
}

impl Frame {
    fn name(self) -> &'static str {
        match self {
            Frame::Subshell => "unclosed (",
            Frame::Group => "unclosed {",
            Frame::If => "unclosed if",
            Frame::Loop { .. } => "unclosed loop",
            Frame::Case { .. } => "unclosed case",
        }
    }
}

/// What the next token means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Normal,
    ForName,
    ForIn,
    ForWords,
    CaseWord,
    CaseIn,
    CasePattern,
    FuncName,
    Bracket,
}

/// One argument of the command being built: a word, or an operator inside `[[ … ]]`.
enum Arg<'t> {
    Word(&'t Word),
    Text(&'t str),
}

#[derive(Default)]
struct Cmd<'t> {
    args: Vec<Arg<'t>>,
    redirs: Vec<&'t Redir>,
    span: Option<(usize, usize)>,
}

impl Cmd<'_> {
    fn is_empty(&self) -> bool {
        self.args.is_empty() && self.redirs.is_empty()
    }

    fn cover(&mut self, start: usize, end: usize) {
        self.span = Some(
            self.span
                .map_or((start, end), |(s, e)| (s.min(start), e.max(end))),
        );
    }
}

struct Parser<'t, 'c> {
    src: &'t str,
    depth: u8,
    ctx: &'c Ctx,
    frames: Vec<Frame>,
    state: State,
    cmd: Cmd<'t>,
    /// A command (simple or compound) ended since the last separator.
    have_cmd: bool,
    /// An operator (`&&`, `||`, `|`, `|&`) still waiting for its right-hand command.
    dangling: Option<Op>,
    /// A compound just closed: only operators and redirections may follow.
    after_compound: bool,
    /// What the previous pipeline stage prints, when it is a literal (`echo STR | sh`).
    feed: Option<String>,
    /// The next command reads the previous one's output through `|` or `|&`.
    piped: bool,
}

/// Parses one token list (a whole input, or the inside of a substitution).
pub(crate) fn parse(tokens: &[Tok], src: &str, depth: u8, ctx: &Ctx, sink: &mut Sink) {
    let mut p = Parser {
        src,
        depth,
        ctx,
        frames: Vec::new(),
        state: State::Normal,
        cmd: Cmd::default(),
        have_cmd: false,
        dangling: None,
        after_compound: false,
        feed: None,
        piped: false,
    };
    let mut i = 0;
    while let Some(t) = tokens.get(i) {
        i += 1;
        match t {
            Tok::Word(w) => i = p.word(w, tokens, i, sink),
            Tok::Op(op, s, e) => p.op(*op, *s, *e, sink),
            Tok::Redir(r) => p.redir(r, sink),
            Tok::Arith(subs, ..) => p.arith(subs, sink),
        }
    }
    p.finish(sink);
}

impl<'t> Parser<'t, '_> {
    /// The loop the current position runs in (a `for` header is outside its loop).
    fn loop_ctx(&self) -> Option<LoopCtx> {
        for f in self.frames.iter().rev() {
            if let Frame::Loop { kind, body } = *f {
                if body {
                    return Some(LoopCtx {
                        kind,
                        condition: false,
                    });
                }
                if matches!(kind, LoopKind::While | LoopKind::Until) {
                    return Some(LoopCtx {
                        kind,
                        condition: true,
                    });
                }
            }
        }
        self.ctx.in_loop
    }

    fn subs(&self, subs: &[Sub], sink: &mut Sink) {
        let in_loop = self.loop_ctx();
        for s in subs {
            let origin = match s.kind {
                SubKind::Command => Origin::Substitution,
                SubKind::Process => Origin::ProcessSubstitution,
            };
            parse(
                &s.tokens,
                &s.text,
                self.depth + 1,
                &Ctx { in_loop, origin },
                sink,
            );
        }
    }

    /// Handles a word token; returns the index of the next token to read.
    fn word(&mut self, w: &'t Word, tokens: &[Tok], next: usize, sink: &mut Sink) -> usize {
        let kw = if w.quoted { "" } else { w.value.as_str() };
        if let Some(after) = self.in_clause(w, kw, tokens, next, sink) {
            return after;
        }
        if self.cmd.is_empty() && !kw.is_empty() {
            if kw == "[[" {
                self.start_command(sink);
                self.state = State::Bracket;
                self.cmd.cover(w.start, w.end);
                self.cmd.args.push(Arg::Word(w));
                return next;
            }
            if self.keyword(kw, sink) {
                let skip_p = kw == "time"
                    && matches!(tokens.get(next), Some(Tok::Word(p)) if p.value == "-p");
                return next + usize::from(skip_p);
            }
            let parens = Self::empty_parens(tokens, next);
            if parens > 0 {
                self.start_command(sink);
                return next + parens;
            }
        }
        if self.cmd.is_empty() {
            self.start_command(sink);
        }
        self.cmd.cover(w.start, w.end);
        self.cmd.args.push(Arg::Word(w));
        next
    }

    /// A word read by the clause the parser is in (`for NAME in WORDS`, `case WORD in
    /// PATTERNS`, a function's name, `[[ … ]]`): the index of the next token, or `None` in
    /// [`State::Normal`], where the word is a command's.
    fn in_clause(
        &mut self,
        w: &'t Word,
        kw: &str,
        tokens: &[Tok],
        next: usize,
        sink: &mut Sink,
    ) -> Option<usize> {
        match self.state {
            State::Normal => return None,
            State::ForName => self.state = State::ForIn,
            State::ForIn => match kw {
                "in" => self.state = State::ForWords,
                "do" => {
                    self.state = State::Normal;
                    self.keyword("do", sink);
                }
                _ => {
                    sink.problem("malformed for loop");
                    self.state = State::ForWords;
                }
            },
            State::ForWords | State::CaseWord => {
                self.subs(&w.subs, sink);
                if self.state == State::CaseWord {
                    self.state = State::CaseIn;
                }
            }
            State::CaseIn => {
                if kw != "in" {
                    sink.problem("case without in");
                }
                self.state = State::CasePattern;
            }
            State::CasePattern => {
                if kw == "esac" {
                    self.state = State::Normal;
                    self.keyword("esac", sink);
                } else {
                    self.subs(&w.subs, sink);
                }
            }
            State::FuncName => {
                self.state = State::Normal;
                return Some(next + Self::empty_parens(tokens, next));
            }
            State::Bracket => {
                self.cmd.cover(w.start, w.end);
                self.cmd.args.push(Arg::Word(w));
                if kw == "]]" {
                    self.state = State::Normal;
                }
            }
        }
        Some(next)
    }

    /// 2 when the tokens at `i` are `(` `)` (a function definition's), else 0.
    fn empty_parens(tokens: &[Tok], i: usize) -> usize {
        let lp = matches!(tokens.get(i), Some(Tok::Op(Op::LParen, ..)));
        let rp = matches!(tokens.get(i + 1), Some(Tok::Op(Op::RParen, ..)));
        if lp && rp { 2 } else { 0 }
    }

    /// A word starts a new simple command.
    fn start_command(&mut self, sink: &mut Sink) {
        if self.after_compound {
            sink.problem("unexpected word after a compound command");
            self.after_compound = false;
        }
        self.dangling = None;
    }

    fn open(&mut self, f: Frame, sink: &mut Sink) {
        self.start_command(sink);
        self.frames.push(f);
        self.have_cmd = false;
    }

    fn close(&mut self, ok: bool, what: &str, sink: &mut Sink) {
        if ok {
            self.frames.pop();
            self.after_compound = true;
            self.have_cmd = true;
        } else {
            sink.problem(&format!("unexpected `{what}`"));
        }
    }

    /// Handles a reserved word in command position; `false` if `kw` is not one.
    fn keyword(&mut self, kw: &str, sink: &mut Sink) -> bool {
        let top = self.frames.last().copied();
        let loop_of = |kind| Frame::Loop { kind, body: false };
        match kw {
            "if" => self.open(Frame::If, sink),
            "then" | "else" | "elif" if top != Some(Frame::If) => {
                sink.problem(&format!("unexpected `{kw}`"));
            }
            "then" | "else" | "elif" | "!" | "time" | "coproc" => {}
            "fi" => self.close(top == Some(Frame::If), kw, sink),
            "while" => self.open(loop_of(LoopKind::While), sink),
            "until" => self.open(loop_of(LoopKind::Until), sink),
            "for" | "select" => {
                self.open(
                    loop_of(if kw == "for" {
                        LoopKind::For
                    } else {
                        LoopKind::Select
                    }),
                    sink,
                );
                self.state = State::ForName;
            }
            "do" => match self.frames.last_mut() {
                Some(Frame::Loop { body, .. }) if !*body => *body = true,
                _ => sink.problem("unexpected `do`"),
            },
            "done" => self.close(
                matches!(top, Some(Frame::Loop { body: true, .. })),
                kw,
                sink,
            ),
            "case" => {
                self.open(Frame::Case { body: false }, sink);
                self.state = State::CaseWord;
            }
            "esac" => self.close(matches!(top, Some(Frame::Case { .. })), kw, sink),
            "{" => self.open(Frame::Group, sink),
            "}" => self.close(top == Some(Frame::Group), kw, sink),
            "function" => self.state = State::FuncName,
            _ => return false,
        }
        true
    }

    fn op(&mut self, op: Op, start: usize, end: usize, sink: &mut Sink) {
        match self.state {
            State::Normal => {}
            State::Bracket => {
                if op != Op::Newline {
                    self.cmd.cover(start, end);
                    self.cmd.args.push(Arg::Text(op.as_str()));
                }
                return;
            }
            State::CasePattern => {
                match op {
                    Op::Pipe | Op::LParen | Op::Newline => {}
                    Op::RParen => {
                        if let Some(Frame::Case { body }) = self.frames.last_mut() {
                            *body = true;
                        }
                        self.state = State::Normal;
                        self.have_cmd = false;
                    }
                    _ => sink.problem("malformed case pattern"),
                }
                return;
            }
            State::ForIn | State::ForWords if matches!(op, Op::Semi | Op::Newline) => {
                self.state = State::Normal;
                return;
            }
            State::CaseWord | State::CaseIn | State::FuncName | State::ForName
                if op == Op::Newline =>
            {
                return;
            }
            _ => {
                sink.problem(&format!("unexpected `{}`", op.as_str().trim()));
                self.state = State::Normal;
            }
        }
        match op {
            Op::Newline | Op::Semi | Op::Amp | Op::And | Op::Or | Op::Pipe | Op::PipeAmp => {
                self.end_command(Some(op), sink);
            }
            Op::DSemi | Op::SemiAmp | Op::DSemiAmp => {
                self.end_command(None, sink);
                self.have_cmd = false;
                self.after_compound = false;
                if let Some(Frame::Case { body }) = self.frames.last_mut() {
                    *body = false;
                    self.state = State::CasePattern;
                } else {
                    sink.problem(&format!("unexpected `{}`", op.as_str()));
                }
            }
            Op::LParen => {
                if !self.cmd.is_empty() {
                    sink.problem("unexpected `(`");
                    self.end_command(None, sink);
                }
                self.open(Frame::Subshell, sink);
            }
            Op::RParen => {
                self.end_command(None, sink);
                self.close(self.frames.last() == Some(&Frame::Subshell), ")", sink);
            }
        }
    }

    fn redir(&mut self, r: &'t Redir, sink: &mut Sink) {
        if self.state == State::Bracket {
            self.cmd.cover(r.start, r.end);
            self.cmd.args.push(Arg::Text(&r.op));
            if let Some(t) = &r.target {
                self.cmd.args.push(Arg::Word(t));
            }
            return;
        }
        if self.state != State::Normal {
            sink.problem("unexpected redirection");
            self.state = State::Normal;
        }
        self.dangling = None;
        self.cmd.cover(r.start, r.end);
        self.cmd.redirs.push(r);
    }

    fn arith(&mut self, subs: &[Sub], sink: &mut Sink) {
        self.subs(subs, sink);
        match self.state {
            State::ForName => self.state = State::ForIn,
            State::Normal if self.cmd.is_empty() => {
                self.start_command(sink);
                self.have_cmd = true;
                self.after_compound = true;
            }
            State::Bracket => {}
            _ => sink.problem("unexpected `((`"),
        }
    }

    /// Ends the command being built (emitting it) at separator `sep` (`None`: at `)`, `;;`,
    /// or the end of input).
    fn end_command(&mut self, sep: Option<Op>, sink: &mut Sink) {
        let mut printed = None;
        let had_words = !self.cmd.is_empty();
        if had_words {
            printed = self.emit(sink);
            self.have_cmd = true;
        }
        let Some(op) = sep else { return };
        if op != Op::Newline {
            if !self.have_cmd {
                sink.problem(&format!("empty command before `{}`", op.as_str()));
            }
            self.dangling = matches!(op, Op::And | Op::Or | Op::Pipe | Op::PipeAmp).then_some(op);
        }
        // A newline right after `|` continues the pipeline: keep what feeds it.
        let pipe_goes_on = op == Op::Newline
            && !had_words
            && matches!(self.dangling, Some(Op::Pipe | Op::PipeAmp));
        if !pipe_goes_on {
            self.piped = matches!(op, Op::Pipe | Op::PipeAmp);
            self.feed = if self.piped { printed } else { None };
        }
        self.have_cmd = false;
        self.after_compound = false;
    }

    /// Emits the built command: its substitutions first, then its segments.
    fn emit(&mut self, sink: &mut Sink) -> Option<String> {
        let cmd = std::mem::take(&mut self.cmd);
        let mut argv = Vec::with_capacity(cmd.args.len());
        for a in &cmd.args {
            match a {
                Arg::Word(w) => {
                    self.subs(&w.subs, sink);
                    if w.quoted || !w.value.is_empty() {
                        argv.push(w.value.clone());
                    }
                }
                Arg::Text(t) => argv.push((*t).to_owned()),
            }
        }
        let mut redirects = Vec::with_capacity(cmd.redirs.len());
        for r in &cmd.redirs {
            if let Some(t) = &r.target {
                self.subs(&t.subs, sink);
            }
            if let Some(h) = &r.heredoc {
                self.subs(&h.subs, sink);
            }
            redirects.push(to_redirect(r));
        }
        let brace_ok =
            matches!(cmd.args.first(), Some(Arg::Word(w)) if !w.quoted && w.subs.is_empty());
        let (s, e) = cmd.span.unwrap_or((0, 0));
        let raw = self.src.get(s..e).unwrap_or("").trim().to_owned();
        let ctx = Ctx {
            in_loop: self.loop_ctx(),
            origin: self.ctx.origin.clone(),
        };
        let feed = self.feed.take();
        let piped = std::mem::take(&mut self.piped);
        normalise::emit(
            Command {
                argv,
                brace_ok,
                redirects,
                raw,
                feed,
                piped,
            },
            self.depth,
            &ctx,
            sink,
            split_into,
        )
    }

    fn finish(&mut self, sink: &mut Sink) {
        match self.state {
            State::Normal => {}
            State::Bracket => sink.problem("unclosed [["),
            _ => sink.problem("incomplete compound command"),
        }
        self.end_command(None, sink);
        if let Some(op) = self.dangling {
            sink.problem(&format!("command ends with `{}`", op.as_str()));
        }
        if let Some(f) = self.frames.last() {
            sink.problem(f.name());
        }
    }
}

fn to_redirect(r: &Redir) -> Redirect {
    let target = r
        .target
        .as_ref()
        .map(|w| w.value.clone())
        .unwrap_or_default();
    let body = match &r.heredoc {
        Some(h) => Some(h.body.clone()),
        None if r.op.ends_with("<<<") => Some(format!("{target}\n")),
        None => None,
    };
    Redirect {
        op: r.op.clone(),
        target,
        body,
    }
}
