//! Derive: from recorded failures to candidate rules a reviewer would keep.
//!
//! The pipeline, one file per step, over a [`Window`] of the store: `calls` (the store
//! queries), `command` (what a Bash command is made of: the failing segment's program,
//! poll loops, dead hosts), `cluster` (failures grouped by tool group, shape and signature,
//! with stable ids), `tool_causes` (a file tool's failures split by cause: a directory, a
//! file not read, a recurring missing path, with the condition that keys each; a path's
//! spellings as one key and one pattern in `spellings`) and
//! `tool_verdict` (a learned condition kept only where the replay shows it separates;
//! lessons), `shared` (signature first: failures of one specific error grouped across
//! programs and keyed on the element their calls share, or on a structure such as a
//! malformed patch; a shared cause no pattern separates is a lesson), `contrast` (missing-flag and narrowing tokens from failing vs successful
//! calls of a shape), `pattern` (the `"match": "segment"` pattern a reviewer reads), the
//! backtest ([`crate::rules::backtest`], the one shared with `rules promote`, prune and
//! report: the real matcher over the window's calls; the tier is computed on what the
//! pattern matches), `fields` (a tool-wide candidate's `unless` on an input field only its
//! successes carry: a Read with `offset`), `finding` (the verdict on each recurring
//! cluster: a rule, an environment finding such as the network not answering, or the
//! agent guessing a different missing operand each time — only rules are proposed; the
//! others are reported once, in `generated.not_rules` and the summary), `reviewed`
//! (candidates already promoted into a reviewed layer are not proposed again), `candidate`
//! (the candidate document's schema, as types), `candidates` (the document built from a
//! derivation), `merge` (its merge into a file, keeping human review notes), `render`, and
//! `explain` with its schema in `explanation`.
//!
//! `derive` is the per-window function: `callus derive` runs it once, `report` replays it
//! one 7-day window at a time for its funnel.
//!
//! Guarantees: every candidate is `action: "monitor"` and the document passes `guard check`
//! before it is written; refused or interrupted calls are never evidence; anecdotal evidence
//! is withheld (and reported) unless asked for; a window without any successful call yields
//! tier `unknown`, never a fabricated 100% rate; builtins are never a candidate's program.

mod calls;
mod candidate;
mod candidates;
mod cluster;
mod command;
mod context;
mod contrast;
mod environment;
mod explain;
mod explanation;
mod fields;
mod finding;
mod merge;
mod overlap;
mod pattern;
mod render;
mod reviewed;
mod shared;
mod spellings;
mod tool_causes;
mod tool_verdict;

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use rusqlite::Connection;

use crate::config::Home;
use crate::rules::backtest::{self, Backtest, Scan, Target};
use crate::rules::layers::LayerPaths;
use crate::rules::tier::Tier;
use crate::window::Window;
use crate::{Error, Exit, Result};

use calls::Failure;
use cluster::{Cluster, Kind};
use contrast::{Contrast, ShapeStats};
use finding::FindingKind;
use pattern::Proposal;

/// Tools left out by default: searching and bookkeeping tools whose failures say
/// nothing about a command. `Bash` is never among them, and `Read` no longer is: its failures
/// cluster by signature (its size limit recurs), and what is not a failure is left out by
/// outcome class, not by tool.
pub(crate) const DEFAULT_EXCLUDED: &[&str] =
    &["Skill", "Glob", "Grep", "TodoWrite", "NotebookRead"];

/// Fewest failures a cluster needs by default (`--min-count`).
pub(crate) const DEFAULT_MIN_COUNT: u64 = 3;

/// What to derive from.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    /// The window.
    pub window: Window,
    /// Fewest failures a cluster needs.
    pub min_count: u64,
    /// Fewest attempts for a tier better than anecdotal.
    pub min_attempts: u64,
    /// Propose anecdotal clusters (capped at monitor) instead of withholding them.
    pub keep_anecdotal: bool,
    /// Tool-name globs to leave out.
    pub excluded: Vec<String>,
    /// Rule ids declared in a reviewed layer (user, project, `$CALLUS_RULES`), with where:
    /// a candidate promoted there is not proposed again (see `reviewed`).
    pub reviewed: BTreeMap<String, String>,
}

impl Options {
    /// Derive's defaults over `window`: `--min-count 3 --min-attempts 5`, anecdotal clusters
    /// withheld, the default exclusions, no reviewed layer consulted.
    #[must_use]
    pub(crate) fn new(window: Window) -> Self {
        Options {
            window,
            min_count: DEFAULT_MIN_COUNT,
            min_attempts: crate::rules::tier::MIN_ATTEMPTS,
            keep_anecdotal: false,
            excluded: DEFAULT_EXCLUDED.iter().map(|s| (*s).to_string()).collect(),
            reviewed: BTreeMap::new(),
        }
    }

    /// Options from a request, with the window resolved against now.
    pub(crate) fn from_request(args: &Request) -> Result<Self> {
        let window = Window::parse(&args.since, args.until.as_deref(), crate::store::now_ms())?;
        let Options { mut excluded, .. } = Options::new(window);
        for t in &args.exclude_tool {
            if !excluded.contains(t) {
                excluded.push(t.clone());
            }
        }
        excluded.retain(|t| !args.include_tool.contains(t));
        if args.min_count == 0 {
            return Err(Error::Invalid("--min-count must be at least 1".into()));
        }
        Ok(Options {
            window,
            min_count: args.min_count,
            min_attempts: args.min_attempts,
            keep_anecdotal: args.keep_anecdotal,
            excluded,
            reviewed: BTreeMap::new(),
        })
    }

    fn is_excluded(&self, tool: &str) -> bool {
        self.excluded
            .iter()
            .any(|g| crate::rules::glob::matches(g, tool))
    }
}

/// One candidate (or withheld cluster) with everything behind it.
#[derive(Debug, Clone)]
pub(crate) struct Derived {
    /// Indices into [`Derivation::clusters`]; the first is the primary (largest) cluster,
    /// the rest proposed the very same rule and were folded in.
    pub clusters: Vec<usize>,
    /// The pattern and how it was found.
    pub proposal: Proposal,
    /// The contrast behind it (program clusters).
    pub contrast: Option<Contrast>,
    /// What the pattern matched in the window.
    pub backtest: Backtest,
    /// Tier of the matched population.
    pub tier: Tier,
    /// Failure rate of the matched population (`None` without a denominator).
    pub rate: Option<f64>,
    /// Attempts in the matched population (`None` without a denominator).
    pub attempts: Option<u64>,
    /// The candidate rule, ready for the document.
    pub rule: candidate::Candidate,
}

impl Derived {
    /// The candidate id.
    pub(crate) fn id(&self) -> &str {
        &self.rule.id
    }
}

/// The result of one derive run.
#[derive(Debug)]
pub(crate) struct Derivation {
    /// The options it ran with.
    pub options: Options,
    /// The window's failures (excluded tools dropped).
    pub failures: Vec<Failure>,
    /// Every cluster, largest first.
    pub clusters: Vec<Cluster>,
    /// The calls the scan kept.
    pub scan: Scan,
    /// Per-shape success statistics.
    pub shapes: HashMap<String, ShapeStats>,
    /// Candidates proposed.
    pub candidates: Vec<Derived>,
    /// Anecdotal clusters withheld.
    pub withheld: Vec<Derived>,
    /// Candidates not proposed again because a reviewed layer already declares their id,
    /// with that layer's file.
    pub promoted: Vec<(Derived, String)>,
    /// Clusters at or above the threshold that ran only builtins (indices into `clusters`).
    pub unpatterned: Vec<usize>,
    /// Clusters below `min_count`.
    pub below_min: usize,
    /// Proposals whose pattern matched none of their failures (not proposed).
    pub unmatched: usize,
    /// Failures of the host's shell or tool and of the environment (the network), by kind
    /// (never candidates).
    pub environment: Vec<environment::Finding>,
    /// Recurring clusters the outcome model says are no rule (see `finding`): the
    /// environment's failures and the agent's guesses, with their verdict.
    pub not_rules: Vec<(Derived, FindingKind)>,
    /// When the window holds no settled call: the span of the whole store, if any.
    pub store_span: Option<(i64, i64)>,
    /// No successful call in the window: no denominator, every tier unknown.
    pub no_denominator: bool,
}

/// Run derive over one window of the store (nothing is written).
// the derive pipeline in order (scan, cluster, propose, replay, tier, verdict, fold); each stage is
// commented and calls its module; splitting it is left for a later issue
#[allow(clippy::too_many_lines)]
pub(crate) fn derive(conn: &Connection, options: Options) -> Result<Derivation> {
    let failures: Vec<Failure> = calls::failures(conn, &options.window)?
        .into_iter()
        .filter(|f| !options.is_excluded(&f.tool))
        .collect();
    // A file tool's failures split by cause first (its missing paths by path), each with the
    // fewest failures it needs (see `tool_causes`).
    let (mut clusters, mut plans): (Vec<Cluster>, Vec<tool_causes::Plan>) =
        tool_causes::split(cluster::build(&failures), &failures, options.min_count)
            .into_iter()
            .unzip();
    let mut below_min = 0;
    let mut unpatterned = Vec::new();
    let mut active = Vec::new();
    for (i, c) in clusters.iter().enumerate() {
        if (c.count() as u64) < plans[i].floor {
            below_min += 1;
        } else if c.kind == Kind::NoProgram {
            unpatterned.push(i);
        } else {
            active.push(i);
        }
    }
    // Tool groups: Bash first (index 0), then each tool-wide group.
    let mut groups: Vec<String> = vec!["Bash".into()];
    for &i in &active {
        if clusters[i].kind == Kind::ToolWide && !groups.contains(&clusters[i].group.glob) {
            groups.push(clusters[i].group.glob.clone());
        }
    }
    // Signature first: causes spread over programs or keyed on an operand (see `shared`),
    // replayed once the scan has their calls.
    let shared_groups = shared::groups(&failures, &clusters, &active, options.min_count);
    let active_refs: Vec<&Cluster> = active.iter().map(|&i| &clusters[i]).collect();
    let mut proposals: Vec<(usize, Proposal, Option<Contrast>)> = Vec::new();
    let mut literals: Vec<String> = Vec::new();
    // Contrast needs the successes, which the scan collects; the scan needs the literals,
    // which the cluster kinds already fix (the program, host or `sleep`), so scan first.
    for c in &active_refs {
        let lit = match &c.kind {
            Kind::Program { head, .. } => Some(head.to_ascii_lowercase()),
            Kind::DeadHost(h) => Some(h.clone()),
            Kind::PollLoop => Some("sleep".to_string()),
            Kind::Shared(s) => Some(s.literal.clone()),
            Kind::ToolWide | Kind::NoProgram => None,
        };
        if let Some(l) = lit
            && !literals.contains(&l)
        {
            literals.push(l);
        }
    }
    for l in shared_groups
        .iter()
        .flat_map(|g| &g.candidates)
        .map(|p| &p.literal)
    {
        if !literals.contains(l) {
            literals.push(l.clone());
        }
    }
    let scan = calls::scan(conn, &options.window, &groups, &literals)?;
    let no_denominator = scan.successes == 0;
    let heads: Vec<u32> = active_refs
        .iter()
        .filter_map(|c| match &c.kind {
            Kind::Program { head, .. } => literals
                .iter()
                .position(|l| *l == head.to_ascii_lowercase())
                .map(|i| i as u32),
            _ => None,
        })
        .collect();
    let shapes = contrast::shape_stats(&scan.calls, &active_refs, &heads);
    for c in shared::resolve(shared_groups, &failures, &scan.calls) {
        active.push(clusters.len());
        plans.push(tool_causes::Plan {
            cause: None,
            floor: options.min_count,
        });
        clusters.push(c);
    }
    let mut field_contrast = fields::FieldContrast::new(&scan.calls);
    for &i in &active {
        let c = &clusters[i];
        let k = matches!(c.kind, Kind::Program { .. })
            .then(|| contrast::contrast(c, shapes.get(&c.shape)));
        if let Some(mut p) = pattern::propose(c, k.as_ref()) {
            if c.kind == Kind::ToolWide
                && !c.group.key.starts_with("mcp__")
                && let Some(u) = field_contrast.unless(
                    c.failures.iter().map(|&f| failures[f].command.as_str()),
                    &c.group.glob,
                )
            {
                p = p.with_field_unless(u);
            }
            if let Kind::Program { head, .. } = &c.kind
                && program_absent(c, head, &failures)
            {
                p = p.program_absent(head);
            }
            if c.kind == Kind::ToolWide
                && let Some(bytes) = over_size(conn, &options.window, c, &failures)?
            {
                p = p.over_size(bytes);
            }
            if let Some(cause) = &plans[i].cause {
                p = tool_causes::propose(cause, &c.group.key, p);
            }
            proposals.push((i, p, k));
        }
    }
    // Clusters that propose the very same rule become one candidate (the largest names it),
    // except a tool's clusters of different signatures: each recurring signature is a
    // finding of its own, never merged into another.
    let mut folded: Vec<(Vec<usize>, Proposal, Option<Contrast>)> = Vec::new();
    for (i, p, k) in proposals {
        let c = &clusters[i];
        match folded.iter_mut().find(|(idx, q, _)| {
            let first = &clusters[idx[0]];
            first.group.glob == c.group.glob
                && *q == p
                && ((first.kind != Kind::ToolWide
                    && !shared::is_lesson(first)
                    && !shared::is_lesson(c))
                    || first.signature == c.signature)
        }) {
            Some((idx, _, _)) => idx.push(i),
            None => folded.push((vec![i], p, k)),
        }
    }
    let mut rules = folded
        .iter()
        .map(|(idx, p, _)| {
            backtest::probe(
                &candidates::skeleton(&clusters[idx[0]], p).to_map(),
                "derived candidate",
            )
        })
        .collect::<Result<Vec<_>>>()?;
    // Every pattern derive writes requires its literal in what it matches, and the scan tagged
    // each Bash call with the literals its text holds: a candidate is only tried on calls
    // carrying its literal (see `meta.backtest.scope`).
    let tags: Vec<Option<u32>> = folded
        .iter()
        .map(|(_, p, _)| {
            p.literal
                .as_ref()
                .and_then(|l| literals.iter().position(|x| x == l))
                .map(|p| p as u32)
        })
        .collect();
    // The guard's replay, conditions included.
    let history = backtest::History::new(conn, &scan.session_ids);
    let all: Vec<usize> = (0..folded.len()).collect();
    let mut matches = backtest::run_in(&targets_of(&rules, &tags, &all), &scan.calls, &history);
    // A rule that also fires on successes is conditioned on the session context its failures
    // share and its successes do not (see `context`), then replayed again.
    let mut learned = Vec::new();
    for (i, m) in matches.iter().enumerate() {
        let (idx, p, _) = &mut folded[i];
        if p.when.is_none()
            && let Some(sep) = context::learn(&m.calls, &scan.calls, conn, &scan.session_ids)
            && context::condition(p, &sep)
        {
            rules[i] = backtest::probe(
                &candidates::skeleton(&clusters[idx[0]], p).to_map(),
                "derived candidate",
            )?;
            learned.push(i);
        }
    }
    if !learned.is_empty() {
        let again = backtest::run_in(&targets_of(&rules, &tags, &learned), &scan.calls, &history);
        for (i, m) in learned.into_iter().zip(again) {
            matches[i] = m;
        }
    }
    let environment = environment::findings(conn, &options.window)?;
    let store_span = if scan.settled == 0 && failures.is_empty() {
        environment::store_span(conn)?
    } else {
        None
    };
    let mut derivation = Derivation {
        options,
        failures,
        clusters,
        scan,
        shapes,
        candidates: Vec::new(),
        withheld: Vec::new(),
        promoted: Vec::new(),
        unpatterned,
        below_min,
        unmatched: 0,
        environment,
        not_rules: Vec::new(),
        store_span,
        no_denominator,
    };
    // Rules-to-be, with what each fired on: merged below, one candidate per lesson.
    let mut lessons: Vec<(Derived, usize, overlap::Fired)> = Vec::new();
    for (ri, ((idx, proposal, contrast), m)) in folded.into_iter().zip(matches).enumerate() {
        let b = Backtest {
            errors: m.errors,
            unreplayed: m.unreplayed.values().sum(),
            ..backtest::summarize(&derivation.scan.calls, &m.calls)
        };
        let (tier, rate, attempts) = if derivation.no_denominator {
            (Tier::Unknown, None, None)
        } else {
            let (t, r) = b.tier_with(attempt_floor(&derivation.options, &proposal));
            let t = if proposal.threshold_learned() {
                crate::rules::tier::at_most_probabilistic(t)
            } else {
                t
            };
            (t, r, Some(b.matched))
        };
        let mut d = Derived {
            clusters: idx,
            proposal,
            contrast,
            backtest: b,
            tier,
            rate,
            attempts,
            rule: candidate::Candidate::default(),
        };
        let rule = &rules[ri];
        d.rule = candidates::candidate(&derivation, &d, rule);
        if !derivation.no_denominator && d.backtest.failures == 0 {
            // A pattern that matches none of its own failures proposes nothing.
            derivation.unmatched += 1;
            continue;
        }
        if let Some(layer) = reviewed::promoted_in(&derivation, &d) {
            derivation.promoted.push((d, layer));
            continue;
        }
        let primary = &derivation.clusters[d.clusters[0]];
        let verdict = if shared::is_lesson(primary) {
            FindingKind::Lesson(shared::LESSON)
        } else {
            tool_verdict::verdict(
                plans[d.clusters[0]].cause.as_ref(),
                primary.kind == Kind::ToolWide,
                &primary.group.key,
                &d.backtest,
                d.fail_count(&derivation.clusters) as u64,
                || verdict(&derivation, &d, rule),
            )
        };
        if verdict == FindingKind::Rule {
            let fired = overlap::Fired::of(&m.calls, |i| derivation.scan.calls[i].failed);
            lessons.push((d, ri, fired));
        } else {
            derivation.not_rules.push((d, verdict));
        }
    }
    // One candidate per lesson: a rule that fires on the same failures as a stronger one is
    // folded into it, its clusters kept as the stronger one's evidence (see `overlap`).
    let fired: Vec<overlap::Fired> = lessons.iter().map(|(_, _, f)| f.clone()).collect();
    let absorbers = overlap::absorbers(&fired);
    let mut more: Vec<Vec<usize>> = vec![Vec::new(); lessons.len()];
    for (i, fate) in absorbers.iter().enumerate() {
        if let overlap::Fate::Absorbed(k) = fate {
            more[*k].extend(lessons[i].0.clusters.iter().copied());
        }
    }
    for (((mut d, ri, _), fate), more) in lessons.into_iter().zip(absorbers).zip(more) {
        match fate {
            overlap::Fate::Absorbed(_) => continue,
            // A broader rule keyed on something (a pattern, a condition) is a lesson of its
            // own that also fires on the kept one's failures: it stays (narrowing it by the
            // kept one's pattern is not learned yet). One keyed on nothing is not a rule.
            overlap::Fate::Broader(_) if d.proposal.any.is_empty() && d.proposal.when.is_none() => {
                derivation
                    .not_rules
                    .push((d, FindingKind::Lesson(overlap::BROADER_LESSON)));
                continue;
            }
            overlap::Fate::Kept | overlap::Fate::Broader(_) => {}
        }
        if !more.is_empty() {
            d.clusters.extend(more);
            d.rule = candidates::candidate(&derivation, &d, &rules[ri]);
        }
        if d.tier == Tier::Anecdotal && !derivation.options.keep_anecdotal {
            derivation.withheld.push(d);
        } else {
            derivation.candidates.push(d);
        }
    }
    tool_verdict::demote_unkeyed(&mut derivation);
    let order = |d: &Derived| {
        (
            std::cmp::Reverse(d.fail_count(&derivation.clusters)),
            d.id().to_string(),
        )
    };
    derivation.candidates.sort_by_cached_key(order);
    derivation.withheld.sort_by_cached_key(order);
    derivation.promoted.sort_by_cached_key(|(d, _)| order(d));
    derivation.not_rules.sort_by_cached_key(|(d, _)| order(d));
    let found = environment::from_clusters(&derivation);
    derivation.environment.extend(found);
    Ok(derivation)
}

/// The replay targets of the rules `only` (indices into `rules` and `tags`).
fn targets_of<'r>(
    rules: &'r [crate::rules::Rule],
    tags: &[Option<u32>],
    only: &[usize],
) -> Vec<Target<'r>> {
    only.iter()
        .map(|&i| Target {
            rule: &rules[i],
            tag: tags[i],
        })
        .collect()
}

/// Do at least two, and at least half, of a program cluster's failures say the shell could
/// not find the program (`python: command not found`, exit 127 naming it)?
fn program_absent(c: &Cluster, head: &str, failures: &[Failure]) -> bool {
    let absent = c
        .failures
        .iter()
        .filter(|&&f| crate::rules::replay::not_found(&failures[f].error, None, head))
        .count();
    absent >= 2 && 2 * absent >= c.count()
}

/// The attempt floor a candidate is graded with: `--min-attempts`, except for a candidate
/// whose condition derive learned by separating the failures from the successes of the
/// whole tool (`over_size`): its attempts are the calls over the threshold, and the
/// separation itself rests on every call of the tool, so `--min-count` failures over the
/// threshold suffice (an `over_size` candidate is at most `probabilistic`: its threshold is a
/// lower bound). The same holds for `program_absent`: the calls it fires on are exactly those
/// in the sessions where the program was missing.
///
/// A file tool's state the host's own error named (`tool_causes`: not read, a recurring
/// missing path) is proposed from two failures in two sessions, so two attempts suffice.
pub(crate) fn attempt_floor(options: &Options, proposal: &Proposal) -> u64 {
    if proposal.when.is_some() {
        let floor = options.min_attempts.min(options.min_count);
        if tool_causes::host_stated(proposal) {
            floor.min(tool_causes::MIN_SESSIONS as u64)
        } else {
            floor
        }
    } else {
        options.min_attempts
    }
}

/// The size a tool-wide cluster's rule should be conditioned on, when its failures say their
/// input was over the tool's limit: at least two, and at least half, of them carry
/// `facts.over_limit`, and successful calls of the tool recorded how many bytes they
/// returned. The condition is then `file_larger_than` the largest of those, so no recorded
/// success is in its way; without a recorded size nothing is learned.
fn over_size(
    conn: &Connection,
    window: &Window,
    c: &Cluster,
    failures: &[Failure],
) -> Result<Option<u64>> {
    let over = c
        .failures
        .iter()
        .filter(|&&f| failures[f].over_limit)
        .count();
    if over < 2 || 2 * over < c.count() {
        return Ok(None);
    }
    calls::max_success_bytes(conn, window, &c.group.key)
}

/// The outcome model's verdict on a candidate-to-be (see `finding`): its failing calls, its
/// backtest and, for a guess-shaped cluster only, the operands of the successes its rule
/// matches.
fn verdict(dv: &Derivation, d: &Derived, rule: &crate::rules::Rule) -> FindingKind {
    let primary = &dv.clusters[d.clusters[0]];
    let failing = d
        .clusters
        .iter()
        .flat_map(|&i| &dv.clusters[i].failures)
        .map(|&f| {
            let f = &dv.failures[f];
            finding::FailingCall {
                operand: &f.command,
                session: f.session.as_deref(),
            }
        })
        .collect();
    // Distinct programs failing with this error (each one's own `prog:` prefix aside).
    let programs_sharing = if let Kind::Program { head, .. } = &primary.kind {
        let own = finding::without_program(&primary.signature, head);
        let heads: std::collections::HashSet<&str> = dv
            .clusters
            .iter()
            .filter_map(|c| match &c.kind {
                Kind::Program { head, .. }
                    if finding::without_program(&c.signature, head) == own =>
                {
                    Some(head.as_str())
                }
                _ => None,
            })
            .collect();
        heads.len()
    } else {
        1
    };
    let facts = finding::Facts {
        signature: &primary.signature,
        dead_host: matches!(primary.kind, Kind::DeadHost(_)),
        programs_sharing,
        failing,
        matched: (!dv.no_denominator).then_some((d.backtest.matched, d.backtest.failures)),
    };
    finding::classify(&facts, || {
        // One pass of the matcher over the scan (only for a guess-shaped cluster).
        backtest::matching(&[rule], &dv.scan.calls)
            .swap_remove(0)
            .into_iter()
            .map(|i| &dv.scan.calls[i])
            .filter(|c| !c.failed)
            .map(|c| c.command.as_str())
            .collect()
    })
}

impl Derived {
    /// Failures in the clusters behind this candidate.
    pub(crate) fn fail_count(&self, clusters: &[Cluster]) -> usize {
        self.clusters.iter().map(|&i| clusters[i].count()).sum()
    }
}

/// What `callus derive` was asked for: its window and thresholds, where its evidence is,
/// where its candidates go.
#[derive(Debug, Clone, Default)]
pub(crate) struct Request {
    /// The window's start (`--since`: a date or a duration back from `until`).
    pub since: String,
    /// The window's end (`--until`), exclusive; default now.
    pub until: Option<String>,
    /// Fewest failures in a cluster for a candidate (`--min-count`, at least 1).
    pub min_count: u64,
    /// Fewest attempts for a rate-based tier (`--min-attempts`).
    pub min_attempts: u64,
    /// Keep anecdotal clusters (`--keep-anecdotal`).
    pub keep_anecdotal: bool,
    /// Tools excluded beyond the defaults (`--exclude-tool`, globs).
    pub exclude_tool: Vec<String>,
    /// Tools put back from the defaults (`--include-tool`).
    pub include_tool: Vec<String>,
    /// Print the candidates document as JSON (`--json`).
    pub json: bool,
    /// Write the candidates there instead of `$CALLUS_HOME` (`--out FILE`).
    pub out: Option<PathBuf>,
    /// A team store to read instead of the local one (`--db`).
    pub db: Option<String>,
}

/// What `callus derive explain ID` was asked for, beside the derive request whose window
/// and thresholds it replays.
#[derive(Debug, Clone, Default)]
pub(crate) struct ExplainRequest {
    /// The candidate or cluster id.
    pub id: String,
    /// Print the explanation as JSON (`--json`).
    pub json: bool,
    /// A team store to read instead of the local one (`--db`).
    pub db: Option<String>,
    /// The candidates file the id was written to (`--out FILE`).
    pub out: Option<PathBuf>,
}

/// `callus derive explain ID`.
pub(crate) fn explain(home: &Home, args: &Request, req: &ExplainRequest) -> Result<Exit> {
    crate::record::outcome::check_settings(home)?;
    let evidence = crate::sync::evidence(req.db.as_deref(), home)?;
    explain::run(home, &evidence, args, &req.id, req.json, req.out.as_deref())
}

/// `callus derive`.
pub(crate) fn run(home: &Home, args: &Request) -> Result<Exit> {
    crate::record::outcome::check_settings(home)?;
    let mut options = Options::from_request(args)?;
    let cwd = std::env::current_dir().ok();
    options.reviewed = reviewed::load(&LayerPaths::resolve(home, cwd.as_deref()));
    // The window goes to the team store too: only its rows travel.
    let scope = crate::sync::Scope::window(&options.window);
    let evidence = crate::sync::evidence_in(args.db.as_deref(), home, &scope)?;
    let conn = open_store(&evidence)?;
    let derivation = derive(&conn, options)?;
    if derivation.no_denominator && !derivation.candidates.is_empty() {
        crate::output::eprint_text(
            "note: the window holds no successful tool calls, so no failure rate can be computed — \
             every candidate tiers as 'unknown' (capped at a nudge)\n",
        );
    }
    let document = serde_json::to_value(candidates::document(&derivation))
        .map_err(|e| Error::json("candidates", e))?;
    let target = match (&args.out, args.json) {
        (Some(path), _) => Some(path.clone()),
        (None, true) => None,
        (None, false) => Some(home.candidates_path()),
    };
    let written = match &target {
        Some(path) => Some(merge::merge_into(
            path,
            &document,
            &derivation.options.reviewed,
        )?),
        None => None,
    };
    if args.json {
        crate::output::print_json(written.as_ref().map_or(&document, |w| &w.document));
    } else {
        render::summary(&derivation, written.as_ref());
    }
    if let (Some(path), Some(w)) = (&target, &written) {
        crate::output::eprint_text(&format!(
            "wrote {} candidate rule(s) -> {} ({} new, {} updated, {} kept from earlier runs, {} retired as promoted, {} retired as stale, {} retired as no rule)\n",
            derivation.candidates.len(),
            path.display(),
            w.added,
            w.updated,
            w.kept,
            w.retired,
            w.stale,
            w.reclassified
        ));
        if w.stale > 0 {
            crate::output::eprint_text(&format!(
                "note: {} earlier candidate(s) no longer passed `guard check` (their tier disagreed with their evidence) and were retired; the next run re-derives them if the evidence is still there\n",
                w.stale
            ));
        }
    }
    Ok(Exit::Ok)
}

/// Open the store; a missing store is an input error that says how to fill one.
fn open_store(evidence: &crate::sync::Evidence) -> Result<Connection> {
    crate::store::open_existing(evidence.path())?.ok_or_else(|| {
        Error::Invalid(format!(
            "no store at {} — record some tool calls first (`callus install`, or `callus record import PATH`)",
            evidence.label()
        ))
    })
}
