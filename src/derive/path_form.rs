//! A path's written form as the cause of a file tool's failures: a Git-Bash drive
//! (`/c/…`), an unexpanded home (`~/…`), a backslash, a relative path. A host that cannot
//! use a form answers "does not exist" for every path written in it, files that exist
//! included, so the failures differ in file and share the form. The missing-path failures
//! no recurring path claimed (`tool_causes`) are split by form; a form shared by
//! `--min-count` of them in two sessions or more is a candidate keyed on the form (`any` on the path field), and
//! the replay (`tool_verdict`) keeps it only where the tool's successes rarely use it.
//!
//! Guarantees: each failure is counted under one form at most, the first of
//! [`Form::ALL`] its path has; a path of no form (an absolute path spelled the host's way)
//! stays a guess; each form's pattern matches exactly the paths [`Form::of`] says have it.

use std::collections::BTreeSet;

use super::calls::Failure;
use super::cluster::Cluster;
use super::pattern::Proposal;

/// A way of writing a path some hosts cannot use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Form {
    /// Git-Bash's (MSYS) drive prefix, `/c/…`: a native Windows tool has no such path.
    GitBashDrive,
    /// `~` left for a shell to expand; a file tool does not.
    Home,
    /// A backslash separator, where the tool reads `/` paths.
    Backslash,
    /// Relative, where the tool reads absolute paths.
    Relative,
}

impl Form {
    /// Every form, most specific first (a failure is counted under the first it has).
    pub(crate) const ALL: [Form; 4] = [
        Form::GitBashDrive,
        Form::Home,
        Form::Backslash,
        Form::Relative,
    ];

    /// Does `path` (trimmed) have this form?
    pub(crate) fn of(self, path: &str) -> bool {
        let p = path.trim();
        let b = p.as_bytes();
        match self {
            Form::GitBashDrive => {
                b.len() >= 3 && b[0] == b'/' && b[1].is_ascii_alphabetic() && b[2] == b'/'
            }
            Form::Home => b.first() == Some(&b'~'),
            Form::Backslash => b.contains(&b'\\'),
            Form::Relative => {
                let drive = b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':';
                !(b.is_empty() || drive || matches!(b[0], b'/' | b'\\' | b'~'))
            }
        }
    }

    /// The pattern a rule on the path field keys on: what [`Form::of`] checks, as a regex a
    /// reviewer reads.
    pub(crate) fn pattern(self) -> &'static str {
        match self {
            Form::GitBashDrive => r"^\s*/[A-Za-z]/",
            Form::Home => r"^\s*~",
            Form::Backslash => r"\\",
            Form::Relative => r"^\s*(?:[^\s/\\~A-Za-z]|[A-Za-z](?:[^:]|$))",
        }
    }

    /// The form in words, for the draft message.
    pub(crate) fn words(self) -> &'static str {
        match self {
            Form::GitBashDrive => "a Git-Bash drive path (/c/…)",
            Form::Home => "an unexpanded ~ path",
            Form::Backslash => "a backslash path",
            Form::Relative => "a relative path",
        }
    }

    /// The proposal's kind.
    pub(crate) fn kind(self) -> &'static str {
        match self {
            Form::GitBashDrive => "path-form-git-bash-drive",
            Form::Home => "path-form-home",
            Form::Backslash => "path-form-backslash",
            Form::Relative => "path-form-relative",
        }
    }
}

/// Is this proposal keyed on a path form?
pub(crate) fn keyed(p: &Proposal) -> bool {
    Form::ALL.iter().any(|f| f.kind() == p.kind)
}

/// What a candidate of this proposal `kind` had in common and what to do instead, for
/// the draft message (`None`: not a form's kind).
pub(crate) fn what(kind: &str, tool: &str) -> Option<(String, &'static str)> {
    let form = Form::ALL.into_iter().find(|f| f.kind() == kind)?;
    Some((
        format!("{tool} of {}", form.words()),
        "the host cannot use paths written this way, even for files that exist: write the path the way the tool's successful calls do",
    ))
}

/// The guesses `rest` split by form: one cluster per form at least `min_count` of its
/// failures share in `min_sessions` sessions or more (its shape names the form; one
/// session's burst of a wrong form, corrected at once, is the agent guessing), then what is
/// left of `rest`, if anything.
pub(crate) fn split(
    mut rest: Cluster,
    failures: &[Failure],
    min_count: u64,
    min_sessions: usize,
) -> (Vec<(Cluster, Form)>, Option<Cluster>) {
    let mut out = Vec::new();
    for form in Form::ALL {
        let list: Vec<usize> = rest
            .failures
            .iter()
            .copied()
            .filter(|&f| {
                crate::rules::condition::read_path(&failures[f].command)
                    .is_some_and(|p| form.of(&p))
            })
            .collect();
        let sessions: BTreeSet<&str> = list
            .iter()
            .filter_map(|&f| failures[f].session.as_deref())
            .collect();
        if (list.len() as u64) < min_count || sessions.len() < min_sessions {
            continue;
        }
        rest.failures.retain(|f| !list.contains(f));
        let mut one = rest.clone();
        one.shape = form.kind().to_string();
        one.failures = list;
        out.push((one, form));
    }
    (out, (!rest.failures.is_empty()).then_some(rest))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::derive::cluster::{Kind, ToolGroup};

    #[test]
    fn each_form_is_what_its_pattern_matches() {
        let cases: &[(&str, Option<Form>)] = &[
            ("/c/Users/x/a.md", Some(Form::GitBashDrive)),
            ("/C/a", Some(Form::GitBashDrive)),
            (" /d/a", Some(Form::GitBashDrive)),
            ("/c", None),
            ("/cd/a", None),
            ("/1/a", None),
            ("~/a.md", Some(Form::Home)),
            ("~", Some(Form::Home)),
            (r"C:\Users\x\a.md", Some(Form::Backslash)),
            (r"/c/x\a", Some(Form::GitBashDrive)),
            (r"~\a", Some(Form::Home)),
            ("src/a.rs", Some(Form::Relative)),
            ("a", Some(Form::Relative)),
            ("./a", Some(Form::Relative)),
            ("1:/a", Some(Form::Relative)),
            (r"src\a.rs", Some(Form::Backslash)),
            ("C:/Users/x/a.md", None),
            ("c:", None),
            ("/repo/a.md", None),
            ("", None),
        ];
        for (path, want) in cases {
            let got = Form::ALL.into_iter().find(|f| f.of(path));
            assert_eq!(got, *want, "{path:?}");
            for form in Form::ALL {
                let re = regex::Regex::new(form.pattern()).unwrap();
                assert_eq!(re.is_match(path), form.of(path), "{form:?} {path:?}");
            }
        }
    }

    #[test]
    fn every_form_has_its_own_kind_and_words() {
        let kinds: std::collections::BTreeSet<&str> = Form::ALL.iter().map(|f| f.kind()).collect();
        let words: std::collections::BTreeSet<&str> = Form::ALL.iter().map(|f| f.words()).collect();
        assert_eq!((kinds.len(), words.len()), (4, 4));
        assert_eq!(Form::GitBashDrive.kind(), "path-form-git-bash-drive");
        assert!(Form::Backslash.words().contains("backslash"));
        let (said, instead) = what("path-form-home", "Read").unwrap();
        assert_eq!(said, "Read of an unexpanded ~ path");
        assert!(instead.contains("cannot use paths written this way"));
        assert_eq!(what("recurring-path", "Read"), None);
    }

    fn failure((command, session): (&str, &str)) -> Failure {
        Failure {
            tool: "Read".into(),
            command: command.into(),
            error: "File does not exist.".into(),
            signature: String::new(),
            session: Some(session.into()),
            started_ms: 0,
            source: "trace".into(),
            over_limit: false,
        }
    }

    #[test]
    fn a_form_shared_by_min_count_guesses_is_split_off_and_the_rest_stays() {
        let failures: Vec<Failure> = [
            ("/c/a", "s1"),
            ("/c/b", "s1"),
            ("/c/c", "s1"),
            (r"C:\a", "s1"),
            (r"C:\b", "s2"),
            ("C:/z", "s1"),
            ("/d/e", "s2"),
            ("~/a", "s1"),
            ("~/b", "s1"),
        ]
        .into_iter()
        .map(failure)
        .collect();
        let c = Cluster {
            group: ToolGroup::of("Read"),
            shape: "Read".into(),
            signature: "sig".into(),
            kind: Kind::ToolWide,
            failures: (0..failures.len()).collect(),
            tokens: vec![],
            signatures: vec!["sig".into()],
        };
        let (forms, rest) = split(c.clone(), &failures, 3, 2);
        assert_eq!(forms.len(), 1);
        assert_eq!(forms[0].0.failures, vec![0, 1, 2, 6]);
        assert_eq!(forms[0].0.shape, "path-form-git-bash-drive");
        assert_eq!(forms[0].1, Form::GitBashDrive);
        assert_eq!(rest.unwrap().failures, vec![3, 4, 5, 7, 8]);
        // At the floor exactly: two backslash paths are below 3, at 2 they split; two
        // `~` paths of one session do not.
        let (forms, rest) = split(c.clone(), &failures, 2, 2);
        assert_eq!(forms.len(), 2);
        assert_eq!(forms[1].0.failures, vec![3, 4]);
        assert_eq!(rest.unwrap().failures, vec![5, 7, 8]);
        // One session's burst is no form.
        let (forms, _) = split(
            Cluster {
                failures: vec![0, 1, 2],
                ..c.clone()
            },
            &failures,
            3,
            2,
        );
        assert!(forms.is_empty());
        // Nothing left over.
        let (forms, rest) = split(
            Cluster {
                failures: vec![0, 1, 6],
                ..c
            },
            &failures,
            3,
            2,
        );
        assert_eq!(forms.len(), 1);
        assert!(rest.is_none());
    }
}
