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

use crate::host::{Host, user_home};

/// One known place: the host it belongs to and the directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Place {
    /// `claude`, `codex`, `gemini` or `copilot`.
    pub host: &'static str,
    /// The directory (it may not exist).
    pub dir: PathBuf,
}

/// Every known place, in a fixed order, each once; whether it exists is for the caller.
/// Each host's own history directory comes from the host table (`HostSpec::history_dir`,
/// which honours `$CLAUDE_CONFIG_DIR`, `$CODEX_HOME`, `$GEMINI_CLI_HOME`, `$COPILOT_HOME`).
#[must_use]
pub(crate) fn known() -> Vec<Place> {
    let place = |host: &'static str, h: Host| Place {
        host,
        dir: (h.spec().history_dir)(),
    };
    let mut places = vec![
        place("claude", Host::ClaudeCode),
        // A user who set `$CLAUDE_CONFIG_DIR` may have history in the default place too.
        Place {
            host: "claude",
            dir: user_home().join(".claude").join("projects"),
        },
        place("codex", Host::Codex),
        place("gemini", Host::Gemini),
        place("copilot", Host::Copilot),
    ];
    let mut seen = Vec::new();
    places.retain(|p| {
        let fresh = !seen.contains(&p.dir);
        seen.push(p.dir.clone());
        fresh
    });
    places
}
