//! The layer index (`$CALLUS_HOME/cache/`): the hook writes one per layer file that validates
//! and then parses only the rules a call can need. It must never change a decision: an
//! edited file, a damaged index, a cache that cannot be written, or a file broken after it
//! was indexed all decide exactly as a full parse does.

use std::path::PathBuf;

use super::{Host, bash, deny_json, guard};
use crate::common::{Env, stderr, stdout};

const RULES: &str = r#"{"rules": [
  {"id": "no-zork", "tool": "Bash", "match": "segment", "any": ["^zork\\b"], "action": "deny", "message": "Use frob instead."}
]}"#;

fn zork_denied() -> String {
    deny_json("callus denied this call (rule no-zork): Use frob instead.")
}

/// The index files under the env's cache directory.
fn indexes(env: &Env) -> Vec<PathBuf> {
    let Ok(dir) = std::fs::read_dir(env.home_path().join("cache")) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = dir.map(|e| e.unwrap().path()).collect();
    files.sort();
    files
}

/// Run `command` and return (exit code, stdout, stderr).
fn decide(env: &Env, command: &str) -> (Option<i32>, String, String) {
    let out = guard(env, &bash(env, Host::Claude, command));
    (out.status.code(), stdout(&out), stderr(&out))
}

#[test]
fn the_first_call_writes_a_private_index_and_later_calls_decide_the_same() {
    let env = Env::new();
    env.write_home("rules.json", RULES);
    assert!(indexes(&env).is_empty());
    let denied = (Some(0), zork_denied(), String::new());
    assert_eq!(decide(&env, "cd src && zork --all"), denied);
    // The starter and the user layer are indexed.
    let files = indexes(&env);
    assert_eq!(files.len(), 2, "{files:?}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&env.home_path().join("cache")), 0o700);
        assert!(files.iter().all(|f| mode(f) == 0o600));
    }
    let written: Vec<_> = files.iter().map(|f| std::fs::read(f).unwrap()).collect();
    assert_eq!(decide(&env, "cd src && zork --all"), denied);
    assert_eq!(
        decide(&env, "echo zork"),
        (Some(0), String::new(), String::new())
    );
    // The starter still decides through its index.
    let out = decide(&env, "rm -rf /");
    assert_eq!(out.0, Some(2), "{out:?}");
    // Reading an index does not rewrite it.
    let again: Vec<_> = files.iter().map(|f| std::fs::read(f).unwrap()).collect();
    assert_eq!(again, written);
}

#[test]
fn an_edit_of_the_same_size_takes_effect_on_the_next_call() {
    let env = Env::new();
    env.write_home("rules.json", RULES);
    assert_eq!(decide(&env, "zork").1, zork_denied());
    env.write_home("rules.json", &RULES.replace("^zork", "^zorp"));
    assert_eq!(
        decide(&env, "zork"),
        (Some(0), String::new(), String::new())
    );
    assert_eq!(decide(&env, "zorp -x").1, zork_denied());
}

#[test]
fn a_damaged_index_is_ignored_and_rewritten() {
    let env = Env::new();
    env.write_home("rules.json", RULES);
    assert_eq!(decide(&env, "zork").1, zork_denied());
    let files = indexes(&env);
    let good: Vec<_> = files.iter().map(|f| std::fs::read(f).unwrap()).collect();
    for (damage, name) in [
        (
            Box::new(|b: &mut Vec<u8>| b.truncate(b.len() / 2)) as Box<dyn Fn(&mut Vec<u8>)>,
            "truncated",
        ),
        (
            Box::new(|b: &mut Vec<u8>| {
                let i = b.len() - 20;
                b[i] ^= 0x5a;
            }),
            "flipped",
        ),
        (Box::new(|b: &mut Vec<u8>| b.clear()), "empty"),
    ] {
        for (file, bytes) in files.iter().zip(&good) {
            let mut bad = bytes.clone();
            damage(&mut bad);
            std::fs::write(file, bad).unwrap();
        }
        assert_eq!(decide(&env, "zork").1, zork_denied(), "{name}");
        assert_eq!(decide(&env, "rm -rf /").0, Some(2), "{name}");
        let now: Vec<_> = files.iter().map(|f| std::fs::read(f).unwrap()).collect();
        assert_eq!(now, good, "{name}: the index is written afresh");
    }
}

#[test]
fn a_cache_that_cannot_be_written_costs_nothing_but_speed() {
    let env = Env::new();
    env.write_home("rules.json", RULES);
    env.write_home("cache", "a file where the cache directory would go");
    for _ in 0..2 {
        assert_eq!(
            decide(&env, "zork"),
            (Some(0), zork_denied(), String::new())
        );
    }
    assert!(!env.home_path().join("errors.log").exists());
}

#[test]
fn a_file_broken_after_it_was_indexed_is_still_reported() {
    let mut env = Env::new();
    env.write_home("rules.json", RULES);
    assert_eq!(decide(&env, "zork").1, zork_denied());
    env.write_home("rules.json", &RULES.replace("\"deny\"", "\"deni\""));
    env.var("CALLUS_FAIL", "closed");
    let (code, out, err) = decide(&env, "ls");
    assert_eq!((code, out.as_str()), (Some(2), ""));
    assert!(
        err.contains("rules.json") && err.contains("unknown action 'deni'"),
        "{err}"
    );
}
