//! `callus allow-once CODE`: a person at a terminal lets one refused call through.
//!
//! The refusals come first: without a terminal on both stdin and stdout, or with an agent's
//! tool-call environment present (`guard::approve::AGENT_MARKERS`), nothing is granted and
//! the exit code is 1. The grant itself (finding the refusal, the audit record, the grant
//! file) is `guard::approve::grant`.

use std::io::IsTerminal as _;

use serde_json::json;

use crate::cli::AllowOnceArgs;
use crate::config::Home;
use crate::guard::approve::{self, AGENT_MARKERS};
use crate::output::print_json;
use crate::{Exit, Result};

/// Why this process may not grant, if it may not.
fn refusal() -> Option<String> {
    if let Some(marker) = AGENT_MARKERS
        .iter()
        .find(|k| std::env::var_os(k).is_some_and(|v| !v.is_empty()))
    {
        return Some(format!(
            "allow-once refused: it is running inside an agent's tool call ({marker} is set). \
             Only a person can approve a refused call: run it in your own terminal."
        ));
    }
    if !(std::io::stdin().is_terminal() && std::io::stdout().is_terminal()) {
        return Some(
            "allow-once refused: stdin and stdout must be a terminal (a person types the code; \
             an agent's tool call has no terminal)."
                .to_string(),
        );
    }
    None
}

/// The terminal's name, for the audit record.
fn tty_name() -> String {
    std::fs::read_link("/proc/self/fd/0")
        .map_or_else(|_| "a terminal".to_string(), |p| p.display().to_string())
}

/// `callus allow-once CODE [--json]`.
pub(super) fn run(home: &Home, args: &AllowOnceArgs) -> Result<Exit> {
    if let Some(why) = refusal() {
        eprintln!("callus: {why}");
        return Ok(Exit::Problem);
    }
    let granted = match approve::grant(home, &args.code, &tty_name(), chrono::Utc::now()) {
        Ok(g) => g,
        // An unknown, mistyped or expired code: the check ran and found nothing to approve.
        Err(crate::Error::Invalid(why)) => {
            eprintln!("callus: {why}");
            return Ok(Exit::Problem);
        }
        Err(e) => return Err(e),
    };
    if args.json {
        print_json(&json!(granted));
    } else {
        println!(
            "approved once: {} (rule {}) in {}",
            granted.command.as_deref().unwrap_or("(no command)"),
            granted.rule.as_deref().unwrap_or("?"),
            granted.project
        );
        println!(
            "the next identical call there may run, once, until {} (audit record {})",
            granted.expires, granted.audit_seq
        );
    }
    Ok(Exit::Ok)
}
