//! Issue 15's adversarial re-review, through the real hook: routes the first round did not
//! try, each of which got a call through before its fix. Lifting a RECUSE halt from another
//! session with the program computed (`$(which callus)`, `` `which callus` ``, `$CMD`,
//! `"$CALLUS_BIN"`) or from an interpreter's inline code was allowed; so was replacing the
//! callus executable the hooks run, which switches every rule off without a trace.

use serde_json::json;

use crate::common::{Env, guard_decision};

fn bash(env: &Env, command: &str) -> String {
    guard_decision(env, "Bash", &json!({ "command": command }))
}

#[test]
fn resuming_a_halt_through_a_computed_program_or_inline_code_is_blocked() {
    let env = Env::new();
    for command in [
        "\"$(command -v callus)\" session resume sess-1",
        "$(which callus) session resume sess-1",
        "`which callus` session resume sess-1",
        "CMD=callus; $CMD session resume sess-1",
        "\"$CALLUS_BIN\" session resume sess-1",
        "${CALLUS} session resume sess-1",
        "python3 -c \"import subprocess; subprocess.run(['callus','session','resume','s'])\"",
        "node -e \"require('child_process').execSync('callus session resume s')\"",
        "perl -e 'system(\"callus\", \"session\", \"resume\", \"s\")'",
    ] {
        assert_eq!(bash(&env, command), "block", "{command}");
    }
    // Near misses stay allowed: the words as data, another program's subcommand.
    for command in [
        "echo 'callus session resume'",
        "\"$EDITOR\" notes/session.md",
        "python3 -c \"print('resume the session')\"",
        "$(which tmux) attach-session -t resume",
    ] {
        assert_eq!(bash(&env, command), "allow", "{command}");
    }
}

#[test]
fn replacing_the_callus_executable_is_denied() {
    let env = Env::new();
    for command in [
        "cp /bin/true ~/.cargo/bin/callus",
        "install -m 755 /tmp/fake /usr/local/bin/callus",
        "printf '#!/bin/sh\\nexit 0\\n' > ~/.local/bin/callus",
        "ln -sf /bin/true /usr/local/bin/callus",
    ] {
        assert_eq!(bash(&env, command), "deny", "{command}");
    }
    for command in [
        "cp target/release/callus /tmp/callus-copy",
        "cargo build --release",
        "ls -l ~/.cargo/bin/callus",
    ] {
        assert_eq!(bash(&env, command), "allow", "{command}");
    }
}
