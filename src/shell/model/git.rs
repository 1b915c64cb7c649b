//! git's effects: its global options before the subcommand (`-C`, `-c`, `--git-dir`,
//! `--work-tree`, `--no-pager`, …) are skipped, the subcommand's options are parsed with
//! their unambiguous abbreviations (`--mirr`, `--har`), and the subcommands that discard
//! work or rewrite shared history yield `discards-git-work` and `pushes` effects.

use super::effect::Effect;
use super::effect::EffectKind;
use crate::shell::options::{Grammar, PLAIN, parse};

const GLOBAL: Grammar = Grammar {
    short_value: "Cc",
    long: &[
        ("git-dir", true),
        ("work-tree", true),
        ("namespace", true),
        ("exec-path", false),
        ("no-pager", false),
        ("paginate", false),
        ("bare", false),
        ("no-replace-objects", false),
        ("literal-pathspecs", false),
        ("glob-pathspecs", false),
        ("noglob-pathspecs", false),
        ("icase-pathspecs", false),
        ("no-optional-locks", false),
        ("no-advice", false),
        ("config-env", true),
        ("super-prefix", true),
        ("list-cmds", true),
        ("attr-source", true),
        ("html-path", false),
        ("man-path", false),
        ("info-path", false),
    ],
    stop_at_operand: true,
    ..PLAIN
};

const PUSH: Grammar = Grammar {
    short_value: "o",
    long: &[
        ("force", false),
        ("force-with-lease", false),
        ("force-if-includes", false),
        ("mirror", false),
        ("all", false),
        ("branches", false),
        ("delete", false),
        ("tags", false),
        ("dry-run", false),
        ("verbose", false),
        ("quiet", false),
        ("set-upstream", false),
        ("follow-tags", false),
        ("atomic", false),
        ("no-verify", false),
        ("prune", false),
        ("porcelain", false),
        ("receive-pack", true),
        ("repo", true),
        ("push-option", true),
        ("signed", false),
        ("progress", false),
        ("no-force-with-lease", false),
        ("recurse-submodules", false),
    ],
    ..PLAIN
};

const RESET: Grammar = Grammar {
    long: &[
        ("hard", false),
        ("soft", false),
        ("mixed", false),
        ("merge", false),
        ("keep", false),
        ("quiet", false),
        ("patch", false),
        ("recurse-submodules", false),
        ("pathspec-from-file", true),
    ],
    ..PLAIN
};

const CHECKOUT: Grammar = Grammar {
    short_value: "bB",
    long: &[
        ("force", false),
        ("ours", false),
        ("theirs", false),
        ("patch", false),
        ("merge", false),
        ("detach", false),
        ("orphan", true),
        ("track", false),
        ("quiet", false),
        ("discard-changes", false),
        ("force-create", true),
        ("create", true),
        ("staged", false),
        ("worktree", false),
        ("source", true),
    ],
    ..PLAIN
};

const CLEAN: Grammar = Grammar {
    short_value: "e",
    long: &[
        ("force", false),
        ("dry-run", false),
        ("interactive", false),
        ("quiet", false),
        ("exclude", true),
    ],
    ..PLAIN
};

const PLAIN_GIT: Grammar = Grammar {
    short_value: "m",
    long: &[
        ("force", false),
        ("delete", false),
        ("cached", false),
        ("recursive", false),
        ("expire", true),
        ("expire-unreachable", true),
        ("prune", true),
        ("all", false),
        ("dry-run", false),
    ],
    ..PLAIN
};

/// A path spec that covers the whole working tree.
fn whole_tree(p: &str) -> bool {
    matches!(
        p,
        "." | "./" | "*" | "./*" | ":/" | ":" | "/" | ":(top)" | ".*" | "-A"
    ) || p.starts_with(":/") && p.len() <= 3
}

fn discard(scope: &str, via: &str) -> Effect {
    Effect::plain(
        EffectKind::DiscardsGitWork,
        &[("scope", scope), ("via", via)],
        format!("discards uncommitted or unrecoverable git work ({scope}) with {via}"),
    )
}

/// The effects of `git ARGS`.
pub(crate) fn effects(args: &[String], out: &mut Vec<Effect>) {
    let global = parse(args, &GLOBAL);
    let Some(sub) = args.get(global.rest) else {
        return;
    };
    // `git -c alias.p='push -f' p …`: the alias's words stand for the subcommand.
    let alias = global.values_of("-c").find_map(|kv| {
        let (k, v) = kv.split_once('=')?;
        (k.strip_prefix("alias.")? == sub.as_str() && !v.starts_with('!')).then_some(v)
    });
    if let Some(words) = alias {
        let mut expanded: Vec<String> = words.split_whitespace().map(String::from).collect();
        expanded.extend(args[global.rest + 1..].iter().cloned());
        if expanded.first().is_some_and(|w| w != sub) {
            effects(&expanded, out);
        }
        return;
    }
    let rest = &args[global.rest + 1..];
    match sub.as_str() {
        "push" => push(rest, out),
        "reset" => {
            let o = parse(rest, &RESET);
            if o.has_long("hard") || o.has_long("merge") {
                out.push(discard("worktree", "git reset --hard"));
            }
        }
        "checkout" | "switch" | "restore" => checkout(sub, rest, out),
        "stash" => match rest.first().map(String::as_str) {
            Some("clear") => out.push(discard("stash", "git stash clear")),
            Some("drop") => out.push(discard("stash", "git stash drop")),
            _ => {}
        },
        "clean" => {
            let o = parse(rest, &CLEAN);
            let force = o.flag('f', "force");
            let dry = o.flag('n', "dry-run") || o.flag('i', "interactive");
            if force && !dry {
                out.push(discard("untracked", "git clean -f"));
            }
        }
        "rm" => {
            let o = parse(rest, &PLAIN_GIT);
            if !o.has_long("cached")
                && !o.flag('n', "dry-run")
                && (o.flag('f', "force") || o.flag('r', "recursive"))
                && o.operands.iter().any(|p| whole_tree(p))
            {
                out.push(discard("worktree", "git rm -rf ."));
            }
        }
        "worktree" if rest.first().is_some_and(|a| a == "remove") => {
            let o = parse(&rest[1..], &PLAIN_GIT);
            if o.flag('f', "force") {
                out.push(discard("worktree", "git worktree remove --force"));
            }
        }
        "branch" => {
            let o = parse(rest, &PLAIN_GIT);
            if o.short.contains(&'D') || (o.flag('d', "delete") && o.flag('f', "force")) {
                out.push(discard("branch", "git branch -D"));
            }
        }
        "reflog" if rest.first().is_some_and(|a| a == "expire" || a == "delete") => {
            prunes(sub, rest, out);
        }
        "gc" | "prune" => prunes(sub, rest, out),
        "filter-branch" | "filter-repo" => out.push(discard("history", "git filter-branch")),
        _ => {}
    }
}

/// `git checkout|switch|restore`: the working tree or files discarded (`--force`, `.`, a
/// directory or glob, a file), not `restore --staged` alone.
fn checkout(sub: &str, rest: &[String], out: &mut Vec<Effect>) {
    let o = parse(rest, &CHECKOUT);
    let dash = rest.iter().position(|a| a == "--");
    let paths: Vec<&String> = match dash {
        Some(i) => rest[i + 1..].iter().collect(),
        None if sub == "restore" => o.operands.iter().collect(),
        None => o.operands.iter().filter(|p| whole_tree(p)).collect(),
    };
    let staged_only = sub == "restore" && o.flag('S', "staged") && !o.flag('W', "worktree");
    let force = o.flag('f', "force") || o.has_long("discard-changes");
    if staged_only {
        return;
    }
    if force && sub != "restore" {
        out.push(discard("worktree", &format!("git {sub} --force")));
    } else if paths.iter().any(|p| whole_tree(p)) {
        out.push(discard("worktree", &format!("git {sub} .")));
    } else if paths
        .iter()
        .any(|p| p.ends_with('/') || p.contains(['*', '?']))
    {
        // A directory or a glob: every change under it, not one file the agent named.
        out.push(discard("worktree", &format!("git {sub} -- DIR/")));
    } else if !paths.is_empty() {
        out.push(discard("file", &format!("git {sub} -- FILE")));
    }
}

/// `git reflog expire|delete`, `git gc`, `git prune`: unreachable history dropped now.
fn prunes(sub: &str, rest: &[String], out: &mut Vec<Effect>) {
    let o = parse(rest, &PLAIN_GIT);
    if sub == "reflog" {
        let now = |k| o.values_of(k).any(|v| v == "now" || v == "all");
        if now("--expire") || now("--expire-unreachable") || rest[0] == "delete" {
            out.push(discard("history", "git reflog expire"));
        }
    } else if o.values_of("--prune").any(|v| v == "now" || v == "all")
        || (sub == "prune" && o.values_of("--expire").any(|v| v == "now"))
    {
        out.push(discard("history", "git gc --prune=now"));
    }
}

/// The paths `git checkout … -- PATHS` / `git restore PATHS` overwrite in the working tree
/// with a committed version (not `restore --staged` alone, which touches the index only).
pub(crate) fn restored(args: &[String]) -> Vec<String> {
    let global = parse(args, &GLOBAL);
    let Some(sub) = args
        .get(global.rest)
        .filter(|s| *s == "checkout" || *s == "restore")
    else {
        return Vec::new();
    };
    let rest = &args[global.rest + 1..];
    let o = parse(rest, &CHECKOUT);
    if sub == "restore" && o.flag('S', "staged") && !o.flag('W', "worktree") {
        return Vec::new();
    }
    match rest.iter().position(|a| a == "--") {
        Some(i) => rest[i + 1..].to_vec(),
        None if sub == "restore" => o.operands.clone(),
        None => Vec::new(),
    }
}

/// The paths `git rm` deletes from the working tree (not with `--cached` or `-n`), and
/// whether recursively (`-r`).
pub(crate) fn removed(args: &[String]) -> Option<(Vec<String>, bool)> {
    let global = parse(args, &GLOBAL);
    if args.get(global.rest).is_none_or(|s| s != "rm") {
        return None;
    }
    let o = parse(&args[global.rest + 1..], &PLAIN_GIT);
    if o.has_long("cached") || o.flag('n', "dry-run") {
        return None;
    }
    Some((o.operands.clone(), o.flag('r', "recursive")))
}

fn push(rest: &[String], out: &mut Vec<Effect>) {
    let o = parse(rest, &PUSH);
    if o.flag('n', "dry-run") {
        return;
    }
    let force = o.flag('f', "force");
    let lease = o.has_long("force-with-lease") || o.has_long("force-if-includes");
    let remote = o.operands.first().map_or("?", String::as_str);
    let mut refs: Vec<(String, &str)> = Vec::new();
    let base_mode = if o.has_long("mirror") {
        "mirror"
    } else if o.flag('d', "delete") {
        "delete"
    } else if force {
        "force"
    } else if lease {
        "lease"
    } else {
        "normal"
    };
    for spec in o.operands.iter().skip(1) {
        let (plus, spec) = match spec.strip_prefix('+') {
            Some(s) => (true, s),
            None => (false, spec.as_str()),
        };
        let (src, dst) = spec.split_once(':').unwrap_or((spec, spec));
        let dst = dst.strip_prefix("refs/heads/").unwrap_or(dst);
        let mode = if src.is_empty() && spec.contains(':') {
            "delete"
        } else if plus && base_mode == "normal" {
            "force"
        } else {
            base_mode
        };
        refs.push((
            if dst.is_empty() {
                "?".into()
            } else {
                dst.into()
            },
            mode,
        ));
    }
    if o.has_long("all") || o.has_long("branches") || o.has_long("mirror") {
        refs.push(("*".into(), base_mode));
    }
    if refs.is_empty() {
        refs.push(("?".into(), base_mode));
    }
    for (r, mode) in refs {
        if mode == "normal" || mode == "lease" {
            continue;
        }
        out.push(Effect::plain(
            EffectKind::Pushes,
            &[("mode", mode), ("remote", remote), ("ref", &r)],
            match r.as_str() {
                "?" => format!("{mode}-pushes the current branch to {remote}"),
                "*" => format!("{mode}-pushes every branch to {remote}"),
                _ => format!("{mode}-pushes {r} to {remote}"),
            },
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(cmd: &str) -> Vec<String> {
        let args: Vec<String> = cmd.split_whitespace().map(String::from).collect();
        let mut out = Vec::new();
        effects(&args, &mut out);
        out.into_iter().map(|e| e.line).collect()
    }

    #[test]
    fn global_options_and_abbreviations_do_not_hide_the_subcommand() {
        assert_eq!(
            lines("-C . push -f origin main"),
            ["pushes mode=force remote=origin ref=main"]
        );
        assert_eq!(
            lines("-c x=y --no-pager push --force origin master"),
            ["pushes mode=force remote=origin ref=master"]
        );
        assert_eq!(lines("push --mirr"), ["pushes mode=mirror remote=? ref=*"]);
        assert_eq!(lines("--no-pager reset --har").len(), 1);
        assert_eq!(
            lines("push origin +fix-domain"),
            ["pushes mode=force remote=origin ref=fix-domain"]
        );
        assert!(lines("push --force-with-lease origin main").is_empty());
        let args: Vec<String> = ["-c", "alias.p=push -f", "p", "origin", "main"]
            .map(String::from)
            .to_vec();
        let mut out = Vec::new();
        effects(&args, &mut out);
        assert_eq!(out[0].line, "pushes mode=force remote=origin ref=main");
        assert!(lines("push origin :main")[0].contains("mode=delete"));
    }

    #[test]
    fn discarding_work_and_its_near_misses() {
        for c in [
            "checkout -- .",
            "restore .",
            "switch -f main",
            "stash clear",
            "rm -rf .",
            "clean -fd",
            "clean -xdf",
            "branch -D feat",
        ] {
            assert_eq!(lines(c).len(), 1, "{c}");
        }
        for c in [
            "clean -nfd",
            "clean -n",
            "restore --staged .",
            "checkout main",
            "checkout -b x",
            "stash",
            "rm --cached -r .",
            "branch -d feat",
            "reset --soft HEAD~1",
        ] {
            assert!(lines(c).is_empty(), "{c}");
        }
        assert_eq!(
            lines("checkout -- file.txt"),
            ["discards-git-work scope=file via=git_checkout_--_FILE"]
        );
    }
}
