//! `callus doctor`: prove callus is installed, wired, firing and healthy.
//!
//! Each check is one line — `✓` ok, `⚠` warning, `✗` problem, `·` information — grouped by
//! area: the binary and the hooks that call it ([`wiring`]), the guard hooks fired with a
//! benign and a dangerous call in each host's shape ([`probe`]), whether the hooks actually fire
//! and the store and audit chain are sound ([`store`]), the active rulesets, and the agent
//! clients' versions against the ones the end-to-end tests last passed on ([`clients`]).
//! `--json` prints the same checks as data: `{"ok", "failures", "warnings", "checks":
//! [{"area", "status": "ok"|"warn"|"fail"|"info", "message"}]}`. Exit 0 when nothing is `✗`
//! (warnings allowed), 1 otherwise. Doctor only reads: it opens the store read-only and never
//! migrates it (its one write is the probe of [`home`], created and removed at once).

pub(crate) mod clients;
mod home;
mod probe;
pub(crate) mod store;
pub(crate) mod wiring;

use serde::Serialize;

use crate::Exit;
use crate::config::Home;

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Status {
    /// ✓ fine.
    Ok,
    /// ⚠ worth a look; never fails doctor.
    Warn,
    /// ✗ a problem; doctor exits 1.
    Fail,
    /// · information.
    Info,
}

impl Status {
    /// The glyph printed for people.
    #[must_use]
    pub(crate) fn glyph(self) -> &'static str {
        match self {
            Status::Ok => "✓",
            Status::Warn => "⚠",
            Status::Fail => "✗",
            Status::Info => "·",
        }
    }
}

/// One line of the report.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Check {
    /// `binary`, `wiring`, `firing`, `store`, `audit`, `rules`, `config`, `clients`, `halts`.
    pub area: &'static str,
    /// The outcome.
    pub status: Status,
    /// What was found, and what to do about it.
    pub message: String,
}

/// The checks collected so far.
#[derive(Debug, Default)]
pub(crate) struct Report {
    /// In the order they ran.
    pub checks: Vec<Check>,
}

impl Report {
    /// Add a line.
    pub(crate) fn add(&mut self, area: &'static str, status: Status, message: impl Into<String>) {
        self.checks.push(Check {
            area,
            status,
            message: message.into(),
        });
    }

    fn count(&self, status: Status) -> usize {
        self.checks.iter().filter(|c| c.status == status).count()
    }
}

/// Entry point of `callus doctor`; `json` prints the report as one JSON document.
pub(crate) fn run(home: &Home, json: bool) -> Exit {
    let mut report = Report::default();
    let wired = wiring::check(home, &mut report);
    self::home::check(home, &mut report);
    store::check(home, &wired, &mut report);
    rules(home, &mut report);
    config(home, &mut report);
    clients::check(&mut report);
    let failures = report.count(Status::Fail);
    let warnings = report.count(Status::Warn);
    if json {
        crate::output::print_json(&serde_json::json!({
            "ok": failures == 0,
            "failures": failures,
            "warnings": warnings,
            "checks": report.checks,
        }));
    } else {
        use std::fmt::Write as _;
        let mut out = format!("callus doctor — v{}\n", env!("CARGO_PKG_VERSION"));
        let mut area = "";
        for c in &report.checks {
            if c.area != area {
                area = c.area;
                let _ = writeln!(out, "{area}:");
            }
            let _ = writeln!(out, "  {} {}", c.status.glyph(), c.message);
        }
        out.push('\n');
        if failures > 0 {
            let _ = writeln!(out, "FAILED — {failures} problem(s), {warnings} warning(s)");
        } else if warnings > 0 {
            let _ = writeln!(out, "HEALTHY — {warnings} warning(s)");
        } else {
            out.push_str("HEALTHY — all checks passed\n");
        }
        crate::output::print_text(&out);
    }
    if failures == 0 {
        Exit::Ok
    } else {
        Exit::Problem
    }
}

/// `CALLUS_FAIL` and `$CALLUS_HOME/config` must be valid: the guard fails closed on a
/// configuration it cannot read for sure.
fn config(home: &Home, report: &mut Report) {
    let config = home.fail_config();
    if config.problems.is_empty() {
        report.add(
            "config",
            Status::Ok,
            format!("fail {}", config.policy.as_str()),
        );
    }
    for p in &config.problems {
        report.add(
            "config",
            Status::Fail,
            format!(
                "{p} (the guard runs fail {} until this is fixed)",
                config.policy.as_str()
            ),
        );
    }
}

/// Every active ruleset must pass `guard check`.
fn rules(home: &Home, report: &mut Report) {
    for (name, path, kind) in crate::rules::layers::active_layer_files(home) {
        let file = match &path {
            None => crate::rules::check::check_text(&name, crate::rules::layers::STARTER_JSON),
            // Read as the hook reads it (see `untrusted`).
            Some(p) => match crate::rules::layers::read_layer_text(kind, p) {
                Ok(Some(text)) => crate::rules::check::check_text(&name, &text),
                Ok(None) => continue,
                Err(e) => {
                    report.add("rules", Status::Fail, format!("{name}: cannot read: {e}"));
                    continue;
                }
            },
        };
        if file.ok {
            report.add(
                "rules",
                Status::Ok,
                format!("{name}: {} rules pass `guard check`", file.rules),
            );
        } else {
            let problems: Vec<&str> = file
                .errors
                .iter()
                .chain(&file.example_failures)
                .map(String::as_str)
                .collect();
            report.add(
                "rules",
                Status::Fail,
                format!("{name}: fails `guard check`: {}", problems.join("; ")),
            );
        }
    }
}
