//! Project checks against a baseline: "new findings only" (README.md#scope).
//!
//! Each check is a shell command run in the root at declare time and again at verify. Its
//! merged stdout/stderr is split into findings; a finding's identity leaves out line and
//! column numbers (a finding that merely moved is not new) but keeps quoted symbols. Only
//! findings whose identity was absent from the baseline count against the run, so a check
//! that was already failing cannot hide a new failure, nor be blamed on the run.
//!
//! Guarantees: a non-zero exit is normal (linters exit 1 when they find something) and its
//! output is parsed; a non-zero exit with no output is itself a finding (a failing check can
//! never look clean); a line that does not parse is a finding with an empty path; exit 127,
//! a timeout, or a death by signal mark the check as not run, which degrades the verdict
//! instead of blaming the run. Output is redacted before it is stored or shown.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Read as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::digest::{Digest as _, Sha256};
use regex::Regex;
use serde::{Deserialize, Serialize};

use super::declare::Check;

/// Output beyond this many bytes is dropped (and the check counted as not run).
const OUTPUT_CAP: u64 = 16 * 1024 * 1024;
/// Longest message and raw line kept per finding.
const TEXT_MAX: usize = 400;

/// One line of a check's output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Finding {
    /// 16 hex of SHA-256 over path, code and normalised message.
    pub(crate) identity: String,
    /// The file the finding names (empty when the line did not parse).
    pub(crate) path: String,
    /// A rule code such as `E501` or `error[E0308]`, if one leads the message.
    pub(crate) code: String,
    /// The line number, if the output gave one (not part of the identity).
    pub(crate) line: Option<u64>,
    /// The message (redacted, capped).
    pub(crate) message: String,
    /// The whole output line (redacted, capped).
    pub(crate) raw: String,
}

/// The result of running one check once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct CheckRun {
    /// The check's name.
    pub(crate) name: String,
    /// The command run.
    pub(crate) command: String,
    /// True when the command ran to completion (whatever its exit code).
    pub(crate) ok: bool,
    /// The exit code, when it exited.
    pub(crate) exit_code: Option<i32>,
    /// Why the check did not run, when `ok` is false.
    pub(crate) error: Option<String>,
    /// What it reported.
    pub(crate) findings: Vec<Finding>,
}

/// A check whose comparison cannot be trusted, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Degraded {
    /// The check's name.
    pub(crate) check: String,
    /// Why.
    pub(crate) why: String,
}

/// What changed between the baseline runs and the verify runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Delta {
    /// Findings absent from the baseline, per check.
    pub(crate) new: BTreeMap<String, Vec<Finding>>,
    /// Checks that could not be compared.
    pub(crate) degraded: Vec<Degraded>,
}

impl Delta {
    /// How many new findings in all.
    pub(crate) fn count(&self) -> usize {
        self.new.values().map(Vec::len).sum()
    }
}

/// Run every check, one after another, in `root`.
pub(crate) fn run_all(checks: &[Check], root: &Path) -> Vec<CheckRun> {
    checks.iter().map(|c| run_check(c, root)).collect()
}

/// `sh -c` for the check, in its own process group (so a timeout ends its children too),
/// its output and errors on one pipe.
fn shell(check: &Check, root: &Path) -> Command {
    let mut cmd = Command::new("sh");
    // `exec 2>&1` first, so everything the command prints arrives in order on one pipe.
    cmd.arg("-c")
        .arg(format!("exec 2>&1\n{}", check.command))
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt as _;
        cmd.process_group(0);
    }
    cmd
}

/// Run one check through `sh -c` in `root`, stdout and stderr merged, under its timeout.
pub(crate) fn run_check(check: &Check, root: &Path) -> CheckRun {
    let mut result = CheckRun {
        name: check.name.clone(),
        command: crate::redact::redact(&check.command).into_owned(),
        ok: false,
        exit_code: None,
        error: None,
        findings: Vec::new(),
    };
    let mut child = match shell(check, root).spawn() {
        Ok(c) => c,
        Err(e) => {
            result.error = Some(format!("cannot start sh: {e}"));
            return result;
        }
    };
    let mut pipe = child.stdout.take();
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let read = pipe
            .as_mut()
            .map(|p| p.take(OUTPUT_CAP + 1).read_to_end(&mut buf));
        (buf, read.is_some_and(|r| r.is_ok()))
    });
    let deadline = Instant::now() + Duration::from_secs(check.timeout_secs);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() >= deadline => break None,
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => {
                result.error = Some(format!("cannot wait for the command: {e}"));
                break None;
            }
        }
    };
    // Stragglers of the group would hold the pipe open; the check is over either way.
    kill_group(child.id());
    let _ = child.kill();
    let _ = child.wait();
    let (bytes, read_ok) = reader.join().unwrap_or_default();
    let Some(status) = status else {
        result
            .error
            .get_or_insert_with(|| format!("timed out after {}s", check.timeout_secs));
        return result;
    };
    result.exit_code = status.code();
    match status.code() {
        None => result.error = Some("killed by a signal".to_string()),
        Some(127) => result.error = Some(format!("command not found: {}", result.command)),
        Some(_) if !read_ok => result.error = Some("its output could not be read".to_string()),
        Some(_) if bytes.len() as u64 > OUTPUT_CAP => {
            result.error = Some(format!("its output exceeds {OUTPUT_CAP} bytes"));
        }
        Some(code) => {
            result.ok = true;
            result.findings = parse_output(&String::from_utf8_lossy(&bytes));
            if code != 0 && result.findings.is_empty() {
                result.findings.push(finding(
                    "",
                    "",
                    None,
                    &format!("exited with status {code}"),
                    "",
                ));
            }
        }
    }
    result
}

#[cfg(unix)]
fn kill_group(pid: u32) {
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{pid}")])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

#[cfg(not(unix))]
fn kill_group(_pid: u32) {}

/// Split output into findings: `path:line[:col]: message` lines are located, every other
/// non-blank line is a finding with an empty path.
pub(crate) fn parse_output(text: &str) -> Vec<Finding> {
    static LINE: OnceLock<Regex> = OnceLock::new();
    static CODE: OnceLock<Regex> = OnceLock::new();
    let line_re = LINE.get_or_init(|| {
        Regex::new(r"^(?P<path>[^\s:][^:]*?):(?P<line>\d+)(?::(?P<col>\d+))?:\s*(?P<message>.+)$")
            .expect("finding pattern is valid")
    });
    let code_re = CODE.get_or_init(|| {
        Regex::new(
            r"^(?:(?:error|warning|note)\s*)?(?P<code>[A-Z]{1,6}\d{2,5}\b|[A-Za-z]+\[[A-Za-z0-9_]+\])",
        )
        .expect("code pattern is valid")
    });
    let mut out = Vec::new();
    for raw in text.lines() {
        let raw = raw.trim_end();
        if raw.trim().is_empty() {
            continue;
        }
        let clean = crate::redact::redact(raw);
        let stripped = clean.trim();
        if let Some(c) = line_re.captures(stripped) {
            let message = c["message"].trim();
            let code = code_re
                .captures(message)
                .map(|m| m["code"].to_string())
                .unwrap_or_default();
            out.push(finding(
                &c["path"],
                &code,
                c["line"].parse().ok(),
                message,
                &clean,
            ));
        } else {
            out.push(finding("", "", None, stripped, &clean));
        }
    }
    out
}

fn finding(path: &str, code: &str, line: Option<u64>, message: &str, raw: &str) -> Finding {
    let path = finding_path(path);
    Finding {
        identity: identity(&path, code, message),
        path,
        code: code.to_string(),
        line,
        message: cap(message),
        raw: cap(raw),
    }
}

/// A finding's path, `/`-separated, with leading `./` segments dropped — and nothing else
/// (callusguard's `lstrip("./")` also ate the dot of `.github/`).
fn finding_path(path: &str) -> String {
    let mut p = path.replace('\\', "/");
    while let Some(rest) = p.strip_prefix("./") {
        p = rest.to_string();
    }
    p
}

/// First 16 hex of SHA-256(path NUL code NUL normalised message). Line and column are left
/// out; numbers inside the message are masked, quoted symbols kept.
pub(crate) fn identity(path: &str, code: &str, message: &str) -> String {
    let mut h = Sha256::new();
    h.update(path.as_bytes());
    h.update(b"\0");
    h.update(code.as_bytes());
    h.update(b"\0");
    h.update(normalise(message).as_bytes());
    let digest = h.finalize();
    let mut out = String::with_capacity(16);
    for b in &digest[..8] {
        let _ = write!(out, "{b:02x}");
    }
    out
}

/// Mask whole numbers, collapse whitespace, lowercase, cap at 400 characters.
fn normalise(message: &str) -> String {
    static NUM: OnceLock<Regex> = OnceLock::new();
    let num = NUM.get_or_init(|| Regex::new(r"\b\d+\b").expect("number pattern is valid"));
    let masked = num.replace_all(message, "#");
    masked
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
        .chars()
        .take(TEXT_MAX)
        .collect()
}

fn cap(s: &str) -> String {
    s.chars().take(TEXT_MAX).collect()
}

/// Compare verify runs against baseline runs, check by check.
pub(crate) fn compare(before: &[CheckRun], after: &[CheckRun]) -> Delta {
    let mut delta = Delta::default();
    for run in after {
        let degrade = |why: String| Degraded {
            check: run.name.clone(),
            why,
        };
        let Some(base) = before.iter().find(|b| b.name == run.name) else {
            delta
                .degraded
                .push(degrade("no baseline for this check".into()));
            continue;
        };
        if !base.ok {
            let err = base.error.clone().unwrap_or_default();
            delta
                .degraded
                .push(degrade(format!("baseline check failed: {err}")));
            continue;
        }
        if !run.ok {
            let err = run.error.clone().unwrap_or_default();
            delta
                .degraded
                .push(degrade(format!("post-run check failed: {err}")));
            continue;
        }
        let known: std::collections::HashSet<&str> =
            base.findings.iter().map(|f| f.identity.as_str()).collect();
        let fresh: Vec<Finding> = run
            .findings
            .iter()
            .filter(|f| !known.contains(f.identity.as_str()))
            .cloned()
            .collect();
        if !fresh.is_empty() {
            delta.new.insert(run.name.clone(), fresh);
        }
    }
    delta
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scope::declare::DEFAULT_CHECK_TIMEOUT_SECS;

    fn check(command: &str) -> Check {
        Check {
            name: "c".into(),
            command: command.into(),
            timeout_secs: DEFAULT_CHECK_TIMEOUT_SECS,
        }
    }

    fn run(command: &str) -> CheckRun {
        run_check(&check(command), &std::env::temp_dir())
    }

    #[test]
    fn line_drift_is_not_new_but_another_file_or_symbol_is() {
        let a = &parse_output("src/a.py:10:5: F401 'os' imported but unused")[0];
        let moved = &parse_output("./src/a.py:42:1: F401 'os' imported but unused")[0];
        let other_file = &parse_output("src/b.py:10:5: F401 'os' imported but unused")[0];
        let other_symbol = &parse_output("src/a.py:10:5: F401 'sys' imported but unused")[0];
        assert_eq!(a.code, "F401");
        assert_eq!(a.line, Some(10));
        assert_eq!(a.identity, moved.identity);
        assert_ne!(a.identity, other_file.identity);
        assert_ne!(a.identity, other_symbol.identity);
    }

    #[test]
    fn dot_directories_keep_their_dot() {
        let f = &parse_output(".github/ci.yml:3: bad key")[0];
        assert_eq!(f.path, ".github/ci.yml");
    }

    #[test]
    fn unparseable_lines_are_still_findings() {
        let f = parse_output("Traceback (most recent call last)\n\n  boom\n");
        assert_eq!(f.len(), 2);
        assert!(f.iter().all(|f| f.path.is_empty()));
    }

    #[test]
    fn rustc_style_codes_are_found() {
        let f = &parse_output("src/main.rs:3:9: error[E0308]: mismatched types")[0];
        assert_eq!(f.code, "error[E0308]");
    }

    #[test]
    fn secrets_in_output_are_redacted() {
        let f = &parse_output("config.py:1: password = hunter2sekrit")[0];
        assert!(!f.raw.contains("hunter2sekrit"), "{}", f.raw);
        assert!(!f.message.contains("hunter2sekrit"));
    }

    #[test]
    fn nonzero_exit_is_normal_for_a_linter() {
        let r = run("echo 'a.py:1: E1 found' && exit 1");
        assert!(r.ok);
        assert_eq!(r.exit_code, Some(1));
        assert_eq!(r.findings.len(), 1);
        assert_eq!(r.findings[0].path, "a.py");
    }

    #[test]
    fn stderr_is_captured_and_silent_failure_is_a_finding() {
        let r = run("echo 'b.py:2: oops' >&2");
        assert_eq!(r.findings[0].path, "b.py");
        let silent = run("exit 3");
        assert!(silent.ok);
        assert_eq!(silent.findings.len(), 1);
        assert!(silent.findings[0].message.contains("exited with status 3"));
        assert!(run("true").findings.is_empty());
    }

    #[test]
    fn missing_binary_is_not_a_clean_run() {
        let r = run("definitely-not-a-command-callus-test");
        assert!(!r.ok);
        assert!(r.error.unwrap().contains("command not found"));
    }

    #[test]
    fn timeouts_kill_the_check() {
        let mut c = check("sleep 30");
        c.timeout_secs = 1;
        let started = Instant::now();
        let r = run_check(&c, &std::env::temp_dir());
        assert!(started.elapsed() < Duration::from_secs(10));
        assert!(!r.ok);
        assert_eq!(r.error.as_deref(), Some("timed out after 1s"));
    }

    fn ran(findings: &str) -> CheckRun {
        CheckRun {
            name: "lint".into(),
            command: "lint".into(),
            ok: true,
            exit_code: Some(1),
            error: None,
            findings: parse_output(findings),
        }
    }

    #[test]
    fn compare_subtracts_the_baseline() {
        let before = ran("a.py:1: E101 one\na.py:2: E102 two");
        let after = ran("a.py:7: E101 one\na.py:9: E103 three");
        let d = compare(&[before], &[after]);
        assert_eq!(d.count(), 1);
        assert_eq!(d.new["lint"][0].code, "E103");
        assert!(d.degraded.is_empty());
    }

    #[test]
    fn failed_baseline_degrades_rather_than_blaming_the_run() {
        let mut before = ran("");
        before.ok = false;
        before.error = Some("command not found: lint".into());
        let d = compare(&[before], &[ran("a.py:1: E1 new")]);
        assert_eq!(d.count(), 0);
        assert!(d.degraded[0].why.starts_with("baseline check failed"));
        let d = compare(&[], &[ran("")]);
        assert_eq!(d.degraded[0].why, "no baseline for this check");
    }
}
