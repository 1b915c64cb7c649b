//! The files a split command may write: what the `"match": "writes"` rule mode and the
//! model's `writes`/`overwrites` effects read.
//!
//! Guarantees: pure and `std`-only like the rest of `shell`; a write target is reported as
//! written in the command (after quote removal), never resolved against the filesystem;
//! unknown programs contribute only their redirections. The list of writers is deliberately
//! small and explicit (redirections, `tee`, `sed -i`, `cp`/`mv`/`install`/`ln`, `dd of=`,
//! `truncate`), so a rule on writes fires on the commands a reviewer would call a write.

use super::{Segment, Split};

/// Every file the command may write, in order, duplicates kept out.
#[must_use]
pub fn write_targets(split: &Split) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for seg in &split.segments {
        for target in segment_writes(seg) {
            if !target.is_empty() && !out.contains(&target) {
                out.push(target);
            }
        }
    }
    out
}

/// The files one simple command may write.
#[must_use]
pub(crate) fn segment_writes(seg: &Segment) -> Vec<String> {
    let mut out: Vec<String> = seg
        .redirects
        .iter()
        .filter(|r| r.writes())
        .map(|r| r.target.clone())
        .collect();
    let Some(program) = seg.program() else {
        return out;
    };
    let args = &seg.argv[1..];
    let operands = || {
        args.iter()
            .filter(|a| !a.starts_with('-') || a.as_str() == "-")
    };
    match program {
        "tee" | "truncate" => {
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
        "sed" if args.iter().any(|a| is_sed_in_place(a)) => {
            let explicit_script = args.iter().any(|a| {
                a == "-e" || a == "-f" || a.starts_with("--expression") || a.starts_with("--file")
            });
            let mut files: Vec<&String> = Vec::new();
            let mut skip_next = false;
            for a in args {
                if skip_next {
                    skip_next = false;
                } else if a == "-e" || a == "-f" {
                    skip_next = true;
                } else if !a.starts_with('-') {
                    files.push(a);
                }
            }
            let start = usize::from(!explicit_script);
            out.extend(files.into_iter().skip(start).cloned());
        }
        "cp" | "mv" | "install" | "ln" | "rsync" => {
            if let Some(dir) = target_dir(args) {
                out.push(dir);
            } else if operands().count() >= 2 {
                out.extend(operands().next_back().cloned());
            }
        }
        "dd" => out.extend(
            args.iter()
                .filter_map(|a| a.strip_prefix("of="))
                .map(str::to_string),
        ),
        // gawk's in-place edit: the files after the program text.
        "awk" | "gawk"
            if args.windows(2).any(|w| w[0] == "-i" && w[1] == "inplace")
                || args
                    .iter()
                    .any(|a| a == "-iinplace" || a == "--include=inplace") =>
        {
            let explicit_program = args.iter().any(|a| a == "-f" || a.starts_with("--file"));
            let mut files: Vec<&String> = Vec::new();
            let mut skip_next = false;
            for a in args {
                if skip_next {
                    skip_next = false;
                } else if matches!(a.as_str(), "-i" | "-f" | "-v" | "-F" | "--include") {
                    skip_next = true;
                } else if !a.starts_with('-') {
                    files.push(a);
                }
            }
            out.extend(
                files
                    .into_iter()
                    .skip(usize::from(!explicit_program))
                    .cloned(),
            );
        }
        // An editor run with commands of its own (`vim -c ':%d|wq' f`, `ex -s f`, `ed f`)
        // writes the files it opens.
        "vim" | "vi" | "nvim" | "ex" | "ed" | "red"
            if matches!(program, "ex" | "ed" | "red")
                || args.iter().any(|a| {
                    matches!(a.as_str(), "-c" | "--cmd" | "-s" | "-es" | "-Es" | "-S")
                        || a.starts_with('+')
                }) =>
        {
            let mut skip_next = false;
            for a in args {
                if skip_next {
                    skip_next = false;
                } else if matches!(a.as_str(), "-c" | "--cmd" | "-S" | "-u" | "-i" | "-T") {
                    skip_next = true;
                } else if !a.starts_with(['-', '+']) {
                    out.push(a.clone());
                }
            }
        }
        _ => {}
    }
    out
}

fn is_sed_in_place(a: &str) -> bool {
    if a.starts_with("--") {
        return a.starts_with("--in-place");
    }
    a.strip_prefix('-').is_some_and(|opts| {
        opts.chars()
            .take_while(char::is_ascii_alphabetic)
            .any(|c| c == 'i')
    })
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::split;

    fn writes(cmd: &str) -> Vec<String> {
        write_targets(&split(cmd))
    }

    #[test]
    fn write_targets_cover_the_common_writers() {
        assert_eq!(writes("echo x > .env"), [".env"]);
        assert_eq!(
            writes("cat a >> ~/.ssh/authorized_keys 2>/dev/null"),
            ["~/.ssh/authorized_keys", "/dev/null"]
        );
        assert_eq!(writes("printf x | tee -a a.txt b.txt"), ["a.txt", "b.txt"]);
        assert_eq!(writes("sed -i 's/a/b/' .env"), [".env"]);
        assert_eq!(writes("sed -i.bak -e s/a/b/ f1 f2"), ["f1", "f2"]);
        assert_eq!(writes("sed 's/a/b/' .env"), Vec::<String>::new());
        assert_eq!(writes("cp new ~/.kube/config"), ["~/.kube/config"]);
        assert_eq!(writes("mv -f a b c dir/"), ["dir/"]);
        assert_eq!(writes("cp -t dest a b"), ["dest"]);
        assert_eq!(writes("dd if=/dev/zero of=disk.img"), ["disk.img"]);
        assert_eq!(writes("truncate -s 0 log.txt"), ["log.txt"]);
        assert_eq!(writes("sudo tee /etc/hosts < x"), ["/etc/hosts"]);
        assert_eq!(writes("cat .env"), Vec::<String>::new());
        assert_eq!(writes("bash -c 'echo x > .env'"), [".env"]);
    }
}
