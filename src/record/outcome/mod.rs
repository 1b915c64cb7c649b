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
//!   belongs to is in the answer table (`answer::ANSWERS`, extended by the `answer_codes` setting)
//!   with that code, and the output carries no error line (unless the entry allows one), or,
//!   for a search, only a no-match summary an output hook put there (`0 matches for 'x'`);
//!   or a test runner (`runner::TEST_RUNNERS`) that ran and gave its verdict (`2 failed`), unless
//!   the output says the runner could not run (`command not found`, `Missing script`);
//! - `failure` otherwise.
//!
//! A timeout of the host's shell tool stays a `failure`: the program ran and did not finish,
//! which is a recurring failure a reviewer writes a rule for (run it in the background).
//! The fifth class, `masked` (exit 0 whose output carries a known failure's signature), is a
//! success with a stored signature; derive decides it against the failures it clusters.
//!
//! Files: `harness` (the host's shell or tool failing, timeouts), `answer` (the answer table
//! and the segment an exit status belongs to), `runner` (test runners and their verdicts).

mod answer;
mod harness;
mod runner;

pub(crate) use answer::{Answer, check_settings, is_answer, table};
pub(crate) use harness::{harness_kind, is_harness, is_host_timeout};

use super::classify::{self, Status};
use harness::lower_head;

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

#[cfg(test)]
mod tests {
    use super::answer::answer_table;
    use super::*;

    pub(super) fn bash(cmd: &str, code: i64, error: &str) -> Status {
        refine_with(
            "Bash",
            Some(cmd),
            Status::Failure,
            Some(code),
            error,
            &answer_table(None),
        )
    }

    pub(super) fn shell(tool: &str, cmd: &str, code: Option<i64>, error: &str) -> Status {
        refine_with(
            tool,
            Some(cmd),
            Status::Failure,
            code,
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
