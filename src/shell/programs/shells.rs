//! Shells: `bash sh zsh dash ksh ash mksh rbash fish csh tcsh yash`. Each runs its `-c`
//! string (with `$1`… filled from the words after it) or, with no script file operand (or
//! with `-s`), what it reads on stdin: a heredoc, a here-string, or a literal `echo`/
//! `printf`/`cat <<EOF` pipe. The script is split one level deeper.

use super::row::{Role, Row, Shape};
use crate::shell::syntax::sink::{Job, Kind, Sink};

/// Every shell: one row, one alias per name in the table.
pub(super) const SHELL: Row = Row {
    role: Role::Shell,
    unwrap: Some(shell),
    shape: Shape::Name,
    ..Row::PLAIN
};

fn shell(argv: &[String], job: &Job, _: u8, _: &mut Sink) -> Kind {
    Kind::Runs(shell_script(argv, job))
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

#[cfg(test)]
mod tests {
    use crate::shell::programs::texts;

    #[test]
    fn a_shell_runs_its_c_string_or_its_stdin() {
        assert_eq!(
            texts("bash -c 'rm -rf /'"),
            ["bash -c 'rm -rf /'", "rm -rf /"]
        );
        assert_eq!(
            texts("sh -c 'rm $1' x /tmp"),
            ["sh -c 'rm $1' x /tmp", "rm /tmp"]
        );
        assert_eq!(texts("bash <<< 'rm -rf /'"), ["bash", "rm -rf /"]);
        // A script file operand: its stdin is data.
        assert_eq!(texts("bash x.sh <<< 'rm -rf /'"), ["bash x.sh"]);
        assert_eq!(texts("zsh -o x -c ls"), ["zsh -o x -c ls", "ls"]);
    }
}
