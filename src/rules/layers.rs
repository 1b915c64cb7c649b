//! The active rule layers and how they are found.
//!
//! In order: the built-in starter set (embedded), `$CALLUS_HOME/rules.json`, the project's
//! `<repo root of cwd>/.callus/rules.json`, each file in `$CALLUS_RULES` (a `:`-separated path
//! list), and `$CALLUS_HOME/candidates.json`, whose rules are forced to monitor so derived
//! candidates gather live evidence without touching the agent. Every layer is evaluated and
//! the most restrictive action wins, so no layer can relax another; the only relaxation is
//! the user's own `disable` list, which can switch off starter rules by id (a project file
//! cannot: a cloned repository must not be able to lift the user's protections).

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

pub(crate) use super::layer_kind::LayerKind;
use crate::digest::{Digest as _, Sha256, hex, sha256_hex};

use super::parse::{Checked, check_document};
use super::{Action, Document, Rule, Subject, parse_document};
use super::{index, layers_embedded};
use crate::config::Home;
use crate::{Error, Result};

/// The built-in starter policy.
pub(crate) const STARTER_JSON: &str = include_str!("starter.json");

/// One loaded layer.
#[derive(Debug)]
pub struct Layer {
    /// Where it comes from.
    pub kind: LayerKind,
    /// Its file (`None` for the starter set).
    pub path: Option<PathBuf>,
    /// The rules, in file order (disabled starter rules already removed). Loaded for one
    /// call ([`RuleSet::load_for`]), only the rules that may fire on it.
    pub rules: Vec<Rule>,
    /// The ids of the rules left out because they cannot fire on the call, one per line.
    skipped: String,
    /// The file's text, hashed on demand for the audit chain.
    text: Cow<'static, str>,
    hash: OnceLock<String>,
}

impl Layer {
    /// A display name: `starter` or the file path.
    #[must_use]
    pub fn name(&self) -> String {
        self.path
            .as_ref()
            .map_or_else(|| "starter".to_string(), |p| p.display().to_string())
    }

    /// The action a rule of this layer takes (candidates are forced to monitor).
    #[must_use]
    pub fn effective_action(&self, rule: &Rule) -> Action {
        if self.kind == LayerKind::Candidates {
            Action::Monitor
        } else {
            rule.capped_action()
        }
    }

    /// SHA-256 of the file's bytes (recorded in the audit chain), computed once when asked:
    /// a call where nothing fires never hashes.
    #[must_use]
    pub fn content_hash(&self) -> &str {
        self.hash.get_or_init(|| sha256_hex(self.text.as_bytes()))
    }

    /// Parse a layer from its text.
    pub fn from_text(
        kind: LayerKind,
        path: Option<PathBuf>,
        text: impl Into<Cow<'static, str>>,
    ) -> Result<(Self, Vec<String>)> {
        let text = text.into();
        let name = path
            .as_ref()
            .map_or_else(|| "starter".to_string(), |p| p.display().to_string());
        let doc = parse_document(&name, &text)?;
        Ok(Self::from_document(kind, path, text, doc))
    }

    fn from_document(
        kind: LayerKind,
        path: Option<PathBuf>,
        text: Cow<'static, str>,
        doc: Document,
    ) -> (Self, Vec<String>) {
        let layer = Layer {
            kind,
            path,
            rules: doc.rules,
            skipped: String::new(),
            text,
            hash: OnceLock::new(),
        };
        (layer, doc.disable)
    }

    /// Parse a layer from its text for one call: every rule is checked (a broken rule is an
    /// error whatever the call), and only the rules that may fire on `call` are built (see
    /// `index`).
    fn for_call(
        kind: LayerKind,
        path: Option<PathBuf>,
        text: Cow<'static, str>,
        call: &Subject<'_>,
    ) -> Result<(Self, Vec<String>)> {
        if kind == LayerKind::Starter
            && path.is_none()
            && let Some(table) = layers_embedded::TABLE
        {
            return Ok((Self::embedded_for_call(table, text, call), Vec::new()));
        }
        let name = path
            .as_ref()
            .map_or_else(|| "starter".to_string(), |p| p.display().to_string());
        let Checked {
            rules: unbuilt,
            disable,
        } = check_document(&name, &text)?;
        let mut rules = Vec::new();
        let mut skipped = String::new();
        for rule in unbuilt {
            match index::may_fire(&rule, call) {
                (true, required) => rules.push(rule.build_with(required)),
                (false, _) => push_line(&mut skipped, rule.id()),
            }
        }
        let layer = Layer {
            kind,
            path,
            rules,
            skipped,
            text,
            hash: OnceLock::new(),
        };
        Ok((layer, disable))
    }

    /// The starter layer for one call from the table `build.rs` made of the starter
    /// document (`text`, which stays the layer's content): only the rules that may fire on
    /// `call` are built, and nothing is parsed (see `layers_embedded`).
    fn embedded_for_call(
        table: &[layers_embedded::EmbeddedRule],
        text: Cow<'static, str>,
        call: &Subject<'_>,
    ) -> Self {
        let mut rules = Vec::new();
        let mut skipped = String::new();
        for rule in table {
            if rule.may_fire(call) {
                rules.push(rule.build());
            } else {
                push_line(&mut skipped, rule.id);
            }
        }
        Layer {
            kind: LayerKind::Starter,
            path: None,
            rules,
            skipped,
            text,
            hash: OnceLock::from(layers_embedded::STARTER_SHA256.to_string()),
        }
    }

    /// The id of every rule of the layer, loaded or skipped.
    pub fn ids(&self) -> impl Iterator<Item = &str> {
        let loaded = self.rules.iter().map(|r| r.id.as_str());
        loaded.chain(self.skipped.lines())
    }

    /// Drop the rules whose id `gone` says, loaded or skipped.
    fn remove(&mut self, gone: impl Fn(&str) -> bool) {
        self.rules.retain(|r| !gone(&r.id));
        if self.skipped.lines().any(&gone) {
            let kept: Vec<&str> = self.skipped.lines().filter(|id| !gone(id)).collect();
            self.skipped = kept.join("\n");
        }
    }
}

/// Add `line` to a list of lines.
fn push_line(list: &mut String, line: &str) {
    if !list.is_empty() {
        list.push('\n');
    }
    list.push_str(line);
}

/// Every active layer, in evaluation order.
#[derive(Debug, Default)]
pub struct RuleSet {
    /// The layers, starter first.
    pub layers: Vec<Layer>,
}

/// Where the layers for a call in `cwd` live (no I/O beyond reading the environment).
#[derive(Debug, Clone)]
pub struct LayerPaths {
    /// `$CALLUS_HOME/rules.json`.
    pub user: PathBuf,
    /// `<repo root>/.callus/rules.json`, when `cwd` is inside a repository.
    pub project: Option<PathBuf>,
    /// `$CALLUS_RULES` entries.
    pub env: Vec<PathBuf>,
    /// `$CALLUS_HOME/candidates.json`.
    pub candidates: PathBuf,
}

impl LayerPaths {
    /// Resolve the layer files for a call whose working directory is `cwd`.
    #[must_use]
    pub fn resolve(home: &Home, cwd: Option<&Path>) -> Self {
        let env = std::env::var_os("CALLUS_RULES")
            .map(|v| {
                std::env::split_paths(&v)
                    .filter(|p| !p.as_os_str().is_empty())
                    .collect()
            })
            .unwrap_or_default();
        LayerPaths {
            user: home.rules_path(),
            project: cwd
                .and_then(crate::config::repo_root)
                .map(|root| root.join(".callus").join("rules.json")),
            env,
            candidates: home.candidates_path(),
        }
    }
}

impl RuleSet {
    /// Load every active layer. A missing optional file is skipped; an unreadable or invalid
    /// one is an error (the guard's failure policy decides what that means for the call).
    pub fn load(paths: &LayerPaths) -> Result<Self> {
        let (set, mut errors) = Self::load_lenient(paths);
        match errors.drain(..).next() {
            Some(e) => Err(e),
            None => Ok(set),
        }
    }

    /// Load every layer that can be loaded, and the errors of those that cannot.
    ///
    /// A broken layer never takes the others down with it: a cloned repository's broken
    /// `.callus/rules.json` must not switch off the starter set or the user's rules. When the
    /// user file is broken its `disable` list is unknown, so every starter rule stays active.
    #[must_use]
    pub fn load_lenient(paths: &LayerPaths) -> (Self, Vec<Error>) {
        Self::load_with(paths, &|kind, path, text| {
            Layer::from_text(kind, path, text)
        })
    }

    /// Load what [`RuleSet::load_lenient`] loads, keeping only the rules that may fire on
    /// `call`: what the hook needs, and much cheaper for a large ruleset (see `index`). The
    /// decision on `call` is the same as with every rule loaded.
    #[must_use]
    pub fn load_for(paths: &LayerPaths, call: &Subject<'_>) -> (Self, Vec<Error>) {
        Self::load_with(paths, &|kind, path, text| {
            Layer::for_call(kind, path, text, call)
        })
    }

    fn load_with(paths: &LayerPaths, parse: &Parse<'_>) -> (Self, Vec<Error>) {
        let mut layers = Vec::new();
        let mut errors = Vec::new();
        let mut disabled: Vec<String> = Vec::new();
        match read_layer(LayerKind::User, &paths.user, parse) {
            Ok(Some((user, disable))) => {
                disabled = disable;
                layers.push(user);
            }
            Ok(None) => {}
            Err(e) => errors.push(e),
        }
        match parse(LayerKind::Starter, None, Cow::Borrowed(STARTER_JSON)) {
            Ok((mut starter, _)) => {
                starter.remove(|id| disabled.iter().any(|d| d == id));
                layers.insert(0, starter);
            }
            Err(e) => errors.push(e),
        }
        let mut push =
            |kind: LayerKind, path: &Path, required: bool| match read_layer(kind, path, parse) {
                Ok(Some((layer, _))) => layers.push(layer),
                // A file the user named explicitly must exist.
                Ok(None) if required => {
                    errors.push(Error::io(path, std::io::ErrorKind::NotFound.into()));
                }
                Ok(None) => {}
                Err(e) => errors.push(e),
            };
        if let Some(project) = &paths.project {
            push(LayerKind::Project, project, false);
        }
        for path in &paths.env {
            push(LayerKind::Env, path, true);
        }
        push(LayerKind::Candidates, &paths.candidates, false);
        // A candidate already promoted into a reviewed layer is that rule now: evaluating
        // the stale candidate too would double its firings (and its prune evidence).
        // (Only built when there are candidates: the hook pays for no id set otherwise.)
        if layers.iter().any(|l| l.kind == LayerKind::Candidates) {
            let reviewed: std::collections::HashSet<String> = layers
                .iter()
                .filter(|l| l.kind != LayerKind::Candidates)
                .flat_map(|l| l.ids().map(str::to_string))
                .collect();
            for layer in layers
                .iter_mut()
                .filter(|l| l.kind == LayerKind::Candidates)
            {
                layer.remove(|id| reviewed.contains(id));
            }
        }
        (RuleSet { layers }, errors)
    }

    /// Only the starter set (tests, `rules show starter`).
    pub fn starter() -> Result<Self> {
        let (layer, _) = Layer::from_text(LayerKind::Starter, None, STARTER_JSON)?;
        Ok(RuleSet {
            layers: vec![layer],
        })
    }

    /// Every (layer, rule) pair in evaluation order.
    pub fn rules(&self) -> impl Iterator<Item = (&Layer, &Rule)> {
        self.layers
            .iter()
            .flat_map(|l| l.rules.iter().map(move |r| (l, r)))
    }

    /// A hash over every layer's content hash (recorded in the audit chain).
    #[must_use]
    pub fn content_hash(&self) -> String {
        let mut h = Sha256::new();
        for l in &self.layers {
            h.update(l.kind.as_str());
            h.update(l.content_hash());
        }
        hex(&h.finalize())
    }
}

/// How a layer's text becomes a layer: [`Layer::from_text`], or the hook's parse for one call.
type Parse<'a> =
    dyn Fn(LayerKind, Option<PathBuf>, Cow<'static, str>) -> Result<(Layer, Vec<String>)> + 'a;

fn read_layer(
    kind: LayerKind,
    path: &Path,
    parse: &Parse<'_>,
) -> Result<Option<(Layer, Vec<String>)>> {
    let Some(text) = read_layer_text(kind, path)? else {
        return Ok(None);
    };
    parse(kind, Some(path.to_path_buf()), Cow::Owned(text)).map(Some)
}

/// The largest rule layer file read, in bytes: a FIFO, a device or a larger file is an
/// error of that layer, never a hang or a memory blow-up (see [`crate::untrusted`]).
pub(crate) const LAYER_CAP: u64 = 4 * 1024 * 1024;

/// The text of the layer file `path` (`None` when it does not exist), read safely: a
/// regular file of at most [`LAYER_CAP`] bytes that stays inside its tree (the user's
/// layers inside `$CALLUS_HOME`, the project's inside the repository; a file named in
/// `$CALLUS_RULES` may be anywhere).
pub(crate) fn read_layer_text(kind: LayerKind, path: &Path) -> Result<Option<String>> {
    let root = match kind {
        LayerKind::User | LayerKind::Candidates => path.parent(),
        LayerKind::Project => path.parent().and_then(Path::parent),
        LayerKind::Env | LayerKind::Starter => None,
    };
    crate::untrusted::read(path, root, LAYER_CAP)
}

/// The files of every active layer for the current directory (`None` = the starter set).
#[must_use]
pub(crate) fn active_layer_files(home: &Home) -> Vec<(String, Option<PathBuf>, LayerKind)> {
    let cwd = std::env::current_dir().ok();
    let paths = LayerPaths::resolve(home, cwd.as_deref());
    let mut out = vec![("starter".to_string(), None, LayerKind::Starter)];
    // Present in any form (a symlink or a FIFO included: reading it says what is wrong).
    let existing = |p: &Path, kind| {
        std::fs::symlink_metadata(p)
            .is_ok()
            .then(|| (p.display().to_string(), Some(p.to_path_buf()), kind))
    };
    out.extend(existing(&paths.user, LayerKind::User));
    out.extend(
        paths
            .project
            .as_deref()
            .and_then(|p| existing(p, LayerKind::Project)),
    );
    out.extend(
        paths
            .env
            .iter()
            .map(|p| (p.display().to_string(), Some(p.clone()), LayerKind::Env)),
    );
    out.extend(existing(&paths.candidates, LayerKind::Candidates));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Hit;
    use serde_json::{Value, json};

    /// A user layer in the shape of `scripts/bench`'s: text, segment, pipeline and writes
    /// rules; tool-only rules with `unless`; globbed tools; other fields; `flags`, `norm`;
    /// lookarounds; patterns with no literal to filter on; and a `disable` entry.
    fn generated_rules() -> String {
        let mut rules = Vec::new();
        for i in 0..60 {
            let rule = match i % 10 {
                0 => json!({"id": format!("g{i}"), "tool": "Bash", "match": "segment",
                    "any": [format!(r"^deploy-{i}\s+(--prod|-p)\b")], "unless": ["--dry-run"],
                    "action": "deny", "message": "m"}),
                1 => json!({"id": format!("g{i}"), "tool": "Bash", "flags": "i", "norm": true,
                    "any": [r"\bDROP\s+TABLE\b", format!(r"\bTRUNCATE\s+t{i}\b")],
                    "action": "block", "message": "m"}),
                2 => json!({"id": format!("g{i}"), "tool": "Ba*",
                    "any": [r"\brm\b(?!.*--interactive)"], "action": "nudge", "message": "m"}),
                3 => json!({"id": format!("g{i}"), "tool": "Bash", "match": "pipeline",
                    "any": [r"\|\s*(ba)?sh\b"], "action": "monitor"}),
                4 => json!({"id": format!("g{i}"), "tool": "Bash", "match": "writes",
                    "any": [r"(^|/)\.(env|npmrc)$"], "action": "deny", "message": "m"}),
                5 => json!({"id": format!("g{i}"), "tool": "Write", "field": "file_path",
                    "unless": [r"\.example$"], "action": "nudge", "message": "m"}),
                6 => json!({"id": format!("g{i}"), "tool": "*", "any": [r"\d{3,}", r"[A-Z]\w+"],
                    "action": "monitor"}),
                7 => json!({"id": format!("g{i}"), "tool": "Edit", "field": "new_string",
                    "any": ["(?i)password\\s*="], "action": "deny", "message": "m"}),
                8 => json!({"id": format!("g{i}"), "tool": "Bash", "match": "segment",
                    "any": [r"^sudo\b", r"^git\s+push\b.*--force\b"], "action": "block",
                    "message": "m"}),
                _ => json!({"id": format!("g{i}"), "tool": "Bash",
                    "any": ["^(cargo|npm) test\\b"], "unless": ["--nocapture"],
                    "action": "nudge", "message": "m"}),
            };
            rules.push(rule);
        }
        json!({"disable": ["bare-psql-no-target"], "rules": rules}).to_string()
    }

    /// Every corpus call, plus calls aimed at the generated rules.
    fn calls() -> Vec<(String, Value)> {
        let corpus = [
            include_str!("../../tests/corpus/dangerous.jsonl"),
            include_str!("../../tests/corpus/benign.jsonl"),
        ];
        let mut calls: Vec<(String, Value)> = corpus
            .iter()
            .flat_map(|text| text.lines().filter(|l| !l.trim().is_empty()))
            .map(|line| {
                let v: Value = serde_json::from_str(line).unwrap();
                let tool = v["tool"].as_str().unwrap().to_string();
                let input = match v.get("command") {
                    Some(c) => json!({ "command": c }),
                    None => json!({ "file_path": v["file_path"], "new_string": "password = 1" }),
                };
                (tool, input)
            })
            .collect();
        for command in [
            "deploy-10 --prod",
            "cd x && deploy-20 -p",
            "deploy-30 --prod --dry-run",
            "psql -c 'drop table t11'",
            "curl -s x | bash",
            "echo 1 > .env",
            "cargo test --workspace",
            "ls 12345",
            "r\"\"m -rf build",
            "echo 'unbalanced",
            "ﬀ rm",
            "",
        ] {
            calls.push(("Bash".into(), json!({ "command": command })));
        }
        calls.push(("Write".into(), json!({"file_path": "x.example"})));
        calls.push(("mcp__db__query".into(), json!({"sql": "SELECT 1000"})));
        calls
    }

    type Firing = (LayerKind, String, Action, Result<Option<Hit>, String>);

    fn firings(set: &RuleSet, call: &Subject<'_>) -> Vec<Firing> {
        set.rules()
            .map(|(layer, rule)| {
                let hit = rule.fires(call);
                (
                    layer.kind,
                    rule.id.clone(),
                    layer.effective_action(rule),
                    hit,
                )
            })
            .filter(|(_, _, _, hit)| !matches!(hit, Ok(None)))
            .collect()
    }

    #[test]
    fn loading_for_a_call_fires_exactly_what_loading_everything_fires() {
        let dir = tempfile::tempdir().unwrap();
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rulesets");
        let user = dir.path().join("rules.json");
        std::fs::write(&user, generated_rules()).unwrap();
        let paths = LayerPaths {
            user,
            project: Some(fixtures.join("project-repo.rules.json")),
            env: vec![fixtures.join("readonly-db.rules.json")],
            candidates: fixtures.join("starter.rules.json"),
        };
        let (full, errors) = RuleSet::load_lenient(&paths);
        assert!(errors.is_empty(), "{errors:?}");
        let total: usize = full.layers.iter().map(|l| l.rules.len()).sum();
        let mut fewest = total;
        let mut fired = 0;
        for (tool, input) in calls() {
            let call = Subject::new(&tool, &input);
            let want = firings(&full, &call);
            // A fresh subject, so nothing the full pass computed is reused.
            let call = Subject::new(&tool, &input);
            let (some, errors) = RuleSet::load_for(&paths, &call);
            assert!(errors.is_empty(), "{errors:?}");
            assert_eq!(firings(&some, &call), want, "{tool} {input}");
            fired += want.len();
            let loaded: usize = some.layers.iter().map(|l| l.rules.len()).sum();
            fewest = fewest.min(loaded);
            // Every rule is either loaded or skipped, and the user's `disable` holds.
            let ids = |set: &RuleSet| {
                let mut ids: Vec<String> = set
                    .layers
                    .iter()
                    .flat_map(|l| l.ids().map(str::to_string))
                    .collect();
                ids.sort();
                ids
            };
            assert_eq!(ids(&some), ids(&full));
        }
        assert!(fired > 300, "the calls exercise the rules: {fired} firings");
        assert!(
            fewest < total / 4,
            "the index skipped rules: {fewest} of {total}"
        );
        // Nothing is cached: the directory holds only the user layer.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn every_call_reads_the_file_afresh() {
        let dir = tempfile::tempdir().unwrap();
        let user = dir.path().join("rules.json");
        let rule = |word: &str| {
            format!(r#"{{"rules": [{{"id": "r", "any": ["\\b{word}\\b"], "message": "m"}}]}}"#)
        };
        let paths = LayerPaths {
            user: user.clone(),
            project: None,
            env: Vec::new(),
            candidates: dir.path().join("candidates.json"),
        };
        let input = json!({"command": "zork -c 1"});
        let fires = || {
            let call = Subject::new("Bash", &input);
            let (set, errors) = RuleSet::load_for(&paths, &call);
            assert!(errors.is_empty(), "{errors:?}");
            !firings(&set, &call).is_empty()
        };
        std::fs::write(&user, rule("zork")).unwrap();
        assert!(fires());
        assert!(fires());
        // Same size, same modification second: only the bytes tell them apart.
        std::fs::write(&user, rule("zorp")).unwrap();
        assert!(!fires());
        std::fs::write(&user, rule("zork")).unwrap();
        assert!(fires());
        // A broken file is reported, whatever its earlier text was.
        std::fs::write(&user, rule("zork").replace("\"m\"", "7")).unwrap();
        let call = Subject::new("Bash", &input);
        let (_, errors) = RuleSet::load_for(&paths, &call);
        assert_eq!(errors.len(), 1);
    }
}
