//! Conditions a rule may carry (`when`): what must hold, besides its patterns, for it to fire.
//!
//! Every condition is cheap — no network, no spawned process — and is answered through
//! [`Facts`], so the decision stays pure: the hook answers at the edge with real `stat()`
//! calls, `PATH` look-ups and store queries (`guard::facts`), lazily, only for a rule whose
//! patterns already matched; history replay (`rules::replay`) answers from the recorded rows;
//! tests answer with a fake.
//!
//! Each condition is true, false or unknown (the facts could not say). [`When::eval`] is
//! false as soon as one condition is false (the later ones are not asked), else unknown when
//! one could not be answered, else true. What an unknown means is the caller's: the guard
//! fires the rule (it fails toward the rule), a replay does not count the call and says how
//! many it could not replay.
//!
//! Files: this one (the conditions, the facts and their evaluation), `read` (a rule's
//! `when` object read into a [`When`], each wrong key named), `paths` (the paths file
//! tools name, resolved for comparing) and `file_state` (a session's file events, which the
//! session-state conditions are answered from).

pub(crate) mod file_state;
mod paths;
mod read;

pub(crate) use paths::{FILE_TOOLS, read_path, resolve};
pub(crate) use read::parse;

use serde_json::Value;

use super::field;

/// The condition keys, in the order they are evaluated (cheap session context first).
pub(crate) const WHEN_KEYS: &[&str] = &[
    "host",
    "os",
    "shell",
    "sandbox",
    "originator",
    "cwd_under",
    "timeout_ms_at_most",
    "program_absent",
    "path_missing",
    "path_is_directory",
    "file_larger_than",
    "not_read_in_session",
    "changed_since_read",
];

/// The hosts' slugs, as recorded in `sessions.host`.
pub(crate) const HOSTS: &[&str] = &[
    "claude-code",
    "codex",
    "gemini-cli",
    "cursor",
    "copilot-cli",
];

/// The operating systems `os` names.
pub(crate) const OSES: &[&str] = &["linux", "macos", "windows"];

/// Sandbox values that mean no sandbox at all (`"sandbox": false` holds for them).
pub(crate) const NO_SANDBOX: &[&str] = &["danger-full-access", "none", "off", "disabled"];

/// A piece of session context a condition reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Key {
    /// The host's slug (`claude-code`, `codex`, …).
    Host,
    /// `linux`, `macos` or `windows`.
    Os,
    /// The shell the host runs commands in (`bash`, `zsh`, `pwsh`, …).
    Shell,
    /// The sandbox the host reports (`read-only`, `workspace-write`, `danger-full-access`).
    Sandbox,
    /// The client that started the session, as the host reports it (`codex_cli_rs`, …).
    Originator,
    /// The call's working directory.
    Cwd,
}

/// What `stat` found at a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stat {
    /// Nothing is there.
    Missing,
    /// A regular file of this many bytes.
    File(u64),
    /// A regular file of a size not known (history saw a file tool succeed on it).
    FileUnmeasured,
    /// A directory.
    Directory,
    /// Something is there, of a kind and size not known (history saw it used, not measured).
    Exists,
    /// Something that is neither a regular file nor a directory (a device, a socket).
    Other,
    /// The question could not be answered (permission, a busy store, no evidence).
    Unknown,
}

/// The answers conditions need. `None` (or [`Stat::Unknown`]): cannot tell.
pub(crate) trait Facts {
    /// A piece of the session's context.
    fn context(&self, key: Key) -> Option<String>;
    /// Is `name` an executable on `PATH`?
    fn program_on_path(&self, name: &str) -> Option<bool>;
    /// What is at `path` (relative paths are the call's cwd's).
    fn stat(&self, path: &str) -> Stat;
    /// Has this session seen `path`'s content (a Read of it, or its own file-tool write)?
    fn read_in_session(&self, path: &str) -> Option<bool>;
    /// Did something exist at `path` before the call?
    fn existed(&self, path: &str) -> Option<bool>;
    /// The time limit, in milliseconds, the call itself gave its host's shell tool
    /// ([`crate::host::call::time_limit_ms`]); `None` when it set none.
    fn time_limit_ms(&self) -> Option<u64>;
    /// Was `path` written (by a shell command of the session, or from outside: a newer
    /// modification time) after the session last saw it? False when it never saw it.
    fn changed_since_read(&self, path: &str) -> Option<bool>;
}

/// Facts that know nothing: every condition is unknown.
pub(crate) struct NoFacts;

impl Facts for NoFacts {
    fn context(&self, _: Key) -> Option<String> {
        None
    }
    fn program_on_path(&self, _: &str) -> Option<bool> {
        None
    }
    fn stat(&self, _: &str) -> Stat {
        Stat::Unknown
    }
    fn read_in_session(&self, _: &str) -> Option<bool> {
        None
    }
    fn existed(&self, _: &str) -> Option<bool> {
        None
    }
    fn time_limit_ms(&self) -> Option<u64> {
        None
    }
    fn changed_since_read(&self, _: &str) -> Option<bool> {
        None
    }
}

/// `sandbox`: sandboxed at all, or one of these sandboxes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Sandbox {
    /// `true`: any sandbox; `false`: none.
    Any(bool),
    /// One of these (lowercase).
    OneOf(Vec<String>),
}

/// A rule's conditions; every one present must hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct When {
    /// The host is one of these slugs.
    pub(crate) host: Option<Vec<String>>,
    /// The OS is one of these.
    pub(crate) os: Option<Vec<String>>,
    /// The shell is one of these (lowercase).
    pub(crate) shell: Option<Vec<String>>,
    /// The sandbox condition.
    pub(crate) sandbox: Option<Sandbox>,
    /// The originator is one of these (lowercase).
    pub(crate) originator: Option<Vec<String>>,
    /// The call's cwd is one of these directories or inside one.
    pub(crate) cwd_under: Option<Vec<String>>,
    /// The call set itself a time limit of at most this many milliseconds.
    pub(crate) timeout_ms_at_most: Option<u64>,
    /// This program is not an executable on `PATH`.
    pub(crate) program_absent: Option<String>,
    /// The path in this `tool_input` field does not exist.
    pub(crate) path_missing: Option<String>,
    /// The path in this `tool_input` field is a directory.
    pub(crate) path_is_directory: Option<String>,
    /// The file at this field's path is larger than this many bytes.
    pub(crate) file_larger_than: Option<(String, u64)>,
    /// The file at the path in this field exists and this session has not seen it.
    pub(crate) not_read_in_session: Option<String>,
    /// The file at the path in this field changed after this session last saw it.
    pub(crate) changed_since_read: Option<String>,
}

impl When {
    /// The `tool_input` fields its path conditions read (a replay places a stored call's
    /// input summary there too).
    pub(crate) fn fields(&self) -> impl Iterator<Item = &str> {
        self.path_missing
            .as_deref()
            .into_iter()
            .chain(self.path_is_directory.as_deref())
            .chain(self.file_larger_than.as_ref().map(|(f, _)| f.as_str()))
            .chain(self.not_read_in_session.as_deref())
            .chain(self.changed_since_read.as_deref())
    }
}

/// How [`When::eval`] came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Every condition holds.
    Holds,
    /// One does not.
    Fails,
    /// None is false, but this one could not be answered.
    Unknown(&'static str),
}

impl When {
    /// Evaluate every condition against the call's `input` (each false one stops it).
    pub(crate) fn eval(&self, input: &Value, facts: &dyn Facts) -> Outcome {
        let mut unknown = None;
        for &key in WHEN_KEYS {
            match self.one(key, input, facts) {
                None | Some(Some(true)) => {}
                Some(Some(false)) => return Outcome::Fails,
                Some(None) => {
                    unknown.get_or_insert(key);
                }
            }
        }
        unknown.map_or(Outcome::Holds, Outcome::Unknown)
    }

    /// The keys this rule carries.
    pub(crate) fn keys(&self) -> impl Iterator<Item = &'static str> + '_ {
        WHEN_KEYS
            .iter()
            .copied()
            .filter(|k| self.one(k, &Value::Null, &NoFacts).is_some())
    }

    /// Condition `key`: `None` when the rule does not carry it, else its answer (`None`:
    /// unknown).
    #[allow(clippy::option_option)] // absent, unknown, true, false: four cases, used once
    fn one(&self, key: &str, input: &Value, facts: &dyn Facts) -> Option<Option<bool>> {
        let text = |f: &str| field::get(input, f);
        Some(match key {
            "host" => one_of(self.host.as_ref()?, facts.context(Key::Host)),
            "os" => one_of(self.os.as_ref()?, facts.context(Key::Os)),
            "shell" => one_of(self.shell.as_ref()?, facts.context(Key::Shell)),
            "originator" => one_of(self.originator.as_ref()?, facts.context(Key::Originator)),
            "sandbox" => sandbox(self.sandbox.as_ref()?, facts.context(Key::Sandbox)),
            "cwd_under" => {
                let dirs = self.cwd_under.as_ref()?;
                facts.context(Key::Cwd).map(|cwd| under(dirs, &cwd))
            }
            "timeout_ms_at_most" => {
                let max = self.timeout_ms_at_most?;
                Some(facts.time_limit_ms().is_some_and(|ms| ms <= max))
            }
            "program_absent" => facts
                .program_on_path(self.program_absent.as_ref()?)
                .map(|on| !on),
            "path_missing" => with_path(&text(self.path_missing.as_ref()?), |p| {
                match facts.stat(p) {
                    Stat::Missing => Some(true),
                    Stat::File(_)
                    | Stat::FileUnmeasured
                    | Stat::Directory
                    | Stat::Exists
                    | Stat::Other => Some(false),
                    Stat::Unknown => None,
                }
            }),
            "path_is_directory" => with_path(&text(self.path_is_directory.as_ref()?), |p| {
                match facts.stat(p) {
                    Stat::Directory => Some(true),
                    Stat::File(_) | Stat::FileUnmeasured | Stat::Missing | Stat::Other => {
                        Some(false)
                    }
                    Stat::Exists | Stat::Unknown => None,
                }
            }),
            "file_larger_than" => {
                let (f, bytes) = self.file_larger_than.as_ref()?;
                with_path(&text(f), |p| match facts.stat(p) {
                    Stat::File(n) => Some(n > *bytes),
                    Stat::Missing | Stat::Directory | Stat::Other => Some(false),
                    Stat::FileUnmeasured | Stat::Exists | Stat::Unknown => None,
                })
            }
            "not_read_in_session" => with_path(&text(self.not_read_in_session.as_ref()?), |p| {
                not_read(facts, p)
            }),
            "changed_since_read" => with_path(&text(self.changed_since_read.as_ref()?), |p| {
                facts.changed_since_read(p)
            }),
            _ => return None,
        })
    }
}

/// `not_read_in_session` at `path`: false once the session saw it (the file system is not
/// asked then) or nothing was there before the call (a Write creating a file needs no
/// Read); true when it existed and was not seen; else unknown.
fn not_read(facts: &dyn Facts, path: &str) -> Option<bool> {
    let read = facts.read_in_session(path);
    if read == Some(true) {
        return Some(false);
    }
    match (read, facts.existed(path)) {
        (_, Some(false)) => Some(false),
        (Some(false), Some(true)) => Some(true),
        _ => None,
    }
}

/// A path condition on a field: false when the field holds no path.
fn with_path(path: &str, ask: impl FnOnce(&str) -> Option<bool>) -> Option<bool> {
    let path = path.trim();
    if path.is_empty() {
        return Some(false);
    }
    ask(path)
}

/// Is `value` (when known) one of `list`, ignoring ASCII case?
fn one_of(list: &[String], value: Option<String>) -> Option<bool> {
    let value = value?;
    Some(list.iter().any(|v| v.eq_ignore_ascii_case(value.trim())))
}

fn sandbox(want: &Sandbox, value: Option<String>) -> Option<bool> {
    let value = value?;
    let value = value.trim();
    Some(match want {
        Sandbox::Any(sandboxed) => {
            NO_SANDBOX.iter().any(|n| n.eq_ignore_ascii_case(value)) != *sandboxed
        }
        Sandbox::OneOf(list) => list.iter().any(|v| v.eq_ignore_ascii_case(value)),
    })
}

/// Is `cwd` one of `dirs` or inside one (whole path components; `\` counts as `/`)?
fn under(dirs: &[String], cwd: &str) -> bool {
    let norm = |s: &str| s.replace('\\', "/").trim_end_matches('/').to_string();
    let cwd = norm(cwd);
    dirs.iter().any(|d| {
        let d = norm(d);
        if d.is_empty() {
            // `/` (or `\`) itself: every absolute path.
            return cwd.starts_with('/');
        }
        cwd == d
            || cwd
                .strip_prefix(&d)
                .is_some_and(|rest| rest.starts_with('/'))
    })
}

/// The running OS as `os` names it.
#[must_use]
pub(crate) fn os_name() -> &'static str {
    os_named(std::env::consts::OS)
}

/// `os`'s name for Rust's `std::env::consts::OS` value: every Unix but macOS is `linux`.
fn os_named(os: &str) -> &'static str {
    match os {
        "macos" => "macos",
        "windows" => "windows",
        _ => "linux",
    }
}

/// The shell named by a `SHELL` value (its file name, without `.exe`).
#[must_use]
pub(crate) fn shell_name(shell: &str) -> Option<String> {
    let name = shell.rsplit(['/', '\\']).next()?.trim();
    let name = name.strip_suffix(".exe").unwrap_or(name);
    (!name.is_empty()).then(|| name.to_ascii_lowercase())
}

/// The OS a recorded working directory reveals: a drive letter (`C:\\`) is Windows; any
/// other path says nothing (a `/` path may be Linux or macOS).
#[must_use]
pub(crate) fn os_of_cwd(cwd: &str) -> Option<&'static str> {
    let b = cwd.as_bytes();
    (b.len() >= 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && matches!(b[2], b'\\' | b'/'))
        .then_some("windows")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::cell::RefCell;

    /// Facts answered from a table; records what was asked.
    #[derive(Default)]
    struct Fake {
        context: Vec<(Key, &'static str)>,
        on_path: Option<bool>,
        stat: Option<Stat>,
        read: Option<bool>,
        existed: Option<bool>,
        changed: Option<bool>,
        limit: Option<u64>,
        asked: RefCell<Vec<String>>,
    }

    impl Facts for Fake {
        fn context(&self, key: Key) -> Option<String> {
            self.asked.borrow_mut().push(format!("{key:?}"));
            self.context
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, v)| (*v).to_string())
        }
        fn program_on_path(&self, name: &str) -> Option<bool> {
            self.asked.borrow_mut().push(format!("path {name}"));
            self.on_path
        }
        fn stat(&self, path: &str) -> Stat {
            self.asked.borrow_mut().push(format!("stat {path}"));
            self.stat.unwrap_or(Stat::Unknown)
        }
        fn read_in_session(&self, path: &str) -> Option<bool> {
            self.asked.borrow_mut().push(format!("read {path}"));
            self.read
        }
        fn existed(&self, path: &str) -> Option<bool> {
            self.asked.borrow_mut().push(format!("existed {path}"));
            self.existed
        }
        fn changed_since_read(&self, path: &str) -> Option<bool> {
            self.asked.borrow_mut().push(format!("changed {path}"));
            self.changed
        }
        fn time_limit_ms(&self) -> Option<u64> {
            self.asked.borrow_mut().push("limit".into());
            self.limit
        }
    }

    #[allow(clippy::needless_pass_by_value)] // called with json!(…) literals
    fn when(v: Value) -> When {
        parse(&v).unwrap()
    }

    fn eval(w: &When, facts: &Fake) -> Outcome {
        w.eval(&json!({"file_path": "a.txt", "blank": "  "}), facts)
    }

    fn ctx(pairs: &[(Key, &'static str)]) -> Fake {
        Fake {
            context: pairs.to_vec(),
            ..Fake::default()
        }
    }

    #[test]
    fn a_time_limit_holds_up_to_its_maximum_and_a_call_that_set_none_is_past_it() {
        let w = when(json!({"timeout_ms_at_most": 2000}));
        let limit = |ms| Fake {
            limit: ms,
            ..Fake::default()
        };
        assert_eq!(eval(&w, &limit(Some(1000))), Outcome::Holds);
        assert_eq!(eval(&w, &limit(Some(2000))), Outcome::Holds);
        assert_eq!(eval(&w, &limit(Some(2001))), Outcome::Fails);
        assert_eq!(eval(&w, &limit(None)), Outcome::Fails);
        assert_eq!(w.keys().collect::<Vec<_>>(), ["timeout_ms_at_most"]);
        // Asked before the program's `PATH` look-up, which it spares when false.
        let w = when(json!({"timeout_ms_at_most": 2000, "program_absent": "git"}));
        let f = limit(Some(5000));
        assert_eq!(eval(&w, &f), Outcome::Fails);
        assert_eq!(*f.asked.borrow(), ["limit"]);
        assert_eq!(NoFacts.time_limit_ms(), None);
    }

    #[test]
    fn context_lists_match_ignoring_case_and_unknown_is_unknown() {
        for (key, k, good, bad) in [
            ("host", Key::Host, "codex", "claude-code"),
            ("os", Key::Os, "windows", "linux"),
            ("shell", Key::Shell, "PWSH", "bash"),
            ("originator", Key::Originator, "codex_cli_rs", "vscode"),
        ] {
            let list = if key == "host" {
                json!(["codex"])
            } else if key == "os" {
                json!(["Windows"])
            } else {
                json!(["pwsh", "codex_cli_rs"])
            };
            let w = when(json!({ key: list }));
            assert_eq!(eval(&w, &ctx(&[(k, good)])), Outcome::Holds, "{key}");
            assert_eq!(eval(&w, &ctx(&[(k, bad)])), Outcome::Fails, "{key}");
            let key_static = WHEN_KEYS.iter().find(|x| **x == key).unwrap();
            assert_eq!(eval(&w, &ctx(&[])), Outcome::Unknown(key_static), "{key}");
        }
    }

    #[test]
    fn sandbox_any_and_named() {
        let yes = when(json!({"sandbox": true}));
        let no = when(json!({"sandbox": false}));
        let named = when(json!({"sandbox": ["read-only"]}));
        let s = |v: &'static str| ctx(&[(Key::Sandbox, v)]);
        assert_eq!(eval(&yes, &s("workspace-write")), Outcome::Holds);
        assert_eq!(eval(&yes, &s("danger-full-access")), Outcome::Fails);
        assert_eq!(eval(&no, &s("None")), Outcome::Holds);
        assert_eq!(eval(&no, &s("read-only")), Outcome::Fails);
        assert_eq!(eval(&named, &s("READ-ONLY")), Outcome::Holds);
        assert_eq!(eval(&named, &s("workspace-write")), Outcome::Fails);
        assert_eq!(eval(&yes, &ctx(&[])), Outcome::Unknown("sandbox"));
    }

    #[test]
    fn cwd_under_is_by_whole_components() {
        let w = when(json!({"cwd_under": ["/work/app/", "C:\\src"]}));
        let c = |v: &'static str| ctx(&[(Key::Cwd, v)]);
        assert_eq!(eval(&w, &c("/work/app")), Outcome::Holds);
        assert_eq!(eval(&w, &c("/work/app/web")), Outcome::Holds);
        assert_eq!(eval(&w, &c("/work/apple")), Outcome::Fails);
        assert_eq!(eval(&w, &c("/work")), Outcome::Fails);
        assert_eq!(eval(&w, &c("C:\\src\\x")), Outcome::Holds);
        assert_eq!(eval(&w, &ctx(&[])), Outcome::Unknown("cwd_under"));
        let root = when(json!({"cwd_under": ["/"]}));
        assert_eq!(eval(&root, &c("/anything")), Outcome::Holds);
        assert_eq!(eval(&root, &c("C:/x")), Outcome::Fails);
    }

    #[test]
    fn program_absent_is_the_negation_of_on_path() {
        let w = when(json!({"program_absent": "pnpm"}));
        let f = |on: Option<bool>| Fake {
            on_path: on,
            ..Fake::default()
        };
        assert_eq!(eval(&w, &f(Some(false))), Outcome::Holds);
        assert_eq!(eval(&w, &f(Some(true))), Outcome::Fails);
        assert_eq!(eval(&w, &f(None)), Outcome::Unknown("program_absent"));
        let asked = f(Some(true));
        eval(&w, &asked);
        assert_eq!(*asked.asked.borrow(), ["path pnpm"]);
    }

    #[test]
    fn path_conditions_read_stat() {
        let missing = when(json!({"path_missing": {"field": "file_path"}}));
        let large = when(json!({"file_larger_than": {"field": "file_path", "bytes": 10}}));
        let f = |s: Stat| Fake {
            stat: Some(s),
            ..Fake::default()
        };
        assert_eq!(eval(&missing, &f(Stat::Missing)), Outcome::Holds);
        assert_eq!(eval(&missing, &f(Stat::File(0))), Outcome::Fails);
        assert_eq!(eval(&missing, &f(Stat::Other)), Outcome::Fails);
        assert_eq!(eval(&missing, &f(Stat::Exists)), Outcome::Fails);
        assert_eq!(
            eval(&large, &f(Stat::Exists)),
            Outcome::Unknown("file_larger_than")
        );
        assert_eq!(
            eval(&missing, &f(Stat::Unknown)),
            Outcome::Unknown("path_missing")
        );
        assert_eq!(eval(&large, &f(Stat::File(11))), Outcome::Holds);
        assert_eq!(eval(&large, &f(Stat::File(10))), Outcome::Fails);
        assert_eq!(eval(&large, &f(Stat::Missing)), Outcome::Fails);
        assert_eq!(eval(&large, &f(Stat::Other)), Outcome::Fails);
        assert_eq!(
            eval(&large, &f(Stat::Unknown)),
            Outcome::Unknown("file_larger_than")
        );
        // The path asked is the field's.
        let asked = f(Stat::Missing);
        eval(&large, &asked);
        assert_eq!(*asked.asked.borrow(), ["stat a.txt"]);
        // A blank or absent field holds no path: false, and nothing is asked.
        let blank = when(json!({"path_missing": {"field": "blank"}}));
        let none = when(json!({"path_missing": {"field": "nope"}}));
        let asked = f(Stat::Missing);
        assert_eq!(eval(&blank, &asked), Outcome::Fails);
        assert_eq!(eval(&none, &asked), Outcome::Fails);
        assert!(asked.asked.borrow().is_empty());
    }

    #[test]
    fn path_is_directory_holds_only_for_a_directory() {
        let dir = when(json!({"path_is_directory": {"field": "file_path"}}));
        let f = |s: Stat| Fake {
            stat: Some(s),
            ..Fake::default()
        };
        assert_eq!(eval(&dir, &f(Stat::Directory)), Outcome::Holds);
        for not in [
            Stat::File(0),
            Stat::FileUnmeasured,
            Stat::Missing,
            Stat::Other,
        ] {
            assert_eq!(eval(&dir, &f(not)), Outcome::Fails, "{not:?}");
        }
        for unknown in [Stat::Exists, Stat::Unknown] {
            assert_eq!(
                eval(&dir, &f(unknown)),
                Outcome::Unknown("path_is_directory"),
                "{unknown:?}"
            );
        }
        let asked = f(Stat::Directory);
        eval(&dir, &asked);
        assert_eq!(*asked.asked.borrow(), ["stat a.txt"]);
        let blank = when(json!({"path_is_directory": {"field": "blank"}}));
        assert_eq!(eval(&blank, &f(Stat::Directory)), Outcome::Fails);
        // The other path conditions read the new kinds of answer too.
        let missing = when(json!({"path_missing": {"field": "file_path"}}));
        let large = when(json!({"file_larger_than": {"field": "file_path", "bytes": 10}}));
        assert_eq!(eval(&missing, &f(Stat::Directory)), Outcome::Fails);
        assert_eq!(eval(&missing, &f(Stat::FileUnmeasured)), Outcome::Fails);
        assert_eq!(eval(&large, &f(Stat::Directory)), Outcome::Fails);
        assert_eq!(
            eval(&large, &f(Stat::FileUnmeasured)),
            Outcome::Unknown("file_larger_than")
        );
        assert_eq!(dir.fields().collect::<Vec<_>>(), ["file_path"]);
        assert_eq!(dir.keys().collect::<Vec<_>>(), ["path_is_directory"]);
        assert!(
            parse(&json!({"path_is_directory": "file_path"}))
                .unwrap_err()
                .1
                .starts_with("must be {")
        );
    }

    #[test]
    fn not_read_in_session_holds_for_an_existing_file_the_session_has_not_seen() {
        let w = when(json!({"not_read_in_session": "file_path"}));
        let f = |r: Option<bool>, e: Option<bool>| Fake {
            read: r,
            existed: e,
            ..Fake::default()
        };
        let unknown = Outcome::Unknown("not_read_in_session");
        assert_eq!(eval(&w, &f(Some(false), Some(true))), Outcome::Holds);
        // Seen: false, whatever the file system would say (and it is not asked).
        let seen = f(Some(true), None);
        assert_eq!(eval(&w, &seen), Outcome::Fails);
        assert_eq!(*seen.asked.borrow(), ["read a.txt"]);
        // Not there before the call (a Write creating it): false, even when reads are unknown.
        assert_eq!(eval(&w, &f(Some(false), Some(false))), Outcome::Fails);
        assert_eq!(eval(&w, &f(None, Some(false))), Outcome::Fails);
        assert_eq!(eval(&w, &f(None, Some(true))), unknown);
        assert_eq!(eval(&w, &f(Some(false), None)), unknown);
        assert_eq!(eval(&w, &f(None, None)), unknown);
        let blank = when(json!({"not_read_in_session": "blank"}));
        assert_eq!(eval(&blank, &f(Some(false), Some(true))), Outcome::Fails);
    }

    #[test]
    fn changed_since_read_is_the_facts_answer_on_the_fields_path() {
        let w = when(json!({"changed_since_read": "file_path"}));
        let f = |c: Option<bool>| Fake {
            changed: c,
            ..Fake::default()
        };
        assert_eq!(eval(&w, &f(Some(true))), Outcome::Holds);
        assert_eq!(eval(&w, &f(Some(false))), Outcome::Fails);
        assert_eq!(eval(&w, &f(None)), Outcome::Unknown("changed_since_read"));
        let asked = f(Some(true));
        eval(&w, &asked);
        assert_eq!(*asked.asked.borrow(), ["changed a.txt"]);
        let blank = when(json!({"changed_since_read": "blank"}));
        assert_eq!(eval(&blank, &f(Some(true))), Outcome::Fails);
        assert_eq!(w.fields().collect::<Vec<_>>(), ["file_path"]);
        assert_eq!(w.keys().collect::<Vec<_>>(), ["changed_since_read"]);
        let none = w.eval(&json!({"file_path": "x"}), &NoFacts);
        assert_eq!(none, Outcome::Unknown("changed_since_read"));
    }

    #[test]
    fn a_false_condition_stops_and_wins_over_an_unknown() {
        // The session says no: the file system is never asked.
        let w = when(json!({"os": ["windows"], "path_missing": {"field": "file_path"}}));
        let f = Fake {
            context: vec![(Key::Os, "linux")],
            stat: Some(Stat::Missing),
            ..Fake::default()
        };
        assert_eq!(eval(&w, &f), Outcome::Fails);
        assert_eq!(*f.asked.borrow(), ["Os"]);
        // Unknown first, false later: false.
        let f = Fake {
            stat: Some(Stat::File(1)),
            ..Fake::default()
        };
        assert_eq!(eval(&w, &f), Outcome::Fails);
        // Unknown and true: unknown, naming the first unknown.
        let f = Fake {
            stat: Some(Stat::Missing),
            ..Fake::default()
        };
        assert_eq!(eval(&w, &f), Outcome::Unknown("os"));
        assert_eq!(eval(&When::default(), &f), Outcome::Holds);
        assert_eq!(
            w.keys().collect::<Vec<_>>(),
            ["os", "path_missing"],
            "keys in evaluation order"
        );
        // NoFacts knows nothing: no condition holds or fails on it.
        assert_eq!(
            w.eval(&json!({"file_path": "x"}), &NoFacts),
            Outcome::Unknown("os")
        );
        for (cond, key) in [
            (json!({"program_absent": "pnpm"}), "program_absent"),
            (
                json!({"not_read_in_session": "file_path"}),
                "not_read_in_session",
            ),
            (
                json!({"path_missing": {"field": "file_path"}}),
                "path_missing",
            ),
        ] {
            assert_eq!(
                when(cond).eval(&json!({"file_path": "x"}), &NoFacts),
                Outcome::Unknown(key)
            );
        }
    }

    #[test]
    fn the_os_of_a_cwd_is_windows_by_its_drive_letter_only() {
        assert_eq!(os_of_cwd("C:\\Users\\me"), Some("windows"));
        assert_eq!(os_of_cwd("d:/src"), Some("windows"));
        assert_eq!(os_of_cwd("/home/me"), None);
        assert_eq!(os_of_cwd("C:"), None);
        assert_eq!(os_of_cwd("1:\\x"), None);
        assert_eq!(os_of_cwd("C:x"), None);
        assert!(OSES.contains(&os_name()));
        for (rust, named) in [
            ("macos", "macos"),
            ("windows", "windows"),
            ("linux", "linux"),
            ("freebsd", "linux"),
        ] {
            assert_eq!(os_named(rust), named);
        }
    }
}
