//! Data leaving the machine and shells handed to sockets: a secret named in a network
//! command's arguments (`curl -d @.env`, `scp ~/.ssh/id_rsa host:`), a secret or the
//! environment read earlier in the same pipeline (`env | nc`), and socket tools that run a
//! program for the peer (`nc -e`, `socat … EXEC:`) or sit in a pipeline with a shell.
//! Which programs send, connect or are sockets, and which of their options to skip, are
//! their rows' facts ([`crate::shell::programs::Network`]). (Cloud CLIs uploading a file and
//! gawk's sockets are rows' effects, `shell/programs/net.rs` and `editors.rs`.)

use super::effect::Effect;
use super::net;
use super::walk::{Walk, remote_shell, sends_secret};
use crate::shell::programs::{self, Network};

impl Walk<'_> {
    /// A sender's call (its row's [`Network`]): a socket tool handing the connection a
    /// program or sitting in a pipeline with a shell, a secret read earlier in the pipeline,
    /// and a secret named in its arguments.
    pub(super) fn network(&mut self, p: &str, args: &[String], d: usize, fx: &mut Vec<Effect>) {
        let network = programs::network(p);
        if !network.sends || network.connects.is_some_and(|connects| !connects(args)) {
            return;
        }
        if let Some(hands_over) = network.socket {
            if hands_over(args) {
                fx.push(remote_shell(&format!("{p} hands the connection a program")));
            }
            self.pipes[d].socket = true;
            if self.pipes[d].shell {
                fx.push(remote_shell("a shell piped to a socket"));
            }
        }
        if let Some(s) = self.pipes[d].secret.clone() {
            fx.push(sends_secret(&s, p));
        }
        if let Some(s) = secret_sent(args, network) {
            fx.push(sends_secret(&s, p));
        }
    }
}

/// The first secret a sender's arguments name (`-d @.env`, `--data=$(cat .env)`, `scp
/// ~/.ssh/id_rsa host:`, `$(env)`), the values of its [`Network::skips`] aside; for one that
/// [`Network::needs_remote`], only when an argument is a remote location.
fn secret_sent(args: &[String], network: &Network) -> Option<String> {
    let mut skip = false;
    let mut secret: Option<String> = None;
    let mut remote = false;
    for a in args {
        if skip {
            skip = false;
            continue;
        }
        if network.skips.contains(&a.as_str()) {
            skip = true;
            continue;
        }
        if net::is_remote(a) {
            remote = true;
        }
        let upload = a.rsplit_once('@').map(|(_, f)| f);
        let value = a.split_once('=').map(|(_, v)| v);
        let candidates = [Some(a.as_str()), upload, value];
        if candidates.iter().flatten().any(|c| net::is_secret(c)) {
            secret.get_or_insert_with(|| a.clone());
        }
        for sub in net::substitutions(a) {
            let words = sub.split(|c: char| c.is_whitespace() || c == ')' || c == '`');
            if let Some(w) = words.clone().find(|w| net::is_secret(w)) {
                secret.get_or_insert_with(|| w.to_string());
            } else if words.take(2).any(|w| matches!(w, "env" | "printenv")) {
                secret.get_or_insert_with(|| "the environment".into());
            }
        }
    }
    secret.filter(|_| !network.needs_remote || remote)
}
