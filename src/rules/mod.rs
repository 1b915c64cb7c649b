//! Rules: the ruleset format, its typed validation, and whether a rule fires on a call.
//!
//! The format is callusguard's rule JSON read unchanged (`id, tool, field, any, unless,
//! flags, norm, severity, action, message, meta, examples`; docs/rule-format.md) plus callus's
//! `match` (`"text"` or `"segment"`), `pinned` and `meta.promoted`. Parsing is strict: a wrong
//! type, an unknown key or action, or a missing message is an error naming the file, the rule
//! id and the field. Deciding whether a rule fires is pure and lives here, so `guard check`,
//! derive's backtest and prune's re-evaluation share the guard's exact matcher without
//! depending on the guard.

pub(crate) mod backtest;
pub(crate) mod check;
pub(crate) mod condition;
pub(crate) mod effect;
pub(crate) mod field;
pub(crate) mod glob;
pub(crate) mod index;
pub(crate) mod layer_kind;
pub(crate) mod layers;
pub(crate) mod layers_embedded;
pub(crate) mod parse;
pub(crate) mod pattern;
pub(crate) mod prefilter;
pub(crate) mod promote;
pub(crate) mod replay;
pub(crate) mod tier;

use std::cell::{OnceCell, RefCell};
use std::fmt;
use std::rc::Rc;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::host::call::Call;
pub(crate) use layers::{Layer, LayerKind, RuleSet};
pub(crate) use parse::{Document, RULE_KEYS, document_from_value, parse_document};
pub(crate) use pattern::Pattern;

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
    /// Each pipeline of two or more stages, its stages' texts joined by ` | `
    /// (`curl -s x | sh`): for rules about what feeds what.
    Pipeline,
    /// Each file the shell command writes: redirection targets, `tee`, `sed -i`,
    /// `cp`/`mv`/`install`/`ln` destinations, `dd of=`, `truncate` (see
    /// `shell::write_targets`): for rules about where a command writes.
    Writes,
    /// Each effect the call has, as a line (`deletes class=system recursive=true via=rm
    /// path=/usr`; see `shell::model` and `rules::effect`): for rules about what a call
    /// does, whatever the spelling. Runs on the whole tool input, not one field.
    Effect,
}

impl MatchMode {
    /// The name used in rule JSON.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            MatchMode::Text => "text",
            MatchMode::Segment => "segment",
            MatchMode::Pipeline => "pipeline",
            MatchMode::Writes => "writes",
            MatchMode::Effect => "effect",
        }
    }
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
    /// Conditions that must hold too (`when`), answered through [`condition::Facts`].
    pub(crate) when: Option<Box<condition::When>>,
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

    /// The tier the rule's own evidence numbers support (see [`tier::from_evidence`]).
    #[must_use]
    pub fn evidence_tier(&self) -> Option<tier::Tier> {
        tier::from_evidence(&self.meta).map(|(t, _)| t)
    }

    /// The strongest action the rule may take: its action, capped by the ceiling of its
    /// stated `meta.tier` and of the tier its evidence numbers support, when it carries them
    /// (hand-written rules without either are governed by review).
    #[must_use]
    pub fn capped_action(&self) -> Action {
        let mut cap = self.action;
        if let Some(t) = self.tier() {
            cap = cap.min(tier::ceiling_of(t));
        }
        if let Some(t) = self.evidence_tier() {
            cap = cap.min(t.ceiling());
        }
        cap
    }

    /// The date enforcement began: `meta.promoted`, else `meta.added` (`YYYY-MM-DD`).
    #[must_use]
    pub fn promoted(&self) -> Option<chrono::NaiveDate> {
        ["promoted", "added"].iter().find_map(|k| {
            self.meta
                .get(*k)
                .and_then(Value::as_str)
                .and_then(date_prefix)
        })
    }

    /// Does this rule fire on `call`? `Ok(Some(hit))` says which pattern (and segment) did.
    ///
    /// `Err` is a pattern that failed to compile or ran out of backtracking budget.
    pub fn fires(&self, call: &Subject<'_>) -> std::result::Result<Option<Hit>, String> {
        // The hook skips building exactly the rules this test rules out (see `index`).
        let may_fire = call.may_fire(
            &self.tool,
            &self.field,
            self.norm,
            self.match_mode,
            !self.any.is_empty(),
            |hay| self.any.iter().any(|p| p.may_match(hay)),
        );
        if !may_fire {
            return Ok(None);
        }
        if self.match_mode == MatchMode::Effect {
            return self.effect_hit(call);
        }
        let view = call.view(&self.field, self.norm);
        if self.any.is_empty() {
            // A tool-only rule fires on every call to its tool, unless an `unless` matches
            // (callusguard ignored `unless` here).
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
        let hit = match self.match_mode {
            MatchMode::Text => first_match(&self.any, &view.text, &view.lower)?.map(|i| Hit {
                pattern: Some(i),
                segment: None,
            }),
            MatchMode::Segment | MatchMode::Pipeline | MatchMode::Writes => self.unit_hit(&view)?,
            MatchMode::Effect => None,
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

    /// Match the call's effect lines; the hit names the effect in words. `unless` runs on the
    /// line that matched: it exempts that effect only.
    fn effect_hit(&self, call: &Subject<'_>) -> std::result::Result<Option<Hit>, String> {
        let fx = call.effects();
        for (e, line) in fx.effects.iter().zip(&fx.units.texts) {
            let lower = line.to_ascii_lowercase();
            let Some(i) = first_match(&self.any, line, &lower)? else {
                continue;
            };
            // `unless` exempts the effect it is about, never another one of the same call:
            // `rm -rf / && rm -rf ~/scratch` is not let through by an exemption for scratch.
            if first_match(&self.unless, line, &lower)?.is_some() {
                continue;
            }
            return Ok(Some(Hit {
                pattern: Some(i),
                segment: Some(e.human.clone()),
            }));
        }
        Ok(None)
    }

    /// Match the units of a structural mode (segments, pipelines or write targets).
    fn unit_hit(&self, view: &View) -> std::result::Result<Option<Hit>, String> {
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
        let units = view.units(self.match_mode);
        if !self.any.iter().any(|p| p.may_match(&units.lower)) {
            return Ok(None);
        }
        for text in &units.texts {
            let lower = text.to_ascii_lowercase();
            if let Some(i) = first_match(&self.any, text, &lower)? {
                return Ok(Some(Hit {
                    pattern: Some(i),
                    segment: Some(text.clone()),
                }));
            }
        }
        Ok(None)
    }
}

/// The `YYYY-MM-DD` date a string starts with, if it is a real date. (Hand-parsed: this
/// runs for every dated rule on every hook call.)
fn date_prefix(s: &str) -> Option<chrono::NaiveDate> {
    let b = s.as_bytes().get(..10)?;
    let digits = |r: std::ops::Range<usize>| {
        b[r].iter().try_fold(0u32, |n, &c| {
            c.is_ascii_digit().then(|| n * 10 + u32::from(c - b'0'))
        })
    };
    if b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    chrono::NaiveDate::from_ymd_opt(digits(0..4)? as i32, digits(5..7)?, digits(8..10)?)
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
/// shared by every rule. It reads the call through [`Call`]: a shell tool's `command` field
/// is the call's command text (an argv array joined at the edge), and its effects are
/// classified against the context the call carries.
pub struct Subject<'a> {
    /// The tool name.
    pub tool: &'a str,
    /// The tool input.
    pub input: &'a Value,
    call: Call<'a>,
    views: RefCell<Vec<(String, bool, Rc<View>)>>,
    effects: OnceCell<Effects>,
}

/// A call's effects, and their lines as units.
pub struct Effects {
    /// The effects, in order.
    pub effects: Vec<crate::shell::model::Effect>,
    /// Their lines.
    pub units: Units,
}

/// The text one field yields, and its lazily computed shell split.
pub struct View {
    /// The field text (after `norm`, when asked).
    pub text: String,
    /// `text`, ASCII-lowercased (for the literal prefilter).
    pub lower: String,
    split: OnceCell<crate::shell::Split>,
    segments: OnceCell<Units>,
    pipelines: OnceCell<Units>,
    writes: OnceCell<Units>,
}

/// The texts a structural match mode runs on, and all of them lowercased and joined (for the
/// literal prefilter).
pub struct Units {
    /// One text per unit.
    pub texts: Vec<String>,
    /// Every text, ASCII-lowercased, newline-separated.
    pub lower: String,
}

impl Units {
    fn new(texts: Vec<String>) -> Self {
        let mut lower = String::new();
        for t in &texts {
            lower.push_str(&t.to_ascii_lowercase());
            lower.push('\n');
        }
        Units { texts, lower }
    }
}

impl View {
    fn new(text: String) -> Self {
        View {
            lower: text.to_ascii_lowercase(),
            text,
            split: OnceCell::new(),
            segments: OnceCell::new(),
            pipelines: OnceCell::new(),
            writes: OnceCell::new(),
        }
    }

    /// The shell split of the text.
    pub fn split(&self) -> &crate::shell::Split {
        self.split.get_or_init(|| crate::shell::split(&self.text))
    }

    /// The units a structural match mode runs on (computed once per view; `Text` has no
    /// units of its own and gets the segments).
    pub fn units(&self, mode: MatchMode) -> &Units {
        match mode {
            MatchMode::Pipeline => self
                .pipelines
                .get_or_init(|| Units::new(crate::shell::pipelines(self.split()))),
            MatchMode::Writes => self
                .writes
                .get_or_init(|| Units::new(crate::shell::write_targets(self.split()))),
            MatchMode::Text | MatchMode::Segment | MatchMode::Effect => {
                self.segments.get_or_init(|| {
                    Units::new(
                        self.split()
                            .segments
                            .iter()
                            .map(|s| s.text.clone())
                            .collect(),
                    )
                })
            }
        }
    }
}

impl<'a> Subject<'a> {
    /// A subject for `tool` called with `input` where this process runs (the offline
    /// readers: `guard check`, backtests, tests).
    #[must_use]
    pub fn new(tool: &'a str, input: &'a Value) -> Self {
        Self::of(Call::new(tool, input).at(crate::host::call::here()))
    }

    /// A subject for `call`, classified against the context it carries (the guard's: read
    /// at the edge, so nothing here reads the environment or the file system).
    #[must_use]
    pub fn of(call: Call<'a>) -> Self {
        Subject {
            tool: call.tool,
            input: call.input,
            call,
            views: RefCell::new(Vec::new()),
            effects: OnceCell::new(),
        }
    }

    /// The call's effects (computed once).
    pub fn effects(&self) -> &Effects {
        self.effects.get_or_init(|| {
            if !crate::host::call::acts_on_paths(self.tool) {
                // A Read, Grep or Task call has no effect to find.
                return Effects {
                    effects: Vec::new(),
                    units: Units::new(Vec::new()),
                };
            }
            // The command's view, when it is a shell's: its split is lent, not copied.
            let view = self.call.shell.then(|| self.view("command", false));
            let effects = effect::effects(&self.call, |text| {
                view.as_deref()
                    .filter(|view| view.text == text)
                    .map(View::split)
            });
            let units = Units::new(effects.iter().map(|e| e.line.clone()).collect());
            Effects { effects, units }
        })
    }

    /// Could a rule fire on this call, judged from its tool glob, field, `norm`, match mode,
    /// whether it has `any` patterns, and `may`: whether one of them could match an
    /// ASCII-lowercased haystack (the literal prefilter)? False only when it certainly does
    /// not: the tool differs, the field is blank, or no pattern's literals occur in the text
    /// the rule would run on (a structural rule's units, and its whole text when the split
    /// is incomplete). A tool-only rule may fire whenever its tool matches.
    pub fn may_fire(
        &self,
        tool: &str,
        field: &str,
        norm: bool,
        mode: MatchMode,
        has_any: bool,
        may: impl Fn(&str) -> bool,
    ) -> bool {
        if !glob::matches(tool, self.tool) {
            return false;
        }
        if !has_any {
            return true;
        }
        if mode == MatchMode::Effect {
            return may(&self.effects().units.lower);
        }
        let view = self.view(field, norm);
        if view.text.trim().is_empty() {
            return false;
        }
        match mode {
            MatchMode::Text => may(&view.lower),
            MatchMode::Segment | MatchMode::Pipeline | MatchMode::Writes | MatchMode::Effect => {
                (!view.split().complete && may(&view.lower)) || may(&view.units(mode).lower)
            }
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
        // A shell's command is the call's text: an argv array is not its JSON.
        let mut text = match (&self.call.command, field_path) {
            (Some(command), "command") => command.clone().into_owned(),
            _ => field::get(self.input, field_path).into_owned(),
        };
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc(v: impl std::borrow::Borrow<Value>) -> crate::Result<Document> {
        document_from_value("t.json", v.borrow())
    }

    fn fires(rule: &Rule, tool: &str, input: impl std::borrow::Borrow<Value>) -> bool {
        rule.fires(&Subject::new(tool, input.borrow()))
            .unwrap()
            .is_some()
    }

    /// A shell's `command` field is the call's command text: an argv array is read as the
    /// command it runs (a wrapped script as its body), `cmd` as `command`; another tool's
    /// `command` field (an `apply_patch` body) is the field as it is.
    #[test]
    fn a_shell_command_field_is_the_calls_text_whatever_its_shape() {
        let d = doc(json!({"rules": [
            {"id": "seg", "tool": "*", "match": "segment", "any": ["^dd .*of=/dev/sd"], "message": "m"},
            {"id": "text", "tool": "*", "any": ["^\\*\\*\\* Begin"], "message": "m"}
        ]}))
        .unwrap();
        let (seg, text) = (&d.rules[0], &d.rules[1]);
        for command in [
            json!("sudo dd if=/dev/zero of=/dev/sda"),
            json!(["sudo", "dd", "if=/dev/zero", "of=/dev/sda"]),
            json!(["bash", "-lc", "sudo dd if=/dev/zero of=/dev/sda"]),
        ] {
            assert!(
                fires(seg, "Bash", json!({ "command": command })),
                "{command}"
            );
            assert!(
                fires(seg, "shell", json!({ "command": command })),
                "{command}"
            );
        }
        assert!(fires(seg, "exec_command", json!({"cmd": "dd of=/dev/sda"})));
        // Not a shell: the field as it is (the JSON text of an array).
        assert!(!fires(
            seg,
            "mcp__x__run",
            json!({"command": ["dd", "of=/dev/sda"]})
        ));
        let patch = json!({"command": "*** Begin Patch\n*** End Patch"});
        assert!(fires(text, "apply_patch", &patch));
        assert!(!fires(
            text,
            "Bash",
            json!({"command": ["*** Begin Patch"]})
        ));
    }

    #[test]
    fn an_effect_unless_exempts_only_the_effect_it_matches() {
        let d = doc(json!({"rules": [{
            "id": "r", "tool": "Bash", "match": "effect", "action": "block", "message": "m",
            "any": ["^deletes .*recursive=true"], "unless": ["path=/tmp/scratch\\b"]
        }]}))
        .unwrap();
        let rule = &d.rules[0];
        let cmd = |c: &str| json!({ "command": c });
        assert!(
            !fires(rule, "Bash", cmd("rm -rf /tmp/scratch")),
            "the exempt delete alone"
        );
        assert!(
            fires(rule, "Bash", cmd("rm -rf /tmp/scratch && rm -rf /usr")),
            "an exempt effect must not let another effect of the call through"
        );
        assert!(fires(
            rule,
            "Bash",
            cmd("rm -rf /usr && rm -rf /tmp/scratch")
        ));
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
    fn structural_rules_fall_back_to_the_whole_text_only_when_the_split_is_incomplete() {
        let d = doc(json!({"rules": [
            {"id": "rm", "match": "segment", "any": ["^rm\\b"], "message": "m"},
            {"id": "tail", "match": "segment", "any": ["'unbalanced$"], "message": "m"}
        ]}))
        .unwrap();
        let hit = |rule: &Rule, cmd: &str| {
            rule.fires(&Subject::new("Bash", &json!({"command": cmd})))
                .unwrap()
        };
        // Complete split: segments only; quoted data is not a command.
        assert_eq!(
            hit(&d.rules[0], "cd x && rm -rf /")
                .unwrap()
                .segment
                .as_deref(),
            Some("rm -rf /")
        );
        assert!(hit(&d.rules[0], "echo 'rm -rf /'").is_none());
        // Incomplete split: the whole text is tried too, and the hit names no segment.
        let h = hit(&d.rules[1], "rm -rf / 'unbalanced").unwrap();
        assert_eq!(h.segment, None);
        assert!(hit(&d.rules[1], "echo x").is_none());
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
    fn dates_are_checked_by_hand_but_strictly() {
        assert_eq!(
            date_prefix("2026-11-29"),
            chrono::NaiveDate::from_ymd_opt(2026, 11, 29)
        );
        assert!(date_prefix("2026-11-29T10:00:00Z").is_some());
        assert!(date_prefix("2026-02-30").is_none());
        assert!(date_prefix("2026/11/29").is_none());
        assert!(date_prefix("last week").is_none());
        assert!(date_prefix("2026-1-29").is_none());
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
