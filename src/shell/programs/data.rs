//! Database clients (`psql`, `mysql`, `mariadb`, `sqlite3`, `duckdb`, `mongosh`,
//! `redis-cli`, `sqlcmd`, `clickhouse`, `cockroach`, `cqlsh`, `snowsql`, `bq`,
//! `mysqladmin`, `dropdb` …): SQL that drops or empties data, wherever it comes from (`-c`/
//! `-e`, an operand, a heredoc, an `echo` piped in), and writes to callus's own database.

use super::row::{Row, Shape};
use crate::shell::model::effect::{Effect, EffectKind};
use crate::shell::model::paths::Class;
use crate::shell::model::walk::{Call, Walk};

/// A database client: the SQL it runs is read for what it destroys.
pub(super) const CLIENT: Row = Row {
    effects: Some(sql),
    ..Row::PLAIN
};
/// `psql`: also a multiplexer (`psql -c …` shapes as `psql`, `psql DB` as `psql DB`).
pub(super) const PSQL: Row = Row {
    shape: Shape::Subcommand,
    ..CLIENT
};

/// SQL that drops or empties data, from a client's `-c`/`-e`, its operands (sqlite3,
/// redis-cli), a heredoc or an `echo` piped in; `dropdb`; writes to callus's own
/// database.
fn sql(w: &mut Walk<'_>, c: &Call<'_>, fx: &mut Vec<Effect>) {
    let (p, args, seg, d) = (c.program, c.args, c.seg, c.depth);
    let operands: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    // `dropdb NAME`, `mysqladmin [OPTS] drop NAME`: commands, not SQL text.
    if p == "dropdb" && !operands.is_empty()
        || p == "mysqladmin" && operands.iter().any(|o| o.eq_ignore_ascii_case("drop"))
    {
        fx.push(sql_effect(p, "DROP DATABASE"));
        return;
    }
    let mut texts: Vec<String> = Vec::new();
    let mut take_next = false;
    for a in args {
        if take_next {
            texts.push(a.clone());
            take_next = false;
        } else if matches!(
            a.as_str(),
            "-c" | "-e" | "--command" | "--execute" | "--eval" | "-q" | "-Q" | "--query"
        ) {
            take_next = true;
        } else if let Some((k, v)) = a.split_once('=')
            && matches!(k, "--command" | "--execute" | "--eval" | "--query")
        {
            texts.push(v.to_string());
        } else if a.len() > 2 && (a.starts_with("-e") || a.starts_with("-c")) {
            texts.push(a[2..].to_string());
        }
    }
    if matches!(p, "sqlite3" | "sqlite" | "duckdb" | "redis-cli") {
        texts.extend(
            operands
                .iter()
                .skip(usize::from(p != "redis-cli"))
                .map(|s| (*s).clone()),
        );
    }
    if let Some(body) = seg.stdin_data() {
        texts.push(body.to_string());
    }
    if seg.piped
        && let Some(words) = &w.pipes[d].literal
    {
        texts.push(words.join(" "));
    }
    let all = texts.join("\n");
    if let Some(stmt) = destructive_sql(&all) {
        fx.push(sql_effect(p, stmt));
    }
    if matches!(p, "sqlite3" | "sqlite" | "duckdb")
        && let Some(db) = operands.first()
    {
        let (class, path) = w.class(db);
        let upper = all.to_ascii_uppercase();
        if class == Class::ControlPlane
            && [
                "DELETE", "UPDATE", "INSERT", "DROP", "ALTER", "VACUUM", "REPLACE", "CREATE",
                "PRAGMA",
            ]
            .iter()
            .any(|k| upper.contains(k))
        {
            fx.push(Effect::on_path(
                EffectKind::Writes,
                &format!("changes the database {path}"),
                &[("via", p)],
                class,
                &path,
            ));
        }
    }
}

/// The destructive statement in SQL text, if any: `DROP DATABASE|TABLE|SCHEMA`,
/// `TRUNCATE`, `DELETE FROM t` with no `WHERE`, Redis `FLUSHALL`/`FLUSHDB`, Mongo's
/// `dropDatabase()`.
fn destructive_sql(text: &str) -> Option<&'static str> {
    let upper: String = sql_code(text)
        .to_ascii_uppercase()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    for (needle, name) in [
        ("DROP DATABASE", "DROP DATABASE"),
        ("DROP SCHEMA", "DROP SCHEMA"),
        ("DROP TABLE", "DROP TABLE"),
        ("DROP COLLECTION", "DROP COLLECTION"),
        ("TRUNCATE ", "TRUNCATE"),
        ("FLUSHALL", "FLUSHALL"),
        ("FLUSHDB", "FLUSHDB"),
        ("DROPDATABASE(", "dropDatabase()"),
    ] {
        if upper.contains(needle) {
            return Some(name);
        }
    }
    for stmt in upper.split(';') {
        if let Some(i) = stmt.find("DELETE FROM ")
            && !stmt[i..].contains(" WHERE ")
        {
            return Some("DELETE without WHERE");
        }
    }
    None
}

/// SQL text without its string literals (`'…'`, `''` inside one), quoted identifiers
/// (`"…"`) and comments (`-- …` to the end of the line, `/* … */`): `WHERE action = 'DROP
/// TABLE'` names a value, not a statement.
fn sql_code(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' | '"' => {
                while let Some(d) = chars.next() {
                    if d == c {
                        if chars.peek() == Some(&c) {
                            chars.next();
                        } else {
                            break;
                        }
                    }
                }
                out.push_str(" '' ");
            }
            '-' if chars.peek() == Some(&'-') => {
                for d in chars.by_ref() {
                    if d == '\n' {
                        break;
                    }
                }
                out.push('\n');
            }
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                let mut prev = ' ';
                for d in chars.by_ref() {
                    if prev == '*' && d == '/' {
                        break;
                    }
                    prev = d;
                }
                out.push(' ');
            }
            _ => out.push(c),
        }
    }
    out
}

fn sql_effect(client: &str, stmt: &str) -> Effect {
    Effect::plain(
        EffectKind::DestroysData,
        &[("via", client), ("statement", &stmt.replace(' ', "_"))],
        format!("runs {stmt} through {client}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn destructive_sql_and_its_near_misses() {
        assert_eq!(
            destructive_sql("drop  database app;"),
            Some("DROP DATABASE")
        );
        assert_eq!(
            destructive_sql("DELETE FROM users;"),
            Some("DELETE without WHERE")
        );
        assert_eq!(destructive_sql("delete from users where id=1"), None);
        assert_eq!(destructive_sql("SELECT * FROM dropped_tables"), None);
        assert_eq!(destructive_sql("flushall"), Some("FLUSHALL"));
        // Values, identifiers and comments are not statements.
        assert_eq!(
            destructive_sql("SELECT * FROM audit WHERE action = 'DROP TABLE'"),
            None
        );
        assert_eq!(destructive_sql("SELECT 'it''s; DROP TABLE x' AS a"), None);
        assert_eq!(destructive_sql("SELECT 1 -- DROP DATABASE app"), None);
        assert_eq!(destructive_sql("SELECT /* TRUNCATE t */ 1"), None);
        assert_eq!(destructive_sql("SELECT \"drop table\" FROM t"), None);
        assert_eq!(
            destructive_sql("-- cleanup\nDROP TABLE users;"),
            Some("DROP TABLE")
        );
        assert_eq!(
            destructive_sql("SELECT 'a'; DROP SCHEMA s"),
            Some("DROP SCHEMA")
        );
    }

    #[test]
    fn clients_read_sql_from_every_place_it_comes_from() {
        let destroys = |cmd: &str| {
            crate::shell::model::analyse(cmd, &crate::shell::model::Context::default())
                .effects
                .into_iter()
                .find(|e| e.line.starts_with("destroys-data"))
                .map(|e| e.line)
        };
        assert_eq!(
            destroys("dropdb prod").as_deref(),
            Some("destroys-data via=dropdb statement=DROP_DATABASE")
        );
        assert!(destroys("mysqladmin -u root drop prod").is_some());
        assert!(destroys("psql -c 'DROP TABLE t'").is_some());
        assert!(destroys("mysql -e'TRUNCATE t'").is_some());
        assert!(destroys("sqlite3 db.sqlite 'DELETE FROM t'").is_some());
        assert!(destroys("redis-cli FLUSHALL").is_some());
        assert!(destroys("echo 'DROP DATABASE x' | mysql").is_some());
        assert!(destroys("psql <<EOF\nDROP SCHEMA s CASCADE;\nEOF").is_some());
        assert!(destroys("dropdb").is_none());
        assert!(destroys("psql -c 'select 1'").is_none());
        assert!(destroys("sqlite3 'DELETE FROM t'").is_none());
        assert!(destroys("echo 'DROP TABLE t'").is_none());
    }
}
