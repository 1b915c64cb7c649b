//! Exit statuses that are the program's answer, not its failure: the answer table
//! ([`ANSWERS`], extended by the `answer_codes` setting), looked up for the segment the exit
//! status belongs to ([`is_answer`]), with nested shells read two levels deep, silenced
//! probes, and a search's no-match summary; a test runner's verdict comes from `runner`.
//!
//! Guarantees: an answer needs its program, its subcommand, its code and its kind of output;
//! an output with an error line keeps the call a failure.

use super::runner::{basename, test_verdict};
use crate::shell::{self, Segment};

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
    let mut lines = crate::record::error_line::body(error)
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

/// The error text has no line that could be an error: after its `Exit code N` line, only
/// whitespace and banners (an ssh warning printed before a remote `grep` found nothing).
fn output_is_silent(error: &str) -> bool {
    crate::record::error_line::error_line(error).is_none()
}

/// Whether the output has a line that reads as an error (not the answer's own message).
fn has_error_line(error: &str, program: &str) -> bool {
    crate::record::error_line::body(error).lines().any(|l| {
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
    use super::super::tests::bash;
    use super::super::{refine, refine_with};
    use super::*;
    use crate::record::classify::Status;

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
}
