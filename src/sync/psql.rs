//! Running a script through the user's `psql`, the one way callus talks to `PostgreSQL`.
//!
//! Why `psql` rather than a driver crate: it is libpq, so every way a team already
//! authenticates works unchanged (`~/.pgpass`, `PGPASSWORD`, `PGSERVICE`, client
//! certificates, `sslmode`, Kerberos), and callus stays free of a TLS stack and an async
//! runtime it would need for this one command.
//!
//! Guarantees: the script streams in on stdin while stdout and stderr are drained by their
//! own threads (no pipe deadlock, however large the push); `psql` runs with `-X` (no
//! `~/.psqlrc`), `-w` (never prompts for a password: it fails instead of wedging), and
//! `ON_ERROR_STOP`, so the first failing statement ends the run and the open transaction
//! rolls back; the password travels in `PGPASSWORD`, never in argv; `PGCONNECT_TIMEOUT`
//! defaults to 10 s so an unreachable server fails instead of hanging. Failures map onto the
//! error enum: no `psql` → [`Error::Invalid`] (exit 3); cannot connect, or a statement
//! failed → [`Error::Team`] (exit 4) with `psql`'s message on one line, password-free.

use std::io::{BufWriter, Read, Write};
use std::process::{Command, Stdio};

use super::target::PgUrl;
use crate::{Error, Result};

/// Seconds `psql` waits for the server when `PGCONNECT_TIMEOUT` is not set.
const CONNECT_TIMEOUT_S: &str = "10";

/// Longest error message kept from `psql`'s stderr.
const MAX_MESSAGE: usize = 400;

/// Run the script that `write` produces against `url`; returns `psql`'s stdout (unaligned,
/// tuples only: one `|`-separated line per result row). `op` names the operation in errors.
pub(crate) fn run(
    url: &PgUrl,
    op: &str,
    write: impl FnOnce(&mut dyn Write) -> Result<()>,
) -> Result<String> {
    let mut cmd = Command::new("psql");
    cmd.args(["-X", "-q", "-w", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d"])
        .arg(url.conninfo())
        .env("PGCLIENTENCODING", "UTF8")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(password) = url.password() {
        cmd.env("PGPASSWORD", password);
    }
    if std::env::var_os("PGCONNECT_TIMEOUT").is_none() {
        cmd.env("PGCONNECT_TIMEOUT", CONNECT_TIMEOUT_S);
    }
    if std::env::var_os("PGAPPNAME").is_none() {
        cmd.env("PGAPPNAME", "callus");
    }
    let mut child = cmd.spawn().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => Error::Invalid(
            "psql not found on PATH: a postgres:// --db needs the PostgreSQL client \
             (e.g. `apt-get install postgresql-client`)"
                .to_string(),
        ),
        _ => Error::io("psql", e),
    })?;
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let written = match child.stdin.take() {
        Some(pipe) => {
            let mut input = BufWriter::with_capacity(256 * 1024, Pipe { pipe, gone: false });
            let written = write(&mut input);
            let _ = input.flush();
            written
        }
        None => Ok(()),
    };
    if written.is_err() {
        // Our side failed mid-script: stop psql before it reaches a COMMIT.
        let _ = child.kill();
    }
    let status = child.wait().map_err(|e| Error::io("psql", e))?;
    let stdout = stdout.join().unwrap_or_default();
    let stderr = stderr.join().unwrap_or_default();
    written?;
    let fail = |op: &str| Error::Team {
        db: url.shown(),
        op: op.to_string(),
        msg: one_line(&String::from_utf8_lossy(&stderr), url),
    };
    match status.code() {
        Some(0) => Ok(String::from_utf8_lossy(&stdout).into_owned()),
        // psql: 2 = the connection to the server went bad (or never came up).
        Some(2) => Err(fail("connect")),
        Some(_) => Err(fail(op)),
        None => Err(Error::Team {
            db: url.shown(),
            op: op.to_string(),
            msg: "psql was killed by a signal".to_string(),
        }),
    }
}

/// `psql`'s stdin. Once `psql` has gone (it could not connect, or stopped at an error)
/// writes are dropped: its exit status and stderr tell what happened, not a broken pipe.
struct Pipe {
    pipe: std::process::ChildStdin,
    gone: bool,
}

impl Write for Pipe {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if !self.gone && self.pipe.write_all(buf).is_err() {
            self.gone = true;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if !self.gone && self.pipe.flush().is_err() {
            self.gone = true;
        }
        Ok(())
    }
}

/// Read a pipe to its end on a thread of its own.
fn drain<R: Read + Send + 'static>(pipe: Option<R>) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut buf);
        }
        buf
    })
}

/// `psql`'s stderr as one line: prefixes dropped, lines joined with `; `, capped, the
/// password (if it is echoed anywhere) and any other secret masked.
fn one_line(stderr: &str, url: &PgUrl) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for line in stderr.lines().map(str::trim).filter(|l| !l.is_empty()) {
        // PL/pgSQL's `CONTEXT:` trailer says where a RAISE was, not what went wrong.
        if line.starts_with("CONTEXT:") || line.starts_with("PL/pgSQL function") {
            continue;
        }
        let line = line.strip_prefix("psql: error: ").unwrap_or(line);
        // `psql:<stdin>:12: ERROR:  …` → `ERROR:  …`
        let line = match line.strip_prefix("psql:<stdin>:") {
            Some(rest) => rest.split_once(": ").map_or(rest, |(_, msg)| msg),
            None => line,
        };
        parts.push(line);
    }
    let mut text = if parts.is_empty() {
        "psql failed without a message".to_string()
    } else {
        parts.join("; ")
    };
    if let Some(password) = url.password() {
        text = text.replace(password, crate::redact::MASK);
    }
    let mut text = crate::redact::redact(&text).into_owned();
    if let Some((cut, _)) = text.char_indices().nth(MAX_MESSAGE) {
        text.truncate(cut);
        text.push('…');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_become_one_password_free_line() {
        let url = PgUrl::parse("postgres://u:hunter2pw@h/db").unwrap();
        let stderr = "psql: error: connection to server at \"h\", port 5432 failed: \
                      password authentication failed for user \"u\" hunter2pw\n\
                      \tIs the server running?\n";
        let line = one_line(stderr, &url);
        assert!(
            !line.contains('\n') && !line.contains("hunter2pw"),
            "{line}"
        );
        assert!(line.starts_with("connection to server at"), "{line}");
        assert!(line.contains("; Is the server running?"), "{line}");
        let sql = one_line(
            "psql:<stdin>:12: ERROR:  relation \"x\" does not exist\n",
            &url,
        );
        assert_eq!(sql, "ERROR:  relation \"x\" does not exist");
        let raised = one_line(
            "psql:<stdin>:9: ERROR:  origin \"a\" belongs to role \"b\"\n\
             CONTEXT:  PL/pgSQL function inline_code_block line 1 at RAISE\n",
            &url,
        );
        assert_eq!(raised, "ERROR:  origin \"a\" belongs to role \"b\"");
    }
}
