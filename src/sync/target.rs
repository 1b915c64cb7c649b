//! What a `--db` value names: the team's `PostgreSQL` (a `postgres://` or `postgresql://`
//! URL) or an `SQLite` store file (anything else).
//!
//! A URL's password is taken out here, once: [`PgUrl::conninfo`] (what `psql` gets as its
//! `-d` argument) and [`PgUrl::shown`] (what messages print) never contain it, and
//! [`PgUrl::password`] goes to `psql` through `PGPASSWORD`, which other local users cannot
//! read (`/proc/PID/environ` is private to the owner, `/proc/PID/cmdline` is not). The split
//! follows libpq's own URI grammar: the user information ends at the first `@` before any
//! `/`, the password is after its first `:`, percent-encoded; a `password=` query parameter
//! is moved out the same way. A password that came on callus's own command line is refused
//! ([`PgUrl::refuse_password_on_command_line`]): by then `ps` has shown it.

use std::path::PathBuf;

/// A parsed `--db` value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target {
    /// An `SQLite` store at this path.
    Sqlite(PathBuf),
    /// The team's `PostgreSQL`.
    Postgres(PgUrl),
}

impl Target {
    /// Classify a `--db` value: a `postgres://`/`postgresql://` URL, else a file path.
    #[must_use]
    pub(crate) fn parse(db: &str) -> Self {
        match PgUrl::parse(db) {
            Some(url) => Target::Postgres(url),
            None => Target::Sqlite(PathBuf::from(db)),
        }
    }
}

/// The team database a `sync` command (`what`, for the message) was given: a `postgres://`
/// URL whose password did not come on the command line.
pub(crate) fn team_url(db: &str, what: &str) -> crate::Result<PgUrl> {
    let url = PgUrl::parse(db).ok_or_else(|| {
        crate::Error::Invalid(format!(
            "{what} --db '{}': expected a postgres:// or postgresql:// URL",
            crate::redact::redact(db)
        ))
    })?;
    url.refuse_password_on_command_line(db)?;
    Ok(url)
}

/// A `PostgreSQL` URL split into the part that may be shown and the password.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct PgUrl {
    conninfo: String,
    password: Option<String>,
}

impl std::fmt::Debug for PgUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgUrl")
            .field("conninfo", &self.conninfo)
            .field(
                "password",
                &self.password.as_ref().map(|_| crate::redact::MASK),
            )
            .finish()
    }
}

impl PgUrl {
    /// Parse a URL with a `postgres://` or `postgresql://` scheme; `None` for anything else.
    #[must_use]
    pub(crate) fn parse(url: &str) -> Option<Self> {
        let url = url.trim();
        let (scheme, rest) = url.split_once("://")?;
        if !(scheme.eq_ignore_ascii_case("postgres") || scheme.eq_ignore_ascii_case("postgresql")) {
            return None;
        }
        let mut password = None;
        // libpq: the user information runs to the first '@' met before any '/'.
        let rest = match rest.find(['@', '/']) {
            Some(at) if rest.as_bytes()[at] == b'@' => {
                let (userinfo, host_part) = (&rest[..at], &rest[at + 1..]);
                let user = match userinfo.split_once(':') {
                    Some((user, pass)) => {
                        password = Some(percent_decode(pass));
                        user
                    }
                    None => userinfo,
                };
                if user.is_empty() {
                    host_part.to_string()
                } else {
                    format!("{user}@{host_part}")
                }
            }
            _ => rest.to_string(),
        };
        let rest = match rest.split_once('?') {
            Some((base, query)) => {
                let kept: Vec<&str> = query
                    .split('&')
                    .filter(|param| match param.split_once('=') {
                        Some(("password", value)) => {
                            password = Some(percent_decode(value));
                            false
                        }
                        _ => !param.is_empty(),
                    })
                    .collect();
                if kept.is_empty() {
                    base.to_string()
                } else {
                    format!("{base}?{}", kept.join("&"))
                }
            }
            None => rest,
        };
        Some(PgUrl {
            conninfo: format!("{scheme}://{rest}"),
            password: password.filter(|p| !p.is_empty()),
        })
    }

    /// The URL without its password: `psql`'s `-d` argument.
    #[must_use]
    pub(crate) fn conninfo(&self) -> &str {
        &self.conninfo
    }

    /// The URL as messages show it (no password, and redacted like stored text).
    #[must_use]
    pub(crate) fn shown(&self) -> String {
        crate::redact::redact(&self.conninfo).into_owned()
    }

    /// Refuse a URL whose password reached callus on its own command line (`raw` is the
    /// `--db` value as given): `/proc/PID/cmdline` is readable by every local user, so `ps`
    /// shows it for as long as the push runs. From the environment (`CALLUS_SYNC_DB`) or
    /// without a password (libpq then reads `PGPASSWORD` or `~/.pgpass`) it is fine.
    pub(crate) fn refuse_password_on_command_line(&self, raw: &str) -> crate::Result<()> {
        let raw = raw.trim();
        let on_argv = || {
            std::env::args_os().skip(1).any(|a| {
                a.as_encoded_bytes()
                    .windows(raw.len())
                    .any(|w| w == raw.as_bytes())
            })
        };
        if self.password.is_none() || raw.is_empty() || !on_argv() {
            return Ok(());
        }
        Err(crate::Error::Invalid(format!(
            "--db {}: a password on callus's command line is visible to every local user \
             (`ps`); give the URL without it and put the password in PGPASSWORD or \
             ~/.pgpass (for `sync push`, the whole URL may also come from CALLUS_SYNC_DB)",
            self.shown()
        )))
    }

    /// The password the URL carried, if any (for `PGPASSWORD`).
    #[must_use]
    pub(crate) fn password(&self) -> Option<&str> {
        self.password.as_deref()
    }
}

/// Undo `%XX` escapes; a malformed escape stays as written (libpq would refuse it, and then
/// `psql` says so).
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| char::from(b).to_digit(16);
        if bytes[i] == b'%'
            && let (Some(&h), Some(&l)) = (bytes.get(i + 1), bytes.get(i + 2))
            && let (Some(h), Some(l)) = (hex(h), hex(l))
        {
            out.push((h * 16 + l) as u8);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pg(url: &str) -> PgUrl {
        match Target::parse(url) {
            Target::Postgres(u) => u,
            Target::Sqlite(p) => panic!("{url} parsed as a path {}", p.display()),
        }
    }

    #[test]
    fn the_password_leaves_the_url_and_decodes() {
        let u = pg("postgres://alice:p%40ss:w0rd@db.example:5433/team?sslmode=require");
        assert_eq!(
            u.conninfo(),
            "postgres://alice@db.example:5433/team?sslmode=require"
        );
        assert_eq!(u.password(), Some("p@ss:w0rd"));
        assert!(!u.shown().contains("w0rd"));
        assert!(!format!("{u:?}").contains("w0rd"));
    }

    #[test]
    fn a_password_parameter_moves_out_too() {
        let u = pg("postgresql://bob@h/db?password=s%20cret&sslmode=disable");
        assert_eq!(u.conninfo(), "postgresql://bob@h/db?sslmode=disable");
        assert_eq!(u.password(), Some("s cret"));
        let u = pg("postgresql:///db?password=x");
        assert_eq!(u.conninfo(), "postgresql:///db");
    }

    #[test]
    fn urls_without_a_password_pass_unchanged() {
        for url in [
            "postgres://h/db",
            "postgres://carol@h/db",
            "postgresql:///team?host=/tmp/sock&port=5999",
            "postgres://h/db@weird",
        ] {
            let u = pg(url);
            assert_eq!(u.conninfo(), url);
            assert_eq!(u.password(), None);
        }
    }

    #[test]
    fn anything_else_is_an_sqlite_path() {
        for db in [
            "team.db",
            "/srv/callus.db",
            "mysql://h/db",
            "postgres:relative",
        ] {
            assert_eq!(Target::parse(db), Target::Sqlite(PathBuf::from(db)));
        }
    }
}
