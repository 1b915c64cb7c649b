//! The audit chain: one record per guard call where a rule fired, and per internal error,
//! each hashed over the previous record's hash, in the `audit` table of the store.
//!
//! Guarantees: the hash is `sha256(prev || canonical record)` with the canonical record the
//! compact JSON of [`AuditRecord`] (fixed field order); appends read the head and insert
//! inside one `BEGIN IMMEDIATE` transaction, so concurrent hooks extend a single chain and
//! never fork it; the raw command is never stored — only its SHA-256 and a redacted preview;
//! [`verify`] walks the whole chain and names the first record that does not check out,
//! including the copied join columns.

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use serde::{Deserialize, Serialize};

use crate::digest::sha256_hex;
use crate::{Error, Result};

/// The `prev` of the first record.
pub(crate) const GENESIS: &str = "GENESIS";

/// One fired rule as the chain records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditFired {
    /// Rule id.
    pub id: String,
    /// Layer kind (`starter`, `user`, `project`, `env`, `candidates`).
    pub layer: String,
    /// The layer's file (`starter` for the built-in set).
    pub file: String,
    /// Effective action.
    pub action: String,
}

/// One audit record. Field order is the canonical encoding: never reorder, only append new
/// optional fields at the end.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditRecord {
    /// UTC time, RFC 3339 with milliseconds.
    pub ts: String,
    /// `decision` or `error`.
    pub kind: String,
    /// `claude-code` or `codex`.
    pub host: String,
    /// The session, when the payload named one.
    pub session_id: Option<String>,
    /// The call (join key to the recorder's `tool_calls`).
    pub tool_use_id: Option<String>,
    /// The call's working directory.
    pub cwd: Option<String>,
    /// The tool name.
    pub tool: String,
    /// Every fired rule, in evaluation order.
    pub fired: Vec<AuditFired>,
    /// `allow`, `nudge`, `deny`, `block`.
    pub decision: String,
    /// The deciding rule for deny/block.
    pub winner: Option<String>,
    /// Decided but not enforced (`CALLUS_DRYRUN=1`).
    pub dryrun: bool,
    /// Hash over the active layers' contents.
    pub ruleset_hash: String,
    /// callus version.
    pub version: String,
    /// SHA-256 of the full command, when the call had one.
    pub command_sha256: Option<String>,
    /// Redacted, truncated command.
    pub command_preview: Option<String>,
    /// The internal error, for `kind = "error"` (or a decision reached despite one).
    pub error: Option<String>,
    /// The outcome as an ACS / agent-hooks verdict (built by `guard::acs`).
    pub acs: AcsVerdict,
}

/// Longest message kept in a verdict, in characters.
pub(crate) const MESSAGE_CHARS: usize = 200;

/// The reason of a verdict caused by an internal error.
pub(crate) const INTERNAL_ERROR: &str = "callus:internal_error";

/// An ACS / agent-hooks verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AcsVerdict {
    /// `allow` or `deny`.
    pub decision: String,
    /// Machine-readable reason (`callus:<rule id>`), for a deny.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Free text for the caller, for a deny.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Warnings of an allow (nudges, a fail-open error).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<AcsWarning>,
}

/// One warning attached to an `allow`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AcsWarning {
    /// `callus:<rule id>` or [`INTERNAL_ERROR`].
    pub reason: String,
    /// The message, capped at [`MESSAGE_CHARS`].
    pub message: String,
}

impl AuditRecord {
    /// The canonical encoding that is hashed.
    #[must_use]
    pub fn canonical(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// A record as stored, with its chain position.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Stored {
    /// Position in the chain, from 1.
    pub seq: i64,
    /// The record.
    #[serde(flatten)]
    pub record: AuditRecord,
    /// Hash of the previous record (or `GENESIS`).
    pub prev: String,
    /// This record's hash.
    pub hash: String,
}

/// Append `record`; returns its sequence number and hash.
pub fn append(conn: &Connection, record: &AuditRecord) -> Result<(i64, String)> {
    let canonical = record.canonical();
    let ts_ms = ts_millis(&record.ts).ok_or_else(|| {
        Error::Invalid(format!("audit record time '{}' is not RFC 3339", record.ts))
    })?;
    let tx = rusqlite::Transaction::new_unchecked(conn, TransactionBehavior::Immediate)
        .map_err(|e| Error::sql("begin audit append", e))?;
    let head: Option<(i64, String)> = tx
        .query_row(
            "SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()
        .map_err(|e| Error::sql("read audit head", e))?;
    let (seq, prev) = match head {
        Some((seq, hash)) => (seq + 1, hash),
        None => (1, GENESIS.to_string()),
    };
    let hash = chain_hash(&prev, &canonical);
    tx.execute(
        "INSERT INTO audit (seq, ts_ms, tool_use_id, session_id, record, prev, hash)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![
            seq,
            ts_ms,
            record.tool_use_id,
            record.session_id,
            canonical,
            prev,
            hash
        ],
    )
    .map_err(|e| Error::sql("append audit record", e))?;
    tx.commit()
        .map_err(|e| Error::sql("commit audit record", e))?;
    Ok((seq, hash))
}

fn ts_millis(ts: &str) -> Option<i64> {
    chrono::DateTime::parse_from_rfc3339(ts)
        .ok()
        .map(|t| t.timestamp_millis())
}

/// `sha256(prev || canonical)` as lowercase hex.
#[must_use]
pub fn chain_hash(prev: &str, canonical: &str) -> String {
    let mut buf = String::with_capacity(prev.len() + canonical.len());
    buf.push_str(prev);
    buf.push_str(canonical);
    sha256_hex(buf.as_bytes())
}

/// The result of walking the chain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Verification {
    /// Records checked.
    pub records: i64,
    /// The first bad record and what is wrong with it.
    pub broken: Option<(i64, String)>,
    /// The last good record's `SEQ:HASH`, to anchor later verifications.
    pub head: Option<String>,
}

/// Walk the whole chain. `expect_head` (`SEQ:HASH`) additionally requires that record to
/// carry that hash.
pub(crate) fn verify(conn: &Connection, expect_head: Option<&str>) -> Result<Verification> {
    let mut stmt = conn
        .prepare(
            "SELECT seq, tool_use_id, session_id, record, prev, hash, ts_ms FROM audit ORDER BY seq",
        )
        .map_err(|e| Error::sql("read audit chain", e))?;
    let mut rows = stmt
        .query([])
        .map_err(|e| Error::sql("read audit chain", e))?;
    let mut expected_prev = GENESIS.to_string();
    let mut expected_seq = 1i64;
    let mut records = 0i64;
    let mut head = None;
    let mut broken = None;
    let anchor = match expect_head {
        Some(s) => Some(parse_anchor(s)?),
        None => None,
    };
    let mut anchor_seen = false;
    while let Some(row) = rows.next().map_err(|e| Error::sql("read audit chain", e))? {
        let seq: i64 = row.get(0).map_err(|e| Error::sql("read audit seq", e))?;
        let tool_use_id: Option<String> =
            row.get(1).map_err(|e| Error::sql("read audit row", e))?;
        let session_id: Option<String> = row.get(2).map_err(|e| Error::sql("read audit row", e))?;
        let text: String = row.get(3).map_err(|e| Error::sql("read audit row", e))?;
        let prev: String = row.get(4).map_err(|e| Error::sql("read audit row", e))?;
        let hash: String = row.get(5).map_err(|e| Error::sql("read audit row", e))?;
        let ts_ms: i64 = row.get(6).map_err(|e| Error::sql("read audit row", e))?;
        records += 1;
        let problem = if seq != expected_seq {
            Some(format!("sequence jumps from {} to {seq}", expected_seq - 1))
        } else if prev != expected_prev {
            Some("prev does not match the previous record's hash".to_string())
        } else if chain_hash(&prev, &text) != hash {
            Some("hash does not match the record".to_string())
        } else {
            match serde_json::from_str::<AuditRecord>(&text) {
                Err(e) => Some(format!("record is not a valid audit record: {e}")),
                Ok(r) if r.canonical() != text => Some("record is not canonical".to_string()),
                Ok(r) if r.tool_use_id != tool_use_id || r.session_id != session_id => {
                    Some("join columns differ from the record".to_string())
                }
                Ok(r) if ts_millis(&r.ts) != Some(ts_ms) => {
                    Some("time column differs from the record".to_string())
                }
                Ok(_) => None,
            }
        };
        if let Some(p) = problem {
            broken = Some((seq, p));
            break;
        }
        if let Some((aseq, ahash)) = &anchor
            && *aseq == seq
        {
            anchor_seen = true;
            if *ahash != hash {
                broken = Some((seq, format!("hash differs from the expected head {ahash}")));
                break;
            }
        }
        head = Some(format!("{seq}:{hash}"));
        expected_prev = hash;
        expected_seq = seq + 1;
    }
    if broken.is_none()
        && let Some((aseq, _)) = anchor
        && !anchor_seen
    {
        broken = Some((aseq, "the expected head record is missing".to_string()));
    }
    Ok(Verification {
        records,
        broken,
        head,
    })
}

pub(crate) fn parse_anchor(s: &str) -> Result<(i64, String)> {
    let (seq, hash) = s
        .split_once(':')
        .ok_or_else(|| Error::Invalid(format!("--expect-head '{s}': expected SEQ:HASH")))?;
    let seq = seq
        .trim()
        .parse::<i64>()
        .map_err(|_| Error::Invalid(format!("--expect-head '{s}': SEQ is not a number")))?;
    Ok((seq, hash.trim().to_ascii_lowercase()))
}

/// The newest `n` records, oldest first.
pub(crate) fn tail(conn: &Connection, n: usize) -> Result<Vec<Stored>> {
    let mut out = read(
        conn,
        "SELECT seq, record, prev, hash FROM audit ORDER BY seq DESC LIMIT ?1",
        n as i64,
    )?;
    out.reverse();
    Ok(out)
}

/// Every record from `from_seq` on, oldest first.
pub(crate) fn since(conn: &Connection, from_seq: i64) -> Result<Vec<Stored>> {
    read(
        conn,
        "SELECT seq, record, prev, hash FROM audit WHERE seq >= ?1 ORDER BY seq",
        from_seq,
    )
}

fn read(conn: &Connection, sql: &str, arg: i64) -> Result<Vec<Stored>> {
    let mut stmt = conn.prepare(sql).map_err(|e| Error::sql("read audit", e))?;
    let rows = stmt
        .query_map([arg], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
            ))
        })
        .map_err(|e| Error::sql("read audit", e))?;
    let mut out = Vec::new();
    for row in rows {
        let (seq, text, prev, hash) = row.map_err(|e| Error::sql("read audit", e))?;
        let record: AuditRecord = serde_json::from_str(&text)
            .map_err(|e| Error::json(format!("audit record {seq}"), e))?;
        out.push(Stored {
            seq,
            record,
            prev,
            hash,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(i: usize) -> AuditRecord {
        AuditRecord {
            ts: "2026-11-29T10:00:00.000Z".into(),
            kind: "decision".into(),
            host: "claude-code".into(),
            session_id: Some("s".into()),
            tool_use_id: Some(format!("t{i}")),
            cwd: None,
            tool: "Bash".into(),
            fired: vec![],
            decision: "nudge".into(),
            winner: None,
            dryrun: false,
            ruleset_hash: "h".into(),
            version: "0".into(),
            command_sha256: None,
            command_preview: None,
            error: None,
            acs: crate::guard::acs::for_error("x", false),
        }
    }

    #[test]
    fn chain_verifies_and_detects_tampering() {
        let conn = crate::store::open_in_memory().unwrap();
        for i in 0..4 {
            append(&conn, &rec(i)).unwrap();
        }
        let v = verify(&conn, None).unwrap();
        assert_eq!(v.records, 4);
        assert_eq!(v.broken, None);
        let head = v.head.clone().unwrap();
        assert!(verify(&conn, Some(&head)).unwrap().broken.is_none());
        assert!(verify(&conn, Some("4:00")).unwrap().broken.is_some());
        conn.execute(
            "UPDATE audit SET record = replace(record, '\"nudge\"', '\"allow\"') WHERE seq = 2",
            [],
        )
        .unwrap();
        assert_eq!(verify(&conn, None).unwrap().broken.unwrap().0, 2);
    }

    fn chain(n: usize) -> Connection {
        let conn = crate::store::open_in_memory().unwrap();
        for i in 0..n {
            append(&conn, &rec(i)).unwrap();
        }
        conn
    }

    /// Replace record `seq`'s text and re-hash it, as a forger who knows the scheme would.
    fn rewrite(conn: &Connection, seq: i64, text: &str) {
        let prev: String = conn
            .query_row("SELECT prev FROM audit WHERE seq = ?1", [seq], |r| r.get(0))
            .unwrap();
        conn.execute(
            "UPDATE audit SET record = ?1, hash = ?2 WHERE seq = ?3",
            params![text, chain_hash(&prev, text), seq],
        )
        .unwrap();
    }

    fn problem(conn: &Connection) -> Option<(i64, String)> {
        verify(conn, None).unwrap().broken
    }

    #[test]
    fn the_hash_is_sha256_of_prev_then_record() {
        assert_eq!(
            chain_hash(GENESIS, r#"{"a":1}"#),
            "5147935b1f466425bde7fb5ddc845c90a94c7619d6c1108f45546dcedc064737"
        );
        let conn = chain(2);
        let (prev, text, hash): (String, String, String) = conn
            .query_row(
                "SELECT prev, record, hash FROM audit WHERE seq = 2",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .unwrap();
        assert_eq!(text, rec(1).canonical());
        assert_eq!(hash, sha256_hex(format!("{prev}{text}").as_bytes()));
    }

    #[test]
    fn a_rehashed_record_must_still_be_canonical() {
        let conn = chain(3);
        let text: String = conn
            .query_row("SELECT record FROM audit WHERE seq = 3", [], |r| r.get(0))
            .unwrap();
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        // Valid JSON of the same record, with the hash recomputed over it.
        let pretty = serde_json::to_string_pretty(&value).unwrap();
        assert_ne!(pretty, text);
        rewrite(&conn, 3, &pretty);
        assert_eq!(
            problem(&conn),
            Some((3, "record is not canonical".to_string()))
        );
        // Not an audit record at all.
        rewrite(&conn, 3, r#"{"ts": 1}"#);
        let (seq, why) = problem(&conn).unwrap();
        assert_eq!(seq, 3);
        assert!(
            why.starts_with("record is not a valid audit record"),
            "{why}"
        );
    }

    #[test]
    fn the_time_column_is_the_record_time() {
        let conn = chain(2);
        let ts_ms: i64 = conn
            .query_row("SELECT ts_ms FROM audit WHERE seq = 1", [], |r| r.get(0))
            .unwrap();
        // 2026-11-29T10:00:00.000Z
        assert_eq!(ts_ms, 1_795_946_400_000);
        // A record re-dated (canonically, re-hashed) no longer matches its column.
        let mut r = rec(1);
        r.ts = "2026-11-29T10:00:00.001Z".into();
        rewrite(&conn, 2, &r.canonical());
        assert_eq!(
            problem(&conn),
            Some((2, "time column differs from the record".to_string()))
        );
    }

    #[test]
    fn a_time_that_is_not_rfc3339_is_refused_before_anything_is_written() {
        let conn = chain(1);
        let mut r = rec(9);
        r.ts = "2026-11-29 10:00".into();
        let err = append(&conn, &r).unwrap_err().to_string();
        assert!(err.contains("'2026-11-29 10:00' is not RFC 3339"), "{err}");
        let n: i64 = conn
            .query_row("SELECT count(*) FROM audit", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 1);
        assert_eq!(append(&conn, &rec(2)).unwrap().0, 2);
    }

    #[test]
    fn each_break_is_named() {
        let cases = [
            (
                "UPDATE audit SET seq = 30 WHERE seq = 4",
                (30, "sequence jumps from 3 to 30"),
            ),
            (
                "UPDATE audit SET prev = 'GENESIS' WHERE seq = 3",
                (3, "prev does not match the previous record's hash"),
            ),
            (
                "UPDATE audit SET hash = 'x' WHERE seq = 4",
                (4, "hash does not match the record"),
            ),
            (
                "UPDATE audit SET tool_use_id = NULL WHERE seq = 2",
                (2, "join columns differ from the record"),
            ),
            (
                "UPDATE audit SET session_id = 'other' WHERE seq = 2",
                (2, "join columns differ from the record"),
            ),
        ];
        for (sql, (seq, why)) in cases {
            let conn = chain(4);
            conn.execute(sql, []).unwrap();
            assert_eq!(problem(&conn), Some((seq, why.to_string())), "{sql}");
        }
    }

    #[test]
    fn the_expected_head_anchors_the_chain() {
        let conn = chain(3);
        let v = verify(&conn, None).unwrap();
        assert_eq!(v.records, 3);
        let head = v.head.unwrap();
        let (seq, hash) = head.split_once(':').unwrap();
        assert_eq!(seq, "3");
        // Spaces and upper case in the anchor are forgiven.
        let loose = format!(" {seq} : {} ", hash.to_ascii_uppercase());
        assert_eq!(verify(&conn, Some(&loose)).unwrap().broken, None);
        // An earlier record can anchor too.
        let first: String = conn
            .query_row("SELECT hash FROM audit WHERE seq = 1", [], |r| r.get(0))
            .unwrap();
        assert_eq!(
            verify(&conn, Some(&format!("1:{first}"))).unwrap().broken,
            None
        );
        assert_eq!(
            verify(&conn, Some("2:abc")).unwrap().broken,
            Some((2, "hash differs from the expected head abc".to_string()))
        );
        assert_eq!(
            verify(&conn, Some("9:abc")).unwrap().broken,
            Some((9, "the expected head record is missing".to_string()))
        );
        for bad in ["9", "x:abc"] {
            assert!(verify(&conn, Some(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn tail_and_since_read_in_chain_order() {
        let conn = chain(5);
        let seqs = |v: Vec<Stored>| v.iter().map(|s| s.seq).collect::<Vec<_>>();
        assert_eq!(seqs(tail(&conn, 2).unwrap()), [4, 5]);
        assert_eq!(seqs(since(&conn, 4).unwrap()), [4, 5]);
        let all = since(&conn, 1).unwrap();
        assert_eq!(all[0].prev, GENESIS);
        assert_eq!(all[1].prev, all[0].hash);
        assert_eq!(all[2].record, rec(2));
    }

    #[test]
    fn every_stored_column_is_covered() {
        for sql in [
            "UPDATE audit SET ts_ms = ts_ms + 1 WHERE seq = 3",
            "UPDATE audit SET tool_use_id = 'other' WHERE seq = 3",
            "UPDATE audit SET session_id = NULL WHERE seq = 3",
            "UPDATE audit SET prev = 'GENESIS' WHERE seq = 3",
            "UPDATE audit SET hash = 'x' WHERE seq = 3",
            "UPDATE audit SET seq = 30 WHERE seq = 3",
        ] {
            let conn = crate::store::open_in_memory().unwrap();
            for i in 0..4 {
                append(&conn, &rec(i)).unwrap();
            }
            conn.execute(sql, []).unwrap();
            let broken = verify(&conn, None).unwrap().broken;
            assert!(broken.is_some(), "{sql} went unnoticed");
            // A changed hash is noticed at its own record or, via prev, at the next one.
            assert!(matches!(broken.unwrap().0, 3 | 4 | 30), "{sql}");
        }
    }
}
