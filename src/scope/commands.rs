//! The operator commands: `callus scope declare`, `verify` and `show`.
//!
//! `declare` validates everything before it touches state, takes the baseline (fingerprint
//! and checks), and only then replaces any earlier run of the same id, writing the
//! declaration last. `verify` keeps the run's state (so `show` works afterwards and the run
//! can be verified again). Exit codes are scope's own (see [`super`]).

use serde_json::json;

use super::declare::{Declaration, DeclareRequest};
use super::state::{Baseline, Gate, Run};
use super::verdict::{Ruling, Verdict};
use super::{EXIT_OK, EXIT_VIOLATION, render, verify};
use crate::Result;
use crate::config::Home;
use crate::output::{print_json, table};

/// `callus scope declare`.
pub(crate) fn declare(args: &DeclareRequest, home: &Home) -> Result<u8> {
    let decl = Declaration::from_request(args)?;
    let baseline = verify::take_baseline(&decl, home)?;
    let run = Run::create(home, &decl.run_id)?;
    run.save_baseline(&baseline)?;
    run.save_declaration(&decl)?;
    println!("· callus scope run {}", decl.run_id);
    println!(
        "  fingerprinted {} file(s) under {}",
        baseline.files.len(),
        decl.root.display()
    );
    println!("  declared: {}", decl.summary());
    for check in &baseline.checks {
        if check.ok {
            println!(
                "  baseline check {}: {} finding(s)",
                check.name,
                check.findings.len()
            );
        } else {
            eprintln!(
                "callus: warning: check '{}' did not run: {} (verify will report it as degraded)",
                check.name,
                check.error.as_deref().unwrap_or("unknown error")
            );
        }
    }
    Ok(EXIT_OK)
}

/// `callus scope verify`.
pub(crate) fn verify(run_id: &str, as_json: bool, home: &Home) -> Result<u8> {
    let run = Run::open(home, run_id)?;
    let decl = run.declaration()?;
    let verdict = verify::verify(&run, &decl, home)?;
    if as_json {
        print_json(&serde_json::to_value(&verdict).unwrap_or_default());
    } else {
        print!("{}", render::report(&verdict));
    }
    Ok(if verdict.ruling == Ruling::Deny {
        EXIT_VIOLATION
    } else {
        EXIT_OK
    })
}

/// `callus scope show`.
pub(crate) fn show(run_id: &str, as_json: bool, home: &Home) -> Result<u8> {
    let run = Run::open(home, run_id)?;
    let decl = run.declaration()?;
    let baseline = run.baseline()?;
    let observations = run.observations().len();
    let gate = run.gate();
    let verdict = run.verdict()?;
    if as_json {
        let checks: Vec<_> = baseline
            .checks
            .iter()
            .map(|c| {
                json!({
                    "name": c.name,
                    "ok": c.ok,
                    "error": c.error,
                    "findings": c.findings.len(),
                })
            })
            .collect();
        print_json(&json!({
            "run_id": run.id,
            "state_dir": run.dir.to_string_lossy(),
            "declaration": decl.to_json(),
            "baseline": {
                "taken_at": baseline.taken_at,
                "files": baseline.files.len(),
                "checks": checks,
            },
            "observations": observations,
            "session": gate.session,
            "stop_refusals": gate.stop_refusals,
            "verdict": verdict,
        }));
        return Ok(EXIT_OK);
    }
    show_text(
        &run,
        &decl,
        &baseline,
        observations,
        &gate,
        verdict.as_ref(),
    );
    Ok(EXIT_OK)
}

/// `callus scope show` as a table of fields.
fn show_text(
    run: &Run,
    decl: &Declaration,
    baseline: &Baseline,
    observations: usize,
    gate: &Gate,
    verdict: Option<&Verdict>,
) {
    let mut t = table(&["field", "value"]);
    let list = |g: &[super::glob::Glob]| {
        g.iter()
            .map(super::glob::Glob::as_str)
            .collect::<Vec<_>>()
            .join(", ")
    };
    t.add_row(vec!["run".to_string(), run.id.clone()]);
    t.add_row(vec!["root".to_string(), decl.root.display().to_string()]);
    t.add_row(vec!["declared at".to_string(), decl.declared_at.clone()]);
    if !decl.intent.is_empty() {
        t.add_row(vec!["intent".to_string(), decl.intent.clone()]);
    }
    for (name, globs) in [
        ("create", &decl.create),
        ("modify", &decl.modify),
        ("delete", &decl.delete),
        ("forbid", &decl.forbid),
        ("skip", &decl.skip),
    ] {
        t.add_row(vec![name.to_string(), list(globs)]);
    }
    for c in &baseline.checks {
        let state = if c.ok {
            format!("{} finding(s) at baseline", c.findings.len())
        } else {
            format!("did not run: {}", c.error.as_deref().unwrap_or("unknown"))
        };
        t.add_row(vec![
            format!("check {}", c.name),
            format!("{} — {state}", c.command),
        ]);
    }
    t.add_row(vec![
        "baseline".to_string(),
        format!("{} file(s), {}", baseline.files.len(), baseline.taken_at),
    ]);
    t.add_row(vec!["hook writes".to_string(), observations.to_string()]);
    t.add_row(vec![
        "session".to_string(),
        gate.session
            .clone()
            .unwrap_or_else(|| "(unclaimed)".to_string()),
    ]);
    t.add_row(vec![
        "last verdict".to_string(),
        verdict.map_or_else(
            || "(not verified yet)".to_string(),
            |v| format!("{} — {}", v.ruling.as_str(), v.message),
        ),
    ]);
    println!("{t}");
}
