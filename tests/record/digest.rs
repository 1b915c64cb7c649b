//! Stored digests are keyed and blind to secrets (issue 15 item 4): the digest the recorder
//! keeps of `PGPASSWORD=hunter2 psql` does not give the password back to a wordlist.

use serde_json::json;
use sha2::{Digest as _, Sha256};

use super::{db, record};
use crate::common::Env;

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

fn pre(id: &str, command: &str) -> serde_json::Value {
    json!({
        "session_id": "s-digest", "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": {"command": command}, "tool_use_id": id, "cwd": "/tmp"
    })
}

fn digest(env: &Env, id: &str) -> String {
    db(env)
        .query_row(
            "SELECT input_sha256 FROM tool_calls WHERE tool_use_id = ?1",
            [id],
            |r| r.get(0),
        )
        .unwrap()
}

#[test]
fn a_stored_digest_is_no_password_oracle() {
    let env = Env::new();
    let command = "PGPASSWORD=hunter2 psql -h db -c 'select 1'";
    record(&env, &pre("toolu_d1", command));
    let stored = digest(&env, "toolu_d1");
    assert_eq!(stored.len(), 64, "{stored}");
    let wordlist = [
        "password", "123456", "hunter2", "letmein", "secret", "***", "",
    ];
    for word in wordlist {
        let guess = command.replace("hunter2", word);
        assert_ne!(
            stored,
            hex(&Sha256::digest(guess.as_bytes())),
            "the digest confirms the guess {word:?}"
        );
    }
    // The key is the install's own, private, and created once.
    let key = env.home_path().join("digest.key");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&key).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let before = std::fs::read(&key).unwrap();
    // Same command, other secret: the same digest (taken after redaction), same key.
    record(&env, &pre("toolu_d2", &command.replace("hunter2", "other")));
    assert_eq!(digest(&env, "toolu_d2"), stored);
    assert_eq!(std::fs::read(&key).unwrap(), before);
    // Another install keys differently.
    let other = Env::new();
    record(&other, &pre("toolu_d1", command));
    assert_ne!(digest(&other, "toolu_d1"), stored);
}
