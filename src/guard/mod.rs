//! The guard: decide each tool call before it runs.
//!
//! Words, as across callus: a *decision* ([`Decision`], its [`DecisionKind`] allow, nudge,
//! deny or block) is only what the guard answers one tool call — the audit record's
//! `decision` and a one-time approval (`guard::approve`) speak of the same thing; a *verdict*
//! is a judgement of evidence after the fact (scope's verdict on a run, whose outcome is its
//! ruling; prune's on a rule; derive's on a token). `acs::AcsVerdict` keeps the name the Agent
//! Control Specification gives its record.
//!
//! [`evaluate`] is pure — rules and a call in, a [`Decision`] out, no I/O — so it is unit- and
//! property-testable and the same everywhere. Everything it knows of the call comes in the
//! [`Call`] the edge read once ([`crate::host::call`]: the command text, whether the tool is
//! a shell, where it runs); what only the world can answer comes through arguments the edge
//! gives (a rule's conditions: `rules::condition::Facts`; the time budget: a closure that
//! reads the clock; a path's symlinks: the resolver in the call's context). Nothing under it
//! reads an environment variable, the clock or the file system itself.
//!
//! Precedence: every layer is evaluated; the most restrictive effective action wins
//! (block > deny > nudge > monitor); severity breaks ties inside an action, then evaluation
//! order (starter, user, project, env, candidates). A deny or block shows the winner's
//! message; a nudge delivers every fired nudge message once, identical messages
//! de-duplicated. Monitor-only is allow (but audited).
//!
//! The I/O around it lives in [`hook`] (the `PreToolUse` entry point); the hash chain it
//! appends to is [`crate::store::audit`]; `guard check|test|audit` are command-layer code in
//! `app`.

pub(crate) mod acs;
pub(crate) mod approve;
pub(crate) mod facts;
pub(crate) mod hook;

use std::fmt::Write as _;

use serde::Serialize;

use crate::host::call::Call;
use crate::rules::condition::{Facts, NoFacts, Outcome};
use crate::rules::{Action, Hit, LayerKind, RuleSet, Subject};

/// One rule that fired on a call.
#[derive(Debug, Clone, Serialize)]
pub struct Fired {
    /// The rule id.
    pub id: String,
    /// Which layer it came from.
    pub layer: LayerKind,
    /// The layer's file (`starter` for the built-in set).
    pub layer_file: String,
    /// The action after the candidates' forced monitor and the tier cap.
    pub action: Action,
    /// The rule's severity.
    pub severity: f64,
    /// The pattern that matched (`None` for a tool-only rule).
    pub pattern: Option<String>,
    /// The segment that matched (`match: segment` rules).
    pub segment: Option<String>,
    /// The rule's message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// A condition of the rule's `when` that could not be answered: the rule fired anyway
    /// (the guard fails toward the rule).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unanswered: Option<&'static str>,
}

/// The kind of a decision: what the host is told to do with the call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DecisionKind {
    /// Nothing acting fired.
    Allow,
    /// The call runs with messages for the model.
    Nudge,
    /// The call is refused with a reason.
    Deny,
    /// The call is refused with exit 2.
    Block,
}

impl DecisionKind {
    /// The lowercase name.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            DecisionKind::Allow => "allow",
            DecisionKind::Nudge => "nudge",
            DecisionKind::Deny => "deny",
            DecisionKind::Block => "block",
        }
    }
}

/// What the guard decided, and why.
#[derive(Debug, Clone, Serialize)]
pub struct Decision {
    /// Its kind: allow, nudge, deny or block.
    pub kind: DecisionKind,
    /// The deciding rule for deny/block.
    pub winner: Option<String>,
    /// Index of the deciding rule in `fired` (ids may repeat across layers).
    #[serde(skip)]
    pub winner_index: Option<usize>,
    /// Every rule that fired, in evaluation order.
    pub fired: Vec<Fired>,
    /// Nudge messages to deliver, de-duplicated, each tagged with its rule id.
    pub notes: Vec<(String, String)>,
    /// Patterns that could not be evaluated (compile error, backtrack budget), as
    /// `rule-id: reason`. The rule is treated as not firing; the hook reports these.
    pub errors: Vec<String>,
}

impl Decision {
    /// The fired rule that won, if any.
    #[must_use]
    pub fn winning(&self) -> Option<&Fired> {
        self.fired.get(self.winner_index?)
    }
}

/// Decide `call` under `rules`. Pure: no I/O, same inputs → same decision. The call
/// carries its command text and where it runs (read at the edge: `host::call`). No
/// condition can be answered here, so a rule with conditions fires when its patterns match
/// (the hook answers them at its edge instead; see `decide`).
#[must_use]
pub fn evaluate(rules: &RuleSet, call: &Call<'_>) -> Decision {
    decide(rules, &Subject::of(call.clone()), &NoFacts)
}

/// [`evaluate`] on a call already made a [`Subject`] (the hook builds one to load the rules
/// that may fire on it, and shares its texts and shell splits with the decision), with the
/// rules' conditions answered by `facts`: asked only of a rule whose patterns matched, so a
/// call no rule matches asks nothing.
#[must_use]
pub(crate) fn decide(rules: &RuleSet, subject: &Subject<'_>, facts: &dyn Facts) -> Decision {
    decide_until(rules, subject, facts, &|| false)
}

/// [`decide`], giving up when `out_of_time` says so (asked before each rule; the edge reads
/// the clock): the rules not yet evaluated then are skipped and the decision carries an
/// error saying so (an internal error, which the guard's failure policy turns into a
/// refusal when it is closed).
#[must_use]
pub(crate) fn decide_until(
    rules: &RuleSet,
    subject: &Subject<'_>,
    facts: &dyn Facts,
    out_of_time: &dyn Fn() -> bool,
) -> Decision {
    let mut fired = Vec::new();
    let mut errors = Vec::new();
    let total = rules.layers.iter().map(|l| l.rules.len()).sum::<usize>();
    for (done, (layer, rule)) in rules.rules().enumerate() {
        if out_of_time() {
            // First: it is what the policy must answer for, whatever else failed.
            errors.insert(
                0,
                format!(
                    "time budget exhausted: {} of {total} rules not evaluated, from {} in {}",
                    total - done,
                    rule.id,
                    layer.name()
                ),
            );
            break;
        }
        match rule.fires(subject) {
            Ok(Some(Hit { pattern, segment })) => {
                // Conditions last, and only here: a call no pattern matches asks nothing.
                // One that cannot be answered fires the rule (docs/rule-format.md).
                let unanswered = match rule.when.as_deref().map(|w| w.eval(subject.input, facts)) {
                    None | Some(Outcome::Holds) => None,
                    Some(Outcome::Fails) => continue,
                    Some(Outcome::Unknown(key)) => Some(key),
                };
                fired.push(Fired {
                    id: rule.id.clone(),
                    layer: layer.kind,
                    layer_file: layer.name(),
                    action: layer.effective_action(rule),
                    severity: rule.severity,
                    pattern: pattern.map(|i| rule.any[i].source().to_string()),
                    segment,
                    message: rule.message.clone(),
                    unanswered,
                });
            }
            Ok(None) => {}
            Err(e) => errors.push(format!("{}: {e}", rule.id)),
        }
    }
    resolve(fired, errors)
}

/// Resolve fired rules into a decision (the precedence described in the module docs).
#[must_use]
pub(crate) fn resolve(fired: Vec<Fired>, errors: Vec<String>) -> Decision {
    let mut winner: Option<(usize, &Fired)> = None;
    for (i, f) in fired.iter().enumerate() {
        if f.action == Action::Monitor {
            continue;
        }
        let better = winner.is_none_or(|(_, w)| {
            f.action > w.action || (f.action == w.action && f.severity > w.severity)
        });
        if better {
            winner = Some((i, f));
        }
    }
    let (kind, winner_index, notes) = match winner {
        None => (DecisionKind::Allow, None, Vec::new()),
        Some((i, w)) if w.action == Action::Block => (DecisionKind::Block, Some(i), Vec::new()),
        Some((i, w)) if w.action == Action::Deny => (DecisionKind::Deny, Some(i), Vec::new()),
        Some(_) => {
            let mut notes: Vec<(String, String)> = Vec::new();
            for f in fired.iter().filter(|f| f.action == Action::Nudge) {
                let msg = f.message.clone().unwrap_or_default();
                if !notes.iter().any(|(_, m)| *m == msg) {
                    notes.push((f.id.clone(), msg));
                }
            }
            (DecisionKind::Nudge, None, notes)
        }
    };
    Decision {
        kind,
        winner: winner_index.map(|i| fired[i].id.clone()),
        winner_index,
        fired,
        notes,
        errors,
    }
}

/// The text the agent sees for a decision (nudge context, deny reason, block stderr).
#[must_use]
pub(crate) fn agent_text(decision: &Decision) -> Option<String> {
    match decision.kind {
        DecisionKind::Allow => None,
        DecisionKind::Nudge => {
            let mut text = String::from("callus:");
            for (id, msg) in &decision.notes {
                let _ = write!(text, "\n- {msg} [rule {id}]");
            }
            Some(text)
        }
        DecisionKind::Deny => decision.winning().map(|w| {
            format!(
                "callus denied this call (rule {}): {}",
                w.id,
                w.message.as_deref().unwrap_or("")
            )
        }),
        DecisionKind::Block => decision.winning().map(|w| {
            format!(
                "BLOCKED by callus (rule {}): {}",
                w.id,
                w.message.as_deref().unwrap_or("")
            )
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{Layer, LayerKind};
    use serde_json::{Value, json};

    fn set(layers: &[(LayerKind, Value)]) -> RuleSet {
        RuleSet {
            layers: layers
                .iter()
                .map(|(k, v)| {
                    Layer::from_text(
                        *k,
                        Some(format!("{}.json", k.as_str()).into()),
                        v.to_string(),
                    )
                    .unwrap()
                    .0
                })
                .collect(),
        }
    }

    fn decide(rules: &RuleSet, cmd: &str) -> Decision {
        let input = json!({ "command": cmd });
        evaluate(rules, &Call::new("Bash", &input))
    }

    /// Time left lets every rule run; none left skips them all and says how many, from
    /// which rule of which layer; the clock is asked before each rule, so time running out
    /// after the first skips the rest.
    #[test]
    fn the_deadline_stops_the_rules_not_yet_evaluated() {
        let rules = set(&[(
            LayerKind::User,
            json!({"rules": [
                {"id": "a", "any": ["x"], "action": "deny", "message": "a"},
                {"id": "b", "any": ["x"], "message": "b"}
            ]}),
        )]);
        let input = json!({ "command": "x" });
        let subject = Subject::of(Call::new("Bash", &input));
        let d = decide_until(&rules, &subject, &NoFacts, &|| false);
        assert_eq!(d.fired.len(), 2, "{:?}", d.errors);
        assert!(d.errors.is_empty(), "{:?}", d.errors);
        assert_eq!(d.kind, DecisionKind::Deny);
        let d = decide_until(&rules, &subject, &NoFacts, &|| true);
        assert!(d.fired.is_empty());
        assert_eq!(d.kind, DecisionKind::Allow);
        assert_eq!(
            d.errors,
            ["time budget exhausted: 2 of 2 rules not evaluated, from a in user.json"]
        );
        let asked = std::cell::Cell::new(0);
        let d = decide_until(&rules, &subject, &NoFacts, &|| {
            asked.set(asked.get() + 1);
            asked.get() > 1
        });
        assert_eq!(d.fired.len(), 1);
        assert_eq!(d.kind, DecisionKind::Deny);
        assert_eq!(
            d.errors,
            ["time budget exhausted: 1 of 2 rules not evaluated, from b in user.json"]
        );
    }

    /// The decision reads where the call runs from the call (the edge read it), never from
    /// the process: the same command deletes the home or an ordinary directory by the home
    /// the call carries.
    #[test]
    fn where_the_call_runs_comes_with_the_call() {
        let rules = set(&[(
            LayerKind::User,
            json!({"rules": [{"id": "home", "match": "effect", "any": ["^deletes class=home "],
                "action": "block", "message": "m"}]}),
        )]);
        let input = json!({ "command": "rm -rf /somewhere/me" });
        let at = |home: &str| crate::shell::model::Context {
            home: Some(home.into()),
            ..Default::default()
        };
        let (mine, other) = (at("/somewhere/me"), at("/elsewhere"));
        let decide = |ctx| evaluate(&rules, &Call::new("Bash", &input).at(ctx)).kind;
        assert_eq!(decide(&mine), DecisionKind::Block);
        assert_eq!(decide(&other), DecisionKind::Allow);
        // Without a context, no home at all: nothing is read from the process.
        assert_eq!(
            evaluate(&rules, &Call::new("Bash", &input)).kind,
            DecisionKind::Allow
        );
    }

    #[test]
    fn most_restrictive_wins_across_layers() {
        let rules = set(&[
            (
                LayerKind::User,
                json!({"rules": [{"id": "n", "any": ["x"], "severity": 99, "message": "nudge"}]}),
            ),
            (
                LayerKind::Project,
                json!({"rules": [{"id": "b", "any": ["x"], "severity": 1, "action": "block", "message": "block"}]}),
            ),
        ]);
        let d = decide(&rules, "x");
        assert_eq!(d.kind, DecisionKind::Block);
        assert_eq!(d.winner.as_deref(), Some("b"));
        assert_eq!(agent_text(&d).unwrap(), "BLOCKED by callus (rule b): block");
    }

    #[test]
    fn most_restrictive_wins_whatever_the_order() {
        // The winner evaluated first: later rules with a higher severity do not displace it.
        let rules = set(&[
            (
                LayerKind::User,
                json!({"rules": [{"id": "b", "any": ["x"], "severity": 1, "action": "block", "message": "block"}]}),
            ),
            (
                LayerKind::Project,
                json!({"rules": [
                    {"id": "d", "any": ["x"], "severity": 50, "action": "deny", "message": "deny"},
                    {"id": "n", "any": ["x"], "severity": 99, "message": "nudge"}
                ]}),
            ),
        ]);
        let d = decide(&rules, "x");
        assert_eq!(
            (d.kind, d.winner.as_deref()),
            (DecisionKind::Block, Some("b"))
        );
        assert_eq!(d.winner_index, Some(0));
        assert!(d.notes.is_empty());
        let rules = set(&[(
            LayerKind::User,
            json!({"rules": [
                {"id": "d", "any": ["x"], "severity": 1, "action": "deny", "message": "deny"},
                {"id": "n", "any": ["x"], "severity": 99, "message": "nudge"},
                {"id": "m", "any": ["x"], "severity": 100, "action": "monitor", "message": "watch"}
            ]}),
        )]);
        let d = decide(&rules, "x");
        assert_eq!(
            (d.kind, d.winner.as_deref()),
            (DecisionKind::Deny, Some("d"))
        );
        assert_eq!(
            agent_text(&d).unwrap(),
            "callus denied this call (rule d): deny"
        );
    }

    #[test]
    fn equal_severity_goes_to_the_first_evaluated() {
        let rules = set(&[
            (
                LayerKind::User,
                json!({"rules": [{"id": "first", "any": ["x"], "severity": 3, "action": "deny", "message": "one"}]}),
            ),
            (
                LayerKind::Project,
                json!({"rules": [{"id": "second", "any": ["x"], "severity": 3, "action": "deny", "message": "two"}]}),
            ),
        ]);
        let d = decide(&rules, "x");
        assert_eq!(
            (d.winner.as_deref(), d.winner_index),
            (Some("first"), Some(0))
        );
    }

    #[test]
    fn monitor_messages_are_not_nudges_and_monitor_alone_allows() {
        let rules = set(&[(
            LayerKind::User,
            json!({"rules": [
                {"id": "m", "any": ["x"], "severity": 9, "action": "monitor", "message": "watch"},
                {"id": "n", "any": ["x"], "message": "go"},
                {"id": "q", "any": ["y"], "action": "monitor", "message": "quiet"}
            ]}),
        )]);
        let d = decide(&rules, "x");
        assert_eq!(d.kind, DecisionKind::Nudge);
        assert_eq!(d.winner, None);
        assert_eq!(d.notes, vec![("n".to_string(), "go".to_string())]);
        assert_eq!(agent_text(&d).unwrap(), "callus:\n- go [rule n]");
        let d = decide(&rules, "y");
        assert_eq!((d.kind, d.winner_index), (DecisionKind::Allow, None));
        assert_eq!(d.fired.len(), 1);
        assert_eq!(agent_text(&d), None);
        let d = decide(&rules, "z");
        assert!(d.fired.is_empty() && d.errors.is_empty());
    }

    #[test]
    fn decision_kind_names_are_the_serialised_names() {
        for v in [
            DecisionKind::Allow,
            DecisionKind::Nudge,
            DecisionKind::Deny,
            DecisionKind::Block,
        ] {
            assert_eq!(serde_json::to_value(v).unwrap(), v.as_str(), "{v:?}");
        }
    }

    #[test]
    fn candidates_are_forced_to_monitor() {
        let rules = set(&[(
            LayerKind::Candidates,
            json!({"rules": [{"id": "c", "any": ["x"], "action": "block", "message": "m"}]}),
        )]);
        let d = decide(&rules, "x");
        assert_eq!(d.kind, DecisionKind::Allow);
        assert_eq!(d.fired.len(), 1);
        assert_eq!(d.fired[0].action, Action::Monitor);
    }

    #[test]
    fn nudges_are_deduplicated_and_severity_breaks_ties() {
        let rules = set(&[(
            LayerKind::User,
            json!({"rules": [
                {"id": "a", "any": ["x"], "message": "same"},
                {"id": "b", "any": ["x"], "message": "same"},
                {"id": "c", "any": ["x"], "message": "other"},
                {"id": "d1", "any": ["y"], "action": "deny", "severity": 1, "message": "low"},
                {"id": "d2", "any": ["y"], "action": "deny", "severity": 5, "message": "high"}
            ]}),
        )]);
        let d = decide(&rules, "x");
        assert_eq!(d.kind, DecisionKind::Nudge);
        assert_eq!(
            d.notes,
            vec![("a".into(), "same".into()), ("c".into(), "other".into())]
        );
        let d = decide(&rules, "y");
        assert_eq!(d.winner.as_deref(), Some("d2"));
    }

    #[test]
    fn the_winner_is_the_rule_that_won_even_when_ids_repeat_across_layers() {
        let rules = set(&[
            (
                LayerKind::User,
                json!({"rules": [{"id": "same", "any": ["x"], "message": "user nudge"}]}),
            ),
            (
                LayerKind::Project,
                json!({"rules": [{"id": "same", "any": ["x"], "action": "deny", "message": "project deny"}]}),
            ),
        ]);
        let d = decide(&rules, "x");
        assert_eq!(d.kind, DecisionKind::Deny);
        assert_eq!(d.winning().unwrap().layer, LayerKind::Project);
        assert_eq!(
            agent_text(&d).unwrap(),
            "callus denied this call (rule same): project deny"
        );
    }
}
