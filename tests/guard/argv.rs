//! A command sent as an argv array is decided as the same command sent as a string, for every
//! host (issue 26): Codex's `shell` tool and other clients send `{"command": ["bash", "-lc",
//! "…"]}`, and before the call was read once at the edge (`host::call`) such an array reached
//! the segment rules as its JSON text and escaped them.
//!
//! For every rule of the starter policy (as `callus rules show starter --json` prints it) that
//! runs on a shell command's structure (`match` segment, effect, pipeline or writes) and has
//! firing examples, each example is sent through the real binary in the payload shape of Claude
//! Code, Codex, Gemini CLI, Cursor and Copilot CLI three ways: as a string, as
//! `["bash", "-lc", EXAMPLE]`, and, when the example is one simple command whose words mean
//! the same unexpanded (no `$`, glob, `~`, operator or redirection), as its plain argv. The
//! host's whole answer (exit code, stdout, stderr, without the allow-once sentence whose
//! code names the call) must be the same for all three.

use std::path::Path;

use serde_json::{Value, json};

use super::{Host, guard, payload};
use crate::common::{Env, starter_rules, stderr, stdout};

/// The five hosts, each with its own payload shape.
#[derive(Debug, Clone, Copy)]
enum Shape {
    Claude,
    Codex,
    Gemini,
    Cursor,
    Copilot,
}

impl Shape {
    /// A shell call about to run, with `command` (a string or an argv array) where the host
    /// puts it.
    fn pre(self, cwd: &Path, command: &Value) -> Value {
        let input = json!({ "command": command });
        match self {
            Shape::Claude => payload(Host::Claude, "Bash", &input, cwd),
            Shape::Codex => payload(Host::Codex, "Bash", &input, cwd),
            // Gemini CLI 0.61.0 `fireBeforeToolEvent`.
            Shape::Gemini => json!({
                "session_id": "g-sess", "transcript_path": "", "cwd": cwd,
                "hook_event_name": "BeforeTool", "timestamp": "2026-12-01T20:00:00.000Z",
                "tool_name": "run_shell_command", "tool_input": input
            }),
            // cursor.com/docs/agent/hooks: `preToolUse` of its `Shell` tool.
            Shape::Cursor => json!({
                "conversation_id": "c-sess", "generation_id": "gen-1", "model": "m",
                "hook_event_name": "preToolUse", "cursor_version": "2.3.1",
                "workspace_roots": [cwd], "user_email": null, "transcript_path": null,
                "tool_name": "Shell", "tool_input": input, "tool_use_id": "cur-1", "cwd": cwd
            }),
            // docs.github.com Copilot CLI hooks reference: `toolArgs` is a JSON string.
            Shape::Copilot => json!({
                "sessionId": "p-sess", "timestamp": 1_764_619_200_000_i64, "cwd": cwd,
                "toolName": "bash", "toolArgs": input.to_string()
            }),
        }
    }

    /// Whether the host shows a nudge before a call (the others answer it with nothing).
    fn shows_nudges(self) -> bool {
        matches!(self, Shape::Claude | Shape::Codex)
    }
}

/// The words of `example` when it is one simple command whose words an argv carries with
/// the same meaning: no expansion, glob, tilde, operator or redirection (quotes and
/// backslashes are removed as the shell removes them).
fn plain_argv(example: &str) -> Option<Vec<String>> {
    if example.chars().any(|c| "$`|&;<>()*?[]{}~!#\n".contains(c)) {
        return None;
    }
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = example.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => {
                if let Some(w) = word.take() {
                    words.push(w);
                }
            }
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    w.push(q);
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                while let Some(q) = chars.next() {
                    match q {
                        '"' => break,
                        '\\' => w.push(chars.next()?),
                        q => w.push(q),
                    }
                }
            }
            '\\' => word.get_or_insert_with(String::new).push(chars.next()?),
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    (words.len() > 1).then_some(words)
}

/// The host's whole answer to `command`, as text to compare.
fn answer(env: &Env, shape: Shape, command: &Value) -> String {
    let o = guard(
        env,
        shape.pre(env.repo_path(), command).to_string().as_bytes(),
    );
    format!(
        "exit {:?}\nstdout: {}\nstderr: {}",
        o.status.code(),
        stdout(&o),
        stderr(&o)
    )
}

/// The firing examples of every starter rule that runs on a shell command's structure.
fn structural_examples(env: &Env) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for rule in starter_rules(env) {
        let tool = rule["tool"].as_str().unwrap_or("Bash");
        let mode = rule["match"].as_str().unwrap_or("text");
        if !matches!(tool, "Bash" | "*")
            || !matches!(mode, "segment" | "effect" | "pipeline" | "writes")
        {
            continue;
        }
        let id = rule["id"].as_str().unwrap_or_default().to_string();
        for ex in rule["examples"]["should_fire"]
            .as_array()
            .into_iter()
            .flatten()
        {
            out.push((id.clone(), ex.as_str().unwrap_or_default().to_string()));
        }
    }
    out
}

fn same_answer_for_every_form(shape: Shape) {
    let env = Env::new();
    let examples = structural_examples(&env);
    assert!(examples.len() > 100, "{} examples", examples.len());
    let (mut refused, mut plain) = (0, 0);
    for (id, ex) in &examples {
        let string = answer(&env, shape, &json!(ex));
        if string.starts_with("exit Some(2)") || string.contains("deny") {
            refused += 1;
        }
        // Where the host shows nudges, every firing example gets an answer.
        if shape.shows_nudges() {
            assert_ne!(
                string, "exit Some(0)\nstdout: \nstderr: ",
                "{shape:?}: {id} does not fire on its example {ex:?}"
            );
        }
        let wrapped = answer(&env, shape, &json!(["bash", "-lc", ex]));
        assert_eq!(
            wrapped, string,
            "{shape:?}: {id}: [\"bash\", \"-lc\", {ex:?}] vs the string"
        );
        if let Some(words) = plain_argv(ex) {
            plain += 1;
            let argv = answer(&env, shape, &json!(words));
            assert_eq!(argv, string, "{shape:?}: {id}: {words:?} vs {ex:?}");
        }
    }
    // The comparison is not vacuous: most examples are refusals, and many are plain argv.
    assert!(refused * 2 > examples.len(), "{shape:?}: {refused} refused");
    assert!(plain >= 30, "{shape:?}: {plain} plain argv forms");
}

#[test]
fn plain_argv_takes_only_simple_commands_and_removes_quotes() {
    assert_eq!(
        plain_argv(r#"git commit -m "fix it" 'a b' c\ d"#).unwrap(),
        ["git", "commit", "-m", "fix it", "a b", "c d"]
    );
    for not_plain in ["rm -rf ~", "rm -rf $HOME", "a | b", "a > f", "rm *", "ls"] {
        assert_eq!(plain_argv(not_plain), None, "{not_plain}");
    }
}

#[test]
fn claude_code_decides_an_argv_as_its_string() {
    same_answer_for_every_form(Shape::Claude);
}

#[test]
fn codex_decides_an_argv_as_its_string() {
    same_answer_for_every_form(Shape::Codex);
}

#[test]
fn gemini_cli_decides_an_argv_as_its_string() {
    same_answer_for_every_form(Shape::Gemini);
}

#[test]
fn cursor_decides_an_argv_as_its_string() {
    same_answer_for_every_form(Shape::Cursor);
}

#[test]
fn copilot_cli_decides_an_argv_as_its_string() {
    same_answer_for_every_form(Shape::Copilot);
}
