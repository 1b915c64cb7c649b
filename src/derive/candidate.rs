//! The candidate document's schema, as types: a candidate rule ([`Candidate`]), the evidence in
//! its `meta` ([`Meta`]) and the document around them ([`Document`]).
//!
//! Guarantees: serialising these types is the only way derive writes a candidate, so the keys
//! a candidate carries are the fields below, in field order (optional evidence is left out,
//! never written as `null`, unless its field says so). The key lists other code keeps by hand
//! are checked against the types here: the meta keys a merge treats as derive's own
//! (`merge::DERIVED_META`), the rule keys and top-level keys the rule parser accepts
//! (`rules::parse`), and the top-level keys `docs/rule-format.md` names.

use serde::Serialize;
use serde_json::Value;

use super::contrast::TokenEvidence;
use super::fields::FieldUnless;
use crate::window::{Window, iso};

/// One candidate rule: what the backtest runs (the skeleton), then message, evidence and
/// examples. Field order is the document's key order.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct Candidate {
    /// The cluster's id (`derived-bash-psql-2751413c`).
    pub id: String,
    /// The tool glob.
    pub tool: String,
    /// `segment` etc. for Bash candidates.
    #[serde(rename = "match", skip_serializing_if = "Option::is_none")]
    pub match_mode: Option<&'static str>,
    /// The input field the patterns read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// Patterns that fire the rule.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub any: Vec<String>,
    /// Patterns that spare a call.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unless: Vec<String>,
    /// `"i"` for case-insensitive patterns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flags: Option<&'static str>,
    /// The learned `when` conditions (the rule format's condition object).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub when: Option<Value>,
    /// 60 for a tool-wide candidate, 40 otherwise.
    pub severity: u8,
    /// Always `monitor`: a candidate logs until a human promotes it.
    pub action: &'static str,
    /// The draft message (absent from the skeleton the backtest runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The evidence (absent from the skeleton).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Calls it must and must not fire on, re-checked with the real matcher.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub examples: Option<Examples>,
}

impl Candidate {
    /// The candidate as a JSON object (what `rules::backtest::probe` and the merge read).
    #[must_use]
    pub(crate) fn to_map(&self) -> serde_json::Map<String, Value> {
        match serde_json::to_value(self) {
            Ok(Value::Object(m)) => m,
            _ => serde_json::Map::new(),
        }
    }
}

/// A candidate's evidence (`meta`). Field order is the document's key order.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct Meta {
    /// One line: how many failures, over how many days.
    pub why: String,
    /// The day it was first written (`YYYY-MM-DD`; a merge keeps the first).
    pub added: String,
    /// `callus:SOURCE+…`: where the failures were recorded from.
    pub telemetry_ref: String,
    /// How the pattern was found (`program`, `missing-flag`, …).
    pub kind: &'static str,
    /// The failures it answers for (the backtest's, with a denominator).
    pub fail_count: usize,
    /// The failures of its clusters.
    pub cluster_fail_count: usize,
    /// Matched calls that exited 0 with a failure's signature in their output.
    pub masked_count: u64,
    /// A tool-wide cluster with no one signature: how many it saw.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub distinct_signatures: Option<usize>,
    /// The primary cluster's error signature (absent when `distinct_signatures` is given).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_signature: Option<String>,
    /// The primary cluster's command shape.
    pub command_shape: String,
    /// The latest failure's command, redacted and capped.
    pub sample_command: String,
    /// The latest failure's error, redacted and capped.
    pub sample_error: String,
    /// The first failure (RFC 3339).
    pub first_seen: String,
    /// The last failure (RFC 3339).
    pub last_seen: String,
    /// The evidence tier.
    pub tier: &'static str,
    /// The tier in words.
    pub tier_basis: String,
    /// Attempts in the matched population (`null` without a denominator).
    pub attempt_count: Option<u64>,
    /// Sessions the matched failures span (with a denominator).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_sessions: Option<u64>,
    /// Days the matched failures span (with a denominator).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_days: Option<u64>,
    /// The attempt floor the tier was graded with, when not the default.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_attempts: Option<u64>,
    /// `true` when a threshold in its condition was learned from the history.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threshold_learned: Option<bool>,
    /// Failure rate of the matched population (`null` without a denominator).
    pub fail_rate: Option<f64>,
    /// The furthest its tier lets it be promoted.
    pub action_ceiling: &'static str,
    /// What the pattern matched in the window.
    pub backtest: BacktestMeta,
    /// Attempts of the primary cluster's shape (program clusters).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shape_attempts: Option<u64>,
    /// The contrast behind its `unless` (enough successes compared).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub contrast: Option<ContrastMeta>,
    /// A tool-wide candidate's field contrast.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field_contrast: Option<FieldUnless>,
    /// Why the pattern also matching successes lowers (or does not lower) its ceiling.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub crossfire_note: Option<String>,
    /// Every cluster folded into it, when more than one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clusters: Option<Vec<FoldedCluster>>,
    /// The window it was derived over.
    pub window: WindowSpan,
}

/// `meta.backtest`: what the pattern matched in the window, and over which calls.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct BacktestMeta {
    /// Calls matched.
    pub matched: u64,
    /// Of them, failures.
    pub failures: u64,
    /// `failures / matched` (`null` when nothing matched).
    pub fail_rate: Option<f64>,
    /// Successes matched.
    pub crossfire: u64,
    /// Sessions of the matched failures.
    pub sessions: u64,
    /// The first matched call (RFC 3339).
    pub first_seen: Option<String>,
    /// The last matched call (RFC 3339).
    pub last_seen: Option<String>,
    /// Which calls it ran over, in words.
    pub scope: String,
}

/// `meta.contrast`: the successes and failures compared, and what became `unless`/narrowing.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct ContrastMeta {
    /// Successes of the shape compared.
    pub successes: u64,
    /// Failures of the cluster compared.
    pub failures: u64,
    /// Flags that became `unless` clauses.
    pub unless: Vec<TokenEvidence>,
    /// The token that narrows `any` (`null`: none).
    pub narrow: Option<TokenEvidence>,
}

/// One cluster folded into a candidate (`meta.clusters`).
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct FoldedCluster {
    /// Its id (a merge matches an earlier candidate on any of these).
    pub id: String,
    /// Its error signature.
    pub signature: String,
    /// Its failures.
    pub fail_count: usize,
}

/// A window as the document states it.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct WindowSpan {
    /// Start (RFC 3339, inclusive).
    pub since: String,
    /// End (RFC 3339, exclusive).
    pub until: String,
    /// Length in days.
    pub days: i64,
}

impl From<Window> for WindowSpan {
    fn from(w: Window) -> Self {
        WindowSpan {
            since: iso(w.since_ms),
            until: iso(w.until_ms),
            days: w.days(),
        }
    }
}

/// `examples`: a failing call it fires on, a success it spares.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct Examples {
    /// Failures it must fire on.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub should_fire: Vec<String>,
    /// Successes it must spare.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub should_not_fire: Vec<String>,
}

/// The candidate document `callus derive` prints and merges. Field order is its key order.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct Document {
    /// Always `derived-candidates`.
    pub ruleset: &'static str,
    /// Always `fail-open`.
    pub bias: &'static str,
    /// What the run did, in words.
    pub description: String,
    /// The candidates.
    pub rules: Vec<Candidate>,
    /// Clusters withheld as anecdotal.
    pub dropped_anecdotal: Vec<Dropped>,
    /// How the run was made, and what it found that is no candidate.
    pub generated: Generated,
    /// The window.
    pub window: WindowSpan,
    /// The observational caveat.
    pub caveat: &'static str,
}

/// One withheld (anecdotal) cluster (`dropped_anecdotal`).
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct Dropped {
    /// The tool glob.
    pub tool: String,
    /// Its shape (`(tool-wide)` for a tool-wide cluster).
    pub shape: String,
    /// Its id.
    pub id: String,
    /// Its failures.
    pub fail_count: usize,
    /// Its first `any` pattern.
    pub pattern: Option<String>,
    /// Its tier.
    pub tier: &'static str,
    /// The tier in words.
    pub tier_basis: String,
    /// Attempts (`null` without a denominator).
    pub attempt_count: Option<u64>,
    /// Failure rate (`null` without a denominator).
    pub fail_rate: Option<f64>,
    /// Its tier's ceiling.
    pub action_ceiling: &'static str,
}

/// `generated`: the run's options and its findings that are no candidate.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct Generated {
    /// When (RFC 3339).
    pub at: String,
    /// `callus derive VERSION`.
    pub by: &'static str,
    /// `--min-count`.
    pub min_count: u64,
    /// `--min-attempts`.
    pub min_attempts: u64,
    /// `--keep-anecdotal`.
    pub keep_anecdotal: bool,
    /// The tools left out (`derive explain` reads them back).
    pub excluded_tools: Vec<String>,
    /// Candidates a reviewed layer already declares.
    pub already_promoted: Vec<AlreadyPromoted>,
    /// Recurring clusters the outcome model judged no rule.
    pub not_rules: Vec<NotRule>,
    /// Failures of the harness and the environment, by kind.
    pub environment: Vec<EnvironmentEntry>,
}

/// One candidate a reviewed layer already declares (`generated.already_promoted`).
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct AlreadyPromoted {
    /// Its id.
    pub id: String,
    /// The layer's file.
    pub layer: String,
    /// Its failures in this window.
    pub fail_count: usize,
}

/// One recurring cluster judged no rule (`generated.not_rules`).
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct NotRule {
    /// Its id.
    pub id: String,
    /// The tool glob.
    pub tool: String,
    /// Its shape.
    pub shape: String,
    /// `environment`, `guess`, `lesson`.
    pub finding: &'static str,
    /// Why it is no candidate, in words.
    pub why: &'static str,
    /// Its error signature.
    pub error_signature: String,
    /// Its failures.
    pub fail_count: usize,
    /// Calls its pattern matched.
    pub matched: u64,
    /// Of them, failures.
    pub matched_failures: u64,
    /// Sessions of the matched failures.
    pub sessions: u64,
}

/// One kind of harness or environment failure (`generated.environment`).
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct EnvironmentEntry {
    /// What went wrong, in words.
    pub kind: &'static str,
    /// Calls it hit.
    pub calls: u64,
    /// Distinct command shapes among them.
    pub programs: u64,
    /// Distinct sessions.
    pub sessions: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The keys `value` serialises to, in order.
    fn keys(value: &impl Serialize) -> Vec<String> {
        match serde_json::to_value(value).unwrap() {
            Value::Object(m) => m.keys().cloned().collect(),
            v => panic!("not an object: {v}"),
        }
    }

    /// Every optional field set: the most keys each type writes.
    fn full_meta() -> Meta {
        Meta {
            distinct_signatures: Some(1),
            error_signature: Some(String::new()),
            failure_sessions: Some(1),
            failure_days: Some(1),
            min_attempts: Some(1),
            threshold_learned: Some(true),
            shape_attempts: Some(1),
            contrast: Some(ContrastMeta::default()),
            field_contrast: Some(FieldUnless {
                field: String::new(),
                in_successes: 0,
                successes: 0,
                failures: 0,
            }),
            crossfire_note: Some(String::new()),
            clusters: Some(Vec::new()),
            ..Meta::default()
        }
    }

    fn full_candidate() -> Candidate {
        Candidate {
            match_mode: Some("segment"),
            field: Some(String::new()),
            any: vec![String::new()],
            unless: vec![String::new()],
            flags: Some("i"),
            when: Some(Value::Null),
            message: Some(String::new()),
            meta: Some(full_meta()),
            examples: Some(Examples::default()),
            ..Candidate::default()
        }
    }

    /// The merge keeps a human's meta keys and replaces derive's own: its list of derive's
    /// own is exactly what a candidate's meta can hold.
    #[test]
    fn the_merges_meta_keys_are_the_meta_types_fields() {
        let mut want = keys(&full_meta());
        want.sort();
        let mut listed: Vec<String> = super::super::merge::DERIVED_META
            .iter()
            .map(|s| (*s).to_string())
            .collect();
        listed.sort();
        assert_eq!(listed, want);
    }

    /// Every key a candidate can carry is a key the rule parser accepts, and the skeleton
    /// the backtest runs carries no evidence.
    #[test]
    fn a_candidates_keys_are_rule_keys() {
        for key in keys(&full_candidate()) {
            assert!(
                crate::rules::parse::RULE_KEYS.contains(&key.as_str()),
                "{key} is not a rule key"
            );
        }
        let skeleton = keys(&Candidate::default());
        assert_eq!(skeleton, ["id", "tool", "severity", "action"]);
    }

    /// The document's keys are the top-level keys the parser accepts, and the ones
    /// `docs/rule-format.md` says `callus derive --out` writes.
    #[test]
    fn the_documents_keys_are_the_parsers_and_the_docs() {
        let doc = keys(&Document::default());
        assert_eq!(
            doc,
            [
                "ruleset",
                "bias",
                "description",
                "rules",
                "dropped_anecdotal",
                "generated",
                "window",
                "caveat"
            ]
        );
        for key in &doc {
            assert!(
                crate::rules::parse::TOP_LEVEL_KEYS.contains(&key.as_str()),
                "{key} is not a top-level key"
            );
        }
        let docs = include_str!("../../docs/rule-format.md");
        let sentence = docs
            .split("the keys `callus derive --out` writes")
            .nth(1)
            .and_then(|s| s.split(')').next())
            .expect("docs/rule-format.md names the keys derive writes");
        let named: Vec<&str> = sentence.split('`').skip(1).step_by(2).collect();
        assert_eq!(named, doc[4..], "docs/rule-format.md: {sentence}");
    }

    /// A window states its bounds and its length.
    #[test]
    fn a_window_span_states_bounds_and_days() {
        let w = Window::new(0, 2 * crate::window::DAY_MS).unwrap();
        let span = WindowSpan::from(w);
        assert_eq!(keys(&span), ["since", "until", "days"]);
        assert_eq!(span.days, 2);
        assert_eq!(span.since, iso(0));
    }
}
