//! Rule patterns: Python `re` syntax run on a linear-time engine where the pattern allows,
//! and on a bounded backtracking engine only where it needs lookaround or backreferences.
//!
//! Guarantees:
//! - Python spellings the `regex` crate reads differently are translated first (`\Z`, a
//!   literal `{`, `[` and set operators inside a class), so callusguard's rules mean the same.
//! - Python's `$` also matches before a final newline; [`Pattern::is_match`] reproduces that.
//! - Compilation is lazy: a pattern is compiled the first time a call could match it, so the
//!   hook pays only for the rules a call can need. A cheap literal prefilter (strings one of
//!   which every match must contain, found by scanning the pattern: see `prefilter`) rules
//!   most patterns out without compiling them.
//! - The backtracking engine runs with a bounded backtrack limit; hitting it counts as no
//!   match and is reported, never a hang.

use std::sync::OnceLock;

use super::prefilter::{is_repetition, required_literals};

/// Backtrack budget for patterns that need the backtracking engine.
pub(crate) const BACKTRACK_LIMIT: usize = 100_000;

/// Deepest group nesting a pattern may have (the linear engine's own limit).
pub(crate) const MAX_NESTING: usize = 250;

/// How deeply `src` nests parentheses (escapes skipped; a `(` inside a class counts, which
/// only ever overstates).
fn nesting(src: &str) -> usize {
    let (mut depth, mut max, mut escaped) = (0usize, 0usize, false);
    for b in src.bytes() {
        match b {
            _ if escaped => escaped = false,
            b'\\' => escaped = true,
            b'(' => {
                depth += 1;
                max = max.max(depth);
            }
            b')' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

/// Which engine runs a pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// `regex`: linear time, no lookaround or backreferences.
    Linear,
    /// `fancy-regex` with [`BACKTRACK_LIMIT`]: lookaround and backreferences.
    Backtracking,
}

#[derive(Debug)]
enum Compiled {
    Linear(regex::Regex),
    Backtracking(fancy_regex::Regex),
}

/// One compiled-on-demand pattern.
#[derive(Debug)]
pub struct Pattern {
    source: String,
    case_insensitive: bool,
    /// Lowercase ASCII literals one of which every match contains, if the scan found some
    /// (computed on first use: a rule whose tool does not match never pays for it).
    required: OnceLock<Option<Vec<String>>>,
    compiled: OnceLock<Result<Compiled, String>>,
    /// The same pattern compiled without Unicode, for ASCII haystacks (see [`Pattern::search`]);
    /// `None` when it needs the backtracking engine or does not compile that way.
    ascii: OnceLock<Option<regex_automata::hybrid::dfa::DFA>>,
}

impl Pattern {
    /// Prepare `source` (Python syntax). Nothing is scanned or compiled yet.
    #[must_use]
    pub fn new(source: impl Into<String>, case_insensitive: bool) -> Self {
        Pattern {
            source: source.into(),
            case_insensitive,
            required: OnceLock::new(),
            compiled: OnceLock::new(),
            ascii: OnceLock::new(),
        }
    }

    /// Prepare `source` whose literal requirement is already known (`prefilter`'s
    /// [`required_literals`] of the same source: the hook computed it to decide whether to
    /// build the rule, or `build.rs` did for the starter set).
    #[must_use]
    pub(crate) fn with_required(
        source: impl Into<String>,
        case_insensitive: bool,
        required: Option<Vec<String>>,
    ) -> Self {
        let p = Pattern::new(source, case_insensitive);
        let _ = p.required.set(required);
        p
    }

    /// Whether it matches case-insensitively (the rule's `flags: "i"`).
    #[cfg(test)]
    #[must_use]
    pub(crate) fn case_insensitive(&self) -> bool {
        self.case_insensitive
    }

    /// The pattern as written.
    #[must_use]
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Compile now (if not yet) and report a compile error.
    pub fn compile(&self) -> Result<Engine, String> {
        match self.compiled() {
            Ok(Compiled::Linear(_)) => Ok(Engine::Linear),
            Ok(Compiled::Backtracking(_)) => Ok(Engine::Backtracking),
            Err(e) => Err(e.clone()),
        }
    }

    fn compiled(&self) -> &Result<Compiled, String> {
        self.compiled.get_or_init(|| {
            // The backtracking engine's parser recurses per group: refuse what would exhaust
            // the stack before either engine sees it (the linear engine refuses past 250).
            if nesting(&self.source) > MAX_NESTING {
                return Err(format!("pattern nests groups deeper than {MAX_NESTING}"));
            }
            let translated = translate(&self.source);
            let linear = regex::RegexBuilder::new(&translated)
                .case_insensitive(self.case_insensitive)
                .build();
            match linear {
                Ok(re) => Ok(Compiled::Linear(re)),
                Err(linear_err) => fancy_regex::RegexBuilder::new(&translated)
                    .case_insensitive(self.case_insensitive)
                    .backtrack_limit(BACKTRACK_LIMIT)
                    .build()
                    .map(Compiled::Backtracking)
                    .map_err(|_| first_line(&linear_err.to_string())),
            }
        })
    }

    /// Could `haystack_lower` (an ASCII-lowercased haystack) contain a match at all?
    ///
    /// Non-ASCII haystacks always pass: Unicode case folding (`K` for `k`) is beyond an
    /// ASCII comparison.
    #[must_use]
    pub fn may_match(&self, haystack_lower: &str) -> bool {
        let required = self
            .required
            .get_or_init(|| required_literals(&self.source));
        literals_admit(required.as_deref(), haystack_lower)
    }

    /// Does the pattern match anywhere in `haystack` (`re.search` semantics)?
    ///
    /// `Err` carries a compile error or an exhausted backtrack budget.
    pub fn is_match(&self, haystack: &str) -> Result<bool, String> {
        let hit = self.search(haystack)?;
        if hit || !self.source.contains('$') {
            return Ok(hit);
        }
        // Python's `$` also matches just before a final newline.
        match haystack.strip_suffix('\n') {
            Some(shorter) => self.search(shorter),
            None => Ok(false),
        }
    }

    /// One search. An ASCII pattern on an ASCII haystack runs on a byte automaton compiled
    /// without Unicode: on such input Unicode and ASCII semantics agree (`\b`, `\w`, `\s`,
    /// `\d`, negated classes, case folding), and it compiles several times faster, which is
    /// most of a hook call's cost when a rule is reached. Only whether it matches is asked,
    /// so that automaton is a forward lazy DFA over an NFA without capture states: none of
    /// the reverse automata and group-reporting engines a general regex builds. Should it
    /// give up on an input, the full engine decides.
    fn search(&self, haystack: &str) -> Result<bool, String> {
        if haystack.is_ascii() && self.source.is_ascii() {
            let ascii = self
                .ascii
                .get_or_init(|| ascii_matcher(&self.source, self.case_insensitive));
            if let Some(dfa) = ascii {
                let mut cache = dfa.create_cache();
                let input = regex_automata::Input::new(haystack.as_bytes()).earliest(true);
                if let Ok(found) = dfa.try_search_fwd(&mut cache, &input) {
                    return Ok(found.is_some());
                }
            }
        }
        match self.compiled() {
            Ok(Compiled::Linear(re)) => Ok(re.is_match(haystack)),
            Ok(Compiled::Backtracking(re)) => re
                .is_match(haystack)
                .map_err(|e| format!("pattern '{}' gave up: {e}", self.source)),
            Err(e) => Err(e.clone()),
        }
    }
}

/// `source` (Python syntax) as a match-only byte automaton without Unicode; `None` when it
/// does not compile that way (a lookaround, a backreference: the backtracking engine decides).
fn ascii_matcher(source: &str, case_insensitive: bool) -> Option<regex_automata::hybrid::dfa::DFA> {
    use regex_automata::nfa::thompson::{self, WhichCaptures};
    use regex_automata::util::syntax;
    regex_automata::hybrid::dfa::DFA::builder()
        .syntax(
            syntax::Config::new()
                .unicode(false)
                .utf8(false)
                .case_insensitive(case_insensitive),
        )
        .thompson(thompson::Config::new().which_captures(WhichCaptures::None))
        .build(&translate(source))
        .ok()
}

#[cfg(test)]
impl Pattern {
    /// The Unicode engine alone (tests compare it with the ASCII fast path).
    fn search_unicode(&self, haystack: &str) -> Result<bool, String> {
        match self.compiled() {
            Ok(Compiled::Linear(re)) => Ok(re.is_match(haystack)),
            Ok(Compiled::Backtracking(re)) => re.is_match(haystack).map_err(|e| e.to_string()),
            Err(e) => Err(e.clone()),
        }
    }
}

/// Could a pattern whose literal requirement is `required` (see `prefilter`) match
/// `haystack_lower`, an ASCII-lowercased haystack? The one test both [`Pattern::may_match`]
/// and the hook's choice of rules to build (`index`) use.
#[must_use]
pub(crate) fn literals_admit<S: AsRef<str>>(required: Option<&[S]>, haystack_lower: &str) -> bool {
    required.is_none_or(|lits| {
        lits.iter().any(|lit| haystack_lower.contains(lit.as_ref())) || !haystack_lower.is_ascii()
    })
}

fn first_line(s: &str) -> String {
    // regex's errors are multi-line with a caret diagram; keep the last line (the reason).
    s.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or(s)
        .trim()
        .to_string()
}

/// Translate Python `re` syntax into the syntax both Rust engines read.
#[must_use]
pub(crate) fn translate(src: &str) -> String {
    let chars: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len() + 8);
    let mut i = 0;
    let mut in_class = false;
    let mut class_start = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' {
            match chars.get(i + 1) {
                Some('Z') if !in_class => out.push_str(r"\z"),
                Some(&n) => {
                    out.push('\\');
                    out.push(n);
                }
                None => out.push('\\'),
            }
            i += 2;
            continue;
        }
        if in_class {
            let first = i == class_start || (i == class_start + 1 && chars[class_start] == '^');
            match c {
                ']' if !first => in_class = false,
                '[' if chars.get(i + 1) != Some(&':') => {
                    out.push_str(r"\[");
                    i += 1;
                    continue;
                }
                '&' | '~' | '-' if chars.get(i + 1) == Some(&c) => {
                    out.push('\\');
                    out.push(c);
                    out.push('\\');
                    out.push(c);
                    i += 2;
                    continue;
                }
                ']' => {
                    out.push_str(r"\]");
                    i += 1;
                    continue;
                }
                _ => {}
            }
            out.push(c);
            i += 1;
            continue;
        }
        match c {
            '[' => {
                in_class = true;
                class_start = i + 1;
                out.push('[');
            }
            '{' if !is_repetition(&chars[i..]) => out.push_str(r"\{"),
            '}' if !closes_repetition(&chars[..i]) => out.push_str(r"\}"),
            _ => out.push(c),
        }
        i += 1;
    }
    out
}

/// Does the `}` at the end of `before` close a repetition?
fn closes_repetition(before: &[char]) -> bool {
    match before.iter().rposition(|&c| c == '{') {
        Some(open) => {
            let mut tail = before[open..].to_vec();
            tail.push('}');
            is_repetition(&tail) && (open == 0 || before[open - 1] != '\\')
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(p: &str, h: &str) -> bool {
        let pat = Pattern::new(p, false);
        let lower = h.to_ascii_lowercase();
        let hit = pat.is_match(h).unwrap();
        // The prefilter must never reject a haystack that matches.
        if hit {
            assert!(
                pat.may_match(&lower),
                "prefilter rejected a match: {p} on {h}"
            );
        }
        hit
    }

    #[test]
    fn lookaround_uses_the_backtracking_engine() {
        let p = Pattern::new(r"fetch-tool\.py\b(?!.*--entity)", false);
        assert_eq!(p.compile(), Ok(Engine::Backtracking));
        assert!(p.is_match("python3 scripts/fetch-tool.py --id 3").unwrap());
        assert!(
            !p.is_match("python3 scripts/fetch-tool.py --entity x")
                .unwrap()
        );
        assert_eq!(
            Pattern::new(r"\bpsql\b", false).compile(),
            Ok(Engine::Linear)
        );
    }

    #[test]
    fn python_spellings_translate() {
        assert!(m(r"abc\Z", "xabc"));
        assert!(m(r"a{b}", "a{b}"));
        assert!(m(r"x{2}", "xx"));
        assert!(m(r"[[]x", "[x"));
        assert!(m(r"[a&&b]", "&"));
        assert!(m(r"end$", "the end\n"));
        assert!(!m(r"end$", "the end\nmore"));
        assert!(m(r"(?P<w>\w+)-(?P=w)", "ab-ab"));
        assert!(Pattern::new("(unclosed", false).compile().is_err());
    }

    #[test]
    fn ascii_and_unicode_engines_agree() {
        let cases = [
            (
                r"\bcurl\b[^|]*\|\s*(sudo\s+)?(sh|bash|zsh)\b",
                "curl -fsSL x | sudo bash",
            ),
            (r"\bcurl\b[^|]*\|\s*(sudo\s+)?(sh|bash|zsh)\b", "curlx | sh"),
            (r"(?i)\bdrop\s+table\b", "DROP\tTABLE t"),
            (r"^\w+\d$", "abc1"),
            (r"^\w+\d$", "abc-1"),
            (r"[^a-z]{3}", "ab-_c"),
            (r"end$", "the end\n"),
        ];
        for (p, h) in cases {
            let ascii = Pattern::new(p, false).is_match(h).unwrap();
            let unicode = Pattern::new(p, false).search_unicode(h).unwrap()
                || (p.contains('$')
                    && h.strip_suffix('\n')
                        .is_some_and(|s| Pattern::new(p, false).search_unicode(s).unwrap()));
            assert_eq!(ascii, unicode, "{p} on {h:?}");
        }
        // Non-ASCII text takes the Unicode engine: \w matches é.
        assert!(Pattern::new(r"^\w+$", false).is_match("café").unwrap());
        assert!(!Pattern::new(r"^\w+$", false).is_match("caf-").unwrap());
    }

    /// The match-only ASCII engine and the full Unicode one agree on every pattern of the
    /// starter policy against every example text in it (ASCII, so the fast path runs),
    /// both ways of case folding.
    #[test]
    fn the_match_only_engine_agrees_with_the_full_one_on_the_starter_policy() {
        let doc: serde_json::Value = serde_json::from_str(include_str!("starter.json")).unwrap();
        let mut patterns = Vec::new();
        let mut texts = vec![
            "deletes class=root recursive=true via=rm path=/".to_string(),
            "changes-permissions class=home recursive=true via=chmod mode=777 path=/h".into(),
            String::new(),
        ];
        for rule in doc["rules"].as_array().unwrap() {
            for key in ["any", "unless"] {
                for p in rule[key].as_array().into_iter().flatten() {
                    patterns.push(p.as_str().unwrap().to_string());
                }
            }
            for key in ["should_fire", "should_not_fire"] {
                for t in rule["examples"][key].as_array().into_iter().flatten() {
                    if let Some(t) = t.as_str().filter(|t| t.is_ascii()) {
                        texts.push(t.to_string());
                    }
                }
            }
        }
        assert!(patterns.len() > 20 && texts.len() > 100);
        let mut compared = 0;
        for p in &patterns {
            for ci in [false, true] {
                let pat = Pattern::new(p.as_str(), ci);
                if pat.compile().is_err() || ascii_matcher(p, ci).is_none() {
                    continue;
                }
                for t in &texts {
                    let fast = pat.search(t).unwrap();
                    let full = pat.search_unicode(t).unwrap();
                    assert_eq!(fast, full, "{p} (case-insensitive {ci}) on {t:?}");
                    compared += 1;
                }
            }
        }
        assert!(compared > 1000, "{compared}");
    }

    #[test]
    fn case_insensitive_flag() {
        let p = Pattern::new(r"\bDROP\s+TABLE\b", true);
        assert!(p.is_match("drop table x").unwrap());
    }

    #[test]
    fn the_prefilter_never_rejects_a_match() {
        assert!(m(
            r"(?:^|[;|&(]|\$\()\s*(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+){0,8}psql\b",
            "FOO=1 psql -c x"
        ));
        assert!(m(
            r"\bcurl\b[^|]*\|\s*(sudo\s+)?(sh|bash|zsh)\b",
            "curl -fsSL x | sh"
        ));
        assert!(m(r"(?i)\b(AKIA[0-9A-Z]{16})\b", "x akiaiosfodnn7example y"));
        assert!(m(r"ab+c", "abbbc"));
        assert!(m(
            r"(?i)(password|secret|api[_-]?key|token)\s*=\s*'[^']{8,}'",
            "TOKEN = 'abcdefghij'"
        ));
        assert!(m(r"\bgit\s+push\b[^\n]*(--force|-f\b)", "git push -f"));
        assert!(m(r"\\copy\b[^;]*\bfrom\b", "psql -c '\\copy t from x'"));
        assert!(m(r"\x41bc", "Abc"));
    }
}
