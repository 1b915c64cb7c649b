//! The per-call rule index: which rules of a layer the hook builds for one call.
//!
//! Building a rule (its strings, its patterns) costs more than checking it, and most rules
//! cannot fire on most calls. The hook checks every rule of every layer in full on every call
//! (`parse::check_document`: the same validity `guard check` applies, so a broken rule is
//! an error whatever the call), then builds only the rules `may_fire` admits: their tool
//! glob matches, their field is not blank, and one literal that every match of one of their
//! `any` patterns contains occurs in the text (see `prefilter`).
//!
//! Guarantees:
//! - Nothing on disk decides which rules are skipped. An earlier design kept this index in
//!   `$CALLUS_HOME/cache/`, where anything running as the user (the agent included) could
//!   write an index that listed no rules and so switched every layer off unseen; there is no
//!   cache now, and a file found there is never read. What a rule can skip follows from the
//!   layer file's own bytes, read on every call.
//! - Soundness: a skipped rule is one that would not have fired: [`crate::rules::Rule::fires`]
//!   starts with the same [`Subject::may_fire`] test on the same literals
//!   ([`super::pattern::literals_admit`]).

use std::cell::OnceCell;

use super::Subject;
use super::parse::Unbuilt;
use super::pattern::literals_admit;
use super::prefilter::{Required, required_literals};

/// Could `rule` fire on `call`? False only when it certainly does not. The literal
/// requirements come back when they were computed to decide, so the rule's patterns need
/// not scan themselves again ([`Unbuilt::build_with`]).
pub(crate) fn may_fire(rule: &Unbuilt<'_>, call: &Subject<'_>) -> (bool, Option<Required>) {
    // Scanned once, and only when the tool and field leave the question open.
    let literals: OnceCell<Required> = OnceCell::new();
    let may = call.may_fire(
        rule.tool(),
        rule.field(),
        rule.norm(),
        rule.mode(),
        rule.any().next().is_some(),
        |hay| {
            literals
                .get_or_init(|| rule.any().map(required_literals).collect())
                .iter()
                .any(|lits| literals_admit(lits.as_deref(), hay))
        },
    );
    (may, literals.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::parse::check_document;
    use serde_json::json;

    const TEXT: &str = r#"{"disable": ["x"], "rules": [
        {"id": "psql", "tool": "Bash", "any": ["\\bpsql\\b(?!.*-h)"], "message": "m"},
        {"id": "seg", "match": "segment", "norm": true, "any": ["^rm\\s", ".*"], "message": "m"},
        {"id": "write", "tool": "Write", "field": "file_path", "message": "m"}
    ]}"#;

    #[test]
    fn candidates_follow_tool_and_literals() {
        let checked = check_document("t", TEXT).unwrap();
        let may = |tool: &str, input: serde_json::Value| -> Vec<String> {
            let call = Subject::new(tool, &input);
            let out = checked.rules.iter().filter(|r| may_fire(r, &call).0);
            out.map(|r| r.id().to_string()).collect()
        };
        // `.*` has no literal requirement: the segment rule is always a candidate on text.
        assert_eq!(may("Bash", json!({"command": "ls"})), ["seg"]);
        assert_eq!(
            may("Bash", json!({"command": "PSQL -c 1"})),
            ["psql", "seg"]
        );
        assert_eq!(may("Bash", json!({"command": ""})), Vec::<String>::new());
        assert_eq!(may("Write", json!({"file_path": "a"})), ["write"]);
        // Non-ASCII text may fold to anything.
        assert_eq!(may("Bash", json!({"command": "ﬀ"})), ["psql", "seg"]);
    }
}
