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

use sha2::{Digest, Sha256};

use super::{Action, Document, Rule, parse_document};
use crate::config::Home;
use crate::{Error, Result};

/// The built-in starter policy.
pub const STARTER_JSON: &str = include_str!("starter.json");

/// Where a layer comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LayerKind {
    /// Embedded in the binary.
    Starter,
    /// `$CALLUS_HOME/rules.json`.
    User,
    /// `<repo root>/.callus/rules.json`.
    Project,
    /// A file named in `$CALLUS_RULES`.
    Env,
    /// `$CALLUS_HOME/candidates.json`, forced to monitor.
    Candidates,
}

impl LayerKind {
    /// The lowercase name.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            LayerKind::Starter => "starter",
            LayerKind::User => "user",
            LayerKind::Project => "project",
            LayerKind::Env => "env",
            LayerKind::Candidates => "candidates",
        }
    }
}

/// One loaded layer.
#[derive(Debug)]
pub struct Layer {
    /// Where it comes from.
    pub kind: LayerKind,
    /// Its file (`None` for the starter set).
    pub path: Option<PathBuf>,
    /// The rules, in file order (disabled starter rules already removed).
    pub rules: Vec<Rule>,
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
        let Document { rules, disable } = parse_document(&name, &text)?;
        let layer = Layer {
            kind,
            path,
            rules,
            text,
            hash: OnceLock::new(),
        };
        Ok((layer, disable))
    }
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
        let mut layers = Vec::new();
        let mut errors = Vec::new();
        let mut disabled: Vec<String> = Vec::new();
        match read_layer(LayerKind::User, &paths.user) {
            Ok(Some((user, disable))) => {
                disabled = disable;
                layers.push(user);
            }
            Ok(None) => {}
            Err(e) => errors.push(e),
        }
        match Layer::from_text(LayerKind::Starter, None, STARTER_JSON) {
            Ok((mut starter, _)) => {
                starter.rules.retain(|r| !disabled.contains(&r.id));
                layers.insert(0, starter);
            }
            Err(e) => errors.push(e),
        }
        let mut push = |kind: LayerKind, path: &Path, required: bool| match read_layer(kind, path) {
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
                .flat_map(|l| l.rules.iter().map(|r| r.id.clone()))
                .collect();
            for layer in layers
                .iter_mut()
                .filter(|l| l.kind == LayerKind::Candidates)
            {
                layer.rules.retain(|r| !reviewed.contains(&r.id));
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

fn read_layer(kind: LayerKind, path: &Path) -> Result<Option<(Layer, Vec<String>)>> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        // A path through a non-directory (e.g. `$CALLUS_HOME` is a file) holds no file either.
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            return Ok(None);
        }
        Err(e) => return Err(Error::io(path, e)),
    };
    Layer::from_text(kind, Some(path.to_path_buf()), text).map(Some)
}

/// Lowercase hex SHA-256 of `bytes`.
#[must_use]
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// Lowercase hex of `bytes`.
#[must_use]
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 0xf)]));
    }
    s
}
