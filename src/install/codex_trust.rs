//! Codex hook trust: the key and hash under which Codex records that the user trusted one
//! hook handler, and the block of `$CODEX_HOME/config.toml` where install records it.
//!
//! Codex (0.169, measured against its own `hooks/list` on 20 variants) runs a non-managed
//! hook only when the user config holds, for the key
//! `<absolute hooks.json path>:<event label>:<group index>:<handler index>`, a
//! `trusted_hash` equal to `sha256:` + hex SHA-256 of the canonical JSON (keys sorted, no
//! whitespace) of `{"event_name", "hooks": [{"async", "command", "timeout" (default 600),
//! "type", "statusMessage"?}], "matcher"?}`; otherwise it skips the hook without a word.
//!
//! Install writes its entries as one delimited block per hooks file, so uninstall removes
//! exactly those bytes. It refuses to write (and prints the entries for the user instead)
//! when the file already defines one of the keys outside the block, or defines `hooks` /
//! `state` inline — appending a table then would make the file invalid TOML, and Codex
//! refuses to start on an invalid config.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::settings::Found;

/// The label Codex uses for an event in trust keys and hashes.
#[must_use]
pub(crate) fn event_label(event: &str) -> Option<&'static str> {
    Some(match event {
        "PreToolUse" => "pre_tool_use",
        "PermissionRequest" => "permission_request",
        "PostToolUse" => "post_tool_use",
        "PreCompact" => "pre_compact",
        "PostCompact" => "post_compact",
        "SessionStart" => "session_start",
        "UserPromptSubmit" => "user_prompt_submit",
        "SubagentStart" => "subagent_start",
        "SubagentStop" => "subagent_stop",
        "Stop" => "stop",
        _ => return None,
    })
}

/// One hook's trust entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    /// `<source>:<event label>:<group>:<handler>`.
    pub key: String,
    /// `sha256:<hex>`.
    pub hash: String,
}

/// The trust hash of the handler at `(event, group, handler)` of a hooks document.
#[must_use]
pub(crate) fn hash_of(doc: &Value, event: &str, group: usize, handler: usize) -> Option<String> {
    let label = event_label(event)?;
    let g = doc.get("hooks")?.get(event)?.get(group)?;
    let h = g.get("hooks")?.get(handler)?;
    let mut hm = Map::new();
    hm.insert(
        "async".into(),
        Value::Bool(h.get("async").and_then(Value::as_bool).unwrap_or(false)),
    );
    hm.insert("command".into(), h.get("command")?.clone());
    if let Some(m) = h.get("statusMessage").and_then(Value::as_str) {
        hm.insert("statusMessage".into(), Value::from(m));
    }
    let timeout = h
        .get("timeout")
        .and_then(Value::as_u64)
        .unwrap_or(600)
        .max(1);
    hm.insert("timeout".into(), Value::from(timeout));
    hm.insert("type".into(), Value::from("command"));
    // Keys inserted in sorted order: with `preserve_order` the map keeps insertion order.
    let mut identity = Map::new();
    identity.insert("event_name".into(), Value::from(label));
    identity.insert("hooks".into(), Value::Array(vec![Value::Object(hm)]));
    if let Some(m) = g.get("matcher").and_then(Value::as_str)
        && !matches!(event, "UserPromptSubmit" | "Stop")
    {
        identity.insert("matcher".into(), Value::from(m));
    }
    let text = serde_json::to_string(&Value::Object(identity)).ok()?;
    Some(format!(
        "sha256:{}",
        crate::digest::sha256_hex(text.as_bytes())
    ))
}

/// `path` as Codex names it in trust keys: with symlinks resolved (Codex canonicalizes
/// `CODEX_HOME`; measured with 0.169). The part that does not exist yet is kept as written.
#[must_use]
pub(crate) fn key_source(path: &Path) -> PathBuf {
    for base in path.ancestors() {
        if let Ok(real) = std::fs::canonicalize(base) {
            let rest = path.strip_prefix(base).unwrap_or(Path::new(""));
            return if rest.as_os_str().is_empty() {
                real
            } else {
                real.join(rest)
            };
        }
    }
    path.to_path_buf()
}

/// The trust entries of our handlers in the hooks document at `source`.
#[must_use]
pub(crate) fn entries(source: &Path, doc: &Value, ours: &[Found]) -> Vec<Entry> {
    let source = key_source(source);
    ours.iter()
        .filter_map(|f| {
            Some(Entry {
                key: format!(
                    "{}:{}:{}:{}",
                    source.display(),
                    event_label(&f.event)?,
                    f.group,
                    f.handler
                ),
                hash: hash_of(doc, &f.event, f.group, f.handler)?,
            })
        })
        .collect()
}

fn begin_line(source: &Path) -> String {
    format!(
        "# >>> callus hook trust for {} (written by `callus install`; `callus uninstall` removes it)",
        key_source(source).display()
    )
}

const END_LINE: &str = "# <<< callus hook trust";

/// The block recording `entries`, as appended to config.toml (leading newline included).
#[must_use]
pub(crate) fn block(source: &Path, entries: &[Entry]) -> String {
    let mut out = format!("\n{}\n", begin_line(source));
    for e in entries {
        let _ = write!(
            out,
            "[hooks.state.{}]\ntrusted_hash = {}\n",
            toml_string(&e.key),
            toml_string(&e.hash)
        );
    }
    out.push_str(END_LINE);
    out.push('\n');
    out
}

/// `(start, end)` byte range of our block for `source` in `text`, leading newline included.
#[must_use]
pub(crate) fn find_block(text: &str, source: &Path) -> Option<(usize, usize)> {
    let begin = format!("\n{}\n", begin_line(source));
    let (start, skip) = if text.starts_with(&begin[1..]) {
        (0, begin.len() - 1)
    } else {
        (text.find(&begin)?, begin.len())
    };
    let end_rel = text[start + skip..].find(&format!("{END_LINE}\n"))?;
    Some((start, start + skip + end_rel + END_LINE.len() + 1))
}

/// What to do with config.toml.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Plan {
    /// Write this new text.
    Write(String),
    /// Nothing to change.
    Unchanged,
    /// Cannot edit safely: tell the user (the reason), with the block to add by hand.
    Manual(String),
}

/// Plan config.toml `text` so it trusts exactly `entries` for `source`.
#[must_use]
pub(crate) fn plan(text: &str, source: &Path, entries: &[Entry]) -> Plan {
    let (outside, ours) = match find_block(text, source) {
        Some((s, e)) => (format!("{}{}", &text[..s], &text[e..]), Some((s, e))),
        None => (text.to_string(), None),
    };
    let mut wanted: Vec<Entry> = Vec::new();
    for e in entries {
        if outside.contains(&e.key) {
            if outside.contains(&e.hash) {
                continue; // trusted already by the user (e.g. through Codex's /hooks)
            }
            return Plan::Manual(format!(
                "config.toml already has an entry for {} with another hash",
                e.key
            ));
        }
        wanted.push(e.clone());
    }
    if !wanted.is_empty() && defines_hooks_inline(&outside) {
        return Plan::Manual(
            "config.toml defines `hooks` or `hooks.state` inline, so a table cannot be added"
                .into(),
        );
    }
    let new_block = if wanted.is_empty() {
        String::new()
    } else {
        block(source, &wanted)
    };
    let new_text = match ours {
        Some((s, e)) => format!("{}{new_block}{}", &text[..s], &text[e..]),
        None => format!("{text}{new_block}"),
    };
    if new_text == text {
        Plan::Unchanged
    } else {
        Plan::Write(new_text)
    }
}

/// config.toml `text` without our block for `source` (`None` when there is none).
#[must_use]
pub(crate) fn remove(text: &str, source: &Path) -> Option<String> {
    let (s, e) = find_block(text, source)?;
    Some(format!("{}{}", &text[..s], &text[e..]))
}

/// Does the TOML define `hooks` or `hooks.state` as an inline value?
fn defines_hooks_inline(text: &str) -> bool {
    text.lines().any(|l| {
        let l = l.trim_start();
        ["hooks", "state", "hooks.state", "\"hooks\"", "\"state\""]
            .iter()
            .any(|k| {
                l.strip_prefix(k)
                    .is_some_and(|r| r.trim_start().starts_with('='))
            })
    })
}

/// The `(key, trusted_hash)` pairs of `[hooks.state."<key>"]` tables in config.toml text
/// (the form Codex and install write; other forms are not read).
#[must_use]
pub(crate) fn recorded(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut key: Option<String> = None;
    for line in text.lines() {
        let l = line.trim();
        if l.starts_with('[') {
            key = l
                .strip_prefix("[hooks.state.\"")
                .and_then(|r| r.strip_suffix("\"]"))
                .map(|k| k.replace("\\\"", "\"").replace("\\\\", "\\"));
        } else if let (Some(k), Some(v)) = (&key, l.strip_prefix("trusted_hash")) {
            let v = v.trim_start().trim_start_matches('=').trim();
            out.push((k.clone(), v.trim_matches('"').to_string()));
        }
    }
    out
}

/// A TOML basic string.
#[must_use]
pub(crate) fn toml_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Whether `text` (the contents of `path`) is TOML Codex can load: an error naming the file,
/// the line and what is wrong otherwise. An empty file is valid.
pub(crate) fn validate(path: &Path, text: &str) -> crate::Result<()> {
    let Err(e) = text.parse::<toml::Table>() else {
        return Ok(());
    };
    let line = e.span().map_or(1, |span| {
        text[..span.start.min(text.len())].matches('\n').count() + 1
    });
    let what = e.message().lines().next().unwrap_or("invalid TOML").trim();
    Err(crate::Error::Invalid(format!(
        "{}:{line}: invalid TOML: {what}; nothing was written (fix the file, then run install again)",
        path.display()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn invalid_toml_is_refused_with_its_line() {
        let p = Path::new("/c/config.toml");
        assert!(validate(p, "").is_ok());
        assert!(validate(p, "model = \"x\"\n[features]\nplugins = false\n").is_ok());
        let e = validate(p, "model = \"x\"\n\n[features\nplugins = false\n").unwrap_err();
        assert!(
            e.to_string().starts_with("/c/config.toml:3: invalid TOML"),
            "{e}"
        );
        let e = validate(p, "a = 1\na = 2\n").unwrap_err();
        assert!(e.to_string().starts_with("/c/config.toml:2:"), "{e}");
    }

    #[test]
    fn hashes_match_values_measured_from_codex_0_169() {
        // `currentHash` reported by `codex app-server` hooks/list for these exact hooks.
        let doc = json!({"hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "/tmp/e2e-manual/codex1/hook.sh"}]}],
            "PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "/tmp/e2e-manual/codex1/hook.sh", "timeout": 600}]}]
        }});
        assert_eq!(
            hash_of(&doc, "PreToolUse", 0, 0).unwrap(),
            "sha256:a94820af3c0444abf5073ed78b0aa66883ddfb4b90ce30a423a397d7c4202255"
        );
        assert_eq!(
            hash_of(&doc, "PostToolUse", 0, 0).unwrap(),
            "sha256:0415d3ed31424458730621f8964d31087a86042cd6e2a4cc08cc091e01d13357"
        );
    }

    #[test]
    fn block_round_trips_byte_for_byte() {
        let src = Path::new("/h/.codex/hooks.json");
        let entries = vec![Entry {
            key: "/h/.codex/hooks.json:pre_tool_use:0:0".into(),
            hash: "sha256:ab".into(),
        }];
        for original in [
            "",
            "model = \"x\"\n",
            "model = \"x\"",
            "# c\n[hooks.state]\n",
        ] {
            let Plan::Write(text) = plan(original, src, &entries) else {
                panic!("expected a write for {original:?}");
            };
            assert_eq!(
                recorded(&text),
                vec![(entries[0].key.clone(), "sha256:ab".into())]
            );
            assert_eq!(plan(&text, src, &entries), Plan::Unchanged);
            assert_eq!(remove(&text, src).unwrap(), original);
        }
    }

    #[test]
    fn keys_name_the_hooks_file_with_symlinks_resolved() {
        let tmp = tempfile::tempdir().unwrap();
        let real = std::fs::canonicalize(tmp.path()).unwrap().join("real");
        std::fs::create_dir_all(&real).unwrap();
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        assert_eq!(
            key_source(&link.join(".codex/hooks.json")),
            real.join(".codex/hooks.json")
        );
        let block_text = block(&link.join("hooks.json"), &[]);
        assert!(block_text.contains(&real.join("hooks.json").display().to_string()));
        assert!(find_block(&block_text, &real.join("hooks.json")).is_some());
    }

    #[test]
    fn a_foreign_entry_for_our_key_is_never_duplicated() {
        let src = Path::new("/h/hooks.json");
        let e = vec![Entry {
            key: "/h/hooks.json:stop:0:0".into(),
            hash: "sha256:cd".into(),
        }];
        let same = "[hooks.state.\"/h/hooks.json:stop:0:0\"]\ntrusted_hash = \"sha256:cd\"\n";
        assert_eq!(plan(same, src, &e), Plan::Unchanged);
        let other = same.replace("cd", "ef");
        assert!(matches!(plan(&other, src, &e), Plan::Manual(_)));
        let inline = "[hooks]\nstate = { }\n";
        assert!(matches!(plan(inline, src, &e), Plan::Manual(_)));
    }
}
