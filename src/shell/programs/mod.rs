//! The program table: everything callus knows about a program, found from its one [`Row`].
//!
//! [`PROGRAMS`] maps each name or alias (sorted, unique; a test keeps it so) to its row, and
//! [`find`] looks a name up by binary search. A row owns
//! - its option grammar ([`Row::options`], read by the one engine, [`crate::shell::options`]);
//! - its [`Role`]: plain, a transparent wrapper (and where its command starts), a meaningful
//!   wrapper, a script runner, a shell, a printer, a builtin, or a keyword (not a program);
//! - how the splitter unwraps it ([`Row::unwrap`]: the command a wrapper runs, the script a
//!   runner runs, the text a printer prints);
//! - its shape rule for the recorder and derive ([`Shape`]);
//! - the files it writes ([`Row::writes`], read by `shell::writes`);
//! - the effects the model reads from it ([`Row::effects`], a function of the walk's state);
//! - what it does on the network ([`Row::network`]) and how it takes code ([`Row::code`]).
//!
//! The rows live one file per family (`shells.rs`, `interpreters.rs`, `codecs.rs`,
//! `wrappers.rs`, `runners.rs`, `disks.rs`, `data.rs`, `privilege.rs`, `files.rs`,
//! `editors.rs`, `git.rs`, `net.rs`, `machine.rs`, `builtins.rs`; the multiplexers that only
//! shape, such as `npm` or `psql`, are [`Row::SUBCOMMAND`] here), each with its tests. Adding a program is one row in
//! its family file, one line here, and its tests (see `docs/architecture.md`, "Adding a
//! program").
//!
//! Layering inside `shell/`: the bash syntax (lexer, parser, normalisation, [`Kind`]) and the
//! option engine sit below this table and name no program; normalisation asks the table
//! through the [`classify`] function value [`crate::shell::split`] hands it. The model's
//! vocabulary (`model::walk`, `Effect`, paths, secrets) sits below it too; the model's walk
//! (`model/segment.rs`) and the recorder's program finder (`shell::program`) sit above and
//! ask it. The passes every segment goes through (code run by shells and interpreters, data
//! sent over the network) ask the row too: its [`Network`] (fetches, decodes, sends, socket,
//! options skipped, needs a remote) and its [`Code`] (the flags an interpreter takes code with);
//! [`network`] and [`interpreter`] look them up.

mod builtins;
mod codecs;
mod data;
mod disks;
mod editors;
mod files;
mod git;
mod interpreters;
mod machine;
mod net;
mod privilege;
mod row;
mod runners;
mod shells;
mod wrappers;

pub(crate) use interpreters::is_encoded_command;
use row::unwrap_at;
pub(crate) use row::{Code, Network, Role, Row, Shape};

use crate::shell::syntax::sink::{Job, Kind, Sink};

/// Every program callus knows, by name; sorted by name (byte order), each name once.
pub(crate) static PROGRAMS: &[(&str, &Row)] = &[
    ("!", &Row::KEYWORD),
    (".", &builtins::SOURCE),
    (":", &Row::BUILTIN),
    ("GET", &net::FETCHER),
    ("R", &interpreters::R),
    ("Rscript", &interpreters::R),
    ("[", &Row::BUILTIN),
    ("[[", &Row::KEYWORD),
    ("]]", &Row::KEYWORD),
    ("alias", &Row::BUILTIN),
    ("apt", &Row::SUBCOMMAND),
    ("apt-get", &Row::SUBCOMMAND),
    ("aria2c", &net::FETCHER),
    ("ash", &shells::SHELL),
    ("awk", &editors::AWK),
    ("aws", &net::AWS),
    ("az", &net::UPLOADER),
    ("base32", &codecs::BASE_N),
    ("base64", &codecs::BASE_N),
    ("basenc", &codecs::BASE_N),
    ("bash", &shells::SHELL),
    ("blkdiscard", &disks::MAKE),
    ("bq", &data::CLIENT),
    ("break", &Row::BUILTIN),
    ("brew", &Row::SUBCOMMAND),
    ("builtin", &builtins::BUILTIN),
    ("bun", &interpreters::EVAL_PRINT),
    ("busybox", &wrappers::BUSYBOX),
    ("bzcat", &codecs::DECODER),
    ("bzip2", &codecs::COMPRESSOR),
    ("callus", &machine::CALLUS),
    ("cargo", &Row::SUBCOMMAND),
    ("case", &Row::KEYWORD),
    ("cat", &files::CAT),
    ("cd", &builtins::CD),
    ("cfdisk", &disks::FDISK),
    ("chgrp", &files::CHMOD),
    ("chmod", &files::CHMOD),
    ("chown", &files::CHMOD),
    ("clickhouse", &data::CLIENT),
    ("clickhouse-client", &data::CLIENT),
    ("cockroach", &data::CLIENT),
    ("command", &builtins::COMMAND),
    ("continue", &Row::BUILTIN),
    ("cp", &files::COPY),
    ("cqlsh", &data::CLIENT),
    ("crontab", &machine::CRONTAB),
    ("cryptsetup", &disks::CRYPTSETUP),
    ("csh", &shells::SHELL),
    ("curl", &net::CURL),
    ("curlie", &net::FETCHER),
    ("dash", &shells::SHELL),
    ("dd", &files::DD),
    ("declare", &Row::BUILTIN),
    ("deno", &interpreters::EVAL_PRINT),
    ("dirs", &Row::BUILTIN),
    ("diskutil", &disks::DISKUTIL),
    ("do", &Row::KEYWORD),
    ("doas", &privilege::DOAS),
    ("docker", &machine::CONTAINER_SUBCOMMAND),
    ("done", &Row::KEYWORD),
    ("dropdb", &data::CLIENT),
    ("duckdb", &data::CLIENT),
    ("echo", &builtins::ECHO),
    ("ed", &editors::EX),
    ("elif", &Row::KEYWORD),
    ("else", &Row::KEYWORD),
    ("env", &wrappers::ENV),
    ("esac", &Row::KEYWORD),
    ("eval", &runners::EVAL),
    ("ex", &editors::EX),
    ("exec", &builtins::EXEC),
    ("exit", &Row::BUILTIN),
    ("export", &Row::BUILTIN),
    ("false", &Row::BUILTIN),
    ("fdisk", &disks::FDISK),
    ("fetch", &net::FETCHER),
    ("fi", &Row::KEYWORD),
    ("find", &files::FIND),
    ("fish", &shells::SHELL),
    ("for", &Row::KEYWORD),
    ("ftp", &net::SENDER),
    ("function", &Row::KEYWORD),
    ("gawk", &editors::AWK),
    ("gcloud", &Row::SUBCOMMAND),
    ("gdisk", &disks::FDISK),
    ("gh", &net::UPLOADER),
    ("git", &git::GIT),
    ("go", &Row::SUBCOMMAND),
    ("gsutil", &net::UPLOADER),
    ("gunzip", &codecs::DECODER),
    ("gzip", &codecs::COMPRESSOR),
    ("halt", &machine::POWER),
    ("hash", &Row::BUILTIN),
    ("hdparm", &disks::HDPARM),
    ("http", &net::HTTPIE),
    ("https", &net::HTTPIE),
    ("if", &Row::KEYWORD),
    ("in", &Row::KEYWORD),
    ("install", &files::INSTALL),
    ("ionice", &wrappers::IONICE),
    ("kill", &machine::KILL),
    ("killall5", &machine::POWER),
    ("ksh", &shells::SHELL),
    ("kubectl", &Row::SUBCOMMAND),
    ("launchctl", &Row::SUBCOMMAND),
    ("let", &Row::BUILTIN),
    ("ln", &files::COPY),
    ("local", &Row::BUILTIN),
    ("lua", &interpreters::EVAL_PRINT),
    ("luajit", &interpreters::EVAL_PRINT),
    ("lvremove", &disks::LVM_REMOVE),
    ("lwp-request", &net::FETCHER),
    ("mail", &net::SENDER),
    ("make", &Row::SUBCOMMAND),
    ("mariadb", &data::CLIENT),
    ("mke2fs", &disks::MAKE),
    ("mkfs", &disks::MAKE),
    ("mksh", &shells::SHELL),
    ("mkswap", &disks::MAKE),
    ("mongo", &data::CLIENT),
    ("mongosh", &data::CLIENT),
    ("mutt", &net::SENDER),
    ("mv", &files::MV),
    ("mysql", &data::CLIENT),
    ("mysqladmin", &data::CLIENT),
    ("nc", &net::SOCKET),
    ("ncat", &net::SOCKET),
    ("nerdctl", &machine::CONTAINER),
    ("netcat", &net::SOCKET),
    ("newfs", &disks::MAKE),
    ("nice", &wrappers::NICE),
    ("node", &interpreters::EVAL_PRINT),
    ("nodejs", &interpreters::EVAL_PRINT),
    ("nohup", &wrappers::NOHUP),
    ("npm", &Row::SUBCOMMAND),
    ("nvim", &editors::VIM),
    ("openssl", &net::OPENSSL),
    ("osascript", &interpreters::DASH_C_RUNNER),
    ("parallel", &wrappers::PARALLEL),
    ("parted", &disks::PARTED),
    ("perl", &interpreters::PERL),
    ("php", &interpreters::PHP),
    ("pip", &Row::SUBCOMMAND),
    ("pip3", &Row::SUBCOMMAND),
    ("pkexec", &privilege::PKEXEC),
    ("pnpm", &Row::SUBCOMMAND),
    ("podman", &machine::CONTAINER),
    ("popd", &Row::BUILTIN),
    ("poweroff", &machine::POWER),
    ("powershell", &interpreters::POWERSHELL),
    ("powershell.exe", &interpreters::POWERSHELL),
    ("printf", &builtins::PRINTF),
    ("psql", &data::PSQL),
    ("pushd", &builtins::PUSHD),
    ("pvremove", &disks::LVM_REMOVE),
    ("pwsh", &interpreters::POWERSHELL),
    ("pwsh.exe", &interpreters::POWERSHELL),
    ("pypy", &interpreters::DASH_C_RUNNER),
    ("python", &interpreters::PYTHON),
    ("python3", &interpreters::PYTHON),
    ("rbash", &shells::SHELL),
    ("rclone", &net::RCLONE),
    ("read", &Row::BUILTIN),
    ("readonly", &Row::BUILTIN),
    ("reboot", &machine::POWER),
    ("red", &editors::EX),
    ("redis-cli", &data::CLIENT),
    ("return", &Row::BUILTIN),
    ("rev", &codecs::DECODER),
    ("rm", &files::RM),
    ("rmdir", &files::RM),
    ("rsync", &files::RSYNC),
    ("ruby", &interpreters::EVAL_PRINT),
    ("run0", &privilege::RUN0),
    ("scp", &net::REMOTE_COPIER),
    ("script", &runners::SCRIPT),
    ("sed", &editors::SED),
    ("select", &Row::KEYWORD),
    ("sendmail", &net::SENDER),
    ("set", &Row::BUILTIN),
    ("setfacl", &files::SETFACL),
    ("setsid", &wrappers::NOHUP),
    ("sfdisk", &disks::SFDISK),
    ("sftp", &net::REMOTE_COPIER),
    ("sgdisk", &disks::SGDISK),
    ("sh", &shells::SHELL),
    ("shift", &Row::BUILTIN),
    ("shopt", &Row::BUILTIN),
    ("shred", &files::SHRED),
    ("shutdown", &machine::POWER),
    ("sleep", &Row::BUILTIN),
    ("snowsql", &data::CLIENT),
    ("socat", &net::SOCAT),
    ("source", &builtins::SOURCE),
    ("sqlcmd", &data::CLIENT),
    ("sqlite", &data::CLIENT),
    ("sqlite3", &data::CLIENT),
    ("srm", &files::RM),
    ("ssh", &net::SSH),
    ("stdbuf", &wrappers::STDBUF),
    ("su", &privilege::SU),
    ("sudo", &privilege::SUDO),
    ("systemctl", &Row::SUBCOMMAND),
    ("taskset", &wrappers::TASKSET),
    ("tcsh", &shells::SHELL),
    ("tee", &files::TEE),
    ("telnet", &net::SOCKET),
    ("test", &Row::BUILTIN),
    ("tftp", &net::SENDER),
    ("then", &Row::KEYWORD),
    ("time", &wrappers::TIME),
    ("timeout", &wrappers::TIMEOUT),
    ("trap", &Row::BUILTIN),
    ("true", &Row::BUILTIN),
    ("truncate", &files::TRUNCATE),
    ("type", &Row::BUILTIN),
    ("typeset", &Row::BUILTIN),
    ("ulimit", &Row::BUILTIN),
    ("umask", &Row::BUILTIN),
    ("unalias", &Row::BUILTIN),
    ("unbuffer", &wrappers::UNBUFFER),
    ("unlink", &files::RM),
    ("unset", &Row::BUILTIN),
    ("until", &Row::KEYWORD),
    ("uudecode", &codecs::DECODER),
    ("vgremove", &disks::LVM_REMOVE),
    ("vi", &editors::VIM),
    ("vim", &editors::VIM),
    ("wait", &Row::BUILTIN),
    ("watch", &wrappers::WATCH),
    ("wget", &net::WGET),
    ("while", &Row::KEYWORD),
    ("wipefs", &disks::WIPEFS),
    ("xargs", &wrappers::XARGS),
    ("xh", &net::HTTPIE),
    ("xxd", &codecs::XXD),
    ("xz", &codecs::COMPRESSOR),
    ("xzcat", &codecs::DECODER),
    ("yarn", &Row::SUBCOMMAND),
    ("yash", &shells::SHELL),
    ("zcat", &codecs::DECODER),
    ("zpool", &disks::ZPOOL),
    ("zsh", &shells::SHELL),
    ("{", &Row::KEYWORD),
    ("}", &Row::KEYWORD),
];

/// Families named by a prefix, for names no list can hold (`mkfs.ext4`, `mkfs.anything`):
/// looked up only when [`PROGRAMS`] has no row for the exact name.
pub(crate) static PREFIXES: &[(&str, &Row)] = &[("mkfs", &disks::MAKE)];

/// The row of the program `name` (basename, as the splitter leaves it), if the table has one:
/// its own, else its prefix family's.
#[must_use]
pub(crate) fn find(name: &str) -> Option<&'static Row> {
    match PROGRAMS.binary_search_by(|(n, _)| (*n).cmp(name)) {
        Ok(i) => Some(PROGRAMS[i].1),
        Err(_) => PREFIXES
            .iter()
            .find(|(prefix, _)| name.starts_with(prefix))
            .map(|(_, row)| *row),
    }
}

/// How the splitter reads `argv` (non-empty, program already normalised): the row's
/// [`Row::unwrap`], else a transparent wrapper's command, else [`Kind::Plain`]. The function
/// value [`crate::shell::split`] hands normalisation.
pub(crate) fn classify(argv: &[String], job: &Job, depth: u8, sink: &mut Sink) -> Kind {
    let Some(row) = argv.first().and_then(|p| find(p)) else {
        return Kind::Plain;
    };
    match (row.unwrap, row.role) {
        (Some(unwrap), _) => unwrap(argv, job, depth, sink),
        (None, Role::Transparent(start)) => start(argv).map_or(Kind::Plain, |i| unwrap_at(argv, i)),
        _ => Kind::Plain,
    }
}

/// What `p` does on the network: its row's [`Network`] ([`Network::NONE`] without a row).
#[must_use]
pub(crate) fn network(p: &str) -> &'static Network {
    find(p).map_or(&Network::NONE, |r| r.network)
}

/// How `p` takes code to run, if it is an interpreter: its row's [`Code`], else that of its
/// name without a version suffix (`python3.11` → `python`, `lua5.4` → `lua`).
#[must_use]
pub(crate) fn interpreter(p: &str) -> Option<&'static Code> {
    let base = p.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    find(p)
        .and_then(|r| r.code)
        .or_else(|| find(base).and_then(|r| r.code))
}

/// Does `code` fetch or decode what it yields: a word naming (in any case: `curl`, `GET`)
/// a fetcher's row or a row that decodes on every call (`uudecode`, `zcat` …), or a
/// decoding command (`base64 -d`, `xxd -r`, `openssl enc -d`)?
pub(crate) fn fetches_or_decodes(code: &str) -> bool {
    let lower = code.to_ascii_lowercase();
    let mut words = lower
        .split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
        .filter(|w| !w.is_empty());
    words.any(|w| {
        PROGRAMS.iter().any(|(name, row)| {
            let network = row.network;
            name.eq_ignore_ascii_case(w)
                && (network.fetches || network.decodes.is_some_and(|decodes| decodes(&[])))
        })
    }) || [
        // `base64 -D` (macOS) too: the text is lowercased.
        "base64 -d",
        "base64 --d",
        "base32 -d",
        "xxd -r",
        "openssl enc -d",
        "openssl base64 -d",
        "gzip -d",
    ]
    .iter()
    .any(|p| lower.contains(p))
}

/// Is `p` a shell (a [`Role::Shell`] row, or `busybox`, which runs as one)?
#[must_use]
pub(crate) fn is_shell(p: &str) -> bool {
    p == "busybox" || find(p).is_some_and(|r| matches!(r.role, Role::Shell))
}

/// Is `name` a shell, by path or name (`bash`, `/bin/sh`, `zsh` …)?
#[must_use]
pub(crate) fn is_shell_name(name: &str) -> bool {
    is_shell(name.rsplit('/').next().unwrap_or(name))
}

/// Where a transparent wrapper's command starts in `argv` (`argv[0]` its name, path
/// stripped): `None` when `argv[0]` is none or runs nothing here.
#[must_use]
pub(crate) fn transparent_start(argv: &[String]) -> Option<usize> {
    match find(argv.first()?)?.role {
        Role::Transparent(start) => start(argv),
        _ => None,
    }
}

/// The texts of `cmd`'s segments, in order: what the family files' tests compare.
#[cfg(test)]
fn texts(cmd: &str) -> Vec<String> {
    crate::shell::split(cmd)
        .segments
        .into_iter()
        .map(|s| s.text)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_sorted_and_each_name_is_there_once() {
        for pair in PROGRAMS.windows(2) {
            assert!(pair[0].0 < pair[1].0, "{} before {}", pair[0].0, pair[1].0);
        }
        for (name, _) in PROGRAMS {
            assert!(find(name).is_some(), "{name}");
        }
        assert!(find("nosuchprogram").is_none());
        // A prefix family: any `mkfs…` the list does not name.
        assert!(find("mkfs.btrfs").is_some() && find("mkfsx").is_some());
        assert!(find("xmkfs").is_none());
        assert!(find("").is_none());
    }

    #[test]
    fn roles_answer_the_questions_the_stages_ask() {
        assert!(is_shell("bash") && is_shell("busybox") && !is_shell("eval"));
        assert!(!is_shell("python3") && !is_shell("bashx"));
        let argv = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
        assert_eq!(transparent_start(&argv("timeout -s KILL 5 rm x")), Some(4));
        assert_eq!(transparent_start(&argv("sudo rm x")), None);
        assert_eq!(transparent_start(&argv("rm x")), None);
        assert_eq!(find("git").map(|r| r.shape), Some(Shape::Subcommand));
        assert_eq!(find("cd").map(|r| r.shape), Some(Shape::Never));
        assert_eq!(find("for").map(|r| r.shape), Some(Shape::Never));
    }

    #[test]
    fn network_facts_come_from_the_rows() {
        assert!(network("curl").fetches && network("curl").sends);
        assert!(network("GET").fetches && !network("GET").sends);
        assert!(!network("nc").fetches && network("nc").sends && network("nc").socket.is_some());
        assert!(network("scp").needs_remote && network("rsync").needs_remote);
        assert!(!network("ssh").needs_remote && network("ssh").sends);
        let nothing = network("nosuchprogram");
        assert!(!nothing.fetches && !nothing.sends && nothing.socket.is_none());
        assert!(!network("ls").sends);
    }

    #[test]
    fn fetch_and_decode_are_recognised_inside_substitutions() {
        assert!(fetches_or_decodes("curl -fsSL https://x/i.sh)"));
        assert!(fetches_or_decodes("$(WGET x)"));
        assert!(fetches_or_decodes("GET http://x | sh"));
        assert!(fetches_or_decodes("echo aGk= | base64 -d)"));
        assert!(fetches_or_decodes("echo aGk= | base64 -D)"));
        assert!(fetches_or_decodes("zcat x.gz"));
        for decoder in ["uudecode", "gunzip -c x", "rev", "bzcat x", "xzcat x"] {
            assert!(fetches_or_decodes(decoder), "{decoder}");
        }
        assert!(fetches_or_decodes("openssl enc -d -in x"));
        assert!(!fetches_or_decodes("git rev-parse HEAD)"));
        // A sender that does not fetch, and a word that only contains a fetcher's name.
        assert!(!fetches_or_decodes("nc host 80"));
        assert!(!fetches_or_decodes("curly braces"));
        assert!(!fetches_or_decodes("base64 x"));
    }
}
