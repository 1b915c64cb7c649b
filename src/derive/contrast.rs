//! Missing-flag contrast: what separates a cluster's failing calls from the successful calls
//! of the same shape.
//!
//! For every shape with a program cluster, the scan's successful calls that run that shape
//! (in any segment) are compared with the cluster's failures, token by token (flags without
//! their value, `--host=x` → `--host`; positional words). The figures:
//! - a **flag** present in at least [`UNLESS_SUCCESS_SHARE`] of the successes and at most
//!   [`UNLESS_FAILURE_SHARE`] of the failures becomes an `unless` clause: the failure is a
//!   missing flag; two flags absent from the failures that together reach that share (each in
//!   at least [`ALIAS_SUCCESS_SHARE`]: `-e` and `--entity`) both become clauses;
//! - a **token** present in at least [`NARROW_FAILURE_SHARE`] of the failures and at most
//!   [`NARROW_SUCCESS_SHARE`] of the successes narrows `any` (the best one): the failure is
//!   that argument;
//!   — only when the `unless` clauses do not already spare all but [`NARROW_SUCCESS_SHARE`]
//!   of the successes (the smallest change that separates the two wins);
//! - neither is attempted with fewer than [`MIN_SUCCESSES`] successes of the shape: with no
//!   successes every token looks discriminating.
//!
//! Memory stays bounded: per shape, success tokens are counted for flags and for the tokens
//! the failures carry, and at most [`MAX_TOKENS`] distinct ones (a flag in 80% of successes
//! shows up long before that cap bites).

use std::collections::{HashMap, HashSet};

use serde::Serialize;

use super::cluster::{Cluster, Kind};
use crate::rules::backtest::StoredCall;
use crate::shell;
use crate::shell::program;

/// Fewest successes of a shape before the contrast says anything.
pub(crate) const MIN_SUCCESSES: u64 = 3;
/// Share of successes a flag must appear in to become an `unless`.
pub(crate) const UNLESS_SUCCESS_SHARE: f64 = 0.80;
/// Share of failures a flag may appear in and still become an `unless`.
pub(crate) const UNLESS_FAILURE_SHARE: f64 = 0.05;
/// Share of failures a token must appear in to narrow `any`.
pub(crate) const NARROW_FAILURE_SHARE: f64 = 0.80;
/// Share of successes a token may appear in and still narrow `any`.
pub(crate) const NARROW_SUCCESS_SHARE: f64 = 0.05;
/// Share of successes each of several `unless` flags (aliases) must appear in.
pub(crate) const ALIAS_SUCCESS_SHARE: f64 = 0.20;
/// Most `unless` clauses one candidate gets.
pub(crate) const MAX_UNLESS: usize = 2;
/// Most distinct success tokens counted per shape.
pub(crate) const MAX_TOKENS: usize = 4096;
/// Most successful calls remembered per shape (samples for examples and `explain`).
pub(crate) const MAX_SAMPLES: usize = 50;

/// What the scan saw of one shape.
#[derive(Debug, Default, Clone)]
pub(crate) struct ShapeStats {
    /// Settled calls with a segment of this shape.
    pub attempts: u64,
    /// Successful ones.
    pub successes: u64,
    /// For each token, how many successes carried it.
    pub success_tokens: HashMap<String, u64>,
    /// Indices (into the scan's calls) of the first successes, oldest first.
    pub samples: Vec<usize>,
}

/// Gather [`ShapeStats`] for every program cluster's shape from the scanned Bash calls that
/// carry one of `heads` (the prefilter literals of the program clusters; other calls cannot
/// run one of their shapes and are not split).
pub(crate) fn shape_stats(
    calls: &[StoredCall],
    clusters: &[&Cluster],
    heads: &[u32],
) -> HashMap<String, ShapeStats> {
    let mut watch: HashMap<&str, HashSet<&str>> = HashMap::new();
    for c in clusters {
        if matches!(c.kind, Kind::Program { .. }) {
            let set = watch.entry(c.shape.as_str()).or_default();
            set.extend(c.tokens.iter().flatten().map(String::as_str));
        }
    }
    let mut stats: HashMap<String, ShapeStats> = HashMap::new();
    if watch.is_empty() {
        return stats;
    }
    let mut seen: Vec<String> = Vec::new();
    for (i, call) in calls.iter().enumerate() {
        // Only Bash calls carry tags (the scan's literal prefilter).
        if !call.tags.iter().any(|l| heads.contains(l)) {
            continue;
        }
        seen.clear();
        for seg in &shell::split(&call.command).segments {
            let Some(p) = program::program(seg) else {
                continue;
            };
            let Some(tokens_of_interest) = watch.get(p.shape.as_str()) else {
                continue;
            };
            if seen.contains(&p.shape) {
                continue;
            }
            let s = stats.entry(p.shape.clone()).or_default();
            s.attempts += 1;
            if !call.failed {
                s.successes += 1;
                if s.samples.len() < MAX_SAMPLES {
                    s.samples.push(i);
                }
                let tokens = p.tokens(seg);
                let mut distinct: Vec<&String> = tokens.iter().collect();
                distinct.sort();
                distinct.dedup();
                for t in distinct {
                    let wanted = t.starts_with('-') || tokens_of_interest.contains(t.as_str());
                    if !wanted {
                        continue;
                    }
                    if let Some(n) = s.success_tokens.get_mut(t) {
                        *n += 1;
                    } else if s.success_tokens.len() < MAX_TOKENS {
                        s.success_tokens.insert(t.clone(), 1);
                    }
                }
            }
            seen.push(p.shape);
        }
    }
    stats
}

/// What the contrast concluded about one token.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Verdict {
    /// Present in the successes, absent from the failures: becomes an `unless`.
    Unless,
    /// Present in the failures, absent from the successes: narrows `any`.
    Narrow,
    /// Would narrow `any`, but the `unless` clauses already spare the successes.
    Redundant,
    /// Not discriminating.
    Neither,
}

/// One token's evidence.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct TokenEvidence {
    /// The token (`--entity`, `pytest`).
    pub token: String,
    /// Successes of the shape that carry it.
    pub in_successes: u64,
    /// Failures of the cluster that carry it.
    pub in_failures: u64,
    /// What the contrast made of it.
    pub verdict: Verdict,
}

/// The contrast of one cluster.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct Contrast {
    /// Successes of the shape compared.
    pub successes: u64,
    /// Failures of the cluster compared.
    pub failures: u64,
    /// Flags that became `unless` clauses, strongest first.
    pub unless: Vec<TokenEvidence>,
    /// The token that narrows `any`, if any.
    pub narrow: Option<TokenEvidence>,
    /// Every token considered, most frequent first (for `explain`).
    pub tokens: Vec<TokenEvidence>,
}

/// Contrast `cluster`'s failures with the successes in `stats`.
// one pass over a shape's tokens with its thresholds beside it; split, the tallies would be
// threaded through helpers
#[allow(clippy::too_many_lines)]
pub(crate) fn contrast(cluster: &Cluster, stats: Option<&ShapeStats>) -> Contrast {
    let failures = cluster.count() as u64;
    let successes = stats.map_or(0, |s| s.successes);
    let mut in_failures: HashMap<&str, u64> = HashMap::new();
    for tokens in &cluster.tokens {
        let mut distinct: Vec<&str> = tokens.iter().map(String::as_str).collect();
        distinct.sort_unstable();
        distinct.dedup();
        for t in distinct {
            *in_failures.entry(t).or_default() += 1;
        }
    }
    let mut all: HashMap<&str, (u64, u64)> = HashMap::new();
    for (t, n) in &in_failures {
        all.entry(t).or_default().1 = *n;
    }
    if let Some(s) = stats {
        for (t, n) in &s.success_tokens {
            all.entry(t.as_str()).or_default().0 = *n;
        }
    }
    let share = |n: u64, of: u64| if of == 0 { 0.0 } else { n as f64 / of as f64 };
    let mut tokens: Vec<TokenEvidence> = all
        .into_iter()
        .map(|(t, (s, f))| {
            let verdict = if successes >= MIN_SUCCESSES
                && share(f, failures) >= NARROW_FAILURE_SHARE
                && share(s, successes) <= NARROW_SUCCESS_SHARE
            {
                Verdict::Narrow
            } else {
                Verdict::Neither
            };
            TokenEvidence {
                token: t.to_string(),
                in_successes: s,
                in_failures: f,
                verdict,
            }
        })
        .collect();
    // Strongest separation first; ties by name so the result is deterministic.
    let gap = |e: &TokenEvidence| {
        (share(e.in_successes, successes) - share(e.in_failures, failures)).abs()
    };
    tokens.sort_by(|a, b| {
        gap(b)
            .total_cmp(&gap(a))
            .then_with(|| (b.in_successes + b.in_failures).cmp(&(a.in_successes + a.in_failures)))
            .then_with(|| a.token.cmp(&b.token))
    });
    // `unless`: the fewest flags, strongest first, absent from the failures, that together
    // reach the success share — one flag, or two spellings of it (`-e` / `--entity`), each
    // in at least [`ALIAS_SUCCESS_SHARE`] of the successes. Shares are added as if the
    // flags never meet in one call; the backtest reports what the clauses really spare.
    let mut picked: Vec<usize> = Vec::new();
    let mut covered = 0.0;
    if successes >= MIN_SUCCESSES {
        let mut flags: Vec<usize> = (0..tokens.len())
            .filter(|&i| {
                let e = &tokens[i];
                e.token.starts_with('-')
                    && share(e.in_failures, failures) <= UNLESS_FAILURE_SHARE
                    && share(e.in_successes, successes) >= ALIAS_SUCCESS_SHARE
            })
            .collect();
        flags.sort_by(|&a, &b| {
            tokens[b]
                .in_successes
                .cmp(&tokens[a].in_successes)
                .then_with(|| tokens[a].token.cmp(&tokens[b].token))
        });
        for i in flags.into_iter().take(MAX_UNLESS) {
            picked.push(i);
            covered += share(tokens[i].in_successes, successes);
            if covered >= UNLESS_SUCCESS_SHARE {
                break;
            }
        }
    }
    if covered < UNLESS_SUCCESS_SHARE {
        picked.clear();
    }
    for &i in &picked {
        tokens[i].verdict = Verdict::Unless;
    }
    let unless: Vec<TokenEvidence> = picked.iter().map(|&i| tokens[i].clone()).collect();
    // Successes the `unless` clauses leave matched (a lower bound if the flags ever meet).
    let spared: u64 = unless.iter().map(|e| e.in_successes).sum();
    let left = successes - spared.min(successes);
    if !unless.is_empty() && share(left, successes) <= NARROW_SUCCESS_SHARE {
        for e in &mut tokens {
            if e.verdict == Verdict::Narrow {
                e.verdict = Verdict::Redundant;
            }
        }
    }
    let narrow = tokens
        .iter()
        .find(|e| e.verdict == Verdict::Narrow)
        .cloned();
    tokens.truncate(20);
    Contrast {
        successes,
        failures,
        unless,
        narrow,
        tokens,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::derive::cluster::ToolGroup;

    fn cluster(tokens: &[&[&str]]) -> Cluster {
        Cluster {
            group: ToolGroup::of("Bash"),
            shape: "python3 fetch.py".into(),
            signature: "error: missing entity".into(),
            kind: Kind::Program {
                head: "python3".into(),
                pathed: false,
            },
            failures: (0..tokens.len()).collect(),
            tokens: tokens
                .iter()
                .map(|t| t.iter().map(|s| (*s).to_string()).collect())
                .collect(),
            signatures: vec![],
        }
    }

    fn stats(successes: u64, tokens: &[(&str, u64)]) -> ShapeStats {
        ShapeStats {
            attempts: successes,
            successes,
            success_tokens: tokens.iter().map(|(t, n)| ((*t).to_string(), *n)).collect(),
            samples: vec![],
        }
    }

    #[test]
    fn a_flag_in_the_successes_only_becomes_unless() {
        let c = cluster(&[&["--all"], &["--all", "-v"], &["--all"], &["-v"]]);
        let s = stats(10, &[("--entity", 9), ("-v", 5), ("--all", 0)]);
        let k = contrast(&c, Some(&s));
        assert_eq!(k.unless.len(), 1);
        assert_eq!(k.unless[0].token, "--entity");
        assert_eq!((k.unless[0].in_successes, k.unless[0].in_failures), (9, 0));
        // --all: in 3 of 4 failures (75% < 80%): not enough to narrow.
        assert!(k.narrow.is_none());
        // In every failure it would narrow, but --entity already spares the successes.
        let c = cluster(&[&["--all"], &["--all"], &["--all"], &["--all"]]);
        let k = contrast(&c, Some(&stats(20, &[("--entity", 20)])));
        assert!(k.narrow.is_none());
        let all = k.tokens.iter().find(|e| e.token == "--all").unwrap();
        assert_eq!(all.verdict, Verdict::Redundant);
    }

    #[test]
    fn two_spellings_of_a_missing_flag_both_become_unless() {
        let c = cluster(&[&["--all"], &["-v"], &["--all"], &["-v"]]);
        let k = contrast(
            &c,
            Some(&stats(10, &[("--entity", 5), ("-e", 4), ("-v", 3)])),
        );
        let flags: Vec<&str> = k.unless.iter().map(|e| e.token.as_str()).collect();
        assert_eq!(flags, vec!["--entity", "-e"]);
        // Not enough together: nothing.
        let k = contrast(&c, Some(&stats(10, &[("--entity", 4), ("-e", 3)])));
        assert!(k.unless.is_empty());
    }

    #[test]
    fn a_token_in_the_failures_only_narrows() {
        let c = cluster(&[&["--all"], &["--all"], &["--all"], &["--all", "x"]]);
        let k = contrast(&c, Some(&stats(20, &[("--all", 1)])));
        assert_eq!(k.narrow.as_ref().unwrap().token, "--all");
        assert!(k.unless.is_empty());
    }

    #[test]
    fn too_few_successes_say_nothing() {
        let c = cluster(&[&["--all"], &["--all"], &["--all"]]);
        let k = contrast(&c, Some(&stats(2, &[("--entity", 2)])));
        assert!(k.unless.is_empty() && k.narrow.is_none());
        assert!(contrast(&c, None).narrow.is_none());
    }
}
