//! The derive pipeline's steps, in the order [`super::derive`] runs them: clusters split
//! into those below their floor, those that ran only builtins and the active ones; the
//! literals the scan tags calls with; one proposal per active cluster, with the field,
//! program and size conditions its failures support; proposals of the very same rule folded
//! into one; the replay of every rule (conditioned on the session context where that
//! separates); each replayed rule tiered and judged (a rule, a lesson, an environment
//! finding, a guess); rules that fire on the same failures folded into one candidate per
//! lesson; and the findings sorted.
//!
//! Guarantees: every step is a function of the window's rows and the options; nothing is
//! written; the order of candidates is by failures, then id, so two runs over the same store
//! agree.

use std::collections::HashMap;

use rusqlite::Connection;

use super::calls::Failure;
use super::cluster::{Cluster, Kind};
use super::contrast::{Contrast, ShapeStats};
use super::finding::{self, FindingKind};
use super::pattern::{self, Proposal};
use super::{
    Derivation, Derived, attempt_floor, calls, candidate, candidates, context, contrast, fields,
    overlap, reviewed, sandbox, shared, tool_causes, tool_verdict,
};
use crate::Result;
use crate::rules::backtest::{self, Backtest, Matches, Scan, Target};
use crate::rules::tier::Tier;
use crate::window::Window;

/// A proposal with the clusters that propose it (the first names it) and its contrast.
pub(super) type Folded = (Vec<usize>, Proposal, Option<Contrast>);

/// What the sandbox refused each program cluster it refused (see `sandbox`), by index.
pub(super) type Refused = HashMap<usize, sandbox::Refusal>;

/// The window's clusters, each with its plan: a file tool's failures split by cause first
/// (its missing paths by path), each with the fewest failures it needs (see `tool_causes`);
/// then a program the session's sandbox refused every time, with two failures and the
/// sandbox it ran under (see `sandbox`).
pub(super) fn plan(
    conn: &Connection,
    failures: &[Failure],
    min_count: u64,
) -> Result<(Vec<Cluster>, Vec<tool_causes::Plan>, Refused)> {
    let (clusters, mut plans): (Vec<Cluster>, Vec<tool_causes::Plan>) =
        tool_causes::split(super::cluster::build(failures), failures, min_count)
            .into_iter()
            .unzip();
    let refused = sandbox::lower(conn, &clusters, failures, &mut plans)?;
    Ok((clusters, plans, refused))
}

/// The clusters below their floor (counted), those that ran only builtins, and the active
/// ones, as indices.
pub(super) fn partition(
    clusters: &[Cluster],
    plans: &[tool_causes::Plan],
) -> (usize, Vec<usize>, Vec<usize>) {
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
    (below_min, unpatterned, active)
}

/// Tool groups: Bash first (index 0), then each tool-wide group.
pub(super) fn tool_groups(clusters: &[Cluster], active: &[usize]) -> Vec<String> {
    let mut groups: Vec<String> = vec!["Bash".into()];
    for &i in active {
        if clusters[i].kind == Kind::ToolWide && !groups.contains(&clusters[i].group.glob) {
            groups.push(clusters[i].group.glob.clone());
        }
    }
    groups
}

/// The literals the scan tags Bash calls with. Contrast needs the successes, which the scan
/// collects; the scan needs the literals, which the cluster kinds already fix (the program,
/// host or `sleep`), so the scan comes first.
pub(super) fn scan_literals(active: &[&Cluster], shared_groups: &[shared::Group]) -> Vec<String> {
    let mut literals: Vec<String> = Vec::new();
    for c in active {
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
    literals
}

/// The scan tag of each program cluster's head, in order.
pub(super) fn program_heads(active: &[&Cluster], literals: &[String]) -> Vec<u32> {
    active
        .iter()
        .filter_map(|c| match &c.kind {
            Kind::Program { head, .. } => literals
                .iter()
                .position(|l| *l == head.to_ascii_lowercase())
                .map(|i| i as u32),
            _ => None,
        })
        .collect()
}

/// One active cluster's proposal and contrast, with the conditions its failures support: a
/// field only its tool's successes carry, the program missing from `PATH`, an input over
/// the tool's size limit, a file tool's cause.
pub(super) fn propose(
    conn: &Connection,
    window: &Window,
    c: &Cluster,
    cause: Option<&tool_causes::Cause>,
    shapes: &HashMap<String, ShapeStats>,
    failures: &[Failure],
    field_contrast: &mut fields::FieldContrast<'_>,
) -> Result<Option<(Proposal, Option<Contrast>)>> {
    let k =
        matches!(c.kind, Kind::Program { .. }).then(|| contrast::contrast(c, shapes.get(&c.shape)));
    let Some(mut p) = pattern::propose(c, k.as_ref()) else {
        return Ok(None);
    };
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
        && program_absent(c, head, failures)
    {
        p = p.program_absent(head);
    }
    if c.kind == Kind::ToolWide
        && let Some(bytes) = over_size(conn, window, c, failures)?
    {
        p = p.over_size(bytes);
    }
    if let Some(cause) = cause {
        p = tool_causes::propose(cause, &c.group.key, p);
    }
    Ok(Some((p, k)))
}

/// Clusters that propose the very same rule become one candidate (the largest names it),
/// except a tool's clusters of different signatures: each recurring signature is a finding
/// of its own, never merged into another.
pub(super) fn fold(
    clusters: &[Cluster],
    proposals: Vec<(usize, Proposal, Option<Contrast>)>,
) -> Vec<Folded> {
    let mut folded: Vec<Folded> = Vec::new();
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
    folded
}

/// Every folded proposal as a rule, replayed over the scan as the guard would decide it
/// (conditions included). A rule that also fires on successes is conditioned on the session
/// context its failures share and its successes do not (see `context`), then replayed again.
pub(super) fn replay(
    conn: &Connection,
    clusters: &[Cluster],
    folded: &mut [Folded],
    literals: &[String],
    scan: &Scan,
) -> Result<(Vec<crate::rules::Rule>, Vec<Matches>)> {
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
    let history = backtest::History::new(conn, &scan.session_ids);
    let all: Vec<usize> = (0..folded.len()).collect();
    let mut matches = backtest::run_in(&targets_of(&rules, &tags, &all), &scan.calls, &history);
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
    Ok((rules, matches))
}

/// Each replayed proposal tiered and judged. One that matches none of its failures counts
/// as unmatched; one a reviewed layer declares is listed as promoted; one the outcome model
/// judges no rule goes to `not_rules`. The rules are returned with what each fired on, for
/// [`fold_lessons`].
pub(super) fn judge(
    derivation: &mut Derivation,
    folded: Vec<Folded>,
    matches: Vec<Matches>,
    rules: &[crate::rules::Rule],
    plans: &[tool_causes::Plan],
) -> Vec<(Derived, usize, overlap::Fired)> {
    let mut lessons = Vec::new();
    for (ri, ((idx, proposal, contrast), m)) in folded.into_iter().zip(matches).enumerate() {
        let mut d = tiered(derivation, idx, proposal, contrast, &m);
        let rule = &rules[ri];
        d.rule = candidates::candidate(derivation, &d, rule);
        if !derivation.no_denominator && d.backtest.failures == 0 {
            // A pattern that matches none of its own failures proposes nothing.
            derivation.unmatched += 1;
            continue;
        }
        if sandbox::lowered(&d.proposal)
            && !sandbox::all_failed(&d.backtest)
            && (d.fail_count(&derivation.clusters) as u64) < derivation.options.min_count
        {
            // Proposed below the floor because the sandbox refused every call, yet it fired
            // on a success under the sandbox: the ordinary floor again, and it is below it.
            d.tier = Tier::Anecdotal;
            derivation.withheld.push(d);
            continue;
        }
        if let Some(layer) = reviewed::promoted_in(derivation, &d) {
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
                || verdict(derivation, &d, rule),
            )
        };
        if verdict == FindingKind::Rule {
            let fired = overlap::Fired::of(&m.calls, |i| derivation.scan.calls[i].failed);
            lessons.push((d, ri, fired));
        } else {
            derivation.not_rules.push((d, verdict));
        }
    }
    lessons
}

/// A replayed proposal with its backtest and tier (its rule is filled in by the caller).
fn tiered(
    derivation: &Derivation,
    clusters: Vec<usize>,
    proposal: Proposal,
    contrast: Option<Contrast>,
    m: &Matches,
) -> Derived {
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
    Derived {
        clusters,
        proposal,
        contrast,
        backtest: b,
        tier,
        rate,
        attempts,
        rule: candidate::Candidate::default(),
    }
}

/// One candidate per lesson: a rule that fires on the same failures as a stronger one is
/// folded into it, its clusters kept as the stronger one's evidence (see `overlap`); an
/// anecdotal one is withheld unless asked for.
pub(super) fn fold_lessons(
    derivation: &mut Derivation,
    lessons: Vec<(Derived, usize, overlap::Fired)>,
    rules: &[crate::rules::Rule],
) {
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
            d.rule = candidates::candidate(derivation, &d, &rules[ri]);
        }
        if d.tier == Tier::Anecdotal && !derivation.options.keep_anecdotal {
            derivation.withheld.push(d);
        } else {
            derivation.candidates.push(d);
        }
    }
}

/// Every list of findings by failures (most first), then id.
pub(super) fn sort(derivation: &mut Derivation) {
    let clusters = &derivation.clusters;
    let order = |d: &Derived| {
        (
            std::cmp::Reverse(d.fail_count(clusters)),
            d.id().to_string(),
        )
    };
    derivation.candidates.sort_by_cached_key(order);
    derivation.withheld.sort_by_cached_key(order);
    derivation.promoted.sort_by_cached_key(|(d, _)| order(d));
    derivation.not_rules.sort_by_cached_key(|(d, _)| order(d));
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
