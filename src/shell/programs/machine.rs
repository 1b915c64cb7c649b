//! The machine itself: `kill` of every process (pid `-1` or `1`), `killall5`, `reboot`,
//! `halt`, `poweroff`, `shutdown`; `crontab -r`; containers (`docker`, `podman`,
//! `nerdctl`: what reaches the host through mounts, read by `model/machine.rs`); and
//! `callus uninstall`, which deletes callus's own state.

use super::row::{Row, Shape};
use crate::shell::model::effect::Effect;
use crate::shell::model::effect::EffectKind;
use crate::shell::model::paths::Class;
use crate::shell::model::walk::{Call, Walk};

pub(super) const KILL: Row = Row {
    effects: Some(kill),
    ..Row::PLAIN
};
/// `killall5`, `reboot`, `halt`, `poweroff`, `shutdown`: the machine stops.
pub(super) const POWER: Row = Row {
    effects: Some(power),
    ..Row::PLAIN
};
pub(super) const CRONTAB: Row = Row {
    effects: Some(|w, c, fx| w.crontab(c.args, c.seg, c.depth, fx)),
    ..Row::PLAIN
};
pub(super) const CONTAINER: Row = Row {
    effects: Some(|w, c, fx| w.container(c.args, fx)),
    ..Row::PLAIN
};
/// `docker`: also a multiplexer (`docker compose`).
pub(super) const CONTAINER_SUBCOMMAND: Row = Row {
    shape: Shape::Subcommand,
    ..CONTAINER
};
pub(super) const CALLUS: Row = Row {
    effects: Some(callus),
    ..Row::PLAIN
};

/// `kill -9 -1`, `kill -s KILL 1`: every process (not a probe, `kill -0`).
fn kill(_: &mut Walk<'_>, c: &Call<'_>, fx: &mut Vec<Effect>) {
    let args = c.args;
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
            EffectKind::KillsAllProcesses,
            &[("via", "kill")],
            "kills every process (pid -1 or init)".into(),
        ));
    }
}

fn power(_: &mut Walk<'_>, c: &Call<'_>, fx: &mut Vec<Effect>) {
    let p = c.program;
    if !c.args.iter().any(|a| a == "--help") {
        fx.push(Effect::plain(
            EffectKind::KillsAllProcesses,
            &[("via", p)],
            format!("stops the machine with {p}"),
        ));
    }
}

fn callus(w: &mut Walk<'_>, c: &Call<'_>, fx: &mut Vec<Effect>) {
    if c.args.first().is_none_or(|a| a != "uninstall") {
        return;
    }
    let home = w
        .ctx
        .callus_home
        .clone()
        .unwrap_or_else(|| "$CALLUS_HOME".into());
    fx.push(Effect::on_path(
        EffectKind::Deletes,
        &format!("uninstalls callus, deleting {home}"),
        &[("recursive", "true"), ("via", "callus uninstall")],
        Class::ControlPlane,
        &home,
    ));
}
