//! The `"match": "effect"` mode: what a call *does*, as the effect lines of
//! [`crate::shell::model`], for every tool that acts on paths or runs commands.
//!
//! - Shell tools ([`crate::host::call::is_shell`]): the command model's effects on the
//!   call's command text (an argv array already joined, or its wrapped script, at the edge).
//! - File tools (`Write`, `Edit`, `MultiEdit`, `NotebookEdit`): a `writes` effect on the
//!   `file_path`/`notebook_path`, when it points somewhere a rule can care about (not an
//!   ordinary project file).
//! - `apply_patch`: `writes`/`deletes` for each `*** Add|Update|Delete File:` and
//!   `*** Move to:` path.
//! - MCP tools (`mcp__…`) whose name says they change something (write, edit, delete, move
//!   …): `writes`/`deletes` on their `path`-like arguments.
//!
//! Paths are classified against the context the call carries (its working directory,
//! `$HOME`, the repository root and `$CALLUS_HOME`, read at the edge by
//! [`crate::host::call::context`]), with symlinks resolved through the resolver it carries.
//! Nothing here reads the environment or the file system.

use serde_json::Value;

use crate::host::call::Call;
use crate::shell::Split;
use crate::shell::model::paths::Class;
use crate::shell::model::{Context, Effect, EffectKind, analyse_split};

/// The effects of one call, against the context it carries. `split` is the shell split of
/// the command text, when the caller already has it. Only a tool that
/// [`acts_on_paths`](crate::host::call::acts_on_paths) has any.
pub(crate) fn effects<'s>(
    call: &Call<'_>,
    split: impl FnOnce(&str) -> Option<&'s Split>,
) -> Vec<Effect> {
    let (tool, input, ctx) = (call.tool, call.input, call.context);
    if call.shell {
        let Some(text) = call.command.as_deref() else {
            return Vec::new();
        };
        if let Some(s) = split(text) {
            return analyse_split(text, s, ctx).effects;
        }
        return analyse_split(text, &crate::shell::split(text), ctx).effects;
    }
    let mut out = Vec::new();
    match tool {
        "Write" | "Edit" | "MultiEdit" | "NotebookEdit" | "str_replace_based_edit_tool" => {
            for key in ["file_path", "notebook_path", "path"] {
                if let Some(p) = input.get(key).and_then(Value::as_str) {
                    path_effect(false, tool, p, ctx, &mut out);
                }
            }
        }
        "apply_patch" => {
            let text = ["input", "patch", "command"]
                .iter()
                .find_map(|k| input.get(*k).and_then(Value::as_str))
                .unwrap_or_default();
            for line in text.lines() {
                let l = line.trim();
                for (prefix, delete) in [
                    ("*** Add File:", false),
                    ("*** Update File:", false),
                    ("*** Delete File:", true),
                    ("*** Move to:", false),
                ] {
                    if let Some(p) = l.strip_prefix(prefix) {
                        path_effect(delete, tool, p.trim(), ctx, &mut out);
                    }
                }
            }
        }
        _ if tool.starts_with("mcp__") => {
            let words = mcp_verbs(tool);
            let verb = |ws: &[&str]| words.iter().any(|w| ws.contains(&w.as_str()));
            let delete = verb(&["delete", "remove", "unlink", "rmdir", "rm", "trash"]);
            let mutating = delete
                || verb(&[
                    "write", "edit", "create", "move", "rename", "patch", "put", "update",
                    "append", "replace", "mkdir", "upload", "save", "set", "copy",
                ]);
            if mutating && let Some(obj) = input.as_object() {
                for (k, v) in obj {
                    let key = k.to_ascii_lowercase();
                    if !(key.contains("path")
                        || matches!(
                            key.as_str(),
                            "target" | "destination" | "dest" | "source" | "file" | "filename"
                        ))
                    {
                        continue;
                    }
                    let values: Vec<&str> = match v {
                        Value::String(s) => vec![s.as_str()],
                        Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
                        _ => Vec::new(),
                    };
                    for p in values {
                        path_effect(delete, tool, p, ctx, &mut out);
                    }
                }
            }
        }
        _ => {}
    }
    out
}

/// The words of an MCP tool's own name (`mcp__server__write_file` → `write`, `file`;
/// `moveFile` → `move`, `file`), lower-cased: its verbs are matched as whole words, so
/// `get_settings`, `compute_output` or `reset_view` are not `set`, `put` or `set`.
fn mcp_verbs(tool: &str) -> Vec<String> {
    let name = tool.rsplit("__").next().unwrap_or(tool);
    let mut words = Vec::new();
    let mut word = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if !c.is_ascii_alphanumeric() {
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            prev_lower = false;
            continue;
        }
        if c.is_ascii_uppercase() && prev_lower && !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
        prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        word.push(c.to_ascii_lowercase());
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

fn path_effect(delete: bool, tool: &str, path: &str, ctx: &Context, out: &mut Vec<Effect>) {
    let (class, resolved) = crate::shell::model::classify_path(path, ctx);
    if matches!(
        class,
        Class::Other | Class::Temp | Class::Dynamic | Class::WorkingDir
    ) {
        return;
    }
    let (kind, verb) = if delete {
        (EffectKind::Deletes, format!("deletes {resolved}"))
    } else {
        (EffectKind::Writes, format!("writes {resolved}"))
    };
    let via = tool.to_string();
    let attrs: &[(&str, &str)] = if delete {
        &[("recursive", "false"), ("via", &via)]
    } else {
        &[("via", &via)]
    };
    out.push(Effect::on_path(kind, &verb, attrs, class, &resolved));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tool's own name (after the last `__`) splits into lowercase words at separators
    /// and camel-case humps; the last word counts like the others.
    #[test]
    fn mcp_tool_names_split_into_words_the_last_included() {
        assert_eq!(mcp_verbs("mcp__fs__moveFile"), ["move", "file"]);
        assert_eq!(mcp_verbs("mcp__files__file_delete"), ["file", "delete"]);
        assert_eq!(mcp_verbs("mcp__files__delete"), ["delete"]);
        assert_eq!(mcp_verbs("write-file"), ["write", "file"]);
        assert!(mcp_verbs("mcp__x__").is_empty());
    }
    use serde_json::json;

    fn ctx() -> Context {
        Context {
            cwd: Some("/w/p".into()),
            home: Some("/h".into()),
            repo_root: Some("/w/p".into()),
            callus_home: Some("/h/.callus".into()),
            realpath: None,
        }
    }

    fn lines(tool: &str, input: &Value) -> Vec<String> {
        let ctx = ctx();
        effects(&Call::new(tool, input).at(&ctx), |_| None)
            .into_iter()
            .map(|e| e.line)
            .collect()
    }

    #[test]
    fn every_path_tool_reaches_the_control_plane_check() {
        let cp = |tool: &str, input: Value| {
            let l = lines(tool, &input);
            assert!(
                l.iter().any(|l| l.contains("class=control-plane")),
                "{tool} {input}: {l:?}"
            );
        };
        cp("Write", json!({"file_path": ".claude//settings.json"}));
        cp(
            "Edit",
            json!({"file_path": "/w/p/./.claude/../.claude/settings.local.json"}),
        );
        cp("MultiEdit", json!({"file_path": "/h/.codex/hooks.json"}));
        cp(
            "NotebookEdit",
            json!({"notebook_path": "/h/.callus/x.ipynb"}),
        );
        cp(
            "apply_patch",
            json!({"input": "*** Begin Patch\n*** Delete File: .claude/settings.json\n*** End Patch"}),
        );
        cp(
            "mcp__fs__write_file",
            json!({"path": "/w/p/.claude/settings.json", "content": "{}"}),
        );
        cp(
            "shell",
            json!({"command": ["bash", "-lc", "rm -rf .callus"]}),
        );
        assert!(
            lines(
                "mcp__fs__read_file",
                &json!({"path": ".claude/settings.json"})
            )
            .is_empty()
        );
        for reader in [
            "mcp__cfg__get_settings",
            "mcp__x__compute_output",
            "mcp__ui__reset_view",
            "mcp__creditor__list_files",
        ] {
            assert!(
                lines(reader, &json!({"path": ".claude/settings.json"})).is_empty(),
                "{reader}"
            );
        }
        for writer in [
            "mcp__fs__moveFile",
            "mcp__github__create_or_update_file",
            "mcp__fs__delete-file",
        ] {
            cp(writer, json!({"path": "/w/p/.claude/settings.json"}));
        }
        assert!(lines("Write", &json!({"file_path": "src/main.rs"})).is_empty());
        assert!(lines("Edit", &json!({"file_path": ".claude/agents/x.md"})).is_empty());
    }

    #[test]
    fn only_tools_that_act_on_paths_or_run_commands_have_effects() {
        // A tool outside the table has none, even when its name says it writes.
        assert!(lines("TodoWrite", &json!({"path": ".claude/settings.json"})).is_empty());
        // A shell tool without a command has none.
        assert!(lines("Bash", &json!({"description": "x"})).is_empty());
    }

    #[test]
    fn deletes_and_writes_carry_their_attributes() {
        let patch = "*** Begin Patch\n*** Delete File: .claude/settings.json\n*** Add File: .codex/hooks.json\n\
                     *** Update File: src/a.rs\n*** Move to: .callus/rules.json\n*** End Patch";
        let l = lines("apply_patch", &json!({ "input": patch }));
        assert_eq!(l.len(), 3, "{l:?}");
        assert!(
            l[0].starts_with("deletes ")
                && l[0].contains("recursive=false")
                && l[0].contains("via=apply_patch"),
            "{l:?}"
        );
        assert!(
            l[1].starts_with("writes ")
                && !l[1].contains("recursive=")
                && l[1].contains("via=apply_patch"),
            "{l:?}"
        );
        assert!(
            l[2].starts_with("writes ") && l[2].contains(".callus/rules.json"),
            "{l:?}"
        );
        // MCP: a deleting name deletes; path-like keys (a string or a list) are the paths,
        // other keys are not.
        let l = lines(
            "mcp__fs__delete_file",
            &json!({"paths": [".claude/settings.json", "/h/.codex/config.toml"], "target": "/h/.callus/x"}),
        );
        assert_eq!(l.len(), 3, "{l:?}");
        assert!(l.iter().all(|l| l.starts_with("deletes ")), "{l:?}");
        let l = lines(
            "mcp__fs__move_file",
            &json!({"destination": "/h/.callus/rules.json", "content": ".claude/settings.json", "n": 3}),
        );
        assert_eq!(l.len(), 1, "{l:?}");
        assert!(
            l[0].starts_with("writes ") && l[0].contains("/h/.callus/rules.json"),
            "{l:?}"
        );
        assert!(lines("mcp__fs__list", &json!({"path": "/h/.callus"})).is_empty());
    }
}
