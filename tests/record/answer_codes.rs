//! The answer table extended by `$CALLUS_HOME/config`'s `answer_codes`, through the real
//! binary: an entry turns a program's exit status into an `answer` on import, and a
//! malformed entry stops `record import` and `derive` with exit 3, naming file, line and key.

use super::{import, row};
use crate::common::{Env, stderr};

/// A Claude transcript with one `mytool check` call that exited 3 with no message.
fn transcript(env: &Env) -> std::path::PathBuf {
    let s = "7d1c0a2e-answer-codes";
    let lines = [
        format!(
            r#"{{"type":"assistant","sessionId":"{s}","uuid":"a1","cwd":"/w","timestamp":"2026-07-01T10:00:00Z","message":{{"role":"assistant","content":[{{"type":"tool_use","id":"toolu_mytool","name":"Bash","input":{{"command":"mytool check --all"}}}}]}}}}"#
        ),
        format!(
            r#"{{"type":"user","sessionId":"{s}","uuid":"u1","cwd":"/w","timestamp":"2026-07-01T10:00:01Z","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_mytool","content":"Exit code 3","is_error":true}}]}}}}"#
        ),
    ];
    env.write_home("history/t.jsonl", &(lines.join("\n") + "\n"))
}

#[test]
fn an_answer_codes_entry_changes_the_class() {
    let env = Env::new();
    let file = transcript(&env);
    import(&env, std::slice::from_ref(&file));
    assert_eq!(row(&env, "toolu_mytool").status, "failure");

    let env = Env::new();
    env.write_home("config", "answer_codes = \"mytool check:3, make -q:1\"\n");
    let file = transcript(&env);
    let s = import(&env, &[file]);
    assert_eq!(s["answers"], 1, "{s:#}");
    assert_eq!(row(&env, "toolu_mytool").status, "answer");
}

#[test]
fn a_malformed_answer_codes_entry_is_an_input_error() {
    let env = Env::new();
    let config = env.write_home("config", "# mine\nanswer_codes = \"mytool check:three\"\n");
    let file = transcript(&env);
    let want = format!(
        "{}:2: answer_codes: entry 'mytool check:three': 'three' is not an exit code 1-255",
        config.display()
    );
    let out = env.run(&["record", "import", &file.to_string_lossy()], b"");
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(stderr(&out).contains(&want), "{}", stderr(&out));
    let out = env.run(&["derive", "--since", "2026-07-01"], b"");
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(stderr(&out).contains(&want), "{}", stderr(&out));
}
