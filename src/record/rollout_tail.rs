//! Codex exit codes for the hook: find one call's outcome in the rollout file, reading from
//! the end.
//!
//! Codex's `PostToolUse` payload carries no exit code and no status, for successes and
//! failures alike. By the time the hook runs, the rollout at `transcript_path` already holds
//! the call's `item_completed` `CommandExecution` record (`exit_code`, `status`; measured on
//! Codex 0.169, codex-e2e.md §3/§5). The record is among the last lines written, so the file
//! is read backwards in blocks and only lines mentioning the call id are parsed. The scan
//! stops at the call's own `function_call` record (nothing about it can come earlier) or
//! after [`SCAN_CAP`] bytes. Older rollouts are understood too: an `exec_command_end` event,
//! or a `function_call_output` whose text or JSON metadata states the exit code.

use std::borrow::Cow;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::classify::stated_exit_code;

/// How far back from the end of the rollout the hook looks.
pub(crate) const SCAN_CAP: u64 = 8 * 1024 * 1024;
/// The first block read: the record is usually among the last few lines, so a hook reads
/// little; each further block doubles, up to [`BLOCK_MAX`].
const BLOCK_FIRST: u64 = 8 * 1024;
const BLOCK_MAX: u64 = 64 * 1024;

/// What the rollout says about one call.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Found {
    /// The process exit code.
    pub(crate) exit_code: Option<i64>,
    /// `completed` / `failed` from an `item_completed` record.
    pub(crate) status: Option<String>,
    /// Wall time, from the record's `duration` or start/end stamps.
    pub(crate) duration_ms: Option<i64>,
}

/// Look `call_id` up in the rollout at `path`; `None` when nothing about it was found.
#[must_use]
pub(crate) fn find(path: &Path, call_id: &str) -> Option<Found> {
    // A FIFO or a device where the rollout was must not block the recorder hook.
    let mut file = crate::untrusted::open_regular(path).ok()?;
    let len = file.metadata().ok()?.len();
    let floor = len.saturating_sub(SCAN_CAP);
    let mut end = len;
    // Bytes after the last newline seen so far (a line split across blocks).
    let mut carry: Vec<u8> = Vec::new();
    let mut fallback = None;
    let mut size = BLOCK_FIRST;
    let mut block: Vec<u8> = Vec::new();
    while end > floor {
        let start = end.saturating_sub(size).max(floor);
        size = (size * 2).min(BLOCK_MAX);
        block.clear();
        file.seek(SeekFrom::Start(start)).ok()?;
        (&mut file)
            .take(end - start)
            .read_to_end(&mut block)
            .ok()
            .filter(|&n| n as u64 == end - start)?;
        block.extend_from_slice(&carry);
        // The first (partial) line stays for the next block unless this is the floor.
        let first_nl = if start > floor {
            block.iter().position(|&b| b == b'\n')
        } else {
            None
        };
        let (head, body) = match first_nl {
            Some(i) => block.split_at(i + 1),
            None if start > floor => (&block[..], &[][..]),
            None => (&[][..], &block[..]),
        };
        // Borrowed unless the block holds bytes that are not UTF-8 (no record does); the
        // strict check first, as it is several times faster than the lossy walk.
        let text =
            std::str::from_utf8(body).map_or_else(|_| String::from_utf8_lossy(body), Cow::Borrowed);
        for line in lines_naming(&text, call_id) {
            match inspect(line, call_id) {
                Verdict::Found(f) => return Some(f),
                // The output record (already written when the whole call is over, e.g.
                // in tests or a late hook): keep looking for the richer item record.
                Verdict::Output(f) => fallback = fallback.or(Some(f)),
                Verdict::CallStart => return fallback,
                Verdict::Nothing => {}
            }
        }
        carry = head.to_vec();
        end = start;
    }
    fallback
}

enum Verdict {
    Found(Found),
    /// A `function_call_output` stating the exit code.
    Output(Found),
    /// The call's own `function_call`: nothing about it is older.
    CallStart,
    Nothing,
}

/// The lines of `text` that contain `call_id`, last first: one substring search over the
/// block instead of a walk over every line.
fn lines_naming<'t>(text: &'t str, call_id: &'t str) -> impl Iterator<Item = &'t str> {
    let mut seen_from = text.len();
    text.rmatch_indices(call_id).filter_map(move |(at, _)| {
        if at >= seen_from {
            return None; // another mention on a line already yielded
        }
        let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
        let end = text[at..].find('\n').map_or(text.len(), |i| at + i);
        seen_from = start;
        Some(&text[start..end])
    })
}

/// The fields of a rollout record, or of its `payload`, that [`inspect`] reads. Only these
/// are built; the rest of the line (outputs, instructions) is skipped unallocated.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Record<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow)]
    payload: Option<&'a RawValue>,
    #[serde(borrow)]
    call_id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    item: Option<Item<'a>>,
    exit_code: Option<Value>,
    duration: Option<Value>,
    output: Option<Value>,
    started_at_ms: Option<Value>,
    completed_at_ms: Option<Value>,
}

/// The `item` of an `item_completed` record.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Item<'a> {
    #[serde(borrow)]
    id: Option<Cow<'a, str>>,
    exit_code: Option<Value>,
    status: Option<Value>,
    duration: Option<Value>,
}

fn inspect(text: &str, call_id: &str) -> Verdict {
    let Ok(top) = serde_json::from_str::<Record>(text) else {
        return Verdict::Nothing;
    };
    let nested;
    let payload = match top.payload {
        Some(raw) => match serde_json::from_str::<Record>(raw.get()) {
            Ok(p) => {
                nested = p;
                &nested
            }
            Err(_) => return Verdict::Nothing,
        },
        None => &top,
    };
    let int = |v: &Option<Value>| v.as_ref().and_then(Value::as_i64);
    let own = payload.call_id.as_deref() == Some(call_id);
    match payload.kind.as_ref() {
        "item_completed" => {
            let Some(item) = &payload.item else {
                return Verdict::Nothing;
            };
            if item.id.as_deref() != Some(call_id) {
                return Verdict::Nothing;
            }
            let started = int(&payload.started_at_ms);
            let completed = int(&payload.completed_at_ms);
            Verdict::Found(Found {
                exit_code: int(&item.exit_code),
                status: item
                    .status
                    .as_ref()
                    .and_then(Value::as_str)
                    .map(str::to_string),
                duration_ms: item
                    .duration
                    .as_ref()
                    .and_then(duration_ms)
                    .or_else(|| started.zip(completed).map(|(s, c)| c - s)),
            })
        }
        "exec_command_end" if own => Verdict::Found(Found {
            exit_code: int(&payload.exit_code),
            status: None,
            duration_ms: payload.duration.as_ref().and_then(duration_ms),
        }),
        "function_call_output" | "custom_tool_call_output" if own => {
            let output = payload.output.as_ref().map(output_exit).unwrap_or_default();
            if output.exit_code.is_some() {
                Verdict::Output(output)
            } else {
                Verdict::Nothing
            }
        }
        "function_call" | "custom_tool_call" | "local_shell_call" if own => Verdict::CallStart,
        _ => Verdict::Nothing,
    }
}

/// A Codex `duration`: `{"secs": s, "nanos": n}`, or a number of seconds.
#[must_use]
pub(crate) fn duration_ms(v: &Value) -> Option<i64> {
    match v {
        Value::Object(m) => {
            let secs = m.get("secs").and_then(Value::as_i64)?;
            let nanos = m.get("nanos").and_then(Value::as_i64).unwrap_or(0);
            Some(secs * 1000 + nanos / 1_000_000)
        }
        Value::Number(n) => n.as_f64().map(|s| (s * 1000.0).round() as i64),
        _ => None,
    }
}

/// The exit code and duration a `function_call_output` states: 0.40-era JSON
/// `{"output", "metadata": {"exit_code", "duration_seconds"}}`, else the text's own
/// `Process exited with code N` / `Exit code: N`.
#[must_use]
pub(crate) fn output_exit(output: &Value) -> Found {
    let text = match output {
        Value::String(s) => s.as_str(),
        Value::Object(_) => return envelope_exit(output).unwrap_or_default(),
        _ => return Found::default(),
    };
    if text.starts_with('{')
        && let Ok(v) = serde_json::from_str::<Value>(text)
        && let Some(found) = envelope_exit(&v)
    {
        return found;
    }
    Found {
        exit_code: stated_exit_code(text),
        ..Found::default()
    }
}

fn envelope_exit(v: &Value) -> Option<Found> {
    let meta = v.get("metadata")?;
    Some(Found {
        exit_code: meta.get("exit_code").and_then(Value::as_i64),
        status: None,
        duration_ms: meta.get("duration_seconds").and_then(duration_ms),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write as _;

    fn rollout(lines: &[String]) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        for l in lines {
            writeln!(f, "{l}").unwrap();
        }
        f
    }

    fn item_completed(id: &str, code: i64, status: &str) -> String {
        format!(
            r#"{{"timestamp":"2026-11-29T21:19:17.292Z","type":"event_msg","payload":{{"type":"item_completed","item":{{"type":"CommandExecution","id":"{id}","exit_code":{code},"status":"{status}","duration":{{"secs":1,"nanos":500000000}}}},"started_at_ms":1,"completed_at_ms":2}}}}"#
        )
    }

    fn function_call(id: &str) -> String {
        format!(
            r#"{{"type":"response_item","payload":{{"type":"function_call","name":"exec_command","arguments":"{{}}","call_id":"{id}"}}}}"#
        )
    }

    #[test]
    fn finds_the_item_completed_record() {
        let filler = format!(
            r#"{{"type":"event_msg","payload":{{"type":"token_count","pad":"{}"}}}}"#,
            "x".repeat(100_000)
        );
        let f = rollout(&[
            function_call("call_1"),
            item_completed("call_1", 3, "failed"),
            filler.clone(),
            function_call("call_2"),
            filler,
            item_completed("call_2", 0, "completed"),
        ]);
        let one = find(f.path(), "call_1").unwrap();
        assert_eq!(one.exit_code, Some(3));
        assert_eq!(one.status.as_deref(), Some("failed"));
        assert_eq!(one.duration_ms, Some(1500));
        assert_eq!(find(f.path(), "call_2").unwrap().exit_code, Some(0));
        assert_eq!(find(f.path(), "call_9"), None);
    }

    #[test]
    fn each_line_naming_the_call_once_last_first() {
        let text = "a call_1 x call_1\nb\nc call_1\nd";
        let lines: Vec<_> = lines_naming(text, "call_1").collect();
        assert_eq!(lines, ["c call_1", "a call_1 x call_1"]);
    }

    #[test]
    fn bytes_that_are_not_utf8_do_not_hide_the_record() {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        writeln!(f, "{}", item_completed("call_1", 3, "failed")).unwrap();
        f.write_all(b"\xff\xfe call_1 garbage\n").unwrap();
        assert_eq!(find(f.path(), "call_1").unwrap().exit_code, Some(3));
    }

    #[test]
    fn stops_at_the_call_start() {
        // An unrelated older record naming the same id is not reached past the call start.
        let f = rollout(&[
            item_completed("call_1", 7, "failed"),
            function_call("call_1"),
        ]);
        assert_eq!(find(f.path(), "call_1"), None);
    }

    #[test]
    fn older_generations() {
        let f = rollout(&[
            r#"{"type":"response_item","payload":{"type":"function_call_output","call_id":"c0","output":"{\"output\":\"x\",\"metadata\":{\"exit_code\":2,\"duration_seconds\":0.25}}"}}"#.to_string(),
            r#"{"type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"Chunk ID: 1\nWall time: 0.1 seconds\nProcess exited with code 4\nOutput:\n"}}"#.to_string(),
            r#"{"type":"event_msg","payload":{"type":"exec_command_end","call_id":"c2","exit_code":5,"duration":{"secs":0,"nanos":0}}}"#.to_string(),
        ]);
        let c0 = find(f.path(), "c0").unwrap();
        assert_eq!((c0.exit_code, c0.duration_ms), (Some(2), Some(250)));
        assert_eq!(find(f.path(), "c1").unwrap().exit_code, Some(4));
        assert_eq!(find(f.path(), "c2").unwrap().exit_code, Some(5));
    }

    #[test]
    fn the_real_rollout_fixture() {
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/record/codex-rollout.jsonl");
        let failed = find(&path, "call_e2e_005").unwrap();
        assert_eq!(failed.exit_code, Some(2));
        assert_eq!(failed.status.as_deref(), Some("failed"));
        assert_eq!(find(&path, "call_e2e_000").unwrap().exit_code, Some(0));
        // A call the hook denied has no CommandExecution record.
        assert_eq!(find(&path, "call_e2e_001"), None);
    }
}
