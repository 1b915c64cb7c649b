//! The walk's state: one [`Walk`] goes through a split command's segments in order, keeping
//! the state they share (the `cd`s so far, and per pipeline whether an earlier stage fetched
//! or decoded code, read a secret, echoed literal words or opened a socket), with the steps
//! every program's effects are built from (classify a path, delete one, change directory).
//!
//! The vocabulary the program table's effect functions ([`crate::shell::programs`]) are
//! written in: this file names no program and does not import the table; the walk itself
//! (`segment.rs`) does.

use super::context::Context;
use super::effect::Effect;
use super::effect::EffectKind;
use super::net;
use super::paths::{Class, Cwd, classify_walked, resolve};
use crate::shell::options::Grammar;
use crate::shell::{MAX_DEPTH, Segment};

pub(super) const DEPTHS: usize = MAX_DEPTH as usize + 2;

/// What the stages of one pipeline so far did.
#[derive(Debug, Clone, Default)]
pub(crate) struct Pipe {
    pub(crate) fetch: bool,
    pub(crate) secret: Option<String>,
    pub(crate) socket: bool,
    pub(crate) shell: bool,
    pub(crate) literal: Option<Vec<String>>,
}

/// The command model itself ([`super::analyse`], its effects), handed to the walk so that a
/// step analysing a nested command (a literal in inline code, a container's command on the
/// host) calls it as a value instead of importing the module above it.
pub(crate) type Analyser = fn(command: &str, ctx: &Context) -> Vec<Effect>;

/// The walk through one split command.
pub(crate) struct Walk<'c> {
    pub(crate) ctx: &'c Context,
    /// How a nested command is analysed.
    pub(crate) analyse: Analyser,
    pub(crate) cwd: Cwd,
    pub(crate) pipes: Vec<Pipe>,
    pub(crate) fetched: Vec<String>,
    /// Variables left in a word may be empty at run time (see `paths::classify`).
    pub(crate) runtime: bool,
}

/// One simple command as a program's effect function sees it.
pub(crate) struct Call<'a> {
    /// The program name (`argv[0]`, path stripped).
    pub program: &'a str,
    /// The words after it (with an `xargs`/`parallel` command's input words appended).
    pub args: &'a [String],
    /// The segment it came from (redirections, origin, raw text).
    pub seg: &'a Segment,
    /// The pipeline level it sits at (an index into [`Walk::pipes`]).
    pub depth: usize,
    /// The program's option grammar (its row's).
    pub options: &'a Grammar,
}

impl<'c> Walk<'c> {
    pub(crate) fn new(ctx: &'c Context, analyse: Analyser) -> Self {
        Walk {
            ctx,
            analyse,
            cwd: Cwd::Start,
            pipes: vec![Pipe::default(); DEPTHS],
            fetched: Vec::new(),
            runtime: true,
        }
    }

    /// The class of a path a program names, from where the walk has got to.
    pub(crate) fn class(&self, word: &str) -> (Class, String) {
        classify_walked(word, &self.cwd, self.ctx, self.runtime)
    }

    /// `cd TARGET` (`None`: `cd` alone, home): where the rest of the command runs.
    pub(crate) fn cd(&mut self, target: Option<&String>) {
        let Some(t) = target else {
            self.cwd = self.ctx.home.clone().map_or(Cwd::Unknown, Cwd::At);
            return;
        };
        if t == "-" {
            self.cwd = Cwd::Unknown;
            return;
        }
        self.cwd = match resolve(t, &self.cwd, self.ctx) {
            Some(p) if p.starts_with('/') => Cwd::At(p),
            Some(p) if p.starts_with('~') => Cwd::At(p),
            Some(p) => Cwd::Below(p),
            None => Cwd::Unknown,
        };
    }

    pub(crate) fn delete(&self, target: &str, recursive: bool, via: &str, fx: &mut Vec<Effect>) {
        let (class, path) = self.class(target);
        let verb = if recursive {
            format!(
                "deletes {} recursively",
                if path.is_empty() { "." } else { &path }
            )
        } else {
            format!("deletes {}", if path.is_empty() { "." } else { &path })
        };
        fx.push(Effect::on_path(
            EffectKind::Deletes,
            &verb,
            &[
                ("recursive", if recursive { "true" } else { "false" }),
                ("via", via),
            ],
            class,
            &path,
        ));
        // A key or credential file is gone for good (no history, rarely a backup): its own
        // effect, so a rule can refuse it where an ordinary file's delete is fine.
        if !recursive && net::is_secret(&path) {
            fx.push(Effect::on_path(
                EffectKind::DeletesSecret,
                &format!("deletes {path}, a key or credential file"),
                &[("via", via)],
                class,
                &path,
            ));
        }
    }
}

pub(crate) fn same_file(downloaded: &str, run: &str) -> bool {
    let base = |s: &str| s.rsplit('/').next().unwrap_or(s).to_string();
    base(downloaded) == base(run)
}

pub(crate) fn fetched(how: &str) -> Effect {
    Effect::plain(
        EffectKind::RunsFetchedCode,
        &[],
        format!("runs code fetched or decoded at run time: {how}"),
    )
}

pub(crate) fn remote_shell(how: &str) -> Effect {
    Effect::plain(
        EffectKind::OpensRemoteShell,
        &[],
        format!("opens a remote shell: {how}"),
    )
}

pub(crate) fn sends_secret(what: &str, via: &str) -> Effect {
    Effect::plain(
        EffectKind::SendsSecret,
        &[("via", via), ("path", what)],
        format!("sends {what} over the network with {via}"),
    )
}
