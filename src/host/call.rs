//! One tool call, read once at the edge: the tool, its input, whether the tool is a shell,
//! the command text, and where the call runs. The guard, the recorder and the importers all
//! read a call through [`Call`], so "is this call a shell command, and what command?" has one
//! answer in every stage.
//!
//! - [`is_shell`]: the tools whose input is a shell command, by the names callus uses (each
//!   host's own shell tool is named `Bash` by [`super::Host::canonical_tool`]; Codex's older
//!   `shell`, `exec_command`, `local_shell`, `shell_command`, `container.exec`, Copilot CLI's
//!   and Claude Code's `PowerShell` keep theirs; Gemini CLI's `run_shell_command` is listed
//!   for rows stored under the host's own name).
//! - [`command_text`]: `command` (else `cmd`) as a string is the text as is; an argv array is
//!   joined with Bash quoting ([`crate::shell::syntax::quote`]), so the split reads back the same
//!   words. An argv that only wraps a script — `bash -lc SCRIPT`, `sh -c`, `zsh -c` (any
//!   shell of the usual names, a `-…c` cluster), `pwsh`/`powershell -Command SCRIPT`,
//!   `cmd /c SCRIPT` — is the script body alone. The body is what the model wrote: a host
//!   that runs commands through `bash -lc` adds the wrapper itself (Codex's `shell` tool), and
//!   the same command sent as a string by another host is the body. So segment, effect and
//!   text rules see one text for one command whichever way it arrived.
//! - [`unsandboxed`]: the call asked to run outside the session's sandbox (an escalated
//!   call), so the session's recorded sandbox does not hold for it.
//! - [`time_limit_ms`]: the time limit a shell call gave its host (Codex's `timeout_ms`,
//!   Claude Code's Bash `timeout`, both milliseconds).
//! - [`context`]: where the call runs, as the command model needs it (working directory,
//!   home, the repository root, `$CALLUS_HOME`, a symlink resolver). This is I/O and happens
//!   here, at the edge; [`Call`] carries the result into the pure decision.
//!
//! Guarantees: [`Call::new`] reads nothing but its arguments and allocates only for an argv
//! array that is not a wrapped script; [`context`] is read only for a tool that
//! [`acts_on_paths`] (the only calls whose effects the model works out).

use std::borrow::Cow;
use std::path::Path;
use std::sync::OnceLock;

use serde_json::Value;

use crate::shell::model::Context;

/// Tools whose input is a shell command, by the names callus uses.
const SHELL_TOOLS: &[&str] = &[
    "Bash",
    "PowerShell",
    "container.exec",
    "exec_command",
    "local_shell",
    "run_shell_command",
    "shell",
    "shell_command",
];

/// Tools whose input names paths they write, besides the shells and MCP tools.
const PATH_TOOLS: &[&str] = &[
    "Edit",
    "MultiEdit",
    "NotebookEdit",
    "Write",
    "apply_patch",
    "str_replace_based_edit_tool",
];

/// A context that knows nothing (no working directory, home or repository).
static UNKNOWN: Context = Context {
    cwd: None,
    home: None,
    repo_root: None,
    callus_home: None,
    realpath: None,
};

/// One tool call as every stage reads it.
#[derive(Debug, Clone)]
pub struct Call<'a> {
    /// The tool name, as rules spell it.
    pub tool: &'a str,
    /// The tool input.
    pub input: &'a Value,
    /// Whether the tool is a shell (`is_shell`).
    pub shell: bool,
    /// The command text of a shell tool's input (`command_text`); `None` for other tools.
    pub command: Option<Cow<'a, str>>,
    /// Where the call runs.
    pub(crate) context: &'a Context,
}

impl<'a> Call<'a> {
    /// The call of `tool` with `input`, where it runs unknown. Pure.
    #[must_use]
    pub fn new(tool: &'a str, input: &'a Value) -> Self {
        let shell = is_shell(tool);
        Call {
            tool,
            input,
            shell,
            command: if shell { command_text(input) } else { None },
            context: &UNKNOWN,
        }
    }

    /// The same call, run where `context` says.
    #[must_use]
    pub(crate) fn at(mut self, context: &'a Context) -> Self {
        self.context = context;
        self
    }
}

/// Is `tool` a shell tool (its input a command)?
#[must_use]
pub(crate) fn is_shell(tool: &str) -> bool {
    SHELL_TOOLS.contains(&tool)
}

/// Did the call ask its host to run it outside the session's sandbox? Codex's escalated
/// shell call (`with_escalated_permissions: true`, or `sandbox_permissions:
/// "require_escalated"`) and Claude Code's `dangerouslyDisableSandbox: true` run unsandboxed
/// once approved, so the session's sandbox does not hold for them.
#[must_use]
pub(crate) fn unsandboxed(input: &Value) -> bool {
    input.get("with_escalated_permissions") == Some(&Value::Bool(true))
        || input.get("dangerouslyDisableSandbox") == Some(&Value::Bool(true))
        || input.get("sandbox_permissions").and_then(Value::as_str) == Some("require_escalated")
}

/// The time limit, in milliseconds, a call of the shell tool `tool` set for its command:
/// Codex's `timeout_ms`, else Claude Code's Bash `timeout` (also milliseconds); `None` for a
/// call that set none (the host's default applies) and for any other tool, whose `timeout`
/// may count in other units.
#[must_use]
pub(crate) fn time_limit_ms(tool: &str, input: &Value) -> Option<u64> {
    if !is_shell(tool) {
        return None;
    }
    input
        .get("timeout_ms")
        .or_else(|| input.get("timeout"))
        .and_then(Value::as_u64)
}

/// Can a call of `tool` have effects on paths: a shell, a file-writing tool, `apply_patch`,
/// an MCP tool? For any other tool where it runs does not matter.
#[must_use]
pub(crate) fn acts_on_paths(tool: &str) -> bool {
    is_shell(tool) || PATH_TOOLS.contains(&tool) || tool.starts_with("mcp__")
}

/// The command text of a shell tool's input (see the module docs): `command`, else `cmd`, a
/// string as is, an argv array joined with quoting or its wrapped script alone. `None`
/// when neither key holds a string or a non-empty argv.
#[must_use]
pub(crate) fn command_text(input: &Value) -> Option<Cow<'_, str>> {
    match input.get("command").or_else(|| input.get("cmd"))? {
        Value::String(s) => Some(Cow::Borrowed(s.as_str())),
        Value::Array(words) => argv_text(words),
        _ => None,
    }
}

/// The command text of an argv (its non-string items skipped): a wrapped script's body,
/// else the words quoted and joined. `None` for an empty argv.
#[must_use]
pub(crate) fn argv_text(words: &[Value]) -> Option<Cow<'_, str>> {
    let words: Vec<&str> = words.iter().filter_map(Value::as_str).collect();
    if words.is_empty() {
        return None;
    }
    if let Some(script) = wrapped_script(&words) {
        return Some(Cow::Borrowed(script));
    }
    let owned: Vec<String> = words.iter().map(|w| (*w).to_string()).collect();
    Some(Cow::Owned(crate::shell::syntax::quote::quote(&owned)))
}

/// The script an argv only wraps: `SHELL [-opts] -…c SCRIPT [ARGS…]`,
/// `pwsh|powershell [-opts] -Command SCRIPT`, `cmd [/opts] /c SCRIPT`.
fn wrapped_script<'w>(words: &[&'w str]) -> Option<&'w str> {
    let (program, rest) = words.split_first()?;
    let name = program_name(program);
    // The shells are the command model's (`bash`, `sh`, `zsh`, `dash`, `fish` …), whose
    // `-c` (in a cluster: `-lc`, `-ic`) runs the next word as a script.
    let is_flag: fn(&str) -> bool = if crate::shell::programs::is_shell_name(&name) {
        |w| w.len() > 1 && w.starts_with('-')
    } else if matches!(name.as_str(), "pwsh" | "powershell") {
        |w| w.starts_with('-')
    } else if name == "cmd" {
        |w| w.starts_with('/')
    } else {
        return None;
    };
    let runs: fn(&str, &str) -> bool = |name, flag| match name {
        "pwsh" | "powershell" => {
            let f = flag[1..].to_ascii_lowercase();
            f == "c" || (f.len() >= 3 && "command".starts_with(&f))
        }
        "cmd" => flag.eq_ignore_ascii_case("/c") || flag.eq_ignore_ascii_case("/k"),
        _ => !flag.starts_with("--") && flag.contains('c'),
    };
    // Options first; the first one that runs a script takes the next word.
    for (i, word) in rest.iter().enumerate() {
        if !is_flag(word) {
            return None;
        }
        if runs(&name, word) {
            return rest.get(i + 1).copied();
        }
    }
    None
}

/// A program word's name: its last path component (`/` or `\`), without `.exe`,
/// lower-cased.
fn program_name(word: &str) -> String {
    let base = word.rsplit(['/', '\\']).next().unwrap_or(word);
    let lower = base.to_ascii_lowercase();
    match lower.strip_suffix(".exe") {
        Some(stem) => stem.to_string(),
        None => lower,
    }
}

/// Where a call runs, read from the process: `cwd` is the call's, else the process's; the
/// home is `$HOME`; the repository root is the nearest ancestor of `cwd` holding `.git`;
/// `$CALLUS_HOME` as the rest of callus finds it; symlinks resolved on the file system.
#[must_use]
pub(crate) fn context(cwd: Option<&str>) -> Context {
    let cwd = cwd
        .filter(|c| !c.is_empty())
        .map(String::from)
        .or_else(|| std::env::current_dir().ok()?.to_str().map(String::from));
    let repo_root = cwd
        .as_deref()
        .and_then(|c| crate::config::repo_root(Path::new(c)))
        .and_then(|p| p.to_str().map(String::from));
    let home = std::env::var("HOME").ok().filter(|h| !h.is_empty());
    let callus_home = crate::config::Home::from_env()
        .dir
        .to_str()
        .map(String::from);
    Context {
        cwd,
        home,
        repo_root,
        callus_home,
        realpath: Some(realpath),
    }
}

/// The process's own [`context`] (no call's `cwd`), read once: the offline readers of calls
/// (`guard check`, backtests) classify every call against it.
#[must_use]
pub(crate) fn here() -> &'static Context {
    static HERE: OnceLock<Context> = OnceLock::new();
    HERE.get_or_init(|| context(None))
}

/// The path with its symlinks resolved, when it or its parent exists.
fn realpath(p: &str) -> Option<String> {
    let path = Path::new(p);
    if !path.is_absolute() {
        return None;
    }
    if let Ok(c) = std::fs::canonicalize(path) {
        return c.to_str().map(String::from);
    }
    let parent = std::fs::canonicalize(path.parent()?).ok()?;
    parent.join(path.file_name()?).to_str().map(String::from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn text(v: &Value) -> Option<String> {
        command_text(v).map(Cow::into_owned)
    }

    #[test]
    fn a_shell_call_s_time_limit_is_its_hosts_field_in_milliseconds() {
        assert_eq!(
            time_limit_ms("Bash", &json!({"timeout_ms": 1000})),
            Some(1000)
        );
        assert_eq!(
            time_limit_ms("shell", &json!({"timeout": 2000})),
            Some(2000)
        );
        assert_eq!(
            time_limit_ms("Bash", &json!({"timeout_ms": 5, "timeout": 9})),
            Some(5)
        );
        assert_eq!(time_limit_ms("Bash", &json!({"command": "ls"})), None);
        assert_eq!(time_limit_ms("Bash", &json!({"timeout_ms": "1000"})), None);
        assert_eq!(time_limit_ms("WebFetch", &json!({"timeout": 30})), None);
    }

    #[test]
    fn an_escalated_call_of_each_host_is_unsandboxed() {
        assert!(unsandboxed(
            &json!({"command": ["git", "fetch"], "with_escalated_permissions": true})
        ));
        assert!(unsandboxed(
            &json!({"cmd": "git fetch", "sandbox_permissions": "require_escalated"})
        ));
        assert!(unsandboxed(
            &json!({"command": "git fetch", "dangerouslyDisableSandbox": true})
        ));
        assert!(!unsandboxed(
            &json!({"command": "git fetch", "with_escalated_permissions": false})
        ));
        assert!(!unsandboxed(
            &json!({"command": "git fetch", "sandbox_permissions": "use_default"})
        ));
        assert!(!unsandboxed(&json!({"command": "git fetch"})));
    }

    #[test]
    fn a_string_command_is_the_text_as_is_and_borrowed() {
        let input = json!({"command": "ls -la"});
        assert!(matches!(
            command_text(&input),
            Some(Cow::Borrowed("ls -la"))
        ));
        assert_eq!(
            text(&json!({"cmd": "npm test"})).as_deref(),
            Some("npm test")
        );
        // `command` wins over `cmd`.
        assert_eq!(
            text(&json!({"command": "a", "cmd": "b"})).as_deref(),
            Some("a")
        );
        assert_eq!(text(&json!({"command": 3})), None);
        assert_eq!(text(&json!({"path": "x"})), None);
        assert_eq!(text(&json!({"command": []})), None);
    }

    #[test]
    fn a_wrapped_script_is_its_body() {
        for argv in [
            json!(["bash", "-lc", "git push --force origin main"]),
            json!(["/bin/bash", "-c", "git push --force origin main"]),
            json!(["sh", "-c", "git push --force origin main"]),
            json!(["zsh", "-l", "-c", "git push --force origin main"]),
            json!(["bash", "-c", "git push --force origin main", "arg0"]),
            json!(["bash", "--login", "-xc", "git push --force origin main"]),
            json!([
                "pwsh",
                "-NoProfile",
                "-Command",
                "git push --force origin main"
            ]),
            json!(["powershell.exe", "-command", "git push --force origin main"]),
            json!(["pwsh", "-c", "git push --force origin main"]),
            json!([
                "C:\\Windows\\System32\\cmd.exe",
                "/C",
                "git push --force origin main"
            ]),
            json!(["cmd", "/d", "/c", "git push --force origin main"]),
            json!(["CMD.EXE", "/C", "git push --force origin main"]),
            json!(["pwsh", "-com", "git push --force origin main"]),
        ] {
            assert_eq!(
                text(&json!({ "command": argv })).as_deref(),
                Some("git push --force origin main"),
                "{argv}"
            );
        }
    }

    #[test]
    fn any_other_argv_is_its_words_quoted() {
        let joined = |argv: Value| text(&json!({ "command": argv })).unwrap();
        assert_eq!(
            joined(json!(["git", "push", "--force"])),
            "git push --force"
        );
        assert_eq!(
            joined(json!(["git", "commit", "-m", "fix it"])),
            "git commit -m 'fix it'"
        );
        // Not a shell; a shell running a file; no `c` in the flag; a flag without its
        // script; a pwsh `-File`; cmd without `/c`; an operand before the flag.
        assert_eq!(joined(json!(["python3", "-c", "rm"])), "python3 -c rm");
        assert_eq!(
            joined(json!(["bash", "script.sh", "rm"])),
            "bash script.sh rm"
        );
        assert_eq!(joined(json!(["bash", "-l", "rm"])), "bash -l rm");
        assert_eq!(joined(json!(["bash", "-c"])), "bash -c");
        assert_eq!(joined(json!(["bash", "-", "-c", "x"])), "bash - -c x");
        assert_eq!(joined(json!(["bash", "--norc", "x"])), "bash --norc x");
        assert_eq!(
            joined(json!(["pwsh", "-File", "x.ps1"])),
            "pwsh -File x.ps1"
        );
        assert_eq!(joined(json!(["pwsh", "-Co", "x"])), "pwsh -Co x");
        assert_eq!(
            joined(json!(["pwsh", "a.ps1", "-Command", "x"])),
            "pwsh a.ps1 -Command x"
        );
        assert_eq!(joined(json!(["cmd", "/q", "x"])), "cmd /q x");
        assert_eq!(joined(json!(["cmd", "dir", "/c", "x"])), "cmd dir /c x");
        // `cmd /k` runs its script too.
        assert_eq!(joined(json!(["cmd", "/K", "x y"])), "x y");
        // Non-strings are skipped; the rest reads back as the same words.
        assert_eq!(joined(json!(["rm", 3, "-rf", "a b"])), "rm -rf 'a b'");
        assert_eq!(
            crate::shell::split(&joined(json!(["echo", "it's", "$HOME"]))).segments[0].argv,
            ["echo", "it's", "$HOME"]
        );
    }

    #[test]
    fn a_call_knows_whether_its_tool_is_a_shell() {
        let input = json!({"command": ["bash", "-lc", "ls"]});
        let call = Call::new("shell", &input);
        assert!(call.shell);
        assert_eq!(call.command.as_deref(), Some("ls"));
        let call = Call::new("Write", &input);
        assert!(!call.shell);
        assert_eq!(call.command, None);
        assert!(call.context.cwd.is_none() && call.context.home.is_none());
        let ctx = Context {
            cwd: Some("/w".into()),
            ..Context::default()
        };
        assert_eq!(call.at(&ctx).context.cwd.as_deref(), Some("/w"));
    }

    #[test]
    fn only_tools_that_act_on_paths_or_run_commands_have_a_place() {
        for tool in [
            "Bash",
            "PowerShell",
            "shell",
            "exec_command",
            "local_shell",
            "shell_command",
            "container.exec",
            "run_shell_command",
            "Write",
            "Edit",
            "MultiEdit",
            "NotebookEdit",
            "str_replace_based_edit_tool",
            "apply_patch",
            "mcp__fs__x",
        ] {
            assert!(acts_on_paths(tool), "{tool}");
        }
        for tool in [
            "Read",
            "Grep",
            "WebFetch",
            "TodoWrite",
            "mcp_fs_write",
            "bash",
        ] {
            assert!(!acts_on_paths(tool), "{tool}");
        }
        assert!(is_shell("Bash") && !is_shell("Write") && !is_shell("mcp__x__shell"));
    }

    #[cfg(unix)]
    #[test]
    fn realpath_resolves_a_path_or_its_parent_and_context_finds_the_repository() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        std::fs::create_dir(root.join("real")).unwrap();
        std::os::unix::fs::symlink(root.join("real"), root.join("link")).unwrap();
        let s = |p: &Path| p.to_str().unwrap().to_string();
        assert_eq!(
            realpath(&s(&root.join("link"))),
            Some(s(&root.join("real")))
        );
        assert_eq!(
            realpath(&s(&root.join("link/new.json"))),
            Some(s(&root.join("real/new.json")))
        );
        assert_eq!(realpath(&s(&root.join("gone/new.json"))), None);
        assert_eq!(
            realpath("link/new.json"),
            None,
            "relative paths are not resolved"
        );
        std::fs::create_dir(root.join(".git")).unwrap();
        let c = context(Some(&s(&root.join("real"))));
        assert_eq!(c.cwd, Some(s(&root.join("real"))));
        assert_eq!(c.repo_root, Some(s(&root)));
        assert!(c.realpath.is_some());
        assert!(c.callus_home.is_some());
        // No cwd (or an empty one): the process's.
        let own = std::env::current_dir().unwrap();
        assert_eq!(context(Some("")).cwd.as_deref(), own.to_str());
        assert_eq!(here().cwd.as_deref(), own.to_str());
        // `$HOME` as the process has it (an empty one would be no home at all).
        if let Ok(h) = std::env::var("HOME")
            && !h.is_empty()
        {
            assert_eq!(c.home.as_deref(), Some(h.as_str()));
        }
    }
}
