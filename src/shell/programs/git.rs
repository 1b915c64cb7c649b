//! `git`: its subcommand is part of its shape (`git push`), the model reads its effects
//! through `model/git.rs` (global options, then the subcommand's own grammar: pushes,
//! discarded work, removed and restored paths), and `git -c alias.X='!CMD' … X ARGS` runs
//! `CMD ARGS` through a shell.

use super::row::{Role, Row, Shape};
use crate::shell::model::effect::Effect;
use crate::shell::model::effect::EffectKind;
use crate::shell::model::git;
use crate::shell::model::paths::Class;
use crate::shell::model::walk::{Call, Walk};
use crate::shell::syntax::sink::Kind;

pub(super) const GIT: Row = Row {
    role: Role::Runner,
    unwrap: Some(|argv, _, _, _| {
        git_shell_alias(argv).map_or(Kind::Plain, |c| Kind::Runs(Some(c)))
    }),
    shape: Shape::Subcommand,
    effects: Some(effects),
    ..Row::PLAIN
};

fn effects(w: &mut Walk<'_>, c: &Call<'_>, fx: &mut Vec<Effect>) {
    git::effects(c.args, fx);
    if let Some((paths, recursive)) = git::removed(c.args) {
        for t in &paths {
            w.delete(t, recursive, "git rm", fx);
        }
    }
    for t in git::restored(c.args) {
        let (class, path) = w.class(&t);
        if matches!(class, Class::ControlPlane | Class::System | Class::Root) {
            fx.push(Effect::on_path(
                EffectKind::Writes,
                &format!("overwrites {path} with a committed version"),
                &[("via", "git restore")],
                class,
                &path,
            ));
        }
    }
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
                script.push_str(&crate::shell::syntax::quote::quote_word(a));
            }
            return Some(script);
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use crate::shell::split;

    #[test]
    fn a_shell_alias_runs_its_command() {
        let texts: Vec<String> = split("git -c alias.x='!rm -rf /' x a")
            .segments
            .into_iter()
            .map(|s| s.text)
            .collect();
        assert_eq!(texts[1], "rm -rf / a");
        assert_eq!(split("git -c a.b=c status").segments.len(), 1);
    }
}
