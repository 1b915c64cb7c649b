//! Running the real clients: finding them, scratch folders, the environment they run in,
//! bounded runs, their config files, and `codex app-server` `hooks/list`.
//!
//! Guarantees: a client runs with a cleared environment (only `PATH`, `HOME`, `TMPDIR`,
//! `LANG`, `CALLUS_HOME` and the variables it needs), so running the tests from inside a
//! Claude Code or Codex session cannot leak that session's keys or homes into the client
//! under test; every child is killed after [`CLIENT_TIMEOUT`]; a missing client is never a
//! silent pass — it is a loud skip on the real stderr, or a failure when
//! `CALLUS_E2E_REQUIRED=1`.

use std::ffi::OsString;
use std::io::{BufRead as _, BufReader, Read, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// How long one client run may take before it is killed.
pub(crate) const CLIENT_TIMEOUT: Duration = Duration::from_secs(120);

/// The callus binary under test.
pub(crate) fn callus_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_callus"))
}

/// Write a line to the process's real stderr, past libtest's output capture, so skips,
/// versions and timings show in the suite's output even for passing tests.
pub(crate) fn announce(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// The two agent clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Client {
    /// `@anthropic-ai/claude-code`.
    Claude,
    /// `@openai/codex`.
    Codex,
}

impl Client {
    fn env_var(self) -> &'static str {
        match self {
            Client::Claude => "CALLUS_E2E_CLAUDE",
            Client::Codex => "CALLUS_E2E_CODEX",
        }
    }

    /// The executable's name.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Client::Claude => "claude",
            Client::Codex => "codex",
        }
    }
}

/// The client's executable from `$CALLUS_E2E_CLAUDE` / `$CALLUS_E2E_CODEX` (set by `.ci/run`
/// from `scripts/install-clients`), or `None` after a loud skip message. With
/// `CALLUS_E2E_REQUIRED=1` a missing client fails the test instead.
pub(crate) fn client_or_skip(client: Client, test: &str) -> Option<PathBuf> {
    exe_or_skip(client.env_var(), client.name(), test)
}

/// The executable named by `$var`, or `None` after a loud skip message (a failure with
/// `CALLUS_E2E_REQUIRED=1`).
pub(crate) fn exe_or_skip(var: &str, name: &str, test: &str) -> Option<PathBuf> {
    let found = std::env::var_os(var)
        .filter(|p| !p.is_empty())
        .map(PathBuf::from);
    let problem = match &found {
        None => format!("{name} not installed"),
        Some(p) if !p.is_file() => format!("{name} not found at {}", p.display()),
        Some(_) => String::new(),
    };
    if problem.is_empty() {
        return found;
    }
    let msg = format!(
        "E2E SKIPPED: {test}: {problem} ({var} unset or wrong; run scripts/install-clients, or .ci/run)"
    );
    assert!(
        std::env::var_os("CALLUS_E2E_REQUIRED").is_none_or(|v| v != "1"),
        "{msg} — and CALLUS_E2E_REQUIRED=1, so this is a failure"
    );
    announce(&format!("\n!!!!!!!!!! {msg} !!!!!!!!!!\n"));
    None
}

/// `<exe> --version`, asked once per executable and announced in the suite's output.
pub(crate) fn client_version(client: Client, exe: &Path) -> String {
    static VERSIONS: OnceLock<std::sync::Mutex<Vec<(PathBuf, String)>>> = OnceLock::new();
    let cache = VERSIONS.get_or_init(Default::default);
    if let Some((_, v)) = cache.lock().unwrap().iter().find(|(p, _)| p == exe) {
        return v.clone();
    }
    let version = client_version_of(client.name(), exe);
    cache
        .lock()
        .unwrap()
        .push((exe.to_path_buf(), version.clone()));
    version
}

/// `<exe> --version` of any client, announced in the suite's output.
pub(crate) fn client_version_of(name: &str, exe: &Path) -> String {
    let mut cmd = Command::new(exe);
    cmd.arg("--version");
    cmd.env("PATH", base_path());
    let run = run_bounded(cmd, Duration::from_secs(60));
    let version = run.stdout.lines().next().unwrap_or("").trim().to_string();
    announce(&format!("E2E CLIENT: {name} {version} ({})", exe.display()));
    version
}

/// Print one timing line into the suite's output.
pub(crate) fn report_timing(what: &str, d: Duration) {
    announce(&format!("E2E TIMING {what}: {:.2}s", d.as_secs_f64()));
}

// ---------------------------------------------------------------------------------------
// Scratch folders

/// A fresh folder under `target/tmp` (not `/tmp`: Codex refuses to set up its helper
/// aliases under a temporary directory), removed on drop unless the test panicked or
/// `CALLUS_E2E_KEEP=1`.
pub(crate) struct Scratch {
    dir: Option<tempfile::TempDir>,
    /// The folder, canonical (the clients report canonical paths).
    pub(crate) path: PathBuf,
}

impl Scratch {
    /// A new folder named after `name`.
    pub(crate) fn new(name: &str) -> Scratch {
        let dir = tempfile::Builder::new()
            .prefix(&format!("e2e-{name}-"))
            .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
            .expect("create scratch dir");
        let path = dir.path().canonicalize().expect("canonicalize scratch dir");
        Scratch {
            dir: Some(dir),
            path,
        }
    }

    /// A subfolder, created.
    pub(crate) fn dir(&self, rel: &str) -> PathBuf {
        let p = self.path.join(rel);
        std::fs::create_dir_all(&p).expect("create dir");
        p
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let keep =
            thread::panicking() || std::env::var_os("CALLUS_E2E_KEEP").is_some_and(|v| v == "1");
        if let (true, Some(dir)) = (keep, self.dir.take()) {
            announce(&format!(
                "E2E: kept scratch folder {}",
                dir.keep().display()
            ));
        }
    }
}

// ---------------------------------------------------------------------------------------
// Bounded child processes

/// A finished (or killed) child.
pub(crate) struct Run {
    /// The exit status (`None` when waiting failed).
    pub(crate) status: Option<ExitStatus>,
    /// Everything it wrote to stdout.
    pub(crate) stdout: String,
    /// Everything it wrote to stderr.
    pub(crate) stderr: String,
    /// Wall time.
    pub(crate) elapsed: Duration,
    /// Whether it was killed after the timeout.
    pub(crate) timed_out: bool,
}

impl Run {
    /// Exit 0.
    pub(crate) fn success(&self) -> bool {
        self.status.is_some_and(|s| s.success())
    }

    /// Status and output, for assertion messages.
    pub(crate) fn describe(&self) -> String {
        format!(
            "status {:?} (timed out: {}) after {:.2?}\n--- stdout\n{}\n--- stderr\n{}",
            self.status, self.timed_out, self.elapsed, self.stdout, self.stderr
        )
    }
}

fn drain(mut r: impl Read + Send + 'static) -> thread::JoinHandle<String> {
    thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = r.read_to_end(&mut buf);
        String::from_utf8_lossy(&buf).into_owned()
    })
}

/// Run to completion with stdin at /dev/null, killing the process after `timeout`.
pub(crate) fn run_bounded(mut cmd: Command, timeout: Duration) -> Run {
    let start = Instant::now();
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap_or_else(|e| panic!("spawn {cmd:?}: {e}"));
    let out = drain(child.stdout.take().expect("stdout"));
    let err = drain(child.stderr.take().expect("stderr"));
    let mut timed_out = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) if start.elapsed() > timeout => {
                timed_out = true;
                let _ = child.kill();
                break child.wait().ok();
            }
            Ok(None) => thread::sleep(Duration::from_millis(20)),
            Err(_) => break None,
        }
    };
    Run {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
        elapsed: start.elapsed(),
        timed_out,
    }
}

/// The `PATH` the tests were started with.
fn base_path() -> OsString {
    std::env::var_os("PATH").unwrap_or_else(|| OsString::from("/usr/bin:/bin"))
}

/// `dirs` in front of the inherited `PATH`.
pub(crate) fn path_with(dirs: &[&Path]) -> OsString {
    let mut all: Vec<PathBuf> = dirs.iter().map(|d| d.to_path_buf()).collect();
    all.extend(std::env::split_paths(&base_path()));
    std::env::join_paths(all).expect("PATH entries without ':'")
}

/// Where a run of a client or of callus happens: the folders of one scenario.
pub(crate) struct Sandbox {
    /// Owns every folder below (removed with it).
    _scratch: Scratch,
    /// The repository the agent works in (a `.git` folder marks its root).
    pub(crate) repo: PathBuf,
    /// `HOME` of every child.
    pub(crate) home: PathBuf,
    /// `TMPDIR` of every child (short: Claude Code puts sockets there).
    pub(crate) tmp: PathBuf,
    /// `CALLUS_HOME`.
    pub(crate) callus_home: PathBuf,
    /// `CODEX_HOME`.
    pub(crate) codex_home: PathBuf,
    /// Where the scripted commands leave marker files.
    pub(crate) markers: PathBuf,
    /// `PATH` of every child: the callus binary's folder, the client's, then the inherited.
    pub(crate) path: OsString,
}

impl Sandbox {
    /// Fresh folders for a scenario named `name`, with `client_exe`'s folder on `PATH`.
    pub(crate) fn new(name: &str, client_exe: &Path) -> Sandbox {
        let scratch = Scratch::new(name);
        let repo = scratch.dir("repo");
        std::fs::create_dir_all(repo.join(".git")).expect("mark repo root");
        let bin = callus_bin();
        let path = path_with(&[
            bin.parent().expect("callus binary folder"),
            client_exe.parent().expect("client folder"),
        ]);
        Sandbox {
            home: scratch.dir("home"),
            tmp: scratch.dir("tmp"),
            callus_home: scratch.dir("callus-home"),
            codex_home: scratch.dir("codex-home"),
            markers: scratch.dir("markers"),
            repo,
            path,
            _scratch: scratch,
        }
    }

    /// A command with the sandbox's environment only, run in the repo.
    pub(crate) fn command(&self, program: &Path) -> Command {
        let mut cmd = Command::new(program);
        cmd.env_clear()
            .current_dir(&self.repo)
            .env("PATH", &self.path)
            .env("HOME", &self.home)
            .env("TMPDIR", &self.tmp)
            .env("LANG", "C.UTF-8")
            .env("CALLUS_HOME", &self.callus_home);
        cmd
    }

    /// Run the callus binary under test with `args`; `codex` adds `CODEX_HOME`.
    pub(crate) fn callus(&self, args: &[&str], codex: bool) -> Run {
        let mut cmd = self.command(&callus_bin());
        if codex {
            cmd.env("CODEX_HOME", &self.codex_home);
        }
        cmd.args(args);
        run_bounded(cmd, Duration::from_secs(60))
    }
}

// ---------------------------------------------------------------------------------------
// Claude Code

/// `claude -p PROMPT --output-format json --allowedTools Bash` in the repo, the Messages
/// API pointed at the stand-in, nothing else contacted (measured with strace).
pub(crate) fn run_claude(exe: &Path, sandbox: &Sandbox, base_url: &str, prompt: &str) -> Run {
    let mut cmd = sandbox.command(exe);
    cmd.env("ANTHROPIC_BASE_URL", base_url)
        .env("ANTHROPIC_API_KEY", "sk-ant-e2e-standin")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_TELEMETRY", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .args([
            "-p",
            prompt,
            "--output-format",
            "json",
            "--allowedTools",
            "Bash",
        ]);
    run_bounded(cmd, CLIENT_TIMEOUT)
}

// ---------------------------------------------------------------------------------------
// Codex

/// `$CODEX_HOME/config.toml` for the stand-in provider, plus the settings that stop Codex
/// 0.169 from looking up chatgpt.com / api.github.com (with them only 127.0.0.1 is
/// contacted, measured with strace).
pub(crate) fn codex_config_toml(base_url: &str) -> String {
    format!(
        r#"model = "gpt-5.5"
model_provider = "standin"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false

[analytics]
enabled = false

[features]
plugins = false
remote_plugin = false
apps = false

[model_providers.standin]
name = "standin"
base_url = "{base_url}/v1"
wire_api = "responses"
env_key = "STANDIN_API_KEY"
request_max_retries = 0
stream_max_retries = 0
"#
    )
}

/// `codex exec --skip-git-repo-check [--dangerously-bypass-hook-trust] --json PROMPT` in
/// the repo, with `CODEX_HOME` set.
pub(crate) fn run_codex(
    exe: &Path,
    sandbox: &Sandbox,
    bypass_hook_trust: bool,
    prompt: &str,
) -> Run {
    let mut cmd = sandbox.command(exe);
    cmd.env("CODEX_HOME", &sandbox.codex_home)
        .env("STANDIN_API_KEY", "sk-e2e-standin")
        .args(["exec", "--skip-git-repo-check"]);
    if bypass_hook_trust {
        cmd.arg("--dangerously-bypass-hook-trust");
    }
    cmd.arg("--json")
        .arg("-o")
        .arg(sandbox.tmp.join("last-message.txt"))
        .arg(prompt);
    run_bounded(cmd, CLIENT_TIMEOUT)
}

/// A `codex app-server` child speaking JSON-RPC 2.0 over stdio (one JSON object per line),
/// initialized. Killed on drop.
struct CodexAppServer {
    child: Child,
    stdin: ChildStdin,
    rx: mpsc::Receiver<Value>,
    next_id: u64,
}

impl CodexAppServer {
    fn start(exe: &Path, sandbox: &Sandbox) -> Result<Self, String> {
        let mut cmd = sandbox.command(exe);
        cmd.env("CODEX_HOME", &sandbox.codex_home)
            .arg("app-server")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("spawn codex app-server: {e}"))?;
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel::<Value>();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Ok(v) = serde_json::from_str::<Value>(&line)
                    && tx.send(v).is_err()
                {
                    break;
                }
            }
        });
        let mut server = CodexAppServer {
            child,
            stdin,
            rx,
            next_id: 1,
        };
        server.request(
            "initialize",
            &json!({"clientInfo": {"name": "callus-e2e", "version": env!("CARGO_PKG_VERSION")}}),
        )?;
        server.send(&json!({"jsonrpc": "2.0", "method": "initialized"}))?;
        Ok(server)
    }

    fn send(&mut self, v: &Value) -> Result<(), String> {
        writeln!(self.stdin, "{v}")
            .and_then(|()| self.stdin.flush())
            .map_err(|e| format!("write to codex app-server: {e}"))
    }

    /// Send a request and wait (30 s at most) for its result.
    fn request(&mut self, method: &str, params: &Value) -> Result<Value, String> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(v) if v.get("id").and_then(Value::as_u64) == Some(id) => {
                    if let Some(err) = v.get("error") {
                        return Err(format!("{method}: {err}"));
                    }
                    return Ok(v.get("result").cloned().unwrap_or(Value::Null));
                }
                Ok(_) => {} // a notification
                Err(_) => return Err(format!("no answer to {method} from codex app-server")),
            }
        }
    }
}

impl Drop for CodexAppServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Codex's own view of the hooks for the repo: `hooks/list`'s `hooks` array. Each entry has
/// `key`, `eventName`, `matcher`, `command`, `currentHash`, `trustStatus` (`untrusted` |
/// `trusted` | `modified`), `source`, `sourcePath`, …
pub(crate) fn codex_hooks_list(exe: &Path, sandbox: &Sandbox) -> Result<Value, String> {
    let mut server = CodexAppServer::start(exe, sandbox)?;
    let result = server.request("hooks/list", &json!({"cwds": [sandbox.repo]}))?;
    result
        .pointer("/data/0/hooks")
        .cloned()
        .ok_or_else(|| format!("unexpected hooks/list answer: {result}"))
}
