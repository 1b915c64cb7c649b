//! The decision as an Agent Control Specification verdict (the agent-hooks contract ACS 0.4
//! is rebased on), stored with every audit record so the chain speaks a standard vocabulary
//! (callusguard's audit did not).
//!
//! Mapping (three decisions only): allow and monitor → `allow`; nudge → `allow` with one
//! warning per delivered message; deny and block → `deny` with reason `callus:<rule id>`. An
//! internal error is `allow` with a `callus:internal_error` warning when the guard fails open,
//! and `deny` with that reason when it fails closed. Reasons are `callus:`-prefixed (never the
//! reserved `host_error:`/`runtime_error:` prefixes); messages are capped.

use super::{Decision, DecisionKind};
pub(crate) use crate::store::audit::{AcsVerdict, AcsWarning};

pub(crate) use crate::store::audit::{INTERNAL_ERROR, MESSAGE_CHARS};

fn cap(s: &str) -> String {
    match s.char_indices().nth(MESSAGE_CHARS) {
        Some((cut, _)) => format!("{}…", &s[..cut]),
        None => s.to_string(),
    }
}

/// The verdict for a decision the guard reached.
#[must_use]
pub(crate) fn for_decision(decision: &Decision) -> AcsVerdict {
    match decision.kind {
        DecisionKind::Allow => AcsVerdict {
            decision: "allow".into(),
            reason: None,
            message: None,
            warnings: Vec::new(),
        },
        DecisionKind::Nudge => AcsVerdict {
            decision: "allow".into(),
            reason: None,
            message: None,
            warnings: decision
                .notes
                .iter()
                .map(|(id, msg)| AcsWarning {
                    reason: format!("callus:{id}"),
                    message: cap(msg),
                })
                .collect(),
        },
        DecisionKind::Deny | DecisionKind::Block => {
            let winner = decision.winning();
            AcsVerdict {
                decision: "deny".into(),
                reason: winner.map(|w| format!("callus:{}", w.id)),
                message: winner.and_then(|w| w.message.as_deref()).map(cap),
                warnings: Vec::new(),
            }
        }
    }
}

/// The verdict for an internal error under the given policy.
#[must_use]
pub(crate) fn for_error(error: &str, fail_closed: bool) -> AcsVerdict {
    if fail_closed {
        AcsVerdict {
            decision: "deny".into(),
            reason: Some(INTERNAL_ERROR.into()),
            message: Some(cap(error)),
            warnings: Vec::new(),
        }
    } else {
        AcsVerdict {
            decision: "allow".into(),
            reason: None,
            message: None,
            warnings: vec![AcsWarning {
                reason: INTERNAL_ERROR.into(),
                message: cap(error),
            }],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guard::{Fired, resolve};
    use crate::rules::{Action, LayerKind};

    fn fired(id: &str, action: Action, msg: &str) -> Fired {
        Fired {
            id: id.into(),
            layer: LayerKind::User,
            layer_file: "u.json".into(),
            action,
            severity: 0.0,
            pattern: None,
            segment: None,
            message: Some(msg.into()),
            unanswered: None,
        }
    }

    #[test]
    fn actions_map_to_three_decisions() {
        let d = resolve(vec![fired("m", Action::Monitor, "x")], Vec::new());
        assert_eq!(for_decision(&d).decision, "allow");
        assert!(for_decision(&d).warnings.is_empty());
        let d = resolve(
            vec![
                fired("a", Action::Nudge, "one"),
                fired("b", Action::Nudge, "two"),
            ],
            Vec::new(),
        );
        let v = for_decision(&d);
        assert_eq!(v.decision, "allow");
        assert_eq!(v.warnings.len(), 2);
        assert_eq!(v.warnings[1].reason, "callus:b");
        for action in [Action::Deny, Action::Block] {
            let d = resolve(
                vec![fired("n", Action::Nudge, "n"), fired("w", action, "why")],
                Vec::new(),
            );
            let v = for_decision(&d);
            assert_eq!(
                (
                    v.decision.as_str(),
                    v.reason.as_deref(),
                    v.message.as_deref()
                ),
                ("deny", Some("callus:w"), Some("why"))
            );
        }
        let long = "x".repeat(500);
        assert_eq!(
            for_error(&long, true).message.unwrap().chars().count(),
            MESSAGE_CHARS + 1
        );
        assert_eq!(for_error("e", false).warnings[0].reason, INTERNAL_ERROR);
    }
}
