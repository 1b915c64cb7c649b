//! What the integration tests (`tests/`) and the fuzz targets (`fuzz/`) reach inside the
//! library, and nothing else: every other module is private to the crate, so its items are
//! `pub(crate)` and an unused one is a compile-time warning, not a silent export.
//!
//! Guarantees: nothing here is an interface for users; it may change with any release.

pub use crate::config::Home;
pub use crate::digest::hmac_sha256;
pub use crate::guard::evaluate;
pub use crate::host::call::Call;
pub use crate::host::wire::parse as parse_hook_payload;
pub use crate::recuse::scan as recuse_scan;

/// The RECUSE signal reader, as `tests/recuse.rs` uses it.
pub mod recuse {
    pub use crate::recuse::{Directive, marker_path, scan};
}
pub use crate::redact::redact;
pub use crate::rules::Subject;
pub use crate::rules::layers::RuleSet;
pub use crate::rules::parse::{TOP_LEVEL_KEYS, document_from_value};
pub use crate::shell::split;
pub use crate::shell::syntax::quote::quote;
pub use crate::shell::{pipelines::pipelines, writes::write_targets};
pub use crate::store::audit::{AcsVerdict, AuditFired, AuditRecord, append, chain_hash};
pub use crate::store::open as open_store;

/// The command model's effects for `command`, each rendered with `Debug` (for the effects
/// fuzz target: they must never panic and must be the same twice).
#[must_use]
pub fn effect_lines(command: &str, cwd: &str, home: &str, callus_home: &str) -> Vec<String> {
    let ctx = crate::shell::model::Context {
        cwd: Some(cwd.into()),
        home: Some(home.into()),
        repo_root: Some(cwd.into()),
        callus_home: Some(callus_home.into()),
        realpath: None,
    };
    crate::shell::model::analyse(command, &ctx)
        .effects
        .iter()
        .map(|e| format!("{e:?}"))
        .collect()
}
