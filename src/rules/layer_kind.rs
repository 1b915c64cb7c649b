//! Where a layer comes from: the built-in starter set, the user's, the project's, a file
//! named in `$CALLUS_RULES`, or derive's candidates (forced to monitor).

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
