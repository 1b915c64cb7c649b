//! Failures the host's sandbox causes: a program that started inside the sandbox and was
//! refused a write or a capability outside its writable roots (`Operation not permitted`,
//! `Permission denied`, `Read-only file system`, killed by the sandbox's signal).
//!
//! Such a failure is deterministic given the session context: it happens on every call
//! under that sandbox and never without it, and the agent's retries rarely change anything.
//! So a cluster whose every failure names a denial, in sessions that all ran sandboxed (the
//! sandbox the host recorded for the session, `sessions.sandbox`), is proposed from
//! [`MIN_FAILURES`] failures instead of `--min-count`, and its rule is conditioned on those
//! sandboxes (`when: {sandbox: […]}`), so replayed or enforced it never fires outside them.
//! The lowered floor holds only while the replay shows every call the rule fires on failed
//! ([`all_failed`]); a key that also succeeded under the sandbox needs the ordinary floor.
//!
//! Guarantees: a permission error in a session with no sandbox, an unknown one or
//! `danger-full-access` is never lowered nor conditioned here; a guard's or user's refusal
//! (status `denied`, `interrupted`) never reaches this module (derive's failures are status
//! `failure` only); the phrases are the operating system's and the hosts' own, each host's
//! tested.

use std::collections::{BTreeSet, HashMap};

use rusqlite::Connection;
use serde_json::json;

use super::calls::Failure;
use super::cluster::{Cluster, Kind};
use super::pattern::Proposal;
use super::tool_causes::Plan;
use crate::rules::backtest::Backtest;
use crate::{Error, Result};

/// Fewest failures a sandbox-denied cluster needs (below `--min-count`).
pub(crate) const MIN_FAILURES: u64 = 2;

/// The kind of a proposal conditioned on the sandbox that refused it.
pub(crate) const KIND: &str = "sandbox-denied";

/// Phrases (lowercase) of a program refused by the sandbox it runs in, with who says them:
/// - Codex on macOS (Seatbelt, `sandbox-exec`), Claude Code's and Gemini CLI's macOS
///   sandboxes (Seatbelt too): a denied write or exec is `EPERM`, "Operation not
///   permitted" (`touch: /Users/u/.rustup/x: Operation not permitted`, `zsh:1: operation
///   not permitted: /tmp/claude-501/cwd-…`);
/// - Codex on Linux (Landlock): a denied path is `EACCES`, "Permission denied"; its
///   workspace-write mode and Claude Code's Linux sandbox (bubblewrap) bind `.git` or the
///   paths outside the writable roots read-only: "Read-only file system" (`EROFS`); Gemini
///   CLI's container sandbox (Docker/Podman) mounts only the project writable, the same;
/// - Codex's own words for a denied write through its tools ("failed to write file") and
///   a program killed by the sandbox's signal (Seatbelt's kill, Landlock/seccomp's
///   `SIGSYS`): "command was killed by a signal", "bad system call";
/// - programs that name the denial in their own words: npm's `EPERM`/`EACCES`/`EROFS`
///   codes.
const DENIED: &[&str] = &[
    "operation not permitted",
    "permission denied",
    "read-only file system",
    "failed to write file",
    "killed by a signal",
    "bad system call",
    "code eperm",
    "code eacces",
    "code erofs",
];

/// Does this error say the sandbox refused the program (see [`DENIED`])? A shell refusing
/// to run a file that is not executable (`bash: ./x.sh: Permission denied`, `zsh:
/// permission denied: ./x.sh`; exit 126) is the file's mode, not the sandbox: Codex's own
/// denial check leaves exit 126 out for the same reason.
pub(crate) fn says_denied(error: &str) -> bool {
    error.lines().any(|line| {
        let l = line.trim_start().to_lowercase();
        DENIED.iter().any(|p| l.contains(p)) && !not_executable(&l)
    })
}

/// Is this (lowercase) line a shell's refusal to execute a file (`permission denied` said by
/// `bash:`, `zsh:`, `sh:` or `/bin/sh:` itself)?
fn not_executable(line: &str) -> bool {
    let shell = ["bash:", "zsh:", "sh:", "dash:"].iter().any(|s| {
        line.starts_with(s)
            || line
                .split_once(' ')
                .is_some_and(|(w, _)| w.ends_with(&format!("/{s}")))
    });
    shell && line.contains("permission denied")
}

/// Is this recorded sandbox value a sandbox at all (not `danger-full-access`, `none`, …)?
pub(crate) fn is_sandboxed(value: &str) -> bool {
    let v = value.trim();
    !v.is_empty()
        && !crate::rules::condition::NO_SANDBOX
            .iter()
            .any(|n| n.eq_ignore_ascii_case(v))
}

/// Each session's recorded sandbox (lowercase), for the sessions that recorded one.
pub(crate) fn sessions(conn: &Connection) -> Result<HashMap<String, String>> {
    let read = |e| Error::sql("read the sessions' sandboxes", e);
    let mut stmt = conn
        .prepare("SELECT id, sandbox FROM sessions WHERE sandbox IS NOT NULL")
        .map_err(read)?;
    let rows = stmt
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
        .map_err(read)?;
    let mut out = HashMap::new();
    for row in rows {
        let (id, sandbox) = row.map_err(read)?;
        out.insert(id, sandbox.to_lowercase());
    }
    Ok(out)
}

/// The sandboxes (sorted) a cluster's failures ran under, when every failure's error names
/// a denial and every failure's session recorded a sandbox that is one; `None` otherwise.
/// Only a program's cluster: a file tool's has its own causes (`tool_causes`), and the
/// other kinds (a loop, a dead host, builtins only) are refused by no sandbox.
pub(crate) fn denied_under(
    c: &Cluster,
    failures: &[Failure],
    sandboxes: &HashMap<String, String>,
) -> Option<Vec<String>> {
    if !matches!(c.kind, Kind::Program { .. }) || c.failures.is_empty() {
        return None;
    }
    let mut seen = BTreeSet::new();
    for &f in &c.failures {
        let f = &failures[f];
        let sandbox = sandboxes.get(f.session.as_deref()?)?;
        if !is_sandboxed(sandbox) || !says_denied(&f.error) {
            return None;
        }
        seen.insert(sandbox.clone());
    }
    Some(seen.into_iter().collect())
}

/// Fewest path components the directory a sandbox refused writes under must have
/// (`/Users/u/.rustup/`: three); a shorter one (the home directory) holds the workspace too.
pub(crate) const MIN_PREFIX_DEPTH: usize = 3;

/// What the sandbox refused a program cluster: the sandboxes its sessions ran under, and
/// the directory outside the workspace its failures all wrote under, if they name one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refusal {
    /// The sessions' sandboxes (sorted).
    pub sandboxes: Vec<String>,
    /// The directory (ending in `/`) every failure's denied path lies under and every
    /// failing command names (see [`denied_prefix`]).
    pub prefix: Option<String>,
    /// Was the program refused under more than one shape (`cargo fmt`, `cargo check`)? Its
    /// rule is then keyed on the program; otherwise on the one shape refused.
    pub program_wide: bool,
}

/// The first absolute (or `~/`) path on the line of `error` that names the denial: a bare
/// root (`/`, `~/`) names nothing below it and is skipped.
fn denied_path(error: &str) -> Option<&str> {
    let line = error.lines().find(|l| says_denied(l))?;
    line.split_whitespace()
        .map(|t| t.trim_matches(|c| matches!(c, '\'' | '"' | '`')))
        .map(|t| t.trim_end_matches([':', ',', ';']))
        .map(|t| t.trim_matches(|c| matches!(c, '\'' | '"' | '`')))
        .find(|t| {
            t.strip_prefix("~/")
                .or_else(|| t.strip_prefix('/'))
                .is_some_and(|below| !below.is_empty())
        })
}

/// The directory every failure of `c` was refused a write under: each error names a path
/// on its denial line, their common directory has [`MIN_PREFIX_DEPTH`] components or more,
/// and every failing command names that directory, so a rule can key on it (the sandbox
/// refuses the place, not the program: a write inside the workspace still works).
pub(crate) fn denied_prefix(c: &Cluster, failures: &[Failure]) -> Option<String> {
    let mut common: Option<Vec<&str>> = None;
    for &f in &c.failures {
        let path = denied_path(&failures[f].error)?;
        let dir: Vec<&str> = path.rsplit_once('/')?.0.split('/').collect();
        common = Some(match common {
            None => dir,
            Some(mut have) => {
                let same = have.iter().zip(&dir).take_while(|(a, b)| a == b).count();
                have.truncate(same);
                have
            }
        });
    }
    let common = common?;
    if common.iter().filter(|p| !p.is_empty()).count() < MIN_PREFIX_DEPTH {
        return None;
    }
    let prefix = format!("{}/", common.join("/"));
    c.failures
        .iter()
        .all(|&f| failures[f].command.contains(&prefix))
        .then_some(prefix)
}

/// Each program cluster refused by its sessions' sandbox (by index), with what it was
/// refused; its plan's floor lowered to [`MIN_FAILURES`].
pub(crate) fn lower(
    conn: &Connection,
    clusters: &[Cluster],
    failures: &[Failure],
    plans: &mut [Plan],
) -> Result<HashMap<usize, Refusal>> {
    let sandboxes = sessions(conn)?;
    let mut out = HashMap::new();
    if sandboxes.is_empty() {
        return Ok(out);
    }
    let mut heads: HashMap<&str, usize> = HashMap::new();
    for (i, c) in clusters.iter().enumerate() {
        if let Some(sandboxes) = denied_under(c, failures, &sandboxes) {
            plans[i].floor = plans[i].floor.min(MIN_FAILURES);
            let prefix = denied_prefix(c, failures);
            if let Kind::Program { head, .. } = &c.kind {
                *heads.entry(head.as_str()).or_default() += 1;
            }
            out.insert(
                i,
                Refusal {
                    sandboxes,
                    prefix,
                    program_wide: false,
                },
            );
        }
    }
    for (&i, r) in &mut out {
        if let Kind::Program { head, .. } = &clusters[i].kind {
            r.program_wide = heads.get(head.as_str()).is_some_and(|&n| n > 1);
        }
    }
    Ok(out)
}

/// `p` conditioned on the sandboxes that refused its failures (`None`: `p` as it is), and
/// keyed on what its failures share. A program refused under several shapes (`cargo fmt`
/// and `cargo check` alike: the sandbox refuses the program whatever its subcommand) is
/// keyed on the program, its `unless` dropped, so every shape's cluster proposes the same
/// rule (folded into one candidate); one refused under one shape keeps that shape's
/// pattern (its other subcommands may work). When its failures were all refused a write
/// under one directory their commands name, the program's pattern requires that directory
/// (`^touch\b.*/Users/u/\.rustup/`): the place is refused, not the program. A proposal with
/// a condition of its own (a program absent from `PATH`) keeps it.
pub(crate) fn condition(mut p: Proposal, c: &Cluster, refusal: Option<&Refusal>) -> Proposal {
    let Some(refusal) = refusal else {
        return p;
    };
    if p.when.is_some() {
        return p;
    }
    if let Kind::Program { head, pathed } = &c.kind
        && (refusal.program_wide || refusal.prefix.is_some())
    {
        let mut any = super::pattern::program_pattern(head, *pathed);
        if let Some(prefix) = &refusal.prefix {
            any.push_str(".*");
            any.push_str(&super::pattern::escape(prefix));
        }
        p.any = vec![any];
        p.unless.clear();
    }
    p.kind = KIND;
    p.when = Some(json!({ "sandbox": refusal.sandboxes }));
    p
}

/// Is this proposal conditioned on the sandbox that refused it (proposed below the floor)?
pub(crate) fn lowered(p: &Proposal) -> bool {
    p.kind == KIND
}

/// Did every call the rule fired on fail (the lowered floor's condition)?
pub(crate) fn all_failed(b: &Backtest) -> bool {
    b.failures > 0 && b.matched == b.failures
}

/// The draft message of a sandbox-denied candidate (`None`: not one).
pub(crate) fn message(
    p: &Proposal,
    c: &Cluster,
    fails: usize,
    basis: &str,
    ceiling: crate::rules::Action,
) -> Option<String> {
    if !lowered(p) {
        return None;
    }
    // A rule keyed on the program names it, whatever the subcommand its first failure ran.
    let what = match &c.kind {
        Kind::Program { head, pathed }
            if p.any.first().is_some_and(|a| {
                a.starts_with(&super::pattern::program_pattern(head, *pathed))
            }) =>
        {
            head.as_str()
        }
        _ => c.shape.as_str(),
    };
    let sandboxes = p
        .when
        .as_ref()
        .and_then(|w| w["sandbox"].as_array())
        .map(|a| {
            a.iter()
                .filter_map(serde_json::Value::as_str)
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default();
    Some(format!(
        "DRAFT — `{what}` was refused by the {sandboxes} sandbox {fails}x ({basis}); retrying does not change it. Run it with escalated permissions (or point it at a writable path) instead. Refine this message, then promote monitor -> at most {ceiling}."
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::derive::cluster::ToolGroup;

    fn failure(error: &str, session: &str) -> Failure {
        Failure {
            tool: "Bash".into(),
            command: "cargo fmt".into(),
            error: error.into(),
            signature: String::new(),
            session: Some(session.into()),
            started_ms: 0,
            source: "trace".into(),
            over_limit: false,
        }
    }

    fn cluster(kind: Kind, failures: Vec<usize>) -> Cluster {
        Cluster {
            group: ToolGroup::of("Bash"),
            shape: "cargo fmt".into(),
            signature: "sig".into(),
            kind,
            failures,
            tokens: vec![],
            signatures: vec!["sig".into()],
        }
    }

    fn program() -> Kind {
        Kind::Program {
            head: "cargo".into(),
            pathed: false,
        }
    }

    #[test]
    fn codex_seatbelt_denial_is_named() {
        assert!(says_denied(
            "error: could not create temp file /Users/u/.rustup/tmp/x_file: Operation not permitted (os error 1)"
        ));
        assert!(says_denied(
            "error: cannot open '.git/FETCH_HEAD': Operation not permitted"
        ));
        assert!(says_denied("command was killed by a signal"));
    }

    #[test]
    fn codex_landlock_denial_is_named() {
        assert!(says_denied(
            "touch: cannot touch '/home/u/.cargo/x': Permission denied"
        ));
        assert!(says_denied(
            "error: could not lock config file .git/config: Read-only file system"
        ));
        assert!(says_denied("Bad system call (core dumped)"));
        assert!(says_denied("failed to write file /home/u/notes.md"));
    }

    #[test]
    fn claude_code_sandbox_denial_is_named() {
        // macOS Seatbelt (zsh's own words) and Linux bubblewrap.
        assert!(says_denied(
            "zsh:1: operation not permitted: /tmp/claude-501/cwd-dd16"
        ));
        assert!(says_denied(
            "mkdir: cannot create directory '/home/u/.cache/x': Read-only file system"
        ));
    }

    #[test]
    fn gemini_cli_sandbox_denial_is_named() {
        // Seatbelt's permissive-open profile denies writes outside the project; the
        // container sandbox mounts only the project writable.
        assert!(says_denied("cp: /Users/u/.zshrc: Operation not permitted"));
        assert!(says_denied(
            "npm ERR! code EACCES\nnpm ERR! syscall mkdir\nnpm ERR! path /usr/local/lib"
        ));
        assert!(says_denied("npm ERR! code EROFS"));
        assert!(says_denied("npm ERR! code EPERM"));
    }

    #[test]
    fn a_shell_refusing_a_file_without_its_execute_bit_is_not_the_sandbox() {
        assert!(!says_denied("bash: ./deploy.sh: Permission denied"));
        assert!(!says_denied("bash: line 1: ./deploy.sh: Permission denied"));
        assert!(!says_denied("zsh: permission denied: ./deploy.sh"));
        assert!(!says_denied("/bin/sh: 1: ./deploy.sh: Permission denied"));
        assert!(!says_denied("dash: 1: ./x: Permission denied"));
        // The sandbox refusing the shell's own write, or a program's.
        assert!(says_denied(
            "bash: /home/u/.bash_history: Read-only file system"
        ));
        assert!(says_denied(
            "zsh:1: operation not permitted: /tmp/claude-501/cwd-1"
        ));
        assert!(says_denied(
            "Exit code 1\nmkdir: /home/u/.x: Permission denied"
        ));
    }

    #[test]
    fn other_failures_are_not_denials() {
        assert!(!says_denied("error: could not find `Cargo.toml`"));
        assert!(!says_denied("bash: cargo: command not found"));
        assert!(!says_denied(""));
    }

    #[test]
    fn only_a_real_sandbox_is_sandboxed() {
        assert!(is_sandboxed("workspace-write"));
        assert!(is_sandboxed("read-only"));
        assert!(!is_sandboxed("danger-full-access"));
        assert!(!is_sandboxed("Danger-Full-Access"));
        assert!(!is_sandboxed("none"));
        assert!(!is_sandboxed(" "));
    }

    #[test]
    fn every_failure_must_be_denied_in_a_sandboxed_session() {
        let denied = "x: Operation not permitted";
        let fs = vec![
            failure(denied, "a"),
            failure(denied, "b"),
            failure("error: other", "a"),
            failure(denied, "c"),
            failure(denied, "d"),
        ];
        let sandboxes: HashMap<String, String> = [
            ("a", "workspace-write"),
            ("b", "read-only"),
            ("c", "danger-full-access"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        assert_eq!(
            denied_under(&cluster(program(), vec![0, 1]), &fs, &sandboxes),
            Some(vec!["read-only".to_string(), "workspace-write".to_string()])
        );
        // One failure that names no denial.
        assert_eq!(
            denied_under(&cluster(program(), vec![0, 2]), &fs, &sandboxes),
            None
        );
        // One failure outside any sandbox, or in a session that recorded none.
        assert_eq!(
            denied_under(&cluster(program(), vec![0, 3]), &fs, &sandboxes),
            None
        );
        assert_eq!(
            denied_under(&cluster(program(), vec![0, 4]), &fs, &sandboxes),
            None
        );
        // A file tool's cluster, a loop's, or an empty one.
        assert_eq!(
            denied_under(&cluster(Kind::ToolWide, vec![0, 1]), &fs, &sandboxes),
            None
        );
        assert_eq!(
            denied_under(&cluster(Kind::PollLoop, vec![0, 1]), &fs, &sandboxes),
            None
        );
        assert_eq!(
            denied_under(&cluster(program(), vec![]), &fs, &sandboxes),
            None
        );
        let mut no_session = failure(denied, "a");
        no_session.session = None;
        assert_eq!(
            denied_under(&cluster(program(), vec![0]), &[no_session], &sandboxes),
            None
        );
    }

    #[test]
    fn lowering_reads_the_sessions_and_lowers_only_the_refused_programs() {
        let conn = crate::store::open_in_memory().unwrap();
        let fs = vec![
            failure("x: Operation not permitted", "a"),
            failure("x: Operation not permitted", "a"),
        ];
        let clusters = vec![
            cluster(program(), vec![0, 1]),
            cluster(Kind::PollLoop, vec![0, 1]),
        ];
        let plan = || Plan {
            cause: None,
            floor: 3,
        };
        // No session recorded a sandbox: nothing lowered.
        let mut plans = vec![plan(), plan()];
        assert!(lower(&conn, &clusters, &fs, &mut plans).unwrap().is_empty());
        assert_eq!((plans[0].floor, plans[1].floor), (3, 3));
        conn.execute_batch(
            "INSERT INTO sessions (id, host, source, sandbox)
             VALUES ('a', 'codex', 'import', 'Workspace-Write'), ('b', 'codex', 'import', NULL);",
        )
        .unwrap();
        assert_eq!(
            sessions(&conn).unwrap(),
            HashMap::from([("a".to_string(), "workspace-write".to_string())])
        );
        let refused = lower(&conn, &clusters, &fs, &mut plans).unwrap();
        let one_shape = Refusal {
            program_wide: false,
            ..refusal(None)
        };
        assert_eq!(refused, HashMap::from([(0, one_shape)]));
        assert_eq!((plans[0].floor, plans[1].floor), (MIN_FAILURES, 3));
        // The same program refused under a second shape: keyed on the program.
        let mut check = cluster(program(), vec![1]);
        check.shape = "cargo check".into();
        let two = vec![cluster(program(), vec![0]), check];
        let refused = lower(&conn, &two, &fs, &mut [plan(), plan()]).unwrap();
        assert!(refused.values().all(|r| r.program_wide), "{refused:?}");
        assert_eq!(refused.len(), 2);
        // A floor already below stays.
        let mut low = vec![
            Plan {
                cause: None,
                floor: 1,
            },
            plan(),
        ];
        lower(&conn, &clusters, &fs, &mut low).unwrap();
        assert_eq!(low[0].floor, 1);
    }

    fn proposal() -> Proposal {
        Proposal {
            kind: "program",
            any: vec![r"^cargo\b".into()],
            unless: vec![],
            match_mode: Some("segment"),
            flags: None,
            literal: Some("cargo".into()),
            field_unless: None,
            when: None,
            field: None,
        }
    }

    fn refusal(prefix: Option<&str>) -> Refusal {
        Refusal {
            sandboxes: vec!["workspace-write".to_string()],
            prefix: prefix.map(str::to_string),
            program_wide: true,
        }
    }

    #[test]
    fn a_denied_path_is_the_first_absolute_one_on_the_denial_line() {
        let p = |e| denied_path(e);
        assert_eq!(
            p(
                "info: x\nerror: could not create temp file /Users/u/.rustup/tmp/q_file: Operation not permitted (os error 1)"
            ),
            Some("/Users/u/.rustup/tmp/q_file")
        );
        assert_eq!(
            p("touch: cannot touch '/home/u/.cargo/x': Permission denied"),
            Some("/home/u/.cargo/x")
        );
        assert_eq!(
            p("touch: ~/.npm/x: Operation not permitted"),
            Some("~/.npm/x")
        );
        // Relative, too short, or on no denial line.
        assert_eq!(
            p("error: cannot open '.git/FETCH_HEAD': Operation not permitted"),
            None
        );
        assert_eq!(p("x / y: Operation not permitted"), None);
        assert_eq!(p("x ~/ y: Operation not permitted"), None);
        // A root is skipped for the path after it; the shortest path below one is a path.
        assert_eq!(p("rm / /x: Operation not permitted"), Some("/x"));
        assert_eq!(p("rm ~/ ~/x: Operation not permitted"), Some("~/x"));
        assert_eq!(p("/home/u/a is here\nerror: Operation not permitted"), None);
        assert_eq!(p("/home/u/a/b: No such file"), None);
    }

    #[test]
    fn a_prefix_needs_every_failure_under_one_deep_directory_its_commands_name() {
        let with = |command: &str, error: &str| {
            let mut f = failure(error, "a");
            f.command = command.into();
            f
        };
        let fs = vec![
            with(
                "touch /Users/u/.rustup/tmp/t && rm /Users/u/.rustup/tmp/t",
                "touch: /Users/u/.rustup/tmp/t: Operation not permitted",
            ),
            with(
                "touch /Users/u/.rustup/test",
                "touch: /Users/u/.rustup/test: Operation not permitted",
            ),
            with(
                "touch /Users/u/x",
                "touch: /Users/u/x: Operation not permitted",
            ),
            with(
                "cargo fmt",
                "error: could not create temp file /Users/u/.rustup/tmp/q: Operation not permitted",
            ),
            with(
                "touch /Users/u/.rustup/y",
                "touch: failed: Operation not permitted",
            ),
        ];
        let of = |ids: Vec<usize>| denied_prefix(&cluster(program(), ids), &fs);
        assert_eq!(of(vec![0, 1]), Some("/Users/u/.rustup/".to_string()));
        assert_eq!(of(vec![0]), Some("/Users/u/.rustup/tmp/".to_string()));
        // The common directory is the home directory: too shallow.
        assert_eq!(of(vec![0, 2]), None);
        // The command does not name the path (rustup's own temp file).
        assert_eq!(of(vec![3]), None);
        // An error that names no path.
        assert_eq!(of(vec![0, 4]), None);
        assert_eq!(of(vec![]), None);
    }

    #[test]
    fn one_refused_shape_keeps_its_pattern_unless_a_directory_keys_it() {
        // Refused under one shape only: that shape's pattern, as proposed.
        let mut sub = proposal();
        sub.any = vec![r"^cargo\s+fmt\b".into()];
        sub.unless = vec![r"\s--all(?:[\s=]|$)".into()];
        let alone = Refusal {
            program_wide: false,
            ..refusal(None)
        };
        let p4 = condition(sub.clone(), &cluster(program(), vec![0]), Some(&alone));
        assert_eq!((&p4.any, &p4.unless), (&sub.any, &sub.unless));
        assert!(lowered(&p4));
        assert!(
            message(
                &p4,
                &cluster(program(), vec![0]),
                2,
                "b",
                crate::rules::Action::Nudge
            )
            .is_some_and(|m| m.contains("`cargo fmt` was refused"))
        );
        // ... unless its failures name a directory.
        let placed = Refusal {
            program_wide: false,
            ..refusal(Some("/Users/u/.rustup/"))
        };
        let p5 = condition(sub, &cluster(program(), vec![0]), Some(&placed));
        assert_eq!(p5.any, vec![r"^cargo\b.*/Users/u/\.rustup/".to_string()]);
    }

    #[test]
    fn the_condition_names_the_sandboxes_keys_the_program_and_keeps_an_own_one() {
        let values = refusal(None);
        let mut sub = proposal();
        sub.any = vec![r"^cargo\s+fmt\b".into()];
        sub.unless = vec![r"\s--all(?:[\s=]|$)".into()];
        let p = condition(sub, &cluster(program(), vec![0]), Some(&values));
        assert!(lowered(&p));
        assert_eq!(p.when, Some(json!({"sandbox": ["workspace-write"]})));
        assert_eq!(p.any, vec![r"^cargo\b".to_string()]);
        assert!(p.unless.is_empty());
        let pathed = Kind::Program {
            head: "cargo".into(),
            pathed: true,
        };
        let p2 = condition(proposal(), &cluster(pathed, vec![0]), Some(&values));
        assert_eq!(p2.any, vec![r"^(?:\S*/)?cargo\b".to_string()]);
        let under = refusal(Some("/Users/u/.rustup/"));
        let p3 = condition(proposal(), &cluster(program(), vec![0]), Some(&under));
        assert_eq!(p3.any, vec![r"^cargo\b.*/Users/u/\.rustup/".to_string()]);
        assert_eq!(p3.when, Some(json!({"sandbox": ["workspace-write"]})));
        // A pattern not keyed on a program (a shared element, a loop) is kept.
        let mut shared = proposal();
        shared.any = vec![r"\.rustup/".into()];
        let kept = condition(shared, &cluster(Kind::PollLoop, vec![0]), Some(&values));
        assert!(
            message(
                &kept,
                &cluster(Kind::PollLoop, vec![0]),
                2,
                "b",
                crate::rules::Action::Nudge
            )
            .is_some_and(|m| m.contains("`cargo fmt` was refused"))
        );
        assert_eq!(kept.any, vec![r"\.rustup/".to_string()]);
        assert!(lowered(&kept));
        assert!(!lowered(&condition(
            proposal(),
            &cluster(program(), vec![0]),
            None
        )));
        let own = proposal().program_absent("cargo");
        let kept = condition(own.clone(), &cluster(program(), vec![0]), Some(&values));
        assert_eq!(kept, own);
        assert!(
            message(
                &p,
                &cluster(program(), vec![0]),
                4,
                "b",
                crate::rules::Action::Nudge
            )
            .is_some_and(|m| m.contains("`cargo` was refused by the workspace-write sandbox 4x"))
        );
        assert!(
            message(
                &proposal(),
                &cluster(program(), vec![0]),
                4,
                "b",
                crate::rules::Action::Nudge
            )
            .is_none()
        );
    }

    #[test]
    fn the_lowered_floor_needs_every_fired_call_failed() {
        let b = |matched, failures| Backtest {
            matched,
            failures,
            ..Backtest::default()
        };
        assert!(all_failed(&b(2, 2)));
        assert!(!all_failed(&b(3, 2)));
        assert!(!all_failed(&b(0, 0)));
    }
}
