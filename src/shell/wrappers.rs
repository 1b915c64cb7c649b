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
use crate::shell::options::{Grammar, Opts, parse};
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

/// The transparent wrappers: replaced by the command they run.
pub(crate) const TRANSPARENT: &[&str] = &[
    "env", "timeout", "nice", "ionice", "nohup", "setsid", "builtin", "time", "exec", "stdbuf",
    "command", "busybox",
];

/// A grammar that stops at the first operand and knows only the options given.
const fn wrapper(short_value: &'static str, long: &'static [(&'static str, bool)]) -> Grammar {
    Grammar {
        short_value,
        short_optional: "",
        long,
        stop_at_operand: true,
        last: &[],
    }
}

const NONE: Grammar = wrapper("", &[]);
const TIMEOUT: Grammar = wrapper(
    "sk",
    &[
        ("signal", true),
        ("kill-after", true),
        ("foreground", false),
        ("preserve-status", false),
        ("verbose", false),
    ],
);
const NICE: Grammar = wrapper("n", &[("adjustment", true)]);
const IONICE: Grammar = wrapper(
    "cnpPu",
    &[
        ("class", true),
        ("classdata", true),
        ("pid", true),
        ("pgid", true),
        ("uid", true),
    ],
);
const TIME: Grammar = wrapper("fo", &[("format", true), ("output", true)]);
const EXEC: Grammar = wrapper("a", &[]);
const STDBUF: Grammar = wrapper("ioe", &[("input", true), ("output", true), ("error", true)]);
const ENV: Grammar = Grammar {
    short_value: "uCS",
    short_optional: "",
    long: &[
        ("unset", true),
        ("chdir", true),
        ("split-string", true),
        ("ignore-environment", false),
        ("null", false),
    ],
    stop_at_operand: true,
    last: &["-S", "--split-string"],
};
const SUDO: Grammar = wrapper(
    "CDghpRrTtUu",
    &[
        ("close-from", true),
        ("chdir", true),
        ("group", true),
        ("host", true),
        ("prompt", true),
        ("chroot", true),
        ("role", true),
        ("type", true),
        ("command-timeout", true),
        ("other-user", true),
        ("user", true),
    ],
);
const DOAS: Grammar = wrapper("Cu", &[]);
const PKEXEC: Grammar = wrapper("", &[("user", true)]);
const XARGS: Grammar = Grammar {
    short_value: "adEILnPs",
    short_optional: "eil",
    long: &[
        ("arg-file", true),
        ("delimiter", true),
        ("max-args", true),
        ("max-procs", true),
        ("max-chars", true),
        ("process-slot-var", true),
    ],
    stop_at_operand: true,
    last: &[],
};
const SSH: Grammar = wrapper("BbcDEeFIiJLlmOoPpQRSWw", &[]);
const PARALLEL: Grammar = wrapper(
    "jJSNnIEdCaL",
    &[
        ("jobs", true),
        ("sshlogin", true),
        ("results", true),
        ("joblog", true),
        ("tmpdir", true),
        ("workdir", true),
        ("colsep", true),
        ("delimiter", true),
        ("arg-file", true),
        ("max-args", true),
        ("max-replace-args", true),
        ("replace", true),
        ("timeout", true),
        ("delay", true),
        ("memfree", true),
        ("load", true),
        ("retries", true),
        ("halt", true),
        ("env", true),
        ("basefile", true),
        ("return", true),
        ("transfer-file", true),
    ],
);
const WATCH: Grammar = Grammar {
    short_value: "nq",
    short_optional: "d",
    long: &[("interval", true), ("equexit", true)],
    stop_at_operand: true,
    last: &[],
};

/// `argv`'s options parsed by `g`, and the index in `argv` of its first operand.
fn options(argv: &[String], g: &Grammar) -> (Opts, usize) {
    let o = parse(argv.get(1..).unwrap_or_default(), g);
    let i = 1 + o.rest;
    (o, i)
}

/// Where the command a transparent wrapper runs starts in `argv` (`argv[0]` its name,
/// path already stripped); `None` when `argv[0]` is no transparent wrapper or runs nothing
/// here (`command -v x`, `busybox --list`, `nohup` alone). `env -S STRING` starts after the
/// string (the splitter puts the string's words in front).
pub(crate) fn transparent_start(argv: &[String]) -> Option<usize> {
    let at = |g| options(argv, g).1;
    let i = match argv.first()?.as_str() {
        "env" => env_options(argv).1,
        "timeout" => at(&TIMEOUT) + 1,
        "nice" => at(&NICE),
        "ionice" => at(&IONICE),
        "nohup" | "setsid" | "builtin" => at(&NONE),
        "time" => at(&TIME),
        "exec" => at(&EXEC),
        "stdbuf" => at(&STDBUF),
        "command" => {
            let (o, i) = options(argv, &NONE);
            if o.short.contains(&'v') || o.short.contains(&'V') {
                return None;
            }
            i
        }
        "busybox" if argv.get(1).is_some_and(|a| !a.starts_with('-')) => 1,
        _ => return None,
    };
    (i < argv.len()).then_some(i)
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
    let opts = |g| options(argv, g).1;
    match prog.as_str() {
        "env" => env(argv, depth, sink),
        p if TRANSPARENT.contains(&p) => {
            transparent_start(argv).map_or(Kind::Plain, |i| Kind::Unwrap(argv[i..].to_vec()))
        }
        "sudo" => {
            let (o, i) = options(argv, &SUDO);
            let query = argv[1..i]
                .iter()
                .any(|a| matches!(a.as_str(), "--edit" | "--list" | "--validate"));
            let flag = |f: &[char]| o.short.iter().any(|c| f.contains(c));
            if query || flag(&['e', 'l', 'v', 'V', 'K']) {
                Kind::Plain
            } else if i >= argv.len() && flag(&['s', 'i']) {
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
            let i = opts(&SSH) + 1;
            match argv.get(i..) {
                Some(cmd) if !cmd.is_empty() => Kind::Runs(Some(cmd.join(" "))),
                _ => Kind::Plain,
            }
        }
        "script" => script_command(argv).map_or(Kind::Plain, |c| Kind::Runs(Some(c))),
        "git" => git_shell_alias(argv).map_or(Kind::Plain, |c| Kind::Runs(Some(c))),
        "watch" => {
            let (o, i) = options(argv, &WATCH);
            let exec = o.short.contains(&'x') || argv[1..i].iter().any(|a| a == "--exec");
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
    let (split, i) = env_options(argv);
    let Some(s) = split else {
        return match argv.get(i..) {
            Some(rest) if !rest.is_empty() => Kind::Unwrap(rest.to_vec()),
            _ => Kind::Plain,
        };
    };
    let (words, problem) = lexer::words(&s, depth);
    if let Some(p) = problem {
        sink.problem(&p);
    }
    let mut next = vec!["env".to_owned()];
    next.extend(words);
    next.extend_from_slice(&argv[i..]);
    Kind::Unwrap(next)
}

/// `env`'s `-S` string, if any, and where its options end (a lone `-` is `-i`).
fn env_options(argv: &[String]) -> (Option<String>, usize) {
    let mut i = 1;
    loop {
        let o = parse(argv.get(i..).unwrap_or_default(), &ENV);
        i += o.rest;
        if o.values
            .last()
            .is_some_and(|(k, _)| ENV.last.contains(&k.as_str()))
        {
            return (o.values.last().map(|(_, v)| v.clone()), i);
        }
        if argv.get(i).is_some_and(|a| a == "-") {
            i += 1;
            continue;
        }
        return (None, i);
    }
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
    let start = options(argv, &PARALLEL).1;
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
