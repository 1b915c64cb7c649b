//! The walk through one split command: each segment's files written, then the effects its
//! program's row in [`crate::shell::programs`] gives, then the passes every segment goes
//! through (disk tools, SQL, code run by shells and interpreters, data sent over the
//! network), then what the stage hands the rest of its pipeline.

use super::effect::EffectKind;
use super::walk::{Call, DEPTHS, Pipe, Walk, fetched, remote_shell, same_file, sends_secret};
use super::{Analysis, Class, Effect, net};
use crate::shell::options::{Grammar, parse};
use crate::shell::programs;
use crate::shell::{Origin, Segment, segment_writes};

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
                && net::SENDERS.contains(&program)
            {
                fx.push(sends_secret(&r.target, program));
            }
        }
    }

    #[allow(clippy::too_many_lines)]
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

    /// Shells, interpreters, `source`, `eval`: code fetched or decoded and then run, remote
    /// shells in inline code, control-plane writes in inline code, downloaded files run.
    fn code(&mut self, p: &str, args: &[String], seg: &Segment, d: usize, fx: &mut Vec<Effect>) {
        let shell = crate::shell::programs::is_shell(p);
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
                        EffectKind::Writes,
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
