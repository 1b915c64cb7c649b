//! Backtest: run rules, with the guard's own matcher, over the tool calls the store recorded.
//!
//! This is the one place a rule meets recorded history. `derive` backtests every candidate it
//! proposes (the tier is computed on what the pattern matches), `rules promote` re-runs the
//! backtest when `--pattern`/`--unless` change what a rule matches, and `guard prune` and
//! `report` split a rule's matched population at its promotion date. So a candidate's
//! evidence, a promotion's evidence and a measured effect are always the same computation.
//!
//! Only settled calls count (`success`, `failure`): a pending, interrupted or denied call is
//! neither an attempt nor a failure of its shape. Matching is [`Rule::fires`] itself —
//! `unless`, `match: segment`, `norm`, flags and all — so a backtest can never disagree with
//! the guard. The store keeps a redacted command for Bash and a redacted summary of the input
//! for other tools: a summary that is a JSON object is used as the tool input, any other text
//! is placed at each rule's `field`, which is where the recorder took it from.
//!
//! Built for stores of millions of calls: [`scan`] streams the window once and keeps only the
//! calls its caller's filter wants, tagging each with the prefilter literals its text holds;
//! [`run`] visits each call once, splitting and lowercasing it once for every rule, and tries
//! a rule only on calls of its tool and, when the rule names a tag, only on calls carrying it
//! (derive tags each call with the literal every one of its patterns requires).

use std::collections::{HashMap, HashSet};

use rusqlite::{Connection, params};
use serde::Serialize;
use serde_json::{Map, Value, json};

use super::condition::Outcome;
pub(crate) use super::replay::History;
use super::tier::{self, Tier};
use super::{Rule, Subject};
use crate::window::{Window, iso};
use crate::{Error, Result};

/// Most crossfire samples kept per rule.
pub(crate) const MAX_CROSSFIRE_SAMPLES: usize = 5;

/// One settled tool call as the store holds it.
#[derive(Debug, Clone)]
pub(crate) struct StoredCall {
    /// The host's call id (`tool_use_id`).
    pub id: String,
    /// The tool name.
    pub tool: String,
    /// The redacted command (Bash) or input summary.
    pub command: String,
    /// Whether the call failed (else it succeeded). A masked call counts as failed.
    pub failed: bool,
    /// Exit 0, but its output carries the signature of a failure of the same tool and
    /// shape (`sudo … | head`): a failure a pipe hid.
    pub masked: bool,
    /// When it started, Unix milliseconds UTC.
    pub started_ms: i64,
    /// The session, interned per scan (equal ids, equal sessions).
    pub session: Option<u32>,
    /// Prefilter tags the scan's filter attached (see [`Target::tag`]); usually empty.
    pub tags: Vec<u32>,
}

impl StoredCall {
    /// A call built by hand (tests).
    #[cfg(test)]
    #[must_use]
    pub(crate) fn new(tool: &str, command: &str, failed: bool, started_ms: i64) -> Self {
        StoredCall {
            id: String::new(),
            tool: tool.to_string(),
            command: command.to_string(),
            failed,
            masked: false,
            started_ms,
            session: None,
            tags: Vec::new(),
        }
    }

    /// Does `rule` fire on this call? A pattern that cannot run counts as not firing.
    #[must_use]
    pub(crate) fn fired_by(&self, rule: &Rule) -> bool {
        !matching(&[rule], std::slice::from_ref(self))[0].is_empty()
    }

    /// The tool input rules see: the stored JSON object, or the text at each of `fields`.
    fn input(&self, fields: &[&str]) -> Value {
        if self.command.trim_start().starts_with('{')
            && let Ok(v @ Value::Object(_)) = serde_json::from_str::<Value>(&self.command)
        {
            return v;
        }
        let mut input = Value::Object(Map::new());
        for f in fields {
            put(&mut input, f, &self.command);
        }
        input
    }
}

/// Set `text` at the dotted `field` of `input`, creating objects on the way (an existing
/// non-object on the path is left alone).
fn put(input: &mut Value, field: &str, text: &str) {
    let mut cur = input;
    let parts: Vec<&str> = field.split('.').collect();
    for (i, part) in parts.iter().enumerate() {
        let Value::Object(map) = cur else { return };
        if i + 1 == parts.len() {
            map.entry((*part).to_string())
                .or_insert_with(|| Value::String(text.to_string()));
            return;
        }
        cur = map
            .entry((*part).to_string())
            .or_insert_with(|| Value::Object(Map::new()));
    }
}

/// Parse one rule object the way the guard will, for a backtest: as a monitor rule (action,
/// message and meta play no part in what a rule matches) with every pattern compiled, so a
/// pattern that cannot compile is an error here rather than a rule that silently never fires.
pub(crate) fn probe(rule: &Map<String, Value>, file: &str) -> Result<Rule> {
    let mut probe = rule.clone();
    probe.insert("action".into(), json!("monitor"));
    probe.remove("meta");
    probe.remove("examples");
    let parsed = super::document_from_value(file, &json!({ "rules": [probe] }))?
        .rules
        .into_iter()
        .next()
        .ok_or_else(|| Error::Invalid(format!("{file}: the rule did not parse")))?;
    for p in parsed.any.iter().chain(&parsed.unless) {
        p.compile().map_err(|e| Error::Ruleset {
            file: file.to_string(),
            rule: Some(parsed.id.clone()),
            field: Some("any/unless".into()),
            msg: format!("bad regex '{}': {e}", p.source()),
        })?;
    }
    Ok(parsed)
}

/// The scan's masked column: a success whose stored signature is a failure's of the same
/// tool and shape (evaluated only for the rare successes that stored one).
const MASKED: &str = "(t.status = 'success' AND t.signature IS NOT NULL AND EXISTS (
    SELECT 1 FROM tool_calls f WHERE f.tool = t.tool AND f.shape = t.shape
        AND f.status = 'failure' AND substr(f.signature, -length(t.signature)) = t.signature
        AND (f.signature = t.signature OR f.signature LIKE 'exit code %')))";

/// What a [`scan`] kept and counted.
#[derive(Debug, Default)]
pub(crate) struct Scan {
    /// The calls kept, oldest first.
    pub calls: Vec<StoredCall>,
    /// Settled calls in the window (kept or not).
    pub settled: u64,
    /// Successful calls in the window (kept or not): zero means no denominator.
    pub successes: u64,
    /// The sessions of the kept calls, by the index [`StoredCall::session`] holds (what a
    /// `History` reads their rows by).
    pub session_ids: Vec<String>,
}

/// Stream the settled calls that started in `window` (all of history when `None`), keeping
/// those `keep(tool, command, tags)` accepts; `keep` may push prefilter tags for the call
/// into `tags` (cleared before each call). Calls without a start time cannot be placed in
/// time and are left out. The kept calls come back oldest first.
pub(crate) fn scan(
    conn: &Connection,
    window: Option<&Window>,
    mut keep: impl FnMut(&str, &str, &mut Vec<u32>) -> bool,
) -> Result<Scan> {
    let (since, until) = window.map_or((i64::MIN, i64::MAX), |w| (w.since_ms, w.until_ms));
    let err = |e| Error::sql("scan tool calls", e);
    // `+started_ms` keeps SQLite from walking the time index row by row when the window covers
    // most of the store; a narrow window in a large store still uses it.
    // An answer (`grep` finding nothing) ran fine: a successful attempt. A success whose
    // stored signature is that of a failure of the same tool and shape is masked.
    let sql = if covers_most(conn, since, until)? {
        "SELECT tool, status, coalesce(command, ''), session_id, started_ms, MASKED, tool_use_id
         FROM tool_calls t WHERE +started_ms >= ?1 AND +started_ms < ?2 AND status IN ('success', 'failure', 'answer')"
    } else {
        "SELECT tool, status, coalesce(command, ''), session_id, started_ms, MASKED, tool_use_id
         FROM tool_calls t WHERE started_ms >= ?1 AND started_ms < ?2 AND status IN ('success', 'failure', 'answer')"
    }
    .replace("MASKED", MASKED);
    let mut stmt = conn.prepare(&sql).map_err(err)?;
    let mut rows = stmt.query(params![since, until]).map_err(err)?;
    let mut out = Scan::default();
    let mut sessions: HashMap<String, u32> = HashMap::new();
    let mut tags: Vec<u32> = Vec::new();
    while let Some(row) = rows.next().map_err(err)? {
        let masked: bool = row.get(5).map_err(err)?;
        let failed =
            masked || row.get_ref(1).map_err(err)?.as_str().unwrap_or_default() == "failure";
        out.settled += 1;
        out.successes += u64::from(!failed);
        let tool = row.get_ref(0).map_err(err)?.as_str().unwrap_or_default();
        let command = row.get_ref(2).map_err(err)?.as_str().unwrap_or_default();
        tags.clear();
        if !keep(tool, command, &mut tags) {
            continue;
        }
        let (tool, command) = (tool.to_string(), command.to_string());
        let session: Option<String> = row.get(3).map_err(err)?;
        let session = session.map(|s| {
            let next = sessions.len() as u32;
            *sessions.entry(s).or_insert(next)
        });
        out.calls.push(StoredCall {
            id: row.get(6).map_err(err)?,
            tool,
            command,
            failed,
            masked,
            started_ms: row.get(4).map_err(err)?,
            session,
            tags: tags.clone(),
        });
    }
    out.session_ids = vec![String::new(); sessions.len()];
    for (id, i) in sessions {
        out.session_ids[i as usize] = id;
    }
    out.calls.sort_by(|a, b| {
        (a.started_ms, &a.command, a.failed).cmp(&(b.started_ms, &b.command, b.failed))
    });
    Ok(out)
}

/// Every settled call that started in `[from_ms, until_ms)` (either end open when `None`),
/// oldest first, with the session ids their `session` indices point into, so a [`History`]
/// can answer the conditions of the rules replayed over them.
pub(crate) fn load_scan(
    conn: &Connection,
    from_ms: Option<i64>,
    until_ms: Option<i64>,
) -> Result<Scan> {
    let window = Window {
        since_ms: from_ms.unwrap_or(i64::MIN),
        until_ms: until_ms.unwrap_or(i64::MAX),
    };
    scan(conn, Some(&window), |_, _, _| true)
}

/// Does `[since, until)` hold more than a third of the store? (Then a table scan beats the
/// time index.)
fn covers_most(conn: &Connection, since: i64, until: i64) -> Result<bool> {
    if since == i64::MIN && until == i64::MAX {
        return Ok(true);
    }
    let (inside, total): (i64, i64) = conn
        .query_row(
            "SELECT (SELECT count(*) FROM tool_calls WHERE started_ms >= ?1 AND started_ms < ?2),
                    (SELECT count(*) FROM tool_calls)",
            params![since, until],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .map_err(|e| Error::sql("size the window", e))?;
    Ok(inside * 3 > total)
}

/// One rule to run, and which calls it can fire on.
#[derive(Clone, Copy)]
pub(crate) struct Target<'a> {
    /// The rule.
    pub rule: &'a Rule,
    /// A prefilter tag (see [`scan`]) every call this rule can fire on carries: calls without
    /// it are not tried. `None`: every call of the rule's tool is tried.
    pub tag: Option<u32>,
}

/// The calls one rule fired on.
#[derive(Debug, Clone, Default)]
pub(crate) struct Matches {
    /// Indices into the calls, in order.
    pub calls: Vec<usize>,
    /// Calls on which a pattern could not run (backtracking budget); counted as no match.
    pub errors: u64,
    /// Calls the patterns matched whose conditions history could not answer, by the first
    /// condition it could not: counted as no match.
    pub unreplayed: std::collections::BTreeMap<&'static str, u64>,
}

/// Which targets a call of one tool is tried against.
struct Dispatch {
    untagged: Vec<usize>,
    by_tag: HashMap<u32, Vec<usize>>,
    /// Some target has a pattern, so the call's input must be built.
    needs_input: bool,
}

impl Dispatch {
    fn of(targets: &[Target<'_>], tool: &str) -> Self {
        let mut d = Dispatch {
            untagged: Vec::new(),
            by_tag: HashMap::new(),
            needs_input: false,
        };
        for (i, t) in targets.iter().enumerate() {
            if !super::glob::matches(&t.rule.tool, tool) {
                continue;
            }
            d.needs_input |=
                !t.rule.any.is_empty() || !t.rule.unless.is_empty() || t.rule.when.is_some();
            match t.tag {
                Some(tag) => d.by_tag.entry(tag).or_default().push(i),
                None => d.untagged.push(i),
            }
        }
        d
    }
}

/// Run every target over `calls` without history: a rule with conditions matches nothing
/// (each match is counted as unreplayed).
#[must_use]
pub(crate) fn run(targets: &[Target<'_>], calls: &[StoredCall]) -> Vec<Matches> {
    run_in(targets, calls, &History::none())
}

/// Run every target over `calls`, as the guard would have decided: patterns first, then a
/// rule's conditions answered from `history` ([`super::replay`]); a condition history
/// cannot answer does not hold (the call is counted in [`Matches::unreplayed`]). Calls are
/// the outer loop, so each call's input, lowercase copy and shell split are computed once and
/// shared by every rule tried on it.
#[must_use]
pub(crate) fn run_in(
    targets: &[Target<'_>],
    calls: &[StoredCall],
    history: &History<'_>,
) -> Vec<Matches> {
    // A stored summary (a Read's path) is placed at every field a rule reads: its `field`
    // and the fields its path conditions name.
    let mut fields: Vec<&str> = targets
        .iter()
        .flat_map(|t| {
            std::iter::once(t.rule.field.as_str()).chain(
                t.rule
                    .when
                    .as_deref()
                    .into_iter()
                    .flat_map(super::condition::When::fields),
            )
        })
        .collect();
    fields.sort_unstable();
    fields.dedup();
    let mut out = vec![Matches::default(); targets.len()];
    let mut by_tool: HashMap<&str, Dispatch> = HashMap::new();
    let mut todo: Vec<usize> = Vec::new();
    for (ci, call) in calls.iter().enumerate() {
        let d = by_tool
            .entry(call.tool.as_str())
            .or_insert_with(|| Dispatch::of(targets, &call.tool));
        todo.clear();
        todo.extend(&d.untagged);
        for tag in &call.tags {
            if let Some(list) = d.by_tag.get(tag) {
                todo.extend(list);
            }
        }
        if todo.is_empty() {
            continue;
        }
        // A rule without patterns fires on its tool alone: it never reads the input.
        let input = if d.needs_input {
            call.input(&fields)
        } else {
            Value::Null
        };
        let subject = Subject::new(&call.tool, &input);
        let mut facts = None;
        for &i in &todo {
            let rule = targets[i].rule;
            match rule.fires(&subject) {
                Ok(Some(_)) => {}
                Ok(None) => continue,
                Err(_) => {
                    out[i].errors += 1;
                    continue;
                }
            }
            let Some(when) = rule.when.as_deref() else {
                out[i].calls.push(ci);
                continue;
            };
            let facts =
                facts.get_or_insert_with(|| history.facts(&call.id, call.session, call.started_ms));
            match when.eval(&input, facts.as_ref()) {
                Outcome::Holds => out[i].calls.push(ci),
                Outcome::Fails => {}
                Outcome::Unknown(key) => *out[i].unreplayed.entry(key).or_default() += 1,
            }
        }
    }
    out
}

/// For each rule, the indices of the calls it fires on, conditions answered from `history`
/// ([`run_in`]; a call whose conditions history cannot answer is not counted).
#[must_use]
pub(crate) fn matching_in(
    rules: &[&Rule],
    calls: &[StoredCall],
    history: &History<'_>,
) -> Vec<Vec<usize>> {
    let targets: Vec<Target<'_>> = rules
        .iter()
        .map(|&rule| Target { rule, tag: None })
        .collect();
    run_in(&targets, calls, history)
        .into_iter()
        .map(|m| m.calls)
        .collect()
}

/// For each rule, the indices of the calls it fires on.
#[must_use]
pub(crate) fn matching(rules: &[&Rule], calls: &[StoredCall]) -> Vec<Vec<usize>> {
    let targets: Vec<Target<'_>> = rules
        .iter()
        .map(|&rule| Target { rule, tag: None })
        .collect();
    run(&targets, calls).into_iter().map(|m| m.calls).collect()
}

/// What a rule's pattern matches in a set of recorded calls.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub(crate) struct Backtest {
    /// Settled calls the rule fires on (the attempt count).
    pub matched: u64,
    /// Failures among them.
    pub failures: u64,
    /// Successful calls it fires on: what enforcing it would have got in the way of.
    pub crossfire: u64,
    /// Failures among the matched calls that exited 0 with a known failure's signature in
    /// their output (counted in `failures`).
    pub masked: u64,
    /// Distinct sessions among the matched failures (how widespread the failure is).
    pub sessions: u64,
    /// Distinct UTC days among the matched failures.
    pub days: u64,
    /// Earliest matched failure, Unix ms (RFC 3339 in JSON).
    #[serde(serialize_with = "opt_iso")]
    pub first_seen: Option<i64>,
    /// Latest matched failure, Unix ms (RFC 3339 in JSON).
    #[serde(serialize_with = "opt_iso")]
    pub last_seen: Option<i64>,
    /// Calls on which a pattern could not run (backtracking budget); counted as no match.
    pub errors: u64,
    /// Calls the patterns matched whose conditions history could not answer: counted as no
    /// match (only a rule with conditions has any).
    #[serde(skip_serializing_if = "is_zero")]
    pub unreplayed: u64,
    /// Index of the first matched failure (a `should_fire` example).
    #[serde(skip)]
    pub failure_sample: Option<usize>,
    /// Indices of the first [`MAX_CROSSFIRE_SAMPLES`] matched successes.
    #[serde(skip)]
    pub crossfire_samples: Vec<usize>,
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if passes a reference
fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[allow(clippy::ref_option)] // serde's serialize_with passes a reference
fn opt_iso<S: serde::Serializer>(ms: &Option<i64>, s: S) -> std::result::Result<S::Ok, S::Error> {
    match ms {
        Some(ms) => s.serialize_str(&iso(*ms)),
        None => s.serialize_none(),
    }
}

impl Backtest {
    /// Failures over matched calls, rounded to 4 places; `None` when nothing matched.
    #[must_use]
    pub(crate) fn fail_rate(&self) -> Option<f64> {
        (self.matched > 0).then(|| round4(self.failures as f64 / self.matched as f64))
    }

    /// The evidence tier of the matched population and its failure rate (see
    /// docs/rule-format.md#evidence-caps-the-action).
    #[must_use]
    pub(crate) fn tier(&self) -> (Tier, Option<f64>) {
        self.tier_with(tier::MIN_ATTEMPTS)
    }

    /// [`Backtest::tier`] with another attempt floor (`derive --min-attempts`).
    #[must_use]
    pub(crate) fn tier_with(&self, min_attempts: u64) -> (Tier, Option<f64>) {
        let (t, rate) = tier::classify(self.failures, self.matched, min_attempts);
        (tier::capped_by_spread(t, self.sessions, self.days), rate)
    }
}

/// Round a rate to 4 decimal places (the precision `fail_rate` is written with).
#[must_use]
pub(crate) fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

/// Summarise the matched calls `idx` (indices into `calls`, in order).
#[must_use]
pub(crate) fn summarize(calls: &[StoredCall], idx: &[usize]) -> Backtest {
    let mut out = Backtest::default();
    let mut sessions: HashSet<u32> = HashSet::new();
    let mut days: HashSet<i64> = HashSet::new();
    for &i in idx {
        let call = &calls[i];
        out.matched += 1;
        if call.failed {
            out.failures += 1;
            out.masked += u64::from(call.masked);
            if let Some(s) = call.session {
                sessions.insert(s);
            }
            days.insert(call.started_ms.div_euclid(86_400_000));
            out.first_seen = Some(
                out.first_seen
                    .map_or(call.started_ms, |t| t.min(call.started_ms)),
            );
            out.last_seen = Some(
                out.last_seen
                    .map_or(call.started_ms, |t| t.max(call.started_ms)),
            );
            out.failure_sample.get_or_insert(i);
        } else {
            out.crossfire += 1;
            if out.crossfire_samples.len() < MAX_CROSSFIRE_SAMPLES {
                out.crossfire_samples.push(i);
            }
        }
    }
    out.sessions = sessions.len() as u64;
    out.days = days.len() as u64;
    out
}

/// Run every target over `calls` (without history) and summarise each.
#[cfg(test)]
#[must_use]
pub(crate) fn backtests(targets: &[Target<'_>], calls: &[StoredCall]) -> Vec<Backtest> {
    backtests_in(targets, calls, &History::none())
}

/// Run every target over `calls`, conditions answered from `history` ([`run_in`]), and
/// summarise each.
#[must_use]
pub(crate) fn backtests_in(
    targets: &[Target<'_>],
    calls: &[StoredCall],
    history: &History<'_>,
) -> Vec<Backtest> {
    run_in(targets, calls, history)
        .into_iter()
        .map(|m| Backtest {
            errors: m.errors,
            unreplayed: m.unreplayed.values().sum(),
            ..summarize(calls, &m.calls)
        })
        .collect()
}

/// Run `rule` over `calls`.
#[cfg(test)]
#[must_use]
pub(crate) fn backtest(rule: &Rule, calls: &[StoredCall]) -> Backtest {
    backtests(&[Target { rule, tag: None }], calls).remove(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::parse_document;

    fn rule(json: &str) -> Rule {
        parse_document("t", json).unwrap().rules.remove(0)
    }

    fn call(failed: bool, command: &str, session: u32, tags: Vec<u32>) -> StoredCall {
        StoredCall {
            session: Some(session),
            tags,
            ..StoredCall::new("Bash", command, failed, i64::from(session))
        }
    }

    #[test]
    fn backtest_uses_the_real_matcher_with_unless_and_segments() {
        let r = rule(
            r#"{"rules":[{"id":"p","tool":"Bash","match":"segment","any":["^psql\\b"],
                "unless":["\\s-h\\s"],"action":"monitor"}]}"#,
        );
        let calls = vec![
            StoredCall::new("Bash", "cd db && FOO=1 psql -c 'x'", true, 1),
            StoredCall::new("Bash", "psql -h host -c 'x'", false, 2),
            StoredCall::new("Bash", "psql -c 'y'", false, 3),
            StoredCall::new("Bash", "echo psql", true, 4),
            StoredCall::new("Write", "psql -c 'x'", true, 5),
        ];
        let b = backtest(&r, &calls);
        assert_eq!((b.matched, b.failures, b.crossfire), (2, 1, 1));
        assert_eq!((b.first_seen, b.last_seen), (Some(1), Some(1)));
        assert_eq!(
            (b.failure_sample, b.crossfire_samples.as_slice()),
            (Some(0), &[2][..])
        );
        assert!(calls[0].fired_by(&r) && !calls[1].fired_by(&r));
    }

    #[test]
    fn counts_failures_crossfire_and_the_sessions_of_failures() {
        let r = rule(
            r#"{"rules":[{"id":"c","tool":"Bash","match":"segment","any":["^psql\\b"],
                "unless":["\\s-h(?:[\\s=]|$)"],"action":"monitor"}]}"#,
        );
        let calls = vec![
            call(true, "cd db && psql -c x", 1, vec![0]),
            call(true, "psql -c y", 2, vec![0]),
            call(true, "psql -c y", 2, vec![0]),
            call(false, "psql -c z", 3, vec![0]),
            call(false, "psql -h db -c z", 3, vec![0]),
            call(true, "echo psql", 4, vec![0]),
        ];
        let t = Target {
            rule: &r,
            tag: Some(0),
        };
        let b = &backtests(&[t], &calls)[0];
        assert_eq!(
            (b.matched, b.failures, b.crossfire, b.sessions),
            (4, 3, 1, 2)
        );
        assert_eq!((b.first_seen, b.last_seen), (Some(1), Some(2)));
        assert_eq!(b.crossfire_samples, vec![3]);
        assert_eq!(b.fail_rate(), Some(0.75));
        // The same rule untagged sees the same calls: the tag only saves work.
        assert_eq!(&backtest(&r, &calls), b);
        // A tag the calls do not carry keeps the rule from being tried at all.
        let t = Target {
            rule: &r,
            tag: Some(7),
        };
        assert_eq!(backtests(&[t], &calls)[0].matched, 0);
    }

    #[test]
    fn non_bash_summaries_are_matched_at_the_rules_field() {
        let r = rule(
            r#"{"rules":[{"id":"w","tool":"Write","field":"file_path","any":["\\.env$"],
                "action":"monitor"}]}"#,
        );
        let calls = vec![
            StoredCall::new("Write", "/repo/.env", true, 1),
            StoredCall::new("Write", r#"{"file_path":"/x/.env","content":"…"}"#, true, 2),
            StoredCall::new("Write", "/repo/main.rs", false, 3),
        ];
        assert_eq!(backtest(&r, &calls).matched, 2);
        // A tool-only rule fires on every call of its tool, whatever the input.
        let wide = rule(r#"{"rules":[{"id":"t","tool":"Wr*","action":"monitor"}]}"#);
        assert_eq!(backtest(&wide, &calls).matched, 3);
    }

    #[test]
    fn conditions_are_replayed_from_the_store_and_unanswerable_ones_counted() {
        let conn = crate::store::open_in_memory().unwrap();
        conn.execute_batch(
            "INSERT INTO sessions (id, host, source, os) VALUES ('w', 'codex', 'import', 'windows'),
                 ('l', 'codex', 'import', 'linux'), ('u', 'codex', 'import', NULL);
             INSERT INTO tool_calls (tool_use_id, session_id, host, source, tool, status,
                 started_ms, command) VALUES
             ('1', 'w', 'codex', 'import', 'Bash', 'failure', 1, 'rm -r x'),
             ('2', 'w', 'codex', 'import', 'Bash', 'success', 2, 'rm -r y'),
             ('3', 'l', 'codex', 'import', 'Bash', 'failure', 3, 'rm -r x'),
             ('4', 'u', 'codex', 'import', 'Bash', 'failure', 4, 'rm -r x'),
             ('5', 'w', 'codex', 'import', 'Bash', 'failure', 5, 'ls');",
        )
        .unwrap();
        let r = rule(
            r#"{"rules":[{"id":"w","tool":"Bash","any":["^rm\\b"],"action":"monitor",
                "when":{"os":["windows"]}}]}"#,
        );
        let scan = scan(&conn, None, |_, _, _| true).unwrap();
        assert_eq!(scan.calls.len(), 5);
        let history = History::new(&conn, &scan.session_ids);
        let t = [Target {
            rule: &r,
            tag: None,
        }];
        let m = &run_in(&t, &scan.calls, &history)[0];
        let ids: Vec<&str> = m.calls.iter().map(|&i| scan.calls[i].id.as_str()).collect();
        assert_eq!(ids, ["1", "2"]);
        assert_eq!(m.unreplayed.get("os"), Some(&1));
        let b = &backtests_in(&t, &scan.calls, &history)[0];
        assert_eq!(
            (b.matched, b.failures, b.crossfire, b.unreplayed),
            (2, 1, 1, 1)
        );
        // Without history nothing can be answered.
        let b = &backtests(&t, &scan.calls)[0];
        assert_eq!((b.matched, b.unreplayed), (0, 4));
        // A tool-only rule's conditions still read the call's input.
        let edit = rule(
            r#"{"rules":[{"id":"e","tool":"Bash","action":"monitor",
                "when":{"path_missing":{"field":"command"}}}]}"#,
        );
        let b = &backtests_in(
            &[Target {
                rule: &edit,
                tag: None,
            }],
            &scan.calls,
            &history,
        )[0];
        assert_eq!(
            (b.matched, b.unreplayed),
            (0, 4),
            "a success exists; the failures say nothing"
        );
    }

    #[test]
    fn probe_parses_as_monitor_and_refuses_a_bad_pattern() {
        let ok: Map<String, Value> = serde_json::from_value(json!({"id": "x", "tool": "Bash",
            "any": ["^psql\\b"], "action": "block", "meta": {"tier": "nonsense"}}))
        .unwrap();
        let r = probe(&ok, "t").unwrap();
        assert_eq!(r.action, crate::rules::Action::Monitor);
        assert!(StoredCall::new("Bash", "psql -c x", true, 0).fired_by(&r));
        let bad: Map<String, Value> = serde_json::from_value(json!({"id": "x", "tool": "Bash",
            "any": ["(unclosed"], "action": "monitor"}))
        .unwrap();
        assert!(probe(&bad, "t").is_err());
    }
}
