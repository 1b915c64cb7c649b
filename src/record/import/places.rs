//! Where the hosts keep their history, for `callus record import` with no path.
//!
//! Claude Code writes transcripts under `~/.claude/projects/` (`$CLAUDE_CONFIG_DIR/projects/`
//! when that is set; both are read, since a user who set it may have history in the old place
//! too), Codex its rollouts under `$CODEX_HOME/sessions/` (default `~/.codex/sessions/`), and
//! Gemini CLI its session logs under `~/.gemini/tmp/` (`$GEMINI_CLI_HOME/.gemini/tmp/`), and
//! GitHub Copilot CLI its under `~/.copilot/session-state/` (`$COPILOT_HOME/session-state/`:
//! docs.github.com "CLI configuration directory reference" lists `session-state/` as the
//! session history; `COPILOT_HOME` moves the whole directory, github/copilot-cli#1954).
//! Cursor keeps no history callus reads: it is recorded live only.

use std::path::PathBuf;

use crate::host::{Host, codex_home, user_home};

/// One known place: the host it belongs to and the directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Place {
    /// `claude`, `codex`, `gemini` or `copilot`.
    pub host: &'static str,
    /// The directory (it may not exist).
    pub dir: PathBuf,
}

/// Every known place, in a fixed order, each once; whether it exists is for the caller.
#[must_use]
pub(crate) fn known() -> Vec<Place> {
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let mut places = Vec::new();
    if let Some(dir) = env("CLAUDE_CONFIG_DIR") {
        places.push(Place {
            host: "claude",
            dir: dir.join("projects"),
        });
    }
    places.push(Place {
        host: "claude",
        dir: user_home().join(".claude").join("projects"),
    });
    places.push(Place {
        host: "codex",
        dir: codex_home().join("sessions"),
    });
    places.push(Place {
        host: "gemini",
        dir: env("GEMINI_CLI_HOME")
            .unwrap_or_else(user_home)
            .join(".gemini")
            .join("tmp"),
    });
    places.push(Place {
        host: "copilot",
        dir: (Host::Copilot.spec().history_dir)(),
    });
    let mut seen = Vec::new();
    places.retain(|p| {
        let fresh = !seen.contains(&p.dir);
        seen.push(p.dir.clone());
        fresh
    });
    places
}
