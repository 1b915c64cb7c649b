//! The outcome model: what a call that did not succeed says about the command it ran.
//!
//! The host reports "error" for many things that are not a failure of the blamed program.
//! Every writer (the hook, every importer) and derive refine a `failure` through
//! [`refine`], in this order:
//! - `interrupted` — the user or host stopped it, in each host's words
//!   ([`classify::is_interruption`]);
//! - `denied` — a refusal by the host, its sandbox, a classifier or the user, in any of the
//!   phrasings the hosts use ([`classify::is_refusal`], one list): the command
//!   never ran;
//! - `harness` — the host's shell or tool failed before or around the command: the Windows
//!   Git-Bash shell failing to start (`cygpath`/`cygheap`, `STATUS_DLL_INIT_FAILED`
//!   3221225794), Copilot CLI without `pwsh`, a shell that could not be spawned
//!   (`spawn bash ENOENT`), Codex's sandbox failing to start, a parallel sibling cancelled. Kept and reported as an environment finding,
//!   never a failure of the command's program;
//! - `answer` — an exit status that is the program's answer (`grep` found nothing, `test`
//!   said no, `defaults read` has no such key): the program of the segment the exit status
//!   belongs to is in the answer table ([`ANSWERS`], extended by the `answer_codes` setting)
//!   with that code, and the output carries no error line (unless the entry allows one), or,
//!   for a search, only a no-match summary an output hook put there (`0 matches for 'x'`);
//!   or a test runner ([`TEST_RUNNERS`]) that ran and gave its verdict (`2 failed`), unless
//!   the output says the runner could not run (`command not found`, `Missing script`);
//! - `failure` otherwise.
//!
//! A timeout of the host's shell tool stays a `failure`: the program ran and did not finish,
//! which is a recurring failure a reviewer writes a rule for (run it in the background).
//! The fifth class, `masked` (exit 0 whose output carries a known failure's signature), is a
//! success with a stored signature; derive decides it against the failures it clusters.

use super::classify::{self, Status};
use crate::shell::{self, Segment};

/// How much of the start of an error a refusal phrase must fall in.
const WINDOW: usize = 400;

fn lower_head(text: &str) -> String {
    let mut end = text.len().min(WINDOW);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_lowercase()
}

/// Exit statuses that say the process never started (Windows `NTSTATUS` values, as the
/// unsigned and signed spellings hosts print): `STATUS_DLL_INIT_FAILED`.
const NEVER_STARTED: &[i64] = &[3_221_225_794, -1_073_741_502];

/// Text of a host-side failure around the command, lowercase, by host (where each phrasing
/// comes from is beside it).
const HARNESS_TEXTS: &[&str] = &[
    // Claude Code on Windows: Git-Bash (MSYS/Cygwin) failing to start or fork
    // (shared/realdata m-claude: 37 calls over 8 programs).
    "command failed: cygpath",
    "cygheap read copy failed",
    "child_copy: cygheap",
    "fork: retry: resource temporarily unavailable",
    "couldn't create signal pipe, win32 error",
    // Claude Code cancelling a parallel sibling after another call errored.
    "cancelled: parallel tool call",
    "sibling tool call errored",
    // Claude Code's shell snapshot could not be made or sourced
    // (anthropics/claude-code#5687: "Error: Failed to create shell snapshot").
    "shell-snapshots/snapshot-",
    "failed to create shell snapshot",
    // Copilot CLI on Windows without PowerShell 7 (github/copilot-cli#93, #411, #847):
    // "<exited with error: PowerShell 6+ (pwsh) is not available. Please install it …>".
    "(pwsh) is not available",
    // Copilot CLI's shell wrapper failing on every command, whatever it is
    // (github/copilot-cli#276: "<exited with error: File not found: >").
    "<exited with error: file not found: >",
    // Codex's sandbox failing to start (codex-rs `SandboxErr`/`CodexErr` texts: "sandbox
    // error: seccomp setup error: …", "Landlock was not able to fully enforce all sandbox
    // rules", "error running landlock: Sandbox(LandlockRestrict)", "spawn failed: child
    // stdout/stderr not captured", "codex-linux-sandbox was required but not provided").
    "seccomp setup error",
    "seccomp backend error",
    "landlock was not able to fully enforce",
    "sandbox(landlockrestrict)",
    "spawn failed: child stdout/stderr not captured",
    "linux-sandbox was required but not provided",
];

/// Shells a host starts its shell tool with: a host that cannot spawn one of these
/// (`spawn pwsh.exe ENOENT`, Node's wording in Gemini CLI, Copilot CLI and Cursor; github/
/// copilot-cli#2355) failed around the command, which never ran.
const SHELLS: &[&str] = &[
    "bash",
    "sh",
    "zsh",
    "dash",
    "fish",
    "pwsh",
    "powershell",
    "cmd",
    "git-bash",
];

/// `spawn <shell> ENOENT|EACCES|EINVAL|EPERM` anywhere in the lowercase head (the shell's
/// path may hold spaces: `spawn c:\\program files\\powershell\\7\\pwsh.exe enoent`).
fn shell_spawn_failed(lower: &str) -> bool {
    lower.match_indices("spawn ").any(|(at, m)| {
        let line = lower[at + m.len()..].lines().next().unwrap_or_default();
        let Some(end) = [" enoent", " eacces", " einval", " eperm"]
            .iter()
            .filter_map(|c| {
                line.find(c).filter(|&i| {
                    line[i + c.len()..]
                        .chars()
                        .next()
                        .is_none_or(|ch| !ch.is_ascii_alphanumeric())
                })
            })
            .min()
        else {
            return false;
        };
        let program = line[..end].trim().trim_matches(['\'', '"']);
        let name = program.rsplit(['/', '\\']).next().unwrap_or(program);
        let name = name.strip_suffix(".exe").unwrap_or(name);
        SHELLS.contains(&name)
    })
}

/// Whether the failure is the host's shell or tool failing, not the command's program.
#[must_use]
pub(crate) fn is_harness(text: &str, exit_code: Option<i64>) -> bool {
    if exit_code.is_some_and(|c| NEVER_STARTED.contains(&c)) {
        return true;
    }
    let lower = lower_head(text.trim_start());
    HARNESS_TEXTS.iter().any(|h| lower.contains(h)) || shell_spawn_failed(&lower)
}

/// The kind of a harness failure, for reporting it once as an environment finding.
#[must_use]
pub(crate) fn harness_kind(text: &str, exit_code: Option<i64>) -> &'static str {
    let lower = lower_head(text.trim_start());
    if lower.contains("cancelled: parallel tool call") || lower.contains("sibling tool call") {
        "a parallel tool call was cancelled after a sibling failed"
    } else if exit_code.is_some_and(|c| NEVER_STARTED.contains(&c))
        || lower.contains("cygpath")
        || lower.contains("cygheap")
        || lower.contains("child_copy")
        || lower.contains("win32 error")
    {
        "the Windows shell (Git-Bash/MSYS) failed to start"
    } else if lower.contains("shell-snapshots") || lower.contains("shell snapshot") {
        "the host's shell snapshot could not be loaded"
    } else if lower.contains("(pwsh) is not available")
        || lower.contains("file not found: >")
        || shell_spawn_failed(&lower)
    {
        "the host could not start its shell (not installed or not on its PATH)"
    } else if lower.contains("seccomp") || lower.contains("landlock") || lower.contains("sandbox") {
        "the host's sandbox could not start the command"
    } else {
        "the host's shell or tool failed around the command"
    }
}

/// A timeout enforced by the host's shell tool, in each host's words: Claude Code
/// ("Command timed out after 2m 0.0s"), Codex ("command timed out after 10019
/// milliseconds", exit 124: shared/realdata codex rollouts), Gemini CLI ("Command was
/// automatically cancelled because it exceeded the timeout of 5.0 minutes without output",
/// packages/core/src/tools/shell.ts), Cursor (`failure_type: "timeout"`). It stays a
/// `failure`: the program ran and did not finish, a recurring failure a reviewer writes a
/// rule for (shared/realdata README: "timeouts of the host's shell tool"). Its signature is
/// generic (the duration is normalised away), so derive clusters it only with a shared
/// element.
#[must_use]
pub(crate) fn is_host_timeout(text: &str) -> bool {
    let lower = lower_head(text.trim_start());
    lower.contains("command timed out after")
        || lower.contains("automatically cancelled because it exceeded the timeout")
}

/// An answer-code entry: a program (with an optional subcommand word), its answer exit
/// codes, and whether the answer may come with a message (`diff` prints the difference,
/// `defaults read` says the key does not exist).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Answer {
    /// Lowercase program basename (`grep`, `select-string`).
    pub program: String,
    /// A required next word (`read` for `defaults read`, `-v` for `command -v`).
    pub sub: Option<String>,
    /// Exit codes that are answers.
    pub codes: Vec<i64>,
    /// Whether the output may carry a message.
    pub with_message: bool,
}

/// The built-in answer table: program, subcommand, codes, message allowed.
pub(crate) const ANSWERS: &[(&str, Option<&str>, &[i64], bool)] = &[
    ("grep", None, &[1], false),
    ("egrep", None, &[1], false),
    ("fgrep", None, &[1], false),
    ("zgrep", None, &[1], false),
    ("rg", None, &[1], false),
    ("ag", None, &[1], false),
    ("ack", None, &[1], false),
    ("git", Some("grep"), &[1], false),
    ("diff", None, &[1], true),
    ("cmp", None, &[1], true),
    ("git", Some("diff"), &[1], true),
    ("test", None, &[1], false),
    ("[", None, &[1], false),
    ("[[", None, &[1], false),
    ("pgrep", None, &[1], false),
    ("pidof", None, &[1], false),
    ("which", None, &[1], false),
    ("where", None, &[1], true),
    ("command", Some("-v"), &[1], false),
    ("type", None, &[1], true),
    ("lsof", None, &[1], false),
    ("defaults", Some("read"), &[1], true),
    ("findstr", None, &[1], false),
    ("select-string", None, &[1], false),
    ("test-path", None, &[1], false),
    ("systemctl", Some("is-active"), &[3, 4], true),
    ("systemctl", Some("is-enabled"), &[1], true),
];

/// The answer table: the built-ins plus the `answer_codes` setting, a comma-separated list
/// of `program [sub]:code code…` entries (`make -q:1, mytool check:2 3`).
#[must_use]
pub(crate) fn answer_table(setting: Option<&str>) -> Vec<Answer> {
    let mut table: Vec<Answer> = ANSWERS
        .iter()
        .map(|&(p, s, c, m)| Answer {
            program: p.to_string(),
            sub: s.map(str::to_string),
            codes: c.to_vec(),
            with_message: m,
        })
        .collect();
    // The setting is validated where it is read (`config::Settings`): a malformed value
    // never gets here from the file, and adds nothing when passed directly.
    for e in crate::config::answer_entries(setting.unwrap_or_default()).unwrap_or_default() {
        table.push(Answer {
            program: e.program,
            sub: e.sub,
            codes: e.codes,
            with_message: true,
        });
    }
    table
}

/// A malformed `answer_codes` setting, as the error of a command that classifies outcomes
/// (`record import`, `derive`): exit 3, naming the file, line and key. The hooks never
/// stop on it (they classify with the built-ins and the valid rest).
pub(crate) fn check_settings(home: &crate::config::Home) -> crate::Result<()> {
    match home
        .settings()
        .problems
        .iter()
        .find(|p| p.to_string().contains(": answer_codes: "))
    {
        Some(p) => Err(crate::Error::Invalid(p.to_string())),
        None => Ok(()),
    }
}

/// The answer table of the settings in `home` (the built-ins when there are none).
#[must_use]
pub(crate) fn configured_table(home: &crate::config::Home) -> Vec<Answer> {
    answer_table(home.settings().answer_codes.as_deref())
}

/// The answer table of this process: the built-ins plus `$CALLUS_HOME/config`'s
/// `answer_codes`, read once, and only when a failure needs it.
pub(crate) fn table() -> &'static [Answer] {
    static TABLE: std::sync::OnceLock<Vec<Answer>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| configured_table(&crate::config::Home::from_env()))
}

/// Classify a call: `status` as the host reported it, refined when it is a failure, with
/// this process's answer table.
#[must_use]
pub(crate) fn refine(
    tool: &str,
    command: Option<&str>,
    status: Status,
    exit_code: Option<i64>,
    error: &str,
) -> Status {
    if status != Status::Failure {
        return status;
    }
    refine_with(tool, command, status, exit_code, error, table())
}

/// [`refine`] with an explicit answer table.
#[must_use]
pub(crate) fn refine_with(
    tool: &str,
    command: Option<&str>,
    status: Status,
    exit_code: Option<i64>,
    error: &str,
    answers: &[Answer],
) -> Status {
    if status != Status::Failure {
        return status;
    }
    if classify::is_interruption(error) {
        return Status::Interrupted;
    }
    if classify::is_refusal(error) {
        return Status::Denied;
    }
    if is_harness(error, exit_code) {
        return Status::Harness;
    }
    let exit_code = exit_code.or_else(|| wrapped_exit(error));
    if crate::host::call::is_shell(tool)
        && let (Some(cmd), Some(code)) = (command, exit_code)
        && is_answer(cmd, code, error, answers)
    {
        return Status::Answer;
    }
    Status::Failure
}

/// The exit status a Codex sandbox wrapper spells inside its text when the host stored none
/// (`… sandbox denied exec error, exit code: 1, stdout: …`): pytest's red tests are then
/// its verdict, as they are with a stored status.
fn wrapped_exit(error: &str) -> Option<i64> {
    let head = lower_head(error);
    let rest = head.split_once("sandbox denied exec error, exit code: ")?.1;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// Whether exit `code` of `command` is its answer (see the module doc).
#[must_use]
pub(crate) fn is_answer(command: &str, code: i64, error: &str, answers: &[Answer]) -> bool {
    let split = shell::split(command);
    let Some(seg) = exit_segment(&split.segments) else {
        return false;
    };
    answer_of(seg, code, error, answers, 0)
}

fn answer_of(seg: &Segment, code: i64, error: &str, answers: &[Answer], depth: u8) -> bool {
    let words = program_words(seg);
    let Some(&program) = words.first() else {
        return false;
    };
    let program = basename(program);
    // A remote or nested shell's exit status is its command's: look inside.
    if depth < 2
        && is_remote_runner(&program)
        && let Some(inner) = seg
            .argv
            .last()
            .filter(|w| w.contains(' ') || w.contains('|'))
    {
        let split = shell::split(inner);
        return exit_segment(&split.segments)
            .is_some_and(|s| answer_of(s, code, error, answers, depth + 1));
    }
    // PowerShell told to stay quiet on errors (`-ErrorAction SilentlyContinue`) and exiting
    // 1 without a word: the cmdlet found nothing, which the command asked not to hear about.
    if depth > 0
        && code == 1
        && output_is_silent(error)
        && seg.argv.iter().any(|w| {
            let w = w.to_ascii_lowercase();
            w == "silentlycontinue" || w == "ignore"
        })
        && seg.argv.iter().any(|w| {
            let w = w.to_ascii_lowercase();
            w == "-erroraction" || w == "-ea"
        })
    {
        return true;
    }
    // A command that sent its own error stream to the null device (`ls x* 2>/dev/null`)
    // and exited 1 or 2 without a word asked whether something is there and chose not to
    // hear the "no": its answer, not a failure anyone can read a cause from.
    if matches!(code, 1 | 2) && output_is_silent(error) && discards_errors(seg) {
        return true;
    }
    let sub = words.get(1).map(|w| w.to_ascii_lowercase());
    let entry = answers.iter().find(|a| {
        a.program == program
            && a.codes.contains(&code)
            && a.sub
                .as_ref()
                .is_none_or(|s| sub.as_deref() == Some(s.as_str()))
    });
    match entry {
        None => test_verdict(&words, code, error),
        Some(a) if a.with_message => !has_error_line(error, &program),
        Some(a) => output_is_silent(error) || (is_search(a) && is_no_match_summary(error)),
    }
}

/// The segment sends its error stream to the null device: `2>/dev/null`, `&>/dev/null`,
/// `2>>/dev/null`, PowerShell's `2>$null`, cmd's `2>nul`.
fn discards_errors(seg: &Segment) -> bool {
    seg.redirects.iter().any(|r| {
        matches!(r.op.as_str(), "2>" | "2>>" | "&>" | "&>>")
            && matches!(
                r.target.to_ascii_lowercase().as_str(),
                "/dev/null" | "$null" | "nul"
            )
    })
}

/// Search programs: their exit 1 means "no match", which an output hook may have rewritten
/// into a summary (`0 matches for 'foo'`).
fn is_search(a: &Answer) -> bool {
    matches!(
        a.program.as_str(),
        "grep" | "egrep" | "fgrep" | "zgrep" | "rg" | "ag" | "ack" | "findstr" | "select-string"
    ) || (a.program == "git" && a.sub.as_deref() == Some("grep"))
}

/// The output says only that nothing matched: every line of it (after `Exit code N`) is a
/// no-match summary — `No matches found`, `0 matches for 'foo'`, `no results`, `nothing
/// found` — the kind of text a user's output hook puts in place of a search's empty output.
/// A line naming an error (`grep: x: No such file or directory`) is not one.
fn is_no_match_summary(error: &str) -> bool {
    let mut lines = super::error_line::body(error)
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .peekable();
    lines.peek().is_some()
        && lines.all(|l| {
            let l = l.to_ascii_lowercase();
            let l = l.trim_end_matches(['.', '!']);
            let said = |p: &str| l == p || l.starts_with(&format!("{p} "));
            let zero = l.strip_prefix("0 ").or_else(|| l.strip_prefix("zero "));
            said("no matches found")
                || said("no match found")
                || said("no matches")
                || said("no match")
                || said("no results found")
                || said("no results")
                || said("nothing found")
                || said("not found: 0 matches")
                || zero.is_some_and(|rest| {
                    ["match", "result", "hit", "file", "line", "occurrence"]
                        .iter()
                        .any(|w| rest.starts_with(w))
                })
        })
}

/// Test runners: a program, with the word that makes it run tests when it needs one. A
/// runner that exits non-zero because tests failed has given its verdict on the code — the
/// work the agent is doing — not failed; one that could not run is a failure.
const TEST_RUNNERS: &[(&str, Option<&str>)] = &[
    ("cargo", Some("test")),
    ("cargo", Some("nextest")),
    ("pytest", None),
    ("py.test", None),
    ("tox", None),
    ("nox", None),
    ("npm", Some("test")),
    ("npm", Some("t")),
    ("yarn", Some("test")),
    ("pnpm", Some("test")),
    ("bun", Some("test")),
    ("deno", Some("test")),
    ("jest", None),
    ("vitest", None),
    ("mocha", None),
    ("ava", None),
    ("karma", None),
    ("playwright", Some("test")),
    ("go", Some("test")),
    ("rspec", None),
    ("rake", Some("test")),
    ("phpunit", None),
    ("make", Some("test")),
    ("make", Some("check")),
    ("ctest", None),
    ("dotnet", Some("test")),
    ("mvn", Some("test")),
    ("mvn", Some("verify")),
    ("gradle", Some("test")),
    ("gradlew", Some("test")),
    ("mix", Some("test")),
    ("swift", Some("test")),
    ("flutter", Some("test")),
    ("dart", Some("test")),
];

/// Words that launch a program given after them: `npx jest`, `uv run pytest`,
/// `python -m pytest`, `bundle exec rspec`, `npm run test`.
fn launched(words: &[&str]) -> Option<usize> {
    let first = basename(words.first()?);
    let second = words.get(1).map(|w| w.to_ascii_lowercase());
    let skip = match (first.as_str(), second.as_deref()) {
        ("npx" | "bunx" | "pnpx", _) => 1,
        ("python" | "python3" | "py", Some("-m"))
        | ("uv" | "poetry" | "pipenv" | "pdm" | "hatch" | "rye", Some("run"))
        | ("bundle" | "pnpm", Some("exec")) => 2,
        ("npm" | "pnpm" | "yarn" | "bun", Some("run" | "run-script")) => {
            // `npm run test` is `npm test`: keep the program, drop `run`.
            return (words.len() > 2 && words[2] == "test").then_some(usize::MAX);
        }
        _ => return None,
    };
    (words.len() > skip).then_some(skip)
}

/// Whether `words` run a test runner (after any launchers).
fn is_test_runner(words: &[&str]) -> bool {
    let mut words: Vec<&str> = words.to_vec();
    for _ in 0..3 {
        match launched(&words) {
            Some(usize::MAX) => {
                words.remove(1);
            }
            Some(n) => {
                words.drain(..n);
            }
            None => break,
        }
    }
    let Some(first) = words.first() else {
        return false;
    };
    let program = basename(first);
    let program = program.strip_suffix(".exe").unwrap_or(&program);
    let program = program.strip_prefix("./").unwrap_or(program);
    let next = words
        .iter()
        .skip(1)
        .find(|w| !w.starts_with('-'))
        .map(|w| w.to_ascii_lowercase());
    TEST_RUNNERS
        .iter()
        .any(|&(p, sub)| p == program && sub.is_none_or(|s| next.as_deref() == Some(s)))
        // A program whose subcommand is `test` runs tests (`hardhat test`, `forge test`,
        // `zig test`): the table lists runners that need no subcommand or another word;
        // the shell's own `test` (`test -f test`) is a condition, not a runner.
        || (next.as_deref() == Some("test") && !matches!(program, "test" | "["))
}

/// A runner that could not run says so: it (or what it runs) is missing, or it has no such
/// script. These beat any verdict (`sh: jest: command not found` then `npm ERR! Test failed`).
const RUNNER_MISSING: &[&str] = &[
    "command not found",
    "is not recognized as",
    "no module named",
    "missing script",
    "no such command",
    "could not find a test runner",
];

/// The exit status of a test runner is its verdict on the code: it ran tests and some
/// failed (`test result: FAILED`, `2 failed, 3 passed`, `3 failing`, `--- FAIL:`,
/// `Tests failed`), and nothing says the runner could not run.
fn test_verdict(words: &[&str], code: i64, error: &str) -> bool {
    if matches!(code, 0 | 126 | 127) || !is_test_runner(words) {
        return false;
    }
    let body = super::error_line::body(error).to_ascii_lowercase();
    if RUNNER_MISSING.iter().any(|m| body.contains(m)) {
        return false;
    }
    body.lines().any(|l| {
        let l = l.trim();
        l.contains("test result: failed")
            || l.contains("tests failed")
            || l.starts_with("--- fail:")
            || l.starts_with("fail\t")
            || l.starts_with("failed!")
            // jest's `FAIL src/a.test.js`, go's `FAIL example.com/pkg 0.01s`.
            || l
                .strip_prefix("fail ")
                .is_some_and(|r| r.trim_start().contains(['/', '.']))
            // pytest's short summary: `FAILED tests/test_a.py::test_x - assert 1 == 2`.
            || (l.starts_with("failed ") && l.contains("::"))
            // A test's own assertion failing (the summary may be cut off the stored text).
            || l.ends_with(": assertionerror")
            || counted_failures(l)
    })
}

/// A line counting failed tests: a positive number followed by `failed`, `failing`,
/// `failure(s)` (`2 failed, 3 passed`, `3 failing`, `5 examples, 1 failure`).
fn counted_failures(line: &str) -> bool {
    let words: Vec<&str> = line
        .split(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | '|' | '(' | ')' | '='))
        .filter(|w| !w.is_empty())
        .collect();
    words.windows(2).any(|w| {
        w[0].parse::<u64>().is_ok_and(|n| n > 0)
            && ["failed", "failing", "failure", "failures"].contains(&w[1])
    })
}

/// Programs whose exit status is that of a command they run elsewhere or in another shell.
fn is_remote_runner(program: &str) -> bool {
    matches!(
        program,
        "ssh" | "powershell" | "powershell.exe" | "pwsh" | "pwsh.exe" | "cmd" | "cmd.exe"
    )
}

/// The segment whose exit status the command returns: the last top-level segment that is
/// not output-only (`echo`, `printf`, `true`) — with `a | b` the status is `b`'s, with
/// `a && b` the last one that ran.
fn exit_segment(segments: &[Segment]) -> Option<&Segment> {
    segments
        .iter()
        .rev()
        .filter(|s| s.depth == 0 || matches!(s.origin, shell::Origin::Wrapped(_)))
        .find(|s| {
            program_words(s).first().is_some_and(|p| {
                !matches!(
                    basename(p).as_str(),
                    "echo"
                        | "printf"
                        | "true"
                        | ":"
                        | "cd"
                        | "export"
                        | "set"
                        | "head"
                        | "tail"
                        | "wc"
                        | "sort"
                        | "uniq"
                        | "cat"
                        | "tee"
                        | "out-string"
                )
            })
        })
}

/// The segment's words from its program on (assignments and `sudo`-style wrappers are
/// already split off by the splitter; leading control words are skipped here).
fn program_words(seg: &Segment) -> Vec<&str> {
    seg.argv
        .iter()
        .map(String::as_str)
        .skip_while(|w| {
            matches!(
                *w,
                "!" | "{" | "(" | "then" | "do" | "else" | "if" | "while" | "until"
            ) || shell::is_assignment(w)
        })
        .collect()
}

fn basename(word: &str) -> String {
    word.rsplit(['/', '\\'])
        .next()
        .unwrap_or(word)
        .to_ascii_lowercase()
}

/// The error text has no line that could be an error: after its `Exit code N` line, only
/// whitespace and banners (an ssh warning printed before a remote `grep` found nothing).
fn output_is_silent(error: &str) -> bool {
    super::error_line::error_line(error).is_none()
}

/// Whether the output has a line that reads as an error (not the answer's own message).
fn has_error_line(error: &str, program: &str) -> bool {
    super::error_line::body(error).lines().any(|l| {
        let l = l.trim().to_ascii_lowercase();
        l.starts_with("error")
            || l.starts_with("fatal")
            || l.contains("command not found")
            || l.contains("permission denied")
            || l.contains("no such file or directory")
            || l.contains("usage:")
            || l.contains("unrecognized option")
            || l.contains("invalid option")
            || (l.starts_with(&format!("{program}: ")) && !program.is_empty())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bash(cmd: &str, code: i64, error: &str) -> Status {
        refine_with(
            "Bash",
            Some(cmd),
            Status::Failure,
            Some(code),
            error,
            &answer_table(None),
        )
    }

    #[test]
    fn refusal_phrasings_of_both_hosts_are_denied() {
        for text in [
            "Claude requested permissions to write to /Users/x/a.swift, but you haven't granted it yet.",
            "Claude requested permissions to use Bash, but you haven't granted it yet.",
            "mkdir in '/Users/x/y' was blocked. For security, Claude Code may only create directories in the allowed working directories for this session: '/Users/x'.",
            "cd to '/etc' was blocked. For security, Claude Code may only change directories to child directories of the allowed working directories for this session (including '/w').",
            "Glob patterns are not allowed in write operations. Please specify an exact file path.",
            "This Bash command contains multiple operations. The following part requires approval: swift build 2>&1",
            "File is in a directory that is denied by your permission settings.",
            "Permission for this action was denied by the auto mode classifier: it would push to main",
            "exec command rejected by user",
            "patch rejected by user",
            "command not run: approval policy is never and the command needs escalation",
        ] {
            assert!(classify::is_refusal(text), "{text}");
            assert_eq!(bash("x", 1, text), Status::Denied, "{text}");
        }
        // A program that ran and said "permission denied" failed.
        assert!(!classify::is_refusal(
            "Exit code 1\ncat: /etc/sudoers.d/x: Permission denied"
        ));
    }

    #[test]
    fn the_windows_shell_failing_to_start_is_harness() {
        for (text, code) in [
            ("Command failed: cygpath -u 'c:\\users\\m'", None),
            (
                "Exit code 1\n      0 [main] bash (14044) child_copy: cygheap read copy failed, 0x0..0x800021270",
                Some(1),
            ),
            ("Exit code 3221225794", Some(3_221_225_794)),
            (
                "<tool_use_error>Cancelled: parallel tool call Bash(ls) errored</tool_use_error>",
                None,
            ),
        ] {
            let status = refine_with(
                "Bash",
                Some("ssh host ls"),
                Status::Failure,
                code,
                text,
                &[],
            );
            assert_eq!(status, Status::Harness, "{text}");
        }
        assert!(!is_harness(
            "Exit code 124\ncommand timed out after 10019 milliseconds",
            Some(124)
        ));
    }

    #[test]
    fn silent_exit_one_of_a_query_program_is_an_answer() {
        assert_eq!(bash("grep -r foo src", 1, "Exit code 1"), Status::Answer);
        assert_eq!(
            bash("cat x | grep foo | head -5", 1, "Exit code 1\n"),
            Status::Answer
        );
        assert_eq!(bash("rg needle", 1, "Exit code 1"), Status::Answer);
        assert_eq!(bash("test -f x && cat x", 1, "Exit code 1"), Status::Answer);
        assert_eq!(bash("[ -d /opt/x ]", 1, "Exit code 1"), Status::Answer);
        assert_eq!(bash("which bfg", 1, "Exit code 1"), Status::Answer);
        assert_eq!(bash("command -v rg", 1, "Exit code 1"), Status::Answer);
        assert_eq!(bash("lsof -i :8080", 1, "Exit code 1"), Status::Answer);
        assert_eq!(
            bash(
                "defaults read com.apple.dock autohide",
                1,
                "Exit code 1\nThe domain/default pair of (com.apple.dock, autohide) does not exist"
            ),
            Status::Answer
        );
        assert_eq!(
            bash("diff a b", 1, "Exit code 1\n1c1\n< x\n---\n> y"),
            Status::Answer
        );
        // A remote grep finding nothing, behind ssh's banner.
        assert_eq!(
            bash(
                "ssh root@router 'logread | grep -i wan'",
                1,
                "Exit code 1\n** WARNING: connection is not using a post-quantum key exchange algorithm.\n"
            ),
            Status::Answer
        );
        assert_eq!(
            bash(
                "ssh root@router 'cat /etc/config/x | grep wan'",
                1,
                "Exit code 1"
            ),
            Status::Answer
        );
        assert_eq!(
            bash(
                "powershell.exe -Command \"ipconfig | findstr Gateway\"",
                1,
                "Exit code 1"
            ),
            Status::Answer
        );
    }

    #[test]
    fn a_silent_probe_that_discarded_its_errors_is_an_answer() {
        for cmd in [
            "ls Dockerfile* 2>/dev/null",
            "ls a.cfg &>/dev/null",
            "stat x 2>>/dev/null",
            "stat x &>>/dev/null",
            "cd /w && ls .eslintrc* 2>/dev/null",
            "Get-Item x 2>$null",
            "dir x 2>NUL",
        ] {
            assert_eq!(bash(cmd, 1, "Exit code 1\n"), Status::Answer, "{cmd}");
            assert_eq!(bash(cmd, 2, "Exit code 2"), Status::Answer, "{cmd}");
            assert_eq!(bash(cmd, 3, "Exit code 3"), Status::Failure, "{cmd}");
            assert_eq!(bash(cmd, 0, "Exit code 0"), Status::Failure, "{cmd}");
            let said = "Exit code 1\nerror: something broke";
            assert_eq!(bash(cmd, 1, said), Status::Failure, "{cmd}");
        }
        // Errors kept, sent to a file, or only stdout discarded: the failure is readable.
        for cmd in [
            "ls Dockerfile*",
            "ls x 2>err.log",
            "ls x >/dev/null",
            "ls x 1>/dev/null",
            "ls x 2>&1",
            "ls x 2</dev/null",
        ] {
            assert_eq!(bash(cmd, 1, "Exit code 1"), Status::Failure, "{cmd}");
        }
    }

    #[test]
    fn silenced_powershell_queries_are_answers() {
        let cmd = "powershell.exe -Command \"Get-ItemProperty 'HKLM:\\SYSTEM\\X' -Name SMB1 -ErrorAction SilentlyContinue\"";
        assert_eq!(bash(cmd, 1, "Exit code 1"), Status::Answer);
        // An error it printed anyway, or no silencing: a failure.
        assert_eq!(
            bash(cmd, 1, "Exit code 1\nGet-ItemProperty : Cannot find path"),
            Status::Failure
        );
        assert_eq!(
            bash(
                "powershell.exe -Command \"Get-ItemProperty 'HKLM:\\X' -Name A\"",
                1,
                "Exit code 1"
            ),
            Status::Failure
        );
    }

    #[test]
    fn failures_of_query_programs_stay_failures() {
        // A real error, another code, or an earlier segment's message.
        assert_eq!(
            bash(
                "grep --script x",
                2,
                "Exit code 2\ngrep: unrecognized option '--script'"
            ),
            Status::Failure
        );
        assert_eq!(
            bash(
                "ls /nope | grep x",
                1,
                "Exit code 1\nls: /nope: No such file or directory"
            ),
            Status::Failure
        );
        assert_eq!(
            bash("grep x", 1, "Exit code 1\ngrep: y: Permission denied"),
            Status::Failure
        );
        assert_eq!(bash("make", 1, "Exit code 1"), Status::Failure);
        assert_eq!(bash("grep x f && make", 1, "Exit code 1"), Status::Failure);
        // Not a shell tool: no answers.
        assert_eq!(
            refine_with(
                "Read",
                Some("grep x"),
                Status::Failure,
                Some(1),
                "Exit code 1",
                &answer_table(None)
            ),
            Status::Failure
        );
        // Other statuses are left alone.
        assert_eq!(
            refine_with(
                "Bash",
                Some("grep x"),
                Status::Success,
                Some(0),
                "",
                &answer_table(None)
            ),
            Status::Success
        );
    }

    #[test]
    fn the_table_extends_from_the_setting() {
        let table = answer_table(Some("mytool check:2 3, make -q:1"));
        let cmd = "mytool check --all";
        assert!(is_answer(cmd, 3, "Exit code 3", &table));
        assert!(!is_answer(cmd, 3, "Exit code 3", &answer_table(None)));
        assert!(!is_answer("mytool run", 3, "Exit code 3", &table));
        assert!(table.iter().any(|a| a.program == "make"));
        // A malformed value (which the settings file reports) adds nothing.
        let bad = answer_table(Some("mytool check:2 3, make:x"));
        assert_eq!(bad.len(), answer_table(None).len());
    }

    #[test]
    fn harness_text_is_read_in_the_head_of_the_error_only() {
        // Both NTSTATUS spellings of STATUS_DLL_INIT_FAILED.
        assert!(is_harness("", Some(3_221_225_794)));
        assert!(is_harness("", Some(-1_073_741_502)));
        assert!(!is_harness("", Some(1)));
        assert!(is_harness("  \n  CygHeap read copy failed", None));
        // An odd number of bytes before two-byte characters puts the window's end (400)
        // inside one: the head is cut back to the boundary before it, and a harness text
        // past the window is not read.
        let pad = format!("x{}", "é".repeat(300));
        assert!(!is_harness(
            &format!("{pad} cygheap read copy failed"),
            None
        ));
        assert!(is_harness(&format!("cygheap read copy failed {pad}"), None));
        assert_eq!(
            harness_kind(&format!("{pad} sibling tool call errored"), None),
            "the host's shell or tool failed around the command"
        );
    }

    #[test]
    fn harness_failures_are_reported_by_kind() {
        let parallel = "a parallel tool call was cancelled after a sibling failed";
        let windows = "the Windows shell (Git-Bash/MSYS) failed to start";
        for (text, code, kind) in [
            (
                "Cancelled: parallel tool call Bash(ls) errored",
                None,
                parallel,
            ),
            (
                "<tool_use_error>Sibling tool call errored</tool_use_error>",
                None,
                parallel,
            ),
            ("Exit code 3221225794", Some(3_221_225_794), windows),
            ("", Some(-1_073_741_502), windows),
            ("Command failed: cygpath -u x", None, windows),
            ("0 [main] bash cygheap base mismatch", None, windows),
            ("child_copy: x", None, windows),
            ("couldn't create signal pipe, Win32 error 5", None, windows),
            (
                "/bin/bash: /home/u/.claude/shell-snapshots/snapshot-bash-1.sh: No such file",
                None,
                "the host's shell snapshot could not be loaded",
            ),
            (
                "fork: retry: Resource temporarily unavailable",
                None,
                "the host's shell or tool failed around the command",
            ),
        ] {
            assert_eq!(harness_kind(text, code), kind, "{text}");
        }
    }

    #[test]
    fn refine_uses_the_built_in_answers_and_leaves_other_statuses() {
        // The process's table has the built-ins whatever the settings add.
        assert_eq!(
            refine(
                "Bash",
                Some("grep x f"),
                Status::Failure,
                Some(1),
                "Exit code 1"
            ),
            Status::Answer
        );
        assert_eq!(
            refine(
                "Bash",
                Some("make"),
                Status::Failure,
                Some(1),
                "Exit code 1"
            ),
            Status::Failure
        );
        assert_eq!(
            refine(
                "Bash",
                Some("grep x f"),
                Status::Success,
                Some(1),
                "Exit code 1"
            ),
            Status::Success
        );
        assert_eq!(
            refine(
                "Bash",
                Some("x"),
                Status::Interrupted,
                None,
                "exec command rejected by user"
            ),
            Status::Interrupted
        );
        assert!(table().iter().any(|a| a.program == "grep"));
        // No command or no exit code: nothing to read an answer from.
        assert_eq!(
            refine_with(
                "Bash",
                None,
                Status::Failure,
                Some(1),
                "Exit code 1",
                &answer_table(None)
            ),
            Status::Failure
        );
        assert_eq!(
            refine_with(
                "Bash",
                Some("grep x"),
                Status::Failure,
                None,
                "",
                &answer_table(None)
            ),
            Status::Failure
        );
    }

    #[test]
    fn the_settings_file_extends_the_table_and_a_bad_entry_is_an_error() {
        let tmp = tempfile::tempdir().unwrap();
        let home = crate::config::Home {
            dir: tmp.path().to_path_buf(),
        };
        assert!(check_settings(&home).is_ok());
        assert_eq!(configured_table(&home), answer_table(None));
        std::fs::write(home.settings_path(), "answer_codes = \"mytool check:2\"\n").unwrap();
        assert!(check_settings(&home).is_ok());
        let table = configured_table(&home);
        assert!(is_answer("mytool check", 2, "Exit code 2", &table));
        assert_eq!(table.len(), ANSWERS.len() + 1);
        std::fs::write(home.settings_path(), "answer_codes = \"mytool:x\"\n").unwrap();
        let err = check_settings(&home).unwrap_err();
        assert!(err.to_string().contains("answer_codes"), "{err}");
        assert!(matches!(err, crate::Error::Invalid(_)), "{err:?}");
    }

    #[test]
    fn the_exit_status_is_looked_for_in_nested_shells_two_levels_deep() {
        assert_eq!(
            bash("ssh h 'grep -q x /f'", 1, "Exit code 1"),
            Status::Answer
        );
        assert_eq!(
            bash("ssh a \"ssh b 'grep x /f'\"", 1, "Exit code 1"),
            Status::Answer
        );
        assert_eq!(
            bash(
                "ssh a \"ssh b 'ssh c \\\"grep x /f\\\"'\"",
                1,
                "Exit code 1"
            ),
            Status::Failure
        );
        // A plain word with a space is an argument, not a command to look into.
        assert_eq!(bash("grep -F 'foo bar'", 1, "Exit code 1"), Status::Answer);
        // A `!` the splitter leaves in the argv (quoted, escaped) is still skipped.
        assert_eq!(bash("\\! grep x f", 1, "Exit code 1"), Status::Answer);
        // A wrapper's command is the exit segment; a path is read by its basename.
        assert_eq!(bash("sudo grep x /etc/f", 1, "Exit code 1"), Status::Answer);
        assert_eq!(bash("/usr/bin/grep x f", 1, "Exit code 1"), Status::Answer);
        assert_eq!(bash("{ grep x f; }", 1, "Exit code 1"), Status::Answer);
    }

    #[test]
    fn powershell_silencing_counts_only_inside_powershell_with_exit_one() {
        let ps = |args: &str| format!("powershell.exe -Command \"Get-Item 'C:\\x' {args}\"");
        for args in [
            "-ErrorAction SilentlyContinue",
            "-ErrorAction Ignore",
            "-EA SilentlyContinue",
        ] {
            assert_eq!(bash(&ps(args), 1, "Exit code 1"), Status::Answer, "{args}");
        }
        assert_eq!(
            bash(&ps("-ErrorAction SilentlyContinue"), 2, "Exit code 2"),
            Status::Failure
        );
        assert_eq!(
            bash(&ps("-Verbose SilentlyContinue"), 1, "Exit code 1"),
            Status::Failure
        );
        // Told to stop on errors, it was not silenced.
        assert_eq!(
            bash(&ps("-ErrorAction Stop"), 1, "Exit code 1"),
            Status::Failure
        );
        // Not inside a PowerShell: the words mean nothing to the shell.
        assert_eq!(
            bash("Get-Item x -ErrorAction SilentlyContinue", 1, "Exit code 1"),
            Status::Failure
        );
    }

    #[test]
    fn an_answer_needs_its_code_its_subcommand_and_its_kind_of_output() {
        assert_eq!(bash("grep x f", 2, "Exit code 2"), Status::Failure);
        assert_eq!(bash("git grep x", 1, "Exit code 1"), Status::Answer);
        assert_eq!(bash("git status", 1, "Exit code 1"), Status::Failure);
        assert_eq!(
            bash("systemctl is-active nginx", 3, "Exit code 3\ninactive"),
            Status::Answer
        );
        // grep's answer is silent: anything it printed makes it a failure.
        assert_eq!(
            bash("grep x f", 1, "Exit code 1\nBinary file f matches"),
            Status::Failure
        );
        // diff's answer comes with a message, but not an error line.
        for line in [
            "error: x",
            "fatal: y",
            "sh: foo: command not found",
            "open: Permission denied",
            "b: No such file or directory",
            "usage: diff [-abc] a b",
            "unrecognized option '--z'",
            "invalid option -- 'k'",
            "diff: missing operand",
        ] {
            assert_eq!(
                bash("diff a b", 1, &format!("Exit code 1\n{line}")),
                Status::Failure,
                "{line}"
            );
        }
        assert_eq!(
            bash("diff a b", 1, "Exit code 1\n2c2\n< differ: x\n---\n> y"),
            Status::Answer
        );
    }

    fn shell(tool: &str, cmd: &str, code: Option<i64>, error: &str) -> Status {
        refine_with(
            tool,
            Some(cmd),
            Status::Failure,
            code,
            error,
            &answer_table(None),
        )
    }

    // --- The shell did not start: harness, per host. ---

    #[test]
    fn claude_code_shell_that_did_not_start_is_harness() {
        // anthropics/claude-code#5687: the shell snapshot could not be made.
        let text = "Error: Failed to create shell snapshot: \n    at file:///x/cli.js:1423:737";
        assert_eq!(shell("Bash", "ls", None, text), Status::Harness);
        assert_eq!(
            harness_kind(text, None),
            "the host's shell snapshot could not be loaded"
        );
    }

    #[test]
    fn copilot_cli_without_pwsh_is_harness() {
        // github/copilot-cli#847 (tool.execution_complete error.message, 0.0.372) and #93.
        let text = "<exited with error: PowerShell 6+ (pwsh) is not available. Please install it from https://aka.ms/powershell. Error: Error: Command failed: pwsh.exe --version\n'pwsh.exe' is not recognized as an internal or external command,\r\noperable program or batch file.\r\n>";
        assert_eq!(
            shell("powershell", "npx create-next-app x", None, text),
            Status::Harness
        );
        let kind = "the host could not start its shell (not installed or not on its PATH)";
        assert_eq!(harness_kind(text, None), kind);
        // github/copilot-cli#276: every command, `echo hello` too, ends this way.
        let text = "<exited with error: File not found: >";
        assert_eq!(
            shell("powershell", "echo hello", None, text),
            Status::Harness
        );
        assert_eq!(harness_kind(text, None), kind);
    }

    #[test]
    fn a_shell_the_host_could_not_spawn_is_harness_whatever_the_host() {
        // Node's spawn error, as Copilot CLI (github/copilot-cli#2355), Gemini CLI's
        // `Error: …` line (packages/core/src/tools/shell.ts) and Cursor word it.
        for text in [
            "spawn pwsh.exe ENOENT",
            "Output: (empty)\nError: spawn /bin/bash ENOENT",
            "Error: spawn C:\\Program Files\\PowerShell\\7\\pwsh.exe EACCES",
            "spawn 'zsh' EINVAL",
            "spawn cmd.exe EPERM",
        ] {
            assert!(is_harness(text, None), "{text}");
            assert_eq!(
                shell("run_shell_command", "ls", None, text),
                Status::Harness
            );
        }
        // The program of the command missing is its failure, not the shell's.
        for text in [
            "spawn rg ENOENT",
            "spawn bash",
            "spawn bash EEXIST",
            "/bin/bash: line 1: rg: command not found",
        ] {
            assert!(!is_harness(text, None), "{text}");
        }
    }

    #[test]
    fn codex_sandbox_that_did_not_start_is_harness() {
        // codex-rs `SandboxErr`/`CodexErr` Display texts.
        let kind = "the host's sandbox could not start the command";
        for text in [
            "execution error: sandbox error: seccomp setup error: bad filter",
            "sandbox error: seccomp backend error: x",
            "sandbox error: Landlock was not able to fully enforce all sandbox rules",
            "error running landlock: Sandbox(LandlockRestrict)",
            "execution error: spawn failed: child stdout/stderr not captured",
            "codex-linux-sandbox was required but not provided",
        ] {
            assert_eq!(shell("shell", "ls", None, text), Status::Harness, "{text}");
            if !text.contains("spawn failed") {
                assert_eq!(harness_kind(text, None), kind, "{text}");
            }
        }
        assert_eq!(
            harness_kind("spawn failed: child stdout/stderr not captured", None),
            "the host's shell or tool failed around the command"
        );
    }

    // --- A host-enforced timeout stays a failure, with a generic signature. ---

    #[test]
    fn host_timeouts_stay_failures_with_a_stable_signature() {
        for (tool, text, code) in [
            // Claude Code's Bash tool.
            ("Bash", "Command timed out after 2m 0.0s", None),
            // Codex 0.40-0.42 (shared/realdata codex rollouts).
            (
                "shell",
                "command timed out after 10019 milliseconds",
                Some(124),
            ),
            // Gemini CLI's shell tool (packages/core/src/tools/shell.ts).
            (
                "run_shell_command",
                "Command was automatically cancelled because it exceeded the timeout of 5.0 minutes without output. There was no output before it was cancelled.",
                None,
            ),
        ] {
            assert!(is_host_timeout(text), "{text}");
            assert!(!is_harness(text, code), "{text}");
            assert!(!classify::is_interruption(text), "{text}");
            assert_eq!(
                shell(tool, "cargo build", code, text),
                Status::Failure,
                "{text}"
            );
        }
        assert!(!is_host_timeout("Exit code 1\nping: timed out"));
        // The duration varies per call; the signature does not.
        let sig = super::super::signature::signature;
        assert_eq!(
            sig("Command timed out after 2m 0.0s"),
            sig("Command timed out after 10m 30.5s")
        );
        assert_eq!(
            sig("command timed out after 10019 milliseconds"),
            sig("command timed out after 120000 milliseconds")
        );
    }

    // --- Refusals and cancellations: denied or interrupted, never failures. ---

    #[test]
    fn claude_code_refusals_and_cancellations() {
        for text in [
            "This command requires approval",
            "Permission to use Bash has been auto-denied in dontAsk mode.",
            "The user doesn't want to take this action right now. STOP what you are doing",
        ] {
            assert_eq!(shell("Bash", "x", None, text), Status::Denied, "{text}");
        }
        assert_eq!(
            shell(
                "Bash",
                "x",
                None,
                "[Request interrupted by user for tool use]"
            ),
            Status::Interrupted
        );
        assert_eq!(
            shell(
                "Bash",
                "x",
                None,
                "Cancelled: parallel tool call Bash(ls) errored"
            ),
            Status::Harness,
            "a cancelled sibling is the host's doing: never a failure"
        );
    }

    #[test]
    fn codex_refusals_and_cancellations() {
        for text in [
            "exec command rejected by user",
            "patch rejected by user",
            "command not run: approval policy is never and the command needs escalation",
        ] {
            assert_eq!(shell("shell", "x", None, text), Status::Denied, "{text}");
        }
        for text in ["aborted", "interrupted (Ctrl-C)"] {
            assert_eq!(
                shell("shell", "x", None, text),
                Status::Interrupted,
                "{text}"
            );
        }
    }

    #[test]
    fn gemini_cli_refusals_and_cancellations() {
        for text in [
            "Tool execution denied by policy.",
            "Tool execution for \"Shell\" denied by policy.",
            "Tool execution for \"Shell\" requires user confirmation, which is not supported in non-interactive mode.",
            "User denied execution.",
            "Command injection detected: command substitution syntax ($(), backticks, <() or >()) found in command arguments. This is a security risk and the command was blocked.",
        ] {
            assert_eq!(
                shell("run_shell_command", "x", None, text),
                Status::Denied,
                "{text}"
            );
            assert_eq!(classify::cancelled(text), Status::Denied, "{text}");
        }
        for text in [
            "Command was cancelled by user before it could complete. Below is the output before it was cancelled:\nx",
            "Command was cancelled by user before it could start.",
            "Operation cancelled by user",
            "Tool call cancelled while in queue.",
            "User cancelled operation",
            "Request cancelled.",
        ] {
            assert_eq!(
                shell("run_shell_command", "x", None, text),
                Status::Interrupted,
                "{text}"
            );
            assert_eq!(classify::cancelled(text), Status::Interrupted, "{text}");
        }
    }

    #[test]
    fn copilot_cli_refusals() {
        for text in [
            "Permission denied and could not request permission from user",
            "Denied by preToolUse hook: no pushes",
            "The user rejected this tool call.",
        ] {
            assert_eq!(shell("bash", "x", None, text), Status::Denied, "{text}");
        }
    }

    #[test]
    fn cursor_cancellations() {
        // cursor/cursor#3501: `run_terminal_cmd` stopped short.
        assert_eq!(
            shell("Shell", "dotnet build", None, "Command was interrupted"),
            Status::Interrupted
        );
        // A program's own "interrupted" later in its output is not the host's.
        assert_eq!(
            shell(
                "Shell",
                "make",
                Some(2),
                "Exit code 2\nmake: *** [all] Interrupt"
            ),
            Status::Failure
        );
    }

    // --- A search's no-match, rewritten by an output hook, is still an answer. ---

    #[test]
    fn a_no_match_summary_of_a_search_is_an_answer() {
        for (cmd, text) in [
            ("grep -rn foo src", "Exit code 1\n0 matches for 'foo'"),
            ("grep -rn foo src", "Exit code 1\nNo matches found"),
            ("rg needle", "Exit code 1\nNo matches found."),
            ("rg needle", "Exit code 1\nno results"),
            ("git grep x", "Exit code 1\n0 results"),
            ("findstr x f", "Exit code 1\nNothing found"),
            ("grep -c x f", "Exit code 1\n0 lines matched"),
        ] {
            assert_eq!(bash(cmd, 1, text), Status::Answer, "{cmd}: {text}");
        }
        // A real error, another program, another code, or more than the summary: failures.
        for (cmd, code, text) in [
            (
                "grep foo x",
                1,
                "Exit code 1\ngrep: x: No such file or directory",
            ),
            ("grep foo x", 2, "Exit code 2\nNo matches found"),
            ("make", 1, "Exit code 1\nNo matches found"),
            (
                "grep foo x",
                1,
                "Exit code 1\nNo matches found\ngrep: y: Permission denied",
            ),
            ("grep foo x", 1, "Exit code 1\n10 matches"),
            ("grep foo x", 1, "Exit code 1\nno matching files in /x"),
            ("diff a b", 1, "Exit code 1\nNo matches found\nerror: x"),
        ] {
            assert_eq!(bash(cmd, code, text), Status::Failure, "{cmd}: {text}");
        }
        assert!(!is_no_match_summary("Exit code 1"));
    }

    // --- Test runners: the verdict on the code is an answer; a runner that could not run
    // is a failure. ---

    #[test]
    fn a_codex_sandbox_exit_gives_the_test_runner_its_verdict() {
        let red = "failed in sandbox LinuxSeccomp with execution error: sandbox denied exec error, exit code: 1, stdout: ....F...\n=== FAILURES ===\nE   AssertionError\nFAILED tests/test_a.py::test_x - assert 1 == 2\n1 failed, 7 passed in 0.3s";
        assert_eq!(wrapped_exit(red), Some(1));
        assert_eq!(wrapped_exit("exit code: 1"), None);
        assert_eq!(
            refine_with(
                "Bash",
                Some("PYTHONPATH=. pytest -q"),
                Status::Failure,
                None,
                red,
                &[]
            ),
            Status::Answer
        );
        // A collection error before any test ran stays a failure.
        let missing = "failed in sandbox LinuxSeccomp with execution error: sandbox denied exec error, exit code: 2, stdout: \nE   ModuleNotFoundError: No module named 'opk'\nInterrupted: 2 errors during collection";
        assert_eq!(wrapped_exit(missing), Some(2));
        assert_eq!(
            refine_with(
                "Bash",
                Some("pytest -q"),
                Status::Failure,
                None,
                missing,
                &[]
            ),
            Status::Failure
        );
    }

    #[test]
    fn a_test_runners_verdict_is_an_answer() {
        for (cmd, code, text) in [
            (
                "cargo test",
                101,
                "Exit code 101\nrunning 3 tests\ntest a ... FAILED\n\ntest result: FAILED. 2 passed; 1 failed; 0 ignored",
            ),
            (
                "cargo test 2>&1 | tail -20",
                101,
                "Exit code 101\ntest result: FAILED. 2 passed; 1 failed",
            ),
            (
                "pytest -q",
                1,
                "Exit code 1\nFAILED tests/test_a.py::test_x - assert 1 == 2\n1 failed, 3 passed in 0.12s",
            ),
            (
                "python -m pytest tests",
                1,
                "Exit code 1\n=== 2 failed, 1 passed in 1.0s ===",
            ),
            ("uv run pytest", 1, "Exit code 1\n=== 1 failed in 0.1s ==="),
            ("npm test", 1, "Exit code 1\n  3 passing\n  2 failing"),
            (
                "npm run test",
                1,
                "Exit code 1\nTests:       1 failed, 2 passed, 3 total",
            ),
            ("yarn test", 1, "Exit code 1\nFAIL src/a.test.js\n  ● adds"),
            (
                "pnpm test",
                1,
                "Exit code 1\n Tests  1 failed | 4 passed (5)",
            ),
            (
                "npx jest src",
                1,
                "Exit code 1\nTests:       4 failed, 4 total",
            ),
            ("npx vitest run", 1, "Exit code 1\n Tests  2 failed (2)"),
            ("mocha", 2, "Exit code 2\n  2 failing"),
            (
                "go test ./...",
                1,
                "Exit code 1\n--- FAIL: TestAdd (0.00s)\nFAIL\texample.com/m\t0.01s",
            ),
            ("bundle exec rspec", 1, "Exit code 1\n5 examples, 1 failure"),
            ("make test", 2, "Exit code 2\nSome tests failed."),
            (
                "dotnet test",
                1,
                "Exit code 1\nFailed!  - Failed:     1, Passed:     2",
            ),
            ("cd web && npm test", 1, "Exit code 1\n  1 failing"),
            // Any program's `test` subcommand, launched or not.
            (
                "npx hardhat test test/a.test.js 2>&1",
                3,
                "Exit code 3\n  2 passing\n  3 failing",
            ),
            (
                "forge test -vv",
                1,
                "Exit code 1\nSuite result: FAILED. 1 passed; 2 failed",
            ),
        ] {
            assert_eq!(bash(cmd, code, text), Status::Answer, "{cmd}: {text}");
        }
    }

    #[test]
    fn a_test_subcommand_makes_a_runner_and_the_test_builtin_does_not() {
        for (words, runner) in [
            (&["hardhat", "test"][..], true),
            (&["npx", "hardhat", "test", "--network", "x"][..], true),
            (&["forge", "test"][..], true),
            (&["hardhat", "compile"][..], false),
            (&["test", "-f", "test"][..], false),
            (&["[", "test", "]"][..], false),
            (&["git", "status"][..], false),
        ] {
            assert_eq!(is_test_runner(words), runner, "{words:?}");
        }
    }

    #[test]
    fn a_test_runner_that_could_not_run_is_a_failure() {
        for (cmd, code, text) in [
            (
                "pytest",
                127,
                "Exit code 127\n/bin/bash: pytest: command not found",
            ),
            (
                "python -m pytest",
                1,
                "Exit code 1\n/usr/bin/python: No module named pytest",
            ),
            (
                "npm test",
                1,
                "Exit code 1\nnpm ERR! Missing script: \"test\"",
            ),
            (
                "npm test",
                1,
                "Exit code 1\nsh: jest: command not found\nnpm ERR! Test failed.  See above for more details.",
            ),
            (
                "cargo nextest run",
                101,
                "Exit code 101\nerror: no such command: `nextest`",
            ),
            (
                "jest",
                1,
                "Exit code 1\n'jest' is not recognized as an internal or external command",
            ),
            // No verdict: it did not get as far as running tests.
            (
                "cargo test",
                101,
                "Exit code 101\nerror[E0425]: cannot find value `x`\nerror: could not compile `m`",
            ),
            (
                "cargo test",
                101,
                "Exit code 101\nfailed to run custom build command for `openssl-sys`",
            ),
            (
                "pytest tests/nope.py",
                4,
                "Exit code 4\nERROR: file or directory not found: tests/nope.py",
            ),
            // Not a runner, or not running tests.
            ("cargo build", 101, "Exit code 101\n1 failed"),
            ("npm install", 1, "Exit code 1\n2 failed"),
            ("make", 2, "Exit code 2\n2 failed"),
        ] {
            assert_eq!(bash(cmd, code, text), Status::Failure, "{cmd}: {text}");
        }
    }

    #[test]
    fn test_runners_are_found_behind_their_launchers() {
        for words in [
            vec!["pytest"],
            vec!["/usr/bin/pytest", "-q"],
            vec!["npx", "jest"],
            vec!["bunx", "vitest"],
            vec!["python3", "-m", "pytest"],
            vec!["poetry", "run", "pytest"],
            vec!["pnpm", "exec", "vitest"],
            vec!["bundle", "exec", "rspec"],
            vec!["npm", "run", "test"],
            vec!["npm", "test"],
            vec!["make", "-j4", "test"],
            vec!["./gradlew", "test"],
            vec!["dotnet.exe", "test"],
            vec!["uv", "run", "python", "-m", "pytest"],
        ] {
            assert!(is_test_runner(&words), "{words:?}");
        }
        for words in [
            vec!["npm", "run", "build"],
            vec!["npm", "install"],
            vec!["python", "-m", "pip"],
            vec!["npx"],
            vec!["cargo", "build"],
            vec!["make"],
            vec![],
        ] {
            assert!(!is_test_runner(&words), "{words:?}");
        }
        assert!(counted_failures("tests: 1 failed, 2 passed"));
        assert!(!counted_failures("0 failed, 2 passed"));
        assert!(!counted_failures("failed 2"));
        assert!(!test_verdict(&["pytest"], 0, "1 failed"));
        assert!(!test_verdict(&["pytest"], 126, "1 failed"));
    }

    #[test]
    fn interruption_comes_before_refusal_and_harness() {
        assert_eq!(
            shell(
                "Bash",
                "x",
                None,
                "[Request interrupted by user] requires approval"
            ),
            Status::Interrupted
        );
    }
}
