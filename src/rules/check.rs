//! `guard check`: static validation of a ruleset (callusguard's checks, plus callus's
//! typed validation).
//!
//! A file is good when it parses with typed validation, every pattern compiles, no tiered
//! rule is armed above its tier's ceiling, and every `examples` assertion holds. Warnings
//! (patterns that need the backtracking engine, nested quantifiers) never fail a file.

use serde::Serialize;
use serde_json::{Map, Value};

use super::pattern::Engine;
use super::{Action, Document, Rule, Subject, parse_document, tier};

mod lines;

/// The outcome of checking one ruleset.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct FileReport {
    /// The file (or layer) name.
    pub name: String,
    /// Whether it passed.
    pub ok: bool,
    /// Number of rules.
    pub rules: usize,
    /// Example assertions that passed.
    pub examples_passed: usize,
    /// Rules that carry examples.
    pub rules_with_examples: usize,
    /// Problems that fail the file.
    pub errors: Vec<String>,
    /// Failed example assertions.
    pub example_failures: Vec<String>,
    /// Non-fatal warnings.
    pub warnings: Vec<String>,
}

impl FileReport {
    /// A report on `name` with nothing checked yet (not ok).
    fn empty(name: &str) -> Self {
        FileReport {
            name: name.to_string(),
            ok: false,
            rules: 0,
            examples_passed: 0,
            rules_with_examples: 0,
            errors: Vec::new(),
            example_failures: Vec::new(),
            warnings: Vec::new(),
        }
    }
}

/// Check a ruleset given as text.
#[must_use]
pub(crate) fn check_text(name: &str, text: &str) -> FileReport {
    check_layer_text(name, text, false)
}

/// Check a ruleset given as text; `user_layer` says it is `$CALLUS_HOME/rules.json`, the one
/// file whose `disable` list is honoured.
#[must_use]
pub(crate) fn check_layer_text(name: &str, text: &str, user_layer: bool) -> FileReport {
    let mut report = FileReport::empty(name);
    if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(text) {
        report.errors.push(format!("does not parse — {e}"));
        return report;
    }
    match parse_document(name, text) {
        Ok(doc) => check_document(&doc, user_layer, &lines::rule_lines(text), &mut report),
        Err(e) => lines::every_error(name, text, &e, &mut report),
    }
    report.ok = report.errors.is_empty() && report.example_failures.is_empty();
    report
}

/// `lines[i]` is the line rule `i` starts on: every problem of a rule is reported as
/// `id: … (line N)`.
fn check_document(doc: &Document, user_layer: bool, lines: &[usize], report: &mut FileReport) {
    report.rules = doc.rules.len();
    if !doc.disable.is_empty() {
        if !user_layer {
            report.warnings.push(
                "`disable` is honoured only in $CALLUS_HOME/rules.json, where it switches off starter rules by id"
                    .to_string(),
            );
        }
        let starter = super::layers::RuleSet::starter().ok();
        for id in &doc.disable {
            let known = starter
                .as_ref()
                .is_some_and(|s| s.rules().any(|(_, r)| r.id == *id));
            if !known {
                report.warnings.push(format!(
                    "`disable` names '{id}', which is not a starter rule"
                ));
            }
        }
    }
    for (i, rule) in doc.rules.iter().enumerate() {
        // After the message, so each still starts with the rule id (derive reads it there).
        let at = lines
            .get(i)
            .map_or_else(String::new, |line| format!(" (line {line})"));
        for p in rule.any.iter().chain(&rule.unless) {
            match p.compile() {
                Err(e) => report
                    .errors
                    .push(format!("{}: bad regex '{}': {e}{at}", rule.id, p.source())),
                Ok(Engine::Backtracking) => report.warnings.push(format!(
                    "{}: regex '{}' needs the backtracking engine (lookaround or backreference); it runs with a bounded budget",
                    rule.id,
                    p.source()
                )),
                Ok(Engine::Linear) => {}
            }
            if redos_hint(p.source()) {
                report.warnings.push(format!(
                    "{}: regex '{}' has nested or overlapping quantifiers",
                    rule.id,
                    p.source()
                ));
            }
        }
        check_tier(rule, &at, report);
        check_examples(rule, &at, report);
    }
}

/// The tier ceiling (docs/rule-format.md#evidence-caps-the-action), on the stated `meta.tier`
/// and on the tier the rule's own
/// evidence numbers support; a stated tier its numbers contradict is an error too, so
/// editing `meta.tier` cannot arm a rule beyond its evidence.
fn check_tier(rule: &Rule, at: &str, report: &mut FileReport) {
    let stated = rule.tier();
    let evidence = tier::from_evidence(&rule.meta);
    if let (Some(label), Some((computed, _))) = (stated, evidence)
        && label != computed.label()
    {
        report.errors.push(format!(
            "{}: meta.tier '{label}' does not match its own evidence ({} of {} attempts → '{}'){at}",
            rule.id,
            show(rule.meta.get("fail_count")),
            show(rule.meta.get("attempt_count")),
            computed.label()
        ));
    }
    let tiers = stated
        .map(str::to_string)
        .into_iter()
        .chain(evidence.map(|(t, _)| t.label().to_string()));
    for label in tiers {
        let cap = tier::ceiling_of(&label);
        if rule.action > cap {
            let line = tier::Tier::parse(&label).map_or("unrecognised tier", tier::Tier::one_liner);
            report.errors.push(format!(
                "{}: action '{}' exceeds the ceiling for tier '{label}' ('{cap}') — {line}. Either gather more evidence or lower the action.{at}",
                rule.id, rule.action
            ));
            break;
        }
    }
}

fn show(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => "none".to_string(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

fn check_examples(rule: &Rule, at: &str, report: &mut FileReport) {
    let Some(ex) = &rule.examples else {
        return;
    };
    if ex.should_fire.is_empty() && ex.should_not_fire.is_empty() {
        return;
    }
    report.rules_with_examples += 1;
    let cases = ex
        .should_fire
        .iter()
        .map(|s| (s, true))
        .chain(ex.should_not_fire.iter().map(|s| (s, false)));
    for (s, want) in cases {
        match example_fires(rule, s) {
            Ok(fired) if fired == want => report.examples_passed += 1,
            Ok(_) => report.example_failures.push(format!(
                "{}: {} '{s}'{at}",
                rule.id,
                if want {
                    "should_fire did NOT fire:"
                } else {
                    "should_not_fire DID fire:"
                }
            )),
            Err(e) => report
                .example_failures
                .push(format!("{}: '{s}': {e}{at}", rule.id)),
        }
    }
}

/// Does `rule` fire on the example `text`, exactly as `guard check` runs examples: the text
/// at the rule's `field`, the tool glob's first alternative with its wildcards read as `x` (an effect rule that may
/// fire on `Bash` gets the text as a Bash command). `Err` when a pattern cannot
/// run. (Derive checks the examples it writes with this, so `guard check` agrees.)
pub(crate) fn example_fires(rule: &Rule, text: &str) -> std::result::Result<bool, String> {
    // An effect rule whose glob admits `Bash` runs its examples as Bash commands.
    let bash =
        rule.match_mode == super::MatchMode::Effect && super::glob::matches(&rule.tool, "Bash");
    let tool: String = if bash {
        "Bash".into()
    } else {
        super::glob::example_name(&rule.tool)
    };
    let input = example_input(if bash { "command" } else { &rule.field }, text);
    rule.fires(&Subject::new(&tool, &input))
        .map(|hit| hit.is_some())
}

/// `{field: value}` with a dotted field expanded into nested objects.
fn example_input(field: &str, value: &str) -> Value {
    let mut v = Value::String(value.to_string());
    for part in field.rsplit('.') {
        let mut m = Map::new();
        m.insert(part.to_string(), v);
        v = Value::Object(m);
    }
    v
}

/// callusguard's two `ReDoS` hints: `(x+)+` and `(a|a)*`.
fn redos_hint(p: &str) -> bool {
    static HINTS: std::sync::OnceLock<[regex::Regex; 2]> = std::sync::OnceLock::new();
    let hints = HINTS.get_or_init(|| {
        [
            regex::Regex::new(r"\([^)]*[+*]\)[+*]").expect("valid"),
            regex::Regex::new(r"\(([^)|]+)\|([^)|]+)\)[+*]").expect("valid"),
        ]
    });
    if hints[0].is_match(p) {
        return true;
    }
    hints[1]
        .captures_iter(p)
        .any(|c| c.get(1).map(|m| m.as_str()) == c.get(2).map(|m| m.as_str()))
}

/// Is `action` allowed for a rule of `tier_label`? (Used by promote.)
#[must_use]
pub(crate) fn within_ceiling(action: Action, tier_label: &str) -> bool {
    action <= tier::ceiling_of(tier_label)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn example_failures_and_ceilings_fail_the_file() {
        let text = r#"{"rules": [
            {"id": "a", "any": ["psql"], "message": "m",
             "examples": {"should_fire": ["psql x", "mysql"], "should_not_fire": ["ls"]}},
            {"id": "b", "any": ["x"], "action": "block", "message": "m", "meta": {"tier": "reproducible"}},
            {"id": "c", "any": ["(a+)+", "x(?!y)"], "action": "monitor"}
        ]}"#;
        let r = check_text("t.json", text);
        assert!(!r.ok);
        assert_eq!(r.rules, 3);
        assert_eq!(r.examples_passed, 2);
        assert_eq!(
            r.example_failures,
            vec!["a: should_fire did NOT fire: 'mysql' (line 2)".to_string()]
        );
        assert!(r.errors[0].starts_with("b: action 'block' exceeds the ceiling"));
        assert!(r.errors[0].ends_with("(line 4)"), "{}", r.errors[0]);
        assert!(r.errors[0].contains("exceeds the ceiling for tier 'reproducible' ('deny')"));
        assert_eq!(r.warnings.len(), 2);
    }

    #[test]
    fn bad_regex_and_bad_json() {
        let r = check_text(
            "t.json",
            r#"{"rules": [{"id": "a", "any": ["(x"], "message": "m"}]}"#,
        );
        assert!(
            !r.ok
                && r.errors[0].starts_with("a: bad regex '(x'")
                && r.errors[0].ends_with(" (line 1)")
        );
        let r = check_text("t.json", "{nope");
        assert!(!r.ok && r.errors[0].starts_with("does not parse"));
    }

    #[test]
    fn disable_lists_are_flagged() {
        let r = check_text(
            "t.json",
            r#"{"disable": ["remote-script-to-shell", "no-such-rule"], "rules": []}"#,
        );
        assert!(r.ok);
        assert_eq!(r.warnings.len(), 2, "{:?}", r.warnings);
        assert!(r.warnings[1].contains("'no-such-rule'"));
    }

    #[test]
    fn starter_passes() {
        let r = check_text("starter", super::super::layers::STARTER_JSON);
        assert!(r.ok, "{r:?}");
    }
}
