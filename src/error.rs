//! The one error type of callus and the exit code each variant maps to.
//!
//! Every fallible function in the crate returns [`Error`]. Messages are lower-case, name the
//! file, line, rule or field involved, and are printed once by `app::run` as
//! `callus: <message>`. Hook commands never surface these as exit codes: they follow the
//! host's protocol and their own failure policy (see `guard::hook` and `record::hook`).

use std::fmt;
use std::path::PathBuf;

/// Exit codes of the interactive (non-hook) commands. Documented in the README.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// 0: the command did what was asked and found nothing wrong.
    Ok = 0,
    /// 1: the check ran and found a problem (invalid ruleset, broken chain, violation).
    Problem = 1,
    /// 2: the command line was wrong (clap's own code).
    Usage = 2,
    /// 3: an input or config file could not be read or parsed.
    Input = 3,
    /// 4: the store (`SQLite`, the filesystem under `CALLUS_HOME`, or the team's `PostgreSQL`) failed.
    Store = 4,
}

impl Exit {
    /// The numeric process exit code.
    #[must_use]
    pub fn code(self) -> u8 {
        self as u8
    }
}

/// Everything that can go wrong in callus, with the context needed to say where.
#[derive(Debug)]
pub enum Error {
    /// A file or directory could not be read or written.
    Io {
        /// The path involved.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A JSON input (hook payload, ruleset, settings, trace) is malformed.
    Json {
        /// Where the JSON came from (a path, `stdin`, or `file:line`).
        origin: String,
        /// The underlying error.
        source: serde_json::Error,
    },
    /// A ruleset is structurally wrong: a bad type, key, action or regex.
    Ruleset {
        /// The ruleset file (or layer name).
        file: String,
        /// The rule id, when known.
        rule: Option<String>,
        /// The field at fault, when known.
        field: Option<String>,
        /// What is wrong.
        msg: String,
    },
    /// Some other input was invalid (a bad date in a file, an unknown id, a bad ruleset).
    Invalid(String),
    /// A command-line value clap cannot check was wrong (`--since bogus`): exit 2, like
    /// clap's own usage errors.
    Usage(String),
    /// The `SQLite` store failed.
    Sql {
        /// The operation that failed, e.g. `"open"`, `"append audit record"`.
        op: String,
        /// The underlying error.
        source: rusqlite::Error,
    },
    /// The team store (a shared `PostgreSQL` reached through `psql`) failed: it could not be
    /// reached, refused the credentials, or rejected a statement.
    Team {
        /// The database, as a URL with any password removed.
        db: String,
        /// The operation that failed, e.g. `"connect"`, `"push"`.
        op: String,
        /// What went wrong, on one line.
        msg: String,
    },
}

impl Error {
    /// The exit code this error maps to for interactive commands.
    #[must_use]
    pub fn exit(&self) -> Exit {
        match self {
            Error::Io { .. } | Error::Json { .. } | Error::Ruleset { .. } | Error::Invalid(_) => {
                Exit::Input
            }
            Error::Sql { .. } | Error::Team { .. } => Exit::Store,
            Error::Usage(_) => Exit::Usage,
        }
    }

    /// Build an [`Error::Io`] for `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    /// Build an [`Error::Sql`] for operation `op`.
    pub fn sql(op: impl Into<String>, source: rusqlite::Error) -> Self {
        Error::Sql {
            op: op.into(),
            source,
        }
    }

    /// Build an [`Error::Json`] from where it came from.
    pub fn json(origin: impl Into<String>, source: serde_json::Error) -> Self {
        Error::Json {
            origin: origin.into(),
            source,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io { path, source } => write!(f, "{}: {source}", path.display()),
            Error::Json { origin, source } => write!(f, "{origin}: invalid JSON: {source}"),
            Error::Ruleset {
                file,
                rule,
                field,
                msg,
            } => {
                write!(f, "{file}")?;
                if let Some(rule) = rule {
                    write!(f, ": rule '{rule}'")?;
                }
                if let Some(field) = field {
                    write!(f, ": field '{field}'")?;
                }
                write!(f, ": {msg}")
            }
            Error::Invalid(msg) | Error::Usage(msg) => f.write_str(msg),
            Error::Sql { op, source } => write!(f, "store: {op}: {source}"),
            Error::Team { db, op, msg } => write!(f, "team store {db}: {op}: {msg}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            Error::Json { source, .. } => Some(source),
            Error::Sql { source, .. } => Some(source),
            Error::Ruleset { .. } | Error::Invalid(_) | Error::Usage(_) | Error::Team { .. } => {
                None
            }
        }
    }
}

/// The result type of the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
