//! The hooks document of one host (`settings.json` or `hooks.json`): read it, merge our hooks
//! in, take them out, and write it back.
//!
//! Guarantees: a file that does not parse, or whose `hooks` is not the expected shape, is
//! reported with file and line and never written. Only handlers recognised as ours
//! ([`super::spec::parse_ours`]) are changed or removed; every other key, group and handler
//! keeps its place and value. Our hooks are updated in place when present (so Codex's
//! positional trust keys do not move) and appended as one group each when absent. Writes go
//! through a temporary file and a rename, keeping the file's permissions. The JSON is written
//! with the indentation the file already used.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::spec::{HandlerOptions, HookSpec, Role, parse_ours};
use crate::{Error, Result};

/// A hooks document as read from disk.
#[derive(Debug, Clone)]
pub(crate) struct Doc {
    /// The file.
    pub path: PathBuf,
    /// Whether the file existed.
    pub existed: bool,
    /// Its exact text (empty when absent).
    pub text: String,
    /// The parsed document (`{}` for an absent or blank file).
    pub value: Value,
}

impl Doc {
    /// Read and parse `path`. An absent or blank file is an empty document.
    pub(crate) fn load(path: &Path) -> Result<Self> {
        let (existed, text) = match std::fs::read_to_string(path) {
            Ok(t) => (true, t),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => (false, String::new()),
            Err(e) => return Err(Error::io(path, e)),
        };
        let value = parse(path, &text)?;
        Ok(Doc {
            path: path.to_path_buf(),
            existed,
            text,
            value,
        })
    }

    /// The text for `value`, formatted like this document (indentation, final newline).
    #[must_use]
    pub(crate) fn render(&self, value: &Value) -> String {
        render(value, &self.text)
    }
}

/// Parse a hooks document, checking the shape we rely on.
pub(crate) fn parse(path: &Path, text: &str) -> Result<Value> {
    if text.trim().is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    let value: Value = serde_json::from_str(text)
        .map_err(|e| Error::json(format!("{}:{}:{}", path.display(), e.line(), e.column()), e))?;
    let shape = |msg: &str| Error::Invalid(format!("{}: {msg}; left untouched", path.display()));
    let Some(root) = value.as_object() else {
        return Err(shape("the top level is not a JSON object"));
    };
    if let Some(hooks) = root.get("hooks") {
        let Some(events) = hooks.as_object() else {
            return Err(shape("\"hooks\" is not an object"));
        };
        for (event, groups) in events {
            let Some(groups) = groups.as_array() else {
                return Err(shape(&format!("\"hooks.{event}\" is not an array")));
            };
            for (i, group) in groups.iter().enumerate() {
                let handlers = group.get("hooks");
                if !group.is_object() || handlers.is_some_and(|h| !h.is_array()) {
                    return Err(shape(&format!(
                        "\"hooks.{event}[{i}]\" is not a matcher group with a \"hooks\" array"
                    )));
                }
            }
        }
    }
    Ok(value)
}

/// One of our handlers found in a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Found {
    /// The event it is under.
    pub event: String,
    /// Its group's index in the event's array.
    pub group: usize,
    /// Its index in the group's `hooks`.
    pub handler: usize,
    /// The group's matcher.
    pub matcher: Option<String>,
    /// `guard` or `record`.
    pub role: Role,
    /// The binary it calls.
    pub binary: PathBuf,
    /// Its `async` flag.
    pub is_async: bool,
    /// The full command line.
    pub command: String,
    /// Its `timeout` in the host's units (`host::HookTimeout`), when it has a numeric one.
    pub timeout: Option<u64>,
    /// Its `onFailure`, when it has one.
    pub on_failure: Option<String>,
}

/// Every handler of ours in `value`, in document order.
#[must_use]
pub(crate) fn find_ours(value: &Value) -> Vec<Found> {
    let mut out = Vec::new();
    let Some(events) = value.get("hooks").and_then(Value::as_object) else {
        return out;
    };
    for (event, groups) in events {
        for (gi, group) in groups.as_array().into_iter().flatten().enumerate() {
            let matcher = group
                .get("matcher")
                .and_then(Value::as_str)
                .map(str::to_string);
            for (hi, h) in handlers(group).iter().enumerate() {
                let Some(command) = h.get("command").and_then(Value::as_str) else {
                    continue;
                };
                if let Some((role, binary)) = parse_ours(command) {
                    out.push(Found {
                        event: event.clone(),
                        group: gi,
                        handler: hi,
                        matcher: matcher.clone(),
                        role,
                        binary,
                        is_async: h.get("async").and_then(Value::as_bool).unwrap_or(false),
                        command: command.to_string(),
                        timeout: h.get("timeout").and_then(Value::as_u64),
                        on_failure: h
                            .get("onFailure")
                            .and_then(Value::as_str)
                            .map(str::to_string),
                    });
                }
            }
        }
    }
    out
}

fn handlers(group: &Value) -> &[Value] {
    group
        .get("hooks")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn is_ours(handler: &Value) -> bool {
    handler
        .get("command")
        .and_then(Value::as_str)
        .is_some_and(|c| parse_ours(c).is_some())
}

fn ours_with_role(handler: &Value, role: Role) -> bool {
    handler
        .get("command")
        .and_then(Value::as_str)
        .and_then(parse_ours)
        .is_some_and(|(r, _)| r == role)
}

/// `value` with our hooks as `specs` describes them, calling `binary`. Returns the new
/// document; equal to `value` when everything was already in place.
///
/// # Panics
/// Never: the groups it indexes were checked to be objects by [`parse`].
#[must_use]
// the settings merge policy as one list of cases, each commented
#[allow(clippy::too_many_lines)]
pub(crate) fn merge(
    value: &Value,
    specs: &[HookSpec],
    binary: &Path,
    opts: HandlerOptions,
) -> Value {
    let mut out = value.clone();
    let Some(root) = out.as_object_mut() else {
        return out;
    };
    let Some(events) = root
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
    else {
        return out;
    };
    // 1. Each spec keeps the first group holding nothing but our handler of its role, and
    //    that handler is brought up to date in place (Codex's trust keys are positional).
    let mut kept: Vec<(String, usize)> = Vec::new();
    for spec in specs {
        let Some(arr) = events.get_mut(spec.event).and_then(Value::as_array_mut) else {
            continue;
        };
        let home = arr.iter().enumerate().position(|(gi, g)| {
            let hs = handlers(g);
            hs.len() == 1
                && ours_with_role(&hs[0], spec.role)
                && !kept.iter().any(|(e, k)| e == spec.event && *k == gi)
        });
        let Some(gi) = home else { continue };
        let group = arr[gi]
            .as_object_mut()
            .expect("parse checked groups are objects");
        match spec.matcher {
            Some(m) if group.get("matcher").and_then(Value::as_str) != Some(m) => {
                group.insert("matcher".into(), Value::from(m));
            }
            Some(_) => {}
            None => {
                group.remove("matcher");
            }
        }
        if let Some(handler) = group
            .get_mut("hooks")
            .and_then(|h| h.get_mut(0))
            .and_then(Value::as_object_mut)
        {
            set_handler(
                handler,
                spec,
                &super::spec::command_line(binary, spec.role),
                opts,
            );
        }
        kept.push((spec.event.to_string(), gi));
    }
    // 2. Every other handler of ours goes: duplicates, copies inside foreign groups, roles
    //    or events we no longer install.
    let mut emptied = Vec::new();
    for (event, groups) in events.iter_mut() {
        let Some(arr) = groups.as_array_mut() else {
            continue;
        };
        let mut removed = 0;
        let mut gi = 0;
        arr.retain_mut(|group| {
            let keep_group = kept.iter().any(|(e, k)| e == event && *k == gi);
            gi += 1;
            if keep_group {
                return true;
            }
            let Some(hs) = group.get_mut("hooks").and_then(Value::as_array_mut) else {
                return true;
            };
            let before = hs.len();
            hs.retain(|h| !is_ours(h));
            removed += before - hs.len();
            !(before > hs.len() && hs.is_empty())
        });
        if removed > 0 && arr.is_empty() {
            emptied.push(event.clone());
        }
    }
    for e in &emptied {
        events.remove(e);
    }
    // 3. Specs with nothing kept get a group of their own, appended.
    for spec in specs {
        if has_role(events, spec) {
            continue;
        }
        let mut handler = Map::new();
        set_handler(
            &mut handler,
            spec,
            &super::spec::command_line(binary, spec.role),
            opts,
        );
        let mut group = Map::new();
        if let Some(m) = spec.matcher {
            group.insert("matcher".into(), Value::from(m));
        }
        group.insert("hooks".into(), Value::Array(vec![Value::Object(handler)]));
        if let Some(arr) = events
            .entry(spec.event)
            .or_insert_with(|| Value::Array(Vec::new()))
            .as_array_mut()
        {
            arr.push(Value::Object(group));
        }
    }
    out
}

fn has_role(events: &Map<String, Value>, spec: &HookSpec) -> bool {
    events
        .get(spec.event)
        .and_then(Value::as_array)
        .is_some_and(|arr| {
            arr.iter()
                .any(|g| handlers(g).iter().any(|h| ours_with_role(h, spec.role)))
        })
}

/// Bring one handler of ours up to date: type, command, `async`, a `timeout` in the host's
/// units (kept when the user set a shorter one), and the guard's `onFailure` as `opts` says.
fn set_handler(
    handler: &mut Map<String, Value>,
    spec: &HookSpec,
    command: &str,
    opts: HandlerOptions,
) {
    if handler.get("type").and_then(Value::as_str) != Some("command") {
        handler.insert("type".into(), Value::from("command"));
    }
    if handler.get("command").and_then(Value::as_str) != Some(command) {
        handler.insert("command".into(), Value::from(command));
    }
    if spec.is_async {
        if handler.get("async") != Some(&Value::Bool(true)) {
            handler.insert("async".into(), Value::Bool(true));
        }
    } else {
        handler.remove("async");
    }
    let ours = spec.role.timeout() * opts.timeout_per_second.max(1);
    if handler
        .get("timeout")
        .and_then(Value::as_u64)
        .is_none_or(|t| t == 0 || t > ours)
    {
        handler.insert("timeout".into(), Value::from(ours));
    }
    if spec.role == Role::Guard {
        if opts.block_on_failure {
            if handler.get("onFailure").and_then(Value::as_str) != Some("block") {
                handler.insert("onFailure".into(), Value::from("block"));
            }
        } else if handler.get("onFailure").and_then(Value::as_str) == Some("block") {
            handler.shift_remove("onFailure");
        }
    }
}

/// Remove the handlers `pred` picks from an event's groups; a group emptied by the removal
/// goes too (groups that were already empty stay).
fn remove_handlers(groups: &mut Value, mut pred: impl FnMut(&Value) -> bool) -> usize {
    let Some(arr) = groups.as_array_mut() else {
        return 0;
    };
    let mut removed = 0;
    arr.retain_mut(|group| {
        let Some(hs) = group.get_mut("hooks").and_then(Value::as_array_mut) else {
            return true;
        };
        let before = hs.len();
        hs.retain(|h| !pred(h));
        let gone = before - hs.len();
        removed += gone;
        !(gone > 0 && hs.is_empty())
    });
    removed
}

/// `value` without any handler of ours; events and `hooks` emptied by that go too.
#[must_use]
pub(crate) fn strip(value: &Value) -> (Value, usize) {
    let mut out = value.clone();
    let mut removed = 0;
    let Some(root) = out.as_object_mut() else {
        return (out, 0);
    };
    let mut hooks_emptied = false;
    if let Some(events) = root.get_mut("hooks").and_then(Value::as_object_mut) {
        let mut emptied = Vec::new();
        for (event, groups) in events.iter_mut() {
            let n = remove_handlers(groups, is_ours);
            removed += n;
            if n > 0 && groups.as_array().is_some_and(Vec::is_empty) {
                emptied.push(event.clone());
            }
        }
        for e in &emptied {
            events.remove(e);
        }
        hooks_emptied = !emptied.is_empty() && events.is_empty();
    }
    if hooks_emptied {
        root.remove("hooks");
    }
    (out, removed)
}

/// Serialize `value` the way `original` was written: same indent unit, final newline kept.
///
/// # Panics
/// Never: a `serde_json::Value` always serializes, as UTF-8.
#[must_use]
pub(crate) fn render(value: &Value, original: &str) -> String {
    let indent = detect_indent(original);
    let mut buf = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(indent.as_bytes());
    let mut ser = serde_json::Serializer::with_formatter(&mut buf, fmt);
    serde::Serialize::serialize(value, &mut ser).expect("a JSON value always serializes");
    let mut text = String::from_utf8(buf).expect("serde_json writes UTF-8");
    if original.trim().is_empty() || original.ends_with('\n') {
        text.push('\n');
    }
    text
}

fn detect_indent(text: &str) -> String {
    text.lines()
        .skip(1)
        .find_map(|l| {
            let n = l.len() - l.trim_start_matches([' ', '\t']).len();
            (n > 0 && !l.trim().is_empty()).then(|| l[..n].to_string())
        })
        .unwrap_or_else(|| "  ".to_string())
}

/// Write `text` to `path` atomically (temp file + rename), keeping an existing file's mode.
pub(crate) fn write_atomic(path: &Path, text: &str) -> Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or_else(|| Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".callus-")
        .tempfile_in(dir)
        .map_err(|e| Error::io(dir, e))?;
    std::io::Write::write_all(&mut tmp, text.as_bytes()).map_err(|e| Error::io(tmp.path(), e))?;
    if let Ok(meta) = std::fs::metadata(path) {
        let _ = std::fs::set_permissions(tmp.path(), meta.permissions());
    } else {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o644));
        }
    }
    tmp.persist(path).map_err(|e| Error::io(path, e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::Host;
    use serde_json::json;

    fn bin() -> PathBuf {
        PathBuf::from("/opt/callus/bin/callus")
    }

    #[test]
    fn merge_keeps_foreign_hooks_and_is_idempotent() {
        let doc = json!({
            "model": "x",
            "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "mine"}]}]}
        });
        let merged = merge(
            &doc,
            Host::ClaudeCode.specs(),
            &bin(),
            HandlerOptions::default(),
        );
        assert_eq!(merged["model"], "x");
        let pre = merged["hooks"]["PreToolUse"].as_array().unwrap();
        assert_eq!(pre.len(), 2);
        assert_eq!(pre[0]["hooks"][0]["command"], "mine");
        assert_eq!(
            pre[1]["hooks"][0]["command"],
            "/opt/callus/bin/callus guard"
        );
        assert_eq!(merged["hooks"]["PostToolUse"][0]["hooks"][0]["async"], true);
        assert_eq!(find_ours(&merged).len(), Host::ClaudeCode.specs().len());
        assert_eq!(
            merge(
                &merged,
                Host::ClaudeCode.specs(),
                &bin(),
                HandlerOptions::default()
            ),
            merged
        );
        let (stripped, n) = strip(&merged);
        assert_eq!(n, Host::ClaudeCode.specs().len());
        assert_eq!(stripped, doc);
    }

    #[test]
    fn stale_paths_are_updated_in_place() {
        let doc = json!({"hooks": {"PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "/old/callus guard", "timeout": 9}]},
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "other"}]}
        ]}});
        let merged = merge(&doc, Host::Codex.specs(), &bin(), HandlerOptions::default());
        let pre = merged["hooks"]["PreToolUse"].as_array().unwrap();
        assert_eq!(pre.len(), 2, "updated in place, not appended");
        assert_eq!(pre[0]["matcher"], crate::host::CODEX_GUARD_MATCHER);
        assert_eq!(
            pre[0]["hooks"][0]["command"],
            "/opt/callus/bin/callus guard"
        );
        assert_eq!(
            pre[0]["hooks"][0]["timeout"], 9,
            "the user's extra keys stay"
        );
        assert_eq!(pre[1]["hooks"][0]["command"], "other");
    }

    #[test]
    fn render_keeps_indent_and_newline() {
        let v = json!({"a": {"b": 1}});
        assert_eq!(
            render(&v, "{\n    \"x\": 1\n}\n"),
            "{\n    \"a\": {\n        \"b\": 1\n    }\n}\n"
        );
        assert_eq!(
            render(&v, "{\"x\":1}"),
            "{\n  \"a\": {\n    \"b\": 1\n  }\n}"
        );
    }

    #[test]
    fn malformed_and_misshapen_files_are_refused_with_a_line() {
        let p = Path::new("/x/settings.json");
        let e = parse(p, "{\n  \"a\": 1,\n  oops\n}")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("/x/settings.json:3:"), "{e}");
        let e = parse(p, "{\"hooks\": []}").unwrap_err().to_string();
        assert!(e.contains("\"hooks\" is not an object"), "{e}");
        let e = parse(p, "[1]").unwrap_err().to_string();
        assert!(e.contains("not a JSON object"), "{e}");
    }
}
