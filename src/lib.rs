//! callus turns the tool failures coding agents keep repeating into reviewed guardrails.
//!
//! The pipeline, one module per stage: [`record`] stores every tool call and its outcome;
//! [`derive`](mod@derive) clusters recurring failures into candidate rules with their evidence; [`rules`]
//! is the ruleset format and the matcher; [`guard`] decides each call before it runs and
//! keeps the audit chain; [`prune`] and [`report`] measure whether rules help; [`scope`]
//! checks a run wrote only what it declared; [`install`] wires the hooks in. [`store`] and
//! [`redact`] sit underneath every stage that writes; [`window`] is the one parser of the
//! `--since`/`--until` time windows every stage that looks back over the store takes;
//! [`sync`](mod@sync) shares the evidence with a team through `PostgreSQL`.
//!
//! The hook commands (`callus guard`, `callus record` with no subcommand) are recognised
//! before clap runs so the per-call cost stays at process start-up plus the work itself.

pub mod cli;
pub mod config;
pub mod demo;
pub mod derive;
pub mod doctor;
pub mod error;
pub mod guard;
pub mod hook;
pub mod install;
pub mod prune;
pub mod record;
pub mod recuse;
pub mod redact;
pub mod report;
pub mod rules;
pub mod scope;
pub mod session;
pub mod shell;
pub mod store;
pub mod sync;
pub mod untrusted;
pub mod window;

use std::process::ExitCode;

use clap::Parser as _;

pub use error::{Error, Exit, Result};

use cli::{Cli, Command, GuardCommand, RecordCommand};

/// The process entry point: the hook fast path, else clap and [`run`].
#[must_use]
pub fn main_entry() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    if let (Some(first), None) = (args.next(), args.next()) {
        if first == "guard" {
            return ExitCode::from(guard::hook::run());
        }
        if first == "record" {
            return ExitCode::from(record::hook());
        }
    }
    match Cli::try_parse() {
        Ok(cli) => run(cli),
        Err(e) => {
            // Printing can only fail when stderr/stdout are gone; the exit code still tells.
            let _ = e.print();
            ExitCode::from(scope::usage_exit(&e, std::env::args_os().skip(1)))
        }
    }
}

/// Run a parsed command line and turn its result into an exit code.
#[must_use]
pub fn run(cli: Cli) -> ExitCode {
    // A reader that closes the pipe early (`callus rules list | head`) has all it wanted:
    // like ripgrep, treat a broken stdout as success rather than a panic. `println!` panics
    // on it, so catch exactly that panic; any other panic keeps its usual report.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !is_broken_pipe(info.payload()) {
            default_hook(info);
        }
    }));
    match std::panic::catch_unwind(|| dispatch(cli)) {
        Ok(code) => code,
        Err(payload) if is_broken_pipe(&*payload) => ExitCode::SUCCESS,
        Err(payload) => std::panic::resume_unwind(payload),
    }
}

fn is_broken_pipe(payload: &(dyn std::any::Any + Send)) -> bool {
    let msg = payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or("");
    msg.starts_with("failed printing to stdout") && msg.contains("Broken pipe")
}

fn dispatch(cli: Cli) -> ExitCode {
    let result = match cli.command {
        Command::Guard(args) => match args.command {
            None => return ExitCode::from(guard::hook::run()),
            Some(GuardCommand::Check(a)) => guard::commands::check(&a),
            Some(GuardCommand::Test(a)) => guard::commands::test(&a),
            Some(GuardCommand::Audit(a)) => guard::commands::audit(&a),
            Some(GuardCommand::Prune(a)) => prune::run(&a),
        },
        Command::Record(args) => match args.command {
            None => return ExitCode::from(record::hook()),
            Some(RecordCommand::Import(a)) => record::import(&a),
            Some(RecordCommand::Stats(a)) => record::stats(&a),
        },
        Command::Derive(a) => derive::run(&a),
        Command::Rules(c) => rules::commands::run(&c),
        Command::Report(a) => report::run(&a),
        Command::Scope(c) => return ExitCode::from(scope::run(&c)),
        Command::Install(a) => install::install(&a),
        Command::Uninstall(a) => install::uninstall(&a),
        Command::Doctor(a) => doctor::run(&a),
        Command::Session(c) => session::run(&c),
        Command::Sync(c) => sync::run(&c),
        Command::Demo(a) => demo::run(&a),
    };
    match result {
        Ok(exit) => ExitCode::from(exit.code()),
        Err(e) => {
            eprintln!("callus: {e}");
            ExitCode::from(e.exit().code())
        }
    }
}
