//! `PreToolUse` answers in the shapes of the hosts that do not take Claude Code's
//! `hookSpecificOutput`: Gemini CLI's `decision`, Cursor's `permission`, Copilot CLI's
//! top-level `permissionDecision` (sources in `peers`).
//!
//! Guarantees: typed structs, never an `allow`; a nudge is no opinion (none of these hosts
//! reads context before a call), which is nothing on stdout, or `{}` for Cursor, which
//! blocks a permission hook that prints no JSON; a block is exit 2 with the reason on stderr where the host
//! documents exit 2 as a refusal (Gemini CLI; Cursor, which also gets the deny JSON), and a
//! deny where it skips failed hooks (Copilot CLI: a non-zero exit would let the call run).

use std::io::Write;

use serde::Serialize;

use super::wire::{self, Response};
use super::{Answer, Event, Host};

/// Write `response` in `host`'s shape (its [`Answer`]) and return the exit code (0 or 2).
/// Never an explicit allow; a nudge where the host reads no context before a call (Gemini
/// CLI, Cursor, Copilot CLI) prints nothing.
pub(crate) fn emit_for(
    host: Host,
    response: &Response,
    out: &mut impl Write,
    err: &mut impl Write,
) -> u8 {
    emit_for_event(host, Event::PreToolUse, response, out, err)
}

/// [`emit_for`] for the pre-call `event` (Claude Code names it in `hookEventName`, and its
/// `PreSkillShellCommand` answer has no context: a nudge there is no opinion).
pub(crate) fn emit_for_event(
    host: Host,
    event: Event,
    response: &Response,
    out: &mut impl Write,
    err: &mut impl Write,
) -> u8 {
    match host.spec().answer {
        Answer::HookSpecific if event == Event::PreSkillShellCommand => {
            wire::emit_as("PreSkillShellCommand", false, response, out, err)
        }
        Answer::HookSpecific => wire::emit(response, out, err),
        shape => emit(shape, response, out, err),
    }
}

#[derive(Serialize)]
struct GeminiDeny<'a> {
    decision: &'static str,
    reason: &'a str,
}

#[derive(Serialize)]
struct CursorDeny<'a> {
    permission: &'static str,
    user_message: &'a str,
    agent_message: &'a str,
}

#[derive(Serialize)]
struct CopilotDeny<'a> {
    #[serde(rename = "permissionDecision")]
    decision: &'static str,
    #[serde(rename = "permissionDecisionReason")]
    reason: &'a str,
}

fn print(out: &mut impl Write, value: &impl Serialize) {
    let json = serde_json::to_string(value).unwrap_or_else(|_| String::from("{}"));
    // If stdout is gone the host is gone too.
    let _ = out.write_all(json.as_bytes());
    let _ = out.flush();
}

fn deny(shape: Answer, reason: &str, out: &mut impl Write) {
    match shape {
        Answer::Decision => print(
            out,
            &GeminiDeny {
                decision: "deny",
                reason,
            },
        ),
        Answer::Permission => print(
            out,
            &CursorDeny {
                permission: "deny",
                user_message: reason,
                agent_message: reason,
            },
        ),
        Answer::PermissionDecision | Answer::HookSpecific => print(
            out,
            &CopilotDeny {
                decision: "deny",
                reason,
            },
        ),
    }
}

/// Write `response` in `shape` and return the exit code (0 or 2).
pub(super) fn emit(
    shape: Answer,
    response: &Response,
    out: &mut impl Write,
    err: &mut impl Write,
) -> u8 {
    match response {
        // Cursor blocks a permission hook whose output is not JSON ("Permission hooks block
        // on invalid JSON or an invalid response", cursor.com/docs/agent/hooks), so no
        // opinion is the empty object there: no `permission` at all, never `allow`.
        Response::Silent | Response::Nudge(_) if shape == Answer::Permission => {
            let _ = out.write_all(b"{}");
            let _ = out.flush();
            0
        }
        Response::Silent | Response::Nudge(_) => 0,
        Response::Deny(reason) => {
            deny(shape, reason, out);
            0
        }
        Response::Block(reason) => match shape {
            Answer::Decision => {
                let _ = writeln!(err, "{reason}");
                2
            }
            Answer::Permission => {
                deny(shape, reason, out);
                let _ = writeln!(err, "{reason}");
                2
            }
            Answer::PermissionDecision | Answer::HookSpecific => {
                deny(shape, reason, out);
                0
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn run(shape: Answer, r: &Response) -> (u8, String, String) {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = emit(shape, r, &mut out, &mut err);
        (
            code,
            String::from_utf8(out).unwrap(),
            String::from_utf8(err).unwrap(),
        )
    }

    #[test]
    fn each_shape_refuses_in_its_own_fields_and_never_allows() {
        let deny = Response::Deny("no".into());
        let (code, out, _) = run(Answer::Decision, &deny);
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(
            (code, &v["decision"], &v["reason"]),
            (0, &"deny".into(), &"no".into())
        );
        let (code, out, _) = run(Answer::Permission, &deny);
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(code, 0);
        assert_eq!(v["permission"], "deny");
        assert_eq!(v["user_message"], "no");
        assert_eq!(v["agent_message"], "no");
        let (code, out, _) = run(Answer::PermissionDecision, &deny);
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(code, 0);
        assert_eq!(v["permissionDecision"], "deny");
        assert_eq!(v["permissionDecisionReason"], "no");
        for shape in [
            Answer::Decision,
            Answer::Permission,
            Answer::PermissionDecision,
        ] {
            let none = if shape == Answer::Permission {
                "{}"
            } else {
                ""
            };
            for r in [Response::Silent, Response::Nudge("hint".into())] {
                assert_eq!(run(shape, &r), (0, none.into(), String::new()), "{shape:?}");
            }
            for r in [deny.clone(), Response::Block("stop".into())] {
                assert!(!run(shape, &r).1.contains("allow"), "{shape:?}");
            }
        }
    }

    #[test]
    fn a_block_is_exit_2_only_where_the_host_refuses_on_exit_2() {
        let block = Response::Block("stop".into());
        assert_eq!(
            run(Answer::Decision, &block),
            (2, String::new(), "stop\n".into())
        );
        let (code, out, err) = run(Answer::Permission, &block);
        assert_eq!((code, err.as_str()), (2, "stop\n"));
        assert!(out.contains(r#""permission":"deny""#));
        // Copilot CLI skips a hook that exits non-zero: a block must be a deny, exit 0.
        let (code, out, _) = run(Answer::PermissionDecision, &block);
        assert_eq!(code, 0);
        assert!(out.contains(r#""permissionDecision":"deny""#));
    }
}
