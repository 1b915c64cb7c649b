//! Wrappers: programs that run another command.
//!
//! - *Transparent* (`env` incl. `-S STR`, `timeout`, `nice`, `ionice`, `nohup`, `setsid`,
//!   `time`, `stdbuf`, `taskset` (not `-p`), `unbuffer`, `busybox`; also the builtins `command`, `exec`, `builtin` in
//!   `builtins.rs`): they carry no meaning a rule needs (DESIGN.md lists them as normalised
//!   away), so `nohup rm -rf / &` is simply `rm -rf /`. Each row's [`Role::Transparent`]
//!   function says where its command starts, by its grammar (options stop at the first
//!   operand; an option not listed as taking a value takes none).
//! - *Meaningful* (`xargs`, `parallel`, `watch -x`; `sudo`, `doas`, `pkexec` in
//!   `privilege.rs`; `find -exec` in `files.rs`): they change who runs a command or how many
//!   times, so a rule must see them (`^xargs\b`) as well as what they run (`^rm\b`): the
//!   wrapper, then its command one level deeper. `parallel CMD… ::: ARGS` runs `CMD ARG` per
//!   argument (`{}` filled, or the argument appended; with no `:::`, from stdin like `xargs`).
//!   `watch CMD` (no `-x`) runs its words as a script.

use super::row::{Role, Row, Shape, first_operand, runs_at, unwrap_at, wrapper, wraps_at};
use crate::shell::options::{Grammar, PLAIN, parse};
use crate::shell::syntax::lexer;
use crate::shell::syntax::sink::{Job, Kind, Sink};

const NONE: Grammar = wrapper("", &[]);
const TIMEOUT_OPTIONS: Grammar = wrapper(
    "sk",
    &[
        ("signal", true),
        ("kill-after", true),
        ("foreground", false),
        ("preserve-status", false),
        ("verbose", false),
    ],
);
const TASKSET_OPTIONS: Grammar = wrapper(
    "",
    &[("all-tasks", false), ("cpu-list", false), ("pid", false)],
);
const NICE_OPTIONS: Grammar = wrapper("n", &[("adjustment", true)]);
const IONICE_OPTIONS: Grammar = wrapper(
    "cnpPu",
    &[
        ("class", true),
        ("classdata", true),
        ("pid", true),
        ("pgid", true),
        ("uid", true),
    ],
);
const TIME_OPTIONS: Grammar = wrapper("fo", &[("format", true), ("output", true)]);
const STDBUF_OPTIONS: Grammar =
    wrapper("ioe", &[("input", true), ("output", true), ("error", true)]);
const ENV_OPTIONS: Grammar = Grammar {
    short_value: "uCS",
    long: &[
        ("unset", true),
        ("chdir", true),
        ("split-string", true),
        ("ignore-environment", false),
        ("null", false),
    ],
    stop_at_operand: true,
    last: &["-S", "--split-string"],
    ..PLAIN
};
const XARGS_OPTIONS: Grammar = Grammar {
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
    ..PLAIN
};
const PARALLEL_OPTIONS: Grammar = wrapper(
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
const WATCH_OPTIONS: Grammar = Grammar {
    short_value: "nq",
    short_optional: "d",
    long: &[("interval", true), ("equexit", true)],
    stop_at_operand: true,
    ..PLAIN
};

/// A transparent wrapper whose command starts after its options and `skip` operands.
fn after(argv: &[String], g: &Grammar, skip: usize) -> Option<usize> {
    let i = first_operand(argv, g) + skip;
    (i < argv.len()).then_some(i)
}

pub(super) const ENV: Row = Row {
    options: &ENV_OPTIONS,
    role: Role::Transparent(|argv| {
        let i = env_options(argv).1;
        (i < argv.len()).then_some(i)
    }),
    unwrap: Some(env),
    ..Row::PLAIN
};
pub(super) const TIMEOUT: Row = Row {
    options: &TIMEOUT_OPTIONS,
    // After the options, the duration.
    role: Role::Transparent(|argv| after(argv, &TIMEOUT_OPTIONS, 1)),
    ..Row::PLAIN
};
pub(super) const NICE: Row = Row {
    options: &NICE_OPTIONS,
    role: Role::Transparent(|argv| after(argv, &NICE_OPTIONS, 0)),
    ..Row::PLAIN
};
pub(super) const IONICE: Row = Row {
    options: &IONICE_OPTIONS,
    role: Role::Transparent(|argv| after(argv, &IONICE_OPTIONS, 0)),
    ..Row::PLAIN
};
/// `nohup`, `setsid`: no options of their own that take a value.
pub(super) const NOHUP: Row = Row {
    options: &NONE,
    role: Role::Transparent(|argv| after(argv, &NONE, 0)),
    ..Row::PLAIN
};
pub(super) const TIME: Row = Row {
    options: &TIME_OPTIONS,
    role: Role::Transparent(|argv| after(argv, &TIME_OPTIONS, 0)),
    ..Row::PLAIN
};
pub(super) const STDBUF: Row = Row {
    options: &STDBUF_OPTIONS,
    role: Role::Transparent(|argv| after(argv, &STDBUF_OPTIONS, 0)),
    ..Row::PLAIN
};
/// `busybox APPLET ARGS`: the applet (an option first, `busybox --list`, runs none).
pub(super) const BUSYBOX: Row = Row {
    role: Role::Transparent(|argv| {
        argv.get(1)
            .is_some_and(|a| !a.starts_with('-'))
            .then_some(1)
    }),
    ..Row::PLAIN
};
/// `taskset [-a] [-c] MASK CMD…` (util-linux): `CMD` on the CPUs in `MASK`; with `-p` it
/// changes a running pid's affinity and runs nothing.
pub(super) const TASKSET: Row = Row {
    options: &TASKSET_OPTIONS,
    role: Role::Transparent(|argv| {
        let o = parse(argv.get(1..).unwrap_or_default(), &TASKSET_OPTIONS);
        if o.short.contains(&'p') || o.has_long("pid") {
            return None;
        }
        // After the options, the mask or CPU list.
        let i = 1 + o.rest + 1;
        (i < argv.len()).then_some(i)
    }),
    ..Row::PLAIN
};
/// `unbuffer [-p] CMD…` (expect): `CMD` with its output unbuffered.
pub(super) const UNBUFFER: Row = Row {
    options: &NONE,
    role: Role::Transparent(|argv| after(argv, &NONE, 0)),
    ..Row::PLAIN
};
pub(super) const XARGS: Row = Row {
    options: &XARGS_OPTIONS,
    role: Role::Meaningful,
    unwrap: Some(|argv, _, _, _| wraps_at(argv, first_operand(argv, &XARGS_OPTIONS))),
    ..Row::PLAIN
};
pub(super) const PARALLEL: Row = Row {
    options: &PARALLEL_OPTIONS,
    role: Role::Meaningful,
    unwrap: Some(|argv, _, _, _| parallel(argv)),
    ..Row::PLAIN
};
pub(super) const WATCH: Row = Row {
    options: &WATCH_OPTIONS,
    role: Role::Meaningful,
    unwrap: Some(|argv, _, _, _| watch(argv)),
    shape: Shape::Name,
    ..Row::PLAIN
};

/// `watch -x CMD…` runs `CMD` as a wrapper does; `watch CMD…` runs its words as a script.
fn watch(argv: &[String]) -> Kind {
    let o = parse(argv.get(1..).unwrap_or_default(), &WATCH_OPTIONS);
    let i = 1 + o.rest;
    let exec = o.short.contains(&'x') || argv[1..i].iter().any(|a| a == "--exec");
    if exec {
        wraps_at(argv, i)
    } else {
        runs_at(argv, i)
    }
}

/// `env [-i] [-u NAME] [-C DIR] [-S STRING] [NAME=VALUE]… CMD`: `-S` splits its string into
/// arguments that take its place (they may hold more options).
fn env(argv: &[String], _: &Job, depth: u8, sink: &mut Sink) -> Kind {
    let (split, i) = env_options(argv);
    let Some(s) = split else {
        return unwrap_at(argv, i);
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
        let o = parse(argv.get(i..).unwrap_or_default(), &ENV_OPTIONS);
        i += o.rest;
        if o.values
            .last()
            .is_some_and(|(k, _)| ENV_OPTIONS.last.contains(&k.as_str()))
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

/// GNU `parallel [OPTS] CMD… ::: ARGS…`: `CMD` once per argument, `{}` (and `{.}`, `{/}` …)
/// replaced by it or the argument appended; with no `CMD`, each argument is itself a command
/// line; with no `:::`, the arguments come from stdin (the model appends what a pipe's
/// `echo` printed, as for `xargs`).
fn parallel(argv: &[String]) -> Kind {
    let start = first_operand(argv, &PARALLEL_OPTIONS);
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

#[cfg(test)]
mod tests {
    use crate::shell::programs::texts;
    use crate::shell::split;

    #[test]
    fn transparent_wrappers_are_replaced_by_their_command() {
        assert_eq!(
            texts("env -i -u X A=1 timeout -s KILL 5 rm -rf /"),
            ["rm -rf /"]
        );
        assert_eq!(texts("env -S 'rm -rf' /"), ["rm -rf /"]);
        assert_eq!(
            texts("nice -n 5 ionice -c 3 stdbuf -o L nohup rm x"),
            ["rm x"]
        );
        assert_eq!(texts("busybox rm x"), ["rm x"]);
        assert_eq!(texts("busybox --list"), ["busybox --list"]);
    }

    #[test]
    fn taskset_runs_its_command_after_the_mask_unless_it_sets_a_pid() {
        assert_eq!(texts("taskset 0x3 rm -rf /"), ["rm -rf /"]);
        assert_eq!(texts("taskset -c 0,1 rm -rf /"), ["rm -rf /"]);
        assert_eq!(texts("taskset --cpu-list 0-3 nice rm x"), ["rm x"]);
        assert_eq!(texts("taskset -p 0x3 1234"), ["taskset -p 0x3 1234"]);
        assert_eq!(texts("taskset -ap 3 1234"), ["taskset -ap 3 1234"]);
        assert_eq!(texts("taskset 0x3"), ["taskset 0x3"]);
        assert_eq!(split("taskset 1 rm x").wrappers, 1);
    }

    #[test]
    fn unbuffer_runs_its_command() {
        assert_eq!(texts("unbuffer -p rm -rf /"), ["rm -rf /"]);
        assert_eq!(texts("unbuffer"), ["unbuffer"]);
    }

    #[test]
    fn meaningful_wrappers_keep_their_segment() {
        assert_eq!(
            texts("xargs -I{} -n1 rm {}"),
            ["xargs -I{} -n1 rm {}", "rm {}"]
        );
        assert_eq!(texts("watch -n 1 -x rm x"), ["watch -n 1 -x rm x", "rm x"]);
        assert_eq!(texts("watch -d 'rm x'"), ["watch -d 'rm x'", "rm x"]);
        assert_eq!(
            texts("parallel rm {} ::: a b"),
            ["parallel rm {} ::: a b", "rm a", "rm b"]
        );
    }
}
