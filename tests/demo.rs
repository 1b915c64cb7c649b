//! Integration test: `callus demo`, the README's first command, plays the whole loop.

use crate::common::{Env, stderr, stdout};

#[test]
fn the_demo_runs_every_stage_and_touches_nothing_outside_its_temp_home() {
    let env = Env::new();
    let out = env.run(&["demo"], b"");
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}\n{}", stderr(&out));
    // Each stage did its job, in order.
    let stages = [
        "1. RECORD",
        "new calls stored",
        "2. DERIVE",
        "candidate derived-bash-psql-",
        "3. REVIEW",
        "promoted 'derived-bash-psql-",
        "4. GUARD",
        "BLOCKED by callus (rule derived-bash-psql-",
        "5. AUDIT",
        "OK — chain intact",
        "6. PRUNE",
        "rule lifecycle",
        "7. SCOPE",
        "deny — Touched 1 forbidden path(s): scripts/build.py",
        "Done.",
    ];
    let mut at = 0;
    for s in stages {
        let pos = text[at..]
            .find(s)
            .unwrap_or_else(|| panic!("missing or out of order: {s}\n{text}"));
        at += pos + s.len();
    }
    // The candidate's ceiling was respected: a deterministic psql cluster promoted to block.
    assert!(
        text.contains("tier \"deterministic\", ceiling block"),
        "{text}"
    );
    // The user's own home was not touched.
    assert!(
        std::fs::read_dir(env.home_path()).unwrap().next().is_none(),
        "the demo wrote into CALLUS_HOME"
    );
}
