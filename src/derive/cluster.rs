//! Clustering: the window's failures grouped by (tool group, command shape of the failing
//! segment, error signature).
//!
//! A Bash failure joins one of three kinds of cluster: a `while/until/for … sleep` poll loop
//! (shape `poll-loop`), a name-resolution failure about one host (shape `host:<name>`, one
//! cluster per host whatever the program or wording), or the program of its failing segment
//! (see [`crate::shell::blame`], the recorder's choice too). A Bash failure that ran only builtins joins a
//! cluster with an empty shape, which is reported and never proposed (a tool-only Bash rule
//! would match every command). Every other tool clusters by tool and
//! signature (its candidate is tool-wide, but only a signature that recurs on its own makes
//! one), except an MCP server, which is one tool-wide cluster whatever its signatures.
//!
//! A cluster's id is derived from its group, shape and signature only — never from counts — so
//! next week's run names the same cluster the same way.

use std::collections::BTreeMap;

use crate::digest::{Digest as _, Sha256};

use super::calls::Failure;
use super::command;
use crate::shell;
use crate::shell::blame::blame;
use crate::shell::program::Program;

/// The signature dead-host clusters share (the wording differs per program).
pub(crate) const DEAD_HOST_SIGNATURE: &str = "could not resolve host";
/// The shape of poll-loop clusters.
pub(crate) const POLL_LOOP_SHAPE: &str = "poll-loop";

/// The group a tool belongs to: MCP tools group by server.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct ToolGroup {
    /// `Bash`, `WebFetch`, `mcp__Acme__`.
    pub key: String,
    /// The rule `tool` glob: `Bash`, `WebFetch`, `mcp__Acme__*`.
    pub glob: String,
}

impl ToolGroup {
    /// The group of `tool` (callusguard's `_tool_group`).
    pub(crate) fn of(tool: &str) -> Self {
        if let Some(rest) = tool.strip_prefix("mcp__")
            && let Some((server, _)) = rest.split_once("__")
            && !server.is_empty()
        {
            return ToolGroup {
                key: format!("mcp__{server}__"),
                glob: format!("mcp__{server}__*"),
            };
        }
        ToolGroup {
            key: tool.to_string(),
            glob: tool.to_string(),
        }
    }

    /// Is this a shell tool (its calls commands), as the guard and the recorder read it
    /// ([`crate::host::call::is_shell`])?
    pub(crate) fn is_bash(&self) -> bool {
        crate::host::call::is_shell(&self.key)
    }
}

/// What a shared-element or structure cluster patterns on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SharedPattern {
    /// `shared-element`, `malformed-patch`.
    pub kind: &'static str,
    /// The element, as a reviewer reads it (`path .specify/scripts/bash/`).
    pub element: String,
    /// The rule's pattern.
    pub any: String,
    /// `true`: matched against the whole command text; else against each simple command.
    pub text: bool,
    /// Lowercase literal every match contains (the scan's prefilter).
    pub literal: String,
    /// Did the replay separate the group's failures from the successes? `false`: a lesson.
    pub separates: bool,
}

/// What a cluster's candidate will pattern on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Kind {
    /// The program of the failing segment (`shape` is its shape).
    Program {
        /// The program's basename.
        head: String,
        /// Some failing call spelled the program with a path.
        pathed: bool,
    },
    /// A `while/until/for … sleep … done` poll loop.
    PollLoop,
    /// Name resolution failed for this host.
    DeadHost(String),
    /// A Bash failure that ran only builtins: nothing to pattern on.
    NoProgram,
    /// A non-Bash tool group, as a whole.
    ToolWide,
    /// Failures found by what they share, not by their program (see `shared`).
    Shared(SharedPattern),
}

/// One cluster of failures.
#[derive(Debug, Clone)]
pub(crate) struct Cluster {
    /// Tool group.
    pub group: ToolGroup,
    /// Command shape (`psql`, `poll-loop`, `host:x`, the group key for tool-wide, `""`).
    pub shape: String,
    /// Normalised error signature (empty for tool-wide clusters).
    pub signature: String,
    /// What the candidate patterns on.
    pub kind: Kind,
    /// Indices of the failures in the window's failure list, oldest first.
    pub failures: Vec<usize>,
    /// For program clusters: each failure's argument tokens (parallel to `failures`).
    pub tokens: Vec<Vec<String>>,
    /// Distinct signatures (tool-wide clusters count their methods' signatures).
    pub signatures: Vec<String>,
}

impl Cluster {
    /// The stable id: `derived-<group>-<shape>-<8 hex of sha256(group, shape, signature)>`.
    pub(crate) fn id(&self) -> String {
        let mut h = Sha256::new();
        h.update(self.group.key.as_bytes());
        h.update([0x1f]);
        h.update(self.shape.as_bytes());
        h.update([0x1f]);
        h.update(self.signature.as_bytes());
        let digest = crate::digest::hex(&h.finalize());
        let base = if self.kind == Kind::ToolWide || self.shape.is_empty() {
            slug(&self.group.key)
        } else {
            slug(&format!("{}-{}", self.group.key, self.shape))
        };
        format!("derived-{base}-{}", &digest[..8])
    }

    /// Number of failures.
    pub(crate) fn count(&self) -> usize {
        self.failures.len()
    }
}

/// Lowercase, runs of anything but `[a-z0-9]` to one `-`, trimmed, at most 48 characters.
fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let trimmed = out.trim_matches('-');
    let cut: String = trimmed.chars().take(48).collect();
    cut.trim_end_matches('-').to_string()
}

/// Spec §6.3 `normalize_error`: lowercase, quoted strings → `'S'`, digit runs → `#`,
/// whitespace collapsed, trimmed, first 200 characters. Used when a row has no stored
/// signature (the recorder computes a richer one at record time).
pub(crate) fn normalize_error(err: &str) -> String {
    let chars: Vec<char> = err.to_lowercase().chars().collect();
    let mut out = String::with_capacity(chars.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\'' | '"' => {
                if let Some(len) = chars[i + 1..].iter().position(|&x| x == c) {
                    out.push_str("'S'");
                    i += len + 2;
                } else {
                    out.push(c);
                    i += 1;
                }
            }
            '0'..='9' => {
                out.push('#');
                while i < chars.len() && chars[i].is_ascii_digit() {
                    i += 1;
                }
            }
            c if c.is_whitespace() => {
                out.push(' ');
                while i < chars.len() && chars[i].is_whitespace() {
                    i += 1;
                }
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    out.trim().chars().take(200).collect()
}

/// The signature of a failure: the stored one, else computed from the error.
pub(crate) fn signature_of(f: &Failure) -> String {
    if f.signature.trim().is_empty() {
        normalize_error(&f.error)
    } else {
        f.signature.clone()
    }
}

/// Group `failures` into clusters (unthresholded), in a deterministic order: most failures
/// first, then by id.
pub(crate) fn build(failures: &[Failure]) -> Vec<Cluster> {
    let mut by_key: BTreeMap<(ToolGroup, String, String), Cluster> = BTreeMap::new();
    for (i, f) in failures.iter().enumerate() {
        let group = ToolGroup::of(&f.tool);
        let sig = signature_of(f);
        let (shape, signature, kind, tokens) = if group.is_bash() {
            bash_key(f, sig.clone())
        } else {
            // Signature first for the host's own tools: Read's size limit and a missing file
            // are separate clusters, each needing `--min-count` failures of its own. An MCP
            // server stays one surface, whatever its methods' signatures.
            let signature = if group.key.starts_with("mcp__") {
                String::new()
            } else {
                sig.clone()
            };
            (group.key.clone(), signature, Kind::ToolWide, Vec::new())
        };
        let c = by_key
            .entry((group.clone(), shape.clone(), signature.clone()))
            .or_insert_with(|| Cluster {
                group,
                shape,
                signature,
                kind: kind.clone(),
                failures: Vec::new(),
                tokens: Vec::new(),
                signatures: Vec::new(),
            });
        if let (
            Kind::Program { pathed, .. },
            Kind::Program {
                pathed: this_pathed,
                ..
            },
        ) = (&mut c.kind, &kind)
        {
            *pathed |= *this_pathed;
        }
        c.failures.push(i);
        c.tokens.push(tokens);
        if !c.signatures.contains(&sig) {
            c.signatures.push(sig);
        }
    }
    let mut out: Vec<Cluster> = by_key.into_values().collect();
    out.sort_by_cached_key(|c| (std::cmp::Reverse(c.count()), c.id()));
    out
}

/// Shape, signature, kind and argument tokens of one Bash failure.
fn bash_key(f: &Failure, sig: String) -> (String, String, Kind, Vec<String>) {
    if command::is_poll_loop(&f.command) {
        return (POLL_LOOP_SHAPE.to_string(), sig, Kind::PollLoop, Vec::new());
    }
    if let Some(host) = command::dead_host(&f.error, &f.command) {
        return (
            format!("host:{host}"),
            DEAD_HOST_SIGNATURE.to_string(),
            Kind::DeadHost(host),
            Vec::new(),
        );
    }
    let split = shell::split(&f.command);
    match blame(&split.segments, &f.error) {
        Some(b) => {
            let tokens = b.program.tokens(b.segment);
            let p = b.program;
            let Program {
                shape,
                head,
                pathed,
                ..
            } = p;
            (shape, sig, Kind::Program { head, pathed }, tokens)
        }
        None => (String::new(), sig, Kind::NoProgram, Vec::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(tool: &str, command: &str, error: &str) -> Failure {
        Failure {
            tool: tool.into(),
            command: command.into(),
            error: error.into(),
            signature: String::new(),
            session: None,
            started_ms: 0,
            source: "hook".into(),
            over_limit: false,
        }
    }

    #[test]
    fn normalisation_follows_spec_6_3() {
        assert_eq!(
            normalize_error("FATAL:  database \"kai\" does not exist"),
            "fatal: database 'S' does not exist"
        );
        assert_eq!(
            normalize_error("FATAL: database 'bob' does not exist\n"),
            "fatal: database 'S' does not exist"
        );
        assert_eq!(normalize_error("exit 127 after 3.5s"), "exit # after #.#s");
        assert_eq!(normalize_error(&"x".repeat(300)).len(), 200);
        assert_eq!(normalize_error("it's broken"), "it's broken");
    }

    #[test]
    fn tool_groups_follow_spec_6_4() {
        assert_eq!(ToolGroup::of("mcp__Acme__search").glob, "mcp__Acme__*");
        assert_eq!(ToolGroup::of("mcp__Acme__search").key, "mcp__Acme__");
        assert_eq!(ToolGroup::of("mcp__x").key, "mcp__x");
        assert_eq!(ToolGroup::of("WebFetch").glob, "WebFetch");
    }

    #[test]
    fn every_shell_tool_clusters_by_command_as_the_guard_reads_it() {
        for tool in ["Bash", "PowerShell", "shell", "run_shell_command"] {
            assert!(ToolGroup::of(tool).is_bash(), "{tool}");
        }
        for tool in ["Read", "WebFetch", "mcp__bash__run", "bash"] {
            assert!(!ToolGroup::of(tool).is_bash(), "{tool}");
        }
        let err = "psql: error: FATAL: database \"kai\" does not exist";
        let clusters = build(&[failure("PowerShell", "psql -c x", err)]);
        assert_eq!(
            (
                clusters[0].shape.as_str(),
                clusters[0].kind == Kind::ToolWide
            ),
            ("psql", false)
        );
    }

    #[test]
    fn clusters_key_on_the_failing_segment_and_ids_ignore_counts() {
        let err = "psql: error: FATAL: database \"kai\" does not exist";
        let mut fs = vec![
            failure("Bash", "cd db && psql -c 'select 1'", err),
            failure(
                "Bash",
                "PGPASSWORD=*** psql -c x",
                &err.replace("kai", "bob"),
            ),
            failure(
                "Bash",
                "cd /missing",
                "cd: no such file or directory: /missing",
            ),
            failure("mcp__Acme__search", "{}", "timeout"),
            failure("mcp__Acme__fetch", "{}", "HTTP 502"),
        ];
        let clusters = build(&fs);
        assert_eq!(clusters.len(), 3);
        assert_eq!(clusters[0].count(), 2);
        assert_eq!(clusters[0].shape, "psql");
        let id = clusters[0].id();
        assert!(id.starts_with("derived-bash-psql-"), "{id}");
        let wide = clusters.iter().find(|c| c.kind == Kind::ToolWide).unwrap();
        assert_eq!((wide.count(), wide.signatures.len()), (2, 2));
        assert!(clusters.iter().any(|c| c.kind == Kind::NoProgram));
        fs.push(failure("Bash", "psql -c y", err));
        let again = build(&fs);
        assert_eq!(again[0].count(), 3);
        assert_eq!(again[0].id(), id);
    }

    #[test]
    fn dead_hosts_cluster_across_programs() {
        let fs = vec![
            failure(
                "Bash",
                "curl -sf https://api.dead.example/v1",
                "curl: (6) Could not resolve host: api.dead.example",
            ),
            failure(
                "Bash",
                "wget https://api.dead.example/x",
                "wget: unable to resolve host address 'api.dead.example'; failed to resolve api.dead.example",
            ),
        ];
        let clusters = build(&fs);
        assert_eq!(clusters.len(), 1);
        assert_eq!(clusters[0].kind, Kind::DeadHost("api.dead.example".into()));
    }
}
