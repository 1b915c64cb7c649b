//! One write the scope hook let through, kept in the run's state for attribution: which
//! tool call named which root-relative paths, and when.

use serde::{Deserialize, Serialize};

/// A write the hook let through, for attribution.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Observation {
    /// The tool (`Write`, `Edit`, `apply_patch`, …).
    pub(crate) tool: String,
    /// The call's id.
    pub(crate) tool_use_id: Option<String>,
    /// Root-relative paths it named.
    pub(crate) paths: Vec<String>,
    /// When (RFC 3339, UTC).
    pub(crate) ts: String,
}
