//! The walk through one split command: each segment's files written, then the effects its
//! program's row in [`crate::shell::programs`] gives, then the passes every segment goes
//! through (code run by shells and interpreters, data sent over the network; each asks the
//! row's [`programs::Code`] and [`programs::Network`]), then what the stage hands the rest
//! of its pipeline.

use super::effect::EffectKind;
use super::walk::{Call, DEPTHS, Pipe, Walk, fetched, remote_shell, same_file, sends_secret};
use super::{Analysis, Class, Effect, net};
use crate::shell::programs;
use crate::shell::{Origin, Segment, segment_writes};

/// Is `seg` the command an `xargs` or `parallel` runs, its input words appended to its argv?
fn fed_input(seg: &Segment) -> bool {
    matches!(&seg.origin, Origin::Wrapped(w) if w == "xargs" || w == "parallel")
}

impl Walk<'_> {
    pub(crate) fn segment(&mut self, seg: &Segment, out: &mut Analysis) {
        let wrapped = matches!(seg.origin, Origin::Wrapped(_));
        let d = usize::from(seg.depth.saturating_sub(u8::from(wrapped))).min(DEPTHS - 1);
        if !seg.piped && !wrapped {
            self.pipes[d] = Pipe::default();
        }
        // The argv as run: an `xargs`/`parallel` command gets its input words appended (a
        // copy only then; every other segment is read in place).
        let mut fed: Option<Vec<String>> = None;
        if fed_input(seg) {
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
                && programs::fetches_or_decodes(program)
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
                    EffectKind::Overwrites,
                    &format!("overwrites {path}"),
                    &[("via", "write")],
                    class,
                    &path,
                )),
                Class::ControlPlane | Class::System | Class::Root => fx.push(Effect::on_path(
                    EffectKind::Writes,
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
            if program.is_empty() || crate::shell::programs::is_shell(program) || program == "exec"
            {
                fx.push(remote_shell("a shell wired to /dev/tcp"));
            } else if let Some(s) = argv.iter().skip(1).find(|a| net::is_secret(a)) {
                fx.push(sends_secret(s, "/dev/tcp"));
            }
        }
        for r in &seg.redirects {
            if r.op.ends_with('<')
                && !r.op.starts_with("<<")
                && net::is_secret(&r.target)
                && programs::network(program).sends
            {
                fx.push(sends_secret(&r.target, program));
            }
        }
    }

    fn program(&mut self, p: &str, args: &[String], seg: &Segment, d: usize, fx: &mut Vec<Effect>) {
        let secret_arg = args.iter().find(|a| net::is_secret(a)).cloned();
        if let Some(row) = programs::find(p)
            && let Some(effects) = row.effects
        {
            let call = Call {
                program: p,
                args,
                seg,
                depth: d,
                options: row.options,
            };
            effects(self, &call, fx);
        }
        self.code(p, args, seg, d, fx);
        self.network(p, args, d, fx);
        // What this stage contributes to the rest of its pipeline.
        let network = programs::network(p);
        let pipe = &mut self.pipes[d];
        if network.fetches || network.decodes.is_some_and(|decodes| decodes(args)) {
            // What flows on is the fetched or decoded text, not words echoed before.
            pipe.fetch = true;
            pipe.literal = None;
        }
        if let Some(s) = secret_arg.filter(|_| !network.sends) {
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

    /// Shells, interpreters, `source`, `eval`: code fetched or decoded and then run, remote
    /// shells in inline code, control-plane writes in inline code, downloaded files run.
    /// Any other program: a file just downloaded run, and the files a fetcher saves.
    fn code(&mut self, p: &str, args: &[String], seg: &Segment, d: usize, fx: &mut Vec<Effect>) {
        let shell = programs::is_shell(p);
        let interpreter = programs::interpreter(p);
        let sourcing = matches!(p, "source" | "." | "eval");
        if !(shell || interpreter.is_some() || sourcing) {
            self.downloads(p, args, seg, fx);
            return;
        }
        let powershell = interpreter.is_some_and(|c| c.powershell);
        if powershell && args.iter().any(|a| programs::is_encoded_command(a)) {
            fx.push(fetched(&format!("{p} runs a base64-encoded command")));
        }
        let flags: &'static [&'static str] = interpreter.map_or(&["-c"], |c| c.flags);
        let mut read = CodeArgs::read(args, flags, shell);
        let words = args.iter().chain(seg.redirects.iter().map(|r| &r.target));
        if words
            .clone()
            .any(|w| net::substitutions(w).any(programs::fetches_or_decodes))
        {
            fx.push(fetched(&format!(
                "{p} runs code from a fetched or decoded substitution"
            )));
        }
        for c in &read.code {
            if net::is_reverse_shell_code(c) {
                fx.push(remote_shell(&format!(
                    "{p} inline code opens a socket to a shell"
                )));
            }
            self.inline_code(p, c, fx);
        }
        read.reads_stdin = if sourcing {
            read.operands
                .first()
                .is_some_and(|o| *o == "/dev/stdin" || *o == "-")
        } else {
            read.code.is_empty()
                && !read.module
                && read.operands.first().is_none_or(|o| {
                    *o == "-" || *o == "/dev/stdin" || shell && args.iter().any(|a| a == "-s")
                })
        };
        // PowerShell's `-Command -` reads the commands from stdin.
        read.reads_stdin |= powershell && read.code.iter().any(|c| c.as_str() == "-");
        self.piped_code(p, args, seg, d, &read, fx);
        if shell && (read.reads_stdin || args.iter().any(|a| a == "-i")) {
            self.pipes[d].shell = true;
            if self.pipes[d].socket {
                fx.push(remote_shell("a shell piped to a socket"));
            }
        }
        if let Some(first) = read.operands.first()
            && self.fetched.iter().any(|f| same_file(f, first))
        {
            fx.push(fetched(&format!("{p} runs a file just downloaded")));
        }
        if p == "perl"
            && args
                .iter()
                .any(|a| a.starts_with("-i") || a.starts_with("-pi") || a.starts_with("-ni"))
        {
            self.perl_in_place(&read.operands, fx);
        }
    }

    /// Fetched or decoded text piped into a program that runs it: as its stdin script, or
    /// as the words `xargs` makes its script (`… | base64 -d | xargs bash -c`, `xargs -I{}
    /// sh -c '{}'`).
    fn piped_code(
        &self,
        p: &str,
        args: &[String],
        seg: &Segment,
        d: usize,
        read: &CodeArgs<'_>,
        fx: &mut Vec<Effect>,
    ) {
        if read.reads_stdin && seg.piped && self.pipes[d].fetch {
            fx.push(fetched(&format!("fetched or decoded code piped into {p}")));
        }
        let by_xargs = fed_input(seg);
        if by_xargs
            && seg.piped
            && self.pipes[d].fetch
            && args.iter().any(|a| read.flags.contains(&a.as_str()))
            && (read.code.is_empty()
                || read.code.iter().any(|c| {
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
    }

    /// `perl -i`/`-pi`/`-ni` editing a control-plane file in place.
    fn perl_in_place(&self, operands: &[&String], fx: &mut Vec<Effect>) {
        for f in operands {
            let (class, path) = self.class(f);
            if class == Class::ControlPlane {
                fx.push(Effect::on_path(
                    EffectKind::Writes,
                    &format!("edits {path} in place"),
                    &[("via", "perl -i")],
                    class,
                    &path,
                ));
            }
        }
    }

    /// A program that runs no code: a file just downloaded run by its path, and the files
    /// a fetcher saves to (its row's [`programs::Network::saves`], then its redirections).
    fn downloads(&mut self, p: &str, args: &[String], seg: &Segment, fx: &mut Vec<Effect>) {
        if self.fetched.iter().any(|f| same_file(f, p)) && seg.raw.contains(&format!("/{p}")) {
            fx.push(fetched(&format!("runs {p}, a file just downloaded")));
        }
        let network = programs::network(p);
        if let Some(saves) = network.saves {
            saves(args, &mut self.fetched);
        }
        if network.fetches {
            for r in seg
                .redirects
                .iter()
                .filter(|r| r.writes() && !r.op.starts_with('2'))
            {
                self.fetched.push(r.target.clone());
            }
        }
    }
}

/// An interpreter's or shell's arguments as the code pass reads them: inline code (the
/// value of a code flag; a shell's first `-c` ends its options), operands, and `-m`.
struct CodeArgs<'a> {
    /// The options whose value is inline code.
    flags: &'static [&'static str],
    code: Vec<&'a String>,
    operands: Vec<&'a String>,
    module: bool,
    /// Whether the program reads its code from stdin (set by the code pass).
    reads_stdin: bool,
}

impl<'a> CodeArgs<'a> {
    fn read(args: &'a [String], flags: &'static [&'static str], shell: bool) -> Self {
        let mut read = CodeArgs {
            flags,
            code: Vec::new(),
            operands: Vec::new(),
            module: false,
            reads_stdin: false,
        };
        let mut i = 0;
        while i < args.len() {
            let a = &args[i];
            if flags.contains(&a.as_str()) {
                if let Some(c) = args.get(i + 1) {
                    read.code.push(c);
                }
                i += 2;
                if shell {
                    break;
                }
                continue;
            }
            if a == "-m" {
                read.module = true;
            }
            if !a.starts_with('-') || a == "-" {
                read.operands.push(a);
            }
            i += 1;
        }
        read
    }
}
