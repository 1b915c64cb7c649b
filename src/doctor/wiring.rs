//! Doctor's wiring checks: which binary the hooks call, which hosts are wired in which scope
//! with which events and matchers, and (Codex) whether Codex trusts the hooks as written.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::{Report, Status};
use crate::config::{FailPolicy, Home};
use crate::host::codex_home;
use crate::host::{Host, Role, Trust};
use crate::install::settings::{Doc, Found, find_ours};
use crate::install::spec::{BlockOnFailure, GUARD_TIMEOUT, find_on_path, is_executable, resolve};
use crate::install::{Scope, Target, codex_trust};

/// A hooks file that has callus's hooks in it.
#[derive(Debug, Clone)]
pub(crate) struct Wired {
    /// The host.
    pub host: Host,
    /// When the file was last written (≈ when callus was installed).
    pub modified: Option<SystemTime>,
}

/// Check every place hooks can live; return the ones that are wired.
pub(crate) fn check(home: &Home, report: &mut Report) -> Vec<Wired> {
    let cwd = std::env::current_dir().unwrap_or_default();
    let mut wired = Vec::new();
    let mut binaries: Vec<PathBuf> = Vec::new();
    for host in crate::host::HOSTS.iter().map(|s| s.host) {
        let mut host_wired = false;
        let mut present = host_present(host);
        for scope in [Scope::Project, Scope::User] {
            let target = Target::resolve(host, scope, &cwd);
            if !target.path.exists() {
                continue;
            }
            present = true;
            let doc = match crate::install::versioned::load(host, &target.path) {
                Ok(d) => d,
                Err(e) => {
                    report.add("wiring", Status::Fail, format!("{}: {e}", target.label()));
                    continue;
                }
            };
            let found = find_ours(&doc.value);
            if found.is_empty() {
                continue;
            }
            host_wired = true;
            check_target(report, home.fail_policy(), &target, &doc, &found);
            super::probe::check(report, &target, &found, &cwd);
            binaries.extend(found.iter().filter_map(|f| resolve(&f.binary)));
            wired.push(Wired {
                host,
                modified: std::fs::metadata(&target.path)
                    .and_then(|m| m.modified())
                    .ok(),
            });
        }
        let flag = host.spec().install_flag;
        if present && !host_wired {
            // Installed but not wired is a choice (a user may run callus with one agent
            // only); "wired into no agent at all" is the failure, below.
            report.add(
                "wiring",
                Status::Info,
                format!(
                    "{}: found, not wired (to wire it: `callus install {flag}`)",
                    host.slug()
                ),
            );
        } else if !present {
            report.add(
                "wiring",
                Status::Info,
                format!("{}: not found on this machine", host.slug()),
            );
        }
    }
    if wired.is_empty()
        && !report
            .checks
            .iter()
            .any(|c| c.area == "wiring" && c.status == Status::Fail)
    {
        let flags: Vec<&str> = crate::host::HOSTS.iter().map(|s| s.install_flag).collect();
        report.add(
            "wiring",
            Status::Fail,
            format!(
                "callus is not wired into any agent: run `callus install` (Claude Code) or `callus install` with one of {}",
                flags[1..].join(", ")
            ),
        );
    }
    check_binary(report, &binaries);
    wired
}

fn host_present(host: Host) -> bool {
    let spec = host.spec();
    (spec.config_dir)().is_dir() || find_on_path(spec.executable).is_some()
}

fn check_target(
    report: &mut Report,
    policy: FailPolicy,
    target: &Target,
    doc: &Doc,
    found: &[Found],
) {
    let label = target.label();
    let path = target.path.display();
    let mut problems: Vec<String> = Vec::new();
    let mut warnings: Vec<String> = Vec::new();
    for spec in &target.host.specs_for_client() {
        let hits: Vec<&Found> = found
            .iter()
            .filter(|f| f.event == spec.event && f.role == spec.role)
            .collect();
        let Some(f) = hits.first() else {
            let what = format!("{} → callus {} is not wired", spec.event, spec.role.arg());
            if spec.role == Role::Guard && spec.since.is_some() {
                // Newer pre-call events (Claude Code's PreSkillShellCommand): the main
                // guard still screens tool calls.
                warnings.push(format!(
                    "{what}: run `callus install` again to screen them too"
                ));
            } else if spec.role == Role::Guard {
                problems.push(format!("{what}: no call is screened"));
            } else {
                warnings.push(what);
            }
            continue;
        };
        if f.matcher.as_deref() != spec.matcher {
            warnings.push(format!(
                "{} matcher is {} (callus installs {})",
                spec.event,
                f.matcher.as_deref().unwrap_or("(all)"),
                spec.matcher.unwrap_or("(all)")
            ));
        }
        if !target.host.spec().runs_async && f.is_async {
            problems.push(format!(
                "{} is async: {} skips async hooks",
                spec.event,
                target.host.slug()
            ));
        }
        if spec.role == Role::Guard {
            check_guard_failure(target.host, policy, f, &mut problems, &mut warnings);
        }
    }
    stale_binaries(found, &mut problems);
    problems.dedup();
    let events: Vec<String> = found
        .iter()
        .map(|f| match &f.matcher {
            Some(m) => format!("{} [{m}] → {}", f.event, f.role.arg()),
            None => format!("{} → {}", f.event, f.role.arg()),
        })
        .collect();
    if problems.is_empty() {
        report.add(
            "wiring",
            Status::Ok,
            format!("{label}: {path}: {}", events.join(", ")),
        );
    }
    for p in problems {
        report.add("wiring", Status::Fail, format!("{label}: {path}: {p}"));
    }
    for w in warnings {
        report.add("wiring", Status::Warn, format!("{label}: {path}: {w}"));
    }
    if target.host.spec().trust == Trust::CodexHash {
        check_trust(report, target, doc, found);
    }
}

/// A hook whose binary is not an executable file, or is called by a name no `PATH` entry
/// has: every call of it fails.
fn stale_binaries(found: &[Found], problems: &mut Vec<String>) {
    for f in found {
        match resolve(&f.binary) {
            Some(b) if is_executable(&b) => {}
            Some(b) => problems.push(format!(
                "stale binary path: {} calls {}, which is not an executable file (run `callus install` again)",
                f.event,
                b.display()
            )),
            None => problems.push(format!(
                "{} calls `{}` by name, and none is on PATH: every call of the hook fails (put callus on PATH)",
                f.event,
                f.binary.display()
            )),
        }
    }
}

/// A guard hook must not outlive its purpose: without a `timeout` the host waits 600 s and
/// then lets the call run. Failing closed on Claude Code ≥ 2.1.295 it also needs `onFailure:
/// "block"`, or a guard that crashes or times out lets the call run anyway.
fn check_guard_failure(
    host: Host,
    policy: FailPolicy,
    f: &Found,
    problems: &mut Vec<String>,
    warnings: &mut Vec<String>,
) {
    let per_second = host.spec().timeout.per_second;
    match f.timeout {
        None => warnings.push(format!(
            "{} has no timeout: the host waits for a stalled guard, then lets the call run (run `callus install` again)",
            f.event
        )),
        Some(t) if t > GUARD_TIMEOUT * per_second => warnings.push(format!(
            "{} timeout is {} s (callus installs {GUARD_TIMEOUT} s)",
            f.event,
            t as f64 / per_second as f64
        )),
        Some(_) => {}
    }
    let blocks = f.on_failure.as_deref() == Some("block");
    let support = BlockOnFailure::of(host, policy);
    match support {
        BlockOnFailure::Honoured if !blocks => problems.push(format!(
            "fail-closed is configured but {} has no `onFailure: \"block\"`: a guard that crashes or times out lets the call run (run `callus install` again)",
            f.event
        )),
        BlockOnFailure::TooOld(_) => warnings.extend(support.shortfall(host)),
        BlockOnFailure::Unknown if !blocks => warnings.extend(support.shortfall(host)),
        _ => {}
    }
}

/// Codex skips a hook whose recorded `trusted_hash` is missing or stale, without a word.
fn check_trust(report: &mut Report, target: &Target, doc: &Doc, found: &[Found]) {
    let config = codex_home().join("config.toml");
    let text = std::fs::read_to_string(&config).unwrap_or_default();
    if let Err(e) = codex_trust::validate(&config, &text) {
        report.add(
            "wiring",
            Status::Fail,
            format!(
                "{}: {e}: Codex cannot load its configuration, so it trusts none of the hooks",
                target.label()
            ),
        );
        return;
    }
    let recorded = codex_trust::recorded(&text);
    let entries = codex_trust::entries(&target.path, &doc.value, found);
    let mut untrusted = Vec::new();
    let mut modified = Vec::new();
    for e in &entries {
        match recorded.iter().find(|(k, _)| *k == e.key) {
            None => untrusted.push(e.key.clone()),
            Some((_, h)) if *h != e.hash => modified.push(e.key.clone()),
            Some(_) => {}
        }
    }
    let label = target.label();
    if untrusted.is_empty() && modified.is_empty() {
        report.add(
            "wiring",
            Status::Ok,
            format!(
                "{label}: Codex trusts all {} hooks ({})",
                entries.len(),
                config.display()
            ),
        );
    }
    if !untrusted.is_empty() {
        report.add(
            "wiring",
            Status::Fail,
            format!(
                "{label}: {} hook(s) untrusted — Codex skips them silently: {} (run `callus install --codex` or trust them with /hooks)",
                untrusted.len(),
                untrusted.join(", ")
            ),
        );
    }
    if !modified.is_empty() {
        report.add(
            "wiring",
            Status::Fail,
            format!(
                "{label}: {} hook(s) modified since they were trusted — Codex skips them: {} (run `callus install --codex` again)",
                modified.len(),
                modified.join(", ")
            ),
        );
    }
    if target.scope == Scope::Project {
        report.add(
            "wiring",
            Status::Info,
            "codex project hooks load only when the project itself is trusted in Codex",
        );
    }
}

/// The binary on `PATH` should be the one the hooks call.
fn check_binary(report: &mut Report, hook_binaries: &[PathBuf]) {
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let mut called: Vec<PathBuf> = hook_binaries.to_vec();
    called.sort();
    called.dedup();
    let running = std::env::current_exe().map(|p| canon(&p)).ok();
    match find_on_path("callus") {
        None => report.add(
            "binary",
            Status::Warn,
            format!(
                "callus is not on PATH (this one is {})",
                running.as_deref().unwrap_or(Path::new("?")).display()
            ),
        ),
        Some(on_path) => {
            let real = canon(&on_path);
            let differing: Vec<String> = called
                .iter()
                .filter(|b| is_executable(b) && canon(b) != real)
                .map(|b| b.display().to_string())
                .collect();
            if differing.is_empty() {
                report.add(
                    "binary",
                    Status::Ok,
                    format!("callus on PATH: {}", on_path.display()),
                );
            } else {
                report.add(
                    "binary",
                    Status::Warn,
                    format!(
                        "callus on PATH is {} but hooks call {}",
                        on_path.display(),
                        differing.join(", ")
                    ),
                );
            }
        }
    }
}
