//! The per-program part of the model: one [`Walk`] goes through a split command's segments
//! in order, keeping the state they share (the `cd`s so far, and per pipeline whether an
//! earlier stage fetched or decoded code, read a secret, echoed literal words or opened a
//! socket), and turns each segment into effects.

use super::paths::{Cwd, resolve};
use super::{Analysis, Class, Context, Effect, git, net};
use crate::shell::options::{Grammar, PLAIN, parse};
use crate::shell::{MAX_DEPTH, Origin, Segment, segment_writes};

const DEPTHS: usize = MAX_DEPTH as usize + 2;

/// What the stages of one pipeline so far did.
#[derive(Debug, Clone, Default)]
pub(super) struct Pipe {
    pub(super) fetch: bool,
    pub(super) secret: Option<String>,
    pub(super) socket: bool,
    pub(super) shell: bool,
    pub(super) literal: Option<Vec<String>>,
}

/// The walk through one split command.
pub(crate) struct Walk<'c> {
    pub(super) ctx: &'c Context,
    pub(super) cwd: Cwd,
    pub(super) pipes: Vec<Pipe>,
    pub(super) fetched: Vec<String>,
    /// Variables left in a word may be empty at run time (see `paths::classify`).
    pub(super) runtime: bool,
}

const RM: Grammar = Grammar {
    short_value: "",
    short_optional: "",
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
    stop_at_operand: false,
    last: &[],
};

const CHMOD: Grammar = Grammar {
    short_value: "",
    short_optional: "",
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
    stop_at_operand: false,
    last: &[],
};

const CURL: Grammar = Grammar {
    short_value: "dFTHXoOuAeEKrwxbcmyYzCUPQ",
    short_optional: "",
    long: &[
        ("data", true),
        ("data-binary", true),
        ("data-raw", true),
        ("data-ascii", true),
        ("data-urlencode", true),
        ("json", true),
        ("form", true),
        ("form-string", true),
        ("upload-file", true),
        ("output", true),
        ("remote-name", false),
        ("header", true),
        ("request", true),
        ("user", true),
        ("user-agent", true),
        ("post-file", true),
        ("body-file", true),
        ("output-document", true),
        ("post-data", true),
        ("cert", true),
        ("key", true),
        ("cacert", true),
        ("config", true),
    ],
    stop_at_operand: false,
    last: &[],
};

impl<'c> Walk<'c> {
    pub(crate) fn new(ctx: &'c Context) -> Self {
        Walk {
            ctx,
            cwd: Cwd::Start,
            pipes: vec![Pipe::default(); DEPTHS],
            fetched: Vec::new(),
            runtime: true,
        }
    }

    pub(super) fn class(&self, word: &str) -> (Class, String) {
        super::classify_walked(word, &self.cwd, self.ctx, self.runtime)
    }

    /// Turn one segment into effects.
    pub(crate) fn segment(&mut self, seg: &Segment, out: &mut Analysis) {
        let wrapped = matches!(seg.origin, Origin::Wrapped(_));
        let d = usize::from(seg.depth.saturating_sub(u8::from(wrapped))).min(DEPTHS - 1);
        if !seg.piped && !wrapped {
            self.pipes[d] = Pipe::default();
        }
        // The argv as run: an `xargs`/`parallel` command gets its input words appended (a
        // copy only then; every other segment is read in place).
        let mut fed: Option<Vec<String>> = None;
        if matches!(&seg.origin, Origin::Wrapped(w) if w == "xargs" || w == "parallel") {
            let words: Option<Vec<String>> = match seg.stdin_data() {
                Some(data) => Some(data.split_whitespace().map(String::from).collect()),
                None if seg.piped => self.pipes[d].literal.clone(),
                None => None,
            };
            if let Some(words) = words {
                let mut argv = seg.argv.clone();
                argv.extend(words);
                fed = Some(argv);
            }
        }
        let argv: &[String] = fed.as_deref().unwrap_or(&seg.argv);
        let mut fx: Vec<Effect> = Vec::new();
        self.writes(seg, argv, &mut fx);
        if let Some(program) = argv.first() {
            let rest = &argv[1..];
            if (program.starts_with("$(") || program.starts_with('`'))
                && net::fetches_or_decodes(program)
            {
                fx.push(fetched("a fetched or decoded command in program position"));
            }
            self.program(program, rest, seg, d, &mut fx);
        }
        for e in fx {
            out.push(e);
        }
    }

    /// Files written (redirections, `tee`, `cp` …) on a device, a system path or the
    /// control plane, and `/dev/tcp` redirections.
    fn writes(&self, seg: &Segment, argv: &[String], fx: &mut Vec<Effect>) {
        let targets = if argv.len() == seg.argv.len() {
            segment_writes(seg)
        } else {
            let mut fed = seg.clone();
            fed.argv = argv.to_vec();
            segment_writes(&fed)
        };
        for target in targets {
            if target.starts_with("/dev/tcp/") || target.starts_with("/dev/udp/") {
                continue;
            }
            let (class, path) = self.class(&target);
            match class {
                Class::Device => fx.push(Effect::on_path(
                    "overwrites",
                    &format!("overwrites {path}"),
                    &[("via", "write")],
                    class,
                    &path,
                )),
                Class::ControlPlane | Class::System | Class::Root => fx.push(Effect::on_path(
                    "writes",
                    &format!("writes {path}"),
                    &[("via", "write")],
                    class,
                    &path,
                )),
                _ => {}
            }
        }
        let program = argv.first().map_or("", String::as_str);
        let tcp = seg
            .redirects
            .iter()
            .any(|r| r.target.starts_with("/dev/tcp/") || r.target.starts_with("/dev/udp/"));
        if tcp {
            if program.is_empty() || net::is_shell(program) || program == "exec" {
                fx.push(remote_shell("a shell wired to /dev/tcp"));
            } else if let Some(s) = argv.iter().skip(1).find(|a| net::is_secret(a)) {
                fx.push(sends_secret(s, "/dev/tcp"));
            }
        }
        for r in &seg.redirects {
            if r.op.ends_with('<')
                && !r.op.starts_with("<<")
                && net::is_secret(&r.target)
                && net::SENDERS.contains(&program)
            {
                fx.push(sends_secret(&r.target, program));
            }
        }
    }

    #[allow(clippy::too_many_lines)]
    fn program(&mut self, p: &str, args: &[String], seg: &Segment, d: usize, fx: &mut Vec<Effect>) {
        let secret_arg = args.iter().find(|a| net::is_secret(a)).cloned();
        match p {
            "cd" | "pushd" => self.cd(args.iter().find(|a| !a.starts_with('-'))),
            "rm" | "unlink" | "rmdir" | "srm" => {
                let o = parse(args, &RM);
                let rec = o.flag('r', "recursive") || o.short.contains(&'R');
                for t in &o.operands {
                    self.delete(t, rec, p, fx);
                }
            }
            "shred" => {
                let o = parse(args, &PLAIN);
                for t in &o.operands {
                    let (class, path) = self.class(t);
                    fx.push(Effect::on_path(
                        "overwrites",
                        &format!("shreds {path}"),
                        &[("via", "shred")],
                        class,
                        &path,
                    ));
                }
            }
            "find" => {
                self.find(args, fx);
                // What an unfiltered `find ROOTS` prints starts with its roots, so `find . |
                // xargs rm -rf` deletes `.`; a filtered one prints no root as such.
                if !Self::narrows(args) {
                    let roots: Vec<String> = args
                        .iter()
                        .take_while(|a| !a.starts_with('-') && *a != "(" && *a != "!")
                        .cloned()
                        .collect();
                    self.pipes[d].literal = Some(if roots.is_empty() {
                        vec![".".into()]
                    } else {
                        roots
                    });
                }
            }
            "rsync" => self.rsync(args, fx),
            "mv" => {
                let o = parse(args, &PLAIN);
                let n = o.operands.len();
                for (i, s) in o.operands.iter().enumerate() {
                    if i + 1 == n && n > 1 {
                        break;
                    }
                    let (class, path) = self.class(s);
                    fx.push(Effect::on_path(
                        "moves",
                        &format!("moves {path} away"),
                        &[("via", "mv")],
                        class,
                        &path,
                    ));
                }
                if o.operands.last().is_some_and(|l| l == "/dev/null") {
                    for s in &o.operands[..n - 1] {
                        self.delete(s, true, "mv", fx);
                    }
                }
            }
            "chmod" | "chown" | "chgrp" => self.permissions(p, args, fx),
            "kill" => {
                let mut rest = args.iter().map(String::as_str).peekable();
                if rest
                    .peek()
                    .is_some_and(|a| a.starts_with('-') && *a != "--" && *a != "-1")
                {
                    let first = rest.next().unwrap_or_default();
                    if first == "-s" || first == "-n" {
                        rest.next();
                    }
                } else if rest.peek() == Some(&"-1") && args.len() > 1 {
                    rest.next();
                }
                let probe = args.first().is_some_and(|a| a == "-0" || a == "-s0")
                    || args.windows(2).any(|w| w[0] == "-s" && w[1] == "0");
                if !probe && rest.any(|a| a == "-1" || a == "1") {
                    fx.push(Effect::plain(
                        "kills-all-processes",
                        &[("via", "kill")],
                        "kills every process (pid -1 or init)".into(),
                    ));
                }
            }
            "killall5" | "reboot" | "halt" | "poweroff" | "shutdown"
                if !args.iter().any(|a| a == "--help") =>
            {
                fx.push(Effect::plain(
                    "kills-all-processes",
                    &[("via", p)],
                    format!("stops the machine with {p}"),
                ));
            }
            "sudo" | "doas" | "pkexec" | "su" | "run0" => {
                let listing = args.iter().all(|a| {
                    matches!(
                        a.as_str(),
                        "-l" | "-ll"
                            | "--list"
                            | "-v"
                            | "--validate"
                            | "-k"
                            | "--reset-timestamp"
                            | "-K"
                            | "--remove-timestamp"
                            | "-V"
                            | "--version"
                            | "--help"
                            | "-h"
                            | "-L"
                            | "-n"
                            | "--non-interactive"
                    )
                }) && !args.is_empty();
                let list_cmd =
                    p == "sudo" && args.first().is_some_and(|a| a == "-l" || a == "--list");
                if !listing && !list_cmd {
                    fx.push(Effect::plain(
                        "escalates-privilege",
                        &[("via", p)],
                        format!("runs as another user with {p}"),
                    ));
                }
            }
            "git" => {
                git::effects(args, fx);
                if let Some((paths, recursive)) = git::removed(args) {
                    for t in &paths {
                        self.delete(t, recursive, "git rm", fx);
                    }
                }
                for t in git::restored(args) {
                    let (class, path) = self.class(&t);
                    if matches!(class, Class::ControlPlane | Class::System | Class::Root) {
                        fx.push(Effect::on_path(
                            "writes",
                            &format!("overwrites {path} with a committed version"),
                            &[("via", "git restore")],
                            class,
                            &path,
                        ));
                    }
                }
            }
            "callus" if args.first().is_some_and(|a| a == "uninstall") => {
                let home = self
                    .ctx
                    .callus_home
                    .clone()
                    .unwrap_or_else(|| "$CALLUS_HOME".into());
                fx.push(Effect::on_path(
                    "deletes",
                    &format!("uninstalls callus, deleting {home}"),
                    &[("recursive", "true"), ("via", "callus uninstall")],
                    Class::ControlPlane,
                    &home,
                ));
            }
            "echo" | "printf" => self.pipes[d].literal = Some(printed_words(p, args)),
            "setfacl" => self.acl(args, fx),
            "crontab" => self.crontab(args, seg, d, fx),
            "docker" | "podman" | "nerdctl" => self.container(args, fx),
            "install" => self.install_mode(args, fx),
            _ => {}
        }
        Self::disks(p, args, fx);
        self.sql(p, args, seg, d, fx);
        self.code(p, args, seg, d, fx);
        self.network(p, args, d, fx);
        self.uploads(p, args, d, fx);
        Self::awk_socket(p, args, fx);
        // What this stage contributes to the rest of its pipeline.
        let pipe = &mut self.pipes[d];
        if net::FETCHERS.contains(&p) || net::is_decoder(p, args) {
            // What flows on is the fetched or decoded text, not words echoed before.
            pipe.fetch = true;
            pipe.literal = None;
        }
        if let Some(s) = secret_arg.filter(|_| !net::SENDERS.contains(&p)) {
            pipe.secret = Some(s);
        }
        if let Some(s) = net::prints_secret(p, args) {
            pipe.secret = Some(s.into());
        }
        if matches!(
            p,
            "env" | "printenv" | "set" | "export" | "declare" | "compgen"
        ) && args.is_empty()
        {
            pipe.secret = Some("the environment".into());
        }
    }

    fn cd(&mut self, target: Option<&String>) {
        let Some(t) = target else {
            self.cwd = self.ctx.home.clone().map_or(Cwd::Unknown, Cwd::At);
            return;
        };
        if t == "-" {
            self.cwd = Cwd::Unknown;
            return;
        }
        self.cwd = match resolve(t, &self.cwd, self.ctx) {
            Some(p) if p.starts_with('/') => Cwd::At(p),
            Some(p) if p.starts_with('~') => Cwd::At(p),
            Some(p) => Cwd::Below(p),
            None => Cwd::Unknown,
        };
    }

    pub(super) fn delete(&self, target: &str, recursive: bool, via: &str, fx: &mut Vec<Effect>) {
        let (class, path) = self.class(target);
        let verb = if recursive {
            format!(
                "deletes {} recursively",
                if path.is_empty() { "." } else { &path }
            )
        } else {
            format!("deletes {}", if path.is_empty() { "." } else { &path })
        };
        fx.push(Effect::on_path(
            "deletes",
            &verb,
            &[
                ("recursive", if recursive { "true" } else { "false" }),
                ("via", via),
            ],
            class,
            &path,
        ));
        // A key or credential file is gone for good (no history, rarely a backup): its own
        // effect, so a rule can refuse it where an ordinary file's delete is fine.
        if !recursive && net::is_secret(&path) {
            fx.push(Effect::on_path(
                "deletes-secret",
                &format!("deletes {path}, a key or credential file"),
                &[("via", via)],
                class,
                &path,
            ));
        }
    }

    fn rsync(&self, args: &[String], fx: &mut Vec<Effect>) {
        let deletes = args
            .iter()
            .any(|a| a.starts_with("--del") || a.starts_with("--remove-source"));
        let operands: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
        if deletes
            && let Some(dest) = operands.last()
            && operands.len() >= 2
            && !net::is_remote(dest)
        {
            let (class, path) = self.class(dest);
            fx.push(Effect::on_path(
                "deletes",
                &format!("may delete everything in {path} (rsync --delete)"),
                &[("recursive", "true"), ("via", "rsync --delete")],
                class,
                &path,
            ));
        }
    }

    fn permissions(&self, p: &str, args: &[String], fx: &mut Vec<Effect>) {
        let o = parse(args, &CHMOD);
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
            let (class, path) = self.class(t);
            if setuid {
                fx.push(Effect::on_path(
                    "escalates-privilege",
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
                "changes-permissions",
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

    /// Shells, interpreters, `source`, `eval`: code fetched or decoded and then run, remote
    /// shells in inline code, control-plane writes in inline code, downloaded files run.
    fn code(&mut self, p: &str, args: &[String], seg: &Segment, d: usize, fx: &mut Vec<Effect>) {
        let shell = net::is_shell(p);
        let family = net::interpreter(p);
        let sourcing = matches!(p, "source" | "." | "eval");
        if !(shell || family.is_some() || sourcing) {
            if self.fetched.iter().any(|f| same_file(f, p)) && seg.raw.contains(&format!("/{p}")) {
                fx.push(fetched(&format!("runs {p}, a file just downloaded")));
            }
            self.downloads(p, args);
            if net::FETCHERS.contains(&p) {
                for r in seg
                    .redirects
                    .iter()
                    .filter(|r| r.writes() && !r.op.starts_with('2'))
                {
                    self.fetched.push(r.target.clone());
                }
            }
            return;
        }
        if family == Some("powershell") && args.iter().any(|a| net::is_encoded_command(a)) {
            fx.push(fetched(&format!("{p} runs a base64-encoded command")));
        }
        let flags: &[&str] = family.map_or(&["-c"], net::code_flags);
        let mut code: Vec<&String> = Vec::new();
        let mut operands: Vec<&String> = Vec::new();
        let mut i = 0;
        let mut module = false;
        while i < args.len() {
            let a = &args[i];
            if flags.contains(&a.as_str()) {
                if let Some(c) = args.get(i + 1) {
                    code.push(c);
                }
                i += 2;
                if shell {
                    break;
                }
                continue;
            }
            if a == "-m" {
                module = true;
            }
            if !a.starts_with('-') || a == "-" {
                operands.push(a);
            }
            i += 1;
        }
        let words = args.iter().chain(seg.redirects.iter().map(|r| &r.target));
        if words
            .clone()
            .any(|w| net::substitutions(w).any(net::fetches_or_decodes))
        {
            fx.push(fetched(&format!(
                "{p} runs code from a fetched or decoded substitution"
            )));
        }
        for c in &code {
            if net::is_reverse_shell_code(c) {
                fx.push(remote_shell(&format!(
                    "{p} inline code opens a socket to a shell"
                )));
            }
            self.inline_code(p, c, fx);
        }
        let reads_stdin = if sourcing {
            operands
                .first()
                .is_some_and(|o| *o == "/dev/stdin" || *o == "-")
        } else {
            code.is_empty()
                && !module
                && operands.first().is_none_or(|o| {
                    *o == "-" || *o == "/dev/stdin" || shell && args.iter().any(|a| a == "-s")
                })
        };
        // PowerShell's `-Command -` reads the commands from stdin.
        let reads_stdin =
            reads_stdin || family == Some("powershell") && code.iter().any(|c| c.as_str() == "-");
        if reads_stdin && seg.piped && self.pipes[d].fetch {
            fx.push(fetched(&format!("fetched or decoded code piped into {p}")));
        }
        // `… | base64 -d | xargs bash -c` / `xargs -I{} sh -c '{}'`: xargs makes the fetched
        // or decoded words the script.
        let by_xargs = matches!(&seg.origin, Origin::Wrapped(w) if w == "xargs" || w == "parallel");
        if by_xargs
            && seg.piped
            && self.pipes[d].fetch
            && args.iter().any(|a| flags.contains(&a.as_str()))
            && (code.is_empty()
                || code.iter().any(|c| {
                    // `{}`, or xargs -I's own replace string (`%`, `@@`): no script of its own.
                    c.contains("{}")
                        || !c.is_empty()
                            && !c.bytes().any(|b| b.is_ascii_alphanumeric() || b == b' ')
                }))
        {
            fx.push(fetched(&format!(
                "fetched or decoded words run as a script by xargs {p}"
            )));
        }
        if shell && (reads_stdin || args.iter().any(|a| a == "-i")) {
            self.pipes[d].shell = true;
            if self.pipes[d].socket {
                fx.push(remote_shell("a shell piped to a socket"));
            }
        }
        if let Some(first) = operands.first()
            && self.fetched.iter().any(|f| same_file(f, first))
        {
            fx.push(fetched(&format!("{p} runs a file just downloaded")));
        }
        if p == "perl"
            && args
                .iter()
                .any(|a| a.starts_with("-i") || a.starts_with("-pi") || a.starts_with("-ni"))
        {
            for f in operands {
                let (class, path) = self.class(f);
                if class == Class::ControlPlane {
                    fx.push(Effect::on_path(
                        "writes",
                        &format!("edits {path} in place"),
                        &[("via", "perl -i")],
                        class,
                        &path,
                    ));
                }
            }
        }
    }

    fn downloads(&mut self, p: &str, args: &[String]) {
        if p == "curl" || p == "wget" {
            let o = parse(args, &CURL);
            for k in ["-o", "--output", "-O", "--output-document"] {
                for v in o.values_of(k) {
                    self.fetched.push(v.to_string());
                }
            }
            if p == "curl" && (o.short.contains(&'O') || o.has_long("remote-name"))
                || p == "wget" && o.values_of("-O").next().is_none()
            {
                for url in &o.operands {
                    if let Some(name) = url.rsplit('/').next().filter(|n| !n.is_empty()) {
                        self.fetched.push(name.to_string());
                    }
                }
            }
        }
    }
}

/// The words `echo`/`printf` print, for the next stage (`xargs`, a SQL client): options
/// dropped, `\n`, `\t`, `\0` escapes and printf's `%s`-style directives as blanks.
fn printed_words(p: &str, args: &[String]) -> Vec<String> {
    let mut words = Vec::new();
    for a in args.iter().filter(|a| !a.starts_with('-')) {
        let mut text = a
            .replace("\\n", " ")
            .replace("\\t", " ")
            .replace("\\0", " ");
        if p == "printf" {
            for d in ["%s", "%b", "%q", "%d"] {
                text = text.replace(d, " ");
            }
        }
        words.extend(text.split_whitespace().map(String::from));
    }
    words
}

fn same_file(downloaded: &str, run: &str) -> bool {
    let base = |s: &str| s.rsplit('/').next().unwrap_or(s).to_string();
    base(downloaded) == base(run)
}

fn fetched(how: &str) -> Effect {
    Effect::plain(
        "runs-fetched-code",
        &[],
        format!("runs code fetched or decoded at run time: {how}"),
    )
}

pub(super) fn remote_shell(how: &str) -> Effect {
    Effect::plain(
        "opens-remote-shell",
        &[],
        format!("opens a remote shell: {how}"),
    )
}

pub(super) fn sends_secret(what: &str, via: &str) -> Effect {
    Effect::plain(
        "sends-secret",
        &[("via", via), ("path", what)],
        format!("sends {what} over the network with {via}"),
    )
}
