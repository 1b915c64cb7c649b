//! The schema of `callus derive explain ID --json`, as types: the cluster, contrast and
//! backtest behind one candidate ([`Explanation`]).
//!
//! Guarantees: serialising these types is the only way the explanation is written, so its
//! keys are the fields below, in field order; a value that is absent is written as `null`
//! (the explanation always has the same keys), except `finding`, which only a cluster judged
//! no rule has.

use serde::Serialize;

use super::candidate::{BacktestMeta, WindowSpan};
use super::contrast::TokenEvidence;
use super::fields::FieldUnless;

/// One candidate (or promoted candidate, or cluster judged no rule), explained.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct Explanation {
    /// The candidate's id.
    pub id: String,
    /// Its clusters, the primary first.
    pub clusters: Vec<ClusterRow>,
    /// The window it was derived over.
    pub window: WindowSpan,
    /// How its pattern was found.
    pub kind: &'static str,
    /// What the rule matches.
    pub rule: Patterns,
    /// Its failures.
    pub failures: Failures,
    /// Matched calls that exited 0 with a failure's signature in their output.
    pub masked: Vec<CallSample>,
    /// The successes of its shape (program clusters).
    pub successes_of_shape: Option<ShapeSuccesses>,
    /// The contrast of its failures with the shape's successes.
    pub contrast: Option<ContrastExplained>,
    /// A tool-wide candidate's field contrast.
    pub field_contrast: Option<FieldUnless>,
    /// What the pattern matched in the window, with samples of the successes it matched.
    pub backtest: BacktestExplained,
    /// The evidence tier.
    pub tier: &'static str,
    /// The tier in words.
    pub tier_basis: String,
    /// The furthest the tier lets it be promoted.
    pub action_ceiling: &'static str,
    /// Why matching successes lowers (or does not lower) its ceiling.
    pub crossfire_note: Option<String>,
    /// The observational caveat.
    pub caveat: &'static str,
    /// The reviewed layer's file it was promoted into, if it was.
    pub promoted_in: Option<String>,
    /// What the outcome model judged it, when no rule.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finding: Option<FindingExplained>,
}

/// One cluster of the candidate.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct ClusterRow {
    /// Its id.
    pub id: String,
    /// The tool glob.
    pub tool: String,
    /// Its shape.
    pub shape: String,
    /// Its error signature.
    pub signature: String,
    /// Its failures.
    pub fail_count: usize,
}

/// What the rule matches (`null` where the rule has no such key).
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct Patterns {
    /// The tool glob.
    pub tool: String,
    /// The input field.
    pub field: Option<String>,
    /// The match mode.
    #[serde(rename = "match")]
    pub match_mode: Option<&'static str>,
    /// Patterns that fire it.
    pub any: Option<Vec<String>>,
    /// Patterns that spare a call.
    pub unless: Option<Vec<String>>,
    /// Pattern flags.
    pub flags: Option<&'static str>,
}

/// The candidate's failures: how many, by signature, and the calls.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct Failures {
    /// Every failure of its clusters.
    pub count: usize,
    /// Grouped by signature, most first.
    pub by_signature: Vec<SignatureRow>,
    /// The first failures, oldest first.
    pub calls: Vec<FailedCall>,
}

/// The failures of one signature.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct SignatureRow {
    /// The signature.
    pub signature: String,
    /// Its failures.
    pub failures: u64,
    /// Distinct sessions.
    pub sessions: usize,
    /// Distinct days.
    pub days: usize,
    /// The latest one's error line, redacted.
    pub error_line: Option<String>,
}

/// One failed call.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct FailedCall {
    /// When (RFC 3339).
    pub at: String,
    /// The tool.
    pub tool: String,
    /// The session.
    pub session: Option<String>,
    /// The command, redacted and capped.
    pub command: String,
    /// The error, redacted and capped.
    pub error: String,
    /// The error's telling line.
    pub error_line: Option<String>,
    /// The segment a Bash failure was blamed on.
    pub blamed: Option<Blamed>,
}

/// The segment a Bash failure was blamed on, and why.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct Blamed {
    /// The segment, redacted and capped.
    pub segment: String,
    /// Why it was blamed.
    pub why: &'static str,
}

/// A call shown as a sample.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct CallSample {
    /// When (RFC 3339).
    pub at: String,
    /// The command, redacted and capped.
    pub command: String,
}

/// The successes of the primary cluster's shape.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct ShapeSuccesses {
    /// The shape.
    pub shape: String,
    /// Its attempts.
    pub attempts: u64,
    /// Its successes.
    pub successes: u64,
    /// Some of them.
    pub samples: Vec<CallSample>,
}

/// The contrast, with the thresholds it applied.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct ContrastExplained {
    /// Successes compared.
    pub successes: u64,
    /// Failures compared.
    pub failures: u64,
    /// The thresholds, in words.
    pub rules: ContrastRules,
    /// Every token considered.
    pub tokens: Vec<TokenEvidence>,
}

/// The contrast's thresholds.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct ContrastRules {
    /// Fewest successes for a contrast.
    pub min_successes: u64,
    /// What makes a flag an `unless`.
    pub unless: String,
    /// What makes a token narrow `any`.
    pub narrow: String,
}

/// `meta.backtest` with samples of the successes the pattern matched.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct BacktestExplained {
    /// The candidate's `meta.backtest`.
    #[serde(flatten)]
    pub meta: BacktestMeta,
    /// Successes it matched.
    pub crossfire_samples: Vec<CallSample>,
}

/// A cluster judged no rule: what it is instead.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct FindingExplained {
    /// `environment`, `guess`, `lesson`.
    pub kind: &'static str,
    /// Why, in words.
    pub why: &'static str,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The explanation always has the same keys (absent values are `null`), in the order
    /// the text rendering reads them; only `finding` comes and goes.
    #[test]
    fn an_explanation_has_its_keys_whatever_is_absent() {
        let keys = |e: &Explanation| -> Vec<String> {
            match serde_json::to_value(e).unwrap() {
                serde_json::Value::Object(m) => m.keys().cloned().collect(),
                _ => unreachable!(),
            }
        };
        let mut e = Explanation::default();
        let want = [
            "id",
            "clusters",
            "window",
            "kind",
            "rule",
            "failures",
            "masked",
            "successes_of_shape",
            "contrast",
            "field_contrast",
            "backtest",
            "tier",
            "tier_basis",
            "action_ceiling",
            "crossfire_note",
            "caveat",
            "promoted_in",
        ];
        assert_eq!(keys(&e), want);
        e.finding = Some(FindingExplained::default());
        assert_eq!(keys(&e).last().map(String::as_str), Some("finding"));
        let backtest = serde_json::to_value(&e.backtest).unwrap();
        let backtest: Vec<&String> = backtest.as_object().unwrap().keys().collect();
        assert_eq!(
            backtest.last().map(|s| s.as_str()),
            Some("crossfire_samples")
        );
        assert_eq!(backtest.len(), 9);
        let rule = serde_json::to_value(&e.rule).unwrap();
        assert_eq!(rule["match"], serde_json::Value::Null);
    }
}
