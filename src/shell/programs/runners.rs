//! Script runners that are not shells: `eval ARGS` (its words joined, as bash does) and
//! util-linux `script -c STR`. Each keeps its own segment and has the script split one
//! level deeper. (`su -c` is in `privilege.rs`, `ssh HOST CMD` in `net.rs`, `watch CMD` in
//! `wrappers.rs`, `git -c alias.X='!CMD'` in `git.rs`.)

use super::row::{Role, Row, Shape, runs_at};
use crate::shell::options::{Grammar, PLAIN, parse};
use crate::shell::syntax::sink::Kind;

pub(super) const EVAL: Row = Row {
    role: Role::Runner,
    unwrap: Some(|argv, _, _, _| runs_at(argv, 1)),
    shape: Shape::Never,
    ..Row::PLAIN
};
pub(super) const SCRIPT: Row = Row {
    role: Role::Runner,
    unwrap: Some(|argv, _, _, _| script_command(argv).map_or(Kind::Plain, |c| Kind::Runs(Some(c)))),
    ..Row::PLAIN
};

/// util-linux `script [-aefq] [-c CMD] [-t[FILE]] [-T|-I|-O|-B FILE] … [FILE]`.
const SCRIPT_OPTIONS: Grammar = Grammar {
    short_value: "cTIOBEmo",
    short_optional: "t",
    long: &[
        ("command", true),
        ("log-timing", true),
        ("log-in", true),
        ("log-out", true),
        ("log-io", true),
        ("echo", true),
        ("logging-format", true),
        ("output-limit", true),
        ("append", false),
        ("flush", false),
        ("force", false),
        ("quiet", false),
        ("return", false),
        ("timing", false),
    ],
    ..PLAIN
};

/// `script … -c CMD`: runs `CMD` through a shell.
fn script_command(argv: &[String]) -> Option<String> {
    parse(argv.get(1..).unwrap_or_default(), &SCRIPT_OPTIONS)
        .first_of(&["-c", "--command"])
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use crate::shell::programs::texts;

    #[test]
    fn eval_and_script_run_their_words() {
        assert_eq!(texts("eval rm -rf /"), ["eval rm -rf /", "rm -rf /"]);
        assert_eq!(texts("eval"), ["eval"]);
        assert_eq!(texts("script -qc 'rm x' /dev/null")[1], "rm x");
        assert_eq!(texts("script --command=ls")[1], "ls");
        assert_eq!(texts("script out.log"), ["script out.log"]);
        // Option values are not the command: `-T FILE`, an optional glued `-tFILE`.
        assert_eq!(texts("script -T c -c ls")[1], "ls");
        assert_eq!(texts("script -tc out"), ["script -tc out"]);
    }
}
