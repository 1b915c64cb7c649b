//! The per-call rule index: the hook builds only the rules a call can need, chosen from the
//! layer files' own bytes on every call. Nothing is cached on disk, so nothing written there
//! (a forged index of an earlier version's format included) changes a decision; an edited
//! file, or a file broken after it worked, decides exactly as a full parse does.

use std::path::PathBuf;

use super::{Host, audit_records, bash, deny_json, guard};
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
fn no_cache_is_written_and_every_call_decides_from_the_files() {
    let env = Env::new();
    env.write_home("rules.json", RULES);
    let denied = (Some(0), zork_denied(), String::new());
    for _ in 0..2 {
        assert_eq!(decide(&env, "cd src && zork --all"), denied);
        assert_eq!(
            decide(&env, "echo zork"),
            (Some(0), String::new(), String::new())
        );
        let out = decide(&env, "rm -rf /");
        assert_eq!(out.0, Some(2), "{out:?}");
    }
    assert!(indexes(&env).is_empty(), "{:?}", indexes(&env));
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

/// The layer-index fingerprint of earlier versions (`src/rules/index.rs` before issue 15),
/// as an attacker reimplements it from the source: two multiply-rotate lanes, finished with
/// the `MurmurHash3` mix.
fn old_fingerprint(bytes: &[u8]) -> [u8; 16] {
    const K1: u64 = 0x9e37_79b9_7f4a_7c15;
    const K2: u64 = 0xc2b2_ae3d_27d4_eb4f;
    let len = bytes.len() as u64;
    let (mut a, mut b) = (len ^ K2, len.rotate_left(32) ^ K1);
    let mut step = |w: u64| {
        a = (a ^ w).wrapping_mul(K1).rotate_left(29);
        b = (b ^ w.rotate_left(32)).wrapping_mul(K2).rotate_left(31) ^ a;
    };
    let mut words = bytes.chunks_exact(8);
    for word in &mut words {
        step(u64::from_le_bytes(word.try_into().unwrap()));
    }
    let rest = words.remainder();
    let mut buf = [0u8; 8];
    buf[..rest.len()].copy_from_slice(rest);
    step(u64::from_le_bytes(buf) ^ (rest.len() as u64) << 56);
    let mix = |mut h: u64| {
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        h ^ (h >> 33)
    };
    let mut out = [0u8; 16];
    out[..8].copy_from_slice(&mix(a).to_le_bytes());
    out[8..].copy_from_slice(&mix(b ^ a.rotate_left(17)).to_le_bytes());
    out
}

/// Issue 15, item 1: an index that keeps the stamp and fingerprint of a genuine one but lists
/// no rule switched every layer off, the built-in starter policy included, in both fail
/// modes, while `guard test` and `rules list` still showed every rule. Whatever the agent
/// writes under `$CALLUS_HOME/cache/` now changes no decision.
#[test]
fn a_forged_layer_index_switches_no_rule_off() {
    let mut env = Env::new();
    env.write_home("rules.json", RULES);
    assert_eq!(decide(&env, "zork").1, zork_denied());
    assert_eq!(decide(&env, "rm -rf /").0, Some(2));
    // Plant an index in the format earlier versions wrote (one per layer) and trusted.
    let cache = env.home_path().join("cache");
    let mut files = indexes(&env);
    // The guard keeps no on-disk index any more: nothing it would trust is there to forge.
    assert!(files.is_empty(), "the guard wrote an index: {files:?}");
    std::fs::create_dir_all(&cache).unwrap();
    files.push(cache.join("layer-57bfa9b5af16d94c-93b4a33d.idx"));
    for file in &files {
        let old = std::fs::read(file).unwrap_or_default();
        // The header: the binary's stamp and the text's fingerprint, each length-prefixed.
        let field = |at: usize| -> Option<usize> {
            let n = u32::from_le_bytes(old.get(at..at + 4)?.try_into().ok()?) as usize;
            (old.len() >= at + 4 + n).then_some(at + 4 + n)
        };
        let header = field(0).and_then(field).unwrap_or(0);
        let body = [0u8; 8]; // no disabled id, no rule
        let mut forged = old[..header].to_vec();
        forged.extend_from_slice(&body);
        forged.extend_from_slice(&old_fingerprint(&body)[..8]);
        std::fs::write(file, forged).unwrap();
    }
    for fail in ["open", "closed"] {
        env.var("CALLUS_FAIL", fail);
        assert_eq!(decide(&env, "zork").1, zork_denied(), "fail {fail}");
        let out = decide(&env, "rm -rf /");
        assert_eq!(out.0, Some(2), "fail {fail}: {out:?}");
    }
}

#[test]
fn a_file_broken_after_it_worked_is_reported() {
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

#[test]
fn the_built_in_starter_layer_is_the_embedded_document() {
    // The hook takes the starter set from a table `build.rs` made of starter.json; what it
    // decides and the layer hash it records are the parsed document's.
    let env = Env::new();
    let out = guard(&env, &bash(&env, Host::Claude, "cd /tmp && rm -rf /"));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("rm-recursive-root-or-home"),
        "{}",
        stderr(&out)
    );
    let quiet = guard(&env, &bash(&env, Host::Claude, "cargo test && git status"));
    assert_eq!(
        (quiet.status.code(), stdout(&quiet), stderr(&quiet)),
        (Some(0), String::new(), String::new())
    );
    let parsed = callus::testing::RuleSet::starter().unwrap();
    let records = audit_records(&env);
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!(records[0]["ruleset_hash"], parsed.content_hash().as_str());
    // The user's `disable` list still switches a starter rule off.
    env.write_home(
        "rules.json",
        r#"{"disable": ["rm-recursive-root-or-home"]}"#,
    );
    let out = guard(&env, &bash(&env, Host::Claude, "cd /tmp && rm -rf /"));
    assert!(
        !stderr(&out).contains("rm-recursive-root-or-home"),
        "{}",
        stderr(&out)
    );
}
