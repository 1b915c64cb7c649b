//! Rules: the ruleset format, its typed validation, and whether a rule fires on a call.
//!
//! The format is callusguard's rule JSON read unchanged (`id, tool, field, any, unless,
//! flags, norm, severity, action, message, meta, examples`, spec §3–§4) plus callus's
//! `match` (`"text"` or `"segment"`), `pinned` and `meta.promoted`. Parsing is strict: a wrong
//! type, an unknown key or action, or a missing message is an error naming the file, the rule
//! id and the field. Deciding whether a rule fires is pure and lives here, so `guard check`,
//! derive's backtest and prune's re-evaluation share the guard's exact matcher without
//! depending on the guard.

pub mod backtest;
pub mod check;
pub mod commands;
pub mod field;
pub mod glob;
pub mod layers;
pub mod pattern;
pub mod promote;
pub mod tier;

use std::cell::{OnceCell, RefCell};
use std::fmt;
use std::rc::Rc;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::{Error, Result};
pub use layers::{Layer, LayerKind, RuleSet};
pub use pattern::Pattern;

/// The graded outcome of a rule, weakest first (the order is the precedence).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    /// Audit only; the agent sees nothing.
    Monitor,
    /// The call runs; the model gets the message.
    Nudge,
    /// The call is refused; the model gets the reason.
    Deny,
    /// The call is refused with exit 2.
    Block,
}

impl Action {
    /// Parse a lowercase action name.
    #[must_use]
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "monitor" => Action::Monitor,
            "nudge" => Action::Nudge,
            "deny" => Action::Deny,
            "block" => Action::Block,
            _ => return None,
        })
    }

    /// The lowercase name.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Monitor => "monitor",
            Action::Nudge => "nudge",
            Action::Deny => "deny",
            Action::Block => "block",
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a rule's patterns run against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MatchMode {
    /// The whole field text (callusguard's behaviour).
    Text,
    /// Each simple command of the shell string, normalised (see `shell`).
    Segment,
}

/// A rule's executable specification, run by `guard check`.
#[derive(Debug, Clone, Default)]
pub struct Examples {
    /// Values the rule must fire on.
    pub should_fire: Vec<String>,
    /// Values the rule must not fire on.
    pub should_not_fire: Vec<String>,
}

/// One validated rule.
#[derive(Debug)]
pub struct Rule {
    /// Unique, stable id.
    pub id: String,
    /// `fnmatch` glob on the tool name.
    pub tool: String,
    /// Dotted path into `tool_input`.
    pub field: String,
    /// Patterns; any one matching fires the rule. Empty: a tool-only rule.
    pub any: Vec<Pattern>,
    /// Patterns; any one matching stops the rule firing (tool-only rules included).
    pub unless: Vec<Pattern>,
    /// Replace `\n` and `\t` with spaces before matching.
    pub norm: bool,
    /// Tie-break inside an action class (higher wins).
    pub severity: f64,
    /// The action as written.
    pub action: Action,
    /// Text shown to the model (nudge, deny) or on stderr (block).
    pub message: Option<String>,
    /// Where patterns run.
    pub match_mode: MatchMode,
    /// A protective rule that may rightly never fire; prune never cuts it.
    pub pinned: bool,
    /// Provenance and evidence (`tier`, `promoted`, `added`, …).
    pub meta: Map<String, Value>,
    /// Executable examples.
    pub examples: Option<Examples>,
    /// The rule as written (for round-trips and display).
    pub raw: Value,
}

impl Rule {
    /// `meta.tier`, when present and a string.
    #[must_use]
    pub fn tier(&self) -> Option<&str> {
        self.meta
            .get("tier")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    }

    /// The strongest action the rule may take: its action, capped by its tier's ceiling when
    /// it carries one (hand-written rules without a tier are governed by review).
    #[must_use]
    pub fn capped_action(&self) -> Action {
        match self.tier() {
            Some(t) => self.action.min(tier::ceiling_of(t)),
            None => self.action,
        }
    }

    /// The date enforcement began: `meta.promoted`, else `meta.added` (`YYYY-MM-DD`).
    #[must_use]
    pub fn promoted(&self) -> Option<chrono::NaiveDate> {
        ["promoted", "added"].iter().find_map(|k| {
            self.meta
                .get(*k)
                .and_then(Value::as_str)
                .and_then(|s| chrono::NaiveDate::parse_from_str(s.get(..10)?, "%Y-%m-%d").ok())
        })
    }

    /// Does this rule fire on `call`? `Ok(Some(hit))` says which pattern (and segment) did.
    ///
    /// `Err` is a pattern that failed to compile or ran out of backtracking budget.
    pub fn fires(&self, call: &Subject<'_>) -> std::result::Result<Option<Hit>, String> {
        if !glob::matches(&self.tool, call.tool) {
            return Ok(None);
        }
        let view = call.view(&self.field, self.norm);
        if self.any.is_empty() {
            // A tool-only rule fires on every call to its tool, unless an `unless` matches
            // (callusguard ignored `unless` here: spec §15.1 item 23).
            if !self.unless.is_empty() && !view.text.trim().is_empty() {
                for p in &self.unless {
                    if p.may_match(&view.lower) && p.is_match(&view.text)? {
                        return Ok(None);
                    }
                }
            }
            return Ok(Some(Hit {
                pattern: None,
                segment: None,
            }));
        }
        if view.text.trim().is_empty() {
            return Ok(None);
        }
        let hit = match self.match_mode {
            MatchMode::Text => first_match(&self.any, &view.text, &view.lower)?.map(|i| Hit {
                pattern: Some(i),
                segment: None,
            }),
            MatchMode::Segment => self.segment_hit(&view)?,
        };
        let Some(hit) = hit else {
            return Ok(None);
        };
        // `unless` runs on the whole text: an exemption anywhere in the call applies.
        if first_match(&self.unless, &view.text, &view.lower)?.is_some() {
            return Ok(None);
        }
        Ok(Some(hit))
    }

    fn segment_hit(&self, view: &View) -> std::result::Result<Option<Hit>, String> {
        let split = view.split();
        if !split.complete {
            // A parse failure must never hide a dangerous string: fall back to the whole text
            // and to every segment we did get.
            if let Some(i) = first_match(&self.any, &view.text, &view.lower)? {
                return Ok(Some(Hit {
                    pattern: Some(i),
                    segment: None,
                }));
            }
        }
        if !self.any.iter().any(|p| p.may_match(view.segments_lower())) {
            return Ok(None);
        }
        for seg in &split.segments {
            let lower = seg.text.to_ascii_lowercase();
            if let Some(i) = first_match(&self.any, &seg.text, &lower)? {
                return Ok(Some(Hit {
                    pattern: Some(i),
                    segment: Some(seg.text.clone()),
                }));
            }
        }
        Ok(None)
    }
}

fn first_match(
    patterns: &[Pattern],
    text: &str,
    lower: &str,
) -> std::result::Result<Option<usize>, String> {
    for (i, p) in patterns.iter().enumerate() {
        if p.may_match(lower) && p.is_match(text)? {
            return Ok(Some(i));
        }
    }
    Ok(None)
}

/// Which pattern fired a rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Hit {
    /// Index into `any` (`None` for a tool-only rule).
    pub pattern: Option<usize>,
    /// The normalised segment that matched (`match: segment` rules).
    pub segment: Option<String>,
}

/// A tool call as rules see it, with per-field text and shell splits computed once and
/// shared by every rule.
pub struct Subject<'a> {
    /// The tool name.
    pub tool: &'a str,
    /// The tool input.
    pub input: &'a Value,
    views: RefCell<Vec<(String, bool, Rc<View>)>>,
}

/// The text one field yields, and its lazily computed shell split.
pub struct View {
    /// The field text (after `norm`, when asked).
    pub text: String,
    /// `text`, ASCII-lowercased (for the literal prefilter).
    pub lower: String,
    split: OnceCell<crate::shell::Split>,
    seg_lower: OnceCell<String>,
}

impl View {
    fn new(text: String) -> Self {
        View {
            lower: text.to_ascii_lowercase(),
            text,
            split: OnceCell::new(),
            seg_lower: OnceCell::new(),
        }
    }

    /// The shell split of the text.
    pub fn split(&self) -> &crate::shell::Split {
        self.split.get_or_init(|| crate::shell::split(&self.text))
    }

    fn segments_lower(&self) -> &str {
        self.seg_lower.get_or_init(|| {
            let mut all = String::new();
            for s in &self.split().segments {
                all.push_str(&s.text.to_ascii_lowercase());
                all.push('\n');
            }
            all
        })
    }
}

impl<'a> Subject<'a> {
    /// A subject for `tool` called with `input`.
    #[must_use]
    pub fn new(tool: &'a str, input: &'a Value) -> Self {
        Subject {
            tool,
            input,
            views: RefCell::new(Vec::new()),
        }
    }

    /// The text (and split) of `field_path`, computed once per field and `norm` setting.
    pub fn view(&self, field_path: &str, norm: bool) -> Rc<View> {
        if let Some((_, _, v)) = self
            .views
            .borrow()
            .iter()
            .find(|(f, n, _)| f == field_path && *n == norm)
        {
            return Rc::clone(v);
        }
        let mut text = field::get(self.input, field_path).into_owned();
        if norm {
            text = text.replace(['\n', '\t'], " ");
        }
        let view = Rc::new(View::new(text));
        self.views
            .borrow_mut()
            .push((field_path.to_string(), norm, Rc::clone(&view)));
        view
    }
}

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
pub const RULE_KEYS: &[&str] = &[
    "id", "tool", "field", "any", "unless", "flags", "norm", "severity", "action", "message",
    "meta", "examples", "match", "pinned",
];

/// A parsed ruleset document.
#[derive(Debug)]
pub struct Document {
    /// Its rules, in file order.
    pub rules: Vec<Rule>,
    /// Starter rule ids to disable (honoured only in the user layer).
    pub disable: Vec<String>,
}

/// Parse and validate a ruleset document; `file` names it in errors.
pub fn parse_document(file: &str, text: &str) -> Result<Document> {
    let value: Value = serde_json::from_str(text).map_err(|e| Error::json(file, e))?;
    document_from_value(file, &value)
}

/// Validate an already-parsed ruleset document.
pub fn document_from_value(file: &str, value: &Value) -> Result<Document> {
    let err = |rule: Option<&str>, field: Option<&str>, msg: String| Error::Ruleset {
        file: file.to_string(),
        rule: rule.map(str::to_string),
        field: field.map(str::to_string),
        msg,
    };
    let Value::Object(top) = value else {
        return Err(err(None, None, "top level is not a JSON object".into()));
    };
    for key in top.keys() {
        if !TOP_LEVEL_KEYS.contains(&key.as_str()) {
            return Err(err(None, Some(key), "unknown top-level key".into()));
        }
    }
    let disable = match top.get("disable") {
        None => Vec::new(),
        Some(v) => string_list(v)
            .ok_or_else(|| err(None, Some("disable"), "must be an array of rule ids".into()))?,
    };
    let rules_value = top.get("rules").unwrap_or(&Value::Null);
    let items: &[Value] = match rules_value {
        Value::Null => &[],
        Value::Array(items) => items,
        _ => return Err(err(None, Some("rules"), "must be an array".into())),
    };
    let mut rules = Vec::with_capacity(items.len());
    let mut seen = std::collections::HashSet::new();
    for (i, item) in items.iter().enumerate() {
        let rule = rule_from_value(i, item)
            .map_err(|(rule, field, msg)| err(rule.as_deref(), field.as_deref(), msg))?;
        if !seen.insert(rule.id.clone()) {
            return Err(err(Some(&rule.id), Some("id"), "duplicate id".into()));
        }
        rules.push(rule);
    }
    Ok(Document { rules, disable })
}

type FieldError = (Option<String>, Option<String>, String);

fn string_list(v: &Value) -> Option<Vec<String>> {
    v.as_array()?
        .iter()
        .map(|x| x.as_str().map(str::to_string))
        .collect()
}

/// Validate one rule object; errors carry (rule id or `#i`, field, message).
fn rule_from_value(index: usize, value: &Value) -> std::result::Result<Rule, FieldError> {
    let Value::Object(obj) = value else {
        return Err((
            Some(format!("#{index}")),
            None,
            "rule is not an object".into(),
        ));
    };
    let id = match obj.get("id") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
        Some(Value::String(_)) | None => {
            return Err((
                Some(format!("#{index}")),
                Some("id".into()),
                "missing id".into(),
            ));
        }
        Some(_) => {
            return Err((
                Some(format!("#{index}")),
                Some("id".into()),
                "must be a string".into(),
            ));
        }
    };
    let fail =
        |field: &str, msg: &str| (Some(id.clone()), Some(field.to_string()), msg.to_string());
    for key in obj.keys() {
        if !RULE_KEYS.contains(&key.as_str()) {
            return Err(fail(key, "unknown rule key"));
        }
    }
    let string = |key: &str, default: &str| match obj.get(key) {
        None | Some(Value::Null) => Ok(default.to_string()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(_) => Err(fail(key, "must be a string")),
    };
    let tool = string("tool", "*")?;
    let field_path = string("field", "command")?;
    let flags = string("flags", "")?;
    if flags.chars().any(|c| c != 'i') {
        return Err(fail("flags", "only \"i\" is recognised"));
    }
    let ci = flags.contains('i');
    let patterns = |key: &str| -> std::result::Result<Vec<Pattern>, FieldError> {
        match obj.get(key) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(v) => string_list(v)
                .map(|list| list.iter().map(|p| Pattern::new(p, ci)).collect())
                .ok_or_else(|| fail(key, "must be an array of strings")),
        }
    };
    let any = patterns("any")?;
    let unless = patterns("unless")?;
    let norm = match obj.get("norm") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(fail("norm", "must be true or false")),
    };
    let pinned = match obj.get("pinned") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(fail("pinned", "must be true or false")),
    };
    let severity = match obj.get("severity") {
        None | Some(Value::Null) => 0.0,
        Some(Value::Number(n)) => n.as_f64().unwrap_or(0.0),
        Some(_) => return Err(fail("severity", "must be a number")),
    };
    let action_name = string("action", "nudge")?;
    let action = Action::parse(&action_name).ok_or_else(|| {
        fail(
            "action",
            &format!("unknown action '{action_name}' (monitor, nudge, deny, block)"),
        )
    })?;
    let message = match obj.get("message") {
        Some(Value::String(s)) if !s.trim().is_empty() => Some(s.clone()),
        None | Some(Value::Null | Value::String(_)) => None,
        Some(_) => return Err(fail("message", "must be a string")),
    };
    if message.is_none() && action != Action::Monitor {
        return Err(fail("message", &format!("a {action} rule needs a message")));
    }
    let match_mode = match obj.get("match").map(|v| v.as_str()) {
        None | Some(Some("text")) => MatchMode::Text,
        Some(Some("segment")) => MatchMode::Segment,
        Some(_) => return Err(fail("match", "must be \"text\" or \"segment\"")),
    };
    let meta = match obj.get("meta") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(_) => return Err(fail("meta", "must be an object")),
    };
    if let Some(t) = meta.get("tier")
        && !t.is_string()
        && !t.is_null()
    {
        return Err(fail("meta.tier", "must be a string"));
    }
    for key in ["promoted", "added"] {
        if let Some(v) = meta.get(key) {
            let ok = v
                .as_str()
                .and_then(|s| s.get(..10))
                .is_some_and(|d| chrono::NaiveDate::parse_from_str(d, "%Y-%m-%d").is_ok());
            if !ok {
                return Err(fail(&format!("meta.{key}"), "must be a date YYYY-MM-DD"));
            }
        }
    }
    let examples = match obj.get("examples") {
        None | Some(Value::Null) => None,
        Some(Value::Object(ex)) => {
            let mut out = Examples::default();
            for (key, v) in ex {
                let list = string_list(v).ok_or_else(|| {
                    fail(&format!("examples.{key}"), "must be an array of strings")
                })?;
                match key.as_str() {
                    "should_fire" => out.should_fire = list,
                    "should_not_fire" => out.should_not_fire = list,
                    _ => return Err(fail(&format!("examples.{key}"), "unknown examples key")),
                }
            }
            Some(out)
        }
        Some(_) => return Err(fail("examples", "must be an object")),
    };
    Ok(Rule {
        id,
        tool,
        field: field_path,
        any,
        unless,
        norm,
        severity,
        action,
        message,
        match_mode,
        pinned,
        meta,
        examples,
        raw: value.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc(v: impl std::borrow::Borrow<Value>) -> Result<Document> {
        document_from_value("t.json", v.borrow())
    }

    fn fires(rule: &Rule, tool: &str, input: impl std::borrow::Borrow<Value>) -> bool {
        rule.fires(&Subject::new(tool, input.borrow()))
            .unwrap()
            .is_some()
    }

    #[test]
    fn typed_validation_names_file_rule_and_field() {
        let e = doc(json!({"rules": [{"id": "r", "any": "psql", "message": "m"}]})).unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.json: rule 'r': field 'any': must be an array of strings"
        );
        let e =
            doc(json!({"rules": [{"id": "r", "action": "explode", "message": "m"}]})).unwrap_err();
        assert!(
            e.to_string()
                .contains("field 'action': unknown action 'explode'")
        );
        let e = doc(json!({"rules": [{"id": "r", "action": "deny"}]})).unwrap_err();
        assert!(e.to_string().contains("field 'message'"));
        let e = doc(json!({"rules": [{"id": "r", "colour": 1, "message": "m"}]})).unwrap_err();
        assert!(e.to_string().contains("field 'colour': unknown rule key"));
        let e = doc(json!({"rulez": []})).unwrap_err();
        assert!(e.to_string().contains("unknown top-level key"));
        let e =
            doc(json!({"rules": [{"id": "r", "severity": "high", "message": "m"}]})).unwrap_err();
        assert!(e.to_string().contains("field 'severity'"));
        assert!(doc(json!({"rules": [{"id": "r", "action": "monitor"}]})).is_ok());
    }

    #[test]
    fn tool_only_rules_respect_unless() {
        let d = doc(
            json!({"rules": [{"id": "r", "tool": "mcp__Db__*", "field": "args.account",
            "unless": ["^readonly$"], "message": "m"}]}),
        )
        .unwrap();
        let r = &d.rules[0];
        assert!(fires(
            r,
            "mcp__Db__query",
            json!({"args": {"account": "admin"}})
        ));
        assert!(!fires(
            r,
            "mcp__Db__query",
            json!({"args": {"account": "readonly"}})
        ));
        assert!(fires(r, "mcp__Db__query", json!({})));
        assert!(!fires(r, "Bash", json!({"command": "x"})));
    }

    #[test]
    fn text_rules_follow_callusguard() {
        let d = doc(json!({"rules": [{"id": "psql", "tool": "Bash",
            "any": [r"(?:^|[;|&(]|\$\()\s*(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+){0,8}psql\b"],
            "unless": ["postgresql://", r"(?:^|\s)(?:-h|--host)(?:\s|=)"], "message": "m"}]}))
        .unwrap();
        let r = &d.rules[0];
        assert!(fires(
            r,
            "Bash",
            json!({"command": "FOO=bar psql -c 'SELECT 1'"})
        ));
        assert!(!fires(
            r,
            "Bash",
            json!({"command": "psql postgresql://h/db"})
        ));
        assert!(!fires(r, "Bash", json!({"command": "echo psql is a tool"})));
        assert!(!fires(r, "Bash", json!({"command": "   "})));
    }

    #[test]
    fn norm_and_flags() {
        let d = doc(
            json!({"rules": [{"id": "d", "any": [r"drop table"], "flags": "i", "norm": true,
            "action": "block", "message": "m"}]}),
        )
        .unwrap();
        assert!(fires(
            &d.rules[0],
            "Bash",
            json!({"command": "DROP\tTABLE x"})
        ));
    }

    #[test]
    fn capped_action_respects_tier() {
        let d = doc(
            json!({"rules": [{"id": "r", "any": ["x"], "action": "block", "message": "m",
            "meta": {"tier": "probabilistic", "promoted": "2026-01-02"}}]}),
        )
        .unwrap();
        assert_eq!(d.rules[0].capped_action(), Action::Nudge);
        assert_eq!(
            d.rules[0].promoted(),
            chrono::NaiveDate::from_ymd_opt(2026, 1, 2)
        );
    }
}
