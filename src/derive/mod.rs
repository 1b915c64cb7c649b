//! Derive: from recorded failures to candidate rules a reviewer would keep.
//!
//! The pipeline, one file per step, over a [`Window`] of the store: `calls` (the store
//! queries), `command` (what a Bash command is made of: the failing segment's program,
//! poll loops, dead hosts), `cluster` (failures grouped by tool group, shape and signature,
//! with stable ids), `tool_causes` (a file tool's failures split by cause: a directory, a
//! file not read, a recurring missing path, with the condition that keys each; a path's
//! spellings as one key and one pattern in `spellings`, a path's written form as the
//! cause in `path_form`) and
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
//! `derive` is the per-window function, its steps in `pipeline`: `callus derive` runs it
//! once, `report` replays it one 7-day window at a time for its funnel.
//!
//! Guarantees: every candidate is `action: "monitor"` and the document passes `guard check`
//! before it is written; refused or interrupted calls are never evidence; anecdotal evidence
//! is withheld (and reported) unless asked for; a window without any successful call yields
//! tier `unknown`, never a fabricated 100% rate; builtins are never a candidate's program.

mod backslash_path;
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
mod path_form;
mod pattern;
mod pipeline;
mod render;
mod reviewed;
mod sandbox;
mod shared;
mod spellings;
mod tool_causes;
mod tool_verdict;

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use rusqlite::Connection;

use crate::config::Home;
use crate::rules::backtest::{Backtest, Scan};
use crate::rules::layers::LayerPaths;
use crate::rules::tier::Tier;
use crate::window::Window;
use crate::{Error, Exit, Result};

use calls::Failure;
use cluster::Cluster;
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

/// Run derive over one window of the store (nothing is written): the steps in `pipeline`.
pub(crate) fn derive(conn: &Connection, options: Options) -> Result<Derivation> {
    let failures: Vec<Failure> = calls::failures(conn, &options.window)?
        .into_iter()
        .filter(|f| !options.is_excluded(&f.tool))
        .collect();
    // The clusters, each with the fewest failures it needs (see `pipeline::plan`).
    let (mut clusters, mut plans, refused) = pipeline::plan(conn, &failures, options.min_count)?;
    let (below_min, unpatterned, mut active) = pipeline::partition(&clusters, &plans);
    let groups = pipeline::tool_groups(&clusters, &active);
    // Signature first: causes spread over programs or keyed on an operand (see `shared`),
    // replayed once the scan has their calls.
    let shared_groups = shared::groups(&failures, &clusters, &active, options.min_count);
    let active_refs: Vec<&Cluster> = active.iter().map(|&i| &clusters[i]).collect();
    let literals = pipeline::scan_literals(&active_refs, &shared_groups);
    let scan = calls::scan(conn, &options.window, &groups, &literals)?;
    let no_denominator = scan.successes == 0;
    let heads = pipeline::program_heads(&active_refs, &literals);
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
    let mut proposals = Vec::new();
    for &i in &active {
        let (c, cause) = (&clusters[i], plans[i].cause.as_ref());
        if let Some((p, k)) = pipeline::propose(
            conn,
            &options.window,
            c,
            cause,
            &shapes,
            &failures,
            &mut field_contrast,
        )? {
            proposals.push((i, sandbox::condition(p, c, refused.get(&i)), k));
        }
    }
    let mut folded = pipeline::fold(&clusters, proposals);
    let (rules, matches) = pipeline::replay(conn, &clusters, &mut folded, &literals, &scan)?;
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
    // Rules-to-be, with what each fired on: merged into one candidate per lesson.
    let lessons = pipeline::judge(&mut derivation, folded, matches, &rules, &plans);
    pipeline::fold_lessons(&mut derivation, lessons, &rules);
    tool_verdict::demote_unkeyed(&mut derivation);
    pipeline::sort(&mut derivation);
    let found = environment::from_clusters(&derivation);
    derivation.environment.extend(found);
    Ok(derivation)
}

/// The attempt floor a candidate is graded with: `--min-attempts`, except for a candidate
/// whose condition derive learned by separating the failures from the successes of the
/// whole tool (`over_size`): its attempts are the calls over the threshold, and the
/// separation itself rests on every call of the tool, so `--min-count` failures over the
/// threshold suffice (an `over_size` candidate is at most `probabilistic`: its threshold is a
/// lower bound). The same holds for `program_absent`: the calls it fires on are exactly those
/// in the sessions where the program was missing. A path form (`path_form`) too: its
/// pattern matches only the calls written in that form, and the separation rests on the
/// tool's calls written otherwise; so does a Windows backslash path bash mangles
/// (`backslash_path`).
///
/// A file tool's state the host's own error named (`tool_causes`: not read, a recurring
/// missing path) is proposed from two failures in two sessions, so two attempts suffice;
/// so is a program the session's sandbox refused every time (`sandbox`).
pub(crate) fn attempt_floor(options: &Options, proposal: &Proposal) -> u64 {
    if proposal.when.is_some() || path_form::keyed(proposal) || backslash_path::keyed(proposal) {
        let floor = options.min_attempts.min(options.min_count);
        if tool_causes::host_stated(proposal) || sandbox::lowered(proposal) {
            floor.min(tool_causes::MIN_SESSIONS as u64)
        } else {
            floor
        }
    } else {
        options.min_attempts
    }
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
