//! Gemini CLI and GitHub Copilot CLI end to end (issue 16): the real clients, offline
//! against the stand-in (Gemini CLI through `GOOGLE_GEMINI_BASE_URL` and the Gemini API;
//! Copilot CLI through its BYOK provider, `COPILOT_PROVIDER_BASE_URL` with
//! `COPILOT_PROVIDER_TYPE=anthropic`, which speaks the Messages API and calls its shell tool
//! `bash`), wired in by `callus install --gemini|--copilot --project`.
//!
//! One run per client plays four calls — a `block` rule against `rm -rf` of a marker
//! directory, a `deny` rule against `touch` of a marker file, a plain succeeding call and a
//! failing one — then `callus doctor`, then `callus uninstall`. Everything the tests check
//! is collected into a [`PeerOutcome`] first (one client run per test process).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::harness::{self, CLIENT_TIMEOUT, Run, Sandbox};
use super::scenario::{BLOCK_MSG, DENY_MSG, rules};
use super::standin::{Protocol, Request, Script, StandIn, all_text, call_id, tool_result};
use super::standin_gemini as gemini;

/// The two clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Peer {
    /// `@google/gemini-cli`.
    Gemini,
    /// `@github/copilot`.
    Copilot,
}

impl Peer {
    fn env_var(self) -> &'static str {
        match self {
            Peer::Gemini => "CALLUS_E2E_GEMINI",
            Peer::Copilot => "CALLUS_E2E_COPILOT",
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Peer::Gemini => "gemini",
            Peer::Copilot => "copilot",
        }
    }

    /// The host's slug in callus's store and reports.
    pub(crate) fn slug(self) -> &'static str {
        match self {
            Peer::Gemini => "gemini-cli",
            Peer::Copilot => "copilot-cli",
        }
    }

    fn flag(self) -> &'static str {
        match self {
            Peer::Gemini => "--gemini",
            Peer::Copilot => "--copilot",
        }
    }

    /// The project hooks file install writes.
    fn hooks_file(self) -> &'static str {
        match self {
            Peer::Gemini => ".gemini/settings.json",
            Peer::Copilot => ".github/hooks/callus.json",
        }
    }
}

/// The scripted calls, in order; the discriminant is the step index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PeerStep {
    /// `rm -rf <markers>/e2e-keep` (a `block` rule).
    Block = 0,
    /// `touch <markers>/e2e-deny-me` (a `deny` rule).
    Deny = 1,
    /// `touch <markers>/e2e-plain && echo e2e-ok-output` (no rule; exits 0).
    Success = 2,
    /// `ls <markers>/e2e-does-not-exist` (no rule; exits 2).
    Failure = 3,
}

const PEER_STEPS: [PeerStep; 4] = [
    PeerStep::Block,
    PeerStep::Deny,
    PeerStep::Success,
    PeerStep::Failure,
];

fn command(markers: &Path, step: PeerStep) -> String {
    let m = |name: &str| markers.join(name).display().to_string();
    match step {
        PeerStep::Block => format!("rm -rf {}", m("e2e-keep")),
        PeerStep::Deny => format!("touch {}", m("e2e-deny-me")),
        PeerStep::Success => format!("touch {} && echo e2e-ok-output", m("e2e-plain")),
        PeerStep::Failure => format!("ls {}", m("e2e-does-not-exist")),
    }
}

/// A pre-existing project file install must leave byte-identical after uninstall
/// (Gemini CLI's project settings, written with unusual spacing and a trailing key order).
const GEMINI_PROJECT_SETTINGS: &str =
    "{\n    \"ui\":   {\"hideTips\": true},\n  \"model\": {\"maxSessionTurns\": 40}\n}\n";

/// What one run left behind.
pub(crate) struct PeerOutcome {
    pub(crate) peer: Peer,
    pub(crate) version: String,
    pub(crate) commands: Vec<String>,
    pub(crate) run: Run,
    pub(crate) install: Run,
    pub(crate) turns: Vec<Request>,
    pub(crate) standin_errors: Vec<String>,
    /// Whether the marker directory survived the `rm -rf`.
    pub(crate) kept: bool,
    /// Whether `touch` of the denied marker happened.
    pub(crate) denied_touched: bool,
    /// Whether the plain call ran.
    pub(crate) plain_ran: bool,
    /// `(host, status, command)` of every recorded call.
    pub(crate) calls: Result<Vec<(String, String, String)>, String>,
    /// `callus doctor --json`.
    pub(crate) doctor: Run,
    pub(crate) uninstall: Run,
    /// The project files before install and after uninstall: `(path, bytes or None)`.
    pub(crate) before: Vec<(String, Option<Vec<u8>>)>,
    pub(crate) after: Vec<(String, Option<Vec<u8>>)>,
}

fn snapshot(repo: &Path, rels: &[&str]) -> Vec<(String, Option<Vec<u8>>)> {
    rels.iter()
        .map(|r| ((*r).to_string(), std::fs::read(repo.join(r)).ok()))
        .collect()
}

/// The files and folders whose bytes (or absence) the round trip must keep.
const WATCHED: &[&str] = &[
    ".gemini/settings.json",
    ".gemini",
    ".github/hooks/callus.json",
    ".github/hooks",
    ".github",
];

fn snapshot_all(repo: &Path) -> Vec<(String, Option<Vec<u8>>)> {
    let mut out = snapshot(repo, WATCHED);
    for (rel, bytes) in &mut out {
        let p = repo.join(rel.as_str());
        if p.is_dir() {
            *bytes = Some(b"<dir>".to_vec());
        }
    }
    out
}

fn play(peer: Peer, exe: &Path) -> PeerOutcome {
    let version = harness::client_version_of(peer.name(), exe);
    let sandbox = Sandbox::new(peer.name(), exe);
    let rules_path = sandbox.repo.join(".callus/rules.json");
    std::fs::create_dir_all(rules_path.parent().expect("parent")).expect("create .callus");
    std::fs::write(&rules_path, rules().to_string()).expect("write rules");
    std::fs::create_dir_all(sandbox.markers.join("e2e-keep")).expect("marker dir");
    std::fs::write(sandbox.markers.join("e2e-keep/inside"), "keep me").expect("marker file");
    if peer == Peer::Gemini {
        std::fs::create_dir_all(sandbox.repo.join(".gemini")).expect(".gemini");
        std::fs::write(
            sandbox.repo.join(".gemini/settings.json"),
            GEMINI_PROJECT_SETTINGS,
        )
        .expect("project settings");
    }
    let before = snapshot_all(&sandbox.repo);

    let commands: Vec<String> = PEER_STEPS
        .iter()
        .map(|s| command(&sandbox.markers, *s))
        .collect();
    let script = commands
        .iter()
        .fold(Script::new(), |s, c| s.bash(c.as_str()))
        .text("all done");
    let server = StandIn::start(script);

    let install = sandbox.callus(&["install", peer.flag(), "--project"], false);
    assert!(
        install.success(),
        "callus install failed: {}",
        install.describe()
    );

    let prompt = "run the e2e steps";
    let run = match peer {
        Peer::Gemini => run_gemini(exe, &sandbox, &server.base_url(), prompt),
        Peer::Copilot => run_copilot(exe, &sandbox, &server.base_url(), prompt),
    };
    harness::report_timing(
        &format!(
            "{} {version} run, install wiring (4 tool calls)",
            peer.name()
        ),
        run.elapsed,
    );
    let calls = wait_for_calls(&sandbox, &commands[PeerStep::Failure as usize]);
    // Doctor asks `<client> --version` with a 10 s limit, in its own environment: warm that
    // environment first (Copilot CLI unpacks itself into a new HOME; Node's compile cache
    // is per TMPDIR), or a loaded CI machine reads as "did not answer".
    let mut warm = sandbox.command(exe);
    warm.arg("--version");
    let _ = harness::run_bounded(warm, Duration::from_secs(120));
    let doctor = sandbox.callus(&["doctor", "--json"], false);
    let uninstall = sandbox.callus(&["uninstall", peer.flag(), "--project"], false);
    let after = snapshot_all(&sandbox.repo);
    let outcome = PeerOutcome {
        peer,
        version,
        kept: sandbox.markers.join("e2e-keep/inside").exists(),
        denied_touched: sandbox.markers.join("e2e-deny-me").exists(),
        plain_ran: sandbox.markers.join("e2e-plain").exists(),
        commands,
        run,
        install,
        turns: server.turns(),
        standin_errors: server.errors(),
        calls,
        doctor,
        uninstall,
        before,
        after,
    };
    drop(server);
    outcome
}

/// `$HOME/.gemini/settings.json` for an offline run: API-key auth (the key goes to the
/// stand-in), no folder-trust prompt, no telemetry or update checks.
fn gemini_user_settings() -> Value {
    json!({
        "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": false}},
        "privacy": {"usageStatisticsEnabled": false},
        "general": {"disableAutoUpdate": true, "disableUpdateNag": true},
        "telemetry": {"enabled": false}
    })
}

/// `gemini -m gemini-2.5-flash -p PROMPT --yolo -o json`: an explicit model skips the model
/// router (its side calls want a JSON classification the stand-in does not script).
fn run_gemini(exe: &Path, sandbox: &Sandbox, base_url: &str, prompt: &str) -> Run {
    let settings = sandbox.home.join(".gemini/settings.json");
    std::fs::create_dir_all(settings.parent().expect("parent")).expect(".gemini");
    std::fs::write(&settings, gemini_user_settings().to_string()).expect("user settings");
    let mut cmd = sandbox.command(exe);
    cmd.env("GEMINI_API_KEY", "e2e-standin-key")
        .env("GOOGLE_GEMINI_BASE_URL", base_url)
        .args([
            "-m",
            "gemini-2.5-flash",
            "-p",
            prompt,
            "--yolo",
            "-o",
            "json",
        ]);
    harness::run_bounded(cmd, CLIENT_TIMEOUT)
}

/// `copilot -p PROMPT --allow-all` (tools and paths: the markers are outside the repo) with the BYOK provider pointed at the stand-in
/// and `COPILOT_OFFLINE` (no GitHub sign-in, no telemetry). The self-extracting binary's
/// package cache is shared between runs (`COPILOT_CACHE_HOME`).
fn run_copilot(exe: &Path, sandbox: &Sandbox, base_url: &str, prompt: &str) -> Run {
    // Copilot CLI finds `.github/hooks` at the root `git` reports, so the sandbox's repo
    // must be a real repository (an empty `.git` folder would send it up to the enclosing
    // checkout).
    let mut git = sandbox.command(Path::new("git"));
    git.args(["init", "-q"]);
    let init = harness::run_bounded(git, Duration::from_secs(30));
    assert!(init.success(), "git init: {}", init.describe());
    // Measured on 1.0.102: in prompt mode it loads repository hooks only from a trusted
    // folder ("Loading repo hooks in prompt mode (folder is trusted or opt-in set)" in its
    // log); trust lives in `~/.copilot/config.json` `trustedFolders`.
    let config = sandbox.home.join(".copilot/config.json");
    std::fs::create_dir_all(config.parent().expect("parent")).expect(".copilot");
    std::fs::write(
        &config,
        json!({"trustedFolders": [sandbox.repo]}).to_string(),
    )
    .expect("copilot config");
    let mut cmd = sandbox.command(exe);
    cmd.env("COPILOT_PROVIDER_BASE_URL", base_url)
        .env("COPILOT_PROVIDER_TYPE", "anthropic")
        .env("COPILOT_PROVIDER_API_KEY", "sk-ant-e2e-standin")
        .env("COPILOT_MODEL", "claude-sonnet-4.5")
        .env("COPILOT_OFFLINE", "true")
        .env("COPILOT_AUTO_UPDATE", "false")
        .env("COPILOT_CACHE_HOME", copilot_cache())
        .args(["-p", prompt, "--allow-all", "--no-color"]);
    harness::run_bounded(cmd, CLIENT_TIMEOUT)
}

fn copilot_cache() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("e2e-copilot-cache");
    std::fs::create_dir_all(&dir).expect("copilot cache");
    dir
}

fn read_calls(db: &Path) -> Result<Vec<(String, String, String)>, String> {
    if !db.exists() {
        return Err(format!("no store at {}", db.display()));
    }
    let conn =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .map_err(|e| format!("open {}: {e}", db.display()))?;
    let mut stmt = conn
        .prepare("SELECT host, status, COALESCE(command, '') FROM tool_calls ORDER BY started_ms")
        .map_err(|e| format!("query tool_calls: {e}"))?;
    let rows = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .map_err(|e| format!("query tool_calls: {e}"))?;
    rows.collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("read tool_calls: {e}"))
}

/// The recorded calls once the failing one has its outcome, or after 3 s.
fn wait_for_calls(sandbox: &Sandbox, last: &str) -> Result<Vec<(String, String, String)>, String> {
    let db = sandbox.callus_home.join("callus.db");
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let rows = read_calls(&db);
        let settled = rows
            .as_ref()
            .is_ok_and(|r| r.iter().any(|(_, s, c)| c == last && s != "pending"));
        if settled || Instant::now() >= deadline {
            return rows;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The outcome for `peer`, played once per test process; `None` after a loud skip when the
/// client is not installed.
pub(crate) fn outcome(peer: Peer, test: &str) -> Option<&'static PeerOutcome> {
    static OUTCOMES: [OnceLock<Result<PeerOutcome, String>>; 2] =
        [OnceLock::new(), OnceLock::new()];
    let exe = harness::exe_or_skip(peer.env_var(), peer.name(), test)?;
    let cell = &OUTCOMES[peer as usize];
    let played = cell.get_or_init(|| {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| play(peer, &exe))).map_err(|p| {
            let what = p
                .downcast_ref::<&str>()
                .map(|s| (*s).to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            format!("the {} scenario could not be played: {what}", peer.name())
        })
    });
    match played {
        Ok(o) => Some(o),
        Err(e) => panic!("{e}"),
    }
}

impl PeerOutcome {
    fn what(&self) -> String {
        format!("{} {}", self.peer.name(), self.version)
    }

    /// The client ran every step against the stand-in and exited 0.
    pub(crate) fn assert_ran(&self) {
        assert!(
            self.run.success() && self.standin_errors.is_empty(),
            "{}: {}\nstand-in errors: {:?}",
            self.what(),
            self.run.describe(),
            self.standin_errors
        );
        assert!(
            self.turns.len() > PEER_STEPS.len(),
            "{}: {} turns, want one per step plus the last: {}",
            self.what(),
            self.turns.len(),
            self.run.describe()
        );
    }

    /// What the model was shown as `step`'s result: Copilot CLI's `tool_result` block, or
    /// Gemini CLI's `functionResponse` part, in the next turn's request.
    fn model_saw_after(&self, step: PeerStep) -> String {
        let i = step as usize;
        let Some(next) = self.turns.iter().find(|r| r.step() == Some(i + 1)) else {
            return String::new();
        };
        let result = match self.peer {
            Peer::Gemini => gemini::function_response(&next.body, &call_id(Protocol::Gemini, i)),
            Peer::Copilot => tool_result(&next.body, &call_id(Protocol::Messages, i)),
        };
        result.map_or_else(
            || format!("(no result for step {i} in {})", next.body),
            |r| all_text(&r),
        )
    }

    /// The `block` rule stopped the call (the marker directory is still there) and the
    /// model was told why.
    pub(crate) fn assert_block(&self) {
        self.assert_ran();
        assert!(
            self.kept,
            "{}: rm -rf ran: {}",
            self.what(),
            self.run.describe()
        );
        let saw = self.model_saw_after(PeerStep::Block);
        assert!(
            saw.contains(BLOCK_MSG),
            "{}: the model was not shown the block reason; it saw:\n{saw}",
            self.what()
        );
    }

    /// The `deny` rule refused the call in the host's shape and the model got the reason.
    pub(crate) fn assert_deny(&self) {
        self.assert_ran();
        assert!(
            !self.denied_touched,
            "{}: the denied touch ran",
            self.what()
        );
        let saw = self.model_saw_after(PeerStep::Deny);
        assert!(
            saw.contains(DENY_MSG),
            "{}: the model was not shown the deny reason; it saw:\n{saw}",
            self.what()
        );
    }

    /// A call no rule matches ran, and the hooks added nothing to what the model saw.
    pub(crate) fn assert_benign_untouched(&self) {
        self.assert_ran();
        assert!(
            self.plain_ran,
            "{}: the plain call did not run",
            self.what()
        );
        let saw = self.model_saw_after(PeerStep::Success);
        assert!(
            saw.contains("e2e-ok-output") && !saw.contains("callus"),
            "{}: the plain call's result is not its own output; the model saw:\n{saw}",
            self.what()
        );
    }

    /// The recorder stored the calls under the host, the failing one as a failure.
    pub(crate) fn assert_recorded(&self) {
        self.assert_ran();
        let calls = self
            .calls
            .as_ref()
            .unwrap_or_else(|e| panic!("{}: {e}", self.what()));
        let status = |step: PeerStep| {
            let cmd = &self.commands[step as usize];
            calls
                .iter()
                .find(|(_, _, c)| c == cmd)
                .map(|(h, s, _)| (h.as_str(), s.as_str()))
        };
        assert_eq!(
            status(PeerStep::Failure),
            Some((self.peer.slug(), "failure")),
            "{}: the failing call: {calls:#?}",
            self.what()
        );
        assert_eq!(
            status(PeerStep::Success),
            Some((self.peer.slug(), "success")),
            "{}: the plain call: {calls:#?}",
            self.what()
        );
    }

    /// `callus doctor` saw the project hooks and the client's version as verified.
    pub(crate) fn assert_doctor(&self) {
        let report: Value = serde_json::from_str(&self.doctor.stdout)
            .unwrap_or_else(|e| panic!("doctor --json ({e}): {}", self.doctor.describe()));
        let checks = report["checks"].as_array().cloned().unwrap_or_default();
        let has = |area: &str, status: &str, needle: &str| {
            checks.iter().any(|c| {
                c["area"] == area
                    && c["status"] == status
                    && c["message"].as_str().is_some_and(|m| m.contains(needle))
            })
        };
        assert!(
            has("wiring", "ok", &format!("{} project", self.peer.slug())),
            "{}: no ok wiring check: {checks:#?}",
            self.what()
        );
        let number = self
            .version
            .split_whitespace()
            .find(|w| w.starts_with(char::is_numeric));
        let number = number.unwrap_or("?").trim_end_matches('.');
        assert!(
            has("clients", "ok", number),
            "{}: the client version {number} is not reported verified: {checks:#?}",
            self.what()
        );
    }

    /// `install` then `uninstall` left the project's files and folders as they were.
    pub(crate) fn assert_round_trip(&self) {
        assert!(self.install.success(), "{}", self.install.describe());
        assert!(self.uninstall.success(), "{}", self.uninstall.describe());
        assert!(
            self.before
                .iter()
                .any(|(r, b)| r == self.peer.hooks_file() && b.is_some())
                == (self.peer == Peer::Gemini),
            "the Gemini scenario starts from an existing project file, the Copilot one from none"
        );
        for ((rel, b), (_, a)) in self.before.iter().zip(&self.after) {
            assert!(
                b == a,
                "{}: {rel} differs after install + uninstall: {:?} -> {:?}\n{}",
                self.what(),
                b.as_deref().map(String::from_utf8_lossy),
                a.as_deref().map(String::from_utf8_lossy),
                self.uninstall.describe()
            );
        }
    }
}
