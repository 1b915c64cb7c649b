//! Generated histories: tool calls inserted into the store directly, audit records appended
//! through the real chain (`callus::testing::append`).

use chrono::{DateTime, Duration, Utc};
use rusqlite::{Connection, params};

use callus::testing::{AuditFired, AuditRecord, append};

use crate::common::Env;

/// A store being filled.
pub(crate) struct History {
    pub(crate) conn: Connection,
    next: usize,
}

/// `n` instants spread evenly over `[from, to)`.
pub(crate) fn spread(from: DateTime<Utc>, to: DateTime<Utc>, n: usize) -> Vec<DateTime<Utc>> {
    let step = (to - from) / (n.max(1) as i32);
    (0..n).map(|i| from + step * (i as i32)).collect()
}

/// Midnight UTC `days` days ago.
pub(crate) fn midnight_days_ago(days: i64) -> DateTime<Utc> {
    (Utc::now() - Duration::days(days))
        .date_naive()
        .and_hms_opt(0, 0, 0)
        .unwrap()
        .and_utc()
}

impl History {
    pub(crate) fn open(env: &Env) -> Self {
        History {
            conn: callus::testing::open_store(&env.db()).expect("open store"),
            next: 0,
        }
    }

    /// One call; returns its `tool_use_id`.
    pub(crate) fn call(
        &mut self,
        session: &str,
        tool: &str,
        command: &str,
        status: &str,
        at: DateTime<Utc>,
    ) -> String {
        self.call_shaped(session, tool, command, status, at, None, None)
    }

    /// One call with a command shape and error signature (what the recorder computes).
    #[allow(clippy::too_many_arguments)] // a row has this many columns
    pub(crate) fn call_shaped(
        &mut self,
        session: &str,
        tool: &str,
        command: &str,
        status: &str,
        at: DateTime<Utc>,
        shape: Option<&str>,
        signature: Option<&str>,
    ) -> String {
        self.next += 1;
        let id = format!("toolu_{:06}", self.next);
        self.conn
            .execute(
                "INSERT INTO tool_calls (tool_use_id, session_id, host, source, tool, status,
                     started_ms, command, shape, signature)
                 VALUES (?1, ?2, 'claude-code', 'hook', ?3, ?4, ?5, ?6, ?7, ?8)",
                params![
                    id,
                    session,
                    tool,
                    status,
                    at.timestamp_millis(),
                    command,
                    shape,
                    // The recorder stores a success's signature only when its output
                    // carries an error (a masked failure): plain successes have none.
                    signature.filter(|_| status != "success")
                ],
            )
            .expect("insert call");
        id
    }

    /// `n` calls of `command` spread over `[from, to)`, `fails` of them failing (spread too).
    /// Returns the ids, oldest first.
    pub(crate) fn calls(
        &mut self,
        command: &str,
        n: usize,
        fails: usize,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
    ) -> Vec<String> {
        spread(from, to, n)
            .into_iter()
            .enumerate()
            .map(|(i, at)| {
                let failed = (i + 1) * fails / n != i * fails / n;
                let status = if failed { "failure" } else { "success" };
                let session = format!("s{}", i % 7);
                self.call(&session, "Bash", command, status, at)
            })
            .collect()
    }

    /// A guard decision record in which `fired` (rule id, action) fired.
    pub(crate) fn fire(
        &self,
        fired: &[(&str, &str)],
        ts: Option<DateTime<Utc>>,
        tool_use_id: Option<&str>,
    ) {
        let decision = if fired.iter().any(|f| f.1 == "nudge") {
            "nudge"
        } else {
            "allow"
        };
        let record = AuditRecord {
            ts: ts.map_or_else(String::new, |t| {
                t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
            }),
            kind: "decision".into(),
            host: "claude-code".into(),
            session_id: Some("s0".into()),
            tool_use_id: tool_use_id.map(str::to_string),
            cwd: None,
            tool: "Bash".into(),
            fired: fired
                .iter()
                .map(|(id, action)| AuditFired {
                    id: (*id).to_string(),
                    layer: "project".into(),
                    file: "rules.json".into(),
                    action: (*action).to_string(),
                })
                .collect(),
            decision: decision.into(),
            winner: None,
            dryrun: false,
            ruleset_hash: "h".into(),
            version: "test".into(),
            command_sha256: None,
            command_preview: None,
            error: None,
            acs: callus::testing::AcsVerdict {
                decision: "allow".into(),
                reason: None,
                message: None,
                warnings: Vec::new(),
            },
        };
        if ts.is_some() {
            append(&self.conn, &record).expect("append audit");
        } else {
            // The chain refuses undated records on append; an undated one can only come from
            // an older or imported chain, so write it the way such a chain would hold it.
            let (seq, prev): (i64, String) = self
                .conn
                .query_row(
                    "SELECT COALESCE(MAX(seq), 0), COALESCE((SELECT hash FROM audit ORDER BY seq DESC LIMIT 1), 'GENESIS') FROM audit",
                    [],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .expect("read audit head");
            let canonical = record.canonical();
            let hash = callus::testing::chain_hash(&prev, &canonical);
            self.conn
                .execute(
                    "INSERT INTO audit (seq, ts_ms, tool_use_id, session_id, record, prev, hash) VALUES (?1, 0, ?2, ?3, ?4, ?5, ?6)",
                    rusqlite::params![seq + 1, record.tool_use_id, record.session_id, canonical, prev, hash],
                )
                .expect("insert undated audit record");
        }
    }

    /// `n` firings of one rule at `ts`, one per call id given (or without ids).
    pub(crate) fn fire_n(&self, id: &str, action: &str, n: usize, ts: Option<DateTime<Utc>>) {
        for _ in 0..n {
            self.fire(&[(id, action)], ts, None);
        }
    }
}
