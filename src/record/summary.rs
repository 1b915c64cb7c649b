//! What of a call's input is stored: the command for shell tools (the call's command text as
//! the guard reads it, [`crate::host::call::command_text`]: an argv array joined with
//! quoting, a wrapped `bash -lc` script as its body), a short summary for the rest (the
//! file path, URL, query or MCP arguments), plus a SHA-256 of the input.
//!
//! The text returned here is raw; the caller redacts it before it is stored. File contents
//! (`Write.content`, `Edit.new_string`, an `apply_patch` body) are never part of a summary:
//! an `apply_patch` is summarised by the files it touches.

use std::borrow::Cow;

use serde_json::Value;

use crate::host::call::{command_text as command, is_shell as is_shell_tool};

/// The text stored in `command`: the shell command, or a summary of a non-shell input.
#[must_use]
pub(crate) fn summary<'a>(tool: &str, input: &'a Value) -> Option<Cow<'a, str>> {
    if is_shell_tool(tool) {
        return command(input);
    }
    let text = |k: &str| {
        input
            .get(k)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    if tool == "apply_patch" {
        let patch = text("command").or_else(|| text("input"))?;
        return Some(Cow::Owned(patch_targets(patch)));
    }
    if tool.starts_with("mcp__") {
        return compact(input);
    }
    if tool == "Read"
        && let Some(ranged) = ranged_read(input)
    {
        return Some(Cow::Owned(ranged));
    }
    let found = match tool {
        // Copilot CLI's `create`/`edit`/`view` name the file `path`.
        "Write" | "Edit" | "MultiEdit" | "Read" => text("file_path").or_else(|| text("path")),
        "NotebookEdit" | "NotebookRead" => text("notebook_path"),
        "WebFetch" => text("url"),
        "WebSearch" => text("query"),
        "Glob" | "Grep" => {
            let pattern = text("pattern")?;
            return Some(match text("path") {
                Some(path) => Cow::Owned(format!("{pattern} in {path}")),
                None => Cow::Borrowed(pattern),
            });
        }
        "Agent" | "Task" => {
            let kind = text("subagent_type").unwrap_or("agent");
            return Some(Cow::Owned(match text("description") {
                Some(d) => format!("{kind}: {d}"),
                None => kind.to_string(),
            }));
        }
        _ => text("file_path")
            .or_else(|| text("path"))
            .or_else(|| text("url")),
    };
    found.map(Cow::Borrowed).or_else(|| compact(input))
}

/// Input fields of a `Read` that choose what part of the file is read.
pub(crate) const READ_RANGE_FIELDS: &[&str] = &["offset", "limit", "pages"];

/// A `Read` of part of a file (`offset`, `limit`, `pages`) is stored as a JSON object of the
/// path and those fields, so what separates it from a whole-file read stays in the store
/// (derive contrasts on it; the backtest reads a stored object as the tool input). A
/// whole-file read is stored as its path alone.
fn ranged_read(input: &Value) -> Option<String> {
    let path = input.get("file_path").and_then(Value::as_str)?;
    let mut out = serde_json::Map::new();
    out.insert("file_path".into(), Value::String(path.to_string()));
    for k in READ_RANGE_FIELDS {
        if let Some(v) = input.get(*k).filter(|v| !v.is_null()) {
            out.insert((*k).to_string(), v.clone());
        }
    }
    if out.len() == 1 {
        return None;
    }
    serde_json::to_string(&Value::Object(out)).ok()
}

fn compact(input: &Value) -> Option<Cow<'static, str>> {
    match input {
        Value::Null => None,
        Value::Object(m) if m.is_empty() => None,
        other => serde_json::to_string(other).ok().map(Cow::Owned),
    }
}

/// `apply_patch a.rs, b.rs`: the files an `apply_patch` body adds, updates, deletes or
/// moves.
#[must_use]
pub(crate) fn patch_targets(patch: &str) -> String {
    let markers = [
        "*** Add File: ",
        "*** Update File: ",
        "*** Delete File: ",
        "*** Move to: ",
    ];
    let targets: Vec<&str> = patch
        .lines()
        .filter_map(|l| markers.iter().find_map(|m| l.strip_prefix(m)))
        .map(str::trim)
        .collect();
    if targets.is_empty() {
        "apply_patch".to_string()
    } else {
        format!("apply_patch {}", targets.join(", "))
    }
}

/// The text an input's digest is taken over: the command for shell tools (so a hook row, a
/// transcript row and a rollout row of the same call agree), else the input's JSON. The
/// digest itself is keyed and taken after redaction (`crate::digest`).
#[must_use]
pub(crate) fn digest_text<'a>(tool: &str, input: &'a Value) -> Option<std::borrow::Cow<'a, str>> {
    if is_shell_tool(tool) {
        return command(input);
    }
    if input.is_null() {
        return None;
    }
    serde_json::to_string(input)
        .ok()
        .map(std::borrow::Cow::Owned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn shell_commands_from_strings_and_argv() {
        let v = json!({"command": "ls -la", "description": "list"});
        assert_eq!(summary("Bash", &v).unwrap(), "ls -la");
        let v = json!({"command": ["bash", "-lc", "echo hi && ls"]});
        assert_eq!(summary("Bash", &v).unwrap(), "echo hi && ls");
        let v = json!({"command": ["ls", "-la"]});
        assert_eq!(summary("Bash", &v).unwrap(), "ls -la");
        let v = json!({"cmd": "git status"});
        assert_eq!(summary("Bash", &v).unwrap(), "git status");
        // As the guard reads it (`host::call`): words quoted so the split reads them back, a
        // login shell running a file is not a script, and every host's shell tool is a shell.
        let v = json!({"command": ["git", "commit", "-m", "fix it"]});
        assert_eq!(summary("Bash", &v).unwrap(), "git commit -m 'fix it'");
        let v = json!({"command": ["bash", "-l", "build.sh"]});
        assert_eq!(summary("shell", &v).unwrap(), "bash -l build.sh");
        for tool in ["PowerShell", "container.exec", "shell_command"] {
            let v = json!({"command": "ls"});
            assert_eq!(summary(tool, &v).unwrap(), "ls", "{tool}");
        }
    }

    #[test]
    fn other_tools_are_summarised_without_contents() {
        let v = json!({"file_path": "/a/b.rs", "content": "SECRET BODY"});
        assert_eq!(summary("Write", &v).unwrap(), "/a/b.rs");
        let v = json!({"path": "/a/b.rs", "file_text": "SECRET BODY"});
        assert_eq!(
            summary("Write", &v).unwrap(),
            "/a/b.rs",
            "Copilot CLI's create"
        );
        let v = json!({"url": "https://x.dev/a", "prompt": "p"});
        assert_eq!(summary("WebFetch", &v).unwrap(), "https://x.dev/a");
        let v = json!({"pattern": "fn main", "path": "src"});
        assert_eq!(summary("Grep", &v).unwrap(), "fn main in src");
        let v = json!({"repo": "a/b", "title": "t"});
        assert_eq!(
            summary("mcp__github__create_issue", &v).unwrap(),
            r#"{"repo":"a/b","title":"t"}"#
        );
        let patch = "*** Begin Patch\n*** Add File: m.txt\n+secret\n*** Update File: src/a.rs\n@@\n-x\n+y\n*** End Patch\n";
        let v = json!({"command": patch});
        assert_eq!(
            summary("apply_patch", &v).unwrap(),
            "apply_patch m.txt, src/a.rs"
        );
    }

    #[test]
    fn a_ranged_read_keeps_its_range() {
        let v = json!({"file_path": "/a/log.md", "limit": 200});
        assert_eq!(
            summary("Read", &v).unwrap(),
            r#"{"file_path":"/a/log.md","limit":200}"#
        );
        let v = json!({"file_path": "/a/log.md", "offset": null});
        assert_eq!(summary("Read", &v).unwrap(), "/a/log.md");
    }

    #[test]
    fn shell_digest_text_is_the_command_alone() {
        let a = json!({"command": "ls", "description": "one"});
        let b = json!({"command": "ls"});
        assert_eq!(digest_text("Bash", &a).as_deref(), Some("ls"));
        assert_eq!(digest_text("Bash", &a), digest_text("Bash", &b));
        assert_ne!(digest_text("Read", &a), digest_text("Read", &b));
    }
}
