//! The candidate file: a derive run's document merged into it.
//!
//! Merging (`$CALLUS_HOME/candidates.json` by default, or `--out FILE`) updates a candidate in
//! place when its id, or the id of any cluster folded into it, is already in the file; it keeps
//! what a human added: meta keys derive does not own (`review`, `note`, …), a message that no
//! longer starts with `DRAFT`, the first `added` date, and rule keys derive does not write
//! (`pinned`). Derive owns the pattern and the evidence: refine a pattern by promoting it.
//! Candidates from earlier runs that did not recur are kept unchanged, except one whose id a
//! reviewed layer now declares: it was promoted, and is retired from the file (see
//! `reviewed`). The merged document must pass `guard check` before it replaces the file
//! (atomically, private to the user).

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Map, Value};

use crate::{Error, Result};

/// Meta keys derive writes; any other meta key is a human's and survives a merge. The
/// fields of `candidate::Meta` (tested there).
pub(super) const DERIVED_META: &[&str] = &[
    "why",
    "added",
    "telemetry_ref",
    "kind",
    "fail_count",
    "cluster_fail_count",
    "masked_count",
    "error_signature",
    "distinct_signatures",
    "command_shape",
    "sample_command",
    "sample_error",
    "first_seen",
    "last_seen",
    "tier",
    "tier_basis",
    "attempt_count",
    "failure_sessions",
    "failure_days",
    "threshold_learned",
    "min_attempts",
    "fail_rate",
    "action_ceiling",
    "backtest",
    "contrast",
    "field_contrast",
    "shape_attempts",
    "crossfire_note",
    "clusters",
    "window",
];

/// What a merge did.
#[derive(Debug)]
pub(crate) struct Written {
    /// The document as written.
    pub document: Value,
    /// Candidates new to the file.
    pub added: usize,
    /// Candidates updated in place.
    pub updated: usize,
    /// Earlier candidates left as they were.
    pub kept: usize,
    /// Earlier candidates removed because a reviewed layer now declares them (promoted).
    pub retired: usize,
    /// Earlier candidates removed because this run judged them no rule (see `finding`).
    pub reclassified: usize,
    /// Earlier candidates removed because they no longer pass `guard check` (written by an
    /// older callus or edited by hand, their evidence no longer agrees with their tier).
    pub stale: usize,
}

/// Merge `doc` into the candidate file at `path` (created if absent) and write it, retiring
/// the candidates whose id is in `promoted` (declared by a reviewed layer).
pub(crate) fn merge_into(
    path: &Path,
    doc: &Value,
    promoted: &BTreeMap<String, String>,
) -> Result<Written> {
    let name = path.display().to_string();
    let existing: Option<Value> = match std::fs::read_to_string(path) {
        Ok(text) => Some(serde_json::from_str(&text).map_err(|e| Error::json(&name, e))?),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(Error::io(path, e)),
    };
    let mut written = merge(existing.as_ref(), doc, &name, promoted)?;
    let mut text = serde_json::to_string_pretty(&written.document).unwrap_or_default() + "\n";
    let mut report = crate::rules::check::check_text(&name, &text);
    if !report.ok {
        // An earlier candidate this run did not re-derive cannot be re-graded (its evidence
        // is not in the window): one that no longer passes the check is retired, never a
        // reason to abort the run.
        let fresh: Vec<&str> = doc["rules"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| r.get("id").and_then(Value::as_str))
            .collect();
        let failing: Vec<String> = report
            .errors
            .iter()
            .chain(&report.example_failures)
            .filter_map(|e| e.split_once(": ").map(|(id, _)| id.to_string()))
            .filter(|id| !fresh.contains(&id.as_str()))
            .collect();
        if let Some(Value::Array(rules)) = written.document.get_mut("rules") {
            let before = rules.len();
            rules.retain(|r| {
                !r.get("id")
                    .and_then(Value::as_str)
                    .is_some_and(|id| failing.iter().any(|f| f == id))
            });
            written.stale = before - rules.len();
            written.kept = written.kept.saturating_sub(written.stale);
        }
        text = serde_json::to_string_pretty(&written.document).unwrap_or_default() + "\n";
        report = crate::rules::check::check_text(&name, &text);
    }
    if !report.ok {
        let mut problems = report.errors;
        problems.extend(report.example_failures);
        return Err(Error::Ruleset {
            file: name,
            rule: None,
            field: None,
            msg: format!(
                "the merged candidates would not pass guard check, nothing written: {}",
                problems.join("; ")
            ),
        });
    }
    write_private(path, &text)?;
    Ok(written)
}

/// Merge the new document into an existing one (pure; see the module docs for the policy).
pub(crate) fn merge(
    existing: Option<&Value>,
    new: &Value,
    name: &str,
    promoted: &BTreeMap<String, String>,
) -> Result<Written> {
    let (top, mut rules) = existing_parts(existing, name)?;
    let before = rules.len();
    rules.retain(|old| !cluster_ids(old).iter().any(|id| promoted.contains_key(id)));
    let retired = before - rules.len();
    // An earlier candidate this run judged no rule (an environment finding, a guess) is
    // retired: it recurred, and the outcome model says what it is instead.
    let not_rules: Vec<&str> = new["generated"]["not_rules"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|n| n["id"].as_str())
        .collect();
    let before = rules.len();
    rules.retain(|old| {
        !cluster_ids(old)
            .iter()
            .any(|id| not_rules.contains(&id.as_str()))
    });
    let reclassified = before - rules.len();
    let mut touched = vec![false; rules.len()];
    let (mut added, mut updated) = (0, 0);
    for cand in new["rules"].as_array().into_iter().flatten() {
        let ids = cluster_ids(cand);
        let found = rules.iter().position(|old| {
            old.get("id")
                .and_then(Value::as_str)
                .is_some_and(|id| ids.iter().any(|x| x == id))
        });
        if let Some(j) = found {
            rules[j] = merge_rule(&rules[j], cand);
            touched[j] = true;
            updated += 1;
        } else {
            rules.push(cand.clone());
            touched.push(true);
            added += 1;
        }
    }
    let kept = touched.iter().filter(|t| !**t).count();
    // The new document's keys, in its order (the `Document` type's), its rules merged.
    let mut out = Map::new();
    let mut rules = Some(rules);
    for (key, value) in new.as_object().into_iter().flatten() {
        let value = match key.as_str() {
            "rules" => Value::Array(rules.take().unwrap_or_default()),
            _ => value.clone(),
        };
        out.insert(key.clone(), value);
    }
    // Anything else a human put at the top level stays.
    for (k, v) in top {
        out.entry(k).or_insert(v);
    }
    Ok(Written {
        stale: 0,
        reclassified,
        document: Value::Object(out),
        added,
        updated,
        kept,
        retired,
    })
}

/// An existing candidate file's top level without its rules, and its rules; an error, and
/// nothing overwritten, when it is not a document whose `rules` is an array.
fn existing_parts(
    existing: Option<&Value>,
    name: &str,
) -> Result<(Map<String, Value>, Vec<Value>)> {
    let refuse = |field: Option<&str>, msg: &str| Error::Ruleset {
        file: name.to_string(),
        rule: None,
        field: field.map(str::to_string),
        msg: msg.into(),
    };
    let mut top = match existing {
        None => Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(_) => {
            return Err(refuse(
                None,
                "top level is not a JSON object; refusing to overwrite it",
            ));
        }
    };
    let rules = match top.remove("rules") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a,
        Some(_) => {
            return Err(refuse(
                Some("rules"),
                "must be an array; refusing to overwrite it",
            ));
        }
    };
    Ok((top, rules))
}

/// The candidate's id and the ids of every cluster folded into it.
fn cluster_ids(cand: &Value) -> Vec<String> {
    let mut ids: Vec<String> = cand["id"]
        .as_str()
        .map(str::to_string)
        .into_iter()
        .collect();
    for c in cand["meta"]["clusters"].as_array().into_iter().flatten() {
        if let Some(id) = c["id"].as_str() {
            ids.push(id.to_string());
        }
    }
    ids
}

/// The new candidate, keeping the old id and what a human added to the old one.
fn merge_rule(old: &Value, new: &Value) -> Value {
    let (Value::Object(old), Value::Object(new)) = (old, new) else {
        return new.clone();
    };
    let mut out = new.clone();
    if let Some(id) = old.get("id") {
        out.insert("id".into(), id.clone());
    }
    if let Some(Value::String(m)) = old.get("message")
        && !m.trim_start().starts_with("DRAFT")
    {
        out.insert("message".into(), Value::String(m.clone()));
    }
    if let (Some(Value::Object(old_meta)), Some(Value::Object(meta))) =
        (old.get("meta"), out.get_mut("meta"))
    {
        for (k, v) in old_meta {
            if k == "added" || !DERIVED_META.contains(&k.as_str()) {
                meta.insert(k.clone(), v.clone());
            }
        }
    }
    for (k, v) in old {
        if !out.contains_key(k) {
            out.insert(k.clone(), v.clone());
        }
    }
    Value::Object(out)
}

/// Write `text` to `path` atomically, in a private directory.
fn write_private(path: &Path, text: &str) -> Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    crate::config::ensure_private_dir(dir)?;
    crate::config::replace_file(path, text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[allow(clippy::needless_pass_by_value)] // call sites read as a literal document
    fn doc(rules: Value) -> Value {
        json!({"ruleset": "derived-candidates", "bias": "fail-open", "description": "d",
               "rules": rules, "dropped_anecdotal": [], "generated": {}, "window": {}, "caveat": "c"})
    }

    #[test]
    fn merge_keeps_human_notes_and_earlier_candidates() {
        let old = doc(json!([
            {"id": "derived-bash-psql-aaaa", "tool": "Bash", "action": "monitor",
             "message": "Bare psql: use scripts/db.py", "pinned": true,
             "meta": {"fail_count": 3, "added": "2026-06-01", "review": "looks right — kai"}},
            {"id": "derived-bash-old-bbbb", "tool": "Bash", "action": "monitor", "meta": {}}
        ]));
        let new = doc(json!([
            {"id": "derived-bash-psql-cccc", "tool": "Bash", "action": "monitor",
             "message": "DRAFT — new", "meta": {"fail_count": 9, "added": "2026-07-08",
             "clusters": [{"id": "derived-bash-psql-aaaa"}, {"id": "derived-bash-psql-cccc"}]}},
            {"id": "derived-bash-new-dddd", "tool": "Bash", "action": "monitor", "message": "DRAFT", "meta": {}}
        ]));
        let w = merge(Some(&old), &new, "f", &BTreeMap::new()).unwrap();
        assert_eq!((w.added, w.updated, w.kept), (1, 1, 1));
        let rules = w.document["rules"].as_array().unwrap();
        assert_eq!(rules.len(), 3);
        let psql = &rules[0];
        assert_eq!(psql["id"], "derived-bash-psql-aaaa");
        assert_eq!(psql["message"], "Bare psql: use scripts/db.py");
        assert_eq!(psql["pinned"], true);
        assert_eq!(psql["meta"]["review"], "looks right — kai");
        assert_eq!(psql["meta"]["added"], "2026-06-01");
        assert_eq!(psql["meta"]["fail_count"], 9);
        assert_eq!(rules[1]["id"], "derived-bash-old-bbbb");
        assert_eq!(rules[2]["id"], "derived-bash-new-dddd");
    }

    /// Every count derive writes is replaced by the new run's: `cluster_fail_count` and
    /// `masked_count` were missing from the list of derive's own keys, so an update kept the
    /// first run's stale numbers as if a human had written them.
    #[test]
    fn merge_replaces_every_count_derive_writes() {
        let old = doc(json!([
            {"id": "derived-bash-psql-aaaa", "tool": "Bash", "action": "monitor",
             "meta": {"fail_count": 3, "cluster_fail_count": 3, "masked_count": 1, "note": "kai"}}
        ]));
        let new = doc(json!([
            {"id": "derived-bash-psql-aaaa", "tool": "Bash", "action": "monitor",
             "meta": {"fail_count": 9, "cluster_fail_count": 12, "masked_count": 0}}
        ]));
        let w = merge(Some(&old), &new, "f", &BTreeMap::new()).unwrap();
        let meta = &w.document["rules"][0]["meta"];
        assert_eq!(meta["fail_count"], 9);
        assert_eq!(meta["cluster_fail_count"], 12);
        assert_eq!(meta["masked_count"], 0);
        assert_eq!(meta["note"], "kai");
    }

    #[test]
    fn merge_retires_candidates_a_reviewed_layer_declares() {
        let old = doc(json!([
            {"id": "derived-bash-psql-aaaa", "tool": "Bash", "action": "monitor", "meta": {}},
            {"id": "derived-bash-git-bbbb", "tool": "Bash", "action": "monitor", "meta": {}}
        ]));
        let promoted: BTreeMap<String, String> =
            [("derived-bash-psql-aaaa".to_string(), "p.json".to_string())].into();
        let w = merge(Some(&old), &doc(json!([])), "f", &promoted).unwrap();
        assert_eq!((w.added, w.updated, w.kept, w.retired), (0, 0, 1, 1));
        let rules = w.document["rules"].as_array().unwrap();
        assert_eq!(rules.len(), 1);
        assert_eq!(rules[0]["id"], "derived-bash-git-bbbb");
    }

    #[test]
    fn merge_refuses_a_file_that_is_not_a_ruleset() {
        assert!(merge(Some(&json!([1, 2])), &doc(json!([])), "f", &BTreeMap::new()).is_err());
        assert!(
            merge(
                Some(&json!({"rules": "x"})),
                &doc(json!([])),
                "f",
                &BTreeMap::new()
            )
            .is_err()
        );
    }
}
