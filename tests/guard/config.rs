//! The settings the guard runs under are strict (issue 15, item 7): an unknown key, a bad
//! value or an unreadable settings file, and a `CALLUS_FAIL` typo, are reported with file and
//! line by `guard check` and `doctor`; in the hook such a configuration fails closed whenever
//! a source asked for closed or the problem leaves the policy unknown, and says so on stderr.
//! Before, each of these silently meant fail-open.

use super::guard;
use crate::common::{Env, json, stderr, stdout};

/// A payload that is an internal error (not JSON): exit 2 failing closed, 0 failing open.
const BROKEN: &[u8] = b"{not json";

fn policy_in_force(env: &Env) -> (Option<i32>, String) {
    let out = guard(env, BROKEN);
    (out.status.code(), stderr(&out))
}

#[test]
fn settings_that_meant_closed_or_cannot_tell_fail_closed() {
    for (text, note) in [
        ("fail = \"closed\"  # strict\n", None),
        ("FAIL = closed\n", Some(":1: unknown key 'FAIL'")),
        (
            "# settings\nfail = \"clsoed\"\n",
            Some(":2: fail: unknown value 'clsoed'"),
        ),
        (
            "fail = closed strict\n",
            Some(":1: unexpected text after the value"),
        ),
    ] {
        let env = Env::new();
        env.write_home("config", text);
        let (code, err) = policy_in_force(&env);
        assert_eq!(code, Some(2), "{text:?}: {err}");
        assert!(
            err.contains("BLOCKED by callus (fail-closed)"),
            "{text:?}: {err}"
        );
        match note {
            None => assert!(!err.contains("invalid configuration"), "{text:?}: {err}"),
            Some(note) => {
                let want = format!(
                    "callus: invalid configuration: {}{note}",
                    env.home_path().join("config").display()
                );
                assert!(err.contains(&want), "{text:?}: {err}");
                assert!(err.contains("(the guard fails closed)"), "{err}");
            }
        }
    }
}

#[test]
fn a_callus_fail_typo_and_an_unreadable_settings_file_fail_closed() {
    let mut env = Env::new();
    env.var("CALLUS_FAIL", "clsoed");
    let (code, err) = policy_in_force(&env);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("invalid configuration: CALLUS_FAIL: unknown value 'clsoed'"),
        "{err}"
    );
    let env = Env::new();
    std::fs::create_dir_all(env.home_path().join("config")).unwrap();
    let (code, err) = policy_in_force(&env);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("cannot be read"), "{err}");
}

#[test]
fn an_unknown_key_that_says_nothing_of_the_policy_stays_open_but_is_said() {
    let env = Env::new();
    env.write_home("config", "colour = red\n");
    let (code, err) = policy_in_force(&env);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains(
            ":1: unknown key 'colour' (known: fail, answer_codes) (ignored; failing open)"
        ),
        "{err}"
    );
    // A valid file says nothing.
    let env = Env::new();
    env.write_home("config", "fail = open # default\n");
    let (code, err) = policy_in_force(&env);
    assert_eq!(code, Some(0));
    assert!(!err.contains("configuration"), "{err}");
}

#[test]
fn guard_check_and_doctor_report_the_file_and_line() {
    let env = Env::new();
    let path = env.write_home("config", "# settings\n\nFAIL = closed\n");
    let want = format!("{}:3: unknown key 'FAIL'", path.display());
    let out = env.run(&["guard", "check"], b"");
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(stdout(&out).contains(&want), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("✗ config: fail closed"),
        "{}",
        stdout(&out)
    );
    let out = env.run(&["doctor", "--json"], b"");
    let report = json(&out);
    let config: Vec<&serde_json::Value> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["area"] == "config")
        .collect();
    assert_eq!(config.len(), 1, "{report}");
    assert_eq!(config[0]["status"], "fail");
    assert!(
        config[0]["message"].as_str().unwrap().contains(&want),
        "{report}"
    );
    // A valid configuration passes both.
    env.write_home("config", "fail = closed\n");
    let out = env.run(&["guard", "check"], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(!stdout(&out).contains("✗ config"), "{}", stdout(&out));
}
