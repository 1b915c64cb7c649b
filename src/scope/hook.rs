//! `callus scope hook`: the declaration enforced from inside the agent's session.
//!
//! * `PreToolUse` — a write tool call (`Write`, `Edit`, `MultiEdit`: `file_path`;
//!   `NotebookEdit`: `notebook_path`; Codex `apply_patch`: the paths of its `*** Add/Update/
//!   Delete File:` and `*** Move to:` lines) is refused with a `deny` decision when a path it
//!   names lies outside the run root, is forbidden, or is outside the declared write set. A
//!   declaration that names only forbids still refuses forbidden paths.
//!   Other tools get no opinion (Bash writes are caught by the fingerprint at Stop). A
//!   permitted call is noted in `observed.jsonl` for attribution.
//! * `Stop` — the run is verified on **every** Stop, `stop_hook_active` notwithstanding, so an
//!   agent that fixed nothing after a refusal is refused again. A denial
//!   keeps the agent going with the report: on Claude Code exit 2 with the report on stderr,
//!   on Codex `{"decision":"block","reason":…}` on stdout and exit 0. A warning or
//!   escalation is shown to the user as `systemMessage`, a field both hosts document for
//!   Stop (callusguard used `additionalContext`, unverified there). Because
//!   Codex, unlike Claude Code (8), does not cap consecutive Stop refusals, the hook lets the
//!   agent stop after `CALLUS_SCOPE_MAX_STOP_REFUSALS` (default 8; 0 = never) consecutive
//!   refusals, telling the user the run still violates its declaration; `verify` still
//!   exits 2 afterwards.
//! * Any other event: no opinion.
//!
//! Which run applies is documented in [`super::state`] (`$CALLUS_SCOPE_RUN`, else the newest
//! declaration whose root contains the event's `cwd`, claimed per session). Without a run the
//! hook is silent. Failure policy as `callus guard`: an internal error (bad payload,
//! unreadable state, a panic) lets the call through with a `callus scope:` note on stderr,
//! unless `CALLUS_FAIL=closed`, which refuses instead. The process exits only 0 or 2.

use std::io::Write as _;
use std::path::PathBuf;

use serde::Serialize;
use serde_json::Value;

use super::declare::{Declaration, Kind};
use super::observation::Observation;
use super::state::{self, Run};
use super::verdict::Ruling;
use super::{paths, render, verify};
use crate::config::{FailPolicy, Home};
use crate::host::Event;
use crate::host::wire::{self as hook, HookEvent, Host, Response};

/// Environment variable capping consecutive refused Stops.
const MAX_REFUSALS_ENV: &str = "CALLUS_SCOPE_MAX_STOP_REFUSALS";
/// The default cap: Claude Code's own.
const DEFAULT_MAX_REFUSALS: u32 = 8;

/// What the hook answers, before host-specific encoding.
#[derive(Debug, PartialEq, Eq)]
enum Answer {
    /// No opinion.
    Silent,
    /// `PreToolUse`: refuse the call with this reason.
    Refuse(String),
    /// Stop: do not let the agent finish; this is why.
    KeepGoing(String),
    /// Stop: let it finish, and show the user this.
    Notice(String),
}

struct Outcome {
    host: Host,
    event: Event,
    answer: Answer,
    error: Option<String>,
}

/// How a tool call changes a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Write {
    /// Creates or modifies it.
    Write,
    /// Deletes it.
    Delete,
}

/// Run the hook: stdin → answer → stdout/stderr. Returns the exit code (0 or 2).
#[must_use]
pub(crate) fn run() -> u8 {
    let home = Home::from_env();
    crate::runtime::quiet_panics();
    let policy = home.fail_policy();
    let outcome = crate::runtime::guarded(|| decide_stdin(&home)).unwrap_or_else(|panic| Outcome {
        host: Host::ClaudeCode,
        event: Event::Other,
        answer: Answer::Silent,
        error: Some(panic),
    });
    finish(outcome, policy)
}

fn finish(outcome: Outcome, policy: FailPolicy) -> u8 {
    let mut answer = outcome.answer;
    let stderr = std::io::stderr();
    let mut err = stderr.lock();
    if let Some(e) = &outcome.error {
        match policy {
            FailPolicy::Open => {
                let _ = writeln!(err, "callus scope: {e} (failing open)");
            }
            FailPolicy::Closed => {
                let reason = format!(
                    "callus scope (fail-closed): {e}. Fix the problem or set CALLUS_FAIL=open."
                );
                answer = if outcome.event == Event::Stop {
                    Answer::KeepGoing(reason)
                } else {
                    Answer::Refuse(reason)
                };
            }
        }
    }
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match answer {
        Answer::Silent => 0,
        Answer::Refuse(reason) => {
            crate::host::emit_for(outcome.host, &Response::Deny(reason), &mut out, &mut err)
        }
        Answer::KeepGoing(reason) => match outcome.host {
            Host::ClaudeCode | Host::Gemini | Host::Cursor => {
                hook::emit(&Response::Block(reason), &mut out, &mut err)
            }
            // Copilot CLI's `agentStop` takes Codex's `decision: "block"` + `reason`.
            Host::Codex | Host::Copilot => {
                print_json(
                    &mut out,
                    &StopBlock {
                        decision: "block",
                        reason: &reason,
                    },
                );
                0
            }
        },
        Answer::Notice(text) => {
            print_json(
                &mut out,
                &Notice {
                    system_message: &text,
                },
            );
            0
        }
    }
}

/// Stop output that keeps the agent going (both hosts accept it; Codex requires JSON).
#[derive(Serialize)]
struct StopBlock<'a> {
    decision: &'a str,
    reason: &'a str,
}

/// Stop output shown to the user without keeping the agent going.
#[derive(Serialize)]
struct Notice<'a> {
    #[serde(rename = "systemMessage")]
    system_message: &'a str,
}

fn print_json(out: &mut impl std::io::Write, value: &impl Serialize) {
    let json = serde_json::to_string(value).unwrap_or_else(|_| String::from("{}"));
    // If stdout is gone the host is gone too.
    let _ = out.write_all(json.as_bytes());
    let _ = out.flush();
}

fn decide_stdin(home: &Home) -> Outcome {
    match hook::read_stdin().and_then(|b| hook::parse(&b)) {
        Ok(event) => decide(home, &event),
        Err(e) => Outcome {
            host: Host::ClaudeCode,
            event: Event::Other,
            answer: Answer::Silent,
            error: Some(e.to_string()),
        },
    }
}

fn decide(home: &Home, event: &HookEvent) -> Outcome {
    let result = match event.kind() {
        Event::PreToolUse => pre_tool_use(home, event),
        Event::Stop => stop(home, event),
        _ => Ok(Answer::Silent),
    };
    let (answer, error) = match result {
        Ok(a) => (a, None),
        Err(e) => (Answer::Silent, Some(e.to_string())),
    };
    Outcome {
        host: event.host,
        event: event.kind(),
        answer,
        error,
    }
}

fn event_cwd(event: &HookEvent) -> PathBuf {
    event
        .cwd
        .as_deref()
        .map(PathBuf::from)
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| PathBuf::from("."))
}

fn pre_tool_use(home: &Home, event: &HookEvent) -> crate::Result<Answer> {
    let writes = write_paths(&event.tool_name, &event.tool_input);
    if writes.is_empty() {
        return Ok(Answer::Silent);
    }
    let cwd = event_cwd(event);
    let Some((run, decl)) = state::active(home, &cwd, &event.session_id)? else {
        return Ok(Answer::Silent);
    };
    let mut rels = Vec::with_capacity(writes.len());
    for (path, write) in &writes {
        let Some(rel) = paths::relative(&decl.root, &cwd, path) else {
            return Ok(Answer::Refuse(format!(
                "callus scope: {} writes outside the root of run '{}' ({path}); the run covers \
                 only {}.",
                event.tool_name,
                decl.run_id,
                decl.root.display()
            )));
        };
        if let Some(reason) = refusal(&run, &decl, &rel, *write)? {
            return Ok(Answer::Refuse(reason));
        }
        rels.push(rel);
    }
    let obs = Observation {
        tool: event.tool_name.clone(),
        tool_use_id: event.tool_use_id.clone(),
        paths: rels,
        ts: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
    };
    run.observe(&obs)?;
    Ok(Answer::Silent)
}

/// Why writing `rel` this way breaks the declaration, if it does.
fn refusal(
    run: &Run,
    decl: &Declaration,
    rel: &str,
    write: Write,
) -> crate::Result<Option<String>> {
    let id = &decl.run_id;
    let permit = match write {
        Write::Delete => decl.permits(rel, Kind::Delete),
        Write::Write => {
            let modify = decl.permits(rel, Kind::Modify);
            let create = decl.permits(rel, Kind::Create);
            if modify.ok || !create.ok {
                modify
            } else if existed_at_declare(run, decl, rel)? {
                return Ok(Some(format!(
                    "callus scope: {rel} existed when run '{id}' was declared; the declaration \
                     lets it be created ({}) but not modified.\nDeclared: {}",
                    create.why,
                    decl.summary()
                )));
            } else {
                create
            }
        }
    };
    if permit.ok {
        return Ok(None);
    }
    if permit.why.starts_with("forbid:") {
        return Ok(Some(format!(
            "callus scope: {rel} is forbidden in run '{id}' ({}); it must not be touched.",
            permit.why
        )));
    }
    if !decl.declares_anything() {
        return Ok(None); // a forbid-only declaration refuses forbidden paths only
    }
    let verb = match write {
        Write::Delete => "deleting",
        Write::Write => "writing",
    };
    Ok(Some(format!(
        "callus scope: {verb} {rel} is outside the declared write set of run '{id}' ({}).\n\
         Declared: {}\nStay inside the declaration; if this path must change, a person has \
         to re-declare the run.",
        permit.why,
        decl.summary()
    )))
}

/// Was `rel` in the tree when the run was declared? A path absent now was not modified
/// (it is a create); only otherwise is the baseline read.
fn existed_at_declare(run: &Run, decl: &Declaration, rel: &str) -> crate::Result<bool> {
    if std::fs::symlink_metadata(decl.root.join(rel)).is_err() {
        return Ok(false);
    }
    Ok(run.baseline()?.files.contains_key(rel))
}

fn stop(home: &Home, event: &HookEvent) -> crate::Result<Answer> {
    let cwd = event_cwd(event);
    let Some((run, decl)) = state::active(home, &cwd, &event.session_id)? else {
        return Ok(Answer::Silent);
    };
    let verdict = verify::verify(&run, &decl, home)?;
    let report = render::report(&verdict);
    let mut gate = run.gate();
    let answer = if verdict.ruling == Ruling::Deny {
        let cap = max_refusals();
        if cap > 0 && gate.stop_refusals >= cap {
            gate.stop_refusals = 0;
            Answer::Notice(format!(
                "callus scope: the agent was refused {cap} times in a row and is now allowed \
                 to stop, but run '{}' still violates its declaration.\n{report}",
                decl.run_id
            ))
        } else {
            gate.stop_refusals += 1;
            Answer::KeepGoing(report)
        }
    } else {
        gate.stop_refusals = 0;
        match verdict.ruling {
            Ruling::Allow => Answer::Silent,
            _ => Answer::Notice(report),
        }
    };
    run.save_gate(&gate)?;
    Ok(answer)
}

fn max_refusals() -> u32 {
    std::env::var(MAX_REFUSALS_ENV)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(DEFAULT_MAX_REFUSALS)
}

/// The paths a tool call writes, and how. Tools that name no path yield nothing.
fn write_paths(tool: &str, input: &Value) -> Vec<(String, Write)> {
    let field = |k: &str| {
        input
            .get(k)
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
            .map(|s| (s.to_string(), Write::Write))
    };
    match tool {
        "Write" | "Edit" | "MultiEdit" => field("file_path").into_iter().collect(),
        "NotebookEdit" => field("notebook_path")
            .or_else(|| field("file_path"))
            .into_iter()
            .collect(),
        "apply_patch" => ["command", "patch", "input"]
            .iter()
            .find_map(|k| input.get(*k).and_then(Value::as_str))
            .or_else(|| input.as_str())
            .map(patch_paths)
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// The paths of a Codex patch: added and updated files are written, deleted files deleted,
/// and a moved file deleted at its old path and written at its new one.
fn patch_paths(patch: &str) -> Vec<(String, Write)> {
    let mut out = Vec::new();
    let mut updating: Option<String> = None;
    for line in patch.lines() {
        let line = line.trim_end();
        let named = |prefix: &str| line.strip_prefix(prefix).map(|p| p.trim().to_string());
        if let Some(p) = named("*** Add File: ") {
            out.push((p, Write::Write));
            updating = None;
        } else if let Some(p) = named("*** Update File: ") {
            out.push((p.clone(), Write::Write));
            updating = Some(p);
        } else if let Some(p) = named("*** Delete File: ") {
            out.push((p, Write::Delete));
            updating = None;
        } else if let Some(p) = named("*** Move to: ") {
            if let Some(src) = updating.take() {
                out.push((src, Write::Delete));
            }
            out.push((p, Write::Write));
        }
    }
    out.retain(|(p, _)| !p.is_empty());
    out
}

/// Used by tests of the decision without a process: decide one parsed payload.
#[cfg(test)]
fn answer_for(home: &Home, payload: &Value) -> Answer {
    let bytes = serde_json::to_vec(payload).unwrap();
    decide(home, &hook::parse(&bytes).unwrap()).answer
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_from_tool_input() {
        let w = write_paths("Write", &json!({"file_path": "/r/a.py", "content": "x"}));
        assert_eq!(w, vec![("/r/a.py".to_string(), Write::Write)]);
        assert!(write_paths("Bash", &json!({"command": "echo > a"})).is_empty());
        assert!(write_paths("Read", &json!({"file_path": "/r/a.py"})).is_empty());
        let nb = write_paths("NotebookEdit", &json!({"notebook_path": "n.ipynb"}));
        assert_eq!(nb[0].0, "n.ipynb");
    }

    #[test]
    fn apply_patch_paths_cover_add_update_delete_and_move() {
        let patch = "*** Begin Patch\n*** Add File: new.txt\n+hi\n*** Update File: src/a.rs\n\
                     *** Move to: src/b.rs\n@@\n-x\n+y\n*** Delete File: old.txt\n*** End Patch\n";
        let got = write_paths("apply_patch", &json!({ "command": patch }));
        assert_eq!(
            got,
            vec![
                ("new.txt".to_string(), Write::Write),
                ("src/a.rs".to_string(), Write::Write),
                ("src/a.rs".to_string(), Write::Delete),
                ("src/b.rs".to_string(), Write::Write),
                ("old.txt".to_string(), Write::Delete),
            ]
        );
    }

    #[test]
    fn events_without_a_run_get_no_opinion() {
        let home = tempfile::tempdir().unwrap();
        let home = Home::at(home.path());
        let pre = json!({"hook_event_name": "PreToolUse", "tool_name": "Write",
            "tool_input": {"file_path": "/tmp/x"}, "cwd": "/tmp"});
        assert_eq!(answer_for(&home, &pre), Answer::Silent);
        let other = json!({"hook_event_name": "PreCompact"});
        assert_eq!(answer_for(&home, &other), Answer::Silent);
    }
}
