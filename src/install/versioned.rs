//! Hooks files of the `{"version": 1, "hooks": {event: [handler, …]}}` kind (Cursor's
//! `hooks.json`, Copilot CLI's `hooks/*.json`), seen through the matcher-group shape the
//! rest of install works on, so merge, strip, find and the byte-exact restore are the same
//! code for every host.
//!
//! Reading wraps each handler in a group of its own (`{"hooks": [handler]}`, `matcher`
//! lifted to the group), renames the host's command and timeout keys (Copilot: `bash`,
//! `timeoutSec`) to `command` and `timeout`, and drops `"version": 1`; writing undoes
//! exactly that, keeping every key's place, and puts `"version": 1` first whenever there
//! are hooks. For hosts whose files already are matcher groups it changes nothing.

use std::path::Path;

use serde_json::{Map, Value};

use super::settings::{self, Doc};
use crate::Result;
use crate::host::{HooksFile, Host};

/// Read `path` as `host` writes it, in the matcher-group shape.
pub(crate) fn load(host: Host, path: &Path) -> Result<Doc> {
    let mut doc = Doc::load(path)?;
    doc.value = to_groups(host, &doc.value);
    Ok(doc)
}

/// Parse `text` (of `path`) as `host` writes it, in the matcher-group shape.
pub(crate) fn parse(host: Host, path: &Path, text: &str) -> Result<Value> {
    settings::parse(path, text).map(|v| to_groups(host, &v))
}

/// The text of the matcher-group document `value`, written back in `host`'s own shape and
/// formatted like `doc`.
#[must_use]
pub(crate) fn render(host: Host, doc: &Doc, value: &Value) -> String {
    doc.render(&from_groups(host, value))
}

/// Rename the key `from` to `to` in place (the entry keeps its position).
fn rename(map: &Map<String, Value>, from: &str, to: &str) -> Map<String, Value> {
    map.iter()
        .map(|(k, v)| {
            (
                if k == from { to } else { k.as_str() }.to_string(),
                v.clone(),
            )
        })
        .collect()
}

fn to_groups(host: Host, value: &Value) -> Value {
    let HooksFile::Versioned { command_key } = host.spec().hooks_file else {
        return value.clone();
    };
    let timeout_key = host.spec().timeout.key;
    let Some(root) = value.as_object() else {
        return value.clone();
    };
    let mut out = Map::new();
    for (key, v) in root {
        match (key.as_str(), v) {
            ("version", Value::Number(n)) if n.as_u64() == Some(1) => {}
            ("hooks", Value::Object(events)) => {
                let mut grouped = Map::new();
                for (event, handlers) in events {
                    let Some(list) = handlers.as_array() else {
                        grouped.insert(event.clone(), handlers.clone());
                        continue;
                    };
                    let groups = list
                        .iter()
                        .map(|h| match h.as_object() {
                            Some(h) if !h.contains_key("hooks") => {
                                let handler = rename(h, command_key, "command");
                                let mut handler = rename(&handler, timeout_key, "timeout");
                                let mut group = Map::new();
                                if let Some(m) = handler.remove("matcher") {
                                    group.insert("matcher".into(), m);
                                }
                                group.insert("hooks".into(), Value::Array(vec![handler.into()]));
                                Value::Object(group)
                            }
                            _ => h.clone(),
                        })
                        .collect();
                    grouped.insert(event.clone(), Value::Array(groups));
                }
                out.insert(key.clone(), Value::Object(grouped));
            }
            _ => {
                out.insert(key.clone(), v.clone());
            }
        }
    }
    Value::Object(out)
}

fn from_groups(host: Host, value: &Value) -> Value {
    let HooksFile::Versioned { command_key } = host.spec().hooks_file else {
        return value.clone();
    };
    let timeout_key = host.spec().timeout.key;
    let Some(root) = value.as_object() else {
        return value.clone();
    };
    let mut out = Map::new();
    if root.contains_key("hooks") {
        out.insert("version".into(), Value::from(1));
    }
    for (key, v) in root {
        let Value::Object(events) = v else {
            out.insert(key.clone(), v.clone());
            continue;
        };
        if key != "hooks" {
            out.insert(key.clone(), v.clone());
            continue;
        }
        let mut flat = Map::new();
        for (event, groups) in events {
            let Some(list) = groups.as_array() else {
                flat.insert(event.clone(), groups.clone());
                continue;
            };
            let mut handlers = Vec::new();
            for group in list {
                let matcher = group.get("matcher").cloned();
                let Some(hs) = group.get("hooks").and_then(Value::as_array) else {
                    handlers.push(group.clone());
                    continue;
                };
                for h in hs {
                    let Some(h) = h.as_object() else {
                        handlers.push(h.clone());
                        continue;
                    };
                    let handler = rename(h, "command", command_key);
                    let mut handler = rename(&handler, "timeout", timeout_key);
                    if let Some(m) = &matcher {
                        handler.insert("matcher".into(), m.clone());
                    }
                    handlers.push(Value::Object(handler));
                }
            }
            flat.insert(event.clone(), Value::Array(handlers));
        }
        out.insert(key.clone(), Value::Object(flat));
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_versioned_document_survives_the_round_trip_through_groups() {
        let doc = json!({"version": 1, "hooks": {"preToolUse": [
            {"type": "command", "bash": "./mine.sh", "timeoutSec": 5},
            {"type": "command", "powershell": "mine.ps1"}
        ]}, "other": true});
        let grouped = to_groups(Host::Copilot, &doc);
        assert_eq!(
            grouped["hooks"]["preToolUse"][0],
            json!({"hooks": [{"type": "command", "command": "./mine.sh", "timeout": 5}]})
        );
        assert!(grouped.get("version").is_none());
        assert_eq!(from_groups(Host::Copilot, &grouped), doc);
        let cursor = json!({"version": 1, "hooks": {"beforeShellExecution": [
            {"command": "./a.sh", "matcher": "curl"}]}});
        let grouped = to_groups(Host::Cursor, &cursor);
        assert_eq!(
            grouped["hooks"]["beforeShellExecution"][0]["matcher"],
            "curl"
        );
        assert_eq!(from_groups(Host::Cursor, &grouped), cursor);
        // Matcher-group hosts are untouched.
        let claude = json!({"hooks": {"PreToolUse": [{"hooks": []}]}});
        assert_eq!(to_groups(Host::ClaudeCode, &claude), claude);
    }

    #[test]
    fn copilot_spells_the_timeout_timeout_sec() {
        let grouped = json!({"hooks": {"preToolUse": [{"hooks": [
            {"type": "command", "command": "/bin/callus guard", "timeout": 10}]}]}});
        let flat = from_groups(Host::Copilot, &grouped);
        assert_eq!(
            flat,
            json!({"version": 1, "hooks": {"preToolUse": [
                {"type": "command", "bash": "/bin/callus guard", "timeoutSec": 10}]}})
        );
        assert_eq!(to_groups(Host::Copilot, &flat), grouped);
    }
}
