//! `callus guard` as a `PreToolUse` hook: read one event, decide, audit, answer.
//!
//! The failure policy is explicit. Anything that stops the guard from deciding — stdin over
//! the cap, malformed JSON, a non-object payload, a ruleset that does not load, a pattern
//! that cannot run, a store that cannot be written, a panic — is an internal error. With the
//! default policy (fail open) the call proceeds, a one-line `callus:` note goes to stderr and
//! an `error` record to the audit chain (or `errors.log` when the store itself failed). With
//! `CALLUS_FAIL=closed` (or `fail = "closed"` in `$CALLUS_HOME/config`) every internal error
//! blocks the call with the reason. The process only ever exits 0 or 2: panics are caught,
//! because any other code lets the call through in the host without a word.
//!
//! Nothing is opened that a call does not need: the store only when a rule fired or an error
//! must be recorded; a halted session is a marker file, checked with one `stat`.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::config::{FailPolicy, Home};
use crate::guard::audit::{AuditFired, AuditRecord};
use crate::guard::{Decision, ToolCall, Verdict, agent_text, evaluate};
use crate::hook::{self, HookEvent, Host, Response};
use crate::rules::RuleSet;
use crate::rules::layers::{LayerPaths, sha256_hex};

/// What the guard concluded before any output.
struct Outcome {
    response: Response,
    /// Internal errors to report (stderr note + audit error record).
    errors: Vec<String>,
}

/// Run the hook: stdin → decision → stdout/stderr. Returns the exit code (0 or 2).
#[must_use]
pub fn run() -> u8 {
    let home = Home::from_env();
    // A panic message on stderr from the default hook would be noise; we report it ourselves.
    std::panic::set_hook(Box::new(|_| {}));
    let policy = home.fail_policy();
    let dryrun = std::env::var("CALLUS_DRYRUN").is_ok_and(|v| v == "1");
    let outcome =
        std::panic::catch_unwind(|| decide_stdin(&home, dryrun)).unwrap_or_else(|panic| {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string());
            Outcome {
                response: Response::Silent,
                errors: vec![format!("internal panic: {what}")],
            }
        });
    finish(outcome, policy, dryrun)
}

fn finish(outcome: Outcome, policy: FailPolicy, dryrun: bool) -> u8 {
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    let mut err = stderr.lock();
    let mut response = outcome.response;
    if let Some(first) = outcome.errors.first() {
        match policy {
            FailPolicy::Open => {
                let _ = writeln!(err, "callus: {first} (failing open; the call proceeds)");
            }
            FailPolicy::Closed => {
                response = Response::Block(format!(
                    "BLOCKED by callus (fail-closed): {first}. Fix the problem or set CALLUS_FAIL=open."
                ));
            }
        }
    }
    if dryrun {
        return 0;
    }
    hook::emit(&response, &mut stdout.lock(), &mut err)
}

fn decide_stdin(home: &Home, dryrun: bool) -> Outcome {
    let event = match hook::read_stdin().and_then(|b| hook::parse(&b)) {
        Ok(e) => e,
        Err(e) => {
            let msg = e.to_string();
            record_error(home, None, &msg);
            return Outcome {
                response: Response::Silent,
                errors: vec![msg],
            };
        }
    };
    decide_event(home, &event, dryrun)
}

fn decide_event(home: &Home, event: &HookEvent, dryrun: bool) -> Outcome {
    // Only PreToolUse is decided (an absent event name is treated as one, as callusguard's
    // fixtures send none); other events wired here by mistake get no opinion.
    if !event.event.is_empty() && event.event != "PreToolUse" {
        return Outcome {
            response: Response::Silent,
            errors: Vec::new(),
        };
    }
    if let Some(reason) = halted(home, &event.session_id) {
        return Outcome {
            response: Response::Block(format!(
                "BLOCKED by callus: this session was halted by a RECUSE signal ({reason}). A human must run `callus session resume {}`.",
                event.session_id
            )),
            errors: Vec::new(),
        };
    }
    let cwd = event.cwd.as_deref().map(PathBuf::from);
    let paths = LayerPaths::resolve(home, cwd.as_deref());
    let rules = match RuleSet::load(&paths) {
        Ok(r) => r,
        Err(e) => {
            let msg = format!("ruleset unusable: {e}");
            record_error(home, Some(event), &msg);
            return Outcome {
                response: Response::Silent,
                errors: vec![msg],
            };
        }
    };
    let call = ToolCall {
        tool: &event.tool_name,
        input: &event.tool_input,
    };
    let decision = evaluate(&rules, &call);
    let mut errors: Vec<String> = decision
        .errors
        .iter()
        .map(|e| format!("rule could not be evaluated: {e}"))
        .collect();
    if !decision.fired.is_empty() || !errors.is_empty() {
        let record = decision_record(event, &rules, &decision, dryrun, errors.first().cloned());
        if let Err(e) = append(home, &record) {
            let msg = format!("audit chain not written: {e}");
            log_error(home, &msg);
            errors.push(msg);
        }
    }
    let response = match (decision.verdict, agent_text(&decision)) {
        (Verdict::Nudge, Some(t)) => Response::Nudge(t),
        (Verdict::Deny, Some(t)) => Response::Deny(t),
        (Verdict::Block, Some(t)) => Response::Block(t),
        _ => Response::Silent,
    };
    Outcome { response, errors }
}

/// The reason a session was halted, if its marker file exists.
fn halted(home: &Home, session_id: &str) -> Option<String> {
    if session_id.is_empty() {
        return None;
    }
    let marker = home.halts_dir().join(marker_name(session_id));
    let text = std::fs::read_to_string(marker).ok()?;
    Some(text.lines().next().unwrap_or("halt").trim().to_string())
}

/// A file name for a session id that cannot escape the halts directory.
#[must_use]
pub fn marker_name(session_id: &str) -> String {
    session_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn decision_record(
    event: &HookEvent,
    rules: &RuleSet,
    decision: &Decision,
    dryrun: bool,
    error: Option<String>,
) -> AuditRecord {
    let command = crate::rules::field::get(&event.tool_input, "command");
    let has_command = !command.trim().is_empty();
    AuditRecord {
        kind: if decision.fired.is_empty() {
            "error"
        } else {
            "decision"
        }
        .to_string(),
        fired: decision
            .fired
            .iter()
            .map(|f| AuditFired {
                id: f.id.clone(),
                layer: f.layer.as_str().to_string(),
                file: f.layer_file.clone(),
                action: f.action.as_str().to_string(),
            })
            .collect(),
        decision: decision.verdict.as_str().to_string(),
        winner: decision.winner.clone(),
        dryrun,
        ruleset_hash: rules.content_hash(),
        command_sha256: has_command.then(|| sha256_hex(command.as_bytes())),
        command_preview: has_command.then(|| crate::redact::preview(&command)),
        error,
        ..base_record(Some(event))
    }
}

fn base_record(event: Option<&HookEvent>) -> AuditRecord {
    AuditRecord {
        ts: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        kind: "error".into(),
        host: event.map_or(Host::ClaudeCode, |e| e.host).slug().into(),
        session_id: event
            .map(|e| e.session_id.clone())
            .filter(|s| !s.is_empty()),
        tool_use_id: event.and_then(|e| e.tool_use_id.clone()),
        cwd: event.and_then(|e| e.cwd.clone()),
        tool: event.map(|e| e.tool_name.clone()).unwrap_or_default(),
        fired: Vec::new(),
        decision: "allow".into(),
        winner: None,
        dryrun: false,
        ruleset_hash: String::new(),
        version: env!("CARGO_PKG_VERSION").into(),
        command_sha256: None,
        command_preview: None,
        error: None,
    }
}

fn append(home: &Home, record: &AuditRecord) -> crate::Result<()> {
    let conn = crate::store::open(&home.db_path())?;
    super::audit::append(&conn, record).map(drop)
}

/// Record an internal error in the audit chain; fall back to `errors.log`.
fn record_error(home: &Home, event: Option<&HookEvent>, msg: &str) {
    let record = AuditRecord {
        error: Some(crate::redact::redact_capped(msg, 500)),
        ..base_record(event)
    };
    if let Err(e) = append(home, &record) {
        log_error(home, &format!("{msg}; and the audit chain failed: {e}"));
    }
}

/// Largest `errors.log` before it is rotated to `errors.log.1`.
pub const ERRORS_LOG_CAP: u64 = 1024 * 1024;

/// Append one line to `$CALLUS_HOME/errors.log`, rotating it past [`ERRORS_LOG_CAP`].
/// Best effort: a log that cannot be written is not worth failing a hook over.
pub fn log_error(home: &Home, msg: &str) {
    let path = home.errors_log();
    let _ = crate::config::ensure_private_dir(&home.dir);
    if std::fs::metadata(&path).is_ok_and(|m| m.len() > ERRORS_LOG_CAP) {
        let _ = std::fs::rename(&path, rotated(&path));
    }
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
    {
        let line = crate::redact::redact_capped(&msg.replace('\n', " "), 2000);
        let _ = writeln!(
            f,
            "{} {line}",
            chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        );
    }
}

fn rotated(path: &Path) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(".1");
    PathBuf::from(p)
}
