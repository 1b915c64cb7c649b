//! The scenario every end-to-end run plays, and what it must prove.
//!
//! A temp repo carries a project ruleset with one rule per action; the stand-in model
//! makes six Bash calls, one per case — a `block` rule against `rm -rf` of a marker
//! directory, a `deny`, a `nudge` and a `monitor` rule against `touch` of a marker file, a
//! plain succeeding call and a failing one — then ends with a text. One client run per
//! (client, wiring) pair is played once per test process ([`play`]); everything the
//! assertions need (the requests the model got, which markers exist, the audit chain, the
//! recorded calls, `callus doctor`) is collected into an [`Outcome`] before the scratch
//! folder goes, so each `#[test]` checks one claim without running the client again.

use std::panic::AssertUnwindSafe;
use std::path::Path;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::harness::{self, Client, Run, Sandbox};
use super::standin::{self, Protocol, Request, Script, StandIn, call_id};
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

const STEPS: [Step; 6] = [
    Step::Block,
    Step::Deny,
    Step::Nudge,
    Step::Monitor,
    Step::Success,
    Step::Failure,
];

/// The project ruleset: one rule per action, each firing on exactly one step.
fn rules() -> Value {
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

fn protocol(client: Client) -> Protocol {
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

/// What the model was shown as a call's result.
#[derive(Debug)]
struct ModelSaw {
    /// The client reported the call as refused by a hook.
    refused: bool,
    /// The result's text.
    text: String,
}

impl Outcome {
    fn id(&self, step: Step) -> String {
        call_id(protocol(self.client), step as usize)
    }

    fn what(&self) -> String {
        format!(
            "{} {} ({} wiring)",
            self.client.name(),
            self.version,
            self.wiring.as_str()
        )
    }

    /// The client ran to the end against the stand-in: one turn per step plus the last.
    fn assert_client_ran(&self) {
        assert!(
            self.standin_errors.is_empty(),
            "{}: stand-in errors: {:?}",
            self.what(),
            self.standin_errors
        );
        assert_eq!(
            self.turns.len(),
            STEPS.len() + 1,
            "{}: one model turn per scripted call plus the final one; got {}\n{}",
            self.what(),
            self.turns.len(),
            self.run.describe()
        );
        // Every model request went to the stand-in's API with the stand-in's key.
        let (target, header, key) = match self.client {
            Client::Claude => ("/v1/messages?beta=true", "x-api-key", "sk-ant-e2e-standin"),
            Client::Codex => ("/v1/responses", "authorization", "Bearer sk-e2e-standin"),
        };
        for t in &self.turns {
            assert_eq!((t.target.as_str(), t.header(header)), (target, Some(key)));
        }
    }

    /// `callus install`'s output, for failure messages.
    fn install_output(&self) -> String {
        self.install
            .as_ref()
            .map_or_else(|| "(wired by hand)".into(), Run::describe)
    }

    /// The result the client sent back for `step`'s call, in the next turn.
    fn model_saw(&self, step: Step) -> ModelSaw {
        let id = self.id(step);
        let next = standin::request_after_step(&self.turns, step as usize)
            .unwrap_or_else(|| panic!("{}: no turn after step {step:?}", self.what()));
        let item = standin::tool_result(&next.body, &id)
            .unwrap_or_else(|| panic!("{}: no result for {id} in the next turn", self.what()));
        match self.client {
            Client::Claude => {
                let text = standin::all_text(&item["content"]);
                let refused =
                    item["is_error"] == true && text.starts_with("PreToolUse:Bash hook error: ");
                ModelSaw { refused, text }
            }
            Client::Codex => {
                let text = item["output"].as_str().unwrap_or_default().to_string();
                let refused = text.starts_with("Command blocked by PreToolUse hook: ");
                ModelSaw { refused, text }
            }
        }
    }

    /// The audit records (from `audit tail --json`) of `step`'s call.
    fn audit_of(&self, step: Step) -> Vec<Value> {
        let id = self.id(step);
        self.audit_records()
            .into_iter()
            .filter(|r| r["tool_use_id"] == id.as_str())
            .collect()
    }

    fn audit_records(&self) -> Vec<Value> {
        assert!(
            self.audit_tail.success(),
            "{}: audit tail failed: {}",
            self.what(),
            self.audit_tail.describe()
        );
        let v: Value = serde_json::from_str(&self.audit_tail.stdout).unwrap_or_else(|e| {
            panic!(
                "audit tail --json is not JSON ({e}): {}",
                self.audit_tail.stdout
            )
        });
        v.as_array().cloned().unwrap_or_default()
    }

    /// The single audit decision for `step`'s call: `(decision, winner, fired ids:actions)`.
    fn audited_decision(&self, step: Step) -> (String, Option<String>, Vec<String>) {
        let records = self.audit_of(step);
        assert_eq!(
            records.len(),
            1,
            "{}: exactly one audit record for step {step:?}; all records:\n{:#?}",
            self.what(),
            self.audit_records()
        );
        let r = &records[0];
        assert_eq!(r["kind"], "decision", "{r}");
        let fired = r["fired"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|f| {
                format!(
                    "{}:{}",
                    f["id"].as_str().unwrap_or(""),
                    f["action"].as_str().unwrap_or("")
                )
            })
            .collect();
        (
            r["decision"].as_str().unwrap_or_default().to_string(),
            r["winner"].as_str().map(str::to_string),
            fired,
        )
    }

    /// The ids Claude Code lists under `permission_denials` in its `--output-format json`.
    fn claude_permission_denials(&self) -> Vec<String> {
        let result: Value = serde_json::from_str(&self.run.stdout)
            .unwrap_or_else(|e| panic!("claude --output-format json ({e}): {}", self.run.stdout));
        result["permission_denials"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|d| d["tool_use_id"].as_str().map(str::to_string))
            .collect()
    }

    /// A block rule stops `rm -rf` of the marker directory; the model is told why.
    pub(crate) fn assert_block(&self) {
        self.assert_client_ran();
        assert!(
            !self.effects[Step::Block as usize],
            "{}: the marker directory was deleted despite the block rule",
            self.what()
        );
        let saw = self.model_saw(Step::Block);
        assert!(
            saw.refused,
            "{}: block not reported as refused: {saw:?}",
            self.what()
        );
        assert!(
            saw.text.contains("BLOCKED by callus (rule e2e-block)") && saw.text.contains(BLOCK_MSG),
            "{}: the model did not get the block reason: {saw:?}",
            self.what()
        );
        assert_eq!(
            self.audited_decision(Step::Block),
            (
                "block".into(),
                Some("e2e-block".into()),
                vec!["e2e-block:block".into()]
            )
        );
        if self.client == Client::Claude {
            assert!(
                self.claude_permission_denials()
                    .contains(&self.id(Step::Block))
            );
        }
    }

    /// A deny rule refuses the call; the model receives the rule's reason.
    pub(crate) fn assert_deny(&self) {
        self.assert_client_ran();
        assert!(
            !self.effects[Step::Deny as usize],
            "{}: the denied command ran",
            self.what()
        );
        let saw = self.model_saw(Step::Deny);
        assert!(
            saw.refused,
            "{}: deny not reported as refused: {saw:?}",
            self.what()
        );
        let reason = format!("callus denied this call (rule e2e-deny): {DENY_MSG}");
        let expected = match self.client {
            Client::Claude => format!("PreToolUse:Bash hook error: {reason}"),
            Client::Codex => format!(
                "Command blocked by PreToolUse hook: {reason}. Command: {}",
                self.commands[Step::Deny as usize]
            ),
        };
        assert_eq!(saw.text.trim_end(), expected, "{}", self.what());
        assert_eq!(
            self.audited_decision(Step::Deny),
            (
                "deny".into(),
                Some("e2e-deny".into()),
                vec!["e2e-deny:deny".into()]
            )
        );
        if self.client == Client::Claude {
            assert!(
                self.claude_permission_denials()
                    .contains(&self.id(Step::Deny))
            );
        }
    }

    /// A nudge lets the call run; the model receives the message next to the result.
    pub(crate) fn assert_nudge(&self) {
        self.assert_client_ran();
        assert!(
            self.effects[Step::Nudge as usize],
            "{}: the nudged command did not run",
            self.what()
        );
        let saw = self.model_saw(Step::Nudge);
        assert!(
            !saw.refused,
            "{}: nudged call refused: {saw:?}",
            self.what()
        );
        let note = format!("- {NUDGE_MSG} [rule e2e-nudge]");
        let next = standin::request_after_step(&self.turns, Step::Nudge as usize).expect("turn");
        match self.client {
            Client::Claude => {
                // A `messages[]` entry with role "system" after the tool result.
                let found = next.body["messages"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|m| {
                        m["role"] == "system"
                            && standin::all_text(m)
                                .contains("PreToolUse:Bash hook additional context: callus:")
                            && standin::all_text(m).contains(&note)
                    });
                assert!(
                    found,
                    "{}: no system message with the nudge in {}",
                    self.what(),
                    next.body["messages"]
                );
            }
            Client::Codex => {
                // A developer message between the function_call and its output.
                let input = next.body["input"].as_array().cloned().unwrap_or_default();
                let id = self.id(Step::Nudge);
                let pos = input
                    .iter()
                    .position(|i| i["type"] == "function_call" && i["call_id"] == id.as_str())
                    .expect("the nudged function_call");
                let dev = &input[pos + 1];
                assert_eq!(dev["role"], "developer", "{dev}");
                assert!(standin::all_text(dev).contains(&note), "{dev}");
            }
        }
        assert_eq!(
            self.audited_decision(Step::Nudge),
            ("nudge".into(), None, vec!["e2e-nudge:nudge".into()])
        );
    }

    /// A monitor rule changes nothing for the agent but is audited.
    pub(crate) fn assert_monitor(&self) {
        self.assert_client_ran();
        assert!(
            self.effects[Step::Monitor as usize],
            "{}: the monitored command did not run",
            self.what()
        );
        let saw = self.model_saw(Step::Monitor);
        assert!(
            !saw.refused,
            "{}: monitored call refused: {saw:?}",
            self.what()
        );
        for r in &self.requests {
            assert!(
                !standin::all_text(&r.body).contains("E2E-MONITOR-MSG"),
                "{}: the monitor message reached the model in {}",
                self.what(),
                r.target
            );
        }
        assert_eq!(
            self.audited_decision(Step::Monitor),
            ("allow".into(), None, vec!["e2e-monitor:monitor".into()])
        );
    }

    /// `callus guard audit verify` passes over a chain holding one record per fired call
    /// and no internal-error record (an error would mean the guard failed open).
    pub(crate) fn assert_audit_verifies(&self) {
        self.assert_client_ran();
        assert!(
            self.audit_verify.success(),
            "{}: audit verify: {}",
            self.what(),
            self.audit_verify.describe()
        );
        let v: Value = serde_json::from_str(&self.audit_verify.stdout).expect("verify --json");
        assert_eq!(v["ok"], true, "{v}");
        let records = self.audit_records();
        assert_eq!(v["records"], json!(records.len()), "{v}");
        let errors: Vec<&Value> = records.iter().filter(|r| r["kind"] != "decision").collect();
        assert!(
            errors.is_empty(),
            "{}: internal errors audited: {errors:#?}",
            self.what()
        );
        let audited: Vec<String> = records
            .iter()
            .filter_map(|r| r["tool_use_id"].as_str().map(str::to_string))
            .collect();
        let fired = [Step::Block, Step::Deny, Step::Nudge, Step::Monitor];
        assert_eq!(
            audited,
            fired.iter().map(|s| self.id(*s)).collect::<Vec<_>>(),
            "{}: one record per call a rule fired on, in order",
            self.what()
        );
    }

    /// The succeeding and the failing Bash call are recorded with their statuses.
    pub(crate) fn assert_recorded(&self) {
        self.assert_client_ran();
        let rows = self
            .tool_calls
            .as_ref()
            .unwrap_or_else(|e| panic!("{}: {e}", self.what()));
        let row = |step: Step| {
            let id = self.id(step);
            rows.iter()
                .find(|r| r.tool_use_id == id)
                .unwrap_or_else(|| {
                    panic!(
                        "{}: {id} ({step:?}) not recorded; rows: {rows:#?}",
                        self.what()
                    )
                })
        };
        let ok = row(Step::Success);
        assert_eq!(
            (ok.status.as_str(), ok.tool.as_str()),
            ("success", "Bash"),
            "{ok:?}"
        );
        assert!(
            ok.command
                .as_deref()
                .is_some_and(|c| c.contains("e2e-plain")),
            "{ok:?}"
        );
        let failed = row(Step::Failure);
        assert_eq!(
            (failed.status.as_str(), failed.tool.as_str()),
            ("failure", "Bash"),
            "{failed:?}"
        );
        for step in [Step::Nudge, Step::Monitor] {
            assert_eq!(row(step).status, "success", "{step:?} ran and succeeded");
        }
    }

    /// `callus doctor` reports everything wired and firing: exit 0, no ✗ line, and in
    /// `--json` no failed check, an ok `wiring` and an ok `firing` check for this host.
    pub(crate) fn assert_doctor(&self) {
        self.assert_client_ran();
        let (human, json) = self
            .doctor
            .as_ref()
            .unwrap_or_else(|| panic!("{}: doctor was not run", self.what()));
        assert!(
            human.success()
                && !human
                    .stdout
                    .lines()
                    .any(|l| l.trim_start().starts_with('✗')),
            "{}: callus doctor: {}\ninstall: {}",
            self.what(),
            human.describe(),
            self.install_output()
        );
        let report: Value = serde_json::from_str(&json.stdout)
            .unwrap_or_else(|e| panic!("doctor --json is not JSON ({e}): {}", json.describe()));
        assert!(json.success() && report["ok"] == true, "{report:#}");
        let checks = report["checks"].as_array().cloned().unwrap_or_default();
        let failed: Vec<&Value> = checks.iter().filter(|c| c["status"] == "fail").collect();
        assert!(
            failed.is_empty(),
            "{}: failed checks {failed:#?}",
            self.what()
        );
        let host = match self.client {
            Client::Claude => "claude-code",
            Client::Codex => "codex",
        };
        for area in ["wiring", "firing"] {
            assert!(
                checks.iter().any(|c| c["area"] == area
                    && c["status"] == "ok"
                    && c["message"].as_str().is_some_and(|m| m.contains(host))),
                "{}: no ok `{area}` check for {host}: {checks:#?}",
                self.what()
            );
        }
    }

    /// Codex ran the hooks `callus install --codex` set up without the bypass flag: Codex's
    /// own `hooks/list` calls every callus hook trusted, and the run printed no bypass
    /// warning.
    pub(crate) fn assert_codex_trusted(&self) {
        let listed = self
            .hooks_list
            .as_ref()
            .expect("hooks/list was asked")
            .as_ref()
            .unwrap_or_else(|e| panic!("hooks/list: {e}"));
        let callus = harness::callus_bin().display().to_string();
        let ours: Vec<&Value> = listed
            .as_array()
            .into_iter()
            .flatten()
            .filter(|h| h["command"].as_str().is_some_and(|c| c.contains(&callus)))
            .collect();
        assert!(
            ours.iter().any(|h| h["eventName"] == "preToolUse"),
            "no callus PreToolUse hook listed by codex: {listed:#}\ninstall: {}",
            self.install_output()
        );
        for h in &ours {
            assert_eq!(
                h["trustStatus"],
                "trusted",
                "{h:#}\ninstall: {}",
                self.install_output()
            );
        }
        assert!(
            !self.run.stdout.contains("dangerously-bypass-hook-trust"),
            "the run must not bypass hook trust"
        );
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
