//! Data leaving the machine and shells handed to sockets: a secret named in a network
//! command's arguments (`curl -d @.env`, `scp ~/.ssh/id_rsa host:`), a secret or the
//! environment read earlier in the same pipeline (`env | nc`), and socket tools that run a
//! program for the peer (`nc -e`, `socat … EXEC:`) or sit in a pipeline with a shell.
//! (Cloud CLIs uploading a file and gawk's sockets are rows of the program table,
//! `shell/programs/net.rs` and `editors.rs`.)

use super::Effect;
use super::net;
use super::walk::{Walk, remote_shell, sends_secret};

impl Walk<'_> {
    pub(super) fn network(&mut self, p: &str, args: &[String], d: usize, fx: &mut Vec<Effect>) {
        if !net::SENDERS.contains(&p)
            || p == "openssl" && args.first().is_none_or(|a| a != "s_client")
        {
            return;
        }
        if net::SOCKETS.contains(&p) {
            let exec = args.iter().enumerate().any(|(i, a)| {
                matches!(
                    a.as_str(),
                    "-e" | "-c" | "--exec" | "--sh-exec" | "--lua-exec"
                ) && args.get(i + 1).is_some()
                    || a.starts_with("--exec=")
                    || a.starts_with("--sh-exec=")
                    || p == "socat" && {
                        let u = a.to_ascii_uppercase();
                        u.starts_with("EXEC:") || u.starts_with("SYSTEM:") || u.contains(",EXEC:")
                    }
            });
            if exec {
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
        let mut skip = false;
        let mut secret: Option<String> = None;
        let mut remote = false;
        for a in args {
            if skip {
                skip = false;
                continue;
            }
            if matches!(p, "ssh" | "scp" | "sftp" | "rsync")
                && matches!(
                    a.as_str(),
                    "-i" | "-F" | "-o" | "-e" | "-P" | "-p" | "-l" | "-J"
                )
            {
                skip = true;
                continue;
            }
            if matches!(p, "curl" | "http" | "https" | "xh")
                && matches!(
                    a.as_str(),
                    "--cert" | "--key" | "--cacert" | "-E" | "--config" | "-K"
                )
            {
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
        let needs_remote = matches!(p, "scp" | "sftp" | "rsync" | "rclone");
        if let Some(s) = secret
            && (!needs_remote || remote)
        {
            fx.push(sends_secret(&s, p));
        }
    }
}
