//! The team schema in `PostgreSQL`: the local store's three evidence tables, each row tagged
//! with the `origin` that pushed it.
//!
//! Every table's key starts with `origin`, so a push can only ever insert or update its own
//! origin's rows, and each origin's audit chain (`origin, seq`) stays whole beside the
//! others'. Columns mirror `migrations/*.sql` one for one (INTEGER → `bigint`, TEXT →
//! `text`); a unit test compares them with a freshly migrated store, so a migration that adds
//! a column cannot silently stop it from reaching the team. The DDL is idempotent and runs
//! under a transaction-scoped advisory lock, so concurrent first pushes do not race to create
//! the schema. `callus.meta` holds the team schema's version; a newer one than this binary
//! knows is refused rather than written to.

use std::fmt::Write as _;

/// The schema version this binary writes and reads.
pub(crate) const VERSION: u32 = 1;

/// One mirrored table.
#[derive(Debug)]
pub(crate) struct Table {
    /// Table name, the same locally and in the `callus` schema.
    pub(crate) name: &'static str,
    /// Columns after `origin`, in the local table's order: (name, `PostgreSQL` type).
    pub(crate) columns: &'static [(&'static str, &'static str)],
    /// The local primary key (the team key is `origin` plus this).
    pub(crate) key: &'static str,
}

impl Table {
    /// The column names, comma-separated, without `origin`.
    pub(crate) fn column_list(&self) -> String {
        let names: Vec<&str> = self.columns.iter().map(|(n, _)| *n).collect();
        names.join(", ")
    }
}

/// `sessions`.
pub(crate) const SESSIONS: Table = Table {
    name: "sessions",
    columns: &[
        ("id", "text NOT NULL"),
        ("host", "text NOT NULL"),
        ("source", "text NOT NULL"),
        ("cwd", "text"),
        ("repo_root", "text"),
        ("started_ms", "bigint"),
        ("ended_ms", "bigint"),
        ("agent_type", "text"),
        ("prompts", "bigint NOT NULL DEFAULT 0"),
        ("last_prompt_ms", "bigint"),
        ("last_event_ms", "bigint"),
    ],
    key: "id",
};

/// `tool_calls`. No CHECK on `status`: the local store enforces it, and a status a newer
/// callus adds must still reach the team.
pub(crate) const TOOL_CALLS: Table = Table {
    name: "tool_calls",
    columns: &[
        ("tool_use_id", "text NOT NULL"),
        ("session_id", "text"),
        ("host", "text NOT NULL"),
        ("source", "text NOT NULL"),
        ("tool", "text NOT NULL"),
        ("status", "text NOT NULL"),
        ("started_ms", "bigint"),
        ("ended_ms", "bigint"),
        ("duration_ms", "bigint"),
        ("command", "text"),
        ("input_sha256", "text"),
        ("shape", "text"),
        ("error", "text"),
        ("signature", "text"),
        ("exit_code", "bigint"),
        ("cwd", "text"),
        ("agent_id", "text"),
    ],
    key: "tool_use_id",
};

/// `audit`: each origin's hash chain, verbatim.
pub(crate) const AUDIT: Table = Table {
    name: "audit",
    columns: &[
        ("seq", "bigint NOT NULL"),
        ("ts_ms", "bigint NOT NULL"),
        ("tool_use_id", "text"),
        ("session_id", "text"),
        ("record", "text NOT NULL"),
        ("prev", "text NOT NULL"),
        ("hash", "text NOT NULL"),
    ],
    key: "seq",
};

/// The mirrored tables, in push order.
pub(crate) const TABLES: [&Table; 3] = [&SESSIONS, &TOOL_CALLS, &AUDIT];

/// Statements that create the schema if it is missing and refuse a newer one. Run inside the
/// push's transaction.
pub(crate) fn ddl() -> String {
    let mut sql = String::from(
        "SELECT pg_advisory_xact_lock(hashtext('callus.sync.schema'));\n\
         CREATE SCHEMA IF NOT EXISTS callus;\n\
         CREATE TABLE IF NOT EXISTS callus.meta (key text PRIMARY KEY, value text NOT NULL);\n",
    );
    let _ = writeln!(
        sql,
        "INSERT INTO callus.meta (key, value) VALUES ('schema', '{VERSION}') ON CONFLICT (key) DO NOTHING;"
    );
    let _ = writeln!(sql, "{}", version_check());
    for table in TABLES {
        let mut columns = String::from("origin text NOT NULL");
        for (name, ty) in table.columns {
            let _ = write!(columns, ", {name} {ty}");
        }
        let _ = writeln!(
            sql,
            "CREATE TABLE IF NOT EXISTS callus.{} ({columns}, PRIMARY KEY (origin, {}));",
            table.name, table.key
        );
    }
    sql.push_str(
        "CREATE INDEX IF NOT EXISTS tool_calls_id ON callus.tool_calls (tool_use_id);\n\
         CREATE INDEX IF NOT EXISTS sessions_id ON callus.sessions (id);\n",
    );
    sql
}

/// A statement that fails when the team schema is newer than [`VERSION`].
pub(crate) fn version_check() -> String {
    format!(
        "DO $$ BEGIN IF (SELECT value::int FROM callus.meta WHERE key = 'schema') > {VERSION} THEN \
         RAISE EXCEPTION 'the team schema is newer than this callus (version {VERSION}): upgrade callus'; \
         END IF; END $$;"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_mirror_the_local_store() {
        let conn = crate::store::open_in_memory().unwrap();
        for table in TABLES {
            let mut stmt = conn
                .prepare(&format!(
                    "SELECT name, type FROM pragma_table_info('{}')",
                    table.name
                ))
                .unwrap();
            let local: Vec<(String, String)> = stmt
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
                .unwrap()
                .map(Result::unwrap)
                .collect();
            let mirrored: Vec<(String, String)> = table
                .columns
                .iter()
                .map(|(name, ty)| {
                    let local_ty = if ty.starts_with("bigint") {
                        "INTEGER"
                    } else {
                        "TEXT"
                    };
                    ((*name).to_string(), local_ty.to_string())
                })
                .collect();
            assert_eq!(local, mirrored, "table {}", table.name);
        }
    }

    #[test]
    fn every_table_is_keyed_by_origin_first() {
        let ddl = ddl();
        for table in TABLES {
            assert!(
                ddl.contains(&format!("PRIMARY KEY (origin, {}))", table.key)),
                "{ddl}"
            );
            assert!(table.columns.iter().any(|(n, _)| *n == table.key));
        }
    }
}
