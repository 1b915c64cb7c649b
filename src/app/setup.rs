//! `callus install|uninstall|doctor|demo|session`: the command line turned into the set-up
//! commands' requests.

use crate::cli::{InstallArgs, SessionCommand};
use crate::config::Home;
use crate::install::Request;
use crate::{Exit, Result};

/// `callus install` (`remove` false) or `callus uninstall` (`remove` true).
pub(super) fn install(home: &Home, args: &InstallArgs, remove: bool) -> Result<Exit> {
    let request = Request {
        hosts: crate::host::HOSTS
            .iter()
            .filter(|spec| flag_set(args, spec.install_flag))
            .map(|spec| spec.host)
            .collect(),
        project: args.project,
        dry_run: args.dry_run,
    };
    if remove {
        crate::install::uninstall(home, &request)
    } else {
        crate::install::install(home, &request)
    }
}

/// Whether the host selected by `flag` (the host table's `install_flag`) was asked for.
fn flag_set(args: &InstallArgs, flag: &str) -> bool {
    match flag {
        "--claude" => args.claude,
        "--codex" => args.codex,
        "--gemini" => args.gemini,
        "--cursor" => args.cursor,
        "--copilot" => args.copilot,
        _ => false,
    }
}

/// `callus session resume ID`.
pub(super) fn session(home: &Home, cmd: &SessionCommand) -> Result<Exit> {
    match cmd {
        SessionCommand::Resume { id } => crate::session::resume(home, id),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser as _;

    /// Every host of the table is selected by its own flag and by no other.
    #[test]
    fn every_hosts_install_flag_selects_it() {
        for spec in crate::host::HOSTS {
            let cli = crate::cli::Cli::try_parse_from(["callus", "install", spec.install_flag])
                .unwrap_or_else(|e| panic!("{}: {e}", spec.install_flag));
            let crate::cli::Command::Install(args) = cli.command else {
                panic!("not install");
            };
            for other in crate::host::HOSTS {
                assert_eq!(
                    flag_set(&args, other.install_flag),
                    other.host == spec.host,
                    "{} vs {}",
                    spec.install_flag,
                    other.install_flag
                );
            }
        }
    }
}
