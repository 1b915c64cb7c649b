//! The machine's state beyond the files a command names: the user's crontab (`crontab -r`
//! and the empty replacements `crontab /dev/null`, `echo | crontab -`), access control
//! lists (`setfacl -R -m … /`), and containers run with host directories bind-mounted
//! (`docker run -v /:/host alpine rm -rf /host` deletes the host's `/`).
//!
//! A container's own filesystem is not the host's: only the paths its command names under a
//! bind mount are mapped back to the host path and classified; a `rm -rf /usr` inside a
//! container without a mount there touches the container only. A shell (or `chroot`) run in
//! a container with `--privileged` or a read-write mount of the host's root, a system
//! directory or a device is a root shell on the host: `escalates-privilege`.

use super::context::Context;
use super::effect::Effect;
use super::effect::EffectKind;
use super::paths::Class;
use super::walk::Walk;
use crate::shell::Segment;
use crate::shell::options::{Grammar, PLAIN, parse};

const SETFACL: Grammar = Grammar {
    short_value: "mMxX",
    long: &[
        ("modify", true),
        ("modify-file", true),
        ("remove", true),
        ("remove-file", true),
        ("set", true),
        ("set-file", true),
        ("remove-all", false),
        ("remove-default", false),
        ("recursive", false),
        ("default", false),
        ("no-mask", false),
        ("mask", false),
        ("physical", false),
        ("logical", false),
        ("restore", true),
        ("test", false),
    ],
    ..PLAIN
};

const CRONTAB: Grammar = Grammar {
    short_value: "uc",
    ..PLAIN
};

/// `docker run` / `podman run` options that take a value (the image is the first operand
/// after them).
const RUN_VALUES: &[&str] = &[
    "-v",
    "--volume",
    "--mount",
    "-e",
    "--env",
    "--env-file",
    "--name",
    "-w",
    "--workdir",
    "-p",
    "--publish",
    "-u",
    "--user",
    "--network",
    "--net",
    "--entrypoint",
    "-h",
    "--hostname",
    "-l",
    "--label",
    "--pid",
    "--ipc",
    "--uts",
    "--userns",
    "--cgroupns",
    "--cpus",
    "-m",
    "--memory",
    "--platform",
    "--restart",
    "--add-host",
    "--device",
    "--cap-add",
    "--cap-drop",
    "--security-opt",
    "--ulimit",
    "--dns",
    "--log-driver",
    "--log-opt",
    "--tmpfs",
    "--gpus",
    "--runtime",
    "--pull",
    "--stop-signal",
    "--volumes-from",
    "--cidfile",
    "--group-add",
    "--link",
    "--mac-address",
    "--ip",
    "--shm-size",
    "-a",
    "--attach",
    "--health-cmd",
    "--label-file",
    "--memory-swap",
    "--cpu-shares",
    "-c",
    "--cpuset-cpus",
    "--stop-timeout",
    "--pod",
    "--arch",
    "--os",
    "--variant",
];

/// One bind mount: the host path (resolved), where it appears in the container, and whether
/// it is writable.
#[derive(Debug)]
struct Mount {
    host: String,
    inside: String,
    writable: bool,
}

/// What a `docker run` line asks for.
#[derive(Debug, Default)]
struct Run {
    mounts: Vec<Mount>,
    privileged: bool,
    /// The command run in the container (the entrypoint first when `--entrypoint` is given).
    command: Vec<String>,
}

fn volume(spec: &str) -> Option<(String, String, bool)> {
    let mut parts = spec.splitn(3, ':');
    let host = parts.next()?.to_string();
    let inside = parts.next()?.to_string();
    let opts = parts.next().unwrap_or("");
    let ro = opts.split(',').any(|o| o == "ro" || o == "readonly");
    Some((host, inside, !ro))
}

fn mount(spec: &str) -> Option<(String, String, bool)> {
    let (mut bind, mut host, mut inside, mut read_only) = (false, None, None, false);
    for kv in spec.split(',') {
        let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
        match k {
            "type" => bind = v == "bind",
            "source" | "src" => host = Some(v.to_string()),
            "target" | "destination" | "dst" => inside = Some(v.to_string()),
            "readonly" | "ro" => read_only = v.is_empty() || v == "true" || v == "1",
            _ => {}
        }
    }
    bind.then_some(())?;
    Some((host?, inside?, !read_only))
}

fn parse_run(args: &[String], walk: &Walk) -> Run {
    let mut run = Run::default();
    let mut entrypoint: Option<String> = None;
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        let (key, inline) = match a.split_once('=') {
            Some((k, v)) if k.starts_with("--") => (k, Some(v.to_string())),
            _ => (a.as_str(), None),
        };
        if a == "--" || !a.starts_with('-') {
            let start = i + usize::from(a == "--");
            if let Some((_, cmd)) = args[start..].split_first() {
                run.command = entrypoint.into_iter().chain(cmd.iter().cloned()).collect();
            }
            break;
        }
        if key == "--privileged" && inline.as_deref().is_none_or(|v| v == "true") {
            run.privileged = true;
        }
        let takes = RUN_VALUES.contains(&key);
        let value = if takes && inline.is_none() {
            i += 1;
            args.get(i).cloned()
        } else {
            inline
        };
        let bind = match (key, value.as_deref()) {
            ("-v" | "--volume", Some(v)) => volume(v),
            ("--mount", Some(v)) => mount(v),
            _ => None,
        };
        if let Some((host, inside, writable)) = bind
            && (host.starts_with(['/', '~', '.', '$']))
        {
            let (_, resolved) = walk.class(&host);
            run.mounts.push(Mount {
                host: resolved,
                inside,
                writable,
            });
        }
        if key == "--entrypoint" {
            entrypoint = value;
        }
        i += 1;
    }
    run
}

/// `word` as the host sees it: under a mount's container path → the host path (also the
/// value of `key=PATH`, as in `dd of=/dev/sda`).
fn on_host(word: &str, mounts: &[Mount]) -> Option<String> {
    if let Some((key, value)) = word.split_once('=')
        && !key.contains('/')
        && let Some(host) = on_path(value, mounts)
    {
        return Some(format!("{key}={host}"));
    }
    on_path(word, mounts)
}

fn on_path(word: &str, mounts: &[Mount]) -> Option<String> {
    mounts
        .iter()
        .filter(|m| {
            word == m.inside
                || word
                    .strip_prefix(m.inside.as_str())
                    .is_some_and(|r| r.starts_with('/') || m.inside.ends_with('/'))
        })
        .max_by_key(|m| m.inside.len())
        .map(|m| {
            let rest = &word[m.inside.len()..];
            let host = m.host.trim_end_matches('/');
            if rest.is_empty() {
                if host.is_empty() {
                    "/".into()
                } else {
                    host.into()
                }
            } else {
                format!("{host}/{}", rest.trim_start_matches('/'))
            }
        })
}

/// Is `path` the host path `host` or under it?
fn under(path: &str, host: &str) -> bool {
    let h = host.trim_end_matches('/');
    h.is_empty() || path == h || path.starts_with(&format!("{h}/"))
}

/// Is a host path of this class root-equivalent when a container may write it? (The home
/// is not: mounting `~/.m2` or `~/.aws` into a tool's container is routine, and a shell over
/// it has the user's own reach; deletes and writes under it are still mapped and judged.)
fn host_critical(class: Class) -> bool {
    matches!(class, Class::Root | Class::System | Class::Device)
}

thread_local! {
    /// Container commands analysed inside one another on this thread (`docker run … env
    /// docker run …`): the nesting is bounded, as the splitter bounds its own.
    static NESTED: std::cell::Cell<u8> = const { std::cell::Cell::new(0) };
}

/// Most container commands analysed inside one another.
const MAX_NESTED: u8 = 3;

impl Walk<'_> {
    /// `setfacl [-R] -m ACL PATH…`: a permission change on each path.
    pub(crate) fn acl(&self, args: &[String], fx: &mut Vec<Effect>) {
        let o = parse(args, &SETFACL);
        let rec = o.flag('R', "recursive");
        let mode = ["-m", "--modify", "--set", "-x", "--remove"]
            .iter()
            .find_map(|k| o.values_of(k).next())
            .map_or_else(|| "acl".to_string(), |v| format!("acl:{v}"));
        for t in &o.operands {
            let (class, path) = self.class(t);
            fx.push(Effect::on_path(
                EffectKind::ChangesPermissions,
                &format!(
                    "changes the access control list of {path}{}",
                    if rec { " recursively" } else { "" }
                ),
                &[
                    ("recursive", if rec { "true" } else { "false" }),
                    ("via", "setfacl"),
                    ("mode", &mode),
                ],
                class,
                &path,
            ));
        }
    }

    /// `install -m 4755 /bin/bash DEST`: a copy with the setuid/setgid bit, as `chmod u+s`.
    pub(crate) fn install_mode(&self, args: &[String], fx: &mut Vec<Effect>) {
        let mode = args.iter().enumerate().find_map(|(i, a)| {
            if a == "-m" || a == "--mode" {
                args.get(i + 1).map(String::as_str)
            } else {
                a.strip_prefix("--mode=")
                    .or_else(|| a.strip_prefix("-m").filter(|m| !m.is_empty()))
            }
        });
        let Some(mode) = mode else {
            return;
        };
        let setuid = mode.contains('s')
            || mode.len() == 4
                && mode.starts_with(['2', '4', '6', '7'])
                && mode.bytes().all(|b| b.is_ascii_digit());
        let dest = args
            .iter()
            .rev()
            .find(|a| !a.starts_with('-') && *a != mode);
        if let Some(dest) = dest.filter(|_| setuid) {
            let (class, path) = self.class(dest);
            fx.push(Effect::on_path(
                EffectKind::EscalatesPrivilege,
                &format!("installs {path} with the setuid/setgid bit"),
                &[("via", "setuid")],
                class,
                &path,
            ));
        }
    }

    /// `crontab -r`, `crontab /dev/null`, `echo | crontab -`: every scheduled job of the user
    /// removed (`crontab -l`, `-e` and installing a file are not).
    pub(crate) fn crontab(&self, args: &[String], seg: &Segment, d: usize, fx: &mut Vec<Effect>) {
        let o = parse(args, &CRONTAB);
        let user = o.values_of("-u").next().unwrap_or("the user");
        let empty_input = match o.operands.first().map(String::as_str) {
            Some("/dev/null") => true,
            Some("-") | None if !o.short.contains(&'l') && !o.short.contains(&'e') => {
                let data = seg.stdin_data().map(|s| s.trim().is_empty());
                let piped = seg.piped.then(|| {
                    self.pipes[d]
                        .literal
                        .as_ref()
                        .is_some_and(|w| w.iter().all(|w| w.trim().is_empty()))
                });
                data.or(piped).unwrap_or(false)
                    || seg
                        .redirects
                        .iter()
                        .any(|r| r.op == "<" && r.target == "/dev/null")
            }
            _ => false,
        };
        if o.short.contains(&'r') || o.has_long("remove") || empty_input {
            fx.push(Effect::plain(
                EffectKind::DeletesSchedule,
                &[("via", "crontab"), ("user", user)],
                format!("removes every scheduled job in the crontab of {user}"),
            ));
        }
    }

    /// `docker|podman|nerdctl run|create …`: effects on the host through bind mounts.
    pub(crate) fn container(&self, args: &[String], fx: &mut Vec<Effect>) {
        let mut sub = 0;
        if args.first().is_some_and(|a| a == "container") {
            sub = 1;
        }
        if !args.get(sub).is_some_and(|a| a == "run" || a == "create") {
            return;
        }
        let run = parse_run(&args[sub + 1..], self);
        let critical: Vec<&Mount> = run
            .mounts
            .iter()
            .filter(|m| m.writable && host_critical(self.class(&m.host).0))
            .collect();
        let program = run
            .command
            .first()
            .map_or("", |p| p.rsplit('/').next().unwrap_or(p));
        let shell_like = run.command.is_empty()
            || crate::shell::programs::is_shell(program)
            || matches!(program, "chroot" | "nsenter" | "unshare");
        if shell_like && (run.privileged || !critical.is_empty()) {
            let over = critical
                .first()
                .map_or("the host (--privileged)", |m| &m.host);
            fx.push(Effect::plain(
                EffectKind::EscalatesPrivilege,
                &[("via", "container")],
                format!("runs a root shell in a container over {over}"),
            ));
        }
        let writable: Vec<Mount> = run.mounts.into_iter().filter(|m| m.writable).collect();
        if writable.is_empty() || run.command.is_empty() {
            return;
        }
        // The container's command with its mounted paths as the host sees them; only effects
        // on those host paths count.
        let mut seen: Vec<String> = Vec::new();
        let host_argv: Vec<String> = run
            .command
            .iter()
            .map(|w| match on_host(w, &writable) {
                Some(h) => {
                    seen.push(h.split_once('=').map_or(h.as_str(), |(_, p)| p).to_string());
                    h
                }
                None => map_inside_text(w, &writable, &mut seen),
            })
            .collect();
        if seen.is_empty() {
            return;
        }
        let ctx = Context {
            cwd: Some("/".into()),
            ..self.ctx.clone()
        };
        let depth = NESTED.with(std::cell::Cell::get);
        if depth >= MAX_NESTED {
            return;
        }
        NESTED.with(|n| n.set(depth + 1));
        let inner = (self.analyse)(&crate::shell::syntax::quote::quote(&host_argv), &ctx);
        NESTED.with(|n| n.set(depth));
        for e in inner {
            let path = e.line.rsplit_once(" path=").map(|(_, p)| p);
            if path.is_some_and(|p| seen.iter().any(|h| under(p, h))) {
                fx.push(e);
            }
        }
    }
}

/// Mounted container paths inside a word of inline code (`sh -c 'echo x > /etc/passwd'`
/// with `-v /etc:/etc`), rewritten to the host's.
fn map_inside_text(word: &str, mounts: &[Mount], seen: &mut Vec<String>) -> String {
    if !word.contains(' ') {
        return word.to_string();
    }
    let mut out = String::with_capacity(word.len());
    for (i, piece) in word.split(' ').enumerate() {
        if i > 0 {
            out.push(' ');
        }
        match on_host(piece, mounts) {
            Some(h) => {
                out.push_str(&h);
                seen.push(h);
            }
            None => out.push_str(piece),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::tests::lines;

    fn has(cmd: &str, prefix: &str) -> bool {
        lines(cmd).iter().any(|l| l.starts_with(prefix))
    }

    #[test]
    fn crontab_removal_and_its_near_misses() {
        assert!(has("crontab -r", "deletes-schedule via=crontab"));
        assert!(has(
            "crontab -r -u root",
            "deletes-schedule via=crontab user=root"
        ));
        assert!(has("crontab -ir", "deletes-schedule"));
        assert!(has("crontab /dev/null", "deletes-schedule"));
        assert!(has("echo | crontab -", "deletes-schedule"));
        assert!(has("crontab - < /dev/null", "deletes-schedule"));
        for benign in [
            "crontab -l",
            "crontab -l > cron.bak",
            "crontab -e",
            "crontab jobs.txt",
            "echo '0 1 * * * make' | crontab -",
            "(crontab -l; echo '0 1 * * * make') | crontab -",
        ] {
            assert!(!has(benign, "deletes-schedule"), "{benign}");
        }
    }

    #[test]
    fn nested_container_commands_are_bounded() {
        let nested = format!("{}rm -rf /h", "docker run -v /:/h a env ".repeat(2000));
        let started = std::time::Instant::now();
        let _ = lines(&nested);
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        assert!(has(
            "docker run -v /:/h a env nice rm -rf /h",
            "deletes class=root"
        ));
    }

    #[test]
    fn setfacl_is_a_permission_change() {
        assert!(has(
            "setfacl -R -m o::rwx /",
            "changes-permissions class=root recursive=true via=setfacl mode=acl:o::rwx"
        ));
        assert!(has(
            "setfacl -m u:me:rw /etc/shadow",
            "changes-permissions class=system recursive=false via=setfacl"
        ));
        assert!(has(
            "setfacl --recursive --modify=g::rwx /usr",
            "changes-permissions class=system recursive=true"
        ));
        assert!(!has("getfacl /etc", "changes-permissions"));
    }

    #[test]
    fn container_commands_act_on_the_host_only_through_mounts() {
        assert!(has(
            "docker run -v /:/host alpine rm -rf /host",
            "deletes class=root recursive=true via=rm path=/"
        ));
        assert!(has(
            "podman run -v /:/host:rw fedora rm -rf /host/usr",
            "deletes class=system recursive=true via=rm path=/usr"
        ));
        assert!(has(
            "docker run --mount type=bind,source=/,target=/host alpine rm -rf /host",
            "deletes class=root"
        ));
        assert!(has(
            "docker run -v /etc:/etc alpine sh -c 'echo x > /etc/passwd'",
            "writes class=system"
        ));
        assert!(has(
            "docker run --rm -it -v /:/mnt ubuntu chroot /mnt bash",
            "escalates-privilege via=container"
        ));
        assert!(has(
            "docker run -v /dev/sda:/dev/sda alpine dd if=/dev/zero of=/dev/sda",
            "overwrites class=device"
        ));
        assert!(has(
            "docker run --privileged alpine sh",
            "escalates-privilege via=container"
        ));
        assert!(has(
            "docker container run -it -v /etc:/h --entrypoint sh alpine",
            "escalates-privilege via=container"
        ));
        for benign in [
            "docker run --rm alpine rm -rf /tmp/x",
            "docker run --rm alpine rm -rf /usr",
            "docker run --rm -v /:/host:ro alpine ls /host",
            "docker run --rm -v /:/host:ro alpine sh",
            "docker run --mount type=bind,source=/,target=/h,readonly alpine rm -rf /h",
            "docker run --rm -v \"$PWD\":/src -w /src node:20 npm test",
            "docker run --rm -v /work/proj:/src alpine rm -rf /src/build",
            "docker exec app rm -rf /var/cache/apk",
            "docker run -it alpine sh",
            "docker run -it -v ~/.aws:/root/.aws amazon/aws-cli",
            "docker run --rm -it -v ~/.m2:/root/.m2 maven:3 sh",
            "docker ps",
        ] {
            let found = lines(benign);
            assert!(
                !found.iter().any(|l| l.starts_with("escalates-privilege")
                    || l.contains("class=root")
                    || l.contains("class=system")),
                "{benign}: {found:?}"
            );
        }
    }
}
