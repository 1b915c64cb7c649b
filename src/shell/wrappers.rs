//! Wrappers: programs that run another command or a script, and how to find it.
//!
//! | kind | programs | what is emitted |
//! |---|---|---|
//! | transparent | `env` (incl. `-S STR`), `timeout`, `nice`, `ionice`, `nohup`, `time`, `command` (not `-v`/`-V`), `exec`, `builtin`, `stdbuf`, `setsid`, `busybox` | only the command they run |
//! | meaningful | `sudo`, `doas`, `pkexec` (not `sudo -e/-l/-v/-K`), `xargs`, `find -exec/-execdir/-ok/-okdir`, `watch -x` | the wrapper, then its command one level deeper |
//! | meaningful, per argument | `parallel CMD… ::: ARGS` (`{}` filled, or the argument appended; no `:::`: from stdin like `xargs`) | the wrapper, then `CMD ARG` for each argument one level deeper |
//! | script runner | `bash sh zsh dash ksh ash mksh rbash fish csh tcsh yash` with `-c STR`, or reading stdin from a heredoc, here-string or `echo`/`printf`/`cat <<EOF` pipe; `eval ARGS`; `su -c STR` (or `su` reading stdin); `sudo -s`/`-i` reading stdin; `watch CMD`; `script -c STR`; `ssh HOST CMD…` (the remote command); `parallel ::: CMDLINE…`; `git -c alias.X='!CMD' X` | the runner, then its script split one level deeper |
//! | printer | `echo`, `printf`, `cat` with only a heredoc | itself; its literal output can feed a shell |
//!
//! The transparent ones carry no meaning a rule needs (DESIGN.md lists them as normalised
//! away), so `nohup rm -rf / &` is simply `rm -rf /`. The meaningful ones change who or how
//! many times a command runs, so a rule must be able to see them (`^sudo\b`) as well as what
//! they run (`^rm\b`). Option parsing follows each tool's getopt string (options stop at the
//! first operand); an option not listed as taking a value is assumed to take none.

use crate::shell::lexer;
use crate::shell::quote::unescape_print;
use crate::shell::sink::{Job, Sink};

/// What a program does with the rest of its argv.
pub(crate) enum Kind {
    /// Nothing special: emit as is.
    Plain,
    /// A transparent wrapper: replace the command with this one.
    Unwrap(Vec<String>),
    /// A meaningful wrapper: emit it, then each of these commands one level deeper.
    Wraps(Vec<Vec<String>>),
    /// A script runner: emit it, then split this script (if known) one level deeper.
    Runs(Option<String>),
    /// A printer: emit it; it prints this literal (if known).
    Prints(Option<String>),
}

/// Shells: each runs `-c STR` or reads its script on stdin. The one list; the command model
/// uses it too.
pub(crate) const SHELLS: &[&str] = &[
    "bash", "sh", "zsh", "dash", "ksh", "ash", "mksh", "rbash", "fish", "csh", "tcsh", "yash",
];

/// A wrapper's options: short ones taking a value (glued or next word), short ones taking an
/// optional glued value (ending the cluster), long ones taking the next word as value.
struct Spec {
    value_short: &'static str,
    glued_short: &'static str,
    value_long: &'static [&'static str],
}

const NONE: Spec = Spec {
    value_short: "",
    glued_short: "",
    value_long: &[],
};
const TIMEOUT: Spec = Spec {
    value_short: "sk",
    glued_short: "",
    value_long: &["signal", "kill-after"],
};
const NICE: Spec = Spec {
    value_short: "n",
    glued_short: "",
    value_long: &["adjustment"],
};
const IONICE: Spec = Spec {
    value_short: "cnpPu",
    glued_short: "",
    value_long: &["class", "classdata", "pid", "pgid", "uid"],
};
const TIME: Spec = Spec {
    value_short: "fo",
    glued_short: "",
    value_long: &["format", "output"],
};
const EXEC: Spec = Spec {
    value_short: "a",
    glued_short: "",
    value_long: &[],
};
const STDBUF: Spec = Spec {
    value_short: "ioe",
    glued_short: "",
    value_long: &["input", "output", "error"],
};
const SUDO: Spec = Spec {
    value_short: "CDghpRrTtUu",
    glued_short: "",
    value_long: &[
        "close-from",
        "chdir",
        "group",
        "host",
        "prompt",
        "chroot",
        "role",
        "type",
        "command-timeout",
        "other-user",
        "user",
    ],
};
const DOAS: Spec = Spec {
    value_short: "Cu",
    glued_short: "",
    value_long: &[],
};
const PKEXEC: Spec = Spec {
    value_short: "",
    glued_short: "",
    value_long: &["user"],
};
const XARGS: Spec = Spec {
    value_short: "adEILnPs",
    glued_short: "eil",
    value_long: &[
        "arg-file",
        "delimiter",
        "max-args",
        "max-procs",
        "max-chars",
        "process-slot-var",
    ],
};
const SSH: Spec = Spec {
    value_short: "BbcDEeFIiJLlmOoPpQRSWw",
    glued_short: "",
    value_long: &[],
};
const PARALLEL: Spec = Spec {
    value_short: "jJSNnIEdCaL",
    glued_short: "",
    value_long: &[
        "jobs",
        "sshlogin",
        "results",
        "joblog",
        "tmpdir",
        "workdir",
        "colsep",
        "delimiter",
        "arg-file",
        "max-args",
        "max-replace-args",
        "replace",
        "timeout",
        "delay",
        "memfree",
        "load",
        "retries",
        "halt",
        "env",
        "basefile",
        "return",
        "transfer-file",
    ],
};
const WATCH: Spec = Spec {
    value_short: "nq",
    glued_short: "d",
    value_long: &["interval", "equexit"],
};

/// Skips options from `argv[1]`; returns the index of the first operand and the short
/// flags seen (not counting values).
fn skip_opts(argv: &[String], spec: &Spec) -> (usize, String) {
    let mut flags = String::new();
    let mut i = 1;
    while let Some(a) = argv.get(i) {
        if a == "--" {
            i += 1;
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            i += if !long.contains('=') && spec.value_long.contains(&long) {
                2
            } else {
                1
            };
            continue;
        }
        let Some(cluster) = a.strip_prefix('-').filter(|c| !c.is_empty()) else {
            break;
        };
        i += 1;
        for (k, ch) in cluster.char_indices() {
            if spec.glued_short.contains(ch) {
                flags.push(ch);
                break;
            }
            if spec.value_short.contains(ch) {
                if k + ch.len_utf8() == cluster.len() {
                    i += 1;
                }
                break;
            }
            flags.push(ch);
        }
    }
    (i.min(argv.len()), flags)
}

fn unwrap_from(argv: &[String], i: usize) -> Kind {
    match argv.get(i.max(1)..) {
        Some(rest) if !rest.is_empty() => Kind::Unwrap(rest.to_vec()),
        _ => Kind::Plain,
    }
}

fn wraps_from(argv: &[String], i: usize) -> Kind {
    match argv.get(i.max(1)..) {
        Some(rest) if !rest.is_empty() => Kind::Wraps(vec![rest.to_vec()]),
        _ => Kind::Plain,
    }
}

/// Classifies `argv` (non-empty, program already normalised).
pub(crate) fn classify(argv: &[String], job: &Job, depth: u8, sink: &mut Sink) -> Kind {
    let Some(prog) = argv.first() else {
        return Kind::Plain;
    };
    let opts = |spec| skip_opts(argv, spec).0;
    match prog.as_str() {
        "env" => env(argv, depth, sink),
        "timeout" => unwrap_from(argv, opts(&TIMEOUT) + 1),
        "nice" => unwrap_from(argv, opts(&NICE)),
        "ionice" => unwrap_from(argv, opts(&IONICE)),
        "nohup" | "setsid" | "builtin" => unwrap_from(argv, opts(&NONE)),
        "time" => unwrap_from(argv, opts(&TIME)),
        "exec" => unwrap_from(argv, opts(&EXEC)),
        "stdbuf" => unwrap_from(argv, opts(&STDBUF)),
        "command" => {
            let (i, flags) = skip_opts(argv, &NONE);
            if flags.contains(['v', 'V']) {
                Kind::Plain
            } else {
                unwrap_from(argv, i)
            }
        }
        "busybox" if argv.get(1).is_some_and(|a| !a.starts_with('-')) => unwrap_from(argv, 1),
        "sudo" => {
            let (i, flags) = skip_opts(argv, &SUDO);
            let query = argv[1..i]
                .iter()
                .any(|a| matches!(a.as_str(), "--edit" | "--list" | "--validate"));
            if query || flags.contains(['e', 'l', 'v', 'V', 'K']) {
                Kind::Plain
            } else if i >= argv.len() && flags.contains(['s', 'i']) {
                // `sudo -s`/`sudo -i` with no command: a root shell reading stdin.
                Kind::Runs(job.stdin_text().map(str::to_owned))
            } else {
                wraps_from(argv, i)
            }
        }
        "doas" => wraps_from(argv, opts(&DOAS)),
        "pkexec" => wraps_from(argv, opts(&PKEXEC)),
        "xargs" => wraps_from(argv, opts(&XARGS)),
        "find" => find(argv),
        "eval" if argv.len() > 1 => Kind::Runs(Some(argv[1..].join(" "))),
        "su" => Kind::Runs(su_command(argv).or_else(|| job.stdin_text().map(str::to_owned))),
        "parallel" => parallel(argv),
        // `ssh [OPTS] HOST CMD…`: the remote command, read as a script (its paths are the
        // remote machine's, classified the same way).
        "ssh" => {
            let i = skip_opts(argv, &SSH).0 + 1;
            match argv.get(i..) {
                Some(cmd) if !cmd.is_empty() => Kind::Runs(Some(cmd.join(" "))),
                _ => Kind::Plain,
            }
        }
        "script" => script_command(argv).map_or(Kind::Plain, |c| Kind::Runs(Some(c))),
        "git" => git_shell_alias(argv).map_or(Kind::Plain, |c| Kind::Runs(Some(c))),
        "watch" => {
            let (i, flags) = skip_opts(argv, &WATCH);
            let exec = flags.contains('x') || argv[1..i].iter().any(|a| a == "--exec");
            if exec {
                wraps_from(argv, i)
            } else if i < argv.len() {
                Kind::Runs(Some(argv[i..].join(" ")))
            } else {
                Kind::Plain
            }
        }
        "echo" => Kind::Prints(Some(echo_text(argv))),
        "printf" => Kind::Prints(printf_text(argv)),
        "cat" if argv.len() == 1 || (argv.len() == 2 && argv[1] == "-") => {
            Kind::Prints(job.stdin_text().map(str::to_owned))
        }
        p if SHELLS.contains(&p) => Kind::Runs(shell_script(argv, job)),
        _ => Kind::Plain,
    }
}

/// `env [-i] [-u NAME] [-C DIR] [-S STRING] [NAME=VALUE]… CMD`: `-S` splits its string into
/// arguments that take its place (they may hold more options).
fn env(argv: &[String], depth: u8, sink: &mut Sink) -> Kind {
    let mut i = 1;
    let mut split: Option<&str> = None;
    while let Some(a) = argv.get(i) {
        if a == "--" {
            i += 1;
            break;
        }
        if a == "-" {
            i += 1;
            continue;
        }
        if let Some(long) = a.strip_prefix("--") {
            i += 1;
            if let Some(s) = long.strip_prefix("split-string=") {
                split = Some(s);
                break;
            }
            match long {
                "split-string" => {
                    split = argv.get(i).map(String::as_str);
                    i += 1;
                    break;
                }
                "unset" | "chdir" => i += 1,
                _ => {}
            }
            continue;
        }
        let Some(cluster) = a.strip_prefix('-') else {
            break;
        };
        i += 1;
        for (k, ch) in cluster.char_indices() {
            let rest = &cluster[k + ch.len_utf8()..];
            match ch {
                'u' | 'C' => {
                    i += usize::from(rest.is_empty());
                    break;
                }
                'S' if rest.is_empty() => {
                    split = Some(argv.get(i).map_or("", String::as_str));
                    i += 1;
                    break;
                }
                'S' => {
                    split = Some(rest);
                    break;
                }
                _ => {}
            }
        }
        if split.is_some() {
            break;
        }
    }
    let i = i.min(argv.len());
    let Some(s) = split else {
        return unwrap_from(argv, i);
    };
    let (words, problem) = lexer::words(s, depth);
    if let Some(p) = problem {
        sink.problem(&p);
    }
    let mut next = vec!["env".to_owned()];
    next.extend(words);
    next.extend_from_slice(&argv[i..]);
    Kind::Unwrap(next)
}

/// Each `-exec CMD… ;|+` (and `-execdir`, `-ok`, `-okdir`) of a `find`.
fn find(argv: &[String]) -> Kind {
    let mut cmds = Vec::new();
    let mut i = 1;
    while i < argv.len() {
        if matches!(argv[i].as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") {
            let start = i + 1;
            let end = argv[start..]
                .iter()
                .position(|a| a == ";" || a == "+")
                .map_or(argv.len(), |p| start + p);
            if end > start {
                cmds.push(argv[start..end].to_vec());
            }
            i = end + 1;
        } else {
            i += 1;
        }
    }
    if cmds.is_empty() {
        Kind::Plain
    } else {
        Kind::Wraps(cmds)
    }
}

/// GNU `parallel [OPTS] CMD… ::: ARGS…`: `CMD` once per argument, `{}` (and `{.}`, `{/}` …)
/// replaced by it or the argument appended; with no `CMD`, each argument is itself a command
/// line; with no `:::`, the arguments come from stdin (the model appends what a pipe's
/// `echo` printed, as for `xargs`).
fn parallel(argv: &[String]) -> Kind {
    let start = skip_opts(argv, &PARALLEL).0.max(1);
    let rest = &argv[start.min(argv.len())..];
    let sep = rest.iter().position(|a| a.starts_with(":::"));
    let (cmd, inputs): (&[String], Vec<&String>) = match sep {
        Some(k) => (
            &rest[..k],
            rest[k..].iter().filter(|a| !a.starts_with(":::")).collect(),
        ),
        None => (rest, Vec::new()),
    };
    if cmd.is_empty() {
        return if inputs.is_empty() {
            Kind::Plain
        } else {
            let lines: Vec<&str> = inputs.iter().map(|s| s.as_str()).collect();
            Kind::Runs(Some(lines.join("\n")))
        };
    }
    if inputs.is_empty() {
        return Kind::Wraps(vec![cmd.to_vec()]);
    }
    let placeholder = |w: &str| w.contains('{') && w.contains('}');
    let has_slot = cmd.iter().any(|w| placeholder(w));
    let runs = inputs
        .iter()
        .map(|input| {
            let mut words: Vec<String> = cmd
                .iter()
                .map(|w| {
                    if placeholder(w) {
                        fill_slots(w, input)
                    } else {
                        w.clone()
                    }
                })
                .collect();
            if !has_slot {
                words.push((*input).clone());
            }
            words
        })
        .collect();
    Kind::Wraps(runs)
}

/// `{}`, `{.}`, `{/}`, `{//}`, `{/.}`, `{#}`-free replacement strings of `parallel` filled
/// with `input` (the path-trimming ones get the input unchanged: a safe over-approximation
/// for classifying it).
fn fill_slots(word: &str, input: &str) -> String {
    let mut out = word.to_owned();
    for slot in ["{}", "{.}", "{/}", "{//}", "{/.}"] {
        out = out.replace(slot, input);
    }
    out
}

/// `script [-q] -c CMD [FILE]` (util-linux): runs `CMD` through a shell.
fn script_command(argv: &[String]) -> Option<String> {
    let mut it = argv.iter().skip(1);
    while let Some(a) = it.next() {
        if a == "-c" || a == "--command" {
            return it.next().cloned();
        }
        if let Some(c) = a.strip_prefix("--command=") {
            return Some(c.to_owned());
        }
        if let Some(cluster) = a.strip_prefix('-').filter(|c| !c.starts_with('-'))
            && let Some(k) = cluster.find('c')
        {
            let glued = &cluster[k + 1..];
            return if glued.is_empty() {
                it.next().cloned()
            } else {
                Some(glued.to_owned())
            };
        }
    }
    None
}

/// `git -c alias.NAME='!CMD' … NAME ARGS`: git runs `CMD ARGS` through a shell.
fn git_shell_alias(argv: &[String]) -> Option<String> {
    let mut i = 1;
    while i < argv.len() {
        let kv = match argv[i].as_str() {
            "-c" => {
                i += 1;
                argv.get(i).map(String::as_str)
            }
            a => a.strip_prefix("-c").filter(|v| v.starts_with("alias.")),
        };
        if let Some((name, cmd)) = kv
            .and_then(|kv| kv.strip_prefix("alias."))
            .and_then(|kv| kv.split_once('='))
            && let Some(cmd) = cmd.strip_prefix('!')
            && let Some(at) = argv[i + 1..].iter().position(|w| w == name)
        {
            let mut script = cmd.to_owned();
            for a in &argv[i + 2 + at..] {
                script.push(' ');
                script.push_str(&crate::shell::quote::quote_word(a));
            }
            return Some(script);
        }
        i += 1;
    }
    None
}

/// The script a shell runs: its `-c` argument, or what it reads on stdin when it has no
/// script file operand (or has `-s`).
fn shell_script(argv: &[String], job: &Job) -> Option<String> {
    let (mut c, mut s) = (false, false);
    let mut i = 1;
    while let Some(a) = argv.get(i) {
        if a == "--" || a == "-" {
            i += 1;
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            if let Some(cmd) = long.strip_prefix("command=") {
                return Some(cmd.to_owned());
            }
            if long == "command" {
                return argv.get(i + 1).cloned();
            }
            i += if matches!(long, "rcfile" | "init-file") {
                2
            } else {
                1
            };
            continue;
        }
        let Some(cluster) = a
            .strip_prefix('-')
            .or_else(|| a.strip_prefix('+'))
            .filter(|c| !c.is_empty())
        else {
            break;
        };
        i += 1;
        for ch in cluster.chars() {
            match ch {
                'c' => c = true,
                's' => s = true,
                'o' | 'O' => i += 1,
                _ => {}
            }
        }
    }
    if c {
        // `sh -c SCRIPT NAME ARGS…`: `$1`… `$@` in the script are the ARGS.
        let script = argv.get(i)?;
        let params = argv.get(i + 2..).unwrap_or_default();
        if params.is_empty() || !script.contains('$') {
            return Some(script.clone());
        }
        let all = params.join(" ");
        let mut filled = script
            .replace("\"$@\"", "$@")
            .replace("\"$*\"", "$*")
            .replace("$@", &all)
            .replace("$*", &all);
        for (k, a) in params.iter().enumerate().take(9).rev() {
            filled = filled.replace(&format!("${}", k + 1), a);
            filled = filled.replace(&format!("${{{}}}", k + 1), a);
        }
        return Some(filled);
    }
    if i < argv.len() && !s {
        return None;
    }
    job.stdin_text().map(str::to_owned)
}

/// `su … -c CMD` / `--command=CMD` / `--session-command CMD` (without one, `su` runs a
/// shell that reads stdin).
fn su_command(argv: &[String]) -> Option<String> {
    let mut it = argv.iter().skip(1);
    while let Some(a) = it.next() {
        if matches!(a.as_str(), "-c" | "--command" | "--session-command") {
            return it.next().cloned();
        }
        if let Some(c) = a
            .strip_prefix("--command=")
            .or_else(|| a.strip_prefix("--session-command="))
        {
            return Some(c.to_owned());
        }
    }
    None
}

/// What `echo [-neE]… ARGS` prints.
fn echo_text(argv: &[String]) -> String {
    let mut esc = false;
    let mut i = 1;
    while let Some(flags) = argv.get(i).and_then(|a| a.strip_prefix('-')) {
        if flags.is_empty() || !flags.chars().all(|c| matches!(c, 'n' | 'e' | 'E')) {
            break;
        }
        esc |= flags.contains('e');
        i += 1;
    }
    let text = argv[i.min(argv.len())..].join(" ");
    if esc { unescape_print(&text) } else { text }
}

/// What `printf FORMAT ARGS` prints, with `%s`/`%b` filled in order (other conversions kept).
fn printf_text(argv: &[String]) -> Option<String> {
    let i = if argv.get(1).is_some_and(|a| a == "--") {
        2
    } else {
        1
    };
    let fmt = argv.get(i)?;
    if fmt == "-v" {
        return None;
    }
    let mut values = argv[i + 1..].iter();
    let mut out = String::with_capacity(fmt.len());
    let mut chars = fmt.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('%', Some('s' | 'b')) => {
                chars.next();
                out.push_str(values.next().map_or("", String::as_str));
            }
            ('%', Some('%')) => {
                chars.next();
                out.push('%');
            }
            _ => out.push(c),
        }
    }
    Some(unescape_print(&out))
}
