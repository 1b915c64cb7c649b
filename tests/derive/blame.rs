//! One cause written in several compound commands is one candidate (issue 25, item 1): the
//! failures are blamed on the segment that caused them (`pkill -f` killing the agent's own
//! shell), not on whatever ran last, and `derive explain` shows each blamed segment and why.

use crate::common::{Env, json, stdout};
use crate::record::blame::{FAILURES, trace};

use super::support::{by_shape, derive, derive_json, fires};

#[test]
fn a_cause_spread_over_compound_shapes_is_one_candidate_and_explain_shows_the_blame() {
    let env = Env::new();
    let out = env.run(&["record", "import", trace(&env).to_str().unwrap()], b"");
    assert!(out.status.success());
    let doc = derive_json(&env, &["--min-count", "3"]);
    let pkill = by_shape(&doc, "pkill");
    assert_eq!(pkill.len(), 1, "{doc:#}");
    let c = pkill[0];
    let own: Vec<&str> = FAILURES
        .iter()
        .filter(|(k, ..)| *k == "own-pkill")
        .map(|(_, cmd, _)| *cmd)
        .collect();
    assert_eq!(own.len(), 5);
    for cmd in &own {
        assert!(fires(c, cmd), "{cmd}");
    }
    // Nothing is pinned on the programs that merely ran after it.
    for shape in [
        "node", "npm run", "uvicorn", "python3", "celery", "tail", "sleep",
    ] {
        assert!(by_shape(&doc, shape).is_empty(), "{shape}: {doc:#}");
    }
    let id = c["id"].as_str().unwrap();
    // `--json` prints; a plain run writes the candidate file `explain` reads its window from.
    assert!(derive(&env, &["--min-count", "3"]).status.success());
    let ex = env.run(&["derive", "explain", id, "--json"], b"");
    assert!(ex.status.success(), "{}", crate::common::stderr(&ex));
    let ex = json(&ex);
    let calls = ex["failures"]["calls"].as_array().unwrap();
    assert_eq!(calls.len(), 5);
    for f in calls {
        assert_eq!(f["blamed"]["why"], "killed-own-shell", "{f:#}");
        assert!(
            f["blamed"]["segment"]
                .as_str()
                .unwrap()
                .starts_with("pkill"),
            "{f:#}"
        );
    }
    let text = env.run(&["derive", "explain", id], b"");
    let text = stdout(&text);
    assert!(text.contains("blamed (why)"), "{text}");
    assert!(text.contains("(killed-own-shell)"), "{text}");
    // Each line of the explanation is said once.
    assert_eq!(text.matches("\ntier ").count(), 1, "{text}");
}
