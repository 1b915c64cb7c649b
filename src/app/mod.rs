//! The command layer's entry: recognise the hook fast path, else parse the command line
//! once and dispatch it to the stage that owns the command.
//!
//! One file per command family turns its clap arguments into the stage's own request; no
//! stage below reads `crate::cli`.
//!
//! - `guard`: `callus guard check|test|audit`.
//! - `replay`: `callus guard check --history`.
//! - `rules`: `callus rules list|show|promote`.
//! - `approve`: `callus allow-once CODE`.
//! - `record`: `callus record import|stats`.
//! - `derive`: `callus derive [explain ID]`.
//! - `report`: `callus report` and `callus guard prune`.
//! - `scope`: `callus scope declare|verify|show|hook`.
//! - `sync`: `callus sync push|init|status`.
//! - `setup`: `callus install|uninstall|doctor|demo|session`.
//! - `docs`: `callus completions SHELL` and `callus man`.
//!
//! Guarantees: this is the only module that imports every stage; a broken stdout pipe
//! (`callus rules list | head`) is success, not a panic; every error is printed once, as one
//! `callus: …` line, and its [`crate::error::Exit`] code is the process exit code.

use clap::Parser as _;

mod approve;
mod derive;
mod docs;
mod guard;
mod record;
mod replay;
mod report;
mod rules;
mod scope;
mod setup;
mod sync;

use crate::cli::{Cli, Command, GuardCommand, RecordCommand};
use crate::config::Home;

/// The process entry point: the hook fast path, else clap and `run`.
#[must_use]
pub fn main_entry() -> std::process::ExitCode {
    std::process::ExitCode::from(main_code())
}

/// [`main_entry`] as the process exit status (0–255): what the binary's C `main` returns on
/// Linux (see `main.rs`).
#[must_use]
pub fn main_code() -> u8 {
    let mut args = std::env::args_os().skip(1);
    if let (Some(first), None) = (args.next(), args.next()) {
        if first == "guard" {
            return crate::guard::hook::run();
        }
        if first == "record" {
            return crate::record::hook();
        }
    }
    match Cli::try_parse() {
        Ok(cli) => run(cli),
        Err(e) => {
            // Printing can only fail when stderr/stdout are gone; the exit code still tells.
            let _ = e.print();
            crate::scope::usage_exit(&e, std::env::args_os().skip(1))
        }
    }
}

/// Run a parsed command line and turn its result into an exit code.
#[must_use]
pub(crate) fn run(cli: Cli) -> u8 {
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
        Err(payload) if is_broken_pipe(&*payload) => 0,
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

fn dispatch(cli: Cli) -> u8 {
    let home = Home::from_env();
    let home = &home;
    let result = match cli.command {
        Command::Guard(args) => match args.command {
            None => return crate::guard::hook::run(),
            Some(GuardCommand::Check(a)) => match &a.history {
                Some(window) => replay::check_history(home, &a, window),
                None => Ok(guard::check(home, &a)),
            },
            Some(GuardCommand::Test(a)) => guard::test(home, &a),
            Some(GuardCommand::Audit(a)) => guard::audit(home, &a),
            Some(GuardCommand::Prune(a)) => report::prune(home, &a),
        },
        Command::Record(args) => match args.command {
            None => return crate::record::hook(),
            Some(RecordCommand::Import(a)) => self::record::import(home, &a),
            Some(RecordCommand::Stats(a)) => self::record::stats(home, &a),
        },
        Command::Derive(a) => derive::run(home, &a),
        Command::Rules(c) => rules::run(home, &c),
        Command::Report(a) => report::report(home, &a),
        Command::Scope(c) => return scope::run(home, &c),
        Command::Install(a) => setup::install(home, &a, false),
        Command::Uninstall(a) => setup::install(home, &a, true),
        Command::Doctor(a) => Ok(crate::doctor::run(home, a.json)),
        Command::Session(c) => setup::session(home, &c),
        Command::Sync(c) => sync::run(home, &c),
        Command::Demo(a) => crate::demo::run(a.keep),
        Command::Completions(a) => Ok(docs::completions(&a)),
        Command::Man(a) => docs::man(&a),
        Command::AllowOnce(a) => approve::run(home, &a),
    };
    match result {
        Ok(exit) => exit.code(),
        Err(e) => {
            eprintln!("callus: {e}");
            e.exit().code()
        }
    }
}
