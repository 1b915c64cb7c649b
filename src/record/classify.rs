//! Outcome classification: success, failure, interrupted or denied, and the exit code.
//!
//! A call refused before it ran — by a permission rule, a sandbox, a hook (ours or anyone's)
//! or the user — is `denied`, never `failure`: it says nothing about whether the command
//! works, and derive must not learn "the user said no" as "this shape fails". The refusal
//! texts are the ones the hosts actually send (reference/transcript-formats.md,
//! hooks-protocol.md Part 4, codex-e2e.md §4). A text that starts with `Exit code N` ran,
//! so it is never a refusal whatever its output says.

/// The status column of `tool_calls`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    /// Started, outcome not seen (yet).
    Pending,
    /// Ran and succeeded.
    Success,
    /// Ran and failed.
    Failure,
    /// Cut short by the user or the host.
    Interrupted,
    /// Refused before it ran.
    Denied,
    /// Exited non-zero as its answer (`grep` found nothing): ran fine (see `outcome`).
    Answer,
    /// The host's shell or tool failed around the command (see `outcome`).
    Harness,
}

impl Status {
    /// The stored spelling.
    #[must_use]
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::Success => "success",
            Status::Failure => "failure",
            Status::Interrupted => "interrupted",
            Status::Denied => "denied",
            Status::Answer => "answer",
            Status::Harness => "harness",
        }
    }

    /// Parse a stored or trace spelling (case-insensitive; `error`/`failed` mean failure).
    #[must_use]
    pub(crate) fn parse(s: &str) -> Option<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "pending" => Some(Status::Pending),
            "success" | "ok" | "completed" => Some(Status::Success),
            "failure" | "failed" | "error" => Some(Status::Failure),
            "interrupted" | "aborted" => Some(Status::Interrupted),
            "denied" | "blocked" | "rejected" => Some(Status::Denied),
            "answer" => Some(Status::Answer),
            "harness" => Some(Status::Harness),
            _ => None,
        }
    }
}

/// Lowercase fragments of refusal messages, matched near the start of an error text.
const REFUSALS: &[&str] = &[
    // Claude Code permission system.
    "this command requires approval",
    "requires approval",
    "auto-denied in dontask mode",
    "denied in dontask mode",
    "the user doesn't want to take this action",
    "the user doesn't want to proceed with this tool use",
    "tool use was rejected",
    "denied by permission rule",
    "blocked in plan mode",
    // PreToolUse hook refusals as each host reports them.
    "pretooluse:",
    "hook error:",
    "command blocked by pretooluse hook",
    // Copilot CLI 1.0.102: "Denied by preToolUse hook: <reason>".
    "denied by pretooluse hook",
    "blocked by hook",
    // callus's own guard.
    "callus denied this call",
    "blocked by callus",
    // Codex approvals and sandbox.
    "rejected by user",
    "user rejected",
    "denied by the user",
    "sandbox denied",
    "blocked by the sandbox",
    "blocked by sandbox",
    // Claude Code: a write the user has not granted yet ("Claude requested permissions to
    // write to /x, but you haven't granted it yet.").
    "requested permissions to",
    "but you haven't granted it yet",
    // Claude Code's working-directory sandbox for Bash (mkdir, cd, …).
    "was blocked. for security, claude code may only",
    "may only create directories in the allowed working directories",
    "may only change directories to",
    "glob patterns are not allowed in write operations",
    // Permission settings and auto-mode classifiers.
    "denied by your permission settings",
    "auto mode classifier",
    "auto-mode classifier",
    "denied by auto mode",
    "blocked by auto mode",
    "permission denied by the user",
    // Codex approvals: "exec command rejected by user", "patch rejected by user",
    // approval policy `never` refusing an escalation.
    "approval policy is never",
    "approval_policy is never",
    "approval policy \"never\"",
    "escalation was not approved",
    "was not approved by the user",
    // Gemini CLI's policy engine and confirmations (packages/core/src/scheduler/policy.ts,
    // scheduler.ts, tools/tools.ts, tools/shell.ts): "Tool execution denied by policy.",
    // "Tool execution for \"Shell\" denied by policy.", "… requires user confirmation, which
    // is not supported in non-interactive mode.", "User denied execution.", and its shell
    // tool refusing command substitution ("… This is a security risk and the command was
    // blocked.").
    "denied by policy",
    "requires user confirmation, which is not supported",
    "user denied execution",
    "command injection detected",
    // Copilot CLI: a permission it could not ask for in a non-interactive run (its
    // transcripts: "✗ … Permission denied and could not request permission from user").
    "could not request permission from user",
    // The user's "no" as several agent runtimes word it to the model (Kiro's ACP
    // `rawOutput`, others: "The user rejected this tool call.").
    "the user rejected this tool call",
];

/// Codex before 0.40 words *every* non-zero exit of a command run in its sandbox this way
/// (`failed in sandbox LinuxSeccomp with execution error: sandbox denied exec error, exit
/// code: 2, stdout: …, stderr: …`): pytest's failing tests, a missing program and a stale
/// patch alike. It is a refusal only when the captured output shows the sandbox refusing.
const CODEX_SANDBOX_EXIT: &str = "sandbox denied exec error";

/// What a command's output says when a sandbox refused it (lowercase).
const SANDBOX_REFUSED: &[&str] = &[
    "permission denied",
    "operation not permitted",
    "read-only file system",
    "eperm",
    "eacces",
];

/// Does a Codex sandbox exit (see [`CODEX_SANDBOX_EXIT`]) show the sandbox refusing?
fn sandbox_refused(text: &str) -> bool {
    let lower = text.to_lowercase();
    SANDBOX_REFUSED.iter().any(|p| lower.contains(p))
}

/// How much of the start of an error a refusal phrase must fall in.
const REFUSAL_WINDOW: usize = 400;

/// Whether `text` is a refusal (the call never ran).
#[must_use]
pub(crate) fn is_refusal(text: &str) -> bool {
    let head = text.trim_start();
    if head.starts_with("Exit code") || head.starts_with("Process exited with code") {
        return false;
    }
    let mut end = head.len().min(REFUSAL_WINDOW);
    while !head.is_char_boundary(end) {
        end -= 1;
    }
    let head = head[..end].to_lowercase();
    if head.contains(CODEX_SANDBOX_EXIT) {
        return sandbox_refused(text);
    }
    // "Permission to use Bash with command … has been denied."
    (head.starts_with("permission to use") && head.contains("denied"))
        || REFUSALS.iter().any(|r| head.contains(r))
}

/// How interruptions start, lowercase, by host: Gemini CLI ("Command was cancelled by user
/// before it could complete.", "Operation cancelled by user", "Tool call cancelled while in
/// queue.", "User cancelled operation", "Request cancelled.": packages/core/src/tools/
/// shell.ts, scheduler/scheduler.ts, agents/types.ts), Codex ("interrupted (Ctrl-C)",
/// `CodexErr::Interrupted`; "aborted"), Cursor ("Command was interrupted": cursor/cursor#3501).
const INTERRUPTIONS: &[&str] = &[
    "command was cancelled by user",
    "command cancelled by user",
    "operation cancelled by user",
    "tool call cancelled while in queue",
    "user cancelled operation",
    "request cancelled.",
    "command was interrupted",
    "interrupted (ctrl-c)",
];

/// Whether `text` says the call was interrupted or aborted.
#[must_use]
pub(crate) fn is_interruption(text: &str) -> bool {
    let t = text.trim_start();
    let head: String = t.chars().take(80).collect::<String>().to_lowercase();
    t.starts_with("[Request interrupted")
        || t.starts_with("Interrupted")
        || t.starts_with("aborted")
        || t.starts_with("Aborted")
        || t.contains("[Request interrupted by user")
        || INTERRUPTIONS.iter().any(|i| head.starts_with(i))
}

/// A call the host reports `cancelled` (Gemini CLI): interrupted when its text says the
/// user or the host stopped it, else refused (the user declined it: "User denied
/// execution.").
#[must_use]
pub(crate) fn cancelled(text: &str) -> Status {
    if is_interruption(text) {
        Status::Interrupted
    } else {
        Status::Denied
    }
}

/// Classify a call that produced an error text and maybe an exit code.
///
/// `interrupt` is the host's own interruption flag. Precedence: interrupted, then refusal
/// text, then failure.
#[must_use]
pub(crate) fn failed(interrupt: bool, text: &str) -> Status {
    if interrupt || is_interruption(text) {
        Status::Interrupted
    } else if is_refusal(text) {
        Status::Denied
    } else {
        Status::Failure
    }
}

/// The exit code a Codex output text states: `Process exited with code N` (unified exec)
/// or a first line `Exit code: N` (`apply_patch`), or Claude's `Exit code N`.
#[must_use]
pub(crate) fn stated_exit_code(text: &str) -> Option<i64> {
    if let Some(code) = super::signature::leading_exit_code(text) {
        return Some(code);
    }
    let marker = "Process exited with code ";
    let at = text.find(marker)? + marker.len();
    let rest = &text[at..];
    let end = rest
        .char_indices()
        .find(|&(i, c)| !(c.is_ascii_digit() || (i == 0 && c == '-')))
        .map_or(rest.len(), |(i, _)| i);
    rest[..end].parse().ok()
}

/// The status an exit code means: 0 success, -1 (killed at turn end) interrupted, else
/// failure.
#[must_use]
pub(crate) fn from_exit_code(code: i64) -> Status {
    match code {
        0 => Status::Success,
        -1 => Status::Interrupted,
        _ => Status::Failure,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every status reads back from its own stored spelling, in any case: a stored
    /// `answer` or `harness` row must not turn into an unknown status on the way out.
    #[test]
    fn every_status_parses_back_from_its_spelling() {
        for s in [
            Status::Pending,
            Status::Success,
            Status::Failure,
            Status::Interrupted,
            Status::Denied,
            Status::Answer,
            Status::Harness,
        ] {
            assert_eq!(Status::parse(s.as_str()), Some(s), "{}", s.as_str());
            assert_eq!(Status::parse(&s.as_str().to_ascii_uppercase()), Some(s));
        }
        assert_eq!(Status::parse(" answer "), Some(Status::Answer));
        assert_eq!(Status::parse("nonsense"), None);
    }

    #[test]
    fn refusals_from_the_real_hosts_are_denied() {
        for text in [
            "This command requires approval",
            "Permission to use Bash has been auto-denied in dontAsk mode.",
            "Permission to use Bash with command rm -rf x has been denied.",
            "The user doesn't want to take this action right now. STOP what you are doing",
            "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file).",
            "PreToolUse:Bash hook error: DENY-REASON-42 use the wrapper",
            "PreToolUse:Bash hook error: [/x/probe-hook.sh]: EXIT2-REASON-43 blocked\n",
            "Command blocked by PreToolUse hook: DENY-REASON-42 use the wrapper. Command: touch x",
            "callus denied this call (rule r1): use the wrapper",
            "BLOCKED by callus (rule b): no",
            "exec command rejected by user",
        ] {
            assert_eq!(failed(false, text), Status::Denied, "{text}");
        }
    }

    #[test]
    fn failures_that_ran_are_failures() {
        for text in [
            "Exit code 2\nls: cannot access '/x': No such file or directory",
            "Exit code 1\nThis command requires approval",
            "ls: /root: Permission denied",
            "<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>",
            "File does not exist.",
        ] {
            assert_eq!(failed(false, text), Status::Failure, "{text}");
        }
    }

    #[test]
    fn interruptions() {
        assert_eq!(failed(true, "Exit code 130"), Status::Interrupted);
        assert_eq!(
            failed(false, "[Request interrupted by user for tool use]"),
            Status::Interrupted
        );
    }

    #[test]
    fn each_interruption_text_on_its_own() {
        for text in [
            "[Request interrupted]",
            "  Interrupted by the host",
            "aborted: turn ended",
            "Aborted",
            "error: boom\n[Request interrupted by user for tool use]",
        ] {
            assert!(is_interruption(text), "{text}");
            assert_eq!(failed(false, text), Status::Interrupted, "{text}");
        }
        for text in [
            "not interrupted",
            "the request was aborted",
            "[Request denied]",
        ] {
            assert!(!is_interruption(text), "{text}");
        }
    }

    #[test]
    fn the_refusal_window_ends_on_a_character_boundary() {
        // The Kelvin sign (3 bytes) lowercases to an ASCII `k`; it starts at byte 398 and
        // so straddles the 400-byte window. Cut on the boundary before it, the phrase is
        // incomplete; a cut past it would complete "blocked by hook".
        let pad = "x".repeat(REFUSAL_WINDOW - 2 - "blocked by hoo".len());
        let straddling = format!("{pad}blocked by hoo\u{212A} and more");
        assert!(!straddling.is_char_boundary(REFUSAL_WINDOW));
        assert!(!is_refusal(&straddling));
        assert_eq!(failed(false, &straddling), Status::Failure);
        // The same phrase ending inside the window is a refusal.
        let inside = format!("{}blocked by hook é", &pad[1..]);
        assert!(is_refusal(&inside));
        // Past the window it is not, whatever the text.
        let past = format!("{}blocked by hook", "é".repeat(REFUSAL_WINDOW / 2));
        assert!(!is_refusal(&past));
    }

    #[test]
    fn stored_and_trace_spellings() {
        for status in [
            Status::Pending,
            Status::Success,
            Status::Failure,
            Status::Interrupted,
            Status::Denied,
        ] {
            assert_eq!(Status::parse(status.as_str()), Some(status));
        }
        for (text, status) in [
            ("ok", Status::Success),
            (" Completed ", Status::Success),
            ("failed", Status::Failure),
            ("ERROR", Status::Failure),
            ("interrupted", Status::Interrupted),
            ("aborted", Status::Interrupted),
            ("denied", Status::Denied),
            ("blocked", Status::Denied),
            ("rejected", Status::Denied),
        ] {
            assert_eq!(Status::parse(text), Some(status), "{text}");
        }
        assert_eq!(Status::parse("done"), None);
        assert_eq!(Status::parse(""), None);
    }

    #[test]
    fn exit_codes_from_text() {
        assert_eq!(
            stated_exit_code(
                "Chunk ID: a\nWall time: 0.0000 seconds\nProcess exited with code 3\nOutput:\nboom"
            ),
            Some(3)
        );
        assert_eq!(stated_exit_code("Process exited with code -1\n"), Some(-1));
        // The number ends at the first character that cannot continue it; a sign only leads.
        assert_eq!(stated_exit_code("Process exited with code 3-4"), Some(3));
        assert_eq!(stated_exit_code("Process exited with code x"), None);
        assert_eq!(
            stated_exit_code("Exit code: 0\nWall time: 0 seconds"),
            Some(0)
        );
        assert_eq!(stated_exit_code("Exit code 2\nls"), Some(2));
        assert_eq!(stated_exit_code("hello"), None);
        assert_eq!(from_exit_code(0), Status::Success);
        assert_eq!(from_exit_code(-1), Status::Interrupted);
        assert_eq!(from_exit_code(2), Status::Failure);
    }

    #[test]
    fn a_codex_sandbox_exit_is_a_refusal_only_when_the_output_shows_one() {
        let exit = |rest: &str| {
            format!(
                "failed in sandbox LinuxSeccomp with execution error: sandbox denied exec error, exit code: 1, stdout: , stderr: {rest}"
            )
        };
        // The program's own failures, worded as a sandbox exit by Codex 0.34.
        assert!(!is_refusal(&exit("bash: line 1: dist: command not found")));
        assert!(!is_refusal(&exit(
            "Failed to find expected lines in src/a.py"
        )));
        assert!(!is_refusal(&exit("")));
        // The sandbox refusing a write or a syscall.
        assert!(is_refusal(&exit(
            "touch: cannot touch '/etc/x': Permission denied"
        )));
        assert!(is_refusal(&exit(
            "mkdir: cannot create directory 'x': Read-only file system"
        )));
        assert!(is_refusal(&exit("git: fatal: Operation not permitted")));
        assert!(is_refusal(&exit(
            "Error: EACCES: permission denied, open 'x'"
        )));
        // Other sandbox wordings stay refusals.
        assert!(is_refusal("blocked by the sandbox: network access"));
    }
}
