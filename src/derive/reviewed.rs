//! Candidates already promoted: a derived cluster whose id a reviewed layer declares is not
//! proposed again.
//!
//! `callus rules promote` copies a candidate, id included, into a reviewed ruleset (the user
//! layer, the project's `.callus/rules.json`, a `$CALLUS_RULES` file). From then on the cluster
//! is the reviewed rule's business: its failures are measured by `guard prune` and `report`
//! against the rule's promotion date. Proposing it again would put a second, forced-monitor
//! copy under the same id beside the reviewed rule (two firings per call in the audit chain)
//! and, after a `--pattern` change, a draft with the pattern the reviewer rejected. So derive
//! leaves such a candidate out of the document, lists it in the summary (and in
//! `generated.already_promoted`), and the merge retires the copy an earlier run left in the
//! candidate file. A candidate counts as promoted when its id or the id of any cluster folded
//! into it is declared, so a merge that renamed nothing is still recognised.
//!
//! The layers are read for their rule ids only, leniently: a file that is missing is no
//! layer, and one that does not parse is reported on stderr and ignored — `guard check` is
//! where a broken ruleset is refused, not derive.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use super::{Derivation, Derived};
use crate::rules::layers::LayerPaths;

/// Rule ids declared in the reviewed layers of `paths` (user, project, env), each with the
/// file that declares it first (in evaluation order).
pub(crate) fn load(paths: &LayerPaths) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let files = std::iter::once(paths.user.as_path())
        .chain(paths.project.as_deref())
        .chain(paths.env.iter().map(std::path::PathBuf::as_path));
    for file in files {
        for id in ids_in(file) {
            out.entry(id).or_insert_with(|| file.display().to_string());
        }
    }
    out
}

/// The rule ids a ruleset file declares (none when it is missing or unreadable).
fn ids_in(file: &Path) -> Vec<String> {
    let text = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Vec::new(),
        Err(e) => {
            eprintln!(
                "callus: note: cannot read {} ({e}); its promoted rules are not recognised",
                file.display()
            );
            return Vec::new();
        }
    };
    let Ok(doc) = serde_json::from_str::<Value>(&text) else {
        eprintln!(
            "callus: note: {} is not valid JSON; its promoted rules are not recognised (run `callus guard check`)",
            file.display()
        );
        return Vec::new();
    };
    doc.get("rules")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|r| r.get("id").and_then(Value::as_str).map(str::to_string))
        .collect()
}

/// The reviewed layer that already declares `d` (its id or a folded cluster's), if any.
pub(crate) fn promoted_in(dv: &Derivation, d: &Derived) -> Option<String> {
    let reviewed = &dv.options.reviewed;
    if reviewed.is_empty() {
        return None;
    }
    std::iter::once(d.id().to_string())
        .chain(d.clusters.iter().map(|&i| dv.clusters[i].id()))
        .find_map(|id| reviewed.get(&id).cloned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_come_from_every_reviewed_layer_first_declaration_first() {
        let dir = tempfile::tempdir().unwrap();
        let user = dir.path().join("rules.json");
        let project = dir.path().join("project.json");
        let env = dir.path().join("env.json");
        std::fs::write(&user, r#"{"rules":[{"id":"a"},{"id":"b"}]}"#).unwrap();
        std::fs::write(&project, r#"{"rules":[{"id":"b"},{"id":"c"},{"no-id":1}]}"#).unwrap();
        std::fs::write(&env, "not json").unwrap();
        let paths = LayerPaths {
            user: user.clone(),
            project: Some(project.clone()),
            env: vec![env, dir.path().join("missing.json")],
            candidates: dir.path().join("candidates.json"),
        };
        let ids = load(&paths);
        assert_eq!(ids.keys().collect::<Vec<_>>(), ["a", "b", "c"]);
        assert_eq!(ids["b"], user.display().to_string());
        assert_eq!(ids["c"], project.display().to_string());
    }
}
