//! The layer index: a per-file cache that lets the hook parse only the rules a call can need.
//!
//! Reading and validating a 200-rule file costs more than the rest of a hook call together,
//! and most rules cannot fire on most calls. When a layer file validates, the hook writes an
//! index of it under `$CALLUS_HOME/cache/`: for each rule its id, its byte span in the file,
//! its tool glob, field, `norm` and match mode, and for each `any` pattern the literal strings
//! one of which every match contains (see `prefilter`). Later calls read the index, parse just
//! the rules that [`Subject::may_fire`] admits, and skip the rest.
//!
//! Guarantees:
//! - Exactness: an index is used only for the text it was built from, read afresh on every
//!   call (never a timestamp: an edit within one clock tick, or a copy that keeps the old
//!   time, still counts) and recognised by its length and a 128-bit fingerprint, and only by
//!   the very binary that wrote it (its version and the executable's size and modification
//!   time, so a rebuild whose prefilter differs starts afresh). Anything else (a missing,
//!   truncated or garbled index, another binary) is a miss: the file is parsed in full, as
//!   if there were no index. The index carries a checksum, so a corrupted entry is a miss
//!   too, not a rule parsed from the wrong span. The fingerprint is not cryptographic, and
//!   need not be: whoever can write a layer file can already put any rules in it, and a
//!   layer can only add restrictions.
//! - Soundness: a skipped rule is one that would not have fired: [`crate::rules::Rule::fires`]
//!   starts with the same [`Subject::may_fire`] test on the same literals.
//! - Only a file that validated as a whole is indexed, so an index never hides a broken
//!   ruleset, and a rule parsed through it is the rule a full parse gives.
//! - Writing is best effort (a temporary file renamed into place, in a private directory);
//!   a failure costs speed, never a decision. Reading never panics on any bytes.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use super::layer_kind::LayerKind;
use super::prefilter::required_literals;
use super::{Document, MatchMode, Subject};

/// The layout version; bump it when the layout or the meaning of a field changes.
const FORMAT: &str = "callus layer index 1";

/// A pattern whose literal requirement is unknown (it may match anything).
const NO_REQUIREMENT: u32 = u32::MAX;

/// What ties an index to the binary that wrote it (`None` when the executable cannot be
/// inspected: then no index is used or written).
#[must_use]
pub fn stamp() -> Option<String> {
    let meta = std::fs::metadata(std::env::current_exe().ok()?).ok()?;
    let mtime = meta.modified().ok()?.duration_since(UNIX_EPOCH).ok()?;
    Some(format!(
        "{FORMAT} {} {} {}",
        env!("CARGO_PKG_VERSION"),
        meta.len(),
        mtime.as_nanos()
    ))
}

/// The index file for a layer (`name` is its path, or `starter`) under `dir`, as written by
/// the binary `stamp` names: two binaries sharing a home (an installed one and a build) keep
/// an index each instead of overwriting each other's on every call.
#[must_use]
pub fn file_for(dir: &Path, kind: LayerKind, name: &str, stamp: &str) -> PathBuf {
    // Not SHA-256: its CPU-feature probe alone costs a quiet hook call tens of microseconds
    // on some VMs, and a name only has to be stable and unlikely to clash.
    let layer = checksum(format!("{}\0{name}", kind.as_str()).as_bytes());
    let binary = checksum(stamp.as_bytes());
    dir.join(format!("layer-{layer:016x}-{:08x}.idx", binary >> 32))
}

/// How long an index written by another binary is kept after its last write.
const STALE_AFTER: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

/// Remove the indexes of the layer `file` indexes that other binaries wrote and have not
/// rewritten for a day (old builds), so the cache does not grow with every upgrade.
fn remove_stale(file: &Path) {
    let (Some(dir), Some(name)) = (file.parent(), file.file_name().and_then(|n| n.to_str())) else {
        return;
    };
    let Some(prefix) = name.rsplit_once('-').map(|(layer, _)| format!("{layer}-")) else {
        return;
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let other = entry.file_name();
        let Some(other) = other.to_str() else {
            continue;
        };
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > STALE_AFTER);
        if other != name && other.starts_with(&prefix) && old {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// The index of `doc`, parsed from `text`, stamped with `stamp`. `None` if a length does
/// not fit the format (a file over 4 GiB).
#[must_use]
pub fn encode(stamp: &str, text: &str, doc: &Document) -> Option<Vec<u8>> {
    let mut w = Writer(Vec::with_capacity(text.len() + 64 * doc.rules.len() + 256));
    w.bytes(stamp.as_bytes())?;
    w.bytes(&fingerprint(text.as_bytes()))?;
    let tail = w.0.len();
    w.len(doc.disable.len())?;
    for id in &doc.disable {
        w.bytes(id.as_bytes())?;
    }
    w.len(doc.rules.len())?;
    for (rule, span) in doc.rules.iter().zip(&doc.spans) {
        w.len(span.start)?;
        w.len(span.end)?;
        w.0.push(u8::from(rule.norm) | (mode_code(rule.match_mode) << 1));
        w.bytes(rule.id.as_bytes())?;
        w.bytes(rule.tool.as_bytes())?;
        w.bytes(rule.field.as_bytes())?;
        w.len(rule.any.len())?;
        for pattern in &rule.any {
            match required_literals(pattern.source()) {
                None => w.0.extend_from_slice(&NO_REQUIREMENT.to_le_bytes()),
                Some(lits) => {
                    w.len(lits.len())?;
                    for lit in &lits {
                        w.bytes(lit.as_bytes())?;
                    }
                }
            }
        }
    }
    let sum = checksum(&w.0[tail..]);
    w.0.extend_from_slice(&sum.to_le_bytes());
    Some(w.0)
}

/// A 128-bit fingerprint of `bytes` and their length: two independent multiply-rotate lanes
/// over 8-byte words, each finished with a full-avalanche mix. Not cryptographic (nothing
/// here needs it: see the module docs), but two different texts that differ in one word
/// always differ in it, and an accidental match of two edits is out of reach.
fn fingerprint(bytes: &[u8]) -> [u8; 16] {
    const K1: u64 = 0x9e37_79b9_7f4a_7c15;
    const K2: u64 = 0xc2b2_ae3d_27d4_eb4f;
    let len = bytes.len() as u64;
    let (mut a, mut b) = (len ^ K2, len.rotate_left(32) ^ K1);
    let mut words = bytes.chunks_exact(8);
    let mut step = |w: u64| {
        a = (a ^ w).wrapping_mul(K1).rotate_left(29);
        b = (b ^ w.rotate_left(32)).wrapping_mul(K2).rotate_left(31) ^ a;
    };
    for word in &mut words {
        let mut buf = [0u8; 8];
        buf.copy_from_slice(word);
        step(u64::from_le_bytes(buf));
    }
    let rest = words.remainder();
    let mut buf = [0u8; 8];
    buf[..rest.len()].copy_from_slice(rest);
    step(u64::from_le_bytes(buf) ^ (rest.len() as u64) << 56);
    let mix = |mut h: u64| {
        // The MurmurHash3 finaliser.
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        h ^ (h >> 33)
    };
    let mut out = [0u8; 16];
    out[..8].copy_from_slice(&mix(a).to_le_bytes());
    out[8..].copy_from_slice(&mix(b ^ a.rotate_left(17)).to_le_bytes());
    out
}

/// The first half of [`fingerprint`]: a damaged byte anywhere always changes it.
fn checksum(bytes: &[u8]) -> u64 {
    let mut half = [0u8; 8];
    half.copy_from_slice(&fingerprint(bytes)[..8]);
    u64::from_le_bytes(half)
}

/// Write `bytes` as the index file `file`, atomically; failures are ignored (the next call
/// parses in full again).
pub fn store(file: &Path, bytes: &[u8]) {
    let Some(dir) = file.parent() else { return };
    if crate::config::ensure_private_dir(dir).is_ok()
        && crate::config::replace_file(file, bytes, crate::config::Durability::Cached).is_ok()
    {
        remove_stale(file);
    }
}

/// A layer's index, read in place from the index file's bytes.
#[derive(Debug)]
pub struct Index<'a> {
    /// The document's `disable` list.
    pub disable: Vec<&'a str>,
    /// One entry per rule, in file order.
    pub entries: Vec<Entry<'a>>,
}

/// What the index knows of one rule.
#[derive(Debug)]
pub struct Entry<'a> {
    /// The rule's byte range in the layer file.
    pub span: Range<usize>,
    /// Its id (UTF-8: checked when used, as most ids never are).
    id: &'a [u8],
    tool: &'a str,
    field: &'a str,
    norm: bool,
    mode: MatchMode,
    /// How many `any` patterns it has.
    patterns: usize,
    /// Their literal requirements, as written by [`encode`].
    literals: &'a [u8],
}

impl<'a> Index<'a> {
    /// Read `bytes` as the index of `text` written by the binary `stamp` names; `None` when
    /// it is not exactly that (a miss).
    #[must_use]
    pub fn read(bytes: &'a [u8], stamp: &str, text: &str) -> Option<Self> {
        let mut c = Cursor(bytes);
        if c.bytes()? != stamp.as_bytes() || c.bytes()? != fingerprint(text.as_bytes()) {
            return None;
        }
        let (body, sum) = c.0.split_last_chunk::<8>()?;
        if checksum(body) != u64::from_le_bytes(*sum) {
            return None;
        }
        c.0 = body;
        let disable = (0..c.len()?).map(|_| c.str()).collect::<Option<Vec<_>>>()?;
        let count = c.len()?;
        // Every entry takes at least 25 bytes: a garbled count cannot reserve much.
        let mut entries = Vec::with_capacity(count.min(c.0.len() / 25));
        // Most rules share a tool (`Bash`) and a field (`command`): check each run once.
        let (mut last_tool, mut last_field) = (None, None);
        for _ in 0..count {
            let span = c.len()?..c.len()?;
            text.get(span.clone())?;
            let flags = *c.0.first()?;
            c.0 = &c.0[1..];
            let id = c.bytes()?;
            let tool = utf8_once(&mut last_tool, c.bytes()?)?;
            let field = utf8_once(&mut last_field, c.bytes()?)?;
            let patterns = c.len()?;
            let start = c.0;
            for _ in 0..patterns {
                let n = c.u32()?;
                if n != NO_REQUIREMENT {
                    for _ in 0..n {
                        c.bytes()?;
                    }
                }
            }
            let literals = &start[..start.len() - c.0.len()];
            entries.push(Entry {
                span,
                id,
                tool,
                field,
                norm: flags & 1 == 1,
                mode: mode_from(flags >> 1)?,
                patterns,
                literals,
            });
        }
        c.0.is_empty().then_some(Index { disable, entries })
    }
}

impl Entry<'_> {
    /// The rule's id, as bytes (UTF-8 when the index is sound; checked by whoever keeps it).
    #[must_use]
    pub fn id(&self) -> &[u8] {
        self.id
    }

    /// Could the rule fire on `call`? False only when it certainly does not.
    #[must_use]
    pub fn may_fire(&self, call: &Subject<'_>) -> bool {
        call.may_fire(
            self.tool,
            self.field,
            self.norm,
            self.mode,
            self.patterns > 0,
            |hay| self.may_match(hay),
        )
    }

    /// Could one of the `any` patterns match `hay_lower` (ASCII-lowercased)? The answer
    /// `Pattern::may_match` gives, from the recorded literals.
    fn may_match(&self, hay_lower: &str) -> bool {
        if !hay_lower.is_ascii() {
            return true;
        }
        let mut c = Cursor(self.literals);
        for _ in 0..self.patterns {
            let Some(n) = c.u32() else { return true };
            if n == NO_REQUIREMENT {
                return true;
            }
            let mut found = false;
            for _ in 0..n {
                let Some(lit) = c.bytes() else { return true };
                found = found || contains(hay_lower.as_bytes(), lit);
            }
            if found {
                return true;
            }
        }
        false
    }
}

/// Does `hay` contain `needle`? Haystacks and literals are short: finding the first byte
/// with `memchr` and comparing the rest beats setting up a substring searcher per literal.
fn contains(hay: &[u8], needle: &[u8]) -> bool {
    let Some((&first, rest)) = needle.split_first() else {
        return true;
    };
    let mut from = 0;
    while let Some(at) = hay.get(from..).and_then(|h| memchr::memchr(first, h)) {
        let start = from + at + 1;
        if hay.get(start..start + rest.len()) == Some(rest) {
            return true;
        }
        from = start;
    }
    false
}

/// `bytes` as UTF-8, checked only when they differ from the previous call's (`last`).
fn utf8_once<'a>(last: &mut Option<(&'a [u8], &'a str)>, bytes: &'a [u8]) -> Option<&'a str> {
    if let Some((seen, text)) = *last
        && seen == bytes
    {
        return Some(text);
    }
    let text = std::str::from_utf8(bytes).ok()?;
    *last = Some((bytes, text));
    Some(text)
}

fn mode_code(mode: MatchMode) -> u8 {
    match mode {
        MatchMode::Text => 0,
        MatchMode::Segment => 1,
        MatchMode::Pipeline => 2,
        MatchMode::Writes => 3,
        MatchMode::Effect => 4,
    }
}

fn mode_from(code: u8) -> Option<MatchMode> {
    Some(match code {
        0 => MatchMode::Text,
        1 => MatchMode::Segment,
        2 => MatchMode::Pipeline,
        3 => MatchMode::Writes,
        4 => MatchMode::Effect,
        _ => return None,
    })
}

/// Little-endian `u32` lengths, each byte string prefixed by its length.
struct Writer(Vec<u8>);

impl Writer {
    fn len(&mut self, n: usize) -> Option<()> {
        let n = u32::try_from(n).ok().filter(|&n| n != NO_REQUIREMENT)?;
        self.0.extend_from_slice(&n.to_le_bytes());
        Some(())
    }

    fn bytes(&mut self, b: &[u8]) -> Option<()> {
        self.len(b.len())?;
        self.0.extend_from_slice(b);
        Some(())
    }
}

/// Reads what [`Writer`] wrote; every read is bounds-checked.
struct Cursor<'a>(&'a [u8]);

impl<'a> Cursor<'a> {
    fn u32(&mut self) -> Option<u32> {
        let (head, rest) = self.0.split_first_chunk::<4>()?;
        self.0 = rest;
        Some(u32::from_le_bytes(*head))
    }

    fn len(&mut self) -> Option<usize> {
        usize::try_from(self.u32()?).ok()
    }

    fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = self.len()?;
        let (head, rest) = (self.0.get(..n)?, self.0.get(n..)?);
        self.0 = rest;
        Some(head)
    }

    fn str(&mut self) -> Option<&'a str> {
        std::str::from_utf8(self.bytes()?).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::parse_document;
    use serde_json::json;

    const TEXT: &str = r#"{"disable": ["x"], "rules": [
        {"id": "psql", "tool": "Bash", "any": ["\\bpsql\\b(?!.*-h)"], "message": "m"},
        {"id": "seg", "match": "segment", "norm": true, "any": ["^rm\\s", ".*"], "message": "m"},
        {"id": "write", "tool": "Write", "field": "file_path", "message": "m"}
    ]}"#;

    fn index_bytes() -> Vec<u8> {
        encode("s", TEXT, &parse_document("t", TEXT).unwrap()).unwrap()
    }

    #[test]
    fn an_index_reads_back_only_for_the_same_text_and_stamp() {
        let bytes = index_bytes();
        let index = Index::read(&bytes, "s", TEXT).unwrap();
        assert_eq!(index.disable, ["x"]);
        let ids: Vec<_> = index.entries.iter().map(Entry::id).collect();
        assert_eq!(ids, [&b"psql"[..], b"seg", b"write"]);
        assert!(TEXT[index.entries[2].span.clone()].starts_with(r#"{"id": "write""#));
        assert!(Index::read(&bytes, "other", TEXT).is_none());
        let edited = TEXT.replace("psql", "PSQL");
        assert!(Index::read(&bytes, "s", &edited).is_none());
        // Any truncation, and any trailing garbage, is a miss, never a panic.
        for cut in 0..bytes.len() {
            assert!(Index::read(&bytes[..cut], "s", TEXT).is_none(), "cut {cut}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(Index::read(&longer, "s", TEXT).is_none());
    }

    #[test]
    fn candidates_follow_tool_and_literals() {
        let bytes = index_bytes();
        let index = Index::read(&bytes, "s", TEXT).unwrap();
        let may = |tool: &str, input: serde_json::Value| -> Vec<&str> {
            let call = Subject::new(tool, &input);
            let out = index.entries.iter().filter(|e| e.may_fire(&call));
            out.map(|e| std::str::from_utf8(e.id()).unwrap()).collect()
        };
        // `.*` has no literal requirement: the segment rule is always a candidate on text.
        assert_eq!(may("Bash", json!({"command": "ls"})), ["seg"]);
        assert_eq!(
            may("Bash", json!({"command": "PSQL -c 1"})),
            ["psql", "seg"]
        );
        assert_eq!(may("Bash", json!({"command": ""})), Vec::<&str>::new());
        assert_eq!(may("Write", json!({"file_path": "a"})), ["write"]);
        // Non-ASCII text may fold to anything.
        assert_eq!(may("Bash", json!({"command": "ﬀ"})), ["psql", "seg"]);
    }

    #[test]
    fn contains_finds_every_occurrence_position() {
        for (hay, needle, want) in [
            ("psql -c 1", "psql", true),
            ("ppsql", "psql", true),
            ("a psq", "psql", false),
            ("xx", "", true),
            ("", "a", false),
            ("abab", "bab", true),
            ("abab", "bb", false),
        ] {
            assert_eq!(
                contains(hay.as_bytes(), needle.as_bytes()),
                want,
                "{hay} {needle}"
            );
        }
    }

    #[test]
    fn writing_an_index_removes_only_other_binaries_old_indexes_of_that_layer() {
        let dir = tempfile::tempdir().unwrap();
        let at = |kind, name, stamp| file_for(dir.path(), kind, name, stamp);
        let mine = at(LayerKind::User, "/r.json", "new");
        let old_build = at(LayerKind::User, "/r.json", "old");
        let other_binary = at(LayerKind::User, "/r.json", "other");
        let other_layer = at(LayerKind::Project, "/r.json", "old");
        assert_ne!(mine, old_build);
        let two_days_ago = std::time::SystemTime::now() - 2 * STALE_AFTER;
        for f in [&old_build, &other_binary, &other_layer] {
            std::fs::write(f, b"x").unwrap();
        }
        for f in [&old_build, &other_layer] {
            let file = std::fs::File::options().write(true).open(f).unwrap();
            file.set_modified(two_days_ago).unwrap();
        }
        store(&mine, b"index");
        assert_eq!(std::fs::read(&mine).unwrap(), b"index");
        assert!(!old_build.exists());
        assert!(other_binary.exists(), "a binary in use keeps its index");
        assert!(other_layer.exists(), "another layer's index is not touched");
    }

    #[test]
    fn any_damaged_byte_is_a_miss() {
        let bytes = index_bytes();
        for i in 0..bytes.len() {
            for flip in [0x01, 0x80, 0xff] {
                let mut b = bytes.clone();
                b[i] ^= flip;
                assert!(Index::read(&b, "s", TEXT).is_none(), "byte {i} ^ {flip:#x}");
            }
        }
    }

    proptest::proptest! {
        /// Even bytes whose checksum holds (written by a faulty binary) never panic, and
        /// a span that is read always lies inside the text.
        #[test]
        fn any_body_with_a_valid_checksum_reads_without_panic(
            body in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200),
        ) {
            let mut w = Writer(Vec::new());
            w.bytes(b"s").unwrap();
            w.bytes(TEXT.as_bytes()).unwrap();
            w.0.extend_from_slice(&body);
            w.0.extend_from_slice(&checksum(&body).to_le_bytes());
            if let Some(index) = Index::read(&w.0, "s", TEXT) {
                let input = json!({"command": "psql x", "file_path": "p"});
                let call = Subject::new("Bash", &input);
                for e in &index.entries {
                    proptest::prop_assert!(TEXT.get(e.span.clone()).is_some());
                    let _ = e.may_fire(&call);
                }
            }
        }
    }
}
