//! How a newly observed call merges into the row already stored under its `tool_use_id`.
//!
//! A hook row, a transcript row and a rollout row of the same call become one row whatever
//! order they arrive in. [`changes`] decides, in Rust, which columns of the stored row the
//! new observation replaces, so the writer runs a short `UPDATE` of just those columns
//! (or nothing at all) instead of one large SQL upsert whose parse and code generation
//! cost more than the rest of a hook call. The rules:
//! - a settled outcome replaces `pending`; `pending` never replaces a settled outcome;
//! - a settled outcome with an exit code replaces a success/failure that had none (a Codex
//!   hook that could not read the rollout, later imported); when an outcome is taken, its
//!   status, error, signature and exit code come with it, and its shape, blamed segment and
//!   end time win when it has them;
//! - otherwise the first non-null value of each column stays (an empty tool name counts as
//!   unknown), and a missing duration is the new end time minus the stored start.
//!
//! `host` and `source` are never changed: they say who saw the call first.

use rusqlite::types::Value;

use super::classify::Status;

/// The stored columns the merge reads, keyed by `tool_use_id` (`?1`).
pub(super) const SELECT_STORED: &str = "SELECT session_id IS NULL, tool = '', status, exit_code,
    shape, started_ms, ended_ms, duration_ms, command IS NULL, input_sha256 IS NULL,
    cwd IS NULL, agent_id IS NULL, facts IS NULL, blamed
FROM tool_calls WHERE tool_use_id = ?1";

/// What the merge needs to know of a stored row (read by [`SELECT_STORED`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Stored {
    pub(super) no_session: bool,
    pub(super) no_tool: bool,
    pub(super) status: String,
    pub(super) exit_code: Option<i64>,
    pub(super) shape: Option<String>,
    pub(super) started_ms: Option<i64>,
    pub(super) ended_ms: Option<i64>,
    pub(super) duration_ms: Option<i64>,
    pub(super) no_command: bool,
    pub(super) no_input_sha256: bool,
    pub(super) no_cwd: bool,
    pub(super) no_agent: bool,
    pub(super) no_facts: bool,
    pub(super) blamed: Option<String>,
}

impl Stored {
    /// Read one result row of [`SELECT_STORED`].
    pub(super) fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Self> {
        Ok(Stored {
            no_session: r.get(0)?,
            no_tool: r.get(1)?,
            status: r.get(2)?,
            exit_code: r.get(3)?,
            shape: r.get(4)?,
            started_ms: r.get(5)?,
            ended_ms: r.get(6)?,
            duration_ms: r.get(7)?,
            no_command: r.get(8)?,
            no_input_sha256: r.get(9)?,
            no_cwd: r.get(10)?,
            no_agent: r.get(11)?,
            no_facts: r.get(12)?,
            blamed: r.get(13)?,
        })
    }
}

/// A call's row as it would be stored new: redacted, capped, shaped and signed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Row<'a> {
    pub(super) tool_use_id: &'a str,
    pub(super) session_id: Option<&'a str>,
    pub(super) host: &'static str,
    pub(super) source: &'static str,
    pub(super) tool: &'a str,
    pub(super) status: Status,
    pub(super) started_ms: Option<i64>,
    pub(super) ended_ms: Option<i64>,
    pub(super) duration_ms: Option<i64>,
    pub(super) command: Option<String>,
    pub(super) input_sha256: Option<String>,
    pub(super) shape: Option<String>,
    pub(super) error: Option<String>,
    pub(super) signature: Option<String>,
    pub(super) exit_code: Option<i64>,
    pub(super) cwd: Option<&'a str>,
    pub(super) agent_id: Option<&'a str>,
    pub(super) facts: Option<String>,
    pub(super) blamed: Option<String>,
}

/// The columns of `stored` that `new` replaces, with their new values; empty when the
/// stored row already says everything `new` does.
// one comparison per column of a stored row, as a list
#[allow(clippy::too_many_lines)]
pub(super) fn changes(stored: &Stored, new: &Row<'_>) -> Vec<(&'static str, Value)> {
    let mut set = Vec::new();
    let text = |s: Option<&str>| s.map_or(Value::Null, |s| Value::Text(s.to_string()));
    let int = |i: Option<i64>| i.map_or(Value::Null, Value::Integer);
    // Fill a column the stored row lacks.
    let fill = |set: &mut Vec<_>, missing: bool, column, value: Value| {
        if missing && value != Value::Null {
            set.push((column, value));
        }
    };
    fill(
        &mut set,
        stored.no_session,
        "session_id",
        text(new.session_id),
    );
    fill(
        &mut set,
        stored.no_tool,
        "tool",
        text(Some(new.tool).filter(|t| !t.is_empty())),
    );
    if takes_outcome(stored, new) {
        if stored.status != new.status.as_str() {
            set.push(("status", text(Some(new.status.as_str()))));
        }
        set.push(("error", text(new.error.as_deref())));
        set.push(("signature", text(new.signature.as_deref())));
        if stored.exit_code != new.exit_code {
            set.push(("exit_code", int(new.exit_code)));
        }
        if new.shape.is_some() && new.shape != stored.shape {
            set.push(("shape", text(new.shape.as_deref())));
        }
        if new.blamed.is_some() && new.blamed != stored.blamed {
            set.push(("blamed", text(new.blamed.as_deref())));
        }
        if new.ended_ms.is_some() && new.ended_ms != stored.ended_ms {
            set.push(("ended_ms", int(new.ended_ms)));
        }
    } else {
        fill(
            &mut set,
            stored.shape.is_none(),
            "shape",
            text(new.shape.as_deref()),
        );
        fill(
            &mut set,
            stored.ended_ms.is_none(),
            "ended_ms",
            int(new.ended_ms),
        );
        fill(
            &mut set,
            stored.blamed.is_none(),
            "blamed",
            text(new.blamed.as_deref()),
        );
    }
    fill(
        &mut set,
        stored.started_ms.is_none(),
        "started_ms",
        int(new.started_ms),
    );
    let duration = new.duration_ms.or_else(|| {
        new.ended_ms
            .zip(stored.started_ms)
            .map(|(end, start)| end - start)
    });
    fill(
        &mut set,
        stored.duration_ms.is_none(),
        "duration_ms",
        int(duration),
    );
    fill(
        &mut set,
        stored.no_command,
        "command",
        text(new.command.as_deref()),
    );
    fill(
        &mut set,
        stored.no_input_sha256,
        "input_sha256",
        text(new.input_sha256.as_deref()),
    );
    fill(&mut set, stored.no_cwd, "cwd", text(new.cwd));
    fill(&mut set, stored.no_agent, "agent_id", text(new.agent_id));
    fill(
        &mut set,
        stored.no_facts,
        "facts",
        text(new.facts.as_deref()),
    );
    set
}

/// Whether `new`'s outcome replaces the stored one (see the module doc).
fn takes_outcome(stored: &Stored, new: &Row<'_>) -> bool {
    new.status != Status::Pending
        && (stored.status == Status::Pending.as_str()
            || (stored.exit_code.is_none()
                && new.exit_code.is_some()
                && matches!(stored.status.as_str(), "success" | "failure")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(status: Status) -> Row<'static> {
        Row {
            tool_use_id: "t1",
            session_id: Some("s1"),
            host: "claude-code",
            source: "hook",
            tool: "Bash",
            status,
            started_ms: None,
            ended_ms: None,
            duration_ms: None,
            command: Some("make".into()),
            input_sha256: Some("abc".into()),
            shape: Some("make".into()),
            error: None,
            signature: None,
            exit_code: None,
            cwd: Some("/w"),
            agent_id: None,
            facts: None,
            blamed: None,
        }
    }

    fn stored(status: &str) -> Stored {
        Stored {
            status: status.into(),
            shape: Some("make".into()),
            no_agent: true,
            ..Stored::default()
        }
    }

    fn columns(set: &[(&'static str, Value)]) -> Vec<&'static str> {
        set.iter().map(|(c, _)| *c).collect()
    }

    #[test]
    fn the_same_observation_again_changes_nothing() {
        let mut s = stored("success");
        s.ended_ms = Some(10);
        s.duration_ms = Some(5);
        s.started_ms = Some(5);
        let mut new = row(Status::Success);
        new.ended_ms = Some(10);
        new.duration_ms = Some(5);
        assert!(changes(&s, &new).is_empty());
    }

    #[test]
    fn a_settled_outcome_replaces_pending_with_its_error_and_end() {
        let mut s = stored("pending");
        s.started_ms = Some(1000);
        let mut new = row(Status::Failure);
        new.ended_ms = Some(1500);
        new.exit_code = Some(2);
        new.shape = Some("psql".into());
        new.blamed = Some("psql -c x".into());
        new.error = Some("exit code 2".into());
        new.signature = Some("exit code #".into());
        let set = changes(&s, &new);
        assert_eq!(
            columns(&set),
            [
                "status",
                "error",
                "signature",
                "exit_code",
                "shape",
                "blamed",
                "ended_ms",
                "duration_ms"
            ]
        );
        assert!(set.contains(&("duration_ms", Value::Integer(500))));
        assert!(set.contains(&("status", Value::Text("failure".into()))));
    }

    #[test]
    fn pending_and_a_second_opinion_never_replace_a_settled_outcome() {
        let mut s = stored("failure");
        s.exit_code = Some(1);
        s.ended_ms = Some(9);
        let mut success = row(Status::Success);
        success.exit_code = Some(0);
        success.ended_ms = Some(20);
        assert!(changes(&s, &success).is_empty());
        assert!(changes(&s, &row(Status::Pending)).is_empty());
        // A denied call stays denied even against an outcome with an exit code.
        let mut denied = stored("denied");
        denied.ended_ms = Some(9);
        assert!(changes(&denied, &success).is_empty());
    }

    #[test]
    fn an_exit_code_corrects_a_guessed_success() {
        let s = stored("success");
        let mut new = row(Status::Failure);
        new.exit_code = Some(1);
        new.error = Some("Exit code 1".into());
        let set = changes(&s, &new);
        assert_eq!(columns(&set), ["status", "error", "signature", "exit_code"]);
    }

    #[test]
    fn missing_values_are_filled_and_known_ones_stay() {
        let s = Stored {
            status: "pending".into(),
            no_session: true,
            no_tool: true,
            no_command: false,
            no_input_sha256: true,
            no_cwd: false,
            no_agent: true,
            ..Stored::default()
        };
        let mut new = row(Status::Pending);
        new.started_ms = Some(7);
        new.agent_id = Some("a1");
        let set = changes(&s, &new);
        assert_eq!(
            columns(&set),
            [
                "session_id",
                "tool",
                "shape",
                "started_ms",
                "input_sha256",
                "agent_id"
            ]
        );
        // An empty tool name never fills the tool.
        new.tool = "";
        assert!(!columns(&changes(&s, &new)).contains(&"tool"));
    }
}
