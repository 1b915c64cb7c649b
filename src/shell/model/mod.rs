//! The command model: what a shell command *does*, as typed effects a rule can name.
//!
//! [`analyse`] splits a command (see [`crate::shell::split`]), follows the simple shell state
//! inside it (assignments `X=rm; $X -rf /`, `$(echo rm)`, `cd DIR && …`, `echo / | xargs rm
//! -rf`), parses each segment's options by a per-program grammar (clusters, unambiguous long
//! abbreviations, `--`, git's global options before the subcommand) and yields [`Effect`]s:
//! deletes, overwrites, discards git work, pushes, runs fetched or decoded code, touches the
//! control plane, sends a secret over the network, escalates privilege, opens a remote
//! shell, changes permissions, kills every process, destroys SQL data. Every path an effect
//! names is classified ([`Class`]: root, system, home, repository root, above it, working
//! directory, device, control plane, temp, dynamic, other).
//!
//! Data is not execution: the splitter already keeps quoted words, `echo`/`printf`
//! arguments, `git commit -m` messages, comments and heredocs fed to non-shells out of
//! program position, and this model reads effects only from programs it knows.
//!
//! # Limits (fail closed)
//! A command the model cannot analyse within its limits yields one `exceeds-limit` effect
//! naming the limit, which the starter policy blocks in either fail mode:
//! - `length`: more than [`MAX_LEN`] bytes;
//! - `nesting-depth`: substitutions, `eval`s or `bash -c` bodies nested deeper than
//!   [`crate::shell::MAX_DEPTH`] (the splitter stops there);
//! - `wrappers`: more than [`MAX_WRAPPERS`] wrapper words (`env env env …`) peeled off by the
//!   splitter ([`Split::wrappers`]; words of data do not count);
//! - `expansions`: more than [`MAX_EXPANSIONS`] variable, function or `$(echo …)` expansions
//!   followed.
//!
//! Pure: no I/O; the caller supplies the [`Context`] (working directory, home, repository
//! root, `$CALLUS_HOME`). Never panics.

mod context;
pub(crate) mod effect;
mod find;
mod flows;
pub(crate) mod git;
mod inline;
mod limits;
mod machine;
pub(crate) mod net;
pub(crate) mod paths;
mod segment;
mod state;
pub(crate) mod walk;

pub(crate) use context::Context;
pub(crate) use effect::{Effect, EffectKind};
pub(crate) use limits::{MAX_EXPANSIONS, MAX_LEN, MAX_WRAPPERS};
pub(crate) use paths::{Class, classify_path};

use crate::shell::{Split, split};

/// Everything [`analyse`] found.
#[derive(Debug, Clone, Default)]
pub(crate) struct Analysis {
    /// The effects, in the order found, without duplicates.
    pub effects: Vec<Effect>,
}

impl Analysis {
    fn push(&mut self, e: Effect) {
        if !self.effects.iter().any(|x| x.line == e.line) {
            self.effects.push(e);
        }
    }
}

fn limit(name: &str, why: &str) -> Effect {
    Effect::plain(
        EffectKind::ExceedsLimit,
        &[("limit", name)],
        format!("cannot be analysed: {why} (limit {name})"),
    )
}

/// The effects of a shell command run in `ctx`.
#[must_use]
pub(crate) fn analyse(command: &str, ctx: &Context) -> Analysis {
    if command.len() > MAX_LEN {
        return analyse_split(command, &Split::default(), ctx);
    }
    analyse_split(command, &split(command), ctx)
}

/// [`analyse`] on a command already split (`first` must be `split(command)`; for a command
/// longer than [`MAX_LEN`] it is not looked at).
#[must_use]
pub(crate) fn analyse_split(command: &str, first: &Split, ctx: &Context) -> Analysis {
    let mut out = Analysis::default();
    if command.len() > MAX_LEN {
        out.push(limit("length", &format!("longer than {MAX_LEN} bytes")));
        return out;
    }
    if first.too_deep {
        out.push(limit(
            "nesting-depth",
            &format!("nested deeper than {} levels", crate::shell::MAX_DEPTH),
        ));
    }
    if first.wrappers > MAX_WRAPPERS {
        out.push(limit(
            "wrappers",
            &format!("more than {MAX_WRAPPERS} wrapper words"),
        ));
    }
    match state::expand(command, first) {
        state::Expanded::None => effects_of(first, ctx, true, &mut out),
        state::Expanded::TooMany => {
            effects_of(first, ctx, true, &mut out);
            out.push(limit(
                "expansions",
                &format!("more than {MAX_EXPANSIONS} expansions"),
            ));
        }
        state::Expanded::Text(text) => {
            // The command as written, then with its own assignments expanded: a variable
            // still there in the second reading is one the command does not set.
            effects_of(first, ctx, false, &mut out);
            let second = split(&text);
            effects_of(&second, ctx, true, &mut out);
        }
    }
    out
}

/// Walk the segments in order with the shell state they share (`runtime`: see
/// [`paths::classify`]).
fn effects_of(split: &Split, ctx: &Context, runtime: bool, out: &mut Analysis) {
    let mut walk = walk::Walk::new(ctx, |command, ctx| analyse(command, ctx).effects);
    walk.runtime = runtime;
    for seg in &split.segments {
        walk.segment(seg, out);
    }
}

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;
