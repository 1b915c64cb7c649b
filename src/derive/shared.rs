//! Signature first: Bash failures of one cause, found by what their calls share rather than by
//! their program.
//!
//! Program clusters (see `cluster`) miss a cause spread over several programs or spellings
//! (`x.sh` run directly and as `bash x.sh`), and their rule is program-wide while the cause
//! is an operand, a path or the call's structure. Two more groupings run beside them:
//! - **signature groups**: the Bash failures whose normalised error signature, cut to its
//!   first sentence ([`signature_key`]), is the same *specific* one (a bare exit status, a
//!   wrapper's preamble or a timeout is generic and never groups);
//! - **structures**: failures whose command text has a shape known to fail whatever the
//!   program says: `apply_patch` text that is not valid patch syntax
//!   ([`MALFORMED_PATCH_PATTERN`]), a Windows backslash path bash mangles (`backslash_path`).
//!
//! A group recurs when it has `--min-count` failures, or two in two sessions. For a
//! signature group, the elements its failing calls share are read with the shell splitter
//! ([`elements`]: quoted operands stay whole, `./a/b` is `a/b`, every directory prefix of a
//! path is an element of its own), and those in all or nearly all of them
//! ([`NEARLY_ALL`]) become candidate patterns, the most specific first. Each candidate is
//! replayed over the window's calls ([`crate::rules::backtest::matching`], the guard's
//! matcher) and kept only when ([`separates`]) it fires on nearly all of the group's
//! failures, those are at least half of the failures it fires on, and it fires on no more
//! successes than on the group's failures. A structure is kept on the same test.
//!
//! A group none of whose candidates separates is a **lesson**, never a rule: its best
//! candidate is reported in `generated.not_rules` with its evidence. A group already one
//! active program cluster is left to that cluster.

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use super::backslash_path;
use super::calls::Failure;
use super::cluster::{self, Cluster, Kind, SharedPattern, ToolGroup};
use super::finding;
use super::pattern::escape;
use crate::rules::Pattern;
use crate::rules::backtest::StoredCall;
use crate::shell;

/// Share of a group's failures an element must be in to be a candidate.
pub(crate) const NEARLY_ALL: f64 = 0.80;
/// Fewest failures of a group, whatever `--min-count` says, when they span two sessions.
pub(crate) const MIN_SHARED: usize = 2;
/// Most candidate patterns replayed per group.
pub(crate) const MAX_CANDIDATES: usize = 6;
/// Longest operand kept as an element.
const MAX_WORD: usize = 100;

/// `apply_patch` text that is not valid patch syntax, in the three ways the parser rejects
/// it: an `*** Add File:` body line without `+` (a blank line is the usual one), an
/// `*** Update File:` hunk line that starts with none of `@@`, space, `+`, `-`, and an
/// `*** Update File:` with no hunk before the next file or the end of the patch. Blank lines
/// in an Update hunk are allowed (the parser reads them as empty context).
pub(crate) const MALFORMED_PATCH_PATTERN: &str = concat!(
    r"\*\*\* Add File: [^\n]*\n(?:\+[^\n]*\n)*(?:\n|[^+*\n])",
    r"|\*\*\* Update File: [^\n]*\n(?:\*\*\* Move to: [^\n]*\n)?(?:(?:@@|[ +\-])[^\n]*\n|\n)*[^@ +\-*\n]",
    r"|\*\*\* Update File: [^\n]*\n(?:\*\*\* Move to: [^\n]*\n)?\*\*\* (?:End Patch|Add File|Delete File|Update File)",
);

/// The literal every malformed-patch match holds (lowercase, as the prefilter sees it).
const PATCH_LITERAL: &str = " file: ";

/// Why a lesson is no rule.
pub(crate) const LESSON: &str = "one specific error recurs, but what its failing calls share is just as common in successful calls: no pattern separates them, so it is a lesson to read, not a rule";

/// The compiled malformed-patch detector.
fn malformed_patch() -> &'static Pattern {
    static P: OnceLock<Pattern> = OnceLock::new();
    P.get_or_init(|| Pattern::new(MALFORMED_PATCH_PATTERN, false))
}

/// Is `command` `apply_patch` text that is not valid patch syntax?
pub(crate) fn is_malformed_patch(command: &str) -> bool {
    command.contains("*** ") && malformed_patch().is_match(command).unwrap_or(false)
}

/// One recurring group, before replay.
#[derive(Debug, Clone)]
pub(crate) struct Group {
    /// The signature key, or the structure's name.
    pub key: String,
    /// Indices of its failures in the window's failure list.
    pub failures: Vec<usize>,
    /// Candidate patterns, best first.
    pub candidates: Vec<SharedPattern>,
}

/// The signature cut to what says the cause: without the exit status, a sandbox wrapper's
/// preamble and output labels, and only up to the end of its first sentence
/// (`error: not on a feature branch. current branch: main` → `error: not on a feature
/// branch`). `None` when what is left is generic: no more than an exit status, or a timeout
/// (every program can time out; a timeout groups only by a field the history does not keep).
pub(crate) fn signature_key(signature: &str) -> Option<String> {
    let mut s = signature.trim();
    // The recorder spells the status `#`; a stored row may keep its digits.
    if let Some(rest) = s.strip_prefix("exit code ") {
        s = rest
            .trim_start_matches(|c: char| c == '#' || c.is_ascii_digit())
            .trim_start();
    }
    if let Some(i) = s.find("exit code: #")
        && s[..i].contains("sandbox")
    {
        s = s[i + "exit code: #".len()..].trim_start_matches([',', ' ']);
    }
    for label in ["stdout:", ",", "stderr:"] {
        s = s.strip_prefix(label).map_or(s, str::trim_start);
    }
    let end = s.find(". ").unwrap_or(s.len());
    let key = s[..end].trim().trim_end_matches('.').to_string();
    let generic = key.contains("timed out") || key.contains("timeout");
    (finding::is_specific(&key) && !generic).then_some(key)
}

/// One element of a call, as derive keys a rule on it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Element {
    /// A script run or passed by path, by its file name (`setup-plan.sh`).
    Script(String),
    /// An operand, quotes removed and kept whole (`Use cases/x`).
    Word(String),
    /// A directory prefix of a path operand, `./` dropped (`.specify/scripts/bash/`).
    PathPrefix(String),
    /// The program of a simple command (`sed`).
    Program(String),
}

/// File names that are scripts.
const SCRIPT_EXTENSIONS: &[&str] = &[".sh", ".py", ".js", ".ts", ".rb", ".pl", ".ps1", ".bash"];

/// `./a/b` and `a/b` are one path; surrounding quotes and brackets are not part of it.
fn normalise_path(word: &str) -> &str {
    let w = word.trim_matches(|c| matches!(c, '"' | '\'' | '`' | '(' | ')' | ',' | ';'));
    let mut w = w;
    while let Some(rest) = w.strip_prefix("./") {
        w = rest;
    }
    w
}

/// The elements of a command (each once), read with the shell splitter: every simple
/// command's program, and its operands: scripts by file name, words whole, and every
/// directory prefix of a path. Flags and substitutions are not elements.
pub(crate) fn elements(command: &str) -> Vec<Element> {
    let mut out: HashSet<Element> = HashSet::new();
    for seg in &shell::split(command).segments {
        let Some(program) = crate::shell::program::program(seg) else {
            continue;
        };
        out.insert(Element::Program(program.head.clone()));
        // The splitter strips a program's path; the simple command's own text still has it.
        let pathed = seg
            .raw
            .split_whitespace()
            .map(normalise_path)
            .find(|w| w.contains('/') && w.rsplit('/').next() == seg.program());
        let words = seg.argv.iter().skip(1).map(|w| normalise_path(w));
        for w in pathed.into_iter().chain(words) {
            if w.is_empty()
                || w.starts_with('-')
                || w.len() > MAX_WORD
                || w.contains(['\n', '$', '`', '\\', '"', '\''])
            {
                continue;
            }
            let name = w.rsplit('/').next().unwrap_or(w);
            if SCRIPT_EXTENSIONS.iter().any(|e| name.ends_with(e)) && name.len() > 3 {
                out.insert(Element::Script(name.to_string()));
            }
            if w.contains('/') {
                let mut end = 0;
                while let Some(i) = w[end..].find('/') {
                    end += i + 1;
                    if end > 1 {
                        out.insert(Element::PathPrefix(w[..end].to_string()));
                    }
                }
            }
            if w != program.head {
                out.insert(Element::Word(w.to_string()));
            }
        }
    }
    let mut v: Vec<Element> = out.into_iter().collect();
    v.sort();
    v
}

impl Element {
    /// How specific it is (lower first): a script, an operand, a longer path prefix, the
    /// program last.
    fn rank(&self) -> (u8, std::cmp::Reverse<usize>) {
        match self {
            Element::Script(s) => (0, std::cmp::Reverse(s.len())),
            Element::Word(s) => (1, std::cmp::Reverse(s.len())),
            Element::PathPrefix(s) => (2, std::cmp::Reverse(s.len())),
            Element::Program(s) => (3, std::cmp::Reverse(s.len())),
        }
    }

    /// The pattern that matches a call holding this element, as a rule carries it.
    pub(crate) fn pattern(&self) -> SharedPattern {
        let (element, any, text, literal) = match self {
            Element::Script(s) => (
                format!("script {s}"),
                format!(r"(?:^|\s)'?(?:\S*/)?{}(?:'|\s|$)", escape(s)),
                false,
                s,
            ),
            Element::Word(s) => (
                format!("operand {s}"),
                format!(r"(?:^|\s)'?(?:\./)?{}'?(?:\s|$)", escape(s)),
                false,
                s,
            ),
            Element::PathPrefix(s) => (
                format!("path {s}"),
                format!(r#"(?:^|[\s;&|(='"])(?:\./)?{}"#, escape(s)),
                true,
                s,
            ),
            Element::Program(s) => (
                format!("program {s}"),
                format!(r"^(?:\S*/)?{}(?:\s|$)", escape(s)),
                false,
                s,
            ),
        };
        SharedPattern {
            kind: "shared-element",
            element,
            any,
            text,
            literal: literal.to_ascii_lowercase(),
            separates: false,
        }
    }
}

/// The pattern of the malformed-patch structure.
fn malformed_patch_pattern() -> SharedPattern {
    SharedPattern {
        kind: "malformed-patch",
        element: "apply_patch text that is not valid patch syntax".into(),
        any: MALFORMED_PATCH_PATTERN.to_string(),
        text: true,
        literal: PATCH_LITERAL.to_string(),
        separates: false,
    }
}

/// Do these failures recur: `min_count` of them, or [`MIN_SHARED`] over two sessions?
fn recurs(failures: &[Failure], idx: &[usize], min_count: u64) -> bool {
    let sessions: HashSet<Option<&str>> = idx
        .iter()
        .map(|&i| failures[i].session.as_deref())
        .collect();
    idx.len() as u64 >= min_count || (idx.len() >= MIN_SHARED && sessions.len() >= 2)
}

/// The elements in all or nearly all of the failing commands, most common then most
/// specific first, as candidate patterns.
pub(crate) fn shared_elements<'c>(commands: impl Iterator<Item = &'c str>) -> Vec<SharedPattern> {
    let mut counts: HashMap<Element, usize> = HashMap::new();
    let mut n = 0usize;
    for c in commands {
        n += 1;
        for e in elements(c) {
            *counts.entry(e).or_default() += 1;
        }
    }
    let need = ((n as f64) * NEARLY_ALL).ceil().max(MIN_SHARED as f64) as usize;
    let mut kept: Vec<(Element, usize)> = counts.into_iter().filter(|(_, k)| *k >= need).collect();
    kept.sort_by(|a, b| {
        b.1.cmp(&a.1)
            .then(a.0.rank().cmp(&b.0.rank()))
            .then(a.0.cmp(&b.0))
    });
    kept.into_iter()
        .take(MAX_CANDIDATES)
        .map(|(e, _)| e.pattern())
        .collect()
}

/// A structure's candidate pattern.
type Structure = fn() -> SharedPattern;

/// A structure's group: its failures and its one pattern, named by its kind.
fn structure(failures: Vec<usize>, p: SharedPattern) -> Group {
    Group {
        key: p.kind.to_string(),
        failures,
        candidates: vec![p],
    }
}

/// The recurring signature groups and structures of the window's Bash failures that no one
/// active cluster already holds (`active`: indices into `clusters`).
pub(crate) fn groups(
    failures: &[Failure],
    clusters: &[Cluster],
    active: &[usize],
    min_count: u64,
) -> Vec<Group> {
    let mut cluster_of: HashMap<usize, usize> = HashMap::new();
    for (ci, c) in clusters.iter().enumerate() {
        for &f in &c.failures {
            cluster_of.insert(f, ci);
        }
    }
    let covered = |idx: &[usize]| {
        let first = cluster_of.get(&idx[0]);
        first.is_some_and(|c| active.contains(c)) && idx.iter().all(|i| cluster_of.get(i) == first)
    };
    let proposed: HashSet<String> = active
        .iter()
        .filter_map(|&c| match &clusters[c].kind {
            Kind::Program { head, .. } => Some(Element::Program(head.clone()).pattern().element),
            _ => None,
        })
        .collect();
    let mut by_key: HashMap<String, Vec<usize>> = HashMap::new();
    // The structures, each with its failures.
    let mut structures: [(Vec<usize>, Structure); 2] = [
        (Vec::new(), malformed_patch_pattern),
        (Vec::new(), backslash_path::pattern),
    ];
    for (i, f) in failures.iter().enumerate() {
        if !ToolGroup::of(&f.tool).is_bash()
            || matches!(
                clusters
                    .get(cluster_of.get(&i).copied().unwrap_or(usize::MAX))
                    .map(|c| &c.kind),
                Some(Kind::PollLoop | Kind::DeadHost(_))
            )
        {
            continue;
        }
        // A malformed patch is explained by its structure, whatever its error says.
        if is_malformed_patch(&f.command) {
            structures[0].0.push(i);
        } else if backslash_path::is_mangled(&f.command) {
            structures[1].0.push(i);
        } else if let Some(key) = signature_key(&cluster::signature_of(f)) {
            by_key.entry(key).or_default().push(i);
        }
    }
    let mut out: Vec<Group> = structures
        .into_iter()
        .filter(|(idx, _)| !idx.is_empty() && recurs(failures, idx, min_count))
        .map(|(idx, pattern)| structure(idx, pattern()))
        .collect();
    let mut keys: Vec<(String, Vec<usize>)> = by_key.into_iter().collect();
    keys.sort();
    for (key, idx) in keys {
        if !recurs(failures, &idx, min_count) || covered(&idx) {
            continue;
        }
        // A program an active cluster already patterns on is that cluster's rule.
        let candidates: Vec<SharedPattern> =
            shared_elements(idx.iter().map(|&i| failures[i].command.as_str()))
                .into_iter()
                .filter(|p| !proposed.contains(&p.element))
                .collect();
        if candidates.is_empty() {
            continue;
        }
        out.push(Group {
            key,
            failures: idx,
            candidates,
        });
    }
    out
}

/// What one candidate's replay fired on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Fired {
    /// The group's own failures.
    pub own: usize,
    /// Other failures.
    pub other: usize,
    /// Successful calls.
    pub successes: usize,
}

/// Does a candidate separate a group of `n` failures: it fires on nearly all of them, they
/// are at least half of the failures it fires on, and it fires on no more successes than on
/// them?
pub(crate) fn separates(f: Fired, n: usize) -> bool {
    let need = ((n as f64) * NEARLY_ALL).ceil().max(MIN_SHARED as f64) as usize;
    f.own >= need && f.own >= f.other && f.successes <= f.own
}

/// Replay each group's candidates over `calls` (the scan's, which kept every call holding a
/// candidate's literal) with the guard's matcher, and choose: the first that separates, else
/// the one firing on most of the group's failures, as a lesson. Returns one cluster per group.
pub(crate) fn resolve(
    groups: Vec<Group>,
    failures: &[Failure],
    calls: &[StoredCall],
) -> Vec<Cluster> {
    let mut out = Vec::new();
    for g in groups {
        let own: HashSet<(i64, &str)> = g
            .failures
            .iter()
            .map(|&i| (failures[i].started_ms, failures[i].command.as_str()))
            .collect();
        let mut best: Option<(SharedPattern, Fired)> = None;
        for cand in &g.candidates {
            let Ok(rule) = probe(cand) else { continue };
            let fired = crate::rules::backtest::matching(&[&rule], calls)
                .swap_remove(0)
                .into_iter()
                .map(|i| &calls[i])
                .fold(Fired::default(), |mut f, c| {
                    if !c.failed {
                        f.successes += 1;
                    } else if own.contains(&(c.started_ms, c.command.as_str())) {
                        f.own += 1;
                    } else {
                        f.other += 1;
                    }
                    f
                });
            if separates(fired, g.failures.len()) {
                best = Some((
                    SharedPattern {
                        separates: true,
                        ..cand.clone()
                    },
                    fired,
                ));
                break;
            }
            if best.as_ref().is_none_or(|(_, b)| fired.own > b.own) {
                best = Some((cand.clone(), fired));
            }
        }
        let Some((pattern, fired)) = best else {
            continue;
        };
        if fired.own == 0 {
            continue;
        }
        out.push(Cluster {
            group: ToolGroup::of("Bash"),
            shape: pattern.element.clone(),
            signature: g.key,
            kind: Kind::Shared(pattern),
            failures: g.failures,
            tokens: Vec::new(),
            signatures: Vec::new(),
        });
    }
    out
}

/// The rule a candidate pattern is replayed as.
fn probe(p: &SharedPattern) -> crate::Result<crate::rules::Rule> {
    let mut rule = serde_json::Map::new();
    rule.insert("id".into(), "shared-element-probe".into());
    rule.insert("tool".into(), "Bash".into());
    rule.insert(
        "match".into(),
        (if p.text { "text" } else { "segment" }).into(),
    );
    rule.insert("any".into(), serde_json::json!([p.any]));
    rule.insert("message".into(), "probe".into());
    crate::rules::backtest::probe(&rule, "shared element")
}

/// Is this cluster a lesson (a shared cause no pattern separates)?
pub(crate) fn is_lesson(c: &Cluster) -> bool {
    matches!(&c.kind, Kind::Shared(p) if !p.separates)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_patches_in_every_spelling() {
        let ok = "apply_patch <<'P'\n*** Begin Patch\n*** Update File: a.py\n@@ def f\n x\n-y\n+z\n\n*** Add File: b\n+a\n+\n*** Delete File: c\n*** End Patch\nP";
        assert!(!is_malformed_patch(ok));
        let moved =
            "*** Begin Patch\n*** Update File: a\n*** Move to: b\n@@\n-x\n+y\n*** End Patch";
        assert!(!is_malformed_patch(moved));
        for bad in [
            "*** Begin Patch\n*** Add File: a\n+x\n\n+y\n*** End Patch",
            "*** Begin Patch\n*** Add File: a\ntext\n*** End Patch",
            "*** Begin Patch\n*** Update File: a\n@@\n x\nid: 1\n*** End Patch",
            "*** Begin Patch\n*** Update File: a\n*** End Patch",
            "*** Begin Patch\n*** Update File: a\n*** Move to: b\n*** Add File: c\n+x\n*** End Patch",
        ] {
            assert!(is_malformed_patch(bad), "{bad}");
        }
        assert!(!is_malformed_patch("echo '*** Add File'"));
    }

    #[test]
    fn signature_keys_drop_wrappers_and_refuse_generic_ones() {
        assert_eq!(
            signature_key("exit code # error: not on a feature branch. current branch: main")
                .as_deref(),
            Some("error: not on a feature branch")
        );
        assert_eq!(signature_key("exit code #"), None);
        assert_eq!(
            signature_key("exit code 127 error: not on a feature branch").as_deref(),
            Some("error: not on a feature branch")
        );
        assert_eq!(
            signature_key("exit code # command timed out after # milliseconds"),
            None
        );
        assert_eq!(
            signature_key(
                "failed in sandbox linuxseccomp with execution error: sandbox denied exec error, exit code: #, stdout:"
            ),
            None
        );
        assert_eq!(
            signature_key("failed in sandbox x with execution error: sandbox denied exec error, exit code: #, stdout: , stderr: bash: line #: unexpected eof while looking").as_deref(),
            Some("bash: line #: unexpected eof while looking")
        );
    }

    #[test]
    fn elements_keep_quoted_operands_whole_and_normalise_paths() {
        let e = elements(r#"sed -n '1,5p' "Use cases/x.md" && ./tools/kit/plan.sh --json"#);
        assert!(e.contains(&Element::Word("Use cases/x.md".into())), "{e:?}");
        assert!(e.contains(&Element::PathPrefix("Use cases/".into())));
        assert!(e.contains(&Element::PathPrefix("tools/kit/".into())));
        assert!(e.contains(&Element::PathPrefix("tools/".into())));
        assert!(e.contains(&Element::Script("plan.sh".into())));
        assert!(e.contains(&Element::Program("sed".into())));
        assert!(
            !e.iter()
                .any(|x| matches!(x, Element::Word(w) if w.starts_with('-')))
        );
        let same = elements("bash tools/kit/plan.sh");
        assert!(same.contains(&Element::PathPrefix("tools/kit/".into())));
    }

    #[test]
    fn shared_elements_need_nearly_all_failures() {
        // All share the prefix; four of five share the script (80%): both kept, the script
        // (more specific) after the prefix only because fewer calls carry it.
        let cmds = [
            "a/b/x.sh",
            "bash a/b/x.sh",
            "a/b/x.sh -v",
            "a/b/x.sh",
            "a/b/y.sh",
        ];
        let got: Vec<String> = shared_elements(cmds.into_iter())
            .into_iter()
            .map(|p| p.element)
            .collect();
        assert_eq!(got[0], "path a/b/");
        assert!(got.contains(&"script x.sh".to_string()), "{got:?}");
        // Three of five (60%) is not nearly all.
        let cmds = ["a/x.sh", "a/x.sh", "a/x.sh", "b/y.sh", "c/z.sh"];
        assert!(
            shared_elements(cmds.into_iter())
                .iter()
                .all(|p| p.element != "script x.sh")
        );
        // A single failure shares nothing worth a rule.
        assert!(shared_elements(["a/x.sh"].into_iter()).is_empty());
    }

    #[test]
    fn separation_edges() {
        let f = |own, other, successes| Fired {
            own,
            other,
            successes,
        };
        assert!(separates(f(5, 0, 0), 5));
        assert!(separates(f(4, 0, 4), 5)); // 80% of 5, as many successes as failures
        assert!(!separates(f(3, 0, 0), 5)); // not nearly all
        assert!(!separates(f(4, 0, 5), 5)); // more successes than failures: common in successes
        assert!(separates(f(4, 4, 0), 5));
        assert!(!separates(f(4, 5, 0), 5)); // mostly another cause's failures
        assert!(!separates(f(1, 0, 0), 1)); // one failure is never enough
        assert!(separates(f(2, 0, 0), 2));
    }

    #[test]
    fn element_patterns_match_what_they_name() {
        let m =
            |pat: &SharedPattern, text: &str| Pattern::new(&pat.any, false).is_match(text).unwrap();
        let path = Element::PathPrefix("tools/kit/".into()).pattern();
        assert!(path.text);
        assert!(m(&path, "bash ./tools/kit/a.sh"));
        assert!(m(&path, "cd x && \"tools/kit/a.sh\""));
        assert!(!m(&path, "ls mytools/kit/a"));
        let script = Element::Script("plan.sh".into()).pattern();
        assert!(m(&script, "plan.sh --json"));
        assert!(m(&script, "bash tools/kit/plan.sh"));
        assert!(!m(&script, "bash tools/kit/plan.sh.bak"));
        let word = Element::Word("Use cases/x.md".into()).pattern();
        assert!(m(&word, "sed -n 1p 'Use cases/x.md'"));
        assert!(!m(&word, "sed -n 1p Use"));
        let prog = Element::Program("sed".into()).pattern();
        assert!(m(&prog, "sed -n 1p"));
        assert!(!m(&prog, "sedx"));
    }
}
