//! Editors that change files in place: `sed -i`, gawk's `-i inplace` (and its sockets), and `vim`/`vi`/`nvim`
//! run with commands of their own or `ex`/`ed`/`red` (they write the files they open).

use super::row::Row;
use crate::shell::model::walk::remote_shell;

pub(super) const SED: Row = Row {
    writes: Some(sed),
    ..Row::PLAIN
};
/// `awk`, `gawk`: in-place edits, and gawk's network special files (`/inet/tcp/0/HOST/PORT`)
/// read as commands and answered through a coprocess (`|&`): a remote shell in awk.
pub(super) const AWK: Row = Row {
    writes: Some(awk),
    effects: Some(|_, c, fx| {
        let socket = c
            .args
            .iter()
            .any(|a| (a.contains("/inet/tcp/") || a.contains("/inet/udp/")) && a.contains("|&"));
        if socket {
            fx.push(remote_shell("gawk reads commands from a network socket"));
        }
    }),
    ..Row::PLAIN
};
/// `vim`, `vi`, `nvim`: only when run with commands (`-c`, `+CMD`, `-s` …).
pub(super) const VIM: Row = Row {
    writes: Some(editor),
    ..Row::PLAIN
};
/// `ex`, `ed`, `red`: always.
pub(super) const EX: Row = Row {
    writes: Some(editor),
    ..Row::PLAIN
};

/// `sed -i … [SCRIPT] FILE…`: the files (the first operand is the script unless `-e`/`-f`
/// gave it).
fn sed(_: &str, args: &[String], out: &mut Vec<String>) {
    if !args.iter().any(|a| is_sed_in_place(a)) {
        return;
    }
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

/// gawk's in-place edit: the files after the program text.
fn awk(_: &str, args: &[String], out: &mut Vec<String>) {
    let in_place = args.windows(2).any(|w| w[0] == "-i" && w[1] == "inplace")
        || args
            .iter()
            .any(|a| a == "-iinplace" || a == "--include=inplace");
    if !in_place {
        return;
    }
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

/// An editor run with commands of its own (`vim -c ':%d|wq' f`, `ex -s f`, `ed f`) writes
/// the files it opens.
fn editor(program: &str, args: &[String], out: &mut Vec<String>) {
    let scripted = matches!(program, "ex" | "ed" | "red")
        || args.iter().any(|a| {
            matches!(a.as_str(), "-c" | "--cmd" | "-s" | "-es" | "-Es" | "-S") || a.starts_with('+')
        });
    if !scripted {
        return;
    }
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

#[cfg(test)]
mod tests {
    use crate::shell::{split, write_targets};

    fn writes(cmd: &str) -> Vec<String> {
        write_targets(&split(cmd))
    }

    #[test]
    fn in_place_edits_write_their_files_and_plain_reads_do_not() {
        assert_eq!(writes("sed -i 's/a/b/' .env"), [".env"]);
        assert_eq!(writes("sed --in-place=.bak -f s.sed a b"), ["a", "b"]);
        assert_eq!(writes("sed -n 's/a/b/p' .env"), Vec::<String>::new());
        assert_eq!(writes("gawk -i inplace '{print}' f"), ["f"]);
        assert_eq!(writes("awk -f p.awk -iinplace f g"), ["f", "g"]);
        assert_eq!(writes("awk '{print}' f"), Vec::<String>::new());
        assert_eq!(writes("vim -c ':%d|wq' f"), ["f"]);
        assert_eq!(writes("nvim +wq -u NONE f"), ["f"]);
        assert_eq!(writes("vim f"), Vec::<String>::new());
        assert_eq!(writes("ed f"), ["f"]);
        assert_eq!(writes("ex -s f"), ["f"]);
    }

    #[test]
    fn gawk_answering_a_socket_through_a_coprocess_is_a_remote_shell() {
        let shell = |cmd: &str| {
            crate::shell::model::analyse(cmd, &crate::shell::model::Context::default())
                .effects
                .iter()
                .any(|e| e.line.starts_with("opens-remote-shell"))
        };
        assert!(shell(
            "gawk 'BEGIN{s=\"/inet/tcp/0/h/4444\"; while((s |& getline c)>0) print c |& s}'"
        ));
        assert!(shell("awk '{s=\"/inet/udp/0/h/53\"; print |& s}'"));
        assert!(!shell(
            "gawk 'BEGIN{s=\"/inet/tcp/0/h/80\"; print \"GET /\" > s}'"
        ));
        assert!(!shell("awk '{print}' f |& cat"));
    }
}
