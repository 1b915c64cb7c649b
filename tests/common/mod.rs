//! Shared harness for the integration tests: run the real `callus` binary with a temporary
//!
//! Not every test module uses every helper, so unused ones are allowed here.
#![allow(dead_code)]
//! `CALLUS_HOME`, feed it stdin, and read back exit code, stdout and stderr.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A temporary callus home plus a temporary repository to run calls in.
pub(crate) struct Env {
    pub(crate) home: tempfile::TempDir,
    pub(crate) repo: tempfile::TempDir,
    pub(crate) vars: Vec<(String, String)>,
}

impl Env {
    /// A fresh home and a fresh git-like repo (a `.git` directory marks the root).
    pub(crate) fn new() -> Self {
        let home = tempfile::tempdir().expect("temp home");
        let repo = tempfile::tempdir().expect("temp repo");
        std::fs::create_dir_all(repo.path().join(".git")).expect("mark repo");
        Env {
            home,
            repo,
            vars: Vec::new(),
        }
    }

    /// Set an extra environment variable for every run.
    pub(crate) fn var(&mut self, k: &str, v: &str) -> &mut Self {
        self.vars.push((k.to_string(), v.to_string()));
        self
    }

    pub(crate) fn home_path(&self) -> &Path {
        self.home.path()
    }

    pub(crate) fn repo_path(&self) -> &Path {
        self.repo.path()
    }

    pub(crate) fn db(&self) -> PathBuf {
        self.home.path().join("callus.db")
    }

    /// The base command: the real binary, a clean environment, our home.
    pub(crate) fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_callus"));
        c.args(args)
            .current_dir(self.repo.path())
            .env_remove("CALLUS_RULES")
            .env_remove("CALLUS_FAIL")
            .env_remove("CALLUS_DRYRUN")
            .env_remove("CALLUS_HOST")
            .env_remove("CALLUS_DB")
            .env_remove("CODEX_HOME")
            .env_remove("CODEX_SANDBOX")
            .env_remove("GEMINI_CLI_HOME")
            .env_remove("GEMINI_SESSION_ID")
            .env_remove("GEMINI_PROJECT_DIR")
            .env_remove("CURSOR_VERSION")
            .env_remove("COPILOT_HOME")
            .env_remove("CLAUDE_CONFIG_DIR")
            // Human output is fitted to `$COLUMNS`: a test that wants it sets it.
            .env_remove("COLUMNS")
            .env("CALLUS_HOME", self.home.path())
            .env("HOME", self.home.path().join("userhome"));
        for (k, v) in &self.vars {
            c.env(k, v);
        }
        c
    }

    /// Run with `stdin` bytes.
    pub(crate) fn run(&self, args: &[&str], stdin: &[u8]) -> Output {
        run_cmd(self.cmd(args), stdin)
    }

    /// Write a file under the repo.
    pub(crate) fn write_repo(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.repo.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        p
    }

    /// Write a file under the home.
    pub(crate) fn write_home(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.home.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        p
    }
}

/// Run `cmd` feeding `stdin`, collecting all output.
pub(crate) fn run_cmd(mut cmd: Command, stdin: &[u8]) -> Output {
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn callus");
    {
        let mut pipe = child.stdin.take().unwrap();
        // The child may exit before reading everything (e.g. an oversized payload).
        let _ = pipe.write_all(stdin);
    }
    child.wait_with_output().expect("wait for callus")
}

pub(crate) fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub(crate) fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub(crate) fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", stdout(o)))
}

/// The built-in starter policy's rules, as `callus rules show starter --json` prints them (so a
/// test that must switch the starter off, or walk it, follows the shipped policy, not a copy).
pub(crate) fn starter_rules(env: &Env) -> Vec<serde_json::Value> {
    let out = env.run(&["rules", "show", "starter", "--json"], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let rules = json(&out)["rules"].as_array().cloned().unwrap_or_default();
    assert!(
        !rules.is_empty(),
        "the starter has no rules: {}",
        stdout(&out)
    );
    rules
}

/// Run `callus guard` on one `PreToolUse` call of `tool` with `input` in the test repository;
/// returns "block", "deny", "nudge" or "allow" as the host would read the answer.
pub(crate) fn guard_decision(env: &Env, tool: &str, input: &serde_json::Value) -> String {
    let payload = serde_json::json!({
        "session_id": "corpus",
        "hook_event_name": "PreToolUse",
        "prompt_id": "p",
        "cwd": env.repo_path(),
        "tool_name": tool,
        "tool_input": input,
        "tool_use_id": "t",
    });
    let out = env.run(&["guard"], payload.to_string().as_bytes());
    match out.status.code() {
        Some(2) => "block".into(),
        // A silent allow, not an internal error failing open (that says so on stderr).
        Some(0) if out.stdout.is_empty() => {
            assert!(
                out.stderr.is_empty(),
                "guard allowed {input} with something on stderr: {}",
                stderr(&out)
            );
            "allow".into()
        }
        Some(0) => {
            let v: serde_json::Value = serde_json::from_slice(&out.stdout)
                .unwrap_or_else(|e| panic!("guard printed non-JSON ({e}): {}", stdout(&out)));
            if v["hookSpecificOutput"]["permissionDecision"] == "deny" {
                "deny".into()
            } else {
                "nudge".into()
            }
        }
        other => panic!("guard exited {other:?} on {tool} {input}"),
    }
}

/// The sentence every refusal of a call with a command ends with (`callus allow-once`).
pub(crate) const ALLOW_ONCE_START: &str = " [If this refusal is wrong, only a person can let this exact call through once: ask the user to run `callus allow-once ";

/// The allow-once code a refusal printed, if it printed one.
pub(crate) fn allow_once_code(text: &str) -> Option<String> {
    let at = text.find(ALLOW_ONCE_START)? + ALLOW_ONCE_START.len();
    Some(
        text[at..]
            .chars()
            .take_while(char::is_ascii_alphanumeric)
            .collect(),
    )
}

/// `text` without its allow-once sentences, each checked for its exact shape (a six-letter
/// code, the ten-minute expiry), so tests of a refusal's own text can compare it exactly.
pub(crate) fn strip_allow_once(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(ALLOW_ONCE_START) {
        out.push_str(&rest[..at]);
        let after = &rest[at + ALLOW_ONCE_START.len()..];
        let code: String = after
            .chars()
            .take_while(char::is_ascii_alphanumeric)
            .collect();
        assert_eq!(code.len(), 6, "allow-once code in {text}");
        let tail = "` in their own terminal within 10 minutes.]";
        assert!(
            after[6..].starts_with(tail),
            "allow-once sentence in {text}"
        );
        rest = &after[6 + tail.len()..];
    }
    out.push_str(rest);
    out
}

/// `out` with the allow-once sentences taken out of stdout and stderr (see
/// [`strip_allow_once`]).
pub(crate) fn without_allow_once(mut out: Output) -> Output {
    out.stdout = strip_allow_once(&String::from_utf8_lossy(&out.stdout)).into_bytes();
    out.stderr = strip_allow_once(&String::from_utf8_lossy(&out.stderr)).into_bytes();
    out
}
