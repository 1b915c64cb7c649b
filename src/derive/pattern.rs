//! The patterns derive proposes, one per cluster, written for a reviewer to read.
//!
//! - program clusters: `"match": "segment"` with `^psql\b` (the failing segment's program,
//!   anchored at the start of a simple command, so `cd db && PGPASSWORD=… psql` is caught and
//!   `cd` never is), `^(?:\S*/)?psql\b` when some failure spelled it with a path, plus the
//!   subcommand for multiplexers (`^git\s+push\b`); narrowed by a contrast token
//!   (`^python3\s+-m\b.*\spytest\b`) and exempted by missing-flag `unless` clauses
//!   (`\s--entity(?:[\s=]|$)`; `unless` runs on the whole command);
//! - poll loops: `"match": "text"` with the loop detector itself, since a loop spans several
//!   simple commands;
//! - dead hosts: `"match": "segment"`, case-insensitive, on the host name wherever it appears
//!   in a simple command (URL, `user@host`, bare argument);
//! - tool-wide clusters: no pattern (the rule's `tool` glob is the pattern), exempting the
//!   calls that carry an input field no failure carries (`field`, see `fields`).
//!
//! Every pattern compiles on the linear-time engine, is valid Python `re` syntax, and
//! requires the candidate's prefilter literal in the text it matches (the backtest relies on
//! that; see `backtest`).

use super::cluster::{Cluster, Kind};
use super::command::POLL_LOOP_PATTERN;
use super::contrast::Contrast;
use super::fields::FieldUnless;

/// What a candidate matches and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Proposal {
    /// How the pattern was found: `program`, `missing-flag`, `narrowed`, `poll-loop`,
    /// `dead-host`, `tool-wide`.
    pub kind: &'static str,
    /// The rule's `any`.
    pub any: Vec<String>,
    /// The rule's `unless`.
    pub unless: Vec<String>,
    /// The rule's `match` (`None` for tool-wide rules).
    pub match_mode: Option<&'static str>,
    /// `"i"` for case-insensitive patterns.
    pub flags: Option<&'static str>,
    /// Lowercase literal every match contains (Bash candidates): the backtest prefilter.
    pub literal: Option<String>,
    /// A tool-wide candidate's field contrast: the rule's `field` is this field and its
    /// `unless` [`super::fields::NUMBER`] spares the calls that carry it.
    pub field_unless: Option<FieldUnless>,
    /// The rule's `when` conditions, learned only where the history shows they separate the
    /// failures from the successes (see [`Proposal::over_size`], `tool_causes`).
    pub when: Option<serde_json::Value>,
    /// The input field a file tool's `any` reads (`file_path`: a recurring wrong path).
    pub field: Option<&'static str>,
}

/// The kind of a proposal conditioned on a learned file-size threshold.
const OVER_SIZE: &str = "over-size";

impl Proposal {
    /// This program's proposal, firing only while `program` is not on `PATH`: its failures
    /// said the shell could not find it. The rule then fires in the sessions and on the
    /// machines where the call would fail, and never where the program is installed.
    ///
    /// This tool-wide proposal (`over_size`), firing only on a file larger than `bytes`: the failures
    /// said their input was over the tool's size limit, and no successful call of the tool
    /// returned more than `bytes`. The rule then fires where the call would fail (a Read of
    /// a big file without a range), not on every call of the tool.
    pub(crate) fn program_absent(mut self, program: &str) -> Self {
        self.kind = "program-absent";
        self.when = Some(serde_json::json!({ "program_absent": program }));
        self
    }

    /// Is its condition a threshold derive learned (a lower bound: calls between it and the
    /// real limit may succeed, so the tier is at most `probabilistic`)?
    pub(crate) fn threshold_learned(&self) -> bool {
        self.kind == OVER_SIZE
    }

    /// (See [`Proposal::program_absent`] for the other learned condition.)
    pub(crate) fn over_size(mut self, bytes: u64) -> Self {
        self.kind = OVER_SIZE;
        self.when = Some(serde_json::json!({
            "file_larger_than": {"field": "file_path", "bytes": bytes}
        }));
        self
    }

    /// This tool-wide proposal, exempting the calls that carry `u.field`.
    pub(crate) fn with_field_unless(mut self, u: FieldUnless) -> Self {
        self.kind = "missing-field";
        self.unless = vec![super::fields::NUMBER.to_string()];
        self.field_unless = Some(u);
        self
    }
}

#[cfg(test)]
impl Proposal {
    /// A tool-wide proposal whose `unless` spares numeric inputs: the one the cause and
    /// verdict tests condition (one fixture, so the two modules' tests start alike).
    pub(crate) fn tool_wide_fixture() -> Self {
        Proposal {
            kind: "tool-wide",
            any: vec![],
            unless: vec![r"^\d+$".into()],
            match_mode: None,
            flags: None,
            literal: None,
            field_unless: None,
            when: None,
            field: None,
        }
    }
}

/// The proposal for `cluster`; `None` when there is nothing to pattern on.
pub(crate) fn propose(cluster: &Cluster, contrast: Option<&Contrast>) -> Option<Proposal> {
    match &cluster.kind {
        Kind::NoProgram => None,
        Kind::ToolWide => Some(Proposal {
            kind: "tool-wide",
            any: Vec::new(),
            unless: Vec::new(),
            match_mode: None,
            flags: None,
            literal: None,
            field_unless: None,
            when: None,
            field: None,
        }),
        Kind::Shared(s) => Some(Proposal {
            kind: s.kind,
            any: vec![s.any.clone()],
            unless: Vec::new(),
            match_mode: Some(if s.text { "text" } else { "segment" }),
            flags: None,
            literal: Some(s.literal.clone()),
            field_unless: None,
            when: None,
            field: None,
        }),
        Kind::PollLoop => Some(Proposal {
            kind: "poll-loop",
            any: vec![POLL_LOOP_PATTERN.to_string()],
            unless: Vec::new(),
            match_mode: Some("text"),
            flags: None,
            literal: Some("sleep".into()),
            field_unless: None,
            when: None,
            field: None,
        }),
        Kind::DeadHost(host) => Some(Proposal {
            kind: "dead-host",
            any: vec![format!(r"(?:^|[\s/@=]){}(?:[\s:/]|$)", escape(host))],
            unless: Vec::new(),
            match_mode: Some("segment"),
            flags: Some("i"),
            literal: Some(host.to_ascii_lowercase()),
            field_unless: None,
            when: None,
            field: None,
        }),
        Kind::Program { head, pathed } => {
            let mut any = program_pattern(&cluster.shape, *pathed);
            let mut kind = "program";
            let mut unless = Vec::new();
            if let Some(k) = contrast {
                if let Some(n) = &k.narrow {
                    any.push_str(r".*\s");
                    any.push_str(&escape(&n.token));
                    any.push_str(end_of(&n.token));
                    kind = "narrowed";
                }
                for u in &k.unless {
                    unless.push(flag_pattern(&u.token));
                    kind = "missing-flag";
                }
            }
            Some(Proposal {
                kind,
                any: vec![any],
                unless,
                match_mode: Some("segment"),
                flags: None,
                literal: Some(head.to_ascii_lowercase()),
                field_unless: None,
                when: None,
                field: None,
            })
        }
    }
}

/// `^psql\b`, `^(?:\S*/)?git\s+push\b` for a shape.
pub(super) fn program_pattern(shape: &str, pathed: bool) -> String {
    let mut out = String::from("^");
    if pathed {
        out.push_str(r"(?:\S*/)?");
    }
    let words: Vec<&str> = shape.split(' ').collect();
    out.push_str(
        &words
            .iter()
            .map(|w| escape(w))
            .collect::<Vec<_>>()
            .join(r"\s+"),
    );
    out.push_str(end_of(words.last().copied().unwrap_or_default()));
    out
}

/// `\s--entity(?:[\s=]|$)`: the flag as a whole word, with or without `=value`.
fn flag_pattern(flag: &str) -> String {
    format!(r"\s{}(?:[\s=]|$)", escape(flag))
}

/// What ends a token: `\b` after a word character, else whitespace or the end.
fn end_of(token: &str) -> &'static str {
    if token
        .chars()
        .last()
        .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        r"\b"
    } else {
        r"(?:\s|$)"
    }
}

/// Escape regex metacharacters, the same way in Python `re` and the Rust engines; `-`, `/`,
/// `=`, `:`, `@` and `,` stay as they are (literal outside a class in both).
pub(crate) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 4);
    for c in s.chars() {
        if matches!(
            c,
            '\\' | '.'
                | '+'
                | '*'
                | '?'
                | '('
                | ')'
                | '|'
                | '['
                | ']'
                | '{'
                | '}'
                | '^'
                | '$'
                | '#'
                | '&'
                | '~'
        ) {
            out.push('\\');
            out.push(c);
        } else if c.is_whitespace() {
            out.push_str(r"\s");
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::derive::cluster::ToolGroup;
    use crate::derive::contrast::{TokenEvidence, Verdict};
    use crate::rules::Pattern;

    fn program(shape: &str, pathed: bool) -> Cluster {
        Cluster {
            group: ToolGroup::of("Bash"),
            shape: shape.into(),
            signature: String::new(),
            kind: Kind::Program {
                head: shape.split(' ').next().unwrap().into(),
                pathed,
            },
            failures: vec![],
            tokens: vec![],
            signatures: vec![],
        }
    }

    fn evidence(token: &str, verdict: Verdict) -> TokenEvidence {
        TokenEvidence {
            token: token.into(),
            in_successes: 0,
            in_failures: 0,
            verdict,
        }
    }

    fn matches(p: &str, s: &str) -> bool {
        Pattern::new(p, false).is_match(s).unwrap()
    }

    #[test]
    fn program_patterns_are_anchored_and_readable() {
        let p = propose(&program("psql", false), None).unwrap();
        assert_eq!(p.any, vec![r"^psql\b"]);
        assert_eq!(p.match_mode, Some("segment"));
        let p = propose(&program("python3 scripts/fetch-tool.py", true), None).unwrap();
        assert_eq!(p.any, vec![r"^(?:\S*/)?python3\s+scripts/fetch-tool\.py\b"]);
        assert!(matches(
            &p.any[0],
            "/usr/bin/python3 scripts/fetch-tool.py --x"
        ));
        assert!(!matches(&p.any[0], "python3 scripts/fetch-tool.pyc"));
        assert_eq!(p.literal.as_deref(), Some("python3"));
    }

    #[test]
    fn contrast_adds_unless_and_narrowing() {
        let k = Contrast {
            unless: vec![evidence("--entity", Verdict::Unless)],
            narrow: Some(evidence("--all", Verdict::Narrow)),
            ..Contrast::default()
        };
        let p = propose(&program("fetch", false), Some(&k)).unwrap();
        assert_eq!(p.kind, "missing-flag");
        assert_eq!(p.any, vec![r"^fetch\b.*\s--all\b"]);
        assert_eq!(p.unless, vec![r"\s--entity(?:[\s=]|$)"]);
        assert!(matches(&p.unless[0], "fetch --all --entity=x"));
        assert!(!matches(&p.unless[0], "fetch --all --entity-type x"));
    }

    #[test]
    fn loops_and_hosts() {
        let mut c = program("x", false);
        c.kind = Kind::DeadHost("api.dead.example".into());
        let p = propose(&c, None).unwrap();
        assert!(matches(&p.any[0], "curl -sf https://api.dead.example/v1"));
        assert!(matches(&p.any[0], "ssh deploy@api.dead.example"));
        assert!(!matches(&p.any[0], "curl https://api.dead.example.org/"));
        c.kind = Kind::NoProgram;
        assert!(propose(&c, None).is_none());
        assert_eq!(escape("a.b(c)-d e"), r"a\.b\(c\)-d\se");
    }
}
