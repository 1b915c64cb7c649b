//! Programs that delete, move, overwrite or change the permissions of files: `rm`,
//! `unlink`, `rmdir`, `srm`, `shred`, `mv`, `chmod`/`chown`/`chgrp`, `rsync --delete`,
//! `install -m`, `setfacl`, the writers `cp`, `ln`, `tee`, `truncate`, `dd of=`, `find` (`-delete`, `-exec`; and a meaningful wrapper for its
//! `-exec/-execdir/-ok/-okdir` commands), and `cat` (a printer when it only copies a
//! heredoc).

use super::row::{REMOTE_COPY, Role, Row};
use crate::shell::model::effect::Effect;
use crate::shell::model::effect::EffectKind;
use crate::shell::model::walk::{Call, Walk};
use crate::shell::options::{Grammar, PLAIN, parse};
use crate::shell::syntax::sink::Kind;

const RM_OPTIONS: Grammar = Grammar {
    long: &[
        ("recursive", false),
        ("force", false),
        ("dir", false),
        ("interactive", false),
        ("one-file-system", false),
        ("no-preserve-root", false),
        ("preserve-root", false),
        ("verbose", false),
    ],
    ..PLAIN
};

const CHMOD_OPTIONS: Grammar = Grammar {
    long: &[
        ("recursive", false),
        ("reference", true),
        ("changes", false),
        ("silent", false),
        ("quiet", false),
        ("verbose", false),
        ("no-dereference", false),
        ("from", true),
    ],
    ..PLAIN
};

pub(super) const RM: Row = Row {
    options: &RM_OPTIONS,
    effects: Some(rm),
    ..Row::PLAIN
};
pub(super) const SHRED: Row = Row {
    effects: Some(shred),
    ..Row::PLAIN
};
pub(super) const MV: Row = Row {
    writes: Some(copies),
    effects: Some(mv),
    ..Row::PLAIN
};
pub(super) const CHMOD: Row = Row {
    options: &CHMOD_OPTIONS,
    effects: Some(permissions),
    ..Row::PLAIN
};
pub(super) const RSYNC: Row = Row {
    writes: Some(copies),
    effects: Some(rsync),
    network: &REMOTE_COPY,
    ..Row::PLAIN
};
pub(super) const INSTALL: Row = Row {
    writes: Some(copies),
    effects: Some(|w, c, fx| w.install_mode(c.args, fx)),
    ..Row::PLAIN
};
/// `cp`, `ln`: they write their destination.
pub(super) const COPY: Row = Row {
    writes: Some(copies),
    ..Row::PLAIN
};
pub(super) const TEE: Row = Row {
    writes: Some(tee),
    ..Row::PLAIN
};
pub(super) const TRUNCATE: Row = Row {
    writes: Some(tee),
    ..Row::PLAIN
};
/// `dd of=FILE`.
pub(super) const DD: Row = Row {
    writes: Some(|_, args, out| {
        out.extend(
            args.iter()
                .filter_map(|a| a.strip_prefix("of="))
                .map(str::to_string),
        );
    }),
    ..Row::PLAIN
};
pub(super) const SETFACL: Row = Row {
    effects: Some(|w, c, fx| w.acl(c.args, fx)),
    ..Row::PLAIN
};
pub(super) const FIND: Row = Row {
    role: Role::Meaningful,
    unwrap: Some(|argv, _, _, _| find_exec(argv)),
    effects: Some(find),
    ..Row::PLAIN
};
/// `cat` alone or `cat -`: prints what it reads, a heredoc's literal text.
pub(super) const CAT: Row = Row {
    role: Role::Printer,
    unwrap: Some(|argv, job, _, _| {
        if argv.len() == 1 || (argv.len() == 2 && argv[1] == "-") {
            Kind::Prints(job.stdin_text().map(str::to_owned))
        } else {
            Kind::Plain
        }
    }),
    ..Row::PLAIN
};

/// `tee FILE…`, `truncate [-s N|-r REF] FILE…`: each file operand.
fn tee(program: &str, args: &[String], out: &mut Vec<String>) {
    let mut skip_next = false;
    for a in args {
        if skip_next {
            skip_next = false;
        } else if program == "truncate" && (a == "-s" || a == "-r") {
            skip_next = true;
        } else if !a.starts_with('-') {
            out.push(a.clone());
        }
    }
}

/// `cp`/`mv`/`install`/`ln`/`rsync SRC… DEST` or `-t DIR`: the destination.
fn copies(_: &str, args: &[String], out: &mut Vec<String>) {
    let operands = || {
        args.iter()
            .filter(|a| !a.starts_with('-') || a.as_str() == "-")
    };
    if let Some(dir) = target_dir(args) {
        out.push(dir);
    } else if operands().count() >= 2 {
        out.extend(operands().next_back().cloned());
    }
}

fn target_dir(args: &[String]) -> Option<String> {
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "-t" {
            return it.next().cloned();
        }
        if let Some(v) = a.strip_prefix("--target-directory=") {
            return Some(v.to_string());
        }
    }
    None
}

/// `rm`, `unlink`, `rmdir`, `srm`: each operand deleted, recursively with `-r`/`-R`.
fn rm(w: &mut Walk<'_>, c: &Call<'_>, fx: &mut Vec<Effect>) {
    let o = parse(c.args, c.options);
    let rec = o.flag('r', "recursive") || o.short.contains(&'R');
    for t in &o.operands {
        w.delete(t, rec, c.program, fx);
    }
}

/// `shred FILE…`: each overwritten.
fn shred(w: &mut Walk<'_>, c: &Call<'_>, fx: &mut Vec<Effect>) {
    let o = parse(c.args, c.options);
    for t in &o.operands {
        let (class, path) = w.class(t);
        fx.push(Effect::on_path(
            EffectKind::Overwrites,
            &format!("shreds {path}"),
            &[("via", "shred")],
            class,
            &path,
        ));
    }
}

/// `mv SRC… DEST`: each source moved away; moved onto `/dev/null`, deleted.
fn mv(w: &mut Walk<'_>, c: &Call<'_>, fx: &mut Vec<Effect>) {
    let o = parse(c.args, c.options);
    let n = o.operands.len();
    for (i, s) in o.operands.iter().enumerate() {
        if i + 1 == n && n > 1 {
            break;
        }
        let (class, path) = w.class(s);
        fx.push(Effect::on_path(
            EffectKind::Moves,
            &format!("moves {path} away"),
            &[("via", "mv")],
            class,
            &path,
        ));
    }
    if o.operands.last().is_some_and(|l| l == "/dev/null") {
        for s in &o.operands[..n - 1] {
            w.delete(s, true, "mv", fx);
        }
    }
}

/// `find ROOTS … -delete|-exec rm`, and what an unfiltered `find` prints for the next stage.
fn find(w: &mut Walk<'_>, c: &Call<'_>, fx: &mut Vec<Effect>) {
    let args = c.args;
    w.find(args, fx);
    // What an unfiltered `find ROOTS` prints starts with its roots, so `find . |
    // xargs rm -rf` deletes `.`; a filtered one prints no root as such.
    if !Walk::narrows(args) {
        let roots: Vec<String> = args
            .iter()
            .take_while(|a| !a.starts_with('-') && *a != "(" && *a != "!")
            .cloned()
            .collect();
        w.pipes[c.depth].literal = Some(if roots.is_empty() {
            vec![".".into()]
        } else {
            roots
        });
    }
}

fn rsync(w: &mut Walk<'_>, c: &Call<'_>, fx: &mut Vec<Effect>) {
    let args = c.args;
    let deletes = args
        .iter()
        .any(|a| a.starts_with("--del") || a.starts_with("--remove-source"));
    let operands: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    if deletes
        && let Some(dest) = operands.last()
        && operands.len() >= 2
        && !crate::shell::model::net::is_remote(dest)
    {
        let (class, path) = w.class(dest);
        fx.push(Effect::on_path(
            EffectKind::Deletes,
            &format!("may delete everything in {path} (rsync --delete)"),
            &[("recursive", "true"), ("via", "rsync --delete")],
            class,
            &path,
        ));
    }
}

fn permissions(w: &mut Walk<'_>, c: &Call<'_>, fx: &mut Vec<Effect>) {
    let (p, args) = (c.program, c.args);
    let o = parse(args, c.options);
    let rec = o.flag('R', "recursive");
    let mut ops = o.operands.iter();
    let mode = if o.values_of("--reference").next().is_some() {
        "reference".to_string()
    } else {
        ops.next().cloned().unwrap_or_default()
    };
    let setuid = p == "chmod"
        && (mode.contains("+s")
            || mode.contains("=s")
            || mode.contains('s') && mode.contains('+')
            || mode.len() == 4
                && mode.starts_with(['2', '4', '6', '7'])
                && mode.bytes().all(|b| b.is_ascii_digit()));
    for t in ops {
        let (class, path) = w.class(t);
        if setuid {
            fx.push(Effect::on_path(
                EffectKind::EscalatesPrivilege,
                &format!("sets the setuid/setgid bit on {path}"),
                &[("via", "setuid")],
                class,
                &path,
            ));
        }
        let verb = format!(
            "changes permissions of {}{}",
            if path.is_empty() { "." } else { &path },
            if rec { " recursively" } else { "" }
        );
        fx.push(Effect::on_path(
            EffectKind::ChangesPermissions,
            &verb,
            &[
                ("recursive", if rec { "true" } else { "false" }),
                ("via", p),
                ("mode", &mode.replace(' ', "_")),
            ],
            class,
            &path,
        ));
    }
}

/// Each `-exec CMD… ;|+` (and `-execdir`, `-ok`, `-okdir`) of a `find`.
fn find_exec(argv: &[String]) -> Kind {
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

#[cfg(test)]
mod tests {
    use crate::shell::split;

    #[test]
    fn find_wraps_each_exec_command() {
        let texts: Vec<String> = split("find . -exec rm {} \\; -ok mv {} x +")
            .segments
            .into_iter()
            .map(|s| s.text)
            .collect();
        assert_eq!(texts[1..], ["rm {}", "mv {} x"]);
        assert_eq!(split("find . -name x").segments.len(), 1);
    }

    #[test]
    fn cat_prints_only_what_it_reads() {
        assert_eq!(split("cat <<EOF | sh\nrm x\nEOF").segments.len(), 3);
        assert_eq!(split("cat f <<EOF | sh\nrm x\nEOF").segments.len(), 2);
    }

    #[test]
    fn writers_write_their_destination() {
        let writes = |cmd: &str| crate::shell::write_targets(&split(cmd));
        assert_eq!(writes("cp -r a b ~/.kube/config"), ["~/.kube/config"]);
        assert_eq!(writes("ln -s --target-directory=d a"), ["d"]);
        assert_eq!(writes("install -t /usr/bin x"), ["/usr/bin"]);
        assert_eq!(writes("mv a"), Vec::<String>::new());
        assert_eq!(writes("tee -a x y"), ["x", "y"]);
        assert_eq!(writes("truncate -s 0 -r ref f"), ["f"]);
        assert_eq!(writes("dd if=a of=b bs=1M"), ["b"]);
        assert_eq!(writes("rsync -a src/ host:dst/"), ["host:dst/"]);
    }
}
