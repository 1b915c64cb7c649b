//! What a recurring cluster is before it becomes a candidate: a rule a reviewer would keep,
//! a fact about the environment, or the agent guessing ([`FindingKind`]).
//!
//! The model, judged on the cluster's error signature, its failing calls and its own
//! backtest (so the figures are the ones the candidate would carry):
//! - **environment** — the error says the cause lies outside the command: the network did
//!   not answer (connection refused, reset or timed out, network or host unreachable, no
//!   DNS server could be reached, a TLS handshake cut off). The same command works once the
//!   network does; a rule against its program would stand in the way of its working calls.
//!   Reported once per kind with counts, as harness failures are. A name-resolution failure
//!   about one *named* host is not this: the host is the call's operand and recurs (a
//!   dead-host candidate, see `cluster`).
//! - **guess** — the error says the operand does not exist (`does not exist`, `no such
//!   file`, `not found`, HTTP 404), no operand failed twice, and the tool or program succeeds
//!   on most of the calls the pattern matches: the agent guessed a path or URL, a different
//!   one each time, and the tool's own error already told it so. Not a guess: a missing
//!   *program* (`command not found`, `is not recognized`, `No module named`: the operand is
//!   the program, and it recurs), and a wrong *form* of operand that recurs — the failing
//!   operands' files are read successfully under another spelling (wrong case, `/c/…` for
//!   `C:\…`) and that happens in two or more sessions: a reviewer keeps that rule.
//!   The same holds for one error signature from [`SHARED_PROGRAMS`] or more different
//!   programs: what they share is the environment they ran in, not a fault of each.
//! - **rule** — everything else: a candidate.

use std::collections::{BTreeSet, HashSet};

use serde::Serialize;

/// What a cluster is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum FindingKind {
    /// A candidate rule.
    Rule,
    /// The cause is outside the command (this kind, in words).
    Environment(&'static str),
    /// A different guessed operand each time; the tool works with others.
    Guess,
    /// A recurring cause no pattern separates from the successes (see `shared`): reported
    /// with its evidence, never a rule.
    Lesson,
}

impl FindingKind {
    /// `rule`, `environment`, `guess`.
    pub(crate) fn label(self) -> &'static str {
        match self {
            FindingKind::Rule => "rule",
            FindingKind::Environment(_) => "environment",
            FindingKind::Guess => "guess",
            FindingKind::Lesson => "lesson",
        }
    }

    /// Why it is not a candidate, in words (empty for a rule).
    pub(crate) fn why(self) -> &'static str {
        match self {
            FindingKind::Rule => "",
            FindingKind::Environment(kind) => kind,
            FindingKind::Lesson => super::shared::LESSON,
            FindingKind::Guess => {
                "a different operand in every failing call (the error says it does not exist) while the tool succeeds on most of the calls the pattern matches: the agent guessing, not a rule"
            }
        }
    }
}

/// The network kind of environment finding.
pub(crate) const NETWORK: &str =
    "the network did not answer (connection refused, timed out or unreachable; no DNS server)";

/// The kind of environment finding of one signature from several programs.
pub(crate) const SHARED: &str =
    "one error from several different programs (the environment they ran in, not any one of them)";

/// Fewest distinct programs failing with one signature before it is the environment's.
pub(crate) const SHARED_PROGRAMS: usize = 3;

/// Phrases (lowercase) of an error whose cause is the network, not the command.
const NETWORK_PHRASES: &[&str] = &[
    "connection refused",
    "connection timed out",
    "connection reset",
    "operation timed out",
    "connect timed out",
    "read timed out",
    "timed out while connecting",
    "network is unreachable",
    "network unreachable",
    "no route to host",
    "host is unreachable",
    "no servers could be reached",
    "temporary failure in name resolution",
    "could not connect to server",
    "failed to connect to",
    "unable to connect to the remote server",
    "ssl_error_syscall",
    "tls handshake timeout",
    "econnrefused",
    "etimedout",
    "enetunreach",
    "econnreset",
];

/// Phrases (lowercase) of an error saying the named operand does not exist.
const MISSING_PHRASES: &[&str] = &[
    "does not exist",
    "no such file",
    "not found",
    "cannot find path",
    "404",
];

/// Phrases that say the *program* is what is missing (never a guess).
const MISSING_PROGRAM_PHRASES: &[&str] = &[
    "command not found",
    "is not recognized as",
    "no module named",
    "modulenotfounderror",
    "executable file not found",
];

/// The environment kind an error signature names, if any.
pub(crate) fn environment_kind(signature: &str) -> Option<&'static str> {
    let s = signature.to_lowercase();
    NETWORK_PHRASES
        .iter()
        .any(|p| s.contains(p))
        .then_some(NETWORK)
}

/// The signature without its exit status and its own program's `prog:` prefix, so one
/// error from several programs (`node: error while loading…`, `ruby: error while
/// loading…`) compares equal.
pub(crate) fn without_program<'s>(signature: &'s str, head: &str) -> &'s str {
    let s = signature.trim();
    let s = s.strip_prefix("exit code #").map_or(s, str::trim_start);
    // Spelled as the signature spells it: lowercase, digit runs as `#` (`python3` → `python#`).
    let mut norm = String::with_capacity(head.len());
    for c in head.to_lowercase().chars() {
        if c.is_ascii_digit() {
            if !norm.ends_with('#') {
                norm.push('#');
            }
        } else {
            norm.push(c);
        }
    }
    s.strip_prefix(norm.as_str())
        .and_then(|r| r.strip_prefix(':'))
        .map_or(s, str::trim_start)
}

/// A signature that says more than an exit status (`exit code #` alone is every program's).
pub(crate) fn is_specific(signature: &str) -> bool {
    let rest = signature
        .trim()
        .strip_prefix("exit code #")
        .unwrap_or(signature);
    rest.chars().filter(char::is_ascii_alphabetic).count() >= 8
}

/// Does the signature say an operand (not the program) does not exist?
pub(crate) fn says_operand_missing(signature: &str) -> bool {
    let s = signature.to_lowercase();
    MISSING_PHRASES.iter().any(|p| s.contains(p))
        && !MISSING_PROGRAM_PHRASES.iter().any(|p| s.contains(p))
}

/// One failing call as the model sees it.
#[derive(Debug, Clone)]
pub(crate) struct FailingCall<'a> {
    /// Its operand: the input summary (non-Bash) or the command (Bash).
    pub operand: &'a str,
    /// Its session.
    pub session: Option<&'a str>,
}

/// What the model decides on.
#[derive(Debug, Clone)]
pub(crate) struct Facts<'a> {
    /// The cluster's error signature.
    pub signature: &'a str,
    /// A dead-host cluster (one named host): never environment or guess.
    pub dead_host: bool,
    /// Distinct programs whose failures carry this signature in the window.
    pub programs_sharing: usize,
    /// Its failing calls.
    pub failing: Vec<FailingCall<'a>>,
    /// Calls the candidate's pattern matched, and how many of them failed (`None`: the
    /// window has no denominator).
    pub matched: Option<(u64, u64)>,
}

impl Facts<'_> {
    /// Could this be a guess (before looking at the successes' operands)?
    pub(crate) fn guess_shaped(&self) -> bool {
        let Some((matched, failed)) = self.matched else {
            return false;
        };
        let mut seen = HashSet::new();
        let distinct = self
            .failing
            .iter()
            .all(|f| seen.insert(normalised(f.operand)));
        says_operand_missing(self.signature) && distinct && failed * 2 < matched
    }
}

/// The verdict on a cluster. `successes` yields the operands of the tool's (or program's)
/// successful calls in the window; it is only consulted for a guess-shaped cluster.
pub(crate) fn classify<'s>(
    facts: &Facts<'_>,
    successes: impl FnOnce() -> Vec<&'s str>,
) -> FindingKind {
    if facts.dead_host {
        return FindingKind::Rule;
    }
    if let Some(kind) = environment_kind(facts.signature) {
        return FindingKind::Environment(kind);
    }
    if facts.programs_sharing >= SHARED_PROGRAMS && is_specific(facts.signature) {
        return FindingKind::Environment(SHARED);
    }
    if !facts.guess_shaped() {
        return FindingKind::Rule;
    }
    if wrong_form_recurs(&facts.failing, &successes()) {
        FindingKind::Rule
    } else {
        FindingKind::Guess
    }
}

/// Whitespace collapsed, lowercase: two spellings of the same call compare equal.
fn normalised(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// Path-like words of an operand (a `/` or `\` inside), quotes stripped.
fn paths(operand: &str) -> impl Iterator<Item = &str> {
    operand
        .split_whitespace()
        .map(|w| w.trim_matches(|c| matches!(c, '"' | '\'' | '`' | '(' | ')' | ',' | ';')))
        .filter(|w| w.contains('/') || w.contains('\\'))
}

/// A path as one file is spelled whatever the spelling: lowercase, `\\` as `/`, a drive
/// `C:` as `/c`, and the user's own segment of a home directory (`/Users/NAME`,
/// `/home/NAME`) as `~`.
fn canonical(path: &str) -> String {
    let mut p = path.to_lowercase().replace('\\', "/");
    let b = p.as_bytes();
    if b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':' {
        p = format!("/{}{}", &p[..1], &p[2..]);
    }
    let mut out: Vec<&str> = Vec::new();
    let mut home = false;
    for part in p.split('/') {
        if home {
            out.push("~");
            home = false;
            continue;
        }
        home = matches!(part, "users" | "home");
        out.push(part);
    }
    out.join("/")
}

/// At least half of the failing calls name a file that some success names under another
/// spelling (the same [`canonical`] path, written differently), and those failures span
/// two or more sessions.
fn wrong_form_recurs(failing: &[FailingCall<'_>], successes: &[&str]) -> bool {
    let mut spellings: std::collections::HashMap<String, Vec<&str>> =
        std::collections::HashMap::new();
    for s in successes {
        for p in paths(s) {
            spellings.entry(canonical(p)).or_default().push(p);
        }
    }
    let twinned: Vec<&FailingCall<'_>> = failing
        .iter()
        .filter(|f| {
            paths(f.operand).any(|p| {
                spellings
                    .get(&canonical(p))
                    .is_some_and(|others| others.iter().any(|o| *o != p))
            })
        })
        .collect();
    let sessions: BTreeSet<Option<&str>> = twinned.iter().map(|f| f.session).collect();
    !twinned.is_empty() && twinned.len() * 2 >= failing.len() && sessions.len() >= 2
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call<'a>(operand: &'a str, session: &'a str) -> FailingCall<'a> {
        FailingCall {
            operand,
            session: Some(session),
        }
    }

    fn facts<'a>(signature: &'a str, failing: Vec<FailingCall<'a>>, m: (u64, u64)) -> Facts<'a> {
        Facts {
            signature,
            dead_host: false,
            programs_sharing: 1,
            failing,
            matched: Some(m),
        }
    }

    #[test]
    fn network_failures_are_environment_findings() {
        for sig in [
            "exit code # ;; connection timed out; no servers could be reached",
            "curl: (#) failed to connect to host port #: connection refused",
            "ssh: connect to host h port #: network is unreachable",
            "psql: error: could not connect to server",
            "fetch failed: econnreset",
        ] {
            let f = facts(sig, vec![call("dig x", "a"), call("dig x", "a")], (3, 2));
            assert_eq!(
                classify(&f, Vec::new),
                FindingKind::Environment(NETWORK),
                "{sig}"
            );
        }
        // A named dead host stays a (dead-host) rule.
        let mut f = facts("connection refused", vec![], (1, 1));
        f.dead_host = true;
        assert_eq!(classify(&f, Vec::new), FindingKind::Rule);
        // A program's own failure is not the network.
        let f = facts(
            "fatal: not a git repository",
            vec![call("git x", "a")],
            (9, 1),
        );
        assert_eq!(classify(&f, Vec::new), FindingKind::Rule);
    }

    #[test]
    fn one_signature_from_three_programs_is_the_environment() {
        let sig = "exit code # error while loading shared libraries: libssl.so.#: cannot open shared object file";
        let mut f = facts(sig, vec![call("a", "s")], (9, 3));
        assert_eq!(classify(&f, Vec::new), FindingKind::Rule);
        f.programs_sharing = 3;
        assert_eq!(classify(&f, Vec::new), FindingKind::Environment(SHARED));
        // A bare exit status is shared by everything and says nothing.
        let mut f = facts("exit code #", vec![call("a", "s")], (9, 3));
        f.programs_sharing = 5;
        assert_eq!(classify(&f, Vec::new), FindingKind::Rule);
        assert!(!is_specific("exit code # "));
        assert_eq!(
            without_program("exit code # node: error while loading", "node"),
            without_program("ruby: error while loading", "Ruby")
        );
        assert_eq!(without_program("nodejs: x", "node"), "nodejs: x");
        assert_eq!(without_program("python#: error x", "python3"), "error x");
        assert!(is_specific("permission denied (publickey)"));
    }

    #[test]
    fn distinct_missing_operands_on_a_working_tool_are_a_guess() {
        let failing = vec![
            call("/home/u/.zshrc", "a"),
            call("/Applications/X.app/launcher", "b"),
            call("/srv/notes.md", "b"),
        ];
        let f = facts("file does not exist.", failing.clone(), (40, 3));
        assert_eq!(classify(&f, || vec!["/srv/other.md"]), FindingKind::Guess);
        // Mostly failing: the tool itself is the problem, a rule.
        let f = facts("file does not exist.", failing.clone(), (6, 3));
        assert_eq!(classify(&f, Vec::new), FindingKind::Rule);
        // The same operand failing again recurs: a rule.
        let mut again = failing.clone();
        again.push(call("/srv/NOTES.md", "c"));
        let f = facts("file does not exist.", again, (40, 4));
        assert_eq!(classify(&f, Vec::new), FindingKind::Rule);
        // Not about an operand: a rule.
        let f = facts(
            "file content exceeds maximum allowed tokens",
            failing,
            (40, 3),
        );
        assert_eq!(classify(&f, Vec::new), FindingKind::Rule);
        // No denominator: cannot tell, a rule.
        let mut f = facts("not found", vec![call("a/b", "a")], (0, 0));
        f.matched = None;
        assert_eq!(classify(&f, Vec::new), FindingKind::Rule);
    }

    #[test]
    fn http_404_on_different_urls_is_a_guess_but_a_missing_program_never_is() {
        let failing = vec![
            call("Invoke-WebRequest -Uri https://x.example/a.zip", "a"),
            call("Invoke-WebRequest -Uri https://x.example/b.zip", "a"),
            call("Invoke-WebRequest -Uri https://y.example/c", "b"),
        ];
        let f = facts("invoke-webrequest : #: not found", failing.clone(), (12, 3));
        assert_eq!(classify(&f, Vec::new), FindingKind::Guess);
        for sig in [
            "pytest: command not found",
            "modulenotfounderror: no module named 'S'",
            "'S' is not recognized as an internal or external command",
        ] {
            let f = facts(sig, failing.clone(), (12, 3));
            assert_eq!(classify(&f, Vec::new), FindingKind::Rule, "{sig}");
        }
    }

    #[test]
    fn one_file_has_one_canonical_spelling() {
        assert_eq!(
            canonical(r"C:\Users\Mischa\repo\README.md"),
            canonical("/c/Users/[USER]/repo/README.md")
        );
        assert_eq!(canonical("/home/a/Src/Main.rs"), "/home/~/src/main.rs");
        assert_ne!(canonical("/srv/a/x"), canonical("/srv/b/x"));
    }

    #[test]
    fn a_wrong_form_that_recurs_over_sessions_is_a_rule() {
        let failing = vec![
            call("/c/Users/u/repo/README.md", "a"),
            call("/c/Users/u/repo/LICENSE", "b"),
            call("/tmp/elsewhere", "b"),
        ];
        let successes = || vec![r"C:\Users\u\repo\README.md", r"C:\Users\u\repo\LICENSE"];
        let f = facts("file does not exist.", failing.clone(), (50, 3));
        assert_eq!(classify(&f, successes), FindingKind::Rule);
        // The same burst in one session is one episode: still a guess.
        let one: Vec<FailingCall<'_>> = failing.iter().map(|c| call(c.operand, "a")).collect();
        let f = facts("file does not exist.", one, (50, 3));
        assert_eq!(classify(&f, successes), FindingKind::Guess);
        // A file of the same name elsewhere is another file, not another spelling.
        let failing = vec![
            call(
                "/Users/u/Applications/Claude.app/Contents/MacOS/launcher",
                "a",
            ),
            call(
                "/Users/u/Applications/Other.app/Contents/MacOS/launcher",
                "b",
            ),
        ];
        let f = facts("file does not exist.", failing, (50, 2));
        assert_eq!(
            classify(&f, || vec![
                "/Users/u/Applications/Tmux.app/Contents/MacOS/launcher"
            ]),
            FindingKind::Guess
        );
        // Wrong case counts as another spelling.
        let failing = vec![call("src/Main.rs", "a"), call("lib/Util.rs", "b")];
        let f = facts("no such file or directory", failing, (30, 2));
        assert_eq!(
            classify(&f, || vec!["src/main.rs", "lib/util.rs"]),
            FindingKind::Rule
        );
    }

    #[test]
    fn kinds_have_a_label_and_say_why_they_are_not_candidates() {
        assert_eq!(FindingKind::Rule.label(), "rule");
        assert_eq!(FindingKind::Environment(NETWORK).label(), "environment");
        assert_eq!(FindingKind::Guess.label(), "guess");
        assert_eq!(FindingKind::Rule.why(), "");
        assert_eq!(FindingKind::Environment(SHARED).why(), SHARED);
        assert!(FindingKind::Guess.why().contains("the agent guessing"));
        assert_eq!(
            serde_json::to_value(FindingKind::Guess).unwrap(),
            serde_json::json!("guess")
        );
    }

    #[test]
    fn a_specific_signature_has_eight_letters_besides_the_exit_status() {
        assert!(is_specific("exit code # abcdefgh"));
        assert!(!is_specific("exit code # abcdefg #"));
        assert!(is_specific("abcd-efgh"));
        assert!(!is_specific("abc 123 def"));
    }

    #[test]
    fn operands_compare_without_case_or_spacing_and_relative_paths_stay_relative() {
        assert_eq!(
            normalised("  cat   /srv/A.md "),
            normalised("cat /srv/a.md")
        );
        assert_eq!(canonical("src/Main.rs"), "src/main.rs");
        assert_eq!(canonical("d:x"), "/dx");
        // Two words naming the same file twice over are one operand.
        let failing = vec![call("cat  /srv/a.md", "a"), call("cat /srv/A.md", "b")];
        let f = facts("no such file or directory", failing, (40, 2));
        assert_eq!(classify(&f, Vec::new), FindingKind::Rule);
    }

    #[test]
    fn a_wrong_form_needs_half_of_the_failures() {
        let successes = || vec!["/srv/repo/a.md", "/srv/repo/b.md"];
        let twins = [call("/SRV/repo/a.md", "a"), call("/srv/REPO/b.md", "b")];
        let others = |n: usize| (0..n).map(|i| call(["/x/1", "/x/2", "/x/3"][i], "c"));
        let half: Vec<_> = twins.iter().cloned().chain(others(2)).collect();
        let f = facts("no such file or directory", half, (90, 4));
        assert_eq!(classify(&f, successes), FindingKind::Rule);
        let under: Vec<_> = twins.iter().cloned().chain(others(3)).collect();
        let f = facts("no such file or directory", under, (90, 5));
        assert_eq!(classify(&f, successes), FindingKind::Guess);
        // Three of six: half again (a count, not an offset: 3 + 2 would be under 6).
        let successes = || vec!["/srv/repo/a.md", "/srv/repo/b.md", "/srv/repo/c.md"];
        let three = [
            call("/SRV/repo/a.md", "a"),
            call("/srv/REPO/b.md", "b"),
            call("/srv/repo/C.md", "b"),
        ];
        let half: Vec<_> = three.iter().cloned().chain(others(3)).collect();
        let f = facts("no such file or directory", half, (90, 6));
        assert_eq!(classify(&f, successes), FindingKind::Rule);
    }
}
