//! The team schema in `PostgreSQL`: the local store's three evidence tables, each row tagged
//! with the `origin` that pushed it, and the migrations that build and upgrade it.
//!
//! Every table's key starts with `origin`, so a push can only ever insert or update its own
//! origin's rows, and each origin's audit chain (`origin, seq`) stays whole beside the
//! others'. Columns mirror `migrations/*.sql` one for one (INTEGER → `bigint`, TEXT →
//! `text`); a unit test compares them with a freshly migrated store, and a test against a
//! real server compares them with a freshly migrated team schema.
//!
//! Migrations: `migrations/postgres/NNNN_*.sql`, applied in order, each once, inside the
//! caller's transaction and under a transaction-scoped advisory lock (concurrent first pushes
//! do not race). `callus.meta`'s `schema` row holds the version reached (migration 1 is the
//! schema releases before migrations wrote, so their databases are at 1 already). `sync init`
//! applies whatever is missing; `sync push` creates a missing schema but refuses an older one
//! (run `sync init`, as the schema's owner) and a newer one (upgrade callus); reads refuse a
//! newer one.

use std::fmt::Write as _;

/// The team migrations, in order: migration `n` brings the schema to version `n`.
pub(crate) const MIGRATIONS: [&str; 3] = [
    include_str!("../../migrations/postgres/0001_initial.sql"),
    include_str!("../../migrations/postgres/0002_origins.sql"),
    include_str!("../../migrations/postgres/0003_blame_and_context.sql"),
];

/// The oldest schema whose evidence tables have the columns this binary reads (version 3
/// added the blamed segment, the call's facts and the session's context).
pub(crate) const READABLE_FROM: usize = 3;

/// The schema version this binary writes and reads.
pub(crate) const VERSION: usize = MIGRATIONS.len();

/// What the schema prelude may do to an older schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Upgrade {
    /// `sync init`: apply every missing migration.
    Apply,
    /// `sync push`: create a missing schema; refuse an older one.
    CreateOnly,
}

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
        ("os", "text"),
        ("shell", "text"),
        ("sandbox", "text"),
        ("originator", "text"),
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
        ("blamed", "text"),
        ("facts", "text"),
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

/// `psql` statements that bring the schema to [`VERSION`] (as `upgrade` allows) or fail,
/// and print `schema|FROM|TO`. Run inside the caller's transaction.
pub(crate) fn prelude(upgrade: Upgrade) -> String {
    let mut sql = String::from(
        "SELECT pg_advisory_xact_lock(hashtext('callus.sync.schema'));\n\
         SELECT to_regclass('callus.meta') IS NOT NULL AS callus_present \\gset\n\
         \\if :callus_present\n\
         SELECT coalesce((SELECT value::int FROM callus.meta WHERE key = 'schema'), 0) AS callus_version \\gset\n\
         \\else\n\
         \\set callus_version 0\n\
         \\endif\n\
         SELECT set_config('callus.version', :'callus_version', true) AS callus_ignored \\gset\n",
    );
    let refuse_older = match upgrade {
        Upgrade::Apply => String::new(),
        Upgrade::CreateOnly => format!(
            "IF v > 0 AND v < {VERSION} THEN RAISE EXCEPTION 'the team schema is version %, \
             older than this callus writes (version {VERSION}): run `callus sync init --db …` \
             as the schema''s owner to upgrade it', v; END IF;\n"
        ),
    };
    let _ = writeln!(
        sql,
        "DO $$ DECLARE v int := current_setting('callus.version')::int; BEGIN\n\
         IF v > {VERSION} THEN RAISE EXCEPTION 'the team schema is version %, newer than this \
         callus knows (version {VERSION}): upgrade callus', v; END IF;\n\
         {refuse_older}END $$;"
    );
    for (i, migration) in MIGRATIONS.iter().enumerate() {
        let _ = writeln!(
            sql,
            "SELECT :callus_version < {n} AS callus_apply \\gset\n\\if :callus_apply\n{}\n\\endif",
            migration.trim_end(),
            n = i + 1
        );
    }
    let _ = writeln!(
        sql,
        "SELECT :callus_version < {VERSION} AS callus_apply \\gset\n\\if :callus_apply\n\
         INSERT INTO callus.meta (key, value) VALUES ('schema', '{VERSION}') \
         ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value;\n\\endif\n\
         SELECT 'schema', :callus_version, {VERSION};"
    );
    sql
}

/// A statement that fails when the team schema is newer than [`VERSION`], or older than
/// [`READABLE_FROM`] (its evidence tables lack columns this binary reads).
pub(crate) fn version_check() -> String {
    format!(
        "DO $$ DECLARE v int := (SELECT value::int FROM callus.meta WHERE key = 'schema'); BEGIN \
         IF v > {VERSION} THEN \
         RAISE EXCEPTION 'the team schema is newer than this callus (version {VERSION}): upgrade callus'; \
         END IF; IF v < {READABLE_FROM} THEN \
         RAISE EXCEPTION 'the team schema is version %, older than this callus reads (version {READABLE_FROM}): run `callus sync init --db …` as the schema''s owner to upgrade it', v; \
         END IF; END $$;"
    )
}

/// `text` as an SQL string literal (`standard_conforming_strings` is on in every script).
pub(crate) fn literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
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
    fn the_migrations_create_every_table_keyed_by_origin_first_and_add_the_later_columns() {
        for table in TABLES {
            // Migration 1 creates the columns the local store had then; each later column is
            // added, with the same type, by a later migration.
            let later = MIGRATIONS[1..].concat();
            let (first, added): (Vec<_>, Vec<_>) = table.columns.iter().partition(|(name, _)| {
                !later.contains(&format!(
                    "callus.{} ADD COLUMN IF NOT EXISTS {name} ",
                    table.name
                ))
            });
            let mut columns = String::from("origin text NOT NULL");
            for (name, ty) in first {
                let _ = write!(columns, ", {name} {ty}");
            }
            let create = format!(
                "CREATE TABLE IF NOT EXISTS callus.{} ({columns}, PRIMARY KEY (origin, {}));",
                table.name, table.key
            );
            assert!(MIGRATIONS[0].contains(&create), "{create}");
            for (name, ty) in added {
                let add = format!(
                    "ALTER TABLE callus.{} ADD COLUMN IF NOT EXISTS {name} {ty};",
                    table.name
                );
                assert!(later.contains(&add), "{add}");
            }
        }
    }

    #[test]
    fn the_prelude_applies_each_migration_once_in_order_and_push_refuses_older() {
        let init = prelude(Upgrade::Apply);
        let mut at = 0;
        for n in 1..=VERSION {
            let gate = format!("SELECT :callus_version < {n} AS callus_apply");
            let found = init[at..].find(&gate).unwrap_or_else(|| panic!("{gate}"));
            at += found + gate.len();
        }
        assert!(!init.contains("older than this callus"));
        let push = prelude(Upgrade::CreateOnly);
        assert!(
            push.contains(&format!("IF v > 0 AND v < {VERSION} THEN")),
            "{push}"
        );
        assert!(push.contains(&format!("IF v > {VERSION} THEN")), "{push}");
        let read = version_check();
        assert!(
            read.contains(&format!("IF v < {READABLE_FROM} THEN")),
            "{read}"
        );
    }

    #[test]
    fn literals_double_their_quotes() {
        assert_eq!(literal("o'brien@x"), "'o''brien@x'");
    }
}
