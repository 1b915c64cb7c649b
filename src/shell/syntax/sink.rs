//! What a split carries down through every nesting level: the context a nested command
//! inherits ([`Ctx`]), the sink that collects segments and the first problem ([`Sink`]),
//! what the segments of one simple command share ([`Job`]), and the parser's entry point
//! as a value ([`Split`]) so normalisation can split a script without importing the parser,
//! and the program table's reading of a command as a value ([`Classify`], giving a [`Kind`])
//! so the syntax names no program.
//!
//! Guarantees: a nested segment identical to an earlier nested one is dropped (so
//! `sh -c "$(x)"` yields `x` once); only the first problem is kept.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

use crate::shell::{LoopCtx, Origin, Redirect, Segment};

/// The parser's entry point: split `src`, whose commands sit at `depth`, into `sink`.
pub(crate) type Split = fn(src: &str, depth: u8, ctx: &Ctx, sink: &mut Sink);

/// What a nested split inherits from where it sits.
#[derive(Debug, Clone)]
pub(crate) struct Ctx {
    pub(crate) in_loop: Option<LoopCtx>,
    pub(crate) origin: Origin,
}

/// What a program does with the rest of its argv.
pub(crate) enum Kind {
    /// Nothing special: emit as is.
    Plain,
    /// A transparent wrapper: replace the command with this one.
    Unwrap(Vec<String>),
    /// A meaningful wrapper: emit it, then each of these commands one level deeper.
    Wraps(Vec<Vec<String>>),
    /// A script runner: emit it, then split this script (if known) one level deeper.
    Runs(Option<String>),
    /// A printer: emit it; it prints this literal (if known).
    Prints(Option<String>),
}

/// How a program reads the rest of its argv: the program table's answer, handed down as a
/// value so the syntax names no program.
pub(crate) type Classify = fn(argv: &[String], job: &Job, depth: u8, sink: &mut Sink) -> Kind;

/// Collects segments and the first problem across all nesting levels.
#[derive(Debug)]
pub(crate) struct Sink {
    /// The program table's reading of a simple command (see [`Classify`]).
    pub(crate) classify: Classify,
    pub(crate) segments: Vec<Segment>,
    pub(crate) problem: Option<String>,
    /// Wrapper words peeled off (`env`, `nice`, `sudo`, `xargs`, `eval` …), at every level.
    pub(crate) wrappers: usize,
    /// A substitution, `eval` or script nested deeper than [`crate::shell::MAX_DEPTH`].
    pub(crate) too_deep: bool,
    /// Nested segments by hash of (argv, raw, redirects), to drop repeats: `sh -c "$(x)"`
    /// meets `x` both as the word's substitution and again in the script.
    nested: HashMap<u64, Vec<usize>>,
}

impl Sink {
    /// An empty sink that reads programs by `classify`.
    pub(crate) fn new(classify: Classify) -> Self {
        Sink {
            classify,
            segments: Vec::new(),
            problem: None,
            wrappers: 0,
            too_deep: false,
            nested: HashMap::new(),
        }
    }

    /// Records `p` unless a problem was already recorded.
    pub(crate) fn problem(&mut self, p: &str) {
        if self.problem.is_none() {
            self.problem = Some(p.to_owned());
        }
    }

    /// Appends a segment; a nested one identical to an earlier nested one is dropped.
    pub(crate) fn push(&mut self, seg: Segment) {
        if seg.depth == 0 {
            self.segments.push(seg);
            return;
        }
        let mut h = DefaultHasher::new();
        (&seg.argv, &seg.raw, &seg.redirects).hash(&mut h);
        let ids = self.nested.entry(h.finish()).or_default();
        let same =
            |s: &Segment| s.argv == seg.argv && s.raw == seg.raw && s.redirects == seg.redirects;
        if ids.iter().any(|&i| self.segments.get(i).is_some_and(same)) {
            return;
        }
        ids.push(self.segments.len());
        self.segments.push(seg);
    }
}

/// What every segment of one simple command shares.
pub(crate) struct Job<'a> {
    pub(crate) redirects: &'a [Redirect],
    pub(crate) raw: &'a str,
    pub(crate) feed: Option<&'a str>,
    pub(crate) piped: bool,
}

impl Job<'_> {
    /// What the command reads on stdin when that is literal text: the last stdin
    /// redirection's heredoc or here-string body, else a literal piped in.
    pub(crate) fn stdin_text(&self) -> Option<&str> {
        let stdin = self.redirects.iter().rev().find(|r| {
            let op = r.op.trim_start_matches('0');
            op.starts_with('<') && !op.starts_with("<&") && !op.starts_with("<>")
        });
        match stdin {
            Some(r) => r.body.as_deref(),
            None => self.feed,
        }
    }
}
