//! The claims the end-to-end suite makes about one [`Outcome`], one method per claim, so
//! the Claude Code and Codex tests assert the same things and only the reading of each
//! client's wire format differs (a Claude `tool_result` block vs a Codex
//! `function_call_output` item; a `system` message vs a `developer` message).

use serde_json::{Value, json};

use super::harness::{self, Client, Run};
use super::scenario::{
    BLOCK_MSG, DENY_MSG, MONITOR_MSG, NUDGE_MSG, Outcome, STEPS, Step, protocol,
};
use super::standin::{self, call_id};

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
        // The model also gets the allow-once code a person could grant (its sentence is
        // checked for form, then taken out to compare the rest exactly).
        assert!(
            saw.text.contains(crate::common::ALLOW_ONCE_START),
            "{}: no allow-once code in {:?}",
            self.what(),
            saw.text
        );
        assert_eq!(
            crate::common::strip_allow_once(saw.text.trim_end()),
            expected,
            "{}",
            self.what()
        );
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
        let monitor_token = MONITOR_MSG.split(' ').next().expect("a token");
        for r in &self.requests {
            assert!(
                !standin::all_text(&r.body).contains(monitor_token),
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
