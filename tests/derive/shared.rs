//! Signature first, through the real binary: a malformed `apply_patch` is a rule on its
//! structure whatever the error says, a cause shared by two spellings of a script becomes a
//! rule on the shared path, and a recurring error whose calls share nothing the successes
//! lack is a lesson in `generated.not_rules`, never a rule.

use serde_json::Value;

use super::support::{Row, derive_json, fires, insert};
use crate::common::Env;

fn rules(doc: &Value) -> Vec<&Value> {
    doc["rules"].as_array().unwrap().iter().collect()
}

#[test]
fn a_malformed_patch_is_a_rule_on_its_structure() {
    let env = Env::new();
    let bad_add = "apply_patch <<'PATCH'\n*** Begin Patch\n*** Add File: docs/a.md\n+# A\n\nbody\n*** End Patch\nPATCH";
    let bad_update = "apply_patch <<'PATCH'\n*** Begin Patch\n*** Update File: a.py\n@@\n x = 1\n+y = (\"\"\"\nz\n+\"\"\")\n*** End Patch\nPATCH";
    let empty =
        "apply_patch <<'PATCH'\n*** Begin Patch\n*** Update File: a.py\n*** End Patch\nPATCH";
    let good = "apply_patch <<'PATCH'\n*** Begin Patch\n*** Update File: a.py\n@@\n x = 1\n-y = 2\n+y = 3\n\n*** Add File: b.md\n+# B\n+\n+text\n*** End Patch\nPATCH";
    let mut rows = Vec::new();
    for (i, (cmd, err)) in [
        (bad_add, "Invalid patch hunk on line 5: '' is not a valid hunk header"),
        (bad_update, "Invalid patch hunk on line 8: Expected update hunk to start with a @@ context marker, got: 'z'"),
        (empty, "error: invalid hunk at line 2, Update file hunk for path 'a.py' is empty"),
        (bad_add, "Invalid patch hunk on line 5: '' is not a valid hunk header"),
    ]
    .into_iter()
    .enumerate()
    {
        rows.push(Row::bash("failure", cmd, err, i as i64 * 5));
    }
    for i in 0..12 {
        rows.push(Row::bash("success", good, "", 30 + i));
    }
    insert(&env, &rows);
    let doc = derive_json(&env, &["--keep-anecdotal"]);
    let patch = rules(&doc)
        .into_iter()
        .find(|r| r["match"] == "text" && r["any"][0].as_str().unwrap().contains("Add File"))
        .unwrap_or_else(|| panic!("no malformed-patch candidate in {doc:#}"));
    assert_eq!(patch["meta"]["backtest"]["failures"], 4, "{patch:#}");
    assert_eq!(patch["meta"]["backtest"]["matched"], 4, "{patch:#}");
    for cmd in [bad_add, bad_update, empty] {
        assert!(fires(patch, cmd), "{cmd}");
    }
    assert!(!fires(patch, good));
    let lessons = doc["generated"]["not_rules"].as_array().unwrap();
    assert!(lessons.iter().all(|n| n["finding"] != "lesson"), "{doc:#}");
}

#[test]
fn a_shared_path_is_a_rule_and_a_shared_program_with_successes_is_a_lesson() {
    let env = Env::new();
    let err = "ERROR: Not a checkout of the tool. Run init first";
    let mut rows = vec![
        Row::bash("failure", "tools/kit/plan.sh --json", err, 1),
        Row::bash("failure", "bash ./tools/kit/plan.sh --json", err, 2),
        Row::bash("failure", "tools/kit/check.sh", err, 3),
    ];
    for i in 0..6 {
        rows.push(Row::bash("success", "ls tools", "", 10 + i));
    }
    // One error of `make` in two sessions, while `make` also works on the same target.
    let merr = "make: *** No rule to make target for the vendored module";
    rows.push(Row::bash("failure", "make vendor", merr, 20));
    rows.push(Row::bash("failure", "make vendor", merr, 22));
    for i in 0..6 {
        rows.push(Row::bash("success", "make vendor", "", 30 + i));
    }
    insert(&env, &rows);
    let doc = derive_json(&env, &["--keep-anecdotal"]);
    let path = rules(&doc)
        .into_iter()
        .find(|r| r["any"][0].as_str().unwrap().contains("tools/kit/"))
        .unwrap_or_else(|| panic!("no shared-path candidate in {doc:#}"));
    assert!(fires(path, "tools/kit/other.sh"));
    assert!(fires(path, "bash tools/kit/plan.sh"));
    assert!(!fires(path, "ls tools"));
    let lessons: Vec<&Value> = doc["generated"]["not_rules"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["finding"] == "lesson")
        .collect();
    assert_eq!(lessons.len(), 1, "{doc:#}");
    assert_eq!(lessons[0]["fail_count"], 2);
    assert!(
        !rules(&doc)
            .iter()
            .any(|r| r["any"][0].as_str().unwrap().contains("make")),
        "{doc:#}"
    );
}
