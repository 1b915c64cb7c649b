//! `callus guard` as a `PreToolUse` hook: read one event, decide, audit, answer.
//!
//! The failure policy is explicit. Anything that stops the guard from deciding — stdin over
//! the cap, an empty payload, malformed JSON, a non-object payload, a ruleset that does not
//! load (a layer file that is not a regular file, leaves its tree or is over its cap
//! included: see `untrusted`), a pattern that cannot run or exhausts its backtracking budget
//! on the call's text, the rules running past [`RULE_BUDGET`], a store that cannot be
//! written, a panic — is an internal error. With the
//! default policy (fail open) the error does not stop the call (the rules that loaded still
//! decide it), a one-line `callus:` note saying which goes to stderr and an `error` record to
//! the audit chain (or to `errors.log` when the store itself failed).
//! With `CALLUS_FAIL=closed` (or `fail = "closed"` in `$CALLUS_HOME/config`) every internal
//! error blocks the call with the reason; an invalid configuration fails closed when it
//! asked for closed or leaves the policy unknown, and is said on stderr on every call
//! (`config::Home::fail_config`). The audit record states what was enforced. The
//! process only ever exits 0 or 2: panics are caught, because any other code lets the call
//! through in the host without a word. `CALLUS_DRYRUN=1` decides and audits but prints
//! nothing (Cursor: `{}`, its "no opinion") and always exits 0.
//!
//! A pattern is compiled lazily, so a bad regex is an internal error for the calls it could
//! apply to (its tool matches and its literal prefilter passes); `guard check` reports it
//! for every call.
//!
//! Nothing is opened that a call does not need: the store only when a rule fired or an error
//! must be recorded; a halted session is a marker file, checked with one `stat`. Only the
//! rules that may fire on the call are built (`rules::index`;
//! the decision is the one a full parse gives).
//!
//! Test seam: debug builds (never release builds, where the code is compiled out) panic on
//! purpose when `CALLUS_TEST_PANIC=1`, so the integration tests can prove that a panic
//! follows the policy.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::config::{FailPolicy, Home};
use crate::guard::acs::{self, AcsVerdict};
use crate::guard::approve;
use crate::guard::{Decision, DecisionKind, agent_text, decide_until};
use crate::host::Event;
use crate::host::call::{self, Call};
use crate::host::wire::{self as hook, HookEvent, Host, Response};
use crate::rules::layers::LayerPaths;
use crate::rules::{RuleSet, Subject};
use crate::runtime::guarded;
use crate::shell::model::Context as Place;
use crate::store::audit::{AuditFired, AuditRecord};

/// How long the rules may take to decide one call, from the hook's start: past it the rules
/// not yet evaluated are skipped and the call is an internal error under the failure policy
/// (well inside the hook `timeout` that `callus install` writes).
pub(crate) const RULE_BUDGET: std::time::Duration = std::time::Duration::from_secs(2);

/// Settings of one hook run, read from the environment.
struct Context {
    home: Home,
    policy: FailPolicy,
    /// What is wrong with `CALLUS_FAIL` or the settings file (said on stderr every call).
    config_problems: Vec<String>,
    dryrun: bool,
    started: std::time::Instant,
}

impl Context {
    fn from_env() -> Self {
        let home = Home::from_env();
        let config = home.fail_config();
        Context {
            policy: config.policy,
            config_problems: config.problems.iter().map(ToString::to_string).collect(),
            dryrun: std::env::var("CALLUS_DRYRUN").is_ok_and(|v| v == "1"),
            home,
            started: std::time::Instant::now(),
        }
    }

    fn closed(&self) -> bool {
        self.policy == FailPolicy::Closed
    }
}

/// What the guard concluded before any output.
struct Outcome {
    /// Whose shape the answer is written in (an unreadable payload: `CALLUS_HOST` or the
    /// environment's markers decide, else Claude Code's).
    host: Host,
    /// The event answered (Claude Code names it in the answer).
    event: Event,
    response: Response,
    /// The first internal error, if any (stderr note, or the fail-closed reason).
    error: Option<String>,
}

impl Outcome {
    fn silent(host: Host) -> Self {
        Outcome {
            host,
            event: Event::PreToolUse,
            response: Response::Silent,
            error: None,
        }
    }
}

/// Run the hook: stdin → decision → stdout/stderr. Returns the exit code (0 or 2).
#[must_use]
pub(crate) fn run() -> u8 {
    crate::runtime::quiet_panics();
    let ctx = guarded(Context::from_env).unwrap_or_else(|_| Context {
        home: Home::at(".callus"),
        policy: if std::env::var("CALLUS_FAIL").is_ok_and(|v| v.eq_ignore_ascii_case("closed")) {
            FailPolicy::Closed
        } else {
            FailPolicy::Open
        },
        config_problems: Vec::new(),
        dryrun: false,
        started: std::time::Instant::now(),
    });
    let outcome = guarded(|| decide_stdin(&ctx)).unwrap_or_else(|msg| {
        // Recording must not turn one panic into an escaped second one.
        let _ = guarded(|| record_error(&ctx, None, &msg));
        Outcome {
            host: unknown_host(),
            event: Event::PreToolUse,
            response: Response::Silent,
            error: Some(msg),
        }
    });
    let closed = ctx.closed() && !ctx.dryrun;
    guarded(|| finish(&ctx, outcome)).unwrap_or(if closed { 2 } else { 0 })
}

/// Apply the policy to an internal error, print, and return the exit code.
fn finish(ctx: &Context, outcome: Outcome) -> u8 {
    if ctx.dryrun {
        // No opinion in the host's shape (for Cursor that is `{}`: it blocks no output).
        let (mut out, mut err) = (std::io::stdout().lock(), std::io::sink());
        return crate::host::emit_for(outcome.host, &Response::Silent, &mut out, &mut err);
    }
    let stderr = std::io::stderr();
    let mut err = stderr.lock();
    let mut response = outcome.response;
    let fate = match ctx.policy {
        FailPolicy::Closed => "the guard fails closed",
        FailPolicy::Open => "ignored; failing open",
    };
    for problem in &ctx.config_problems {
        let _ = writeln!(err, "callus: invalid configuration: {problem} ({fate})");
    }
    if let Some(error) = &outcome.error {
        match ctx.policy {
            FailPolicy::Open => {
                // Failing open skips what broke; the rules that loaded may still refuse.
                let fate = match response {
                    Response::Deny(_) | Response::Block(_) => {
                        "the rules that loaded still refuse this call"
                    }
                    Response::Silent | Response::Nudge(_) => "the call proceeds",
                };
                let _ = writeln!(err, "callus: {error} (failing open; {fate})");
            }
            FailPolicy::Closed => response = Response::Block(fail_closed_text(error)),
        }
    }
    crate::host::emit_for_event(
        outcome.host,
        outcome.event,
        &response,
        &mut std::io::stdout().lock(),
        &mut err,
    )
}

/// The host of a payload that could not be read: only the environment can say.
fn unknown_host() -> Host {
    crate::host::detect(&serde_json::Map::new(), |k| {
        std::env::var_os(k).is_some_and(|v| !v.is_empty())
    })
}

fn fail_closed_text(error: &str) -> String {
    format!(
        "BLOCKED by callus (fail-closed): {error}. Fix the problem (see `callus guard check` and \
         `callus guard audit tail`) or set CALLUS_FAIL=open."
    )
}

fn decide_stdin(ctx: &Context) -> Outcome {
    #[cfg(debug_assertions)]
    assert!(
        std::env::var("CALLUS_TEST_PANIC").map_or(true, |v| v != "1"),
        "deliberate test panic (CALLUS_TEST_PANIC=1, debug builds only)"
    );
    // No host sends an empty payload: one that arrives means something broke on the way,
    // and a guard that cannot see the call must not pass it as "no opinion".
    let parsed = hook::read_stdin().map_err(|e| e.to_string()).and_then(|b| {
        if b.iter().all(u8::is_ascii_whitespace) {
            Err("empty hook payload: no call to decide".to_string())
        } else {
            hook::parse(&b).map_err(|e| e.to_string())
        }
    });
    let event = match parsed {
        Ok(e) => e,
        Err(msg) => {
            record_error(ctx, None, &msg);
            return Outcome {
                host: unknown_host(),
                event: Event::PreToolUse,
                response: Response::Silent,
                error: Some(msg),
            };
        }
    };
    decide_event(ctx, &event)
}

/// The facts the conditions of `event`'s call are answered from: its session, its cwd, and
/// what its input says of it (run outside the sandbox, its own time limit `time_limit`).
fn live_facts<'a>(
    ctx: &'a Context,
    event: &'a HookEvent,
    time_limit: Option<u64>,
) -> super::facts::Live<'a> {
    super::facts::Live::new(
        &ctx.home,
        event.host.slug(),
        &event.session_id,
        event.cwd.as_deref(),
        &super::facts::process_env,
    )
    .unsandboxed(crate::host::call::unsandboxed(&event.tool_input))
    .with_time_limit_ms(time_limit)
}

fn decide_event(ctx: &Context, event: &HookEvent) -> Outcome {
    // Only PreToolUse (and Claude Code's PreSkillShellCommand) is decided (an absent event
    // name is treated as PreToolUse, as callusguard's fixtures send none); other events
    // wired here by mistake get no opinion.
    if !event.event.is_empty() && !event.kind().is_pre_call() {
        return Outcome::silent(event.host);
    }
    let answered = if event.event.is_empty() {
        Event::PreToolUse
    } else {
        event.kind()
    };
    if let Some(halted) = halted(ctx, event, answered) {
        return halted;
    }
    // The project layer follows the call's cwd; without one, the hook's own cwd (the hosts
    // start hooks in the project directory).
    let cwd = event
        .cwd
        .as_deref()
        .map(PathBuf::from)
        .or_else(|| std::env::current_dir().ok());
    let paths = LayerPaths::resolve(&ctx.home, cwd.as_deref());
    // The call, read once: its command text, and where it runs.
    let place = place_of(event);
    let call = Call::new(&event.tool_name, &event.tool_input).at(&place);
    let command = call.command.clone();
    let time_limit = crate::host::call::time_limit_ms(call.tool, call.input);
    // A broken layer is an internal error, but the layers that loaded still decide.
    // Only the rules that may fire on this call are parsed (the decision is the same).
    let subject = Subject::of(call);
    let (rules, load_errors) = RuleSet::load_for(&paths, &subject);
    // Conditions are answered here, at the edge, and only for rules whose patterns matched.
    let facts = live_facts(ctx, event, time_limit);
    let deadline = ctx.started + RULE_BUDGET;
    let decision = decide_until(&rules, &subject, &facts, &|| {
        std::time::Instant::now() >= deadline
    });
    let mut error = internal_error(&load_errors, &decision);
    let refusal = if !decision.fired.is_empty() || error.is_some() {
        let record = decision_record(
            ctx,
            event,
            command.as_deref(),
            &rules,
            &decision,
            error.as_deref(),
        );
        audited(&ctx.home, record, &mut error)
    } else {
        None
    };
    let response = match (decision.kind, agent_text(&decision)) {
        (DecisionKind::Nudge, Some(t)) => Response::Nudge(t),
        (DecisionKind::Deny, Some(t)) => Response::Deny(t),
        (DecisionKind::Block, Some(t)) => Response::Block(t),
        _ => Response::Silent,
    };
    // A one-time approval is checked after the (pure) decision, and only on a refusal whose
    // audit record is written and that no internal error touched.
    let response = match (&refusal, &error) {
        (Some(record), None) if !ctx.dryrun => with_approval(&ctx.home, record, response),
        _ => response,
    };
    // The process ends right after this answer: freeing every rule, pattern and string one
    // by one would cost as much as a fifth of a quiet call with a large ruleset.
    std::mem::forget(rules);
    Outcome {
        host: event.host,
        event: answered,
        response,
        error,
    }
}

/// The block of a call in a session a RECUSE signal halted, if it was halted.
fn halted(ctx: &Context, event: &HookEvent, answered: Event) -> Option<Outcome> {
    let reason = crate::recuse::halted(&ctx.home, &event.session_id)?;
    Some(Outcome {
        host: event.host,
        event: answered,
        response: Response::Block(format!(
            "BLOCKED by callus: this session was halted by a RECUSE signal ({reason}). A human must run `callus session resume {}`.",
            event.session_id
        )),
        error: None,
    })
}

/// The first internal error of a decision: a layer that did not load, else a rule that
/// could not be evaluated.
fn internal_error(load_errors: &[crate::Error], decision: &Decision) -> Option<String> {
    load_errors
        .first()
        .map(|e| format!("ruleset unusable: {e}"))
        .or_else(|| {
            decision
                .errors
                .first()
                .map(|e| format!("rule could not be evaluated: {e}"))
        })
}

/// Where the call runs, read here at the edge for a tool that acts on paths (the only calls
/// whose effects are worked out); for any other tool nothing is read.
fn place_of(event: &HookEvent) -> Place {
    if call::acts_on_paths(&event.tool_name) {
        call::context(event.cwd.as_deref())
    } else {
        Place::default()
    }
}

/// `record` once it is appended to the audit chain; when it could not be, `None` and the
/// reason, logged, as the call's internal error (unless it already has one).
fn audited(home: &Home, record: AuditRecord, error: &mut Option<String>) -> Option<AuditRecord> {
    match append(home, &record) {
        Ok(()) => Some(record),
        Err(e) => {
            let msg = format!("audit chain not written: {e}");
            crate::runtime::log_error(home, &msg);
            error.get_or_insert(msg);
            None
        }
    }
}

/// A refusal either used by a person's `allow-once` grant (a nudge saying so), or ending
/// with the code that would grant it.
fn with_approval(home: &Home, record: &AuditRecord, response: Response) -> Response {
    let refuse = |text: &str| -> Option<String> {
        approve::code_for(home, record)
            .map(|code| format!("{text}{}", approve::refusal_note(&code)))
    };
    match response {
        Response::Deny(text) => match approve::use_grant(home, record, chrono::Utc::now()) {
            Some(note) => Response::Nudge(note),
            None => Response::Deny(refuse(&text).unwrap_or(text)),
        },
        Response::Block(text) => match approve::use_grant(home, record, chrono::Utc::now()) {
            Some(note) => Response::Nudge(note),
            None => Response::Block(refuse(&text).unwrap_or(text)),
        },
        other => other,
    }
}

fn decision_record(
    ctx: &Context,
    event: &HookEvent,
    shell_command: Option<&str>,
    rules: &RuleSet,
    decision: &Decision,
    error: Option<&str>,
) -> AuditRecord {
    // A shell's command as the rules saw it; another tool's `command` field as it is.
    let command = shell_command.map_or_else(
        || crate::rules::field::get(&event.tool_input, "command"),
        std::borrow::Cow::Borrowed,
    );
    let has_command = !command.trim().is_empty();
    // What is enforced: an internal error under fail-closed blocks whatever the rules said.
    let (kind, acs) = match error {
        Some(e) if ctx.closed() => (DecisionKind::Block, acs::for_error(e, true)),
        _ => (decision.kind, acs::for_decision(decision)),
    };
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
        decision: kind.as_str().to_string(),
        winner: decision.winner.clone(),
        ruleset_hash: rules.content_hash(),
        // Keyed, over the redacted command: `crate::digest`.
        command_sha256: has_command
            .then(|| crate::digest::keyed(&store_dir(&ctx.home), &command))
            .flatten(),
        command_preview: has_command.then(|| crate::redact::preview(&command)),
        error: error.map(|e| crate::redact::redact_capped(e, 500)),
        acs,
        ..base_record(ctx, Some(event))
    }
}

fn base_record(ctx: &Context, event: Option<&HookEvent>) -> AuditRecord {
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
        decision: if ctx.closed() { "block" } else { "allow" }.into(),
        winner: None,
        dryrun: ctx.dryrun,
        ruleset_hash: String::new(),
        version: env!("CARGO_PKG_VERSION").into(),
        command_sha256: None,
        command_preview: None,
        error: None,
        acs: AcsVerdict {
            decision: "allow".into(),
            reason: None,
            message: None,
            warnings: Vec::new(),
        },
    }
}

/// The directory of the store (where its digest key lives).
fn store_dir(home: &Home) -> PathBuf {
    let db = home.db_path();
    db.parent()
        .map_or_else(|| home.dir.clone(), Path::to_path_buf)
}

fn append(home: &Home, record: &AuditRecord) -> crate::Result<()> {
    let path = home.db_path();
    // A store busy past the hook timeout is an internal error under the fail policy (closed:
    // the call is blocked), not a wait on another process; the record itself is spooled
    // and appended by the next guard or recorder call that gets the store, so the chain
    // loses nothing.
    let written = crate::store::open_for_hook(&path).and_then(|conn| {
        crate::store::audit::append(&conn, record)?;
        // The store took this record, so it takes the spooled ones too (after it: waiting
        // for them first could double the time a busy store costs this call). Their own
        // times say when each was decided.
        for p in crate::store::audit_spool::merge(home, &conn).1 {
            crate::runtime::log_error(home, &p);
        }
        // The record is committed; a checkpoint that fails now is the next writer's job.
        let _ = crate::store::trim_wal(&conn, &path);
        Ok(())
    });
    match written {
        Err(e) if crate::store::is_busy(&e) => {
            match crate::store::audit_spool::keep(home, record) {
                Ok(_) => Err(crate::Error::Invalid(format!(
                    "{e} (the audit record is spooled for the next call)"
                ))),
                Err(spool) => Err(crate::Error::Invalid(format!("{e}; and {spool}"))),
            }
        }
        other => other,
    }
}

/// Record an internal error in the audit chain; fall back to `errors.log`.
fn record_error(ctx: &Context, event: Option<&HookEvent>, msg: &str) {
    let msg = crate::redact::redact_capped(msg, 500);
    let record = AuditRecord {
        acs: acs::for_error(&msg, ctx.closed()),
        error: Some(msg.clone()),
        ..base_record(ctx, event)
    };
    if let Err(e) = append(&ctx.home, &record) {
        crate::runtime::log_error(
            &ctx.home,
            &format!("{msg}; and the audit chain failed: {e}"),
        );
    }
}
