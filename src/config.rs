//! Where callus keeps its state and how it is configured.
//!
//! Everything lives under `$CALLUS_HOME` (default `~/.callus`): the `SQLite` store, the user's
//! ruleset, the derived candidates, the error log and the optional `config` settings file.
//! Environment variables override the settings file. Resolving paths does no I/O beyond
//! reading the environment, so the hook path can call it freely.

use std::path::{Path, PathBuf};

/// What the guard does when it cannot decide (bad input, broken ruleset, store failure, panic).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailPolicy {
    /// The call proceeds; a one-line `callus:` note goes to stderr and an error record to the
    /// audit chain when the store is writable. The default: a guard must never wedge a session.
    Open,
    /// The call is blocked with the reason.
    Closed,
}

/// Resolved locations of callus's state.
#[derive(Debug, Clone)]
pub struct Home {
    /// The state directory (`$CALLUS_HOME`, default `~/.callus`).
    pub dir: PathBuf,
}

impl Home {
    /// Resolve from `$CALLUS_HOME`, else `$HOME/.callus`, else `./.callus`.
    #[must_use]
    pub fn from_env() -> Self {
        if let Some(dir) = std::env::var_os("CALLUS_HOME").filter(|v| !v.is_empty()) {
            return Home {
                dir: PathBuf::from(dir),
            };
        }
        let base = std::env::var_os("HOME").map_or_else(|| PathBuf::from("."), PathBuf::from);
        Home {
            dir: base.join(".callus"),
        }
    }

    /// A home rooted at `dir` (tests and the demo).
    #[must_use]
    pub fn at(dir: impl Into<PathBuf>) -> Self {
        Home { dir: dir.into() }
    }

    /// The `SQLite` store (`$CALLUS_DB` overrides).
    #[must_use]
    pub fn db_path(&self) -> PathBuf {
        match std::env::var_os("CALLUS_DB").filter(|v| !v.is_empty()) {
            Some(p) => PathBuf::from(p),
            None => self.dir.join("callus.db"),
        }
    }

    /// The user's ruleset layer.
    #[must_use]
    pub fn rules_path(&self) -> PathBuf {
        self.dir.join("rules.json")
    }

    /// The derived candidates, loaded as a forced-monitor layer.
    #[must_use]
    pub fn candidates_path(&self) -> PathBuf {
        self.dir.join("candidates.json")
    }

    /// Internal errors of the hooks (never shown to the agent).
    #[must_use]
    pub fn errors_log(&self) -> PathBuf {
        self.dir.join("errors.log")
    }

    /// Marker files of sessions halted by a RECUSE signal.
    #[must_use]
    pub fn halts_dir(&self) -> PathBuf {
        self.dir.join("halted")
    }

    /// The optional settings file (`key = "value"` lines).
    #[must_use]
    pub fn settings_path(&self) -> PathBuf {
        self.dir.join("config")
    }

    /// The settings file, read and checked strictly (see `Settings`).
    #[must_use]
    pub fn settings(&self) -> Settings {
        let path = self.settings_path();
        match crate::untrusted::read(&path, Some(&self.dir), 64 * 1024) {
            Ok(None) => Settings::default(),
            Ok(Some(text)) => Settings::parse(&path, &text),
            Err(e) => Settings {
                problems: vec![Problem {
                    at: path.display().to_string(),
                    msg: format!("cannot be read: {e}"),
                    about_fail: true,
                }],
                ..Settings::default()
            },
        }
    }

    /// The guard's failure policy and what is wrong with the configuration it came from:
    /// `CALLUS_FAIL`, else the `fail` setting, else open. When a source is invalid the
    /// policy is closed if any source asked for closed or the problem leaves it unknown (a
    /// typo in a value, an unreadable file), so a broken configuration never fails open
    /// where closed was meant.
    #[must_use]
    pub fn fail_config(&self) -> FailConfig {
        let settings = self.settings();
        let mut problems = settings.problems;
        let env = std::env::var("CALLUS_FAIL")
            .ok()
            .filter(|v| !v.trim().is_empty());
        let from_env = env.as_deref().map(|v| {
            let policy = FailPolicy::parse(v);
            if policy.is_none() {
                problems.push(Problem {
                    at: "CALLUS_FAIL".into(),
                    msg: format!("unknown value '{v}' (open or closed)"),
                    about_fail: true,
                });
            }
            policy
        });
        let asked_closed = from_env == Some(Some(FailPolicy::Closed))
            || settings.fail == Some(FailPolicy::Closed)
            || problems.iter().any(|p| p.about_fail);
        let policy = if asked_closed {
            FailPolicy::Closed
        } else {
            from_env
                .flatten()
                .or(settings.fail)
                .unwrap_or(FailPolicy::Open)
        };
        FailConfig { policy, problems }
    }

    /// The guard's failure policy (see [`Home::fail_config`]).
    #[must_use]
    pub fn fail_policy(&self) -> FailPolicy {
        self.fail_config().policy
    }
}

/// The failure policy and the configuration problems found on the way.
#[derive(Debug, Clone)]
pub struct FailConfig {
    /// The policy in force.
    pub policy: FailPolicy,
    /// Every problem of `CALLUS_FAIL` and the settings file, in the order found.
    pub problems: Vec<Problem>,
}

impl FailPolicy {
    /// `open` or `closed`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            FailPolicy::Open => "open",
            FailPolicy::Closed => "closed",
        }
    }

    /// `open` or `closed` (any case, surrounding blanks ignored).
    #[must_use]
    pub fn parse(value: &str) -> Option<Self> {
        match value.trim() {
            v if v.eq_ignore_ascii_case("open") => Some(FailPolicy::Open),
            v if v.eq_ignore_ascii_case("closed") => Some(FailPolicy::Closed),
            _ => None,
        }
    }
}

/// One thing wrong with the configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// Where: `FILE:LINE`, the file, or the variable.
    pub at: String,
    /// What is wrong.
    pub msg: String,
    /// Whether it leaves the failure policy unknown or asks for closed (then the guard
    /// fails closed).
    pub about_fail: bool,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.at, self.msg)
    }
}

/// The keys the settings file knows.
pub(crate) const SETTING_KEYS: &[&str] = &["fail", "answer_codes"];

/// The settings file, `$CALLUS_HOME/config`: one `key = value` per line, the value bare or
/// in double quotes, blank lines and `#` comments (whole lines, or after the value) ignored.
/// Strict: an unknown key (keys are lowercase), a bad value, a repeated key or a line of
/// another shape is a [`Problem`] naming the file and line.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// `fail`: the guard's failure policy.
    pub fail: Option<FailPolicy>,
    /// `answer_codes`: programs whose exit status is an answer, not a failure (see
    /// `record::outcome`), added to the built-in table.
    pub answer_codes: Option<String>,
    /// What is wrong with the file.
    pub problems: Vec<Problem>,
}

impl Settings {
    /// Parse settings `text` read from `path`.
    #[must_use]
    pub fn parse(path: &Path, text: &str) -> Self {
        let mut out = Settings::default();
        let mut seen: Vec<&str> = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let mut problem = |msg: String, about_fail: bool| {
                out.problems.push(Problem {
                    at: format!("{}:{}", path.display(), i + 1),
                    msg,
                    about_fail,
                });
            };
            let mentions_closed = line.to_ascii_lowercase().contains("closed");
            let Some((key, rest)) = line.split_once('=') else {
                problem(format!("not a `key = value` line: {line}"), true);
                continue;
            };
            let key = key.trim();
            let value = match setting_value(rest) {
                Ok(v) => v,
                Err(msg) => {
                    problem(msg, mentions_closed || key.eq_ignore_ascii_case("fail"));
                    continue;
                }
            };
            if !SETTING_KEYS.contains(&key) {
                problem(
                    format!("unknown key '{key}' (known: {})", SETTING_KEYS.join(", ")),
                    mentions_closed || key.eq_ignore_ascii_case("fail"),
                );
                continue;
            }
            if seen.contains(&key) {
                problem(format!("'{key}' is set twice"), true);
                continue;
            }
            seen.push(key);
            if key == "answer_codes" {
                match answer_entries(value) {
                    Ok(_) => out.answer_codes = Some(value.to_string()),
                    Err(msg) => problem(format!("answer_codes: {msg}"), false),
                }
                continue;
            }
            match FailPolicy::parse(value) {
                Some(policy) => out.fail = Some(policy),
                None => problem(
                    format!("fail: unknown value '{value}' (open or closed)"),
                    true,
                ),
            }
        }
        out
    }
}

/// One `answer_codes` entry: a program, an optional next word, and the exit codes that are
/// its answers (`make -q:1`, `mytool check:2 3`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AnswerEntry {
    /// Lowercase program basename.
    pub program: String,
    /// The word that must follow it, if any.
    pub sub: Option<String>,
    /// Answer exit codes, each 1–255.
    pub codes: Vec<i64>,
}

/// The `answer_codes` value, strictly: comma-separated `program [sub]:code…` entries, each
/// with one or two words before the `:` and one or more exit codes 1–255 after it.
pub(crate) fn answer_entries(value: &str) -> std::result::Result<Vec<AnswerEntry>, String> {
    let want = "want `program [sub]:code …`, e.g. `make -q:1, mytool check:2 3`";
    let mut out = Vec::new();
    for entry in value.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let Some((names, codes)) = entry.split_once(':') else {
            return Err(format!(
                "entry '{entry}' has no ':' before its codes ({want})"
            ));
        };
        let words: Vec<&str> = names.split_whitespace().collect();
        let (program, sub) = match words.as_slice() {
            [p] => (p.to_ascii_lowercase(), None),
            [p, s] => (p.to_ascii_lowercase(), Some((*s).to_string())),
            _ => {
                return Err(format!(
                    "entry '{entry}' names {} words before ':' ({want})",
                    words.len()
                ));
            }
        };
        let codes: Vec<i64> = codes
            .split_whitespace()
            .map(|c| {
                c.parse::<i64>()
                    .ok()
                    .filter(|n| (1..=255).contains(n))
                    .ok_or(c)
            })
            .collect::<std::result::Result<_, _>>()
            .map_err(|c| format!("entry '{entry}': '{c}' is not an exit code 1-255 ({want})"))?;
        if codes.is_empty() {
            return Err(format!("entry '{entry}' lists no exit code ({want})"));
        }
        out.push(AnswerEntry {
            program,
            sub,
            codes,
        });
    }
    Ok(out)
}

/// The value after `=`: a double-quoted string (no escapes) or a bare word, then nothing
/// but an optional `# comment`.
fn setting_value(rest: &str) -> std::result::Result<&str, String> {
    let rest = rest.trim();
    let (value, tail) = if let Some(quoted) = rest.strip_prefix('"') {
        let end = quoted
            .find('"')
            .ok_or_else(|| format!("unterminated quoted value: {rest}"))?;
        (&quoted[..end], &quoted[end + 1..])
    } else {
        let end = rest
            .find(|c: char| c.is_whitespace() || c == '#')
            .unwrap_or(rest.len());
        (&rest[..end], &rest[end..])
    };
    let tail = tail.trim();
    if !(tail.is_empty() || tail.starts_with('#')) {
        return Err(format!("unexpected text after the value: {tail}"));
    }
    Ok(value)
}

/// The repository root of `cwd`: the nearest ancestor holding `.git` (dir or file), if any.
#[must_use]
pub(crate) fn repo_root(cwd: &Path) -> Option<PathBuf> {
    cwd.ancestors()
        .find(|dir| dir.join(".git").exists())
        .map(Path::to_path_buf)
}

/// Create `dir` (and parents) private to the user (0700 on Unix).
pub(crate) fn ensure_private_dir(dir: &Path) -> crate::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir).map_err(|e| crate::Error::io(dir, e))
}

/// Replace `path` with `bytes` atomically: a temporary file beside it, private to the user
/// (0600), renamed over it. The directory must exist.
pub(crate) fn replace_file(path: &Path, bytes: &[u8]) -> crate::Result<()> {
    use std::io::Write as _;
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or_else(|| Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| crate::Error::io(dir, e))?;
    tmp.write_all(bytes)
        .map_err(|e| crate::Error::io(tmp.path(), e))?;
    // After a crash the file is the old one or the new one, whole.
    tmp.as_file()
        .sync_all()
        .map_err(|e| crate::Error::io(tmp.path(), e))?;
    tmp.persist(path)
        .map_err(|e| crate::Error::io(path, e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answer_codes_entries_are_strict() {
        let ok = answer_entries("make -q:1, MyTool check:2 3,").unwrap();
        assert_eq!(ok.len(), 2);
        assert_eq!(ok[1].program, "mytool");
        assert_eq!(ok[1].sub.as_deref(), Some("check"));
        assert_eq!(ok[1].codes, vec![2, 3]);
        for (bad, says) in [
            ("grep", "has no ':'"),
            ("make:x", "'x' is not an exit code"),
            ("make:0", "'0' is not an exit code"),
            ("make:256", "'256' is not an exit code"),
            ("make:", "lists no exit code"),
            ("a b c:1", "names 3 words"),
        ] {
            let e = answer_entries(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
        let s = Settings::parse(Path::new("/h/config"), "\nanswer_codes = \"make:x\"\n");
        assert_eq!(s.answer_codes, None);
        assert!(
            s.problems[0]
                .to_string()
                .starts_with("/h/config:2: answer_codes: entry 'make:x'"),
            "{}",
            s.problems[0]
        );
    }

    #[test]
    fn settings_parse_strictly_with_file_and_line() {
        let p = Path::new("/h/config");
        let parse = |text: &str| Settings::parse(p, text);
        for (text, want) in [
            ("# comment\nfail = \"closed\"\n", FailPolicy::Closed),
            ("fail = closed", FailPolicy::Closed),
            ("fail = \"closed\"  # strict", FailPolicy::Closed),
            ("fail=open # comment", FailPolicy::Open),
            ("  fail = \"OPEN\"", FailPolicy::Open),
        ] {
            let s = parse(text);
            assert_eq!((s.fail, s.problems), (Some(want), Vec::new()), "{text}");
        }
        let problem = |text: &str| {
            let s = parse(text);
            assert_eq!(s.problems.len(), 1, "{text}: {:?}", s.problems);
            let p = &s.problems[0];
            (p.to_string(), p.about_fail)
        };
        assert_eq!(
            problem("\nFAIL = closed"),
            (
                "/h/config:2: unknown key 'FAIL' (known: fail, answer_codes)".into(),
                true
            )
        );
        assert_eq!(
            problem("fail = \"clsoed\""),
            (
                "/h/config:1: fail: unknown value 'clsoed' (open or closed)".into(),
                true
            )
        );
        assert_eq!(
            problem("colour = red"),
            (
                "/h/config:1: unknown key 'colour' (known: fail, answer_codes)".into(),
                false
            )
        );
        assert!(
            problem("fail = closed strict")
                .0
                .contains("after the value")
        );
        assert!(problem("fail = \"closed").0.contains("unterminated"));
        assert!(
            problem("fail closed")
                .0
                .contains("not a `key = value` line")
        );
        assert!(
            problem("fail = open\nfail = closed")
                .0
                .contains("set twice")
        );
    }

    #[test]
    fn repo_root_finds_nearest_git() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("a/.git")).unwrap();
        std::fs::create_dir_all(tmp.path().join("a/b/c")).unwrap();
        assert_eq!(
            repo_root(&tmp.path().join("a/b/c")),
            Some(tmp.path().join("a"))
        );
    }
}
