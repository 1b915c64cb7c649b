//! Normalisation: one parsed simple command → its segments.
//!
//! Steps, repeated while a transparent wrapper is peeled off: drop leading assignments
//! (`FOO=1`, `A+=x`, `a[i]=v`; judged on the word's value, so even a quoted `'FOO=1'` goes —
//! erring towards more matches); strip the program's path prefix (`/usr/bin/rm` → `rm`);
//! classify the program through [`Sink::classify`], the program table's answer handed down
//! as a value (this file names no program). Then:
//! - a **transparent** wrapper (`env`, `timeout`, `nohup` …) is replaced by its command;
//! - a **meaningful** wrapper (`sudo`, `xargs`, `find -exec` …) is emitted, and its command
//!   is emitted one level deeper ([`Origin::Wrapped`]);
//! - a **script runner** (`bash -c`, `eval`, a shell fed a heredoc …) is emitted, and its
//!   script is split one level deeper ([`Origin::Script`]) by the [`Split`] the parser
//!   hands in (so this file does not import the parser that calls it);
//! - anything else is emitted as it is.
//!
//! A command with no words but redirections (`> f`) is emitted with an empty argv so rules on
//! redirections still see it. Wrapped commands share their wrapper's `raw` and redirections.
//! Terminates on every input: each peel shortens the command, and each deeper level is
//! bounded by [`MAX_DEPTH`].

use crate::shell::syntax::quote::render_text;
use crate::shell::syntax::sink::{Ctx, Job, Kind, Sink, Split};
use crate::shell::{MAX_DEPTH, Origin, Redirect, Segment};

/// How many transparent wrappers one command may peel off (each shortens it; this only
/// bounds pathological input like a thousand `nohup`s).
const MAX_PEELS: usize = 256;

/// A simple command as the parser found it.
pub(crate) struct Command {
    /// Word values after quote removal (empty unquoted words already dropped).
    pub(crate) argv: Vec<String>,
    /// The first word was unquoted and plain, so a brace list in it expands.
    pub(crate) brace_ok: bool,
    pub(crate) redirects: Vec<Redirect>,
    pub(crate) raw: String,
    /// What the previous pipeline stage prints, if it is a literal (`echo STR | sh`).
    pub(crate) feed: Option<String>,
    /// Reads the previous pipeline stage's output.
    pub(crate) piped: bool,
}

/// Emits the segments of `cmd`; returns what it prints when that is a literal.
pub(crate) fn emit(
    cmd: Command,
    depth: u8,
    ctx: &Ctx,
    sink: &mut Sink,
    split: Split,
) -> Option<String> {
    let Command {
        mut argv,
        brace_ok,
        redirects,
        raw,
        feed,
        piped,
    } = cmd;
    if brace_ok {
        expand_braces(&mut argv);
    }
    let job = Job {
        redirects: &redirects,
        raw: &raw,
        feed: feed.as_deref(),
        piped,
    };
    emit_argv(argv, depth, ctx, &job, sink, true, split)
}

fn emit_argv(
    mut argv: Vec<String>,
    depth: u8,
    ctx: &Ctx,
    job: &Job,
    sink: &mut Sink,
    top: bool,
    split: Split,
) -> Option<String> {
    for _ in 0..MAX_PEELS {
        let assignments = argv.iter().take_while(|w| is_assignment(w)).count();
        argv.drain(..assignments);
        let Some(first) = argv.first_mut() else {
            if top && !job.redirects.is_empty() {
                sink.push(segment(Vec::new(), depth, ctx, job));
            }
            return None;
        };
        strip_path(first);
        let kind = (sink.classify)(&argv, job, depth, sink);
        if matches!(kind, Kind::Unwrap(_) | Kind::Wraps(_))
            || matches!(kind, Kind::Runs(_)) && argv[0] == "eval"
        {
            sink.wrappers += 1;
        }
        match kind {
            Kind::Unwrap(inner) => argv = inner,
            Kind::Plain => {
                sink.push(segment(argv, depth, ctx, job));
                return None;
            }
            Kind::Prints(text) => {
                sink.push(segment(argv, depth, ctx, job));
                return text;
            }
            Kind::Wraps(commands) => {
                let origin = Origin::Wrapped(argv[0].clone());
                sink.push(segment(argv, depth, ctx, job));
                let deeper = deeper(depth, sink)?;
                let inner_ctx = Ctx {
                    in_loop: ctx.in_loop,
                    origin,
                };
                let mut printed = None;
                for inner in commands {
                    printed = emit_argv(inner, deeper, &inner_ctx, job, sink, false, split);
                }
                return printed;
            }
            Kind::Runs(script) => {
                let origin = Origin::Script(argv[0].clone());
                sink.push(segment(argv, depth, ctx, job));
                if let (Some(script), Some(deeper)) = (script, deeper(depth, sink)) {
                    split(
                        &script,
                        deeper,
                        &Ctx {
                            in_loop: ctx.in_loop,
                            origin,
                        },
                        sink,
                    );
                }
                return None;
            }
        }
    }
    sink.problem("too many wrappers");
    sink.push(segment(argv, depth, ctx, job));
    None
}

/// `depth + 1`, or `None` (with a problem recorded) past [`MAX_DEPTH`].
fn deeper(depth: u8, sink: &mut Sink) -> Option<u8> {
    if depth >= MAX_DEPTH {
        sink.too_deep = true;
        sink.problem(&format!("nesting deeper than {MAX_DEPTH} levels"));
        return None;
    }
    Some(depth + 1)
}

fn segment(argv: Vec<String>, depth: u8, ctx: &Ctx, job: &Job) -> Segment {
    Segment {
        text: render_text(&argv),
        argv,
        raw: job.raw.to_owned(),
        depth,
        redirects: job.redirects.to_vec(),
        in_loop: ctx.in_loop,
        origin: ctx.origin.clone(),
        piped: job.piped,
    }
}

/// `NAME=…`, `NAME+=…`, `NAME[…]=…`.
pub(crate) fn is_assignment(w: &str) -> bool {
    let Some((lhs, _)) = w.split_once('=') else {
        return false;
    };
    let lhs = lhs.strip_suffix('+').unwrap_or(lhs);
    let name = match lhs.strip_suffix(']') {
        Some(base) => match base.split_once('[') {
            Some((name, _)) => name,
            None => return false,
        },
        None => lhs,
    };
    name.bytes()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
        && name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_')
}

/// `/usr/bin/rm` → `rm`. Left alone: a path ending in `/`, a last component that closes an
/// expansion (`$(rm -rf /)`, `${x/a/b}`), which is not a file name, and one that would read
/// as an assignment (`./A=1`).
fn strip_path(w: &mut String) {
    if let Some(i) = w.rfind('/') {
        let base = &w[i + 1..];
        if !base.is_empty() && !base.contains([')', '}', '`']) && !is_assignment(base) {
            w.drain(..=i);
        }
    }
}

/// `{rm,-rf,/}` in program position → `rm -rf /` (one level, no nesting, empties dropped).
fn expand_braces(argv: &mut Vec<String>) {
    let Some(inner) = argv
        .first()
        .and_then(|w| w.strip_prefix('{'))
        .and_then(|w| w.strip_suffix('}'))
    else {
        return;
    };
    if !inner.contains(',') || inner.contains(['{', '}']) {
        return;
    }
    let parts: Vec<String> = inner
        .split(',')
        .filter(|p| !p.is_empty())
        .map(str::to_owned)
        .collect();
    if !parts.is_empty() {
        argv.splice(0..1, parts);
    }
}
