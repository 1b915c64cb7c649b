//! Script runners that are not shells: `eval ARGS` (its words joined, as bash does) and
//! util-linux `script -c STR`. Each keeps its own segment and has the script split one
//! level deeper. (`su -c` is in `privilege.rs`, `ssh HOST CMD` in `net.rs`, `watch CMD` in
//! `wrappers.rs`, `git -c alias.X='!CMD'` in `git.rs`.)

use super::{Role, Row, Shape};
use crate::shell::syntax::sink::Kind;

pub(super) const EVAL: Row = Row {
    role: Role::Runner,
    unwrap: Some(|argv, _, _, _| {
        if argv.len() > 1 {
            Kind::Runs(Some(argv[1..].join(" ")))
        } else {
            Kind::Plain
        }
    }),
    shape: Shape::Never,
    ..Row::PLAIN
};
pub(super) const SCRIPT: Row = Row {
    role: Role::Runner,
    unwrap: Some(|argv, _, _, _| script_command(argv).map_or(Kind::Plain, |c| Kind::Runs(Some(c)))),
    ..Row::PLAIN
};

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

#[cfg(test)]
mod tests {
    use crate::shell::split;

    fn texts(cmd: &str) -> Vec<String> {
        split(cmd).segments.into_iter().map(|s| s.text).collect()
    }

    #[test]
    fn eval_and_script_run_their_words() {
        assert_eq!(texts("eval rm -rf /"), ["eval rm -rf /", "rm -rf /"]);
        assert_eq!(texts("eval"), ["eval"]);
        assert_eq!(texts("script -qc 'rm x' /dev/null")[1], "rm x");
        assert_eq!(texts("script --command=ls")[1], "ls");
        assert_eq!(texts("script out.log"), ["script out.log"]);
    }
}
