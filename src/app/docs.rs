//! `callus completions SHELL` and `callus man`: the shell completion script and the man
//! pages, generated from the clap definition of the command line itself (`cli::Cli`), so
//! neither can drift from `--help`.

use std::path::Path;

use clap::CommandFactory as _;

use crate::cli::{Cli, CompletionsArgs, ManArgs};
use crate::{Error, Exit, Result};

/// `callus completions SHELL`: the script on stdout.
pub(super) fn completions(args: &CompletionsArgs) -> Exit {
    let mut cmd = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "callus", &mut out);
    crate::output::write_stdout(&String::from_utf8_lossy(&out));
    Exit::Ok
}

/// `callus man [--dir DIR]`: `callus.1` on stdout, or every page into DIR (created if
/// missing), naming each page written on stdout.
pub(super) fn man(args: &ManArgs) -> Result<Exit> {
    let cmd = Cli::command();
    match &args.dir {
        None => {
            let mut out = Vec::new();
            clap_mangen::Man::new(cmd)
                .render(&mut out)
                .map_err(|e| Error::io("stdout", e))?;
            crate::output::write_stdout(&String::from_utf8_lossy(&out));
        }
        Some(dir) => {
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
            clap_mangen::generate_to(cmd, dir).map_err(|e| Error::io(dir, e))?;
            crate::output::write_stdout(&listing(dir)?);
        }
    }
    Ok(Exit::Ok)
}

/// The `*.1` pages in `dir`, one path a line, sorted.
fn listing(dir: &Path) -> Result<String> {
    let mut pages: Vec<String> = std::fs::read_dir(dir)
        .map_err(|e| Error::io(dir, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "1"))
        .map(|p| p.display().to_string())
        .collect();
    pages.sort();
    let mut text = pages.join("\n");
    text.push('\n');
    Ok(text)
}
