//! Host-side failures around a command: the host's shell or tool that did not start or was
//! cancelled ([`is_harness`], reported once by kind, [`harness_kind`]), and the host's own
//! timeouts ([`is_host_timeout`]), each read in the head of the error text only.
//!
//! Guarantees: a harness failure is never a failure of the command's program; a timeout stays
//! one (the program ran and did not finish).

/// How much of the start of an error a refusal phrase must fall in.
const WINDOW: usize = 400;

pub(super) fn lower_head(text: &str) -> String {
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
///
/// Not [`crate::host::call::is_shell`]: that names the host's shell *tools* (`Bash`,
/// `run_shell_command`), this the *executables* a host spawns to run one. Nor the program
/// table's shells (`crate::shell::programs::is_shell`): those are what a command runs and
/// callus unwraps (`ksh`, `csh` …, no `pwsh` or `cmd`), these what hosts are known to launch,
/// Windows' included.
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

#[cfg(test)]
mod tests {
    use super::super::refine_with;
    use super::super::tests::shell;
    use super::*;
    use crate::record::classify;
    use crate::record::classify::Status;

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
        let sig = crate::record::signature::signature;
        assert_eq!(
            sig("Command timed out after 2m 0.0s"),
            sig("Command timed out after 10m 30.5s")
        );
        assert_eq!(
            sig("command timed out after 10019 milliseconds"),
            sig("command timed out after 120000 milliseconds")
        );
    }
}
