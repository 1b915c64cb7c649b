//! One-time approvals: `callus allow-once CODE` lets exactly one refused call through.
//!
//! The model (see `docs/threat-model.md` for what it does and does not protect):
//!
//! - **The code.** When the guard refuses a call that has a command, the refusal text ends
//!   with a six-character code. The code is `HMAC(digest key, command digest, project, tool,
//!   refusal time)` in an unambiguous alphabet, so it names one refusal: that command (its
//!   keyed digest, never the text), that project (the repository root of the call's cwd, else
//!   the cwd) and that tool. Nothing extra is written on the refusal path: the refusal's own
//!   audit record holds everything the code is computed from.
//! - **The grant.** `callus allow-once CODE` (app layer) refuses unless stdin and stdout are
//!   terminals and no agent's tool-call environment is present; it then finds the refusal in
//!   the audit chain (at most [`TTL_SECS`] old), appends an `allow-once-granted` record and
//!   writes `$CALLUS_HOME/approvals/CODE.json`, which expires [`TTL_SECS`] later.
//! - **The use.** When the guard refuses a call again, and only then (the quiet path never
//!   looks), it looks for a grant with the same digest, project and tool, unexpired, whose
//!   MAC checks and whose `allow-once-granted` record is in the chain at the sequence number
//!   it names. It claims the file by renaming it (so two racing hooks cannot both use it),
//!   appends an `allow-once-used` record, and only when that append succeeded lets the call
//!   through (as a nudge saying so). A call is never let through by an approval unseen: no
//!   use record, no pass.
//!
//! The approval is checked after `guard::evaluate`, at the hook's edge: the decision stays
//! pure, and the audit keeps the refusal that the approval overrode.

use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::config::Home;
use crate::store::audit::{AcsVerdict, AuditRecord};
use crate::{Error, Result};

/// How long a code may be granted after its refusal, and a grant used after it was given.
pub(crate) const TTL_SECS: i64 = 600;
/// The audit kind of a grant.
pub(crate) const GRANTED: &str = "allow-once-granted";
/// The audit kind of a use.
pub(crate) const USED: &str = "allow-once-used";
/// The ACS reason of both records.
const REASON: &str = "callus:allow_once";
/// Code letters: no `0`/`O`, `1`/`I`, so a code read aloud or retyped survives.
const ALPHABET: &[u8; 32] = b"ABCDEFGHJKLMNPQRSTUVWXYZ23456789";
const CODE_LEN: usize = 6;
/// How far back in the chain a refusal (or a grant's record) is looked for.
const LOOKBACK: usize = 5000;
/// A grant file is a few hundred bytes; anything larger is not ours.
const GRANT_CAP: u64 = 8 * 1024;

/// Environment variables that the hosts set in the commands their agents run: when one is
/// present, `allow-once` is being run by an agent, not a person.
pub(crate) const AGENT_MARKERS: &[&str] = &[
    "CLAUDECODE",
    "CLAUDE_CODE_ENTRYPOINT",
    "CODEX_SANDBOX",
    "CODEX_SANDBOX_NETWORK_DISABLED",
    "CODEX_THREAD_ID",
    "GEMINI_CLI",
    "CURSOR_AGENT",
    "CURSOR_TRACE_ID",
    "COPILOT_CLI",
];

/// The directory of grants.
fn dir(home: &Home) -> PathBuf {
    home.dir.join("approvals")
}

/// The directory of the store (where the digest key lives).
fn key_dir(home: &Home) -> PathBuf {
    let db = home.db_path();
    db.parent()
        .map_or_else(|| home.dir.clone(), Path::to_path_buf)
}

/// The project a call belongs to: the repository root of its cwd, else the cwd.
#[must_use]
pub(crate) fn project(cwd: &str) -> String {
    let path = Path::new(cwd);
    crate::config::repo_root(path)
        .unwrap_or_else(|| path.to_path_buf())
        .display()
        .to_string()
}

/// The code of a refusal's audit record (`None` without a command digest or a cwd).
#[must_use]
pub(crate) fn code_for(home: &Home, record: &AuditRecord) -> Option<String> {
    let sha = record.command_sha256.as_deref()?;
    let project = project(record.cwd.as_deref()?);
    let mac = crate::digest::keyed(
        &key_dir(home),
        &format!(
            "callus allow-once\0{sha}\0{project}\0{}\0{}",
            record.tool, record.ts
        ),
    )?;
    let bits = u64::from_str_radix(mac.get(..12)?, 16).ok()?;
    Some(
        (0..CODE_LEN)
            .map(|i| char::from(ALPHABET[usize::try_from((bits >> (5 * i)) & 31).unwrap_or(0)]))
            .collect(),
    )
}

/// The sentence a refusal ends with.
#[must_use]
pub(crate) fn refusal_note(code: &str) -> String {
    format!(
        " [If this refusal is wrong, only a person can let this exact call through once: ask \
         the user to run `callus allow-once {code}` in their own terminal within {} minutes.]",
        TTL_SECS / 60
    )
}

/// A grant as stored in `approvals/CODE.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Grant {
    code: String,
    command_sha256: String,
    project: String,
    tool: String,
    rule: Option<String>,
    granted_at: String,
    expires: String,
    /// The sequence number of its `allow-once-granted` audit record.
    audit_seq: i64,
    tty: String,
    mac: String,
}

impl Grant {
    fn mac_text(&self) -> String {
        format!(
            "callus grant\0{}\0{}\0{}\0{}\0{}\0{}",
            self.code, self.command_sha256, self.project, self.tool, self.expires, self.audit_seq
        )
    }
}

/// What `callus allow-once` granted.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Granted {
    /// The code.
    pub code: String,
    /// The refused command, redacted and shortened.
    pub command: Option<String>,
    /// The rule that refused it.
    pub rule: Option<String>,
    /// The project it is bound to.
    pub project: String,
    /// When the grant lapses (RFC 3339).
    pub expires: String,
    /// The grant's audit record.
    pub audit_seq: i64,
}

fn rfc3339(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

fn parse_ts(ts: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(ts)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

/// Normalise what a person typed: case-insensitive, spaces and dashes ignored.
fn normalise(code: &str) -> String {
    code.chars()
        .filter(|c| !c.is_whitespace() && *c != '-')
        .map(|c| c.to_ascii_uppercase())
        .collect()
}

/// Grant the refusal that printed `code`: append the audit record, write the grant file.
///
/// # Errors
/// [`Error::Invalid`] when no refusal of the last [`TTL_SECS`] has that code; store and file
/// errors as they come.
pub(crate) fn grant(home: &Home, code: &str, tty: &str, now: DateTime<Utc>) -> Result<Granted> {
    let code = normalise(code);
    let not_found = || {
        Error::Invalid(format!(
            "allow-once: no call refused in the last {} minutes has code {code} (codes expire; \
             the refusal prints a new one each time)",
            TTL_SECS / 60
        ))
    };
    if code.len() != CODE_LEN || !code.bytes().all(|b| ALPHABET.contains(&b)) {
        return Err(Error::Invalid(format!(
            "allow-once: '{code}' is not a code ({CODE_LEN} letters and digits, as the refusal \
             printed it)"
        )));
    }
    let db = home.db_path();
    let conn = crate::store::open_existing(&db)?.ok_or_else(not_found)?;
    let refusal = refusal(home, &conn, &code, now)?.ok_or_else(not_found)?;
    let sha = refusal.command_sha256.clone().ok_or_else(not_found)?;
    let project = project(refusal.cwd.as_deref().ok_or_else(not_found)?);
    let expires = rfc3339(now + chrono::Duration::seconds(TTL_SECS));
    let record = granted_record(&refusal, &project, &code, tty, now, &expires);
    let (seq, _) = crate::store::audit::append(&conn, &record)?;
    let mut grant = Grant {
        code: code.clone(),
        command_sha256: sha,
        project: project.clone(),
        tool: refusal.tool.clone(),
        rule: refusal.winner.clone(),
        granted_at: rfc3339(now),
        expires: expires.clone(),
        audit_seq: seq,
        tty: tty.to_string(),
        mac: String::new(),
    };
    grant.mac = crate::digest::keyed(&key_dir(home), &grant.mac_text()).unwrap_or_default();
    write_grant(home, &grant)?;
    Ok(Granted {
        code,
        command: refusal.command_preview,
        rule: refusal.winner,
        project,
        expires,
        audit_seq: seq,
    })
}

/// The newest refusal (a deny or block decision, not a dry run) of the last [`TTL_SECS`]
/// before `now`, among the last [`LOOKBACK`] audit records, whose code is `code`.
fn refusal(
    home: &Home,
    conn: &rusqlite::Connection,
    code: &str,
    now: DateTime<Utc>,
) -> Result<Option<AuditRecord>> {
    let since = now - chrono::Duration::seconds(TTL_SECS);
    Ok(crate::store::audit::tail(conn, LOOKBACK)?
        .into_iter()
        .rev()
        .map(|s| s.record)
        .filter(|r| {
            r.kind == "decision"
                && matches!(r.decision.as_str(), "deny" | "block")
                && !r.dryrun
                && parse_ts(&r.ts).is_some_and(|t| t >= since && t <= now)
        })
        .find(|r| code_for(home, r).as_deref() == Some(code)))
}

/// The `allow-once-granted` audit record of granting `refusal` by `code` at terminal `tty`
/// until `expires`: the refusal's call, the project it ran in, an ACS `allow`.
fn granted_record(
    refusal: &AuditRecord,
    project: &str,
    code: &str,
    tty: &str,
    now: DateTime<Utc>,
    expires: &str,
) -> AuditRecord {
    AuditRecord {
        ts: rfc3339(now),
        kind: GRANTED.into(),
        cwd: Some(project.to_string()),
        fired: Vec::new(),
        decision: "allow".into(),
        dryrun: false,
        version: env!("CARGO_PKG_VERSION").into(),
        error: None,
        acs: AcsVerdict {
            decision: "allow".into(),
            reason: Some(REASON.into()),
            message: Some(crate::redact::redact_capped(
                &format!("code {code} granted at terminal {tty}; one use until {expires}"),
                200,
            )),
            warnings: Vec::new(),
        },
        ..refusal.clone()
    }
}

/// Write `grant` as `<code>.json` in the private grants directory.
fn write_grant(home: &Home, grant: &Grant) -> Result<()> {
    let dir = dir(home);
    crate::config::ensure_private_dir(&dir)?;
    let text = serde_json::to_vec_pretty(grant).map_err(|e| Error::Json {
        origin: "allow-once grant".into(),
        source: e,
    })?;
    crate::config::replace_file(&dir.join(format!("{}.json", grant.code)), &text)
}

/// At the hook's edge, for a call the rules refused (`record`: its audit record, already
/// appended): use a matching grant if there is one.
///
/// Returns the note for the agent when the call may proceed; `None` leaves the refusal
/// standing (no grant, or the use could not be audited).
#[must_use]
pub(crate) fn use_grant(home: &Home, record: &AuditRecord, now: DateTime<Utc>) -> Option<String> {
    let dir = dir(home);
    // The usual case: no grant was ever given, one failed `read_dir`.
    let entries = std::fs::read_dir(&dir).ok()?;
    let sha = record.command_sha256.as_deref()?;
    let project = project(record.cwd.as_deref()?);
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let Ok(Some(text)) = crate::untrusted::read(&path, Some(&dir), GRANT_CAP) else {
            continue;
        };
        let Ok(grant) = serde_json::from_str::<Grant>(&text) else {
            continue;
        };
        let Some(expires) = parse_ts(&grant.expires) else {
            continue;
        };
        if expires <= now {
            // Lapsed: tidy it away.
            let _ = std::fs::remove_file(&path);
            continue;
        }
        if grant.command_sha256 != sha || grant.project != project || grant.tool != record.tool {
            continue;
        }
        let mac = crate::digest::keyed(&key_dir(home), &grant.mac_text());
        if mac.as_deref() != Some(grant.mac.as_str()) {
            continue;
        }
        // Claim it: exactly one hook wins the rename.
        let claimed = path.with_extension(format!("used-{}", std::process::id()));
        if std::fs::rename(&path, &claimed).is_err() {
            continue;
        }
        let outcome = audit_use(home, record, &grant, now);
        let _ = std::fs::remove_file(&claimed);
        return outcome.ok().flatten();
    }
    None
}

/// Check the grant's chain record and append the use; `Ok(Some(note))` when both held.
fn audit_use(
    home: &Home,
    record: &AuditRecord,
    grant: &Grant,
    now: DateTime<Utc>,
) -> Result<Option<String>> {
    let conn = crate::store::open_for_hook(&home.db_path())?;
    let after = crate::store::audit::since(&conn, grant.audit_seq)?;
    // A grant is used once: a copy of the file put back finds its use in the chain.
    let used_before = format!("code {} used:", grant.code);
    if after.iter().any(|s| {
        s.record.kind == USED
            && s.record
                .acs
                .message
                .as_deref()
                .is_some_and(|m| m.starts_with(&used_before))
    }) {
        return Ok(None);
    }
    let granted = after.into_iter().next().filter(|s| {
        s.seq == grant.audit_seq
            && s.record.kind == GRANTED
            && s.record.command_sha256.as_deref() == Some(grant.command_sha256.as_str())
            && s.record
                .acs
                .message
                .as_deref()
                .is_some_and(|m| m.starts_with(&format!("code {} ", grant.code)))
    });
    if granted.is_none() {
        return Ok(None);
    }
    let rule = record.winner.clone().unwrap_or_default();
    let used = AuditRecord {
        ts: rfc3339(now),
        kind: USED.into(),
        fired: Vec::new(),
        decision: "allow".into(),
        acs: AcsVerdict {
            decision: "allow".into(),
            reason: Some(REASON.into()),
            message: Some(format!(
                "code {} used: rule {rule} overridden once (granted at {} on {})",
                grant.code, grant.granted_at, grant.tty
            )),
            warnings: Vec::new(),
        },
        ..record.clone()
    };
    crate::store::audit::append(&conn, &used)?;
    Ok(Some(format!(
        "callus:\n- A person approved this exact call once (allow-once {}); rule {rule} would \
         have refused it. [rule {rule}]",
        grant.code
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_typed_loosely_but_checked_strictly() {
        assert_eq!(normalise(" ab-c2 3d "), "ABC23D");
        let home = Home::at(tempfile::tempdir().unwrap().path());
        let now = Utc::now();
        for bad in ["ABC", "ABCDE0", "ABCDEFG"] {
            let e = grant(&home, bad, "tty", now).unwrap_err().to_string();
            assert!(e.contains("is not a code"), "{bad}: {e}");
        }
    }

    fn refusal(ts: DateTime<Utc>, cwd: &Path) -> AuditRecord {
        AuditRecord {
            ts: rfc3339(ts),
            kind: "decision".into(),
            host: "claude-code".into(),
            session_id: None,
            tool_use_id: None,
            cwd: Some(cwd.display().to_string()),
            tool: "Bash".into(),
            fired: Vec::new(),
            decision: "deny".into(),
            winner: Some("r".into()),
            dryrun: false,
            ruleset_hash: String::new(),
            version: String::new(),
            command_sha256: Some("ab".into()),
            command_preview: Some("denyme".into()),
            error: None,
            acs: AcsVerdict {
                decision: "deny".into(),
                reason: None,
                message: None,
                warnings: Vec::new(),
            },
        }
    }

    #[test]
    fn a_code_lapses_ten_minutes_after_its_refusal_and_a_grant_ten_after_it_was_given() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::at(dir.path());
        let conn = crate::store::open(&home.db_path()).unwrap();
        let now = Utc::now();
        let minutes = chrono::Duration::minutes;
        let stale = refusal(now - minutes(11), dir.path());
        let fresh = refusal(now - minutes(9), dir.path());
        crate::store::audit::append(&conn, &stale).unwrap();
        crate::store::audit::append(&conn, &fresh).unwrap();
        let e = grant(&home, &code_for(&home, &stale).unwrap(), "pts", now).unwrap_err();
        assert!(
            e.to_string()
                .contains("no call refused in the last 10 minutes"),
            "{e}"
        );
        let code = code_for(&home, &fresh).unwrap();
        let g = grant(&home, &code, "pts", now).unwrap();
        assert_eq!(g.rule.as_deref(), Some("r"));
        let file = dir.path().join("approvals").join(format!("{code}.json"));
        assert!(file.exists());
        // Eleven minutes on, the identical refusal finds only a lapsed grant, and tidies it.
        let later = refusal(now + minutes(11), dir.path());
        assert_eq!(use_grant(&home, &later, now + minutes(11)), None);
        assert!(!file.exists());
    }

    #[test]
    fn a_grant_is_used_once_inside_its_ten_minutes() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::at(dir.path());
        let conn = crate::store::open(&home.db_path()).unwrap();
        let now = Utc::now();
        let first = refusal(now, dir.path());
        crate::store::audit::append(&conn, &first).unwrap();
        let code = code_for(&home, &first).unwrap();
        grant(&home, &code, "pts", now).unwrap();
        // Another project's identical command does not match it, and leaves it unused.
        let other = tempfile::tempdir().unwrap();
        let moved = refusal(now, other.path());
        assert_eq!(use_grant(&home, &moved, now), None);
        let again = refusal(now + chrono::Duration::minutes(9), dir.path());
        let note = use_grant(&home, &again, now + chrono::Duration::minutes(9)).unwrap();
        assert!(note.contains(&format!("allow-once {code}")), "{note}");
        assert_eq!(
            use_grant(&home, &again, now + chrono::Duration::minutes(9)),
            None
        );
    }

    #[test]
    fn a_code_names_one_refusal() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::at(dir.path());
        let ts = parse_ts("2026-12-01T10:00:00.000Z").unwrap();
        let record = AuditRecord {
            command_preview: None,
            ..refusal(ts, Path::new("/nowhere/a"))
        };
        let code = code_for(&home, &record).unwrap();
        assert_eq!(code.len(), CODE_LEN);
        assert!(code.bytes().all(|b| ALPHABET.contains(&b)));
        assert_eq!(code_for(&home, &record).as_deref(), Some(code.as_str()));
        let other_project = AuditRecord {
            cwd: Some("/nowhere/b".into()),
            ..record.clone()
        };
        let other_command = AuditRecord {
            command_sha256: Some("cd".into()),
            ..record.clone()
        };
        assert_ne!(code_for(&home, &other_project), Some(code.clone()));
        assert_ne!(code_for(&home, &other_command), Some(code));
        let no_command = AuditRecord {
            command_sha256: None,
            ..record
        };
        assert_eq!(code_for(&home, &no_command), None);
    }
}
