//! Network programs with a row: `ssh [OPTS] HOST CMD…` runs its remote command as a script
//! (its paths are the remote machine's, classified the same way). Fetchers, senders and
//! socket tools are still the model's name lists (`model/net.rs`).

use super::row::{Role, Row, first_operand, wrapper};
use crate::shell::options::Grammar;
use crate::shell::syntax::sink::Kind;

const SSH_OPTIONS: Grammar = wrapper("BbcDEeFIiJLlmOoPpQRSWw", &[]);

pub(super) const SSH: Row = Row {
    options: &SSH_OPTIONS,
    role: Role::Runner,
    unwrap: Some(|argv, _, _, _| {
        let i = first_operand(argv, &SSH_OPTIONS) + 1;
        match argv.get(i..) {
            Some(cmd) if !cmd.is_empty() => Kind::Runs(Some(cmd.join(" "))),
            _ => Kind::Plain,
        }
    }),
    ..Row::PLAIN
};

#[cfg(test)]
mod tests {
    use crate::shell::split;

    #[test]
    fn ssh_runs_the_remote_command_as_a_script() {
        let texts: Vec<String> = split("ssh -p 22 -i k host rm -rf /tmp/x")
            .segments
            .into_iter()
            .map(|s| s.text)
            .collect();
        assert_eq!(
            texts,
            ["ssh -p 22 -i k host rm -rf /tmp/x", "rm -rf /tmp/x"]
        );
        assert_eq!(split("ssh host").segments.len(), 1);
    }
}
