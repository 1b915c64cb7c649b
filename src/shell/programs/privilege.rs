//! Running as another user: `sudo`, `doas`, `pkexec` (meaningful wrappers: the wrapper,
//! then its command one level deeper; `sudo -e/-l/-v/-K` run nothing, `sudo -s`/`-i`
//! alone is a root shell reading stdin), `su` (a runner: `su -c STR`, or a shell reading
//! stdin) and `run0`. Every one of them, unless it only lists or validates, is an
//! `escalates-privilege` effect.

use super::row::{Role, Row, first_operand, wrapper, wraps_at};
use crate::shell::model::effect::Effect;
use crate::shell::model::effect::EffectKind;
use crate::shell::model::walk::{Call, Walk};
use crate::shell::options::{Grammar, PLAIN, parse};
use crate::shell::syntax::sink::{Job, Kind, Sink};

const SUDO_OPTIONS: Grammar = wrapper(
    "CDghpRrTtUu",
    &[
        ("close-from", true),
        ("chdir", true),
        ("group", true),
        ("host", true),
        ("prompt", true),
        ("chroot", true),
        ("role", true),
        ("type", true),
        ("command-timeout", true),
        ("other-user", true),
        ("user", true),
    ],
);
const DOAS_OPTIONS: Grammar = wrapper("Cu", &[]);
const PKEXEC_OPTIONS: Grammar = wrapper("", &[("user", true)]);

pub(super) const SUDO: Row = Row {
    options: &SUDO_OPTIONS,
    role: Role::Meaningful,
    unwrap: Some(sudo),
    effects: Some(escalates),
    ..Row::PLAIN
};
pub(super) const DOAS: Row = Row {
    options: &DOAS_OPTIONS,
    role: Role::Meaningful,
    unwrap: Some(|argv, _, _, _| wraps_at(argv, first_operand(argv, &DOAS_OPTIONS))),
    effects: Some(escalates),
    ..Row::PLAIN
};
pub(super) const PKEXEC: Row = Row {
    options: &PKEXEC_OPTIONS,
    role: Role::Meaningful,
    unwrap: Some(|argv, _, _, _| wraps_at(argv, first_operand(argv, &PKEXEC_OPTIONS))),
    effects: Some(escalates),
    ..Row::PLAIN
};
pub(super) const SU: Row = Row {
    role: Role::Runner,
    unwrap: Some(|argv, job, _, _| {
        Kind::Runs(su_command(argv).or_else(|| job.stdin_text().map(str::to_owned)))
    }),
    effects: Some(escalates),
    ..Row::PLAIN
};
pub(super) const RUN0: Row = Row {
    effects: Some(escalates),
    ..Row::PLAIN
};

fn sudo(argv: &[String], job: &Job, _: u8, _: &mut Sink) -> Kind {
    let o = parse(argv.get(1..).unwrap_or_default(), &SUDO_OPTIONS);
    let i = 1 + o.rest;
    let query = argv[1..i]
        .iter()
        .any(|a| matches!(a.as_str(), "--edit" | "--list" | "--validate"));
    let flag = |f: &[char]| o.short.iter().any(|c| f.contains(c));
    if query || flag(&['e', 'l', 'v', 'V', 'K']) {
        Kind::Plain
    } else if i >= argv.len() && flag(&['s', 'i']) {
        // `sudo -s`/`sudo -i` with no command: a root shell reading stdin.
        Kind::Runs(job.stdin_text().map(str::to_owned))
    } else {
        wraps_at(argv, i)
    }
}

/// `escalates-privilege`, unless the call only lists, validates or asks for help.
fn escalates(_: &mut Walk<'_>, c: &Call<'_>, fx: &mut Vec<Effect>) {
    let (p, args) = (c.program, c.args);
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
    let list_cmd = p == "sudo" && args.first().is_some_and(|a| a == "-l" || a == "--list");
    if !listing && !list_cmd {
        fx.push(Effect::plain(
            EffectKind::EscalatesPrivilege,
            &[("via", p)],
            format!("runs as another user with {p}"),
        ));
    }
}

/// util-linux `su [OPTS] [-] [USER [ARGS]]`.
const SU_OPTIONS: Grammar = Grammar {
    short_value: "cgGsw",
    long: &[
        ("command", true),
        ("session-command", true),
        ("group", true),
        ("supp-group", true),
        ("shell", true),
        ("whitelist-environment", true),
        ("login", false),
        ("preserve-environment", false),
        ("pty", false),
        ("fast", false),
    ],
    ..PLAIN
};

/// `su … -c CMD` / `--command=CMD` / `--session-command CMD` (without one, `su` runs a
/// shell that reads stdin).
fn su_command(argv: &[String]) -> Option<String> {
    parse(argv.get(1..).unwrap_or_default(), &SU_OPTIONS)
        .first_of(&["-c", "--command", "--session-command"])
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use crate::shell::programs::texts;

    #[test]
    fn sudo_wraps_its_command_unless_it_only_asks() {
        assert_eq!(texts("sudo -u root rm x"), ["sudo -u root rm x", "rm x"]);
        assert_eq!(texts("sudo -l rm"), ["sudo -l rm"]);
        assert_eq!(texts("sudo --list"), ["sudo --list"]);
        assert_eq!(texts("sudo -s <<< 'rm x'"), ["sudo -s", "rm x"]);
        assert_eq!(texts("doas -u x rm y")[1], "rm y");
        assert_eq!(texts("pkexec --user x rm y")[1], "rm y");
        assert_eq!(texts("su -c 'rm x' root")[1], "rm x");
        assert_eq!(texts("su --session-command=ls")[1], "ls");
        assert_eq!(texts("su - root -c 'rm x'")[1], "rm x");
        // A cluster ending in `-c`, and an abbreviation, are read as getopt reads them.
        assert_eq!(texts("su -lc 'rm x'")[1], "rm x");
        assert_eq!(texts("su --comm=ls root")[1], "ls");
        assert_eq!(texts("su -s /bin/sh root"), ["su -s /bin/sh root"]);
    }
}
