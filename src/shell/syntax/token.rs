//! Tokens: what the lexer hands the parser — words after quote removal with the nested
//! commands found inside them, control operators, redirections (heredocs with their bodies)
//! and arithmetic commands. Every nested command ([`Sub`]) carries its own source text, so
//! spans are always relative to the text a token list was lexed from.

#[derive(Debug, Clone, Default)]
pub(crate) struct Word {
    pub(crate) value: String,
    pub(crate) start: usize,
    pub(crate) end: usize,
    /// Some part was quoted or escaped: not a keyword, not an fd prefix, no brace expansion.
    pub(crate) quoted: bool,
    pub(crate) subs: Vec<Sub>,
}

/// What kind of nested command a [`Sub`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SubKind {
    /// `$(…)` or backticks.
    Command,
    /// `<(…)` or `>(…)`.
    Process,
}

/// A nested command: its own source text and the tokens lexed from it (spans relative to
/// `text`).
#[derive(Debug, Clone)]
pub(crate) struct Sub {
    pub(crate) kind: SubKind,
    pub(crate) text: String,
    pub(crate) tokens: Vec<Tok>,
}

/// A redirection with its target word; heredocs also carry their body.
#[derive(Debug, Clone)]
pub(crate) struct Redir {
    pub(crate) op: String,
    pub(crate) target: Option<Word>,
    pub(crate) heredoc: Option<Heredoc>,
    pub(crate) start: usize,
    pub(crate) end: usize,
}

/// A heredoc's body and, for an unquoted delimiter, the substitutions in it.
#[derive(Debug, Clone)]
pub(crate) struct Heredoc {
    pub(crate) body: String,
    pub(crate) subs: Vec<Sub>,
}

/// Control operators (and newline, which separates commands like `;`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    And,
    Or,
    Semi,
    Amp,
    Pipe,
    PipeAmp,
    DSemi,
    SemiAmp,
    DSemiAmp,
    LParen,
    RParen,
    Newline,
}

impl Op {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Op::And => "&&",
            Op::Or => "||",
            Op::Semi => ";",
            Op::Amp => "&",
            Op::Pipe => "|",
            Op::PipeAmp => "|&",
            Op::DSemi => ";;",
            Op::SemiAmp => ";&",
            Op::DSemiAmp => ";;&",
            Op::LParen => "(",
            Op::RParen => ")",
            Op::Newline => "\n",
        }
    }
}

/// One token.
#[derive(Debug, Clone)]
pub(crate) enum Tok {
    Word(Word),
    Op(Op, usize, usize),
    Redir(Box<Redir>),
    /// An arithmetic command `(( … ))`: not a program, but substitutions in it run.
    Arith(Vec<Sub>, usize, usize),
}

/// Shifts spans lexed inside a larger source so they are relative to an inner slice at `off`.
pub(crate) fn rebase(tokens: &mut [Tok], off: usize) {
    let shift = |w: &mut Word| {
        w.start = w.start.saturating_sub(off);
        w.end = w.end.saturating_sub(off);
    };
    for t in tokens {
        match t {
            Tok::Word(w) => shift(w),
            Tok::Op(_, s, e) | Tok::Arith(_, s, e) => {
                *s = s.saturating_sub(off);
                *e = e.saturating_sub(off);
            }
            Tok::Redir(r) => {
                r.start = r.start.saturating_sub(off);
                r.end = r.end.saturating_sub(off);
                if let Some(w) = &mut r.target {
                    shift(w);
                }
            }
        }
    }
}
