//! Reading a ruleset document into validated [`Rule`]s.
//!
//! Two passes share one definition of validity. The typed pass (serde, one pass borrowing the
//! text, unknown keys refused) is what every hook call runs over every rule: it allocates
//! nothing for a string without escapes and never builds a generic JSON tree. When it rejects
//! a document for a type or key problem, a second, field-by-field pass over the JSON value
//! finds the same problem and names the file, the rule id and the field; meaning checks
//! (actions, messages, flags, dates) run once, in `check_rule`, for both. Checking and
//! building are apart (`check_document`, `Unbuilt::build`): the hook checks every rule
//! and builds only those that may fire on its call.

use std::borrow::Cow;

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;
use serde_json::value::RawValue;

use super::{Action, Examples, MatchMode, Pattern, Rule, date_prefix};
use crate::{Error, Result};

/// Keys a ruleset document may carry at the top level.
pub const TOP_LEVEL_KEYS: &[&str] = &[
    "ruleset",
    "bias",
    "description",
    "rules",
    "dropped_anecdotal",
    "disable",
    "generated",
    "window",
    "caveat",
];

/// Keys a rule may carry.
pub(crate) const RULE_KEYS: &[&str] = &[
    "id", "tool", "field", "any", "unless", "flags", "norm", "severity", "action", "message",
    "meta", "examples", "match", "pinned", "when",
];

/// A parsed ruleset document.
#[derive(Debug)]
pub struct Document {
    /// Its rules, in file order.
    pub rules: Vec<Rule>,
    /// Starter rule ids to disable (honoured only in the user layer).
    pub disable: Vec<String>,
}

/// The document as serde reads it, each rule as an `R`: typed ([`RuleFields`], one pass
/// over the text) or raw (to find which rule is wrong). Keep in step with
/// [`TOP_LEVEL_KEYS`] (tested).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DocFields<'a, R> {
    rules: Option<Vec<R>>,
    #[serde(borrow)]
    disable: Option<Vec<Cow<'a, str>>>,
    #[allow(dead_code)] // informational: accepted, never read
    ruleset: Option<IgnoredAny>,
    #[allow(dead_code)]
    bias: Option<IgnoredAny>,
    #[allow(dead_code)]
    description: Option<IgnoredAny>,
    #[allow(dead_code)]
    dropped_anecdotal: Option<IgnoredAny>,
    #[allow(dead_code)]
    generated: Option<IgnoredAny>,
    #[allow(dead_code)]
    window: Option<IgnoredAny>,
    #[allow(dead_code)]
    caveat: Option<IgnoredAny>,
}

/// One rule as serde reads it, borrowing every string from the document text (when it has
/// no escapes), so checking a rule allocates nothing. Keep in step with [`RULE_KEYS`] (tested).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RuleFields<'a> {
    #[serde(borrow)]
    id: Option<Text<'a>>,
    #[serde(borrow)]
    tool: Option<Text<'a>>,
    #[serde(borrow)]
    field: Option<Text<'a>>,
    #[serde(borrow)]
    any: Option<Vec<Text<'a>>>,
    #[serde(borrow)]
    unless: Option<Vec<Text<'a>>>,
    #[serde(borrow)]
    flags: Option<Text<'a>>,
    norm: Option<bool>,
    severity: Option<f64>,
    #[serde(borrow)]
    action: Option<Text<'a>>,
    #[serde(borrow)]
    message: Option<Text<'a>>,
    /// Read only when the rule is built; checked in place ([`check_meta`]).
    #[serde(borrow)]
    meta: Option<&'a RawValue>,
    #[serde(borrow)]
    examples: Option<ExampleFields<'a>>,
    #[serde(borrow, rename = "match")]
    match_mode: Option<Text<'a>>,
    pinned: Option<bool>,
    /// Conditions: checked by `check_rule`, read again when the rule is built.
    #[serde(borrow)]
    when: Option<&'a RawValue>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ExampleFields<'a> {
    #[serde(borrow)]
    should_fire: Option<Vec<Text<'a>>>,
    #[serde(borrow)]
    should_not_fire: Option<Vec<Text<'a>>>,
}

/// A string field read only to be inspected: borrowed from the document text when it has
/// no escapes (serde's own `Cow<str>` is always owned inside an `Option`), so a hook call
/// does not allocate a copy of every rule's action, flags and match mode.
struct Text<'a>(Cow<'a, str>);

impl std::ops::Deref for Text<'_> {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Text<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> std::result::Result<Text<'de>, E> {
                Ok(Text(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> std::result::Result<Text<'de>, E> {
                Ok(Text(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> std::result::Result<Text<'de>, E> {
                Ok(Text(Cow::Owned(v)))
            }
        }
        d.deserialize_str(Visit)
    }
}

/// (rule id or `#i`, field, message).
type FieldError = (Option<String>, Option<String>, String);

/// A rule of a document that validated as a whole, checked but not yet built: what the
/// hook needs to tell whether the rule can fire on a call, borrowed from the document text.
pub(crate) struct Unbuilt<'a> {
    fields: RuleFields<'a>,
    action: Action,
    mode: MatchMode,
}

impl Unbuilt<'_> {
    /// The rule's id.
    pub(crate) fn id(&self) -> &str {
        self.fields.id.as_deref().unwrap_or_default()
    }

    /// Its tool glob (`*` when absent).
    pub(crate) fn tool(&self) -> &str {
        self.fields.tool.as_deref().unwrap_or("*")
    }

    /// Its field path (`command` when absent).
    pub(crate) fn field(&self) -> &str {
        self.fields.field.as_deref().unwrap_or("command")
    }

    /// Its `norm` flag.
    pub(crate) fn norm(&self) -> bool {
        self.fields.norm.unwrap_or(false)
    }

    /// Where its patterns run.
    pub(crate) fn mode(&self) -> MatchMode {
        self.mode
    }

    /// Its `any` patterns, as written.
    pub(crate) fn any(&self) -> impl Iterator<Item = &str> {
        self.fields.any.iter().flatten().map(|t| &*t.0)
    }

    /// The rule.
    pub(crate) fn build(self) -> Rule {
        self.build_with(None)
    }

    /// The rule, given the literal requirements of its `any` patterns when they are known
    /// already (`index::may_fire` computed them from the same sources).
    pub(crate) fn build_with(self, required: Option<super::prefilter::Required>) -> Rule {
        let f = self.fields;
        let ci = f.flags.as_deref().is_some_and(|flags| flags.contains('i'));
        let patterns = |list: Option<Vec<Text<'_>>>| -> Vec<Pattern> {
            list.unwrap_or_default()
                .into_iter()
                .map(|p| Pattern::new(p.0.into_owned(), ci))
                .collect()
        };
        let any = match required {
            Some(required) => f
                .any
                .unwrap_or_default()
                .into_iter()
                .zip(required)
                .map(|(p, req)| Pattern::with_required(p.0.into_owned(), ci, req))
                .collect(),
            None => patterns(f.any),
        };
        let owned = |t: Option<Text<'_>>| t.map(|t| t.0.into_owned());
        let strings = |list: Option<Vec<Text<'_>>>| -> Vec<String> {
            list.unwrap_or_default()
                .into_iter()
                .map(|t| t.0.into_owned())
                .collect()
        };
        Rule {
            id: owned(f.id).unwrap_or_default(),
            tool: owned(f.tool).unwrap_or_else(|| "*".to_string()),
            field: owned(f.field).unwrap_or_else(|| "command".to_string()),
            any,
            unless: patterns(f.unless),
            norm: f.norm.unwrap_or(false),
            severity: f.severity.unwrap_or(0.0),
            action: self.action,
            message: owned(f.message).filter(|m| !m.trim().is_empty()),
            match_mode: self.mode,
            pinned: f.pinned.unwrap_or(false),
            // Checked to parse by `check_rule`.
            when: f
                .when
                .and_then(|raw| serde_json::from_str::<Value>(raw.get()).ok())
                .and_then(|v| super::condition::parse(&v).ok())
                .map(Box::new),
            // Checked to be an object by `check_rule`.
            meta: f
                .meta
                .and_then(|raw| serde_json::from_str(raw.get()).ok())
                .unwrap_or_default(),
            examples: f.examples.map(|e| Examples {
                should_fire: strings(e.should_fire),
                should_not_fire: strings(e.should_not_fire),
            }),
        }
    }
}

/// A ruleset document whose every rule has been checked, none built.
pub(crate) struct Checked<'a> {
    /// Its rules, in file order.
    pub rules: Vec<Unbuilt<'a>>,
    /// Its `disable` list.
    pub disable: Vec<String>,
}

/// Parse and validate a ruleset document; `file` names it in errors.
pub(crate) fn parse_document(file: &str, text: &str) -> Result<Document> {
    let checked = check_document(file, text)?;
    Ok(Document {
        rules: checked.rules.into_iter().map(Unbuilt::build).collect(),
        disable: checked.disable,
    })
}

/// Validate a ruleset document completely (every check [`parse_document`] makes: this is
/// the one definition of validity) without building any rule. Nothing is allocated per
/// rule beyond what escapes in its strings need.
pub(crate) fn check_document<'a>(file: &str, text: &'a str) -> Result<Checked<'a>> {
    let err = |rule: Option<String>, field: Option<String>, msg: String| Error::Ruleset {
        file: file.to_string(),
        rule,
        field,
        msg,
    };
    // One pass over the text when every rule has the right types (the common case: what a
    // hook call runs over every layer); otherwise the rule-by-rule pass finds the first
    // problem in file order, type or meaning.
    let doc = serde_json::from_str::<DocFields<'_, RuleFields<'a>>>(text)
        .map_err(|typed| first_error(file, text, typed))?;
    let fields = doc.rules.unwrap_or_default();
    let mut rules = Vec::with_capacity(fields.len());
    for (i, fields) in fields.into_iter().enumerate() {
        let (action, mode) = check_rule(i, &fields).map_err(|(r, f, m)| err(r, f, m))?;
        rules.push(Unbuilt {
            fields,
            action,
            mode,
        });
    }
    // The first rule (in file order) whose id an earlier rule has: sorting (id, index) pairs
    // is cheaper than hashing every id on each hook call.
    let mut ids: Vec<(&str, usize)> = rules.iter().enumerate().map(|(i, r)| (r.id(), i)).collect();
    ids.sort_unstable();
    let dup = ids
        .windows(2)
        .filter(|w| w[0].0 == w[1].0)
        .map(|w| w[1].1)
        .min();
    if let Some(dup) = dup.map(|i| &rules[i]) {
        return Err(err(
            Some(dup.id().to_string()),
            Some("id".into()),
            "duplicate id".into(),
        ));
    }
    Ok(Checked {
        rules,
        disable: doc
            .disable
            .unwrap_or_default()
            .into_iter()
            .map(Cow::into_owned)
            .collect(),
    })
}

/// The first problem of a document the typed pass refused (with `typed`): read rule by
/// rule, a rule whose types are right is checked for meaning before the next is read, so
/// the error is the first in file order, naming the rule and the field where it can.
fn first_error(file: &str, text: &str, typed: serde_json::Error) -> Error {
    let err = |rule: Option<String>, field: Option<String>, msg: String| Error::Ruleset {
        file: file.to_string(),
        rule,
        field,
        msg,
    };
    // Say exactly which rule and field is wrong; serde only knows line and column.
    let refused = |serde_err: serde_json::Error| {
        let explained = serde_json::from_str::<Value>(text)
            .map_err(|e| Error::json(file, e))
            .and_then(|v| explain(&v).map_err(|(r, f, m)| err(r, f, m)));
        match explained {
            Err(e) => e,
            Ok(()) => Error::json(file, serde_err),
        }
    };
    let doc = match serde_json::from_str::<DocFields<'_, &RawValue>>(text) {
        Ok(doc) => doc,
        Err(e) => return refused(e),
    };
    for (i, raw) in doc.rules.unwrap_or_default().iter().enumerate() {
        let Ok(fields) = serde_json::from_str::<RuleFields<'_>>(raw.get()) else {
            // Read the rules again in place, so serde's line and column are the file's.
            #[derive(Deserialize)]
            struct InPlace<'a> {
                #[serde(borrow)]
                #[allow(dead_code)] // read only for the error
                rules: Vec<RuleFields<'a>>,
            }
            let e = serde_json::from_str::<InPlace<'_>>(text)
                .err()
                .unwrap_or_else(|| serde::de::Error::custom(format!("rule #{i} is invalid")));
            return refused(e);
        };
        if let Err((r, f, m)) = check_rule(i, &fields) {
            return err(r, f, m);
        }
    }
    refused(typed)
}

/// Each rule of a ruleset document exactly as written (for display and round-trips; the
/// parsed [`Rule`] keeps only what it means).
#[cfg(test)]
pub(crate) fn rule_texts(text: &str) -> serde_json::Result<Vec<&RawValue>> {
    #[derive(Deserialize)]
    struct Rules<'a> {
        #[serde(borrow, default)]
        rules: Vec<&'a RawValue>,
    }
    serde_json::from_str::<Rules<'_>>(text).map(|r| r.rules)
}

/// Validate an already-parsed ruleset document.
pub fn document_from_value(file: &str, value: &Value) -> Result<Document> {
    parse_document(file, &value.to_string())
}

/// Everything a rule means beyond its JSON types: one place for both passes. Returns the
/// rule's action and match mode.
fn check_rule(
    index: usize,
    f: &RuleFields<'_>,
) -> std::result::Result<(Action, MatchMode), FieldError> {
    // A type problem comes before any meaning problem, as with the other typed fields.
    if f.meta.is_some_and(|m| !m.get().starts_with('{')) {
        let id =
            f.id.as_deref()
                .map_or_else(|| format!("#{index}"), str::to_string);
        return Err((Some(id), Some("meta".into()), "must be an object".into()));
    }
    let id = match f.id.as_deref() {
        Some(id) if !id.trim().is_empty() => id,
        _ => {
            return Err((
                Some(format!("#{index}")),
                Some("id".into()),
                "missing id".into(),
            ));
        }
    };
    let fail = |field: &str, msg: &str| {
        (
            Some(id.to_string()),
            Some(field.to_string()),
            msg.to_string(),
        )
    };
    // Ids are shown on one line everywhere.
    if id.chars().any(char::is_control) {
        return Err((
            Some(id.escape_debug().to_string()),
            Some("id".into()),
            "must not contain control characters".into(),
        ));
    }
    if let Some(tool) = f.tool.as_deref() {
        super::glob::check(tool).map_err(|e| fail("tool", e))?;
    }
    let flags = f.flags.as_deref().unwrap_or_default();
    if flags.chars().any(|c| c != 'i') {
        return Err(fail("flags", "only \"i\" is recognised"));
    }
    let action_name = f.action.as_deref().unwrap_or("nudge");
    let action = Action::parse(action_name).ok_or_else(|| {
        fail(
            "action",
            &format!("unknown action '{action_name}' (monitor, nudge, deny, block)"),
        )
    })?;
    let has_message = f.message.as_deref().is_some_and(|m| !m.trim().is_empty());
    if !has_message && action != Action::Monitor {
        return Err(fail("message", &format!("a {action} rule needs a message")));
    }
    let match_mode = match f.match_mode.as_deref() {
        None | Some("text") => MatchMode::Text,
        Some("segment") => MatchMode::Segment,
        Some("pipeline") => MatchMode::Pipeline,
        Some("writes") => MatchMode::Writes,
        Some("effect") => MatchMode::Effect,
        Some(_) => {
            return Err(fail(
                "match",
                "must be \"text\", \"segment\", \"pipeline\", \"writes\" or \"effect\"",
            ));
        }
    };
    if let Some(meta) = f.meta {
        check_meta(meta).map_err(|(field, msg)| fail(&field, msg))?;
    }
    if let Some(when) = f.when {
        let value = serde_json::from_str::<Value>(when.get())
            .map_err(|_| fail("when", "must be an object of conditions"))?;
        super::condition::parse(&value).map_err(|(field, msg)| fail(&field, &msg))?;
    }
    Ok((action, match_mode))
}

/// `meta` must be an object; `tier` a string, `promoted` and `added` dates.
fn check_meta(raw: &RawValue) -> std::result::Result<(), (String, &'static str)> {
    /// A key that is present, whatever its value (`null` included).
    #[derive(Default)]
    struct Present<'a>(Option<&'a RawValue>);
    impl<'de: 'a, 'a> Deserialize<'de> for Present<'a> {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
            <&'a RawValue>::deserialize(d).map(|r| Present(Some(r)))
        }
    }
    #[derive(Deserialize)]
    struct MetaKeys<'a> {
        #[serde(borrow, default)]
        tier: Present<'a>,
        #[serde(borrow, default)]
        promoted: Present<'a>,
        #[serde(borrow, default)]
        added: Present<'a>,
    }
    let not_object = || ("meta".to_string(), "must be an object");
    if !raw.get().starts_with('{') {
        return Err(not_object());
    }
    let keys = serde_json::from_str::<MetaKeys<'_>>(raw.get()).map_err(|_| not_object())?;
    if let Some(tier) = keys.tier.0
        && !(tier.get() == "null" || tier.get().starts_with('"'))
    {
        return Err(("meta.tier".into(), "must be a string"));
    }
    for (key, value) in [("promoted", keys.promoted.0), ("added", keys.added.0)] {
        let Some(value) = value else { continue };
        let date = serde_json::from_str::<Cow<'_, str>>(value.get())
            .ok()
            .and_then(|s| date_prefix(&s));
        if date.is_none() {
            return Err((format!("meta.{key}"), "must be a date YYYY-MM-DD"));
        }
    }
    Ok(())
}

/// Find the type or key problem the typed pass refused, field by field. `Ok(())` when this
/// pass finds nothing (the caller then reports serde's own message).
fn explain(value: &Value) -> std::result::Result<(), FieldError> {
    let top_err =
        |field: Option<&str>, msg: &str| (None, field.map(str::to_string), msg.to_string());
    let Value::Object(top) = value else {
        return Err(top_err(None, "top level is not a JSON object"));
    };
    if let Some(key) = top.keys().find(|k| !TOP_LEVEL_KEYS.contains(&k.as_str())) {
        return Err(top_err(Some(key), "unknown top-level key"));
    }
    if top
        .get("disable")
        .is_some_and(|v| !v.is_null() && !is_string_list(v))
    {
        return Err(top_err(Some("disable"), "must be an array of rule ids"));
    }
    let items = match top.get("rules") {
        None | Some(Value::Null) => return Ok(()),
        Some(Value::Array(items)) => items,
        Some(_) => return Err(top_err(Some("rules"), "must be an array")),
    };
    for (index, item) in items.iter().enumerate() {
        explain_rule(index, item)?;
    }
    Ok(())
}

fn is_string_list(v: &Value) -> bool {
    v.as_array().is_some_and(|a| a.iter().all(Value::is_string))
}

fn explain_rule(index: usize, value: &Value) -> std::result::Result<(), FieldError> {
    let Value::Object(obj) = value else {
        return Err((
            Some(format!("#{index}")),
            None,
            "rule is not an object".into(),
        ));
    };
    let id = match obj.get("id") {
        None | Some(Value::Null) => format!("#{index}"),
        Some(Value::String(s)) => s.clone(),
        Some(_) => {
            return Err((
                Some(format!("#{index}")),
                Some("id".into()),
                "must be a string".into(),
            ));
        }
    };
    let fail =
        |field: &str, msg: &str| Err((Some(id.clone()), Some(field.to_string()), msg.to_string()));
    if let Some(key) = obj.keys().find(|k| !RULE_KEYS.contains(&k.as_str())) {
        return fail(key, "unknown rule key");
    }
    for (key, v) in obj {
        let ok = match key.as_str() {
            _ if v.is_null() => true,
            "tool" | "field" | "flags" | "action" | "message" | "match" => v.is_string(),
            "any" | "unless" => is_string_list(v),
            "norm" | "pinned" => v.is_boolean(),
            "severity" => v.is_number(),
            "meta" => v.is_object(),
            "examples" => {
                let Value::Object(ex) = v else {
                    return fail("examples", "must be an object");
                };
                for (k, list) in ex {
                    if k != "should_fire" && k != "should_not_fire" {
                        return fail(&format!("examples.{k}"), "unknown examples key");
                    }
                    if !list.is_null() && !is_string_list(list) {
                        return fail(&format!("examples.{k}"), "must be an array of strings");
                    }
                }
                true
            }
            _ => true,
        };
        if !ok {
            let what = match key.as_str() {
                "any" | "unless" => "must be an array of strings",
                "norm" | "pinned" => "must be true or false",
                "severity" => "must be a number",
                "meta" => "must be an object",
                _ => "must be a string",
            };
            return fail(key, what);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_declared_key_is_accepted_by_the_typed_pass() {
        for key in TOP_LEVEL_KEYS {
            let text = format!("{{\"{key}\": null}}");
            assert!(parse_document("t", &text).is_ok(), "top-level {key}");
        }
        for key in RULE_KEYS {
            let text = format!(
                "{{\"rules\": [{{\"id\": \"r\", \"action\": \"monitor\", \"{key}\": null}}]}}"
            );
            let text = text.replace(
                "\"id\": \"r\", \"action\": \"monitor\", \"id\": null",
                "\"id\": \"r\", \"action\": \"monitor\"",
            );
            let text = text.replace(
                "\"action\": \"monitor\", \"action\": null",
                "\"action\": \"monitor\"",
            );
            assert!(parse_document("t", &text).is_ok(), "rule key {key}: {text}");
        }
    }

    #[test]
    // one table of malformed rules and the message each gets
    #[allow(clippy::too_many_lines)]
    fn the_explaining_pass_finds_what_the_typed_pass_refused() {
        let cases = [
            ("[1]", "t: top level is not a JSON object"),
            (r#"{"rules": {}}"#, "t: field 'rules': must be an array"),
            (
                r#"{"disable": "x"}"#,
                "t: field 'disable': must be an array of rule ids",
            ),
            (r#"{"rules": [3]}"#, "t: rule '#0': rule is not an object"),
            (
                r#"{"rules": [{"id": 3}]}"#,
                "t: rule '#0': field 'id': must be a string",
            ),
            (
                r#"{"rules": [{"id": "r", "tool": 1}]}"#,
                "t: rule 'r': field 'tool': must be a string",
            ),
            (
                r#"{"rules": [{"id": "r", "tool": "{Edit,{Write}}", "message": "m"}]}"#,
                "t: rule 'r': field 'tool': brace groups cannot be nested",
            ),
            (
                r#"{"rules": [{"id": "r", "tool": "{}", "message": "m"}]}"#,
                "t: rule 'r': field 'tool': a brace group's alternatives must not be empty",
            ),
            (
                r#"{"rules": [{"id": "r", "norm": "yes"}]}"#,
                "t: rule 'r': field 'norm': must be true or false",
            ),
            (
                r#"{"rules": [{"id": "r", "meta": []}]}"#,
                "t: rule 'r': field 'meta': must be an object",
            ),
            (
                r#"{"rules": [{"id": "r", "examples": []}]}"#,
                "t: rule 'r': field 'examples': must be an object",
            ),
            (
                r#"{"rules": [{"id": "r", "examples": {"fires": []}}]}"#,
                "t: rule 'r': field 'examples.fires': unknown examples key",
            ),
            (
                r#"{"rules": [{"id": "r", "examples": {"should_fire": "x"}}]}"#,
                "t: rule 'r': field 'examples.should_fire': must be an array of strings",
            ),
            (
                r#"{"rules": [{"id": "r", "any": ["x", 1]}]}"#,
                "t: rule 'r': field 'any': must be an array of strings",
            ),
            (
                r#"{"rules": [{"message": "m"}]}"#,
                "t: rule '#0': field 'id': missing id",
            ),
            (
                r#"{"rules": [{"id": "a\nb", "message": "m"}]}"#,
                "t: rule 'a\\nb': field 'id': must not contain control characters",
            ),
            (
                r#"{"rules": [{"id": "a", "message": "m"}, {"id": "a", "message": "m"}]}"#,
                "t: rule 'a': field 'id': duplicate id",
            ),
            (
                // The first repeat in file order is named, not the first id repeated later.
                r#"{"rules": [{"id": "a", "message": "m"}, {"id": "b", "message": "m"},
                    {"id": "b", "message": "m"}, {"id": "a", "message": "m"}]}"#,
                "t: rule 'b': field 'id': duplicate id",
            ),
            (
                r#"{"rules": [{"id": "r", "message": "m", "meta": {"tier": 3}}]}"#,
                "t: rule 'r': field 'meta.tier': must be a string",
            ),
        ];
        for (text, want) in cases {
            let e = parse_document("t", text).unwrap_err();
            assert_eq!(e.to_string(), want, "{text}");
        }
        // A duplicate key is refused by the typed pass; serde's message says where.
        let e = parse_document(
            "t",
            r#"{"rules": [{"id": "r", "id": "s", "message": "m"}]}"#,
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("t: invalid JSON: duplicate field `id`"),
            "{e}"
        );
        let e = parse_document("t", "{nope").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("t: invalid JSON: key must be a string"),
            "{e}"
        );
    }

    #[test]
    fn rule_texts_are_kept_as_written() {
        let text = r#"{"ruleset": "x", "rules": [{"id": "r", "any": ["a\\b"], "message": "m"}, {"id": "s"}]}"#;
        let raw = rule_texts(text).unwrap();
        assert_eq!(
            raw[0].get(),
            r#"{"id": "r", "any": ["a\\b"], "message": "m"}"#
        );
        assert_eq!(raw.len(), 2);
        let d = parse_document(
            "t",
            &text.replace(r#"{"id": "s"}"#, r#"{"id": "s", "action": "monitor"}"#),
        )
        .unwrap();
        assert_eq!(d.rules[0].any[0].source(), r"a\b");
    }
}
