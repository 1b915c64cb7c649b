//! The starter layer as the hook loads it: prepared at build time.
//!
//! The starter policy is compiled into the binary (`starter.json`), so nothing the agent can
//! write decides it, and checking it on every call proves nothing a test cannot prove once.
//! `build.rs` turns it into [`TABLE`]: every field the hook reads, as static data, with the
//! literal requirement of each `any` pattern already computed (`prefilter`, the same code).
//! A quiet hook call then parses no starter JSON (its examples are most of it) and scans no
//! starter pattern; it builds only the starter rules that may fire on the call, as
//! `rules::index` does for the other layers.
//!
//! What stays as it was: `guard check`, `rules show` and every other reader parse
//! `starter.json` itself (examples included); the layer's content hash in the audit chain is
//! the SHA-256 of that JSON text ([`STARTER_SHA256`], also computed by `build.rs`: a firing
//! call no longer hashes 30 kB). The unit tests below pin the table to the parsed document,
//! rule by rule and literal by literal, so a table that drifted from `starter.json` fails
//! `cargo test`; when `build.rs` cannot read the document as a table it writes `None` and
//! the hook parses the JSON per call (slower, same decisions).

use super::pattern::literals_admit;
use super::{Action, MatchMode, Pattern, Rule, Subject};

/// One starter rule as `build.rs` wrote it (the meaning of each field is [`Rule`]'s).
#[derive(Debug)]
pub(crate) struct EmbeddedRule {
    pub(crate) id: &'static str,
    pub(crate) tool: &'static str,
    pub(crate) field: &'static str,
    pub(crate) any: &'static [&'static str],
    pub(crate) unless: &'static [&'static str],
    pub(crate) case_insensitive: bool,
    pub(crate) norm: bool,
    pub(crate) severity: f64,
    pub(crate) action: Action,
    pub(crate) message: Option<&'static str>,
    pub(crate) mode: MatchMode,
    pub(crate) pinned: bool,
    /// The `meta` object as JSON text (empty: none).
    pub(crate) meta: &'static str,
    /// Per `any` pattern, its literal requirement (`prefilter::required_literals`).
    pub(crate) required: &'static [Option<&'static [&'static str]>],
}

include!(concat!(env!("OUT_DIR"), "/starter_table.rs"));

impl EmbeddedRule {
    /// Could the rule fire on `call`? The test `Rule::fires` starts with, on the same
    /// literals, so a rule this rules out would not have fired.
    pub(crate) fn may_fire(&self, call: &Subject<'_>) -> bool {
        call.may_fire(
            self.tool,
            self.field,
            self.norm,
            self.mode,
            !self.any.is_empty(),
            |hay| self.required.iter().any(|lits| literals_admit(*lits, hay)),
        )
    }

    /// The rule, as parsing `starter.json` builds it (without its examples).
    pub(crate) fn build(&self) -> Rule {
        let ci = self.case_insensitive;
        let any = self
            .any
            .iter()
            .zip(self.required)
            .map(|(source, required)| {
                let required = required.map(|lits| lits.iter().map(|l| (*l).to_string()).collect());
                Pattern::with_required(*source, ci, required)
            });
        Rule {
            id: self.id.to_string(),
            tool: self.tool.to_string(),
            field: self.field.to_string(),
            any: any.collect(),
            unless: self.unless.iter().map(|s| Pattern::new(*s, ci)).collect(),
            norm: self.norm,
            severity: self.severity,
            action: self.action,
            message: self.message.map(str::to_string),
            match_mode: self.mode,
            pinned: self.pinned,
            meta: if self.meta.is_empty() {
                serde_json::Map::new()
            } else {
                serde_json::from_str(self.meta).unwrap_or_default()
            },
            examples: None,
            // A starter rule with conditions is not embedded: `build.rs` leaves it to parsing.
            when: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::parse_document;

    /// The document `build.rs` read (the layer embeds the same file).
    const STARTER_JSON: &str = include_str!("starter.json");
    use crate::rules::prefilter::required_literals;

    #[test]
    fn the_embedded_hash_is_the_starter_documents() {
        assert_eq!(
            STARTER_SHA256,
            crate::digest::sha256_hex(STARTER_JSON.as_bytes())
        );
    }

    #[test]
    fn the_table_is_the_starter_document_rule_by_rule() {
        let table = TABLE.expect("build.rs embedded starter.json as a table");
        let doc = parse_document("starter", STARTER_JSON).unwrap();
        let ids = |it: &mut dyn Iterator<Item = String>| it.collect::<Vec<_>>();
        assert_eq!(
            ids(&mut table.iter().map(|r| r.id.to_string())),
            ids(&mut doc.rules.iter().map(|r| r.id.clone())),
        );
        for (embedded, parsed) in table.iter().zip(&doc.rules) {
            let built = embedded.build();
            let sources = |p: &[Pattern]| -> Vec<String> {
                p.iter().map(|p| p.source().to_string()).collect()
            };
            let id = &parsed.id;
            assert_eq!(built.tool, parsed.tool, "{id}");
            assert_eq!(built.field, parsed.field, "{id}");
            assert_eq!(sources(&built.any), sources(&parsed.any), "{id}");
            assert_eq!(sources(&built.unless), sources(&parsed.unless), "{id}");
            for (b, p) in built
                .any
                .iter()
                .chain(&built.unless)
                .zip(parsed.any.iter().chain(&parsed.unless))
            {
                assert_eq!(b.case_insensitive(), p.case_insensitive(), "{id}");
            }
            assert_eq!(built.norm, parsed.norm, "{id}");
            assert!(
                (built.severity - parsed.severity).abs() < f64::EPSILON,
                "{id}"
            );
            assert_eq!(built.action, parsed.action, "{id}");
            assert_eq!(built.capped_action(), parsed.capped_action(), "{id}");
            assert_eq!(built.message, parsed.message, "{id}");
            assert_eq!(built.match_mode, parsed.match_mode, "{id}");
            assert_eq!(built.pinned, parsed.pinned, "{id}");
            assert_eq!(built.meta, parsed.meta, "{id}");
            // The literals are the ones the crate computes for the same pattern.
            assert_eq!(embedded.required.len(), parsed.any.len(), "{id}");
            for (lits, p) in embedded.required.iter().zip(&parsed.any) {
                let want = required_literals(p.source());
                let got = lits.map(|l| l.iter().map(|s| (*s).to_string()).collect::<Vec<_>>());
                assert_eq!(got, want, "{id}: {}", p.source());
            }
        }
    }
}
