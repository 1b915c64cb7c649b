//! Why a file tool failed (Read, Edit, Write and the other hosts' equivalents): a tool's
//! failures split by cause before anything is proposed, so a candidate is keyed on the
//! state or the operand that tells its failures apart, never on "the tool".
//!
//! A file tool's cluster (one tool, one error signature; see `cluster`) gets a [`Cause`]
//! from what its errors say, when at least half of them say the same thing:
//! - **directory** (`EISDIR`, "is a directory"): the rule fires only where the path is a
//!   directory (`when: {path_is_directory: …}`), answered by `stat()` live and from the
//!   history's own evidence in replay;
//! - **not read** ("has not been read yet"): one cause across the file-writing tools that
//!   name their path in the same field (an Edit's and a Write's are one lesson: `tool:
//!   "{Edit,Write}"`); the rule fires only on a file that existed before the call and the
//!   session has not seen (`when: {not_read_in_session: …}`), so a Write creating a file
//!   is not one;
//! - **changed since read** ("modified since read", "unexpectedly modified"): one cause
//!   across the file-writing tools like "not read"; the rule fires only on a file written
//!   after the session last saw it — by a shell command of the session, or (live) a
//!   modification time newer than that (`when: {changed_since_read: …}`);
//! - **missing path** ("does not exist"): split by path, one file's spellings as one path
//!   (`C:\p\A.md`, `C:/p/A.md`, Git-Bash's `/c/p/A.md`; the rule's pattern matches each). A path that failed in
//!   [`MIN_SESSIONS`] sessions or more is a wrong path the agent is sent to again and
//!   again — a rule on that path (`any` on the path field) while it is missing
//!   (`when: {path_missing: …}`); the rest, a different path each time, is left to the
//!   outcome model (`finding`): the agent guessing, unless a wrong spelling of paths the
//!   tool reads under another recurs; guesses sharing a form the host cannot use (`/c/…`,
//!   `~`, `\`, relative) are keyed on the form (`path_form`);
//! - **no match** ("string to replace not found", "failed to find expected lines"): a
//!   lesson. Whether an edit's old text is in the file is the tool's own check, which
//!   nothing the guard can check before the call repeats, so it is reported with its
//!   evidence (`generated.not_rules`), never proposed as a tool-wide rule.
//!
//! A learned condition is kept only when the replay, as the guard would enforce it, shows
//! it separates: it fires on at least half of its own failures, and at least half of what
//! it fires on failed (`tool_verdict`). Otherwise the cluster is a lesson too. A tool-wide
//! candidate of a file tool left without a cause is kept only while at least half of the
//! failures it fires on are its own and, when keyed on nothing at all, while no other
//! candidate of its tool exists (`tool_verdict`: it would fire on all of that one's
//! failures); otherwise it is reported as a lesson (no field or state separates them).
//!
//! Not-read, changed-since-read and recurring-path clusters need two failures in two
//! sessions, not
//! `--min-count`: the host's own error names the state, and the condition re-checks it
//! exactly on every call, so a second session is the recurrence.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::json;

use super::calls::Failure;
use super::cluster::{Cluster, Kind};
use super::path_form::{self, Form};
use super::pattern::Proposal;
use super::spellings;
use crate::rules::condition::file_state;

/// Fewest sessions a recurring path, or a not-read lesson proposed below `--min-count`,
/// needs.
pub(crate) const MIN_SESSIONS: usize = 2;

/// Does `tool`'s input name the file its failure is about? The tools whose summary is a path
/// ([`crate::rules::condition::FILE_TOOLS`]), and the notebook and patch editors.
pub(crate) fn is_file_tool(tool: &str) -> bool {
    crate::rules::condition::FILE_TOOLS.contains(&tool)
        || matches!(tool, "NotebookEdit" | "apply_patch")
}

/// Why a file tool's cluster failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Cause {
    /// The path was a directory.
    Directory,
    /// The file was not Read earlier in the session.
    NotRead,
    /// The file changed since the session's Read of it.
    Stale,
    /// The edit's old text did not match the file exactly once.
    NoMatch,
    /// This path does not exist, and failed in two or more sessions.
    RecurringPath(String),
    /// Missing paths written in one form the host cannot use (`path_form`).
    Form(Form),
    /// A missing path that did not recur across sessions (the outcome model judges them).
    Guessed,
}

/// Phrases (lowercase) of an edit whose old text did not match (Claude Code "String to
/// replace not found in file", "Found N matches of the string to replace, but `replace_all`
/// is false"; Gemini CLI "could not find the string to replace", "Expected 1 occurrence but
/// found N"; Codex `apply_patch` "Failed to find expected lines", "failed to find context").
const NO_MATCH: &[&str] = &[
    "string to replace not found",
    "old_string not found",
    "string not found",
    "could not find the string to replace",
    "matches of the string to replace",
    "occurrence but found",
    "failed to find expected lines",
    "failed to find context",
    "no match found",
];

/// Phrases (lowercase) of an error saying the path does not exist.
const MISSING: &[&str] = &[
    "does not exist",
    "no such file",
    "file not found",
    "enoent",
    "cannot find the path",
];

/// One failure's cause, from its error alone (a missing path before its path is looked at).
fn said(error: &str) -> Option<Cause> {
    let e = error.to_lowercase();
    let any = |list: &[&str]| list.iter().any(|p| e.contains(p));
    if crate::rules::replay::says_directory(&e) {
        Some(Cause::Directory)
    } else if file_state::says_not_read(&e) {
        Some(Cause::NotRead)
    } else if file_state::says_changed(&e) {
        Some(Cause::Stale)
    } else if any(NO_MATCH) {
        Some(Cause::NoMatch)
    } else if any(MISSING) {
        Some(Cause::Guessed)
    } else {
        None
    }
}

/// The input field a file tool names its path in (Copilot CLI's tools: `path`).
pub(crate) fn path_field(tool: &str) -> &'static str {
    match tool {
        "view" | "edit" | "create" => "path",
        _ => "file_path",
    }
}

/// What derive does with one cluster: its cause, if it is a file tool's, and the fewest
/// failures it needs to be proposed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Plan {
    /// The cause (`None`: not a file tool's cluster, or nothing its errors agree on).
    pub cause: Option<Cause>,
    /// Fewest failures it needs.
    pub floor: u64,
}

/// The clusters with every file tool's clusters of one cause merged into one (the
/// largest names it: an error that quotes the path or the text not found makes a signature
/// per call, and the cause is the same) and its missing-path cluster then split by path,
/// each with its plan, largest first (as `cluster::build` orders them).
pub(crate) fn split(
    clusters: Vec<Cluster>,
    failures: &[Failure],
    min_count: u64,
) -> Vec<(Cluster, Plan)> {
    let mut out = Vec::with_capacity(clusters.len());
    let mut caused: Vec<(Cluster, Cause)> = Vec::new();
    for c in clusters {
        let cause = (c.kind == Kind::ToolWide && is_file_tool(&c.group.key))
            .then(|| agreed(&c, failures))
            .flatten();
        let Some(cause) = cause else {
            out.push((
                c,
                Plan {
                    cause: None,
                    floor: min_count,
                },
            ));
            continue;
        };
        match caused.iter_mut().find(|(m, k)| {
            *k == cause
                && (m.group == c.group
                    || (matches!(cause, Cause::NotRead | Cause::Stale)
                        && path_field(&m.group.key) == path_field(&c.group.key)))
        }) {
            Some((m, _)) => {
                m.failures.extend(&c.failures);
                m.failures.sort_unstable();
                for sig in c.signatures {
                    if !m.signatures.contains(&sig) {
                        m.signatures.push(sig);
                    }
                }
            }
            None => caused.push((c, cause)),
        }
    }
    for (mut c, cause) in caused {
        if matches!(cause, Cause::NotRead | Cause::Stale) {
            c.group.glob = tools_glob(&c, failures);
        }
        let floor = match cause {
            Cause::Guessed => {
                out.extend(by_path(&c, failures, min_count));
                continue;
            }
            Cause::NotRead | Cause::Stale if sessions(&c, failures) >= MIN_SESSIONS => {
                min_count.min(2)
            }
            _ => min_count,
        };
        out.push((
            c,
            Plan {
                cause: Some(cause),
                floor,
            },
        ));
    }
    out.sort_by_cached_key(|(c, _)| (std::cmp::Reverse(c.count()), c.id()));
    out
}

/// The tool glob of a cluster merged across tools: its one tool, or a brace group of them
/// (`{Edit,Write}`).
fn tools_glob(c: &Cluster, failures: &[Failure]) -> String {
    let tools: BTreeSet<&str> = c
        .failures
        .iter()
        .map(|&f| failures[f].tool.as_str())
        .collect();
    match tools.len() {
        0 | 1 => c.group.glob.clone(),
        _ => format!("{{{}}}", tools.into_iter().collect::<Vec<_>>().join(",")),
    }
}

/// Distinct sessions of a cluster's failures.
fn sessions(c: &Cluster, failures: &[Failure]) -> usize {
    c.failures
        .iter()
        .filter_map(|&f| failures[f].session.as_deref())
        .collect::<BTreeSet<_>>()
        .len()
}

/// The cause at least half of a cluster's failures say.
fn agreed(c: &Cluster, failures: &[Failure]) -> Option<Cause> {
    let mut counts: Vec<(Cause, usize)> = Vec::new();
    for &f in &c.failures {
        if let Some(cause) = said(&failures[f].error) {
            match counts.iter_mut().find(|(k, _)| *k == cause) {
                Some((_, n)) => *n += 1,
                None => counts.push((cause, 1)),
            }
        }
    }
    counts
        .into_iter()
        .max_by_key(|(_, n)| *n)
        .filter(|(_, n)| 2 * n >= c.count())
        .map(|(k, _)| k)
}

/// A missing-path cluster split: one cluster per path that failed in [`MIN_SESSIONS`]
/// sessions or more (its shape is the path), and the rest (the guesses) as the cluster it
/// was, so its id does not move.
fn by_path(c: &Cluster, failures: &[Failure], min_count: u64) -> Vec<(Cluster, Plan)> {
    // By path key: the failures, their sessions, their spellings.
    type Group<'f> = (Vec<usize>, BTreeSet<&'f str>, BTreeSet<String>);
    let mut by: BTreeMap<String, Group> = BTreeMap::new();
    for &f in &c.failures {
        let Some(path) = crate::rules::condition::read_path(&failures[f].command) else {
            continue;
        };
        let e = by.entry(spellings::key(&path)).or_default();
        e.0.push(f);
        if let Some(s) = failures[f].session.as_deref() {
            e.1.insert(s);
        }
        e.2.insert(path);
    }
    let mut out = Vec::new();
    let mut rest = c.clone();
    for (key, (list, sessions, spellings)) in by {
        if sessions.len() < MIN_SESSIONS {
            continue;
        }
        // One spelling is kept as it is; several are named by their key.
        let path = match spellings.len() {
            1 => spellings.into_iter().next().unwrap_or(key),
            _ => key,
        };
        rest.failures.retain(|f| !list.contains(f));
        let mut one = c.clone();
        one.shape.clone_from(&path);
        one.failures = list;
        out.push((
            one,
            Plan {
                cause: Some(Cause::RecurringPath(path)),
                floor: min_count.min(2),
            },
        ));
    }
    // `tokens` is parallel to `failures` for program clusters only; a tool-wide one has none.
    rest.tokens.clear();
    // Guesses sharing a form, then the rest as the guesses they are.
    let (forms, rest) = path_form::split(rest, failures, min_count, MIN_SESSIONS);
    let forms = forms.into_iter().map(|(c, form)| (c, Cause::Form(form)));
    for (one, cause) in forms.chain(rest.map(|c| (c, Cause::Guessed))) {
        let floor = min_count;
        out.push((
            one,
            Plan {
                cause: Some(cause),
                floor,
            },
        ));
    }
    out
}

/// The proposal for a file tool's cluster of this cause: the tool-wide proposal `p`,
/// conditioned on the state (or keyed on the path) that tells its failures apart. Lessons
/// and guesses keep the tool-wide proposal, for their evidence only.
pub(crate) fn propose(cause: &Cause, tool: &str, mut p: Proposal) -> Proposal {
    let field = path_field(tool);
    match cause {
        Cause::Directory => {
            p.kind = "path-is-directory";
            p.when = Some(json!({"path_is_directory": {"field": field}}));
        }
        Cause::NotRead => {
            p.kind = "not-read-in-session";
            p.when = Some(json!({"not_read_in_session": field}));
        }
        Cause::Stale => {
            p.kind = "changed-since-read";
            p.when = Some(json!({"changed_since_read": field}));
        }
        Cause::RecurringPath(path) => {
            p.kind = "recurring-path";
            p.field = Some(field);
            p.any = vec![spellings::pattern(path)];
            p.when = Some(json!({"path_missing": {"field": field}}));
        }
        Cause::Form(form) => {
            p.kind = form.kind();
            p.field = Some(field);
            p.any = vec![form.pattern().to_string()];
        }
        Cause::NoMatch | Cause::Guessed => return p,
    }
    p.unless.clear();
    p.field_unless = None;
    p
}

/// The draft message of a candidate keyed on a file tool's cause (`None`: not one): what
/// the failing calls had in common and what to do instead, for the reviewer to refine.
pub(crate) fn message(
    p: &Proposal,
    tool: &str,
    fails: usize,
    sessions: u64,
    basis: &str,
    ceiling: crate::rules::Action,
) -> Option<String> {
    let (what, instead) = match p.kind {
        "path-is-directory" => (
            format!("{tool} of a path that is a directory"),
            "list the directory (a listing or search tool) instead of reading it as a file",
        ),
        "not-read-in-session" => (
            format!("{tool} of a file this session has not Read"),
            "Read the file first: the host refuses to write a file it has not seen",
        ),
        "changed-since-read" => (
            format!("{tool} of a file changed since this session last Read it"),
            "Read the file again before writing it, and do not resend the same edit after this error",
        ),
        "recurring-path" => (
            format!("{tool} of a path that does not exist, in {sessions} session(s)"),
            "the path the agent keeps being sent to is wrong: fix the instructions that name it, or name the right one here",
        ),
        kind => path_form::what(kind, tool)?,
    };
    Some(format!(
        "DRAFT — {what} failed {fails}x ({basis}). {instead}. Refine this message, then promote monitor -> at most {ceiling}."
    ))
}

/// Is this proposal conditioned on a state the host's own error named, proposed from
/// [`MIN_SESSIONS`] failures (not read in the session, a recurring missing path)?
pub(crate) fn host_stated(p: &Proposal) -> bool {
    matches!(
        p.kind,
        "not-read-in-session" | "changed-since-read" | "recurring-path"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::derive::cluster::ToolGroup;

    fn failure(tool: &str, command: &str, error: &str, session: &str) -> Failure {
        Failure {
            tool: tool.into(),
            command: command.into(),
            error: error.into(),
            signature: String::new(),
            session: Some(session.into()),
            started_ms: 0,
            source: "trace".into(),
            over_limit: false,
        }
    }

    fn cluster(tool: &str, failures: Vec<usize>) -> Cluster {
        Cluster {
            group: ToolGroup::of(tool),
            shape: tool.into(),
            signature: "sig".into(),
            kind: Kind::ToolWide,
            failures,
            tokens: vec![],
            signatures: vec!["sig".into()],
        }
    }

    #[test]
    fn each_hosts_words_name_one_cause() {
        for (error, cause) in [
            (
                "EISDIR: illegal operation on a directory, read",
                Some(Cause::Directory),
            ),
            (
                "File has not been read yet. Read it first before writing to it.",
                Some(Cause::NotRead),
            ),
            (
                "File has been modified since read, either by the user or by a linter.",
                Some(Cause::Stale),
            ),
            (
                "File has been unexpectedly modified. Read it again",
                Some(Cause::Stale),
            ),
            (
                "String to replace not found in file.\nString: foo",
                Some(Cause::NoMatch),
            ),
            (
                "Failed to edit, could not find the string to replace.",
                Some(Cause::NoMatch),
            ),
            (
                "Failed to find expected lines in src/a.rs",
                Some(Cause::NoMatch),
            ),
            (
                "File does not exist. Current working directory: /w",
                Some(Cause::Guessed),
            ),
            ("ENOENT: no such file or directory", Some(Cause::Guessed)),
            ("File content exceeds maximum allowed size", None),
        ] {
            assert_eq!(said(error), cause, "{error}");
        }
        assert_eq!(path_field("view"), "path");
        assert_eq!(path_field("Read"), "file_path");
    }

    #[test]
    fn a_missing_path_recurring_across_sessions_is_split_from_the_guesses() {
        let missing = "File does not exist.";
        let fs = vec![
            failure("Read", "/proj/STATUS.md", missing, "s1"),
            failure("Read", "/proj/STATUS.md", missing, "s2"),
            failure("Read", "/proj/STATUS.md", missing, "s3"),
            failure("Read", "/proj/a.md", missing, "s1"),
            failure("Read", "/proj/b.md", missing, "s2"),
            // The same path twice in one session is not a recurrence across sessions.
            failure("Read", "/proj/c.md", missing, "s1"),
            failure("Read", "/proj/c.md", missing, "s1"),
        ];
        let out = split(vec![cluster("Read", (0..7).collect())], &fs, 3);
        assert_eq!(out.len(), 2);
        let (guesses, plan) = &out[0];
        assert_eq!(guesses.failures, [3, 4, 5, 6]);
        assert_eq!(guesses.shape, "Read", "the rest keeps the cluster's id");
        assert_eq!(plan.cause, Some(Cause::Guessed));
        let (path, plan) = &out[1];
        assert_eq!(path.failures, [0, 1, 2]);
        assert_eq!(
            (plan.cause.clone(), plan.floor),
            (Some(Cause::RecurringPath("/proj/STATUS.md".into())), 2)
        );
        assert_ne!(path.id(), guesses.id());
        // Two sessions are enough; one is not.
        let out = split(vec![cluster("Read", vec![0, 1])], &fs, 3);
        assert_eq!(out.len(), 1);
        assert!(matches!(out[0].1.cause, Some(Cause::RecurringPath(_))));
        let out = split(vec![cluster("Read", vec![5, 6])], &fs, 3);
        assert_eq!(out[0].1.cause, Some(Cause::Guessed));
        // A failure without a stored path stays with the rest.
        let mut fs = fs;
        fs.push(failure("Read", "{}", missing, "s2"));
        let out = split(vec![cluster("Read", vec![0, 1, 3, 7])], &fs, 3);
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].0.failures, [0, 1]);
        assert_eq!(out[1].0.failures, [3, 7]);
        assert_eq!(out[1].1.cause, Some(Cause::Guessed));
    }

    #[test]
    fn spellings_of_one_missing_file_recur_together() {
        let missing = "File does not exist.";
        let fs = vec![
            failure("Read", r"C:\p\A.md", missing, "s1"),
            failure("Read", "C:/p/A.md", missing, "s2"),
            failure("Read", "/c/p/A.md", missing, "s2"),
            failure("Read", "C:/p/B.md", missing, "s1"),
            failure("Read", "C:/p/B.md", missing, "s2"),
        ];
        let out = split(vec![cluster("Read", (0..5).collect())], &fs, 3);
        let causes: Vec<(Vec<usize>, Option<Cause>)> = out
            .iter()
            .map(|(c, p)| (c.failures.clone(), p.cause.clone()))
            .collect();
        assert_eq!(
            causes,
            [
                (
                    vec![0, 1, 2],
                    Some(Cause::RecurringPath("c:/p/A.md".into()))
                ),
                (vec![3, 4], Some(Cause::RecurringPath("C:/p/B.md".into()))),
            ]
        );
    }

    #[test]
    fn a_tools_clusters_of_one_cause_are_merged_whatever_their_signatures() {
        let fs = vec![
            failure("Read", "/a/x", "File not found: /a/x", "s1"),
            failure("Read", "/a/x", "File not found: /a/x ", "s2"),
            failure(
                "Read",
                "/b",
                "EISDIR: illegal operation on a directory",
                "s1",
            ),
            failure("Read", "/c", "Path is a directory: /c", "s2"),
            failure("Write", "/d", "Path is a directory: /d", "s2"),
            failure("Read", "/e", "File not found: /e", "s3"),
        ];
        let mut a = cluster("Read", vec![0, 5]);
        a.signature = "file not found: a".into();
        let mut b = cluster("Read", vec![1]);
        b.signature = "file not found: b".into();
        b.signatures = vec!["other".into()];
        let dir1 = cluster("Read", vec![2]);
        let mut dir2 = cluster("Read", vec![3]);
        dir2.signature = "path is a directory".into();
        let write = cluster("Write", vec![4]);
        let out = split(vec![a, dir1, b, dir2, write], &fs, 1);
        let summary: Vec<(String, Vec<usize>, Option<Cause>)> = out
            .iter()
            .map(|(c, p)| (c.group.key.clone(), c.failures.clone(), p.cause.clone()))
            .collect();
        assert!(
            summary.contains(&("Read".into(), vec![2, 3], Some(Cause::Directory))),
            "{summary:?}"
        );
        assert!(summary.contains(&("Write".into(), vec![4], Some(Cause::Directory))));
        // The missing paths of two signatures, merged, then split by path: /a/x recurs.
        assert!(summary.contains(&(
            "Read".into(),
            vec![0, 1],
            Some(Cause::RecurringPath("/a/x".into()))
        )));
        assert!(summary.contains(&("Read".into(), vec![5], Some(Cause::Guessed))));
        assert_eq!(out.len(), 4);
        let merged = out.iter().find(|(c, _)| c.failures == [0, 1]).unwrap();
        assert_eq!(merged.0.signatures, ["sig", "other"]);
    }

    #[test]
    fn not_read_needs_two_sessions_below_min_count_and_other_tools_are_untouched() {
        let nr = "File has not been read yet. Read it first before writing to it.";
        let fs = vec![
            failure("Edit", "/a", nr, "s1"),
            failure("Edit", "/b", nr, "s2"),
            failure("Edit", "/c", nr, "s1"),
            failure("Bash", "x", nr, "s1"),
            failure("Edit", "/d", "boom", "s1"),
            failure("Edit", "/e", "boom", "s1"),
            failure("Edit", "/f", nr, "s1"),
        ];
        let plan = |c: Cluster| split(vec![c], &fs, 3).remove(0).1;
        assert_eq!(
            plan(cluster("Edit", vec![0, 1])),
            Plan {
                cause: Some(Cause::NotRead),
                floor: 2
            }
        );
        assert_eq!(plan(cluster("Edit", vec![0, 2])).floor, 3, "one session");
        assert_eq!(plan(cluster("Edit", vec![0, 1])).floor, 2);
        assert_eq!(
            split(vec![cluster("Edit", vec![0, 1])], &fs, 1)[0].1.floor,
            1
        );
        // Half the failures saying it is enough; fewer is not.
        assert_eq!(
            plan(cluster("Edit", vec![4, 6])).cause,
            Some(Cause::NotRead)
        );
        assert_eq!(plan(cluster("Edit", vec![4, 5, 6])).cause, None);
        // Not a file tool, or not tool-wide: no cause.
        assert_eq!(plan(cluster("Bash", vec![3])).cause, None);
        assert_eq!(plan(cluster("WebFetch", vec![0, 1])).cause, None);
        let mut prog = cluster("Edit", vec![0, 1]);
        prog.kind = Kind::NoProgram;
        assert_eq!(plan(prog).cause, None);
    }

    #[test]
    fn a_changed_file_is_one_cause_across_the_tools_and_two_sessions_lower_its_floor() {
        let ch = "File has been modified since read, either by the user or by a linter.";
        let fs = vec![
            failure("Edit", "/a", ch, "s1"),
            failure("Write", "/b", ch, "s2"),
            failure("Edit", "/c", ch, "s1"),
        ];
        let out = split(
            vec![cluster("Edit", vec![0]), cluster("Write", vec![1])],
            &fs,
            3,
        );
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].0.group.glob, "{Edit,Write}");
        assert_eq!(out[0].0.failures, [0, 1]);
        assert_eq!(out[0].1.cause, Some(Cause::Stale));
        assert_eq!(out[0].1.floor, 2);
        let one = split(vec![cluster("Edit", vec![0, 2])], &fs, 3);
        assert_eq!((one[0].0.group.glob.as_str(), one[0].1.floor), ("Edit", 3));
    }

    #[test]
    fn not_read_is_one_cause_across_the_tools_naming_the_path_in_one_field() {
        type Row = (String, String, Vec<usize>, Option<Cause>, u64);
        let nr = "File has not been read yet. Read it first before writing to it.";
        let fs = vec![
            failure("Edit", "/a", nr, "s1"),
            failure("Write", "/b", nr, "s2"),
            failure("edit", "/c", nr, "s3"),
            failure("Write", "/d", "Path is a directory: /d", "s2"),
            failure("Edit", "/e", nr, "s1"),
        ];
        let out = split(
            vec![
                cluster("Edit", vec![0, 4]),
                cluster("Write", vec![1]),
                cluster("edit", vec![2]),
                cluster("Write", vec![3]),
            ],
            &fs,
            3,
        );
        let summary: Vec<Row> = out
            .iter()
            .map(|(c, p)| {
                (
                    c.group.key.clone(),
                    c.group.glob.clone(),
                    c.failures.clone(),
                    p.cause.clone(),
                    p.floor,
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                (
                    "Edit".into(),
                    "{Edit,Write}".into(),
                    vec![0, 1, 4],
                    Some(Cause::NotRead),
                    2
                ),
                // Copilot's `edit` names its path in `path`: a rule of its own.
                (
                    "edit".into(),
                    "edit".into(),
                    vec![2],
                    Some(Cause::NotRead),
                    3
                ),
                (
                    "Write".into(),
                    "Write".into(),
                    vec![3],
                    Some(Cause::Directory),
                    3
                ),
            ]
        );
        // One tool keeps its own glob.
        let out = split(vec![cluster("Edit", vec![0, 4])], &fs, 3);
        assert_eq!(out[0].0.group.glob, "Edit");
    }

    fn tool_wide() -> crate::derive::pattern::Proposal {
        crate::derive::pattern::Proposal::tool_wide_fixture()
    }

    #[test]
    fn each_cause_proposes_its_condition() {
        let p = propose(&Cause::Directory, "Read", tool_wide());
        assert_eq!(p.kind, "path-is-directory");
        assert_eq!(
            p.when,
            Some(json!({"path_is_directory": {"field": "file_path"}}))
        );
        assert!(p.unless.is_empty() && p.any.is_empty());
        let p = propose(&Cause::NotRead, "edit", tool_wide());
        assert_eq!(p.when, Some(json!({"not_read_in_session": "path"})));
        let p = propose(&Cause::Stale, "Edit", tool_wide());
        assert_eq!(p.when, Some(json!({"changed_since_read": "file_path"})));
        assert_eq!(p.kind, "changed-since-read");
        let p = propose(&Cause::RecurringPath("/p/S.md".into()), "Read", tool_wide());
        assert_eq!(p.any, [r"^/p/S\.md$"]);
        assert_eq!(p.field, Some("file_path"));
        assert_eq!(
            p.when,
            Some(json!({"path_missing": {"field": "file_path"}}))
        );
        for c in [Cause::NoMatch, Cause::Guessed] {
            assert_eq!(propose(&c, "Edit", tool_wide()), tool_wide());
        }
    }

    #[test]
    fn only_the_states_the_host_named_lower_the_attempt_floor() {
        let stated = |c: &Cause| host_stated(&propose(c, "Edit", tool_wide()));
        assert!(stated(&Cause::NotRead));
        assert!(stated(&Cause::Stale));
        assert!(stated(&Cause::RecurringPath("/p".into())));
        // A directory is learned from the calls, not named by the host's refusal; a
        // tool-wide cluster names nothing.
        assert!(!stated(&Cause::Directory));
        assert!(!host_stated(&tool_wide()));
    }

    #[test]
    fn a_keyed_candidate_says_what_its_failures_share() {
        let m = |cause: &Cause| {
            message(
                &propose(cause, "Read", tool_wide()),
                "Read",
                3,
                2,
                "basis",
                crate::rules::Action::Nudge,
            )
        };
        let dir = m(&Cause::Directory).unwrap();
        assert!(
            dir.starts_with(
                "DRAFT — Read of a path that is a directory failed 3x (basis). list the directory"
            ),
            "{dir}"
        );
        assert!(dir.ends_with("at most nudge."), "{dir}");
        assert!(m(&Cause::NotRead).unwrap().contains("has not Read"));
        assert!(
            m(&Cause::RecurringPath("/x".into()))
                .unwrap()
                .contains("does not exist, in 2 session(s)")
        );
        assert!(
            m(&Cause::Stale)
                .unwrap()
                .contains("changed since this session")
        );
        assert_eq!(m(&Cause::NoMatch), None);
    }
}
