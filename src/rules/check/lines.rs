//! Where each rule of a ruleset file starts, and every error of a file the typed parse
//! refused, each with its line, for `guard check`.
//!
//! The typed parse (`parse_document`, the one definition of validity, shared with the hook)
//! stops at the first problem. A person fixing a file wants all of them at once, so `guard
//! check` re-checks each rule on its own through that same parse (and a rule that parses
//! through the rest of `guard check`: regexes, tier ceilings, examples), then the document's
//! own keys, then duplicate ids: nothing here decides validity, it only finds every refusal
//! the checks would make, one rule at a time, and says at which line the rule starts.

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::FileReport;
use crate::Error;
use crate::rules::parse_document;

/// The 1-based line on which each rule object of `text` starts, in file order; empty when
/// the document has no `rules` array to read.
#[must_use]
pub(crate) fn rule_lines(text: &str) -> Vec<usize> {
    rule_raws(text)
        .iter()
        .map(|raw| line_at(text, raw.get()))
        .collect()
}

fn rule_raws(text: &str) -> Vec<&RawValue> {
    #[derive(Deserialize)]
    struct Rules<'a> {
        #[serde(borrow, default)]
        rules: Vec<&'a RawValue>,
    }
    serde_json::from_str::<Rules<'_>>(text)
        .map(|r| r.rules)
        .unwrap_or_default()
}

/// The line of `part`, a slice borrowed from `text`.
fn line_at(text: &str, part: &str) -> usize {
    let offset = (part.as_ptr() as usize)
        .saturating_sub(text.as_ptr() as usize)
        .min(text.len());
    memchr::memchr_iter(b'\n', &text.as_bytes()[..offset]).count() + 1
}

/// Every error of `text` (named `name`), which the typed parse refused with `first`, into
/// `report`: parse errors as `name:line: …`, the other checks of a rule that parses as
/// they report them (`id: … (line N)`). Falls back to `first` alone when nothing more
/// precise is found.
pub(crate) fn every_error(name: &str, text: &str, first: &Error, report: &mut FileReport) {
    let mut errors = Vec::new();
    let mut ids: Vec<(String, usize)> = Vec::new();
    let raws = rule_raws(text);
    for (i, raw) in raws.iter().enumerate() {
        let line = line_at(text, raw.get());
        let alone = format!("{{\"rules\":[{}]}}", raw.get());
        match parse_document(name, &alone) {
            Err(e) => errors.push(at_line(e, name, line, i)),
            Ok(doc) => {
                let mut one = FileReport::empty(name);
                super::check_document(&doc, false, &[line], &mut one);
                errors.append(&mut one.errors);
                report.example_failures.append(&mut one.example_failures);
                report.warnings.append(&mut one.warnings);
                report.examples_passed += one.examples_passed;
                report.rules_with_examples += one.rules_with_examples;
                if let Some(rule) = doc.rules.first() {
                    if let Some((_, first_line)) = ids.iter().find(|(id, _)| *id == rule.id) {
                        errors.push(
                            Error::Ruleset {
                                file: format!("{name}:{line}"),
                                rule: Some(rule.id.clone()),
                                field: Some("id".into()),
                                msg: format!("duplicate id (first used at line {first_line})"),
                            }
                            .to_string(),
                        );
                    } else {
                        ids.push((rule.id.clone(), line));
                    }
                }
            }
        }
    }
    // The document's own keys, with its rules set aside.
    if let Ok(Value::Object(mut doc)) = serde_json::from_str::<Value>(text) {
        if doc.get("rules").is_some_and(Value::is_array) {
            doc.insert("rules".into(), Value::Array(Vec::new()));
        }
        if let Err(e) = parse_document(name, &Value::Object(doc).to_string()) {
            let line = match &e {
                Error::Ruleset {
                    field: Some(field), ..
                } => text
                    .find(&format!("\"{field}\""))
                    .map(|at| line_at(text, &text[at..])),
                _ => None,
            };
            errors.push(match line {
                Some(line) => at_line(e, name, line, 0),
                None => e.to_string(),
            });
        }
    }
    if errors.is_empty() {
        errors.push(first.to_string());
    }
    report.rules = raws.len();
    report.errors.append(&mut errors);
}

/// `e`, found checking rule `index` alone, as the file's error at `line`.
fn at_line(e: Error, name: &str, line: usize, index: usize) -> String {
    let file = format!("{name}:{line}");
    match e {
        Error::Ruleset {
            rule, field, msg, ..
        } => Error::Ruleset {
            file,
            // Checked alone, the rule is `#0`; in the file it is `#index`.
            rule: rule.map(|r| if r == "#0" { format!("#{index}") } else { r }),
            field,
            msg,
        }
        .to_string(),
        Error::Json { source, .. } => format!("{file}: rule #{index}: {source}"),
        other => format!("{file}: {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO_BAD: &str = "{\"rules\": [\n  {\"id\": \"a\", \"any\": [\"x\"], \"action\": \"explode\", \"message\": \"m\"},\n  {\"id\": \"ok\", \"any\": [\"x\"], \"message\": \"m\"},\n  {\"id\": \"b\", \"any\": \"x\", \"message\": \"m\"},\n  {\"id\": \"ok\", \"any\": [\"y\"], \"message\": \"m\"}\n]}";

    #[test]
    fn rules_start_on_their_lines() {
        assert_eq!(rule_lines(TWO_BAD), vec![2, 3, 4, 5]);
        assert!(rule_lines("{nope").is_empty());
    }

    #[test]
    fn every_refusal_is_listed_with_its_line() {
        let first = parse_document("f.json", TWO_BAD).unwrap_err();
        let mut report = FileReport::empty("f.json");
        every_error("f.json", TWO_BAD, &first, &mut report);
        let errors = report.errors;
        assert_eq!(report.rules, 4);
        assert_eq!(errors.len(), 3, "{errors:?}");
        assert!(
            errors[0].starts_with("f.json:2: rule 'a': field 'action'"),
            "{errors:?}"
        );
        assert!(
            errors[1].starts_with("f.json:4: rule 'b': field 'any'"),
            "{errors:?}"
        );
        assert!(
            errors[2]
                .contains("f.json:5: rule 'ok': field 'id': duplicate id (first used at line 3)"),
            "{errors:?}"
        );
    }

    #[test]
    fn a_rule_that_parses_is_checked_in_full_beside_one_that_does_not() {
        let text = "{\"rules\": [\n {\"id\": \"bad\", \"any\": [\"x\"], \"action\": \"explode\", \"message\": \"m\"},\n {\"id\": \"re\", \"any\": [\"(x\"], \"message\": \"m\"},\n {\"id\": \"ex\", \"any\": [\"psql\"], \"message\": \"m\", \"examples\": {\"should_fire\": [\"mysql\"]}}\n]}";
        let first = parse_document("f.json", text).unwrap_err();
        let mut report = FileReport::empty("f.json");
        every_error("f.json", text, &first, &mut report);
        assert_eq!(report.errors.len(), 2, "{:?}", report.errors);
        assert!(
            report.errors[1].starts_with("re: bad regex") && report.errors[1].ends_with("(line 3)")
        );
        assert_eq!(
            report.example_failures,
            vec!["ex: should_fire did NOT fire: 'mysql' (line 4)".to_string()]
        );
    }

    #[test]
    fn a_missing_id_is_numbered_as_in_the_file_and_top_level_keys_count() {
        let text = "{\"rules\": [{\"id\": \"a\", \"any\": [\"x\"], \"message\": \"m\"},\n {\"any\": [\"x\"]}],\n \"colour\": 1}";
        let first = parse_document("f.json", text).unwrap_err();
        let mut report = FileReport::empty("f.json");
        every_error("f.json", text, &first, &mut report);
        let errors = report.errors;
        assert!(
            errors
                .iter()
                .any(|e| e.starts_with("f.json:2: rule '#1': field 'id'")),
            "{errors:?}"
        );
        assert!(
            errors
                .iter()
                .any(|e| e.starts_with("f.json:3:") && e.contains("colour")),
            "{errors:?}"
        );
    }
}
