//! The verdict for people: one headline, then what is outside the declaration,
//! the new findings, what the verdict could not see, and — on a denial — what to do next.
//! The same text is printed by `verify` and handed to the agent by the Stop hook.

use std::fmt::Write as _;

use super::verdict::{Ruling, Verdict};

/// Violations listed before "… and N more".
const MAX_VIOLATIONS: usize = 20;
/// New findings listed per check.
const MAX_FINDINGS: usize = 10;
/// Degraded checks listed.
const MAX_DEGRADED: usize = 5;

/// Render `verdict` as the multi-line report.
pub(crate) fn report(verdict: &Verdict) -> String {
    let ev = &verdict.evidence;
    let glyph = match verdict.ruling {
        Ruling::Allow => "✓",
        Ruling::Warn | Ruling::Escalate => "⚠",
        Ruling::Deny => "✗",
    };
    let mut s = format!(
        "{glyph} callus scope: {} — {}\n",
        verdict.ruling.as_str(),
        verdict.message
    );
    if !ev.violations.is_empty() {
        s.push_str("\n  Outside the declaration:\n");
        for v in ev.violations.iter().take(MAX_VIOLATIONS) {
            let _ = write!(s, "    {:<8} {}", v.kind.past(), v.path);
            if let Some(tool) = &v.tool {
                let _ = write!(s, "  [{tool}]");
            }
            if v.rule.starts_with("forbid:") {
                let _ = write!(s, "  ({})", v.rule);
            }
            if !v.hashed {
                s.push_str("  (size/mtime only)");
            }
            s.push('\n');
        }
        if ev.violations.len() > MAX_VIOLATIONS {
            let _ = writeln!(s, "    … and {} more", ev.violations.len() - MAX_VIOLATIONS);
        }
        let _ = writeln!(s, "\n  Declared: {}", ev.declared);
    }
    if !ev.new_findings.is_empty() {
        s.push_str("\n  New since the baseline (pre-existing findings suppressed):\n");
        for (check, findings) in &ev.new_findings {
            for f in findings.iter().take(MAX_FINDINGS) {
                let raw: String = f.raw.chars().take(200).collect();
                let _ = writeln!(s, "    {check}: {raw}");
            }
            if findings.len() > MAX_FINDINGS {
                let _ = writeln!(
                    s,
                    "    {check}: … and {} more",
                    findings.len() - MAX_FINDINGS
                );
            }
        }
    }
    if ev.degraded {
        s.push_str("\n  ⚠ Degraded — this verdict rests on incomplete information:\n");
        if let Some(e) = &ev.observation_error {
            let _ = writeln!(s, "    write set: {e}");
        }
        for d in ev.degraded_checks.iter().take(MAX_DEGRADED) {
            let _ = writeln!(s, "    {}: {}", d.check, d.why);
        }
    }
    if verdict.ruling == Ruling::Deny {
        let _ = write!(
            s,
            "\n  Revert the changes listed above (or fix the new findings). If they were \
             intended,\n  a person must re-declare the run to include them: \
             callus scope declare --run-id {} …\n",
            ev.run_id
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scope::declare::{Declaration, Kind, RootFrom};
    use crate::scope::fingerprint::Change;
    use crate::scope::verdict::{Inputs, judge};
    use serde_json::json;

    #[test]
    fn denial_names_the_path_the_declaration_and_the_way_out() {
        let tmp = std::env::temp_dir();
        let d = Declaration::from_value(
            &json!({"run_id": "r9", "create": ["docs/**"]}),
            "t",
            None,
            RootFrom::User(Some(&tmp)),
        )
        .unwrap();
        let v = judge(Inputs {
            decl: &d,
            changes: Ok(vec![Change {
                path: "src/other.py".into(),
                kind: Kind::Create,
                hashed: true,
            }]),
            observations: &[],
            delta: crate::scope::checks::Delta::default(),
        });
        let text = report(&v);
        assert!(text.starts_with("✗ callus scope: deny — "), "{text}");
        assert!(text.contains("    created  src/other.py\n"), "{text}");
        assert!(text.contains("Declared: create: docs/**"), "{text}");
        assert!(text.contains("--run-id r9"), "{text}");
    }
}
