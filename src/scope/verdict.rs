//! The verdict table: from the declaration, the observed changes and the check
//! delta to one ACS-shaped verdict — its [`Ruling`] `allow`, `warn`, `escalate` or `deny`,
//! with a reason id, a message and the full report as evidence.
//!
//! Words, as across callus: a *verdict* is a judgement of evidence after the fact (this one
//! judges a run), and what it concludes is its *ruling*; a *decision* is only what the guard
//! answers one tool call (`guard::Decision`). ACS names the ruling `decision`, so the JSON
//! keeps that key.
//!
//! Pure: no I/O, so every row of the table is unit-tested. Candidate verdicts are collected
//! in table order and the most restrictive wins (ties: the first). Only tooling failures — a
//! scan or check that could not run, a declared literal never written under
//! `strict_unfulfilled`, and writes under a declaration that names only forbids — follow the
//! declaration's `fail_direction`; a write outside the declaration and a new check finding
//! are always `deny`. (callusguard made new findings a mere warning unless the declaration
//! failed closed, which left `--check` advisory; here they fail the run, as the issue asks.)

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::checks::{Degraded, Delta, Finding};
use super::declare::{Declaration, FailDirection, Kind};
use super::fingerprint::Change;
use super::observation::Observation;

/// How many paths a one-line message names before "…".
const MESSAGE_PATHS: usize = 5;

/// The ruling of a verdict (ACS calls it the verdict's `decision`), ordered from least to
/// most restrictive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Ruling {
    /// Nothing wrong.
    Allow,
    /// Something a person should read; the run is not failed.
    Warn,
    /// A person must decide.
    Escalate,
    /// The run is outside its declaration.
    Deny,
}

impl Ruling {
    /// `allow`, `warn`, `escalate` or `deny`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Ruling::Allow => "allow",
            Ruling::Warn => "warn",
            Ruling::Escalate => "escalate",
            Ruling::Deny => "deny",
        }
    }
}

/// One changed path as reported.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ChangeRecord {
    /// Root-relative path.
    pub(crate) path: String,
    /// Created, modified or deleted.
    pub(crate) kind: Kind,
    /// False when only size/mtime showed the change.
    pub(crate) hashed: bool,
    /// The pattern (or `undeclared`) that decided it.
    pub(crate) rule: String,
    /// The tool the hook saw naming this path last, if any.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub(crate) tool: Option<String>,
    /// That call's id.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub(crate) tool_use_id: Option<String>,
}

/// A literal pattern the run declared but never wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Unfulfilled {
    /// The pattern.
    pub(crate) pattern: String,
    /// `create`, `modify` or `delete`.
    pub(crate) bucket: String,
}

/// Counts of the report.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Counts {
    /// Paths that changed.
    pub(crate) changed: usize,
    /// Of which inside the declaration.
    pub(crate) permitted: usize,
    /// Of which counted as violations.
    pub(crate) violations: usize,
    /// New check findings.
    pub(crate) new_findings: usize,
}

/// The full report, carried as the verdict's evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Report {
    /// The run id.
    pub(crate) run_id: String,
    /// The declaration's intent.
    pub(crate) intent: String,
    /// The absolute root.
    pub(crate) root: String,
    /// The declared write set in one line.
    pub(crate) declared: String,
    /// `open` or `closed`.
    pub(crate) fail_direction: String,
    /// Counts.
    pub(crate) counts: Counts,
    /// Changes inside the declaration.
    pub(crate) permitted: Vec<ChangeRecord>,
    /// Changes outside it (or forbidden).
    pub(crate) violations: Vec<ChangeRecord>,
    /// Literal patterns never written.
    pub(crate) unfulfilled: Vec<Unfulfilled>,
    /// New findings per check.
    pub(crate) new_findings: BTreeMap<String, Vec<Finding>>,
    /// Checks that could not be compared.
    pub(crate) degraded_checks: Vec<Degraded>,
    /// Why the write set could not be observed, if it could not.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub(crate) observation_error: Option<String>,
    /// True when the verdict rests on incomplete information.
    pub(crate) degraded: bool,
    /// The reason id of every candidate verdict, in table order.
    pub(crate) all_reasons: Vec<String>,
}

/// The verdict: ACS shape (`decision`, `reason`, `message`, `evidence`), nothing else.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Verdict {
    /// The ruling (`decision` in the ACS shape).
    #[serde(rename = "decision")]
    pub(crate) ruling: Ruling,
    /// A stable reason id, e.g. `scope:undeclared_write`.
    pub(crate) reason: String,
    /// One line for people.
    pub(crate) message: String,
    /// The report.
    pub(crate) evidence: Report,
}

struct Candidate {
    ruling: Ruling,
    reason: &'static str,
    message: String,
    degraded: bool,
}

/// What the verdict is judged on.
pub(crate) struct Inputs<'a> {
    /// The declaration.
    pub(crate) decl: &'a Declaration,
    /// The observed changes, or why they could not be observed.
    pub(crate) changes: Result<Vec<Change>, String>,
    /// The hook's record of which tool named which path (attribution only).
    pub(crate) observations: &'a [Observation],
    /// The check delta.
    pub(crate) delta: Delta,
}

/// Judge a run.
// the verdict table: scope's decision as one ordered list of cases (tested case by case)
#[allow(clippy::too_many_lines)]
pub(crate) fn judge(inputs: Inputs<'_>) -> Verdict {
    let Inputs {
        decl,
        changes,
        observations,
        delta,
    } = inputs;
    let tooling = |reason, message: String| Candidate {
        ruling: match decl.fail_direction {
            FailDirection::Open => Ruling::Warn,
            FailDirection::Closed => Ruling::Deny,
        },
        reason,
        message,
        degraded: true,
    };
    let fixed = |ruling, reason, message: String| Candidate {
        ruling,
        reason,
        message,
        degraded: false,
    };
    let mut candidates = Vec::new();
    let (observation_error, changes) = match changes {
        Ok(c) => (None, c),
        Err(e) => {
            candidates.push(tooling(
                "scope:observation_failed",
                format!("Could not determine the actual write set: {e}"),
            ));
            (Some(e), Vec::new())
        }
    };
    let attributed = attribution(observations);
    let (mut permitted, mut violations) = (Vec::new(), Vec::new());
    for change in &changes {
        let permit = decl.permits(&change.path, change.kind);
        let seen = attributed.get(change.path.as_str());
        let record = ChangeRecord {
            path: change.path.clone(),
            kind: change.kind,
            hashed: change.hashed,
            rule: permit.why.clone(),
            tool: seen.map(|o| o.tool.clone()),
            tool_use_id: seen.and_then(|o| o.tool_use_id.clone()),
        };
        // Without create/modify/delete patterns only forbids are enforceable per path.
        let counts = !permit.ok && (decl.declares_anything() || permit.why.starts_with("forbid:"));
        if counts {
            violations.push(record);
        } else {
            permitted.push(record);
        }
    }
    let unfulfilled = unfulfilled(decl, &changes);
    if !decl.declares_anything() && observation_error.is_none() {
        if changes.is_empty() {
            candidates.push(fixed(
                Ruling::Allow,
                "scope:clean",
                "Nothing changed.".to_string(),
            ));
        } else {
            let mut c = tooling(
                "scope:no_declaration",
                format!(
                    "{} file(s) changed but the declaration names only forbidden paths, no \
                     intended write set.",
                    changes.len()
                ),
            );
            c.degraded = false;
            if c.ruling == Ruling::Warn {
                c.ruling = Ruling::Escalate;
            }
            candidates.push(c);
        }
    }
    let forbidden: Vec<&ChangeRecord> = violations
        .iter()
        .filter(|v| v.rule.starts_with("forbid:"))
        .collect();
    if !forbidden.is_empty() {
        candidates.push(fixed(
            Ruling::Deny,
            "scope:forbidden_path",
            format!(
                "Touched {} forbidden path(s): {}",
                forbidden.len(),
                first_paths(&forbidden)
            ),
        ));
    }
    let undeclared = |delete: bool| -> Vec<&ChangeRecord> {
        violations
            .iter()
            .filter(|v| !v.rule.starts_with("forbid:") && (v.kind == Kind::Delete) == delete)
            .collect()
    };
    let deletes = undeclared(true);
    if !deletes.is_empty() {
        candidates.push(fixed(
            Ruling::Deny,
            "scope:undeclared_delete",
            format!(
                "Deleted {} undeclared path(s): {}",
                deletes.len(),
                first_paths(&deletes)
            ),
        ));
    }
    let writes = undeclared(false);
    if !writes.is_empty() {
        candidates.push(fixed(
            Ruling::Deny,
            "scope:undeclared_write",
            format!(
                "Wrote {} path(s) outside the declaration: {}",
                writes.len(),
                first_paths(&writes)
            ),
        ));
    }
    if delta.count() > 0 {
        candidates.push(fixed(
            Ruling::Deny,
            "scope:new_errors",
            format!(
                "{} new finding(s) absent from the pre-run baseline.",
                delta.count()
            ),
        ));
    }
    if decl.strict_unfulfilled && !unfulfilled.is_empty() {
        let names: Vec<&str> = unfulfilled.iter().map(|u| u.pattern.as_str()).collect();
        let mut c = tooling(
            "scope:declared_but_unwritten",
            format!("Declared but never written: {}", first(&names)),
        );
        c.degraded = false;
        candidates.push(c);
    }
    if !delta.degraded.is_empty() {
        let parts: Vec<String> = delta
            .degraded
            .iter()
            .take(3)
            .map(|d| format!("{} ({})", d.check, d.why))
            .collect();
        candidates.push(tooling("scope:check_command_failed", parts.join("; ")));
    }
    if candidates.is_empty() {
        candidates.push(fixed(
            Ruling::Allow,
            "scope:clean",
            format!(
                "{} file(s) changed, all inside the declaration; no new findings.",
                changes.len()
            ),
        ));
    }
    let all_reasons: Vec<String> = candidates.iter().map(|c| c.reason.to_string()).collect();
    let degraded = candidates.iter().any(|c| c.degraded);
    let winner = candidates
        .into_iter()
        .reduce(|best, c| if c.ruling > best.ruling { c } else { best })
        .expect("at least one candidate");
    Verdict {
        ruling: winner.ruling,
        reason: winner.reason.to_string(),
        message: winner.message,
        evidence: Report {
            run_id: decl.run_id.clone(),
            intent: decl.intent.clone(),
            root: decl.root.to_string_lossy().into_owned(),
            declared: decl.summary(),
            fail_direction: decl.fail_direction.as_str().to_string(),
            counts: Counts {
                changed: changes.len(),
                permitted: permitted.len(),
                violations: violations.len(),
                new_findings: delta.count(),
            },
            permitted,
            violations,
            unfulfilled,
            new_findings: delta.new,
            degraded_checks: delta.degraded,
            observation_error,
            degraded,
            all_reasons,
        },
    }
}

/// The last observation naming each exact path (no basename guessing).
fn attribution(observations: &[Observation]) -> HashMap<&str, &Observation> {
    let mut out = HashMap::new();
    for o in observations {
        for p in &o.paths {
            out.insert(p.as_str(), o);
        }
    }
    out
}

/// Literal create/modify/delete patterns that no change path equals.
fn unfulfilled(decl: &Declaration, changes: &[Change]) -> Vec<Unfulfilled> {
    let mut out = Vec::new();
    for (bucket, globs) in [
        (Kind::Create, &decl.create),
        (Kind::Modify, &decl.modify),
        (Kind::Delete, &decl.delete),
    ] {
        for g in globs.iter().filter(|g| g.is_literal()) {
            if !changes.iter().any(|c| c.path == g.as_str()) {
                out.push(Unfulfilled {
                    pattern: g.as_str().to_string(),
                    bucket: bucket.as_str().to_string(),
                });
            }
        }
    }
    out
}

fn first_paths(records: &[&ChangeRecord]) -> String {
    let paths: Vec<&str> = records.iter().map(|r| r.path.as_str()).collect();
    first(&paths)
}

fn first(items: &[&str]) -> String {
    let mut s = items
        .iter()
        .take(MESSAGE_PATHS)
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    if items.len() > MESSAGE_PATHS {
        let _ = write!(s, " … and {} more", items.len() - MESSAGE_PATHS);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scope::checks::parse_output;
    use crate::scope::declare::RootFrom;
    use serde_json::{Value, json};

    fn decl(v: &Value) -> Declaration {
        let mut obj = v.as_object().cloned().unwrap();
        obj.insert("run_id".into(), json!("r"));
        let tmp = std::env::temp_dir();
        Declaration::from_value(&Value::Object(obj), "t", None, RootFrom::User(Some(&tmp))).unwrap()
    }

    fn change(path: &str, kind: Kind) -> Change {
        Change {
            path: path.into(),
            kind,
            hashed: true,
        }
    }

    fn judge_with(d: &Declaration, changes: Vec<Change>, delta: Delta) -> Verdict {
        judge(Inputs {
            decl: d,
            changes: Ok(changes),
            observations: &[],
            delta,
        })
    }

    fn verdict(v: &Value, changes: Vec<Change>) -> Verdict {
        judge_with(&decl(v), changes, Delta::default())
    }

    #[test]
    fn clean_run_allows() {
        let v = verdict(
            &json!({"create": ["docs/a.md"]}),
            vec![change("docs/a.md", Kind::Create)],
        );
        assert_eq!(
            (v.ruling, v.reason.as_str()),
            (Ruling::Allow, "scope:clean")
        );
        assert_eq!(v.evidence.counts.permitted, 1);
    }

    #[test]
    fn undeclared_write_denies_and_names_the_path() {
        let v = verdict(
            &json!({"create": ["docs/a.md"]}),
            vec![change("src/x.py", Kind::Create)],
        );
        assert_eq!(v.ruling, Ruling::Deny);
        assert_eq!(v.reason, "scope:undeclared_write");
        assert!(v.message.contains("src/x.py"));
    }

    #[test]
    fn forbidden_path_denies_even_when_modify_covers_it() {
        let v = verdict(
            &json!({"modify": ["**/*"], "forbid": ["**/*.env"]}),
            vec![change("a.env", Kind::Modify)],
        );
        assert_eq!(v.reason, "scope:forbidden_path");
        assert_eq!(v.evidence.violations[0].rule, "forbid:**/*.env");
    }

    #[test]
    fn undeclared_delete_denies() {
        let v = verdict(
            &json!({"modify": ["src/**"]}),
            vec![change("src/x.py", Kind::Delete)],
        );
        assert_eq!(v.reason, "scope:undeclared_delete");
    }

    #[test]
    fn forbid_only_declaration_escalates_writes_and_denies_forbidden() {
        let d = json!({"forbid": [".claude/**"]});
        let v = verdict(&d, vec![change("x", Kind::Create)]);
        assert_eq!(
            (v.ruling, v.reason.as_str()),
            (Ruling::Escalate, "scope:no_declaration")
        );
        assert_eq!(verdict(&d, vec![]).ruling, Ruling::Allow);
        let v = verdict(&d, vec![change(".claude/settings.json", Kind::Modify)]);
        assert_eq!(v.ruling, Ruling::Deny);
        assert_eq!(
            v.evidence.all_reasons,
            vec!["scope:no_declaration", "scope:forbidden_path"]
        );
    }

    #[test]
    fn new_findings_deny_and_tooling_failures_follow_fail_direction() {
        let d = decl(&json!({"create": ["a"]}));
        let mut delta = Delta::default();
        delta.new.insert("lint".into(), parse_output("a:1: E1 x"));
        let v = judge_with(&d, vec![], delta);
        assert_eq!(
            (v.ruling, v.reason.as_str()),
            (Ruling::Deny, "scope:new_errors")
        );

        let mut delta = Delta::default();
        delta.degraded.push(Degraded {
            check: "lint".into(),
            why: "post-run check failed: x".into(),
        });
        let v = judge_with(&d, vec![], delta.clone());
        assert_eq!(v.ruling, Ruling::Warn);
        assert!(v.evidence.degraded);
        let closed = decl(&json!({"create": ["a"], "fail_direction": "closed"}));
        assert_eq!(judge_with(&closed, vec![], delta).ruling, Ruling::Deny);
    }

    #[test]
    fn scan_failure_is_degraded_not_silent() {
        let d = decl(&json!({"create": ["a"]}));
        let v = judge(Inputs {
            decl: &d,
            changes: Err("more than 2 files".into()),
            observations: &[],
            delta: Delta::default(),
        });
        assert_eq!(
            (v.ruling, v.reason.as_str()),
            (Ruling::Warn, "scope:observation_failed")
        );
        assert!(v.evidence.degraded);
    }

    #[test]
    fn unfulfilled_only_enforced_when_strict_and_ignores_wildcards() {
        let v = verdict(&json!({"create": ["docs/a.md", "src/*.rs"]}), vec![]);
        assert_eq!(v.ruling, Ruling::Allow);
        assert_eq!(v.evidence.unfulfilled.len(), 1);
        let v = verdict(
            &json!({"create": ["docs/a.md", "src/*.rs"], "strict_unfulfilled": true}),
            vec![],
        );
        assert_eq!(
            (v.ruling, v.reason.as_str()),
            (Ruling::Warn, "scope:declared_but_unwritten")
        );
    }

    #[test]
    fn most_restrictive_wins_and_ties_keep_the_first() {
        let v = verdict(
            &json!({"modify": ["src/**"], "forbid": ["src/secret"]}),
            vec![
                change("src/secret", Kind::Modify),
                change("src/gone", Kind::Delete),
                change("other", Kind::Create),
            ],
        );
        assert_eq!(v.reason, "scope:forbidden_path");
        assert_eq!(v.evidence.all_reasons.len(), 3);
        assert_eq!(v.evidence.counts.violations, 3);
    }

    #[test]
    fn acs_shape_has_no_extra_top_level_keys() {
        let v = verdict(&json!({"create": ["a"]}), vec![]);
        let j = serde_json::to_value(&v).unwrap();
        let keys: Vec<&str> = j.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, vec!["decision", "reason", "message", "evidence"]);
    }

    #[test]
    fn attribution_uses_exact_paths_only() {
        let d = decl(&json!({"create": ["docs/**"]}));
        let obs = vec![Observation {
            tool: "Write".into(),
            tool_use_id: Some("t1".into()),
            paths: vec!["docs/readme.md".into()],
            ts: String::new(),
        }];
        let v = judge(Inputs {
            decl: &d,
            changes: Ok(vec![
                change("docs/readme.md", Kind::Create),
                change("readme.md", Kind::Create),
            ]),
            observations: &obs,
            delta: Delta::default(),
        });
        let by_path: HashMap<&str, &ChangeRecord> = v
            .evidence
            .permitted
            .iter()
            .chain(&v.evidence.violations)
            .map(|r| (r.path.as_str(), r))
            .collect();
        assert_eq!(by_path["docs/readme.md"].tool.as_deref(), Some("Write"));
        assert_eq!(by_path["readme.md"].tool, None);
    }
}
