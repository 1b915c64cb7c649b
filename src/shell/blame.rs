//! Blame: the segment of a shell command a failure is attributed to, and why.
//!
//! One answer for the recorder (the shape and the `blamed` column it stores with a call) and
//! for derive (the cluster a failure joins), so both put a failure on the same program. In
//! order of evidence:
//! 1. **The error names it** ([`Why::NotFound`], [`Why::WrapperNamed`], [`Why::NamedByError`],
//!    [`Why::Spawned`]): a line of the error text says which program spoke — `X: command not
//!    found` in bash/sh/zsh/fish/PowerShell/cmd spellings (X is blamed though X is not on
//!    `PATH`), a `prog:` or PowerShell `Cmdlet : …` prefix, a known program's own line
//!    (`fatal:`/`error:` are git's, `error[E…]` cargo's, `npm ERR!` npm's, a Python traceback
//!    the python segment's), or an `ssh:` line of a program that spawns ssh (`git push`,
//!    `scp`, `rsync`) when no segment runs ssh itself: the agent ran git, so the rule must
//!    be about git. A line naming a wrapper (`sudo: a terminal is required`,
//!    `timeout: failed to run command`, `xargs: …`) blames the wrapper, not what it runs.
//! 2. **A signal killed the shell** ([`Why::KilledOwnShell`]): the exit status says a signal
//!    ended the command (128+N) and one of its segments sends signals (`pkill -f x`,
//!    `killall`, `kill`): the command killed itself, whatever ran after.
//! 3. **The error mentions it** ([`Why::Mentioned`]) anywhere as a word (weak, so never a
//!    consumer stage).
//! 4. **The exit status** ([`Why::ExitStatus`], [`Why::Wrapped`], [`Why::Producer`]): the last
//!    command that ran, where a wrapper or a script runner speaks through the command it
//!    runs (`sudo rm`, `bash -c '…'`, `xargs grep`), and a pipeline's consumer stage (`| tail`,
//!    `| grep x`, `| Select-Object`) is never the culprit: the stage that produced its input
//!    is. A consumer is decided by kind ([`consumer`]): it reads only stdin — a filter given no
//!    file operand (`grep x file.txt` is not one), `tee` (its operands are outputs), `tr`.
//!
//! Builtins and control words are never blamed. Pure and `std`-only, like the splitter.

use crate::shell::program::{Program, program};
use crate::shell::{Origin, Segment};

/// Why a segment was blamed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Why {
    /// The error says the shell could not find the program (`X: command not found`).
    NotFound,
    /// The error names a wrapper (`sudo:`, `timeout:`, `xargs:`): the wrapper failed.
    WrapperNamed,
    /// A line of the error is the program's own (`psql: …`, `fatal: …` of git, `npm ERR!`).
    NamedByError,
    /// The error is of a program this segment spawns (`ssh:` under `git push`, `scp`).
    Spawned,
    /// A signal ended the command and this segment sends signals (`pkill -f`).
    KilledOwnShell,
    /// The error mentions the program as a word, without saying it spoke.
    Mentioned,
    /// The exit status is this segment's: the last command that ran.
    ExitStatus,
    /// The exit status is this segment's, reached through the wrapper or shell running it.
    Wrapped,
    /// The last stage only consumed this stage's output (`| tail`, `| grep x`).
    Producer,
}

impl Why {
    /// The label shown in `derive explain`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Why::NotFound => "not-found",
            Why::WrapperNamed => "wrapper-named",
            Why::NamedByError => "named-by-error",
            Why::Spawned => "spawned",
            Why::KilledOwnShell => "killed-own-shell",
            Why::Mentioned => "mentioned",
            Why::ExitStatus => "exit-status",
            Why::Wrapped => "wrapped",
            Why::Producer => "producer",
        }
    }
}

/// The segment a failure is blamed on.
#[derive(Debug, Clone)]
pub(crate) struct Blame<'s> {
    /// The blamed segment.
    pub segment: &'s Segment,
    /// Its program (for [`Why::WrapperNamed`] of a transparent wrapper, the wrapper).
    pub program: Program,
    /// Why it was blamed.
    pub why: Why,
}

impl Blame<'_> {
    /// The blamed segment as stored and shown: its normalised text, or its source slice when
    /// the blamed program was normalised away (a transparent wrapper such as `timeout`).
    pub(crate) fn text(&self) -> &str {
        if self.segment.text.is_empty()
            || !self.segment.program().is_some_and(|p| {
                p.rsplit('/')
                    .next()
                    .is_some_and(|h| h.eq_ignore_ascii_case(&self.program.head))
            })
        {
            &self.segment.raw
        } else {
            &self.segment.text
        }
    }
}

/// Transparent wrappers: the splitter replaces them by what they run, so only a segment's
/// `raw` still shows them.
const TRANSPARENT: &[&str] = &[
    "timeout", "env", "nice", "ionice", "nohup", "time", "stdbuf", "setsid", "command",
];
/// Wrappers that hand their stdin to the command they run.
const STDIN_PASSING: &[&str] = &["sudo", "doas", "pkexec"];
/// Programs that run ssh for the agent.
const SSH_SPAWNERS: &[&str] = &["git", "scp", "rsync", "sftp", "sshfs", "ansible"];
/// Programs that send signals to other processes (by name or pattern, or by pid).
const KILLERS: &[&str] = &["pkill", "killall", "kill", "taskkill", "stop-process"];
/// git's own `error:` lines (other programs print `error:` too, so only these).
const GIT_ERRORS: &[&str] = &[
    "error: pathspec",
    "error: failed to push",
    "error: src refspec",
    "error: your local changes",
    "error: the following untracked",
    "error: could not apply",
];
/// Python interpreters and runners whose failure is a traceback.
const PYTHONS: &[&str] = &[
    "python", "python3", "py", "pytest", "uv", "poetry", "pipenv",
];

/// The segment of `segments` (a [`crate::shell::split`] of one command) a failure with
/// `error` (its text; may be empty) is blamed on; `None` when only builtins ran.
pub(crate) fn blame<'s>(segments: &'s [Segment], error: &str) -> Option<Blame<'s>> {
    let programs: Vec<(usize, Program)> = segments
        .iter()
        .enumerate()
        .filter_map(|(i, s)| Some((i, program(s)?)))
        .collect();
    if let Some(b) = named(segments, &programs, error) {
        return Some(b);
    }
    let killers = programs
        .iter()
        .filter(|(_, p)| KILLERS.contains(&p.head.to_ascii_lowercase().as_str()));
    // A `pkill -f` speaks only for a call that failed (a success has no error text).
    let failed = !error.trim().is_empty();
    let by_pattern = |(i, _): &&(usize, Program)| failed && full_match(&segments[*i]);
    if let Some((i, p)) = killers.clone().rev().find(by_pattern).or_else(|| {
        signal_exit(error)
            .then(|| killers.clone().next_back())
            .flatten()
    }) {
        return Some(found(segments, *i, p.clone(), Why::KilledOwnShell));
    }
    if let Some(b) = mentioned(segments, &programs, error) {
        return Some(b);
    }
    if let Some((i, why)) = exit_owner(segments, 0, segments.len(), 0) {
        let p = program(&segments[i])?;
        return Some(found(segments, i, p, why));
    }
    // Only builtins ran at the top (`cd "$(git rev-parse --show-toplevel)"`): the last
    // program anywhere, as in a substitution.
    let (i, p) = programs.last()?;
    Some(found(segments, *i, p.clone(), Why::ExitStatus))
}

fn found(segments: &[Segment], i: usize, program: Program, why: Why) -> Blame<'_> {
    Blame {
        segment: &segments[i],
        program,
        why,
    }
}

/// What one line of the error says about who failed: program names, most telling first (a
/// script's `./run.sh: line 3: x: command not found` names `x`, then `run.sh`).
fn line_names(line: &str) -> Vec<(String, Why)> {
    let t = line.trim();
    let lower = t.to_ascii_lowercase();
    let mut names = Vec::new();
    if let Some(name) = not_found_name(t, &lower) {
        names.push((name, Why::NotFound));
    }
    let known = if lower.starts_with("npm err!") || lower.starts_with("npm error") {
        Some("npm")
    } else if lower.starts_with("traceback (most recent call last)") {
        Some("python")
    } else if lower.starts_with("error[e") || lower.starts_with("error: could not compile") {
        Some("cargo")
    } else if lower.starts_with("fatal:")
        || lower.starts_with("hint:")
        || GIT_ERRORS.iter().any(|e| lower.starts_with(e))
    {
        Some("git")
    } else {
        None
    };
    if let Some(k) = known {
        names.push((k.to_string(), Why::NamedByError));
    } else if let Some(n) = prefix_name(t) {
        names.push((n, Why::NamedByError));
    }
    names
}

/// The program a shell could not find, named by one line of its error (`X` of
/// `bash: line 1: X: command not found` and the spellings of dash, zsh, fish, PowerShell and
/// cmd). The one reading of those spellings: blame and the replay of `program_absent` use it.
pub(crate) fn not_found_program(line: &str) -> Option<String> {
    let t = line.trim();
    not_found_name(t, &t.to_ascii_lowercase())
}

/// [`not_found_program`] of a trimmed line and its lowercase copy.
fn not_found_name(line: &str, lower: &str) -> Option<String> {
    let clean = |s: &str| {
        s.trim()
            .trim_matches(['\'', '"', '`', '‘', '’'])
            .to_string()
    };
    if let Some(head) = lower
        .strip_suffix(": command not found")
        .or_else(|| lower.strip_suffix(": not found"))
    {
        let head = &line[..head.len()];
        return Some(clean(head.rsplit(": ").next()?)).filter(|s| !s.is_empty());
    }
    for marker in ["command not found: ", "unknown command: "] {
        if let Some(at) = lower.find(marker) {
            return Some(clean(&line[at + marker.len()..])).filter(|s| !s.is_empty());
        }
    }
    if let Some(at) = lower.find("the term '")
        && let Some(len) = lower[at + 10..].find('\'')
        && lower[at + 10 + len..].contains("is not recognized")
    {
        return Some(line[at + 10..at + 10 + len].to_string());
    }
    // cmd's line, whose end ("… or external command, operable program …") is often wrapped
    // or cut off in a stored error.
    if let Some(at) = lower.find(" is not recognized as an internal") {
        return Some(clean(&line[..at]));
    }
    None
}

/// The program a line starts with, `prog: …` (a path's basename; `bash: line 3: …` too) or
/// PowerShell 5's `Verb-Noun : …`.
fn prefix_name(line: &str) -> Option<String> {
    let colon = line.find(':')?;
    let head = line[..colon].trim_end();
    let spaced = head.len() < line[..colon].len();
    let word = head.rsplit(['/', '\\']).next().unwrap_or(head);
    let ok = !word.is_empty()
        && !head.contains(char::is_whitespace)
        && word
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | '+'))
        && !word.chars().all(|c| c.is_ascii_digit())
        // `X : …` is PowerShell's way, and only for cmdlet names.
        && (!spaced || word.contains('-'));
    ok.then(|| word.trim_end_matches(".exe").to_string())
}

/// The segment the error names, if any: the best-ranked naming line, ties to the later line.
fn named<'s>(
    segments: &'s [Segment],
    programs: &[(usize, Program)],
    error: &str,
) -> Option<Blame<'s>> {
    let lower_error = error.to_ascii_lowercase();
    let mut best: Option<(u8, Blame<'s>)> = None;
    for line in error.lines() {
        let Some((rank, b)) = line_names(line)
            .into_iter()
            .find_map(|(name, why)| attribute(segments, programs, &name, why, &lower_error))
        else {
            continue;
        };
        if best.as_ref().is_none_or(|(r, _)| rank <= *r) {
            best = Some((rank, b));
        }
    }
    best.map(|(_, b)| b)
}

/// The segment a name from the error belongs to, with its rank (lower is stronger).
fn attribute<'s>(
    segments: &'s [Segment],
    programs: &[(usize, Program)],
    name: &str,
    why: Why,
    lower_error: &str,
) -> Option<(u8, Blame<'s>)> {
    let name = name.to_ascii_lowercase();
    let is = |p: &Program, n: &str| {
        let head = p.head.to_ascii_lowercase();
        head == n || head.strip_suffix(".exe") == Some(n)
    };
    // A wrapper the splitter kept (`sudo`, `xargs`) is a program like any other; a transparent
    // one is found in the source slice of the command it ran.
    let rank = match why {
        Why::NotFound => 0,
        _ if TRANSPARENT.contains(&name.as_str()) => {
            let (i, _) = programs
                .iter()
                .rev()
                .find(|(i, _)| raw_runs(&segments[*i], &name))?;
            let p = wrapper_program(&name);
            return Some((0, found(segments, *i, p, Why::WrapperNamed)));
        }
        _ => 1,
    };
    let pick = |n: &str| best_named(programs, lower_error, |p| is(p, n));
    if let Some((i, p)) = pick(&name) {
        let why = if why == Why::NamedByError && is_wrapper_segment(segments, i) {
            Why::WrapperNamed
        } else {
            why
        };
        return Some((rank, found(segments, i, p, why)));
    }
    // A traceback is any Python's.
    if name == "python"
        && let Some((i, p)) = best_named(programs, lower_error, |p| {
            let h = p.head.to_ascii_lowercase();
            PYTHONS.contains(&h.as_str()) || h.starts_with("python")
        })
    {
        return Some((2, found(segments, i, p, why)));
    }
    if name == "ssh"
        && let Some((i, p)) = best_named(programs, lower_error, |p| {
            SSH_SPAWNERS.contains(&p.head.to_ascii_lowercase().as_str())
        })
    {
        return Some((3, found(segments, i, p, Why::Spawned)));
    }
    None
}

/// Among the programs `fits` accepts, the one whose subcommand the error names too (`npm
/// ERR! install` → `npm install`), ties to the later one.
fn best_named(
    programs: &[(usize, Program)],
    lower_error: &str,
    fits: impl Fn(&Program) -> bool,
) -> Option<(usize, Program)> {
    let mut best: Option<(usize, &(usize, Program))> = None;
    for found in programs.iter().filter(|(_, p)| fits(p)) {
        let sub = found
            .1
            .shape
            .split_once(' ')
            .map(|(_, sub)| sub.to_ascii_lowercase());
        let score = 1 + usize::from(sub.is_some_and(|s| names_word(lower_error, &s)));
        if best.is_none_or(|(b, _)| score >= b) {
            best = Some((score, found));
        }
    }
    best.map(|(_, f)| f.clone())
}

/// Does the segment's source slice run `wrapper` (a transparent one the splitter removed)?
fn raw_runs(seg: &Segment, wrapper: &str) -> bool {
    seg.raw
        .split_whitespace()
        .take_while(|w| *w != "|")
        .any(|w| w.rsplit('/').next() == Some(wrapper))
}

/// A program record for a transparent wrapper the error named.
fn wrapper_program(name: &str) -> Program {
    Program::named(name)
}

/// Is segment `i` a wrapper or runner (the next segment is what it runs)?
fn is_wrapper_segment(segments: &[Segment], i: usize) -> bool {
    segments.get(i + 1).is_some_and(|n| {
        n.depth == segments[i].depth + 1
            && matches!(n.origin, Origin::Wrapped(_) | Origin::Script(_))
    })
}

/// Whether the error says a signal ended the command: an exit status of 128+N (N a signal
/// number), or the shell's `Terminated`/`Killed` line.
fn signal_exit(error: &str) -> bool {
    let first = error.trim_start().lines().next().unwrap_or_default();
    let lower = first.to_ascii_lowercase();
    let code = ["exit code: ", "exit code ", "exit status "]
        .iter()
        .find_map(|p| lower.strip_prefix(p))
        .and_then(|n| n.trim().parse::<u16>().ok());
    code.is_some_and(|c| (129..=159).contains(&c))
        || error
            .lines()
            .any(|l| matches!(l.trim(), "Terminated" | "Killed"))
}

/// A `pkill -f PATTERN` (or `--full`): it matches the agent's own shell, whose command line
/// holds the pattern.
fn full_match(seg: &Segment) -> bool {
    seg.argv.first().is_some_and(|p| p == "pkill")
        && seg.argv[1..].iter().any(|a| {
            a == "--full" || (a.starts_with('-') && !a.starts_with("--") && a.contains('f'))
        })
}

/// The program the error mentions as a word (never a consumer stage), ties to the later.
fn mentioned<'s>(
    segments: &'s [Segment],
    programs: &[(usize, Program)],
    error: &str,
) -> Option<Blame<'s>> {
    let lower = error.to_ascii_lowercase();
    if lower.trim().is_empty() {
        return None;
    }
    let fits = |(i, p): &&(usize, Program)| {
        names_word(&lower, &p.head.to_ascii_lowercase()) && !consumer(&segments[*i], p)
    };
    let candidates: Vec<(usize, Program)> = programs.iter().filter(fits).cloned().collect();
    let (i, p) = best_named(&candidates, &lower, |_| true)?;
    Some(found(segments, i, p, Why::Mentioned))
}

/// Does `text` contain `word` delimited by characters that cannot be part of a program name?
/// (`make` in `cmake` is not a mention; `psql.` at the end of a sentence is.)
pub(crate) fn names_word(text: &str, word: &str) -> bool {
    if word.is_empty() {
        return false;
    }
    let part = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.');
    text.match_indices(word).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + word.len()..].chars().next();
        !before.is_some_and(part) && !after.is_some_and(|c| part(c) && c != '.')
    })
}

/// The end of the run of segments segment `i` runs (a wrapper's command, a shell's script
/// and everything nested in them), exclusive.
fn children_end(segments: &[Segment], i: usize) -> usize {
    let d = segments[i].depth;
    let mut j = i + 1;
    while let Some(s) = segments.get(j) {
        let child = s.depth > d + 1
            || (s.depth == d + 1 && matches!(s.origin, Origin::Wrapped(_) | Origin::Script(_)));
        if !child {
            break;
        }
        j += 1;
    }
    j
}

/// The segment the exit status of the commands at depth `d` in `lo..hi` belongs to, and how
/// it was reached (see the module doc, step 4).
fn exit_owner(segments: &[Segment], lo: usize, hi: usize, d: u8) -> Option<(usize, Why)> {
    let items: Vec<usize> = (lo..hi)
        .filter(|&i| {
            segments[i].depth == d
                && !matches!(
                    segments[i].origin,
                    Origin::Substitution | Origin::ProcessSubstitution
                )
        })
        .collect();
    let mut k = items.len().checked_sub(1)?;
    let (mut owner, mut why) = loop {
        if let Some(r) = speaker(segments, items[k]) {
            break r;
        }
        k = k.checked_sub(1)?;
    };
    while segments[items[k]].piped && consumer_stage(segments, items[k], owner) && k > 0 {
        let Some((r, _)) = speaker(segments, items[k - 1]) else {
            break;
        };
        k -= 1;
        owner = r;
        why = Why::Producer;
    }
    Some((owner, why))
}

/// Who speaks for the command at `i`: what it runs, when it is a wrapper or a shell running
/// programs, else itself; `None` for a builtin with nothing under it.
fn speaker(segments: &[Segment], i: usize) -> Option<(usize, Why)> {
    let end = children_end(segments, i);
    if end > i + 1
        && let Some((j, _)) = exit_owner(segments, i + 1, end, segments[i].depth + 1)
    {
        return Some((j, Why::Wrapped));
    }
    program(&segments[i]).map(|_| (i, Why::ExitStatus))
}

/// Is the stage at `i` (whose speaker is `owner`) a consumer: is `owner` one, reached at most
/// through wrappers that pass their stdin on (`sudo tee`)?
fn consumer_stage(segments: &[Segment], i: usize, owner: usize) -> bool {
    let seg = &segments[owner];
    let passes = owner == i
        || matches!(&seg.origin, Origin::Wrapped(w) if STDIN_PASSING.contains(&w.as_str()));
    passes && program(seg).is_some_and(|p| consumer(seg, &p))
}

/// How a stdin filter reads its operands.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Operands {
    /// Operands are input files (`head`, `sort`, `wc`).
    Files,
    /// The first operand is a pattern or script unless an option gave one; the rest are
    /// files (`grep`, `sed`, `awk`, `jq`).
    PatternThenFiles,
    /// Operands are never input files (`tee`'s are outputs, `tr`'s are sets).
    None,
}

/// One row of [`FILTERS`]: names, operand kind, short options taking a value, long ones,
/// short options giving the pattern.
type Filter = (
    &'static [&'static str],
    Operands,
    &'static str,
    &'static [&'static str],
    &'static str,
);

/// Programs that read stdin when they have no input file operand: kind, options taking a
/// value (short letters; long names), options that give the pattern or script.
const FILTERS: &[Filter] = &[
    (
        &["head", "tail", "strings"],
        Operands::Files,
        "ncs",
        &[
            "lines",
            "bytes",
            "sleep-interval",
            "pid",
            "max-unchanged-stats",
        ],
        "",
    ),
    (
        &[
            "cat",
            "tac",
            "rev",
            "wc",
            "less",
            "more",
            "most",
            "bat",
            "md5sum",
            "sha1sum",
            "sha256sum",
            "expand",
            "unexpand",
            "ts",
        ],
        Operands::Files,
        "",
        &[],
        "",
    ),
    (
        &["fold", "fmt", "base64"],
        Operands::Files,
        "w",
        &["width", "wrap"],
        "",
    ),
    (
        &["uniq"],
        Operands::Files,
        "fsw",
        &["skip-fields", "skip-chars", "check-chars"],
        "",
    ),
    (&["nl"], Operands::Files, "bdfhilnsvw", &[], ""),
    (
        &["column"],
        Operands::Files,
        "cso",
        &["output-separator", "separator"],
        "",
    ),
    (&["xxd"], Operands::Files, "cglos", &[], ""),
    (&["od"], Operands::Files, "AjNtw", &[], ""),
    (&["hexdump"], Operands::Files, "ens", &[], ""),
    (
        &["sort"],
        Operands::Files,
        "kotSTy",
        &[
            "key",
            "output",
            "field-separator",
            "buffer-size",
            "temporary-directory",
        ],
        "",
    ),
    (
        &["cut"],
        Operands::Files,
        "bcdf",
        &[
            "bytes",
            "characters",
            "delimiter",
            "fields",
            "output-delimiter",
        ],
        "",
    ),
    (
        &[
            "grep", "egrep", "fgrep", "rg", "ag", "ack", "findstr", "zgrep",
        ],
        Operands::PatternThenFiles,
        "ABCefmdDgtTM",
        &[
            "after-context",
            "before-context",
            "context",
            "regexp",
            "file",
            "max-count",
            "glob",
            "type",
            "type-not",
            "max-columns",
        ],
        "ef",
    ),
    (
        &["sed", "gsed"],
        Operands::PatternThenFiles,
        "efl",
        &["expression", "file", "line-length"],
        "ef",
    ),
    (
        &["awk", "gawk", "mawk", "nawk"],
        Operands::PatternThenFiles,
        "Fvf",
        &["field-separator", "assign", "file"],
        "f",
    ),
    (
        &["jq", "yq", "gojq"],
        Operands::PatternThenFiles,
        "f",
        &["indent", "from-file"],
        "f",
    ),
    (
        &[
            "tee", "tr", "pbcopy", "clip", "xclip", "xsel", "wl-copy", "sponge",
        ],
        Operands::None,
        "",
        &[],
        "",
    ),
];

/// `jq`'s options that take two values (`--arg NAME VALUE`).
const TWO_VALUES: &[&str] = &["arg", "argjson", "slurpfile", "rawfile"];

/// PowerShell verbs whose cmdlets work on the pipeline's objects (`Select-Object`,
/// `Where-Object`, `Format-Table`, `Out-File`, `ConvertTo-Json` …).
const PIPELINE_VERBS: &[&str] = &[
    "select",
    "where",
    "sort",
    "measure",
    "group",
    "format",
    "out",
    "tee",
    "convertto",
    "convertfrom",
];
/// PowerShell aliases of such cmdlets.
const PIPELINE_ALIASES: &[&str] = &["select", "?", "measure", "ft", "fl", "fw", "oh"];
/// PowerShell parameters that name an input (the cmdlet then does not consume the pipe).
const POWERSHELL_INPUTS: &[&str] = &["-path", "-literalpath", "-inputobject"];

/// Whether `seg` (running `p`) only consumes the previous stage's output: it is piped, and
/// it is a stdin filter without an input file operand (see [`FILTERS`]) or a PowerShell
/// pipeline cmdlet without an input parameter. A command `xargs`, `find -exec` or
/// `parallel` runs gets arguments, not the pipe, and is never one.
pub(crate) fn consumer(seg: &Segment, p: &Program) -> bool {
    if !seg.piped
        || matches!(&seg.origin, Origin::Wrapped(w) if !STDIN_PASSING.contains(&w.as_str()))
    {
        return false;
    }
    let head = p.head.to_ascii_lowercase();
    let args = p.args(seg);
    let cmdlet = head
        .split_once('-')
        .is_some_and(|(verb, noun)| PIPELINE_VERBS.contains(&verb) && !noun.is_empty());
    if cmdlet || PIPELINE_ALIASES.contains(&head.as_str()) {
        // `Select-String PATTERN PATH` reads a file; `Select-String PATTERN` the pipe.
        let positional = args.iter().filter(|a| !a.starts_with('-')).count();
        let input = args
            .iter()
            .any(|a| POWERSHELL_INPUTS.contains(&a.to_ascii_lowercase().as_str()));
        let reads_file = head == "select-string" && positional > 1;
        return !input && !reads_file;
    }
    let Some(&(_, kind, short, long, pattern_opts)) = FILTERS
        .iter()
        .find(|(names, ..)| names.contains(&head.as_str()))
    else {
        return false;
    };
    if kind == Operands::None {
        return true;
    }
    let (operands, pattern_given) = operands(args, short, long, pattern_opts);
    let files = if kind == Operands::PatternThenFiles && !pattern_given {
        operands.saturating_sub(1)
    } else {
        operands
    };
    files == 0
}

/// How many operands `args` hold (options and their values skipped; `-` is stdin, not an
/// operand), and whether an option gave the pattern or script.
fn operands(args: &[String], short: &str, long: &[&str], pattern_opts: &str) -> (usize, bool) {
    let mut n = 0;
    let mut pattern = false;
    let mut i = 0;
    let mut options = true;
    while let Some(a) = args.get(i) {
        i += 1;
        if options && a == "--" {
            options = false;
            continue;
        }
        if a == "-" {
            continue;
        }
        if options && let Some(name) = a.strip_prefix("--") {
            let name = name.split('=').next().unwrap_or(name);
            if matches!(name, "regexp" | "expression" | "file" | "from-file") {
                pattern = true;
            }
            if !a.contains('=') {
                if TWO_VALUES.contains(&name) {
                    i += 2;
                } else if long.contains(&name) {
                    i += 1;
                }
            }
            continue;
        }
        if options && let Some(cluster) = a.strip_prefix('-').filter(|c| !c.is_empty()) {
            // `-5` (head/tail's count) is an option too.
            for (k, c) in cluster.char_indices() {
                if pattern_opts.contains(c) {
                    pattern = true;
                }
                if short.contains(c) {
                    if k + c.len_utf8() == cluster.len() {
                        i += 1;
                    }
                    break;
                }
            }
            continue;
        }
        n += 1;
    }
    (n, pattern)
}

#[cfg(test)]
#[path = "blame_tests.rs"]
mod tests;
