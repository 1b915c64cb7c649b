//! The program a simple command runs: one definition for the recorder (the shape it stores
//! with every call), for blame (`shell::blame`, the segment a failure is put on) and for
//! derive (the clusters it forms and the attempts it counts), so all group a command the
//! same way.
//!
//! Works on [`crate::shell::split`]'s segments (`argv`, `raw`) and re-does the cheap parts of
//! normalisation itself (control words, wrappers, path prefixes), so it gives the same answer
//! whether the splitter already unwrapped `timeout 5 psql` or not. The shape is the one
//! `docs/outcomes.md` defines: the program's basename, plus the next word for a multiplexer
//! (`git push`, `python3 scripts/x.py`) when that word names a subcommand. Builtins and control words
//! (`cd`, `set`, `for`, `sleep`, `echo`) are never a program: the program table's
//! [`Shape`] of each says which are, and which take a subcommand.

use crate::shell::programs::{Role, Shape, find, transparent_start};
use crate::shell::{Segment, is_assignment};

/// Words that open a compound command and are followed by a command (`while ! pg_isready`).
const LEADING_CONTROL: &[&str] = &[
    "!", "{", "(", "do", "then", "else", "elif", "if", "while", "until", "time",
];

/// The program a simple command runs, found past control words, wrappers and assignments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Program {
    /// The shape: the program's basename, plus the subcommand for multiplexers.
    pub shape: String,
    /// The program's basename (the shape's first word).
    pub head: String,
    /// Whether the program was spelled with a path (`./bin/psql`, `/usr/bin/psql`).
    pub pathed: bool,
    /// Where the arguments after the shape start in the segment's `argv`.
    args: usize,
}

impl Program {
    /// A program known only by name (a transparent wrapper an error named, which the
    /// splitter removed from the segment).
    pub(crate) fn named(name: &str) -> Self {
        Program {
            shape: name.to_string(),
            head: name.to_string(),
            pathed: false,
            args: 0,
        }
    }

    /// The words after the shape in `seg` (the segment this program was found in), as
    /// written.
    pub(crate) fn args<'s>(&self, seg: &'s Segment) -> &'s [String] {
        seg.argv.get(self.args..).unwrap_or_default()
    }

    /// The argument words after the shape in `seg` (the segment this program was found in),
    /// as derive's contrast compares them: computed on demand, since the recorder never
    /// needs them.
    pub(crate) fn tokens(&self, seg: &Segment) -> Vec<String> {
        self.args(seg).iter().filter_map(|w| arg_token(w)).collect()
    }
}

/// Find the program of one segment; `None` for a builtin, a control word or an empty one.
pub(crate) fn program(seg: &Segment) -> Option<Program> {
    let mut words = seg.argv.iter().map(String::as_str).peekable();
    // Control words that introduce a command, and leading assignments.
    while let Some(w) = words.peek() {
        let bare = w
            .trim_start_matches(['(', '{', '`'])
            .trim_start_matches("$(");
        if bare.is_empty() || LEADING_CONTROL.contains(&bare) || is_assignment(bare) {
            words.next();
        } else {
            break;
        }
    }
    let mut rest: Vec<&str> = words.collect();
    unwrap_wrappers(&mut rest)?;
    let first = rest.first()?;
    let word = first
        .trim_start_matches(['(', '{', '`', '\\'])
        .trim_start_matches("$(")
        .trim_end_matches([')', ';', '`']);
    let head = word.rsplit('/').next().unwrap_or(word);
    // The splitter strips the program's path from `argv`; the source slice still shows it.
    let pathed = word.contains('/')
        || seg
            .raw
            .split_whitespace()
            .any(|w| w.strip_suffix(head).is_some_and(|p| p.ends_with('/')));
    let row = find(head);
    if head.is_empty() || row.is_some_and(|r| r.shape == Shape::Never) || head.starts_with('$') {
        return None;
    }
    let mut shape = head.to_string();
    let mut used = 1;
    if row.is_some_and(|r| r.shape == Shape::Subcommand)
        && let Some(next) = rest.get(1)
        && is_subcommand(next)
    {
        shape.push(' ');
        shape.push_str(next);
        used = 2;
    }
    // `rest` is what is left of `argv` after the words skipped in front.
    let args = seg.argv.len() - rest.len() + used.min(rest.len());
    Some(Program {
        shape,
        head: head.to_string(),
        pathed,
        args,
    })
}

/// A second word that names a subcommand or script, not a flag or a value.
fn is_subcommand(word: &str) -> bool {
    !word.is_empty()
        && !word.starts_with(['-', '$'])
        && !word.contains("://")
        && !word.contains(['@', '=', '\'', '"'])
}

/// Drop transparent wrappers (`env`, `nohup`, `timeout 5` …) with their options and the
/// assignments after them from the front of `words`, where the splitter's normalisation
/// would ([`transparent_start`], the same option grammars); `None` when a transparent
/// wrapper runs nothing (`nohup` alone, `command -v x`): it is never the program.
fn unwrap_wrappers(words: &mut Vec<&str>) -> Option<()> {
    loop {
        let Some(first) = words.first() else {
            return Some(());
        };
        let name = first.rsplit('/').next().unwrap_or(first);
        if !find(name).is_some_and(|r| matches!(r.role, Role::Transparent(_))) {
            return Some(());
        }
        let mut argv: Vec<String> = words.iter().map(|w| (*w).to_string()).collect();
        argv[0] = name.to_string();
        let start = transparent_start(&argv)?;
        words.drain(..start);
        let assignments = words.iter().take_while(|w| is_assignment(w)).count();
        words.drain(..assignments);
    }
}

/// The contrast's view of one argument word: a flag without its value (`--host=x` →
/// `--host`), or a positional word; `None` for words too long to be a useful token.
pub(crate) fn arg_token(word: &str) -> Option<String> {
    let w = word.trim_end_matches([';', ')']);
    if w.is_empty() || w == "-" || w == "--" {
        return None;
    }
    let token = if w.starts_with('-') {
        w.split_once('=').map_or(w, |(flag, _)| flag)
    } else {
        w
    };
    (token.len() <= 64).then(|| token.to_string())
}

#[cfg(test)]
mod tests {
    use crate::shell::split;

    /// The failing program of `cmd`, with its argument tokens.
    fn prog(cmd: &str, err: &str) -> Option<Found> {
        let split = split(cmd);
        let b = crate::shell::blame::blame(&split.segments, err)?;
        let (seg, p) = (b.segment, b.program);
        Some(Found {
            tokens: p.tokens(seg),
            shape: p.shape,
            head: p.head,
            pathed: p.pathed,
        })
    }

    struct Found {
        shape: String,
        head: String,
        pathed: bool,
        tokens: Vec<String>,
    }

    #[test]
    fn the_failing_segment_is_never_a_builtin() {
        let p = prog("cd db && PGPASSWORD=x psql -c 'select 1'", "").unwrap();
        assert_eq!(p.shape, "psql");
        assert_eq!(p.tokens, vec!["-c", "select 1"]);
        assert!(prog("cd /nope", "cd: no such file").is_none());
        assert!(prog("export A=1; set -e; sleep 2; echo hi", "").is_none());
        let p = prog("while ! pg_isready -h db; do sleep 1; done", "").unwrap();
        assert_eq!(p.shape, "pg_isready");
    }

    #[test]
    fn the_error_names_the_failing_program() {
        let p = prog(
            "psql -c 'select 1' | head -5",
            "psql: error: connection refused",
        )
        .unwrap();
        assert_eq!(p.shape, "psql");
        // `head` only consumed psql's output: the exit status is blamed on psql.
        let p = prog("psql -c 'select 1' | head -5", "").unwrap();
        assert_eq!(p.shape, "psql");
        // `make` inside `cmake` is not a mention of make.
        let p = prog("make build; ./run", "cmake failed").unwrap();
        assert_eq!(p.head, "run");
    }

    #[test]
    fn shapes_follow_spec_6_4_with_wrappers_and_paths() {
        let p = prog("timeout 30 /usr/bin/git push origin main", "").unwrap();
        assert_eq!((p.shape.as_str(), p.pathed), ("git push", true));
        // Tokens start after the shape, past wrappers and assignments.
        assert_eq!(p.tokens, ["origin", "main"]);
        let p = prog("env FOO=1 python3 scripts/fetch-tool.py --x=1 y", "").unwrap();
        assert_eq!(p.tokens, ["--x", "y"]);
        assert_eq!(prog("git -C x status", "").unwrap().shape, "git");
        assert_eq!(
            prog("env FOO=1 python3 scripts/fetch-tool.py --x=1", "")
                .unwrap()
                .shape,
            "python3 scripts/fetch-tool.py"
        );
        assert_eq!(prog("psql postgres://h/db -c x", "").unwrap().shape, "psql");
        // The splitter unwraps `sudo` (a `^rm\b` segment rule catches `sudo rm …`), so the
        // program that failed is the one sudo ran, unless the error names sudo.
        assert_eq!(prog("sudo rm -rf x", "").unwrap().shape, "rm");
        assert_eq!(
            prog("sudo rm -rf x", "sudo: a terminal is required")
                .unwrap()
                .shape,
            "sudo"
        );
        assert_eq!(
            prog("fetch --entity=a b", "").unwrap().tokens,
            vec!["--entity", "b"]
        );
    }

    #[test]
    fn a_named_subcommand_beats_the_program_alone() {
        let cmd = "npm install && npm test && ls";
        assert_eq!(
            prog(cmd, "npm ERR! install failed: E404").unwrap().shape,
            "npm install"
        );
        assert_eq!(prog(cmd, "npm ERR! test failed").unwrap().shape, "npm test");
        // Named alike: the later one.
        assert_eq!(prog(cmd, "npm ERR! failed").unwrap().shape, "npm test");
        assert_eq!(prog(cmd, "").unwrap().shape, "ls");
        // Leftovers of a redirection are not programs.
        assert_eq!(prog("cargo test 2>&1", "").unwrap().shape, "cargo test");
    }

    #[test]
    fn transparent_wrappers_are_skipped_by_their_grammars() {
        use crate::shell::Segment;
        let seg = |words: &str| Segment {
            argv: words.split_whitespace().map(String::from).collect(),
            text: words.to_string(),
            raw: words.to_string(),
            depth: 0,
            redirects: Vec::new(),
            in_loop: None,
            origin: crate::shell::Origin::Direct,
            piped: false,
        };
        let shape = |w: &str| super::program(&seg(w)).map(|p| p.shape);
        // Unsplit words (the splitter already removed these): values of the wrappers'
        // options are skipped, as the splitter skips them.
        assert_eq!(
            shape("stdbuf -o L env -u X A=1 git push").as_deref(),
            Some("git push")
        );
        assert_eq!(
            shape("timeout -s KILL 5 nice -n 3 psql").as_deref(),
            Some("psql")
        );
        assert_eq!(shape("exec -a name /bin/ls -l").as_deref(), Some("ls"));
        // A wrapper that runs nothing is no program.
        assert_eq!(shape("nohup"), None);
        assert_eq!(shape("command -v psql"), None);
        assert_eq!(shape("env A=1"), None);
    }
}
