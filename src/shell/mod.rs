//! Bash command splitting and normalisation for `"match": "segment"` rules.
//!
//! [`split`] turns a Bash command string into the simple commands it would run — its
//! *segments* — each with its argv after quote removal and a normalised [`Segment::text`]
//! that segment rules run their regexes on (`^`/`$` anchor to one segment). Pure: no I/O, no
//! environment, `std` only; never panics; the output is a function of the input alone.
//!
//! # What is split
//! - **Operators** `&& || ; | |& &`, newlines, and `;; ;& ;;&` in `case`. Operators inside
//!   quotes, `${…}` or `[[ … ]]` are data. Comments (`#` at word start) and line
//!   continuations are dropped.
//! - **Quoting**: `'…'`, `"…"`, `$'…'` (ANSI-C escapes decoded), `$"…"`, backslash. Quotes
//!   inside words are removed (`r""m` → `rm`, `\rm` → `rm`, `$'\x72\x6d'` → `rm`).
//! - **Nesting**, one level deeper ([`Segment::depth`]): `$(…)`, backticks, `<(…)`, `>(…)`,
//!   also inside double quotes, `${…}`, `$((…))`, array literals and unquoted heredoc bodies.
//!   Subshells, `{ …; }` groups, `if`/loop/`case` bodies and function bodies are structure,
//!   not nesting: their commands keep the enclosing depth. Past [`MAX_DEPTH`] splitting stops.
//! - **Normalisation** of each simple command: leading assignments dropped (`FOO=1 psql` →
//!   `psql`); the program's path stripped (`/usr/bin/rm` → `rm`); an unquoted `$IFS`/`${IFS}`
//!   is a word break (`rm${IFS}-rf${IFS}/` → `rm -rf /`); an unquoted brace list in program
//!   position is expanded (`{rm,-rf,/}` → `rm -rf /`). Substitutions and parameters stay as
//!   written (`rm "$f"` → `rm $f`, `echo $(ls)` → `echo $(ls)`).
//!
//! # Design choices
//! - **Wrappers** (full table in `programs/`). *Transparent* ones — `env` (with `-i`, `-u`,
//!   `-S STR`), `timeout`, `nice`, `ionice`, `nohup`, `time`, `command` (not `-v`/`-V`),
//!   `exec`, `builtin`, `stdbuf`, `setsid`, `busybox` — say nothing a rule needs, so they are
//!   replaced by the command they run: `env -i PATH=/bin timeout 5 rm -rf /` is the one segment
//!   `rm -rf /`. *Meaningful* ones change who runs a command or how often — `sudo`, `doas`,
//!   `pkexec`, `xargs`, `find -exec/-execdir/-ok/-okdir`, `watch -x` — so both are emitted:
//!   the wrapper's own segment as written (`sudo -u root /bin/rm -rf /`, so `^sudo\b` fires),
//!   then the command it runs, normalised, one level deeper with [`Origin::Wrapped`] (`rm -rf
//!   /`, so `^rm\b` fires). *Script runners* — `bash|sh|zsh|dash|ksh|ash|mksh|rbash|fish -c
//!   STR`, `eval ARGS`, `su -c STR`, `watch CMD`, and a shell reading stdin from a heredoc,
//!   here-string or a literal `echo`/`printf`/`cat <<EOF` pipe — keep their segment too and
//!   have the script split one level deeper with [`Origin::Script`].
//! - **Quoted words in `text`**: [`Segment::text`] is argv joined by single spaces, with a
//!   word that contains whitespace (or is empty) shown in single quotes. `echo "rm -rf /"`
//!   has text `echo 'rm -rf /'` and `git commit -m "rm -rf fix"` has `git commit -m 'rm -rf
//!   fix'`: `^rm\b` cannot fire on them (anchors are per segment), and an argument-level
//!   pattern such as `\s-rf\s+/(\s|$)` does not match `-rf /'` either, because a word boundary
//!   in the text is a word boundary in argv. Everything else is shown as written (`$HOME`,
//!   globs, `{}`), so rules can name `$HOME` or `~` literally. `argv` keeps the exact words.
//! - **Loops**: keywords (`if then elif else fi while until do done for select in case esac !
//!   { } function time coproc`, unquoted and in command position) are structure, never
//!   programs. `while true; do sleep 1; done` yields `true` and `sleep 1`; each carries
//!   [`Segment::in_loop`] (innermost loop kind, and whether it is the `while`/`until`
//!   condition), inherited into substitutions and script bodies, so a caller can recognise a
//!   poll loop. A `for` header's word list is outside its loop. `[[ … ]]` is one segment whose
//!   argv is the test's words; `(( … ))` emits none (its substitutions still do).
//! - **Heredocs** (`<<`, `<<-`, quoted or not) are data on the segment's [`Redirect::body`]
//!   (also via [`Segment::stdin_data`]); the body's lines are never segments of the command
//!   they feed — except that a shell reading its script from stdin (`bash <<EOF`, `sh -s`,
//!   `bash <<< STR`) has the body split as commands. For interpreters (`python3 -`, `psql`,
//!   `node`) the body stays data for the caller to inspect. An unquoted body still expands
//!   `$(…)`/backticks, and those are split.
//! - **`raw`** is the source slice of the simple command a segment came from, wrappers,
//!   assignments and redirections included; a wrapped command shares its wrapper's `raw`.
//! - **Order**: the order commands would start — a command's substitutions before it, a
//!   wrapper before what it runs. A nested segment identical to an earlier nested one (same
//!   argv, raw, redirections) is dropped, so `sh -c "$(curl x)"` lists `curl x` once.
//! - **Redirection-only commands** (`> f`, and the redirections after `( … )`, `{ …; }` or
//!   `done`) are segments with an empty argv and text, so rules on redirections see them.
//! - **Failure is explicit**: what cannot be parsed (unbalanced quotes or parens, unterminated
//!   `$(` or heredoc, a stray keyword, an operator with no command, nesting deeper than
//!   [`MAX_DEPTH`]) sets [`Split::complete`] to `false` with a short [`Split::problem`]; the
//!   segments found so far are kept, and structural rules then also match the whole command
//!   text (`rules::Rule::fires`), so a parse failure can never hide a dangerous string.
//!
//! Not modelled (callers see the words as written): parameter values (`a=rm; $a -rf /`
//! leaves `$a`), brace expansion outside program position, aliases and functions' effect,
//! remote commands (`ssh host CMD`, `docker exec`), `$(<file)`, and `case` inside `$(…)` that
//! is not in command position.
//!
//! # Layout (imports run up this list, never down)
//! [`syntax`] (the bash syntax, naming no program) → [`options`] (the one option engine) →
//! the model's vocabulary (`model::effect`, `model::paths`, `model::net`, `model::walk`) →
//! [`programs`] (the program table: one row per program, one file per family) → what asks
//! the table: [`split`] here, [`program`] and `shape` (record and derive), [`writes`] and
//! [`pipelines`](mod@pipelines) (rule modes), and the model's walk (`model/segment.rs`, [`model::analyse`]).

pub(crate) mod blame;
pub(crate) mod model;
pub(crate) mod options;
pub(crate) mod pipelines;
pub(crate) mod program;
pub(crate) mod programs;
mod shape;
pub(crate) mod syntax;
pub(crate) mod writes;

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;

pub(crate) use pipelines::pipelines;
pub(crate) use shape::shape;
pub(crate) use syntax::normalise::is_assignment;
pub(crate) use writes::{segment_writes, write_targets};

/// How deep segments may nest (`$(…)` in `bash -c` in `sudo` …) before splitting gives up
/// with [`Split::complete`] `false`; bounds recursion on hostile input.
pub(crate) const MAX_DEPTH: u8 = 16;

/// One simple command found in a shell string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    /// Words after quote removal, with leading assignments and transparent wrappers removed
    /// and the program's path prefix stripped. Substitutions are kept as written (`$(ls)`).
    pub argv: Vec<String>,
    /// The normalised text rules match: argv joined by single spaces, a word holding
    /// whitespace or nothing shown in single quotes (`echo 'rm -rf /'`). Empty for a
    /// redirection-only segment.
    pub text: String,
    /// The source slice of the simple command this segment was taken from, trimmed, with its
    /// wrappers, assignments and redirections (a wrapped command shares its wrapper's `raw`).
    pub raw: String,
    /// Nesting depth: 0 at top level, +1 inside `$(…)`, a `bash -c` body, a wrapper's command.
    pub depth: u8,
    /// The command's redirections, in source order.
    pub redirects: Vec<Redirect>,
    /// The innermost `while`/`until`/`for`/`select` loop this command runs in, if any
    /// (inherited into substitutions and script bodies).
    pub in_loop: Option<LoopCtx>,
    /// Where this segment came from.
    pub origin: Origin,
    /// It reads the previous pipeline stage's output (`a | b`: `b` is piped). A wrapped
    /// command shares its wrapper's flag.
    pub piped: bool,
}

impl Segment {
    /// The program name (`argv[0]`), or `None` for a redirection-only segment like `> f`.
    #[must_use]
    pub fn program(&self) -> Option<&str> {
        self.argv.first().map(String::as_str)
    }

    /// The data a heredoc or here-string feeds this command on stdin, if any (the last one
    /// wins, as in Bash). For `python3 - <<EOF … EOF` this is the script.
    #[must_use]
    pub fn stdin_data(&self) -> Option<&str> {
        self.redirects.iter().rev().find_map(|r| r.body.as_deref())
    }
}

/// One redirection of a simple command.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Redirect {
    /// The operator with any fd prefix, as written: `>`, `>>`, `<`, `2>`, `&>`, `&>>`, `>|`,
    /// `<>`, `>&`, `2>&`, `<&`, `<<`, `<<-`, `<<<`, `{fd}>` ….
    pub op: String,
    /// The target word after quote removal (a file, an fd for `>&`, a heredoc's delimiter,
    /// a here-string's text). Empty when the source had none (then the split is incomplete).
    pub target: String,
    /// A heredoc's body (after `<<-` tab stripping) or a here-string's text plus newline.
    pub body: Option<String>,
}

impl Redirect {
    /// Whether this redirection may write to (create or truncate) the file named by
    /// [`target`](Self::target): `>`, `>>`, `>|`, `<>`, `&>`, `&>>` with any fd prefix, and
    /// `>&`/`N>&` whose target is not an fd number or `-`.
    #[must_use]
    pub fn writes(&self) -> bool {
        let op = self.op.trim_start_matches(|c: char| c.is_ascii_digit());
        let op = if op.starts_with('{') {
            op.split_once('}').map_or(op, |(_, rest)| rest)
        } else {
            op
        };
        match op {
            ">" | ">>" | ">|" | "<>" | "&>" | "&>>" => true,
            ">&" => {
                !self.target.is_empty()
                    && !self.target.bytes().all(|b| b.is_ascii_digit() || b == b'-')
            }
            _ => false,
        }
    }
}

/// Which kind of loop a segment runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LoopKind {
    /// `while COND; do BODY; done`.
    While,
    /// `until COND; do BODY; done`.
    Until,
    /// `for NAME in WORDS; do BODY; done` and `for ((…)); do BODY; done`.
    For,
    /// `select NAME in WORDS; do BODY; done`.
    Select,
}

/// The loop a segment sits in: what a caller needs to recognise a poll loop
/// (`while ! curl -s host; do sleep 2; done`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LoopCtx {
    /// The innermost enclosing loop's kind.
    pub kind: LoopKind,
    /// `true` in a `while`/`until` condition, `false` in a loop body.
    pub condition: bool,
}

/// Where a segment came from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Origin {
    /// Written in the command itself (also inside groups, subshells, loops, conditionals).
    Direct,
    /// Inside a command substitution `$(…)` or backticks.
    Substitution,
    /// Inside a process substitution `<(…)` or `>(…)`.
    ProcessSubstitution,
    /// The command a meaningful wrapper runs; holds the wrapper (`sudo`, `xargs`, `find` …).
    Wrapped(String),
    /// A line of a script run by a shell or `eval`; holds the runner (`bash`, `eval`, `su` …).
    Script(String),
}

/// The result of [`split`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Split {
    /// Every simple command found, in the order it would run (substitutions before the
    /// command that uses them, a wrapper before the command it runs).
    pub segments: Vec<Segment>,
    /// `false` when part of the input could not be parsed; callers must then also match the
    /// whole command text (the rules module does).
    pub complete: bool,
    /// Why the split is incomplete: a short reason such as `unterminated single quote`.
    pub problem: Option<String>,
    /// How many wrapper words (`env`, `nice`, `timeout`, `sudo`, `xargs`, `eval` …) were
    /// peeled off to reach the commands, at every nesting level: what the command model's
    /// `wrappers` limit counts (data such as `echo env env` peels nothing).
    pub wrappers: usize,
    /// Whether something was nested deeper than [`MAX_DEPTH`] and left unsplit.
    pub too_deep: bool,
}

/// Splits a Bash command string into its simple commands. Never panics; see the module
/// documentation for what is split, how words are normalised and when the result is
/// incomplete.
#[must_use]
pub fn split(command: &str) -> Split {
    let mut sink = syntax::sink::Sink::new(programs::classify);
    let ctx = syntax::sink::Ctx {
        in_loop: None,
        origin: Origin::Direct,
    };
    syntax::parse::split_into(command, 0, &ctx, &mut sink);
    Split {
        segments: sink.segments,
        complete: sink.problem.is_none(),
        problem: sink.problem,
        wrappers: sink.wrappers,
        too_deep: sink.too_deep,
    }
}
