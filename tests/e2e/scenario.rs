//! The scenario every end-to-end run plays, and what it must prove.
//!
//! A temp repo carries a project ruleset with one rule per action; the stand-in model
//! makes six Bash calls, one per case — a `block` rule against `rm -rf` of a marker
//! directory, a `deny`, a `nudge` and a `monitor` rule against `touch` of a marker file, a
//! plain succeeding call and a failing one — then ends with a text. One client run per
//! (client, wiring) pair is played once per test process ([`play`]); everything the
//! assertions need (the requests the model got, which markers exist, the audit chain, the
//! recorded calls, `callus doctor`) is collected into an [`Outcome`] before the scratch
//! folder goes, so each `#[test]` checks one claim (see `claims`) without running the
//! client again.

use std::panic::AssertUnwindSafe;
use std::path::Path;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::harness::{self, Client, Run, Sandbox};
use super::standin::{Protocol, Request, Script, StandIn, call_id};
use super::wiring::{self, Wiring};

/// The block rule's message.
pub(crate) const BLOCK_MSG: &str = "E2E-BLOCK-MSG keep the marker directory";
/// The deny rule's message.
pub(crate) const DENY_MSG: &str = "E2E-DENY-MSG use the wrapper instead";
/// The nudge rule's message.
pub(crate) const NUDGE_MSG: &str = "E2E-NUDGE-MSG prefer --dry-run first";
/// The monitor rule's message (the agent must never see it).
pub(crate) const MONITOR_MSG: &str = "E2E-MONITOR-MSG only watched";

/// The scripted calls, in order; the discriminant is the step index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// `rm -rf <markers>/e2e-keep` (a `block` rule).
    Block = 0,
    /// `touch <markers>/e2e-deny-me` (a `deny` rule).
    Deny = 1,
    /// `touch <markers>/e2e-nudge-me` (a `nudge` rule).
    Nudge = 2,
    /// `touch <markers>/e2e-monitor-me` (a `monitor` rule).
    Monitor = 3,
    /// `touch <markers>/e2e-plain && echo …` (no rule; exits 0).
    Success = 4,
    /// `ls <markers>/e2e-does-not-exist` (no rule; exits 2).
    Failure = 5,
}

pub(crate) const STEPS: [Step; 6] = [
    Step::Block,
    Step::Deny,
    Step::Nudge,
    Step::Monitor,
    Step::Success,
    Step::Failure,
];

/// The project ruleset: one rule per action, each firing on exactly one step.
pub(crate) fn rules() -> Value {
    json!({"rules": [
        {"id": "e2e-block", "tool": "Bash", "match": "segment",
         "any": ["^rm\\s+-rf\\s+\\S*e2e-keep"], "action": "block", "severity": 90,
         "message": BLOCK_MSG},
        {"id": "e2e-deny", "tool": "Bash", "any": ["\\btouch\\s+\\S*e2e-deny-me"],
         "action": "deny", "severity": 70, "message": DENY_MSG},
        {"id": "e2e-nudge", "tool": "Bash", "any": ["\\btouch\\s+\\S*e2e-nudge-me"],
         "action": "nudge", "severity": 50, "message": NUDGE_MSG},
        {"id": "e2e-monitor", "tool": "Bash", "any": ["\\btouch\\s+\\S*e2e-monitor-me"],
         "action": "monitor", "severity": 10, "message": MONITOR_MSG}
    ]})
}

/// The command of each step.
fn commands(markers: &Path) -> Vec<String> {
    let m = |name: &str| markers.join(name).display().to_string();
    STEPS
        .iter()
        .map(|step| match step {
            Step::Block => format!("rm -rf {}", m("e2e-keep")),
            Step::Deny => format!("touch {}", m("e2e-deny-me")),
            Step::Nudge => format!("touch {}", m("e2e-nudge-me")),
            Step::Monitor => format!("touch {}", m("e2e-monitor-me")),
            Step::Success => format!("touch {} && echo e2e-ok-output", m("e2e-plain")),
            Step::Failure => format!("ls {}", m("e2e-does-not-exist")),
        })
        .collect()
}

/// Whether each step's command took effect, read from the marker files.
fn effects(markers: &Path) -> Vec<bool> {
    STEPS
        .iter()
        .map(|step| match step {
            Step::Block => !markers.join("e2e-keep/inside").exists(),
            Step::Deny => markers.join("e2e-deny-me").exists(),
            Step::Nudge => markers.join("e2e-nudge-me").exists(),
            Step::Monitor => markers.join("e2e-monitor-me").exists(),
            Step::Success => markers.join("e2e-plain").exists(),
            Step::Failure => true,
        })
        .collect()
}

/// One row of `tool_calls`.
#[derive(Debug, Clone)]
pub(crate) struct CallRow {
    /// The call id.
    pub(crate) tool_use_id: String,
    /// `pending`, `success`, `failure`, `interrupted` or `denied`.
    pub(crate) status: String,
    /// The tool.
    pub(crate) tool: String,
    /// The redacted command.
    pub(crate) command: Option<String>,
}

/// Everything one client run left behind, collected before its scratch folder goes.
pub(crate) struct Outcome {
    /// Which client.
    pub(crate) client: Client,
    /// How callus was wired in.
    pub(crate) wiring: Wiring,
    /// `claude --version` / `codex --version`.
    pub(crate) version: String,
    /// The scripted commands, by step.
    pub(crate) commands: Vec<String>,
    /// The client's run.
    pub(crate) run: Run,
    /// Every request the stand-in received.
    pub(crate) requests: Vec<Request>,
    /// The requests that consumed a script step, in step order.
    pub(crate) turns: Vec<Request>,
    /// Protocol errors the stand-in hit.
    pub(crate) standin_errors: Vec<String>,
    /// Whether each step's command took effect.
    pub(crate) effects: Vec<bool>,
    /// `callus install …` (installed wiring only).
    pub(crate) install: Option<Run>,
    /// Codex's `hooks/list` after install (installed Codex only).
    pub(crate) hooks_list: Option<Result<Value, String>>,
    /// `callus guard audit tail -n 100 --json`.
    pub(crate) audit_tail: Run,
    /// `callus guard audit verify --json`.
    pub(crate) audit_verify: Run,
    /// The `tool_calls` table.
    pub(crate) tool_calls: Result<Vec<CallRow>, String>,
    /// `callus doctor` and `callus doctor --json` (installed wiring only).
    pub(crate) doctor: Option<(Run, Run)>,
}

/// Play the scenario once. A panic on the way (a failed install, a client that did not
/// run) is returned as the error every test of this outcome reports.
pub(crate) fn play(client: Client, wiring: Wiring, exe: &Path) -> Result<Outcome, String> {
    std::panic::catch_unwind(AssertUnwindSafe(|| play_inner(client, wiring, exe))).map_err(
        |panic| {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            format!(
                "the {} scenario ({} wiring) could not be played: {what}",
                client.name(),
                wiring.as_str()
            )
        },
    )
}

fn play_inner(client: Client, wiring: Wiring, exe: &Path) -> Outcome {
    let version = harness::client_version(client, exe);
    let sandbox = Sandbox::new(&format!("{}-{}", client.name(), wiring.as_str()), exe);
    let rules_path = sandbox.repo.join(".callus/rules.json");
    std::fs::create_dir_all(rules_path.parent().expect("parent")).expect("create .callus");
    std::fs::write(&rules_path, rules().to_string()).expect("write rules");
    let check = sandbox.callus(&["guard", "check", ".callus/rules.json"], false);
    assert!(
        check.success(),
        "the e2e ruleset does not pass guard check: {}",
        check.describe()
    );
    std::fs::create_dir_all(sandbox.markers.join("e2e-keep")).expect("marker dir");
    std::fs::write(sandbox.markers.join("e2e-keep/inside"), "keep me").expect("marker file");

    let commands = commands(&sandbox.markers);
    let script = commands
        .iter()
        .fold(Script::new(), |s, c| s.bash(c.as_str()))
        .text("all done");
    let server = StandIn::start(script);
    if client == Client::Codex {
        std::fs::write(
            sandbox.codex_home.join("config.toml"),
            harness::codex_config_toml(&server.base_url()),
        )
        .expect("write codex config");
    }

    let callus = harness::callus_bin();
    let install = match (wiring, client) {
        (Wiring::Hand, Client::Claude) => {
            wiring::wire_claude(&sandbox.repo, &callus);
            None
        }
        (Wiring::Hand, Client::Codex) => {
            wiring::wire_codex(&sandbox.codex_home, &callus);
            None
        }
        (Wiring::Install, Client::Claude) => Some(wiring::install_claude(&sandbox)),
        (Wiring::Install, Client::Codex) => Some(wiring::install_codex(&sandbox)),
    };
    if let Some(run) = &install {
        assert!(run.success(), "callus install failed: {}", run.describe());
    }
    let hooks_list = (wiring == Wiring::Install && client == Client::Codex)
        .then(|| harness::codex_hooks_list(exe, &sandbox));

    let prompt = "run the e2e steps";
    let run = match client {
        Client::Claude => harness::run_claude(exe, &sandbox, &server.base_url(), prompt),
        Client::Codex => harness::run_codex(exe, &sandbox, wiring == Wiring::Hand, prompt),
    };
    harness::report_timing(
        &format!(
            "{} {version} run, {} wiring (6 tool calls, 7 model turns)",
            client.name(),
            wiring.as_str()
        ),
        run.elapsed,
    );
    assert!(
        run.success(),
        "{} failed: {}",
        client.name(),
        run.describe()
    );

    let protocol = protocol(client);
    let tool_calls = wait_for_records(
        &sandbox,
        &[
            call_id(protocol, Step::Success as usize),
            call_id(protocol, Step::Failure as usize),
        ],
    );
    let codex = client == Client::Codex;
    let doctor = (wiring == Wiring::Install).then(|| {
        (
            sandbox.callus(&["doctor"], codex),
            sandbox.callus(&["doctor", "--json"], codex),
        )
    });
    let outcome = Outcome {
        client,
        wiring,
        version,
        effects: effects(&sandbox.markers),
        requests: server.all_requests(),
        turns: server.turns(),
        standin_errors: server.errors(),
        audit_tail: sandbox.callus(&["guard", "audit", "tail", "-n", "100", "--json"], false),
        audit_verify: sandbox.callus(&["guard", "audit", "verify", "--json"], false),
        commands,
        run,
        install,
        hooks_list,
        tool_calls,
        doctor,
    };
    drop(server);
    outcome
}

pub(crate) fn protocol(client: Client) -> Protocol {
    match client {
        Client::Claude => Protocol::Messages,
        Client::Codex => Protocol::Responses,
    }
}

fn read_tool_calls(db: &Path) -> Result<Vec<CallRow>, String> {
    if !db.exists() {
        return Err(format!("no store at {}", db.display()));
    }
    let conn =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .map_err(|e| format!("open {}: {e}", db.display()))?;
    let mut stmt = conn
        .prepare("SELECT tool_use_id, status, tool, command FROM tool_calls ORDER BY started_ms")
        .map_err(|e| format!("query tool_calls: {e}"))?;
    let rows = stmt
        .query_map([], |r| {
            Ok(CallRow {
                tool_use_id: r.get(0)?,
                status: r.get(1)?,
                tool: r.get(2)?,
                command: r.get(3)?,
            })
        })
        .map_err(|e| format!("query tool_calls: {e}"))?;
    rows.collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("read tool_calls: {e}"))
}

/// The `tool_calls` rows once `ids` all have a final status, or after 3 s (Claude Code's
/// `PostToolUse*` hooks are async and may still be writing when the client exits).
fn wait_for_records(sandbox: &Sandbox, ids: &[String]) -> Result<Vec<CallRow>, String> {
    let db = sandbox.callus_home.join("callus.db");
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let rows = read_tool_calls(&db);
        let settled = rows.as_ref().is_ok_and(|rows| {
            ids.iter().all(|id| {
                rows.iter()
                    .any(|r| r.tool_use_id == *id && r.status != "pending")
            })
        });
        if settled || Instant::now() >= deadline {
            return rows;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The outcome of the scenario for `client` wired by `wiring`, played once per test
/// process; `None` (after a loud skip message) when the client is not installed. A
/// scenario that could not be played fails every test that asks for it.
pub(crate) fn outcome(client: Client, wiring: Wiring, test: &str) -> Option<&'static Outcome> {
    static OUTCOMES: [OnceLock<Result<Outcome, String>>; 4] = [
        OnceLock::new(),
        OnceLock::new(),
        OnceLock::new(),
        OnceLock::new(),
    ];
    let exe = harness::client_or_skip(client, test)?;
    let cell = &OUTCOMES[client as usize * 2 + wiring as usize];
    match cell.get_or_init(|| play(client, wiring, &exe)) {
        Ok(o) => Some(o),
        Err(e) => panic!("{e}"),
    }
}
