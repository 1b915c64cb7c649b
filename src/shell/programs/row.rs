//! A row of the program table: the [`Row`] type, the [`Role`] and [`Shape`] enums the
//! splitter, the model and the recorder interpret, the function types a row points to, and
//! the few steps many rows share (where a wrapper's command starts, a grammar that stops at
//! it). Names no program; the family files build their rows from this, and `mod.rs` lists
//! them.

use crate::shell::model::effect::Effect;
use crate::shell::model::walk::{Call, Walk};
use crate::shell::options::{Grammar, PLAIN};
use crate::shell::syntax::sink::{Job, Kind, Sink};

/// How the splitter reads a wrapper, runner or printer: what it runs or prints (`argv[0]` is
/// the program, path stripped).
pub(crate) type Unwrap = fn(argv: &[String], job: &Job, depth: u8, sink: &mut Sink) -> Kind;

/// Where the command a transparent wrapper runs starts in its `argv`; `None` when this call
/// runs none (`nohup` alone, `command -v x`).
pub(crate) type Start = fn(argv: &[String]) -> Option<usize>;

/// The files one call of the program may write, appended to `out` (`program` is its name,
/// `args` the words after it).
pub(crate) type Writes = fn(program: &str, args: &[String], out: &mut Vec<String>);

/// The effects the model reads from one call of the program.
pub(crate) type Effects = fn(walk: &mut Walk<'_>, call: &Call<'_>, fx: &mut Vec<Effect>);

/// The files one call of a fetcher saves what it fetches to, appended to `out` (`args` the
/// words after its name).
pub(crate) type Saves = fn(args: &[String], out: &mut Vec<String>);

/// What a program does on the network, read by the model's passes every segment goes
/// through (`model/segment.rs`, `model/flows.rs`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Network {
    /// It fetches: what it prints is fetched text for the stages after it, and the files it
    /// writes by redirection are downloads.
    pub fetches: bool,
    /// The files one call saves what it fetches to (`curl -o F`, `wget URL`), appended.
    pub saves: Option<Saves>,
    /// Whether this call prints decoded text (`base64 -d`, `zcat`), which the stages after
    /// it treat as fetched: code the command did not contain.
    pub decodes: Option<fn(args: &[String]) -> bool>,
    /// It sends data over the network: a secret in its arguments, redirected into it or read
    /// earlier in its pipeline leaves the machine.
    pub sends: bool,
    /// Whether this call connects at all (`openssl` only as `s_client`); `None`: every call.
    pub connects: Option<fn(args: &[String]) -> bool>,
    /// A raw socket a remote shell is built from: whether this call hands the connection a
    /// program (`nc -e sh`).
    pub socket: Option<fn(args: &[String]) -> bool>,
    /// Options whose value is not data sent (a key, a config file): skipped with their value
    /// when its arguments are searched for a secret.
    pub skips: &'static [&'static str],
    /// It sends only to a remote operand (`host:path`): a copy between local paths sends
    /// nothing.
    pub needs_remote: bool,
}

impl Network {
    /// A program that does nothing on the network the model follows.
    pub(crate) const NONE: Network = Network {
        fetches: false,
        saves: None,
        decodes: None,
        sends: false,
        connects: None,
        socket: None,
        skips: &[],
        needs_remote: false,
    };
}

/// How an interpreter takes code to run, read by the model's code pass.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Code {
    /// The options whose value is inline code (`python -c`, `perl -e`, `node --eval`).
    pub flags: &'static [&'static str],
    /// PowerShell: `-EncodedCommand` runs base64-decoded code, and `-Command -` reads the
    /// code from stdin.
    pub powershell: bool,
}

/// What a program does with the rest of its argv.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Role {
    /// Runs no other command.
    Plain,
    /// Says nothing a rule needs and runs a command: replaced by that command.
    Transparent(Start),
    /// Changes who runs a command or how often (`sudo`, `xargs`, `find -exec`): kept, and
    /// its command is a segment of its own one level deeper.
    Meaningful,
    /// Runs a script (`eval`, `su -c`, `ssh HOST CMD`): kept, and the script is split one
    /// level deeper.
    Runner,
    /// A shell: a script runner that reads `-c STRING` or its stdin.
    Shell,
    /// Prints literal text a later pipeline stage may run (`echo`, `printf`, `cat <<EOF`).
    Printer,
    /// A shell builtin that runs nothing (`cd`, `export`, `sleep`).
    Builtin,
    /// A reserved word or punctuation in command position (`for`, `{`, `!`): no program.
    Keyword,
}

/// How the recorder and derive name a call of the program (the shape of `docs/outcomes.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// The program's basename.
    Name,
    /// The basename plus the subcommand or script that follows (`git push`, `python3 x.py`).
    Subcommand,
    /// Never a candidate's program (builtins, keywords, the wrappers that only forward).
    Never,
}

/// Everything callus knows about one program.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Row {
    /// Its options.
    pub options: &'static Grammar,
    /// What it does with the rest of its argv.
    pub role: Role,
    /// How the splitter reads what it runs or prints (`None`: only [`Role::Transparent`]'s
    /// start, or nothing).
    pub unwrap: Option<Unwrap>,
    /// How it is named in the recorder and derive.
    pub shape: Shape,
    /// The files it writes (its redirections aside), for `"match": "writes"` rules and the
    /// model's `writes`/`overwrites` effects.
    pub writes: Option<Writes>,
    /// The effects the model reads from it, beyond the passes every segment goes through.
    pub effects: Option<Effects>,
    /// What it does on the network.
    pub network: &'static Network,
    /// How it takes code to run, when it is an interpreter (shells are [`Role::Shell`]).
    pub code: Option<&'static Code>,
}

impl Row {
    /// A program the table knows nothing special about: the start of every row.
    pub(crate) const PLAIN: Row = Row {
        options: &PLAIN,
        role: Role::Plain,
        unwrap: None,
        shape: Shape::Name,
        writes: None,
        effects: None,
        network: &Network::NONE,
        code: None,
    };
    /// A builtin that runs nothing and is never a candidate's program.
    pub(crate) const BUILTIN: Row = Row {
        role: Role::Builtin,
        shape: Shape::Never,
        ..Row::PLAIN
    };
    /// A reserved word.
    pub(crate) const KEYWORD: Row = Row {
        role: Role::Keyword,
        shape: Shape::Never,
        ..Row::PLAIN
    };
    /// A multiplexer whose subcommand is part of its shape.
    pub(crate) const SUBCOMMAND: Row = Row {
        shape: Shape::Subcommand,
        ..Row::PLAIN
    };
}

/// `ssh`'s options whose value is a key, a config file or a login, not data sent (`scp`,
/// `sftp` and `rsync` take the same ones).
pub(super) const SSH_SKIPS: &[&str] = &["-i", "-F", "-o", "-e", "-P", "-p", "-l", "-J"];

/// A copy that may cross to another machine (`scp`, `sftp`, `rsync`): it sends only to a
/// remote operand.
pub(super) const REMOTE_COPY: Network = Network {
    sends: true,
    skips: SSH_SKIPS,
    needs_remote: true,
    ..Network::NONE
};

/// A transparent wrapper replaced by its command, which starts at `argv[i]`.
pub(super) fn unwrap_at(argv: &[String], i: usize) -> Kind {
    match argv.get(i.max(1)..) {
        Some(rest) if !rest.is_empty() => Kind::Unwrap(rest.to_vec()),
        _ => Kind::Plain,
    }
}

/// A meaningful wrapper whose command starts at `argv[i]`.
pub(super) fn wraps_at(argv: &[String], i: usize) -> Kind {
    match argv.get(i.max(1)..) {
        Some(rest) if !rest.is_empty() => Kind::Wraps(vec![rest.to_vec()]),
        _ => Kind::Plain,
    }
}

/// A script runner whose script is `argv[i..]`, its words joined by spaces (as `eval`
/// joins them).
pub(super) fn runs_at(argv: &[String], i: usize) -> Kind {
    match argv.get(i.max(1)..) {
        Some(rest) if !rest.is_empty() => Kind::Runs(Some(rest.join(" "))),
        _ => Kind::Plain,
    }
}

/// A grammar that stops at the first operand (a wrapper's command) and knows only the
/// options given.
pub(super) const fn wrapper(
    short_value: &'static str,
    long: &'static [(&'static str, bool)],
) -> Grammar {
    Grammar {
        short_value,
        long,
        stop_at_operand: true,
        ..PLAIN
    }
}

/// The index in `argv` of the first operand after `argv[0]`'s options, read by `g`.
pub(super) fn first_operand(argv: &[String], g: &Grammar) -> usize {
    1 + crate::shell::options::parse(argv.get(1..).unwrap_or_default(), g).rest
}
