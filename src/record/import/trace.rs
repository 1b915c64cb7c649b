//! callusguard JSONL traces: one tool call per line, `ts, tool_name,
//! tool_input, status, error`.
//!
//! Read as callusguard reads them — `tool_name`, else `tool`, else `Bash`; the command from
//! `tool_input.command` or a top-level `command`; failed iff `status` says `failure`, else
//! iff `is_error`, else iff `error` is non-blank — with callus's refinements: a failure whose
//! text is a refusal is `denied`, an interruption is `interrupted`, and other statuses
//! (`pending`, `denied`, `interrupted`) are kept. The row id is the line's `tool_use_id`
//! when it has one (so a trace of hook payloads merges with live rows), else
//! `trace-<time>-<sha256 of the line's bytes, 16 hex>-<n>` with `n` counting identical
//! lines: stable across re-imports and appends. A line that names no tool and carries no
//! command or input (a `SessionStart` or `Stop` hook event) is not a call: it is counted, not
//! stored.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::path::Path;

use crate::digest::{Digest as _, Sha256};

use serde_json::{Map, Value, json};

use super::{Sink, timestamp_ms};
use crate::Result;
use crate::digest::hex;
use crate::record::classify::{self, Status};
use crate::record::rows::{Call, Session, value_text};
use crate::record::signature::leading_exit_code;

/// Import one trace file.
pub(crate) fn import(path: &Path, sink: &mut Sink<'_>) -> Result<()> {
    let mut seen = Seen::default();
    let mut sessions: HashMap<String, Session> = HashMap::new();
    sink.lines(path, |sink, raw, obj| {
        if !is_call(&obj) {
            sink.not_a_call();
            return Ok(());
        }
        let call = call(raw, &obj, &mut seen);
        if let Some(sid) = &call.session_id {
            let s = sessions.entry(sid.clone()).or_insert_with(|| Session {
                id: sid.clone(),
                host: call.host,
                cwd: call.cwd.clone(),
                ..Session::default()
            });
            s.saw(call.started_ms.or(call.ended_ms));
        }
        sink.call(&call)
    })?;
    for s in sessions.values() {
        sink.session(s)?;
    }
    Ok(())
}

/// Whether a line describes a tool call at all: it names a tool, or carries a command or
/// an input. A hook event without a tool (`SessionStart`, `Stop`, `Notification`) does not:
/// read as callusguard reads a line, it would become a successful `Bash` call with no
/// command and, often, no time.
fn is_call(obj: &Map<String, Value>) -> bool {
    let named = |k: &str| {
        obj.get(k)
            .and_then(Value::as_str)
            .is_some_and(|s| !s.trim().is_empty())
    };
    named("tool_name")
        || named("tool")
        || named("command")
        || obj.get("tool_input").is_some_and(Value::is_object)
}

fn call(raw: &[u8], obj: &Map<String, Value>, seen: &mut Seen) -> Call {
    let text = |k: &str| {
        obj.get(k)
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
    };
    let tool = text("tool_name").or_else(|| text("tool")).unwrap_or("Bash");
    let input = match obj.get("tool_input") {
        Some(v @ Value::Object(_)) => v.clone(),
        _ => match text("command") {
            Some(c) => json!({ "command": c }),
            None => Value::Null,
        },
    };
    let ts = timestamp_ms(obj.get("ts").or_else(|| obj.get("timestamp")));
    let id = text("tool_use_id").map_or_else(|| synthetic_id(raw, ts, seen), str::to_string);
    let host = match text("host").and_then(crate::host::wire::Host::from_slug) {
        Some(h) => h.slug(),
        None => "trace",
    };
    let mut call = Call::new(id, host, "trace", tool, input);
    call.session_id = text("session_id").map(str::to_string);
    call.cwd = text("cwd").map(str::to_string);
    call.agent_id = text("agent_id").map(str::to_string);
    call.started_ms = ts;
    call.duration_ms = obj.get("duration_ms").and_then(Value::as_i64);
    call.ended_ms = ts.zip(call.duration_ms).map(|(t, d)| t + d);
    let error = obj
        .get("error")
        .filter(|v| !v.is_null())
        .or_else(|| obj.get("tool_response"))
        .map(|v| value_text(v).into_owned())
        .filter(|e| !e.trim().is_empty());
    let stated = text("status").map(|s| (s, Status::parse(s)));
    let is_error = obj.get("is_error").and_then(Value::as_bool) == Some(true);
    let failed = match stated {
        Some((_, Some(Status::Failure))) => true,
        Some((_, Some(other))) => {
            call.status = other;
            false
        }
        // An unknown status word is not a failure (callusguard: failed iff "failure").
        Some((_, None)) => false,
        None => {
            is_error
                || obj
                    .get("error")
                    .is_some_and(|e| !value_text(e).trim().is_empty())
        }
    };
    if failed {
        let err = error.clone().unwrap_or_default();
        call.status = classify::failed(false, &err);
    } else if call.status == Status::Pending && stated.is_none_or(|(_, s)| s.is_none()) {
        call.status = Status::Success;
    }
    call.exit_code = obj
        .get("exit_code")
        .and_then(Value::as_i64)
        .or_else(|| error.as_deref().and_then(leading_exit_code));
    call.error = error;
    call
}

/// `trace-<time>-<line digest>-<n>`: the line's time first, so a trace's ids arrive in
/// key order (cheap index inserts); `n` counts identical lines.
fn synthetic_id(raw: &[u8], ts: Option<i64>, seen: &mut Seen) -> String {
    let digest: [u8; 32] = Sha256::digest(raw.trim_ascii()).into();
    let n = seen.entry(digest).or_insert(0);
    *n += 1;
    let short = hex(&digest[..8]);
    match ts {
        Some(ts) => format!("trace-{ts:013}-{short}-{n}"),
        None => format!("trace-{short}-{n}"),
    }
}

/// Occurrences of each line content in a file, keyed by the line's SHA-256.
type Seen = HashMap<[u8; 32], u32, BuildHasherDefault<DigestHasher>>;

/// A SHA-256 digest is already uniformly distributed: hash it by its first 8 bytes.
#[derive(Default)]
struct DigestHasher(u64);

impl Hasher for DigestHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut word = [0u8; 8];
        let n = bytes.len().min(8);
        word[..n].copy_from_slice(&bytes[..n]);
        self.0 = self.0.rotate_left(17) ^ u64::from_le_bytes(word);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> Call {
        let obj = serde_json::from_str::<Value>(line).unwrap();
        call(
            line.as_bytes(),
            obj.as_object().unwrap(),
            &mut Seen::default(),
        )
    }

    #[test]
    fn callusguard_failure_rules() {
        let c = parse(
            r#"{"ts":"2026-01-01T00:00:00Z","tool_name":"Bash","tool_input":{"command":"psql -h x"},"status":"failure","error":"FATAL: database \"kai\" does not exist"}"#,
        );
        assert_eq!(c.status, Status::Failure);
        assert_eq!(c.started_ms, Some(1_767_225_600_000));
        let c = parse(r#"{"command":"ls","error":"boom"}"#);
        assert_eq!((c.status, c.tool.as_str()), (Status::Failure, "Bash"));
        let c = parse(r#"{"tool":"Read","is_error":true,"tool_response":{"e":1}}"#);
        assert_eq!(c.status, Status::Failure);
        let c =
            parse(r#"{"tool_name":"Bash","command":"ls","status":"success","error":"ignored"}"#);
        assert_eq!(c.status, Status::Success);
        let c = parse(r#"{"tool_name":"Bash","command":"ls","status":"weird"}"#);
        assert_eq!(c.status, Status::Success);
    }

    #[test]
    fn refusals_and_kept_statuses() {
        let c = parse(
            r#"{"tool_name":"Bash","command":"rm -rf /","status":"failure","error":"This command requires approval"}"#,
        );
        assert_eq!(c.status, Status::Denied);
        let c = parse(r#"{"tool_name":"Bash","command":"x","status":"pending"}"#);
        assert_eq!(c.status, Status::Pending);
        let c = parse(
            r#"{"tool_name":"Bash","command":"x","status":"failure","error":"Exit code 3\nno"}"#,
        );
        assert_eq!(c.exit_code, Some(3));
    }

    #[test]
    fn ids_are_stable_and_distinguish_repeats() {
        let mut seen = Seen::default();
        let line = r#"{"tool_name":"Bash","command":"ls"}"#;
        let obj = serde_json::from_str::<Value>(line).unwrap();
        let obj = obj.as_object().unwrap();
        let a = call(line.as_bytes(), obj, &mut seen).tool_use_id;
        let b = call(line.as_bytes(), obj, &mut seen).tool_use_id;
        assert_ne!(a, b);
        let again = call(line.as_bytes(), obj, &mut Seen::default()).tool_use_id;
        assert_eq!(a, again);
        let with_id = parse(r#"{"tool_name":"Bash","command":"ls","tool_use_id":"toolu_1"}"#);
        assert_eq!(with_id.tool_use_id, "toolu_1");
    }
}
