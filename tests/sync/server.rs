//! A real `PostgreSQL` server for the sync tests: one per test binary run, started on first
//! use, each test in a database of its own.
//!
//! The server listens on a Unix socket in a private temporary directory only (no TCP, so it
//! works inside the loopback-only namespace CI runs tests in), with password authentication
//! (SCRAM) so the tests prove a password given in the URL really reaches libpq. initdb
//! refuses to run as root, so under uid 0 the cluster belongs to the `postgres` OS user and
//! every server command runs through `runuser`. A watchdog process stops the server and
//! removes its directory when the test binary exits, however it exits.
//!
//! No `PostgreSQL` (server binaries or `psql`) → the tests skip with a loud note, unless
//! `CALLUS_PG_REQUIRED=1` (CI), where that is a failure.

use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The superuser's password (SCRAM auth is on).
pub(crate) const PASSWORD: &str = "pg-test-pw-7f3a";

/// The running server.
pub(crate) struct Server {
    bin: PathBuf,
    socket: PathBuf,
    port: u16,
}

static SERVER: OnceLock<Result<Server, String>> = OnceLock::new();
static NEXT_DB: AtomicUsize = AtomicUsize::new(0);

/// The shared server; `None` (after a loud note) when `PostgreSQL` is not installed and not
/// required. Panics when it is required but missing, or installed but would not start.
pub(crate) fn server() -> Option<&'static Server> {
    let required = std::env::var("CALLUS_PG_REQUIRED").is_ok_and(|v| v == "1");
    match SERVER.get_or_init(start) {
        Ok(server) => Some(server),
        Err(why) if required || !why.starts_with("not installed") => {
            panic!("PostgreSQL is required for the sync tests (CALLUS_PG_REQUIRED=1): {why}")
        }
        Err(why) => {
            eprintln!(
                "\n!!!!!!!!!! SKIPPING a sync test: PostgreSQL {why}; \
                 set CALLUS_PG_REQUIRED=1 to make this a failure\n"
            );
            None
        }
    }
}

impl Server {
    /// A fresh, empty database; returns its URL, without the password: callus refuses one on
    /// its command line, so the tests pass it in `PGPASSWORD` (see `team_env`).
    pub(crate) fn create_db(&self) -> String {
        let name = format!(
            "t{}_{}",
            std::process::id(),
            NEXT_DB.fetch_add(1, Ordering::Relaxed)
        );
        self.psql("postgres", &format!("CREATE DATABASE {name}"));
        self.url_without_password(&name)
    }

    /// The URL of database `db` with `password`.
    pub(crate) fn url(&self, db: &str, password: &str) -> String {
        format!(
            "postgres://postgres:{password}@/{db}?host={}&port={}",
            self.socket.display(),
            self.port
        )
    }

    /// The URL of database `db` with no password in it.
    pub(crate) fn url_without_password(&self, db: &str) -> String {
        format!(
            "postgres://postgres@/{db}?host={}&port={}",
            self.socket.display(),
            self.port
        )
    }

    /// Run SQL in database `db` (a name or a URL from [`Server::create_db`]); rows unaligned.
    pub(crate) fn psql(&self, db: &str, sql: &str) -> String {
        let out = Command::new("psql")
            .args(["-X", "-A", "-t", "-v", "ON_ERROR_STOP=1"])
            .args(["-h", &self.socket.display().to_string()])
            .args(["-p", &self.port.to_string(), "-U", "postgres"])
            .args(["-d", &db_name(db), "-c", sql])
            .env("PGPASSWORD", PASSWORD)
            .output()
            .expect("run psql");
        assert!(
            out.status.success(),
            "psql {sql}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// Everything in database `db`, as `pg_dump` writes it.
    pub(crate) fn dump(&self, db: &str) -> String {
        let out = Command::new(self.bin.join("pg_dump"))
            .args(["-h", &self.socket.display().to_string()])
            .args(["-p", &self.port.to_string(), "-U", "postgres", &db_name(db)])
            .env("PGPASSWORD", PASSWORD)
            .output()
            .expect("run pg_dump");
        assert!(
            out.status.success(),
            "pg_dump: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

/// `postgres://…@/NAME?…` → `NAME`.
fn db_name(db: &str) -> String {
    match db.split_once("@/") {
        Some((_, rest)) => rest.split('?').next().unwrap_or(rest).to_string(),
        None => db.to_string(),
    }
}

fn server_cmd(bin: &Path, program: &str, run_as_postgres: bool) -> Command {
    let path = bin.join(program);
    if run_as_postgres {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(path);
        c
    } else {
        Command::new(path)
    }
}

/// Where `initdb`, `pg_ctl` and `pg_dump` live: `$PATH`, else Debian's versioned directory.
fn bin_dir() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p).find(|d| d.join("initdb").is_file() && d.join("pg_ctl").is_file())
    });
    let debian = || {
        let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
            .ok()?
            .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
            .filter(|d| d.join("initdb").is_file())
            .collect();
        dirs.sort();
        dirs.pop()
    };
    // pg_dump must come from the server's own directory (the same major version).
    on_path
        .and_then(|d| std::fs::canonicalize(d.join("initdb")).ok())
        .and_then(|p| p.parent().map(Path::to_path_buf))
        .filter(|d| d.join("pg_dump").is_file())
        .or_else(debian)
}

fn psql_on_path() -> bool {
    Command::new("psql")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn start() -> Result<Server, String> {
    let bin =
        bin_dir().ok_or("not installed (no initdb/pg_ctl on PATH or in /usr/lib/postgresql)")?;
    if !psql_on_path() {
        return Err("not installed (no psql on PATH)".into());
    }
    let root = std::fs::metadata("/proc/self")
        .map_err(|e| e.to_string())?
        .uid()
        == 0;
    let dir = tempfile::Builder::new()
        .prefix("callus-pg-")
        .tempdir()
        .map_err(|e| e.to_string())?
        .keep();
    if root {
        let (uid, gid) = postgres_ids().ok_or("runs as root but there is no postgres OS user")?;
        std::os::unix::fs::chown(&dir, Some(uid), Some(gid)).map_err(|e| e.to_string())?;
    }
    let run = |mut c: Command, what: &str| -> Result<(), String> {
        let out = c.output().map_err(|e| format!("{what}: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{what} failed: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    };
    let pwfile = dir.join("pw");
    std::fs::write(&pwfile, PASSWORD).map_err(|e| e.to_string())?;
    if root {
        let (uid, gid) = postgres_ids().unwrap_or_default();
        std::os::unix::fs::chown(&pwfile, Some(uid), Some(gid)).map_err(|e| e.to_string())?;
    }
    let data = dir.join("data");
    let mut initdb = server_cmd(&bin, "initdb", root);
    initdb
        .arg("-D")
        .arg(&data)
        .args(["-U", "postgres", "-E", "UTF8", "--locale=C", "--no-sync"])
        .args(["--auth-local=scram-sha-256", "--auth-host=scram-sha-256"])
        .arg(format!("--pwfile={}", pwfile.display()));
    run(initdb, "initdb")?;
    let port: u16 = 5432;
    let opts = format!(
        "-k {} -p {port} -c listen_addresses='' -c fsync=off -c full_page_writes=off \
         -c synchronous_commit=off",
        dir.display()
    );
    let mut pg_ctl = server_cmd(&bin, "pg_ctl", root);
    pg_ctl
        .arg("-D")
        .arg(&data)
        .arg("-l")
        .arg(dir.join("log"))
        .args(["-w", "-t", "60", "-o", &opts, "start"]);
    if let Err(e) = run(pg_ctl, "pg_ctl start") {
        let log = std::fs::read_to_string(dir.join("log")).unwrap_or_default();
        return Err(format!("{e}\n{log}"));
    }
    watchdog(&bin, &dir, &data, root);
    Ok(Server {
        bin,
        socket: dir,
        port,
    })
}

/// Stop the server and remove its directory once this process is gone.
fn watchdog(bin: &Path, dir: &Path, data: &Path, root: bool) {
    let stop = server_cmd(bin, "pg_ctl", root);
    let mut stop_line: Vec<String> = std::iter::once(stop.get_program())
        .chain(stop.get_args())
        .map(|a| shell_quote(&a.to_string_lossy()))
        .collect();
    stop_line.extend(
        ["-D", &data.display().to_string(), "-m", "immediate", "stop"]
            .iter()
            .map(|a| shell_quote(a)),
    );
    let script = format!(
        "while kill -0 {pid} 2>/dev/null; do sleep 0.5; done; {stop} >/dev/null 2>&1; rm -rf {dir}",
        pid = std::process::id(),
        stop = stop_line.join(" "),
        dir = shell_quote(&dir.display().to_string()),
    );
    let _ = Command::new("sh")
        .args(["-c", &script])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

fn postgres_ids() -> Option<(u32, u32)> {
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|line| {
        let f: Vec<&str> = line.split(':').collect();
        (f.first() == Some(&"postgres") && f.len() > 3)
            .then(|| Some((f[2].parse().ok()?, f[3].parse().ok()?)))
            .flatten()
    })
}

/// A login role of its own for one test (roles are cluster-wide, tests run in parallel).
pub(crate) struct Role {
    pub(crate) name: String,
    pub(crate) password: String,
}

impl Server {
    /// Create a login role named after `who` and this test's database.
    pub(crate) fn create_role(&self, db: &str, who: &str) -> Role {
        let name = format!("{who}_{}", db_name(db));
        let password = format!("pw-{name}-9c1e");
        self.psql(
            "postgres",
            &format!("CREATE ROLE {name} LOGIN PASSWORD '{password}'"),
        );
        Role { name, password }
    }

    /// The URL of `db` (a URL from [`Server::create_db`]) for `role`, without its password.
    pub(crate) fn url_as(&self, db: &str, role: &Role) -> String {
        self.url_without_password(&db_name(db)).replacen(
            "postgres://postgres@",
            &format!("postgres://{}@", role.name),
            1,
        )
    }

    /// Run SQL in `db` as `role`: its rows, or psql's error.
    pub(crate) fn psql_as(&self, db: &str, role: &Role, sql: &str) -> Result<String, String> {
        let out = Command::new("psql")
            .args(["-X", "-A", "-t", "-v", "ON_ERROR_STOP=1"])
            .args(["-h", &self.socket.display().to_string()])
            .args(["-p", &self.port.to_string(), "-U", &role.name])
            .args(["-d", &db_name(db), "-c", sql])
            .env("PGPASSWORD", &role.password)
            .output()
            .expect("run psql");
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).into_owned())
        }
    }

    /// Open a session on `db` that runs `sql` inside a transaction and keeps it open (holding
    /// whatever locks it took) until the returned holder is released.
    pub(crate) fn hold(&self, db: &str, sql: &str) -> Holder {
        use std::io::{BufRead as _, Write as _};
        let mut child = Command::new("psql")
            .args(["-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=1"])
            .args(["-h", &self.socket.display().to_string()])
            .args(["-p", &self.port.to_string(), "-U", "postgres"])
            .args(["-d", &db_name(db)])
            .env("PGPASSWORD", PASSWORD)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("run psql");
        let mut stdin = child.stdin.take().unwrap();
        writeln!(stdin, "BEGIN; {sql}; SELECT 'held';").unwrap();
        stdin.flush().unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line.trim(), "held", "the holding session did not start");
        Holder { child, stdin }
    }
}

/// A session holding a transaction open (see [`Server::hold`]).
pub(crate) struct Holder {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
}

impl Holder {
    /// Roll the transaction back and end the session.
    pub(crate) fn release(mut self) {
        use std::io::Write as _;
        let _ = writeln!(self.stdin, "ROLLBACK;");
        drop(self.stdin);
        let _ = self.child.wait();
    }
}
