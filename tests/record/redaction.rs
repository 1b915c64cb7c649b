//! Every credential form of the corpus (`tests/fixtures/redact/forms.tsv`) through every path
//! that writes — the recorder hook, the busy-store spool and its merge, the guard's audit
//! preview, `record import` of a transcript, derive's `candidates.json`, `report --json` and
//! `--html`, `guard audit export` — and then every byte under `CALLUS_HOME` (store, WAL,
//! candidates, logs, spool, cache) and every output is scanned for each secret verbatim
//! (issue 15 item 3). The team-store path is `sync::no_form_of_the_corpus_reaches_the_team_store`.

use std::path::{Path, PathBuf};

use serde_json::json;

use super::{import, record};
use crate::common::{Env, stderr, stdout};

/// `(kind, secret, text)` for every credential form (not the `keep` lines).
pub(crate) fn forms() -> Vec<(String, String, String)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/redact/forms.tsv");
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| {
            let mut parts = l.splitn(3, '\t');
            let (kind, secret, text) = (parts.next()?, parts.next()?, parts.next()?);
            (kind != "keep").then(|| (kind.into(), secret.into(), text.replace("\\n", "\n")))
        })
        .collect()
}

/// Every file under `dir`, recursively.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out
}

/// Each `(kind, secret)` found verbatim in `bytes` (named `what`).
fn leaks(what: &str, bytes: &[u8], forms: &[(String, String, String)]) -> Vec<String> {
    forms
        .iter()
        .filter(|(_, secret, _)| bytes.windows(secret.len()).any(|w| w == secret.as_bytes()))
        .map(|(kind, _, _)| format!("{kind} in {what}"))
        .collect()
}

fn bash_event(kind: &str, id: &str, command: &str, error: &str) -> serde_json::Value {
    let mut e = json!({
        "session_id": "s-redact", "hook_event_name": kind, "tool_name": "Bash",
        "tool_input": {"command": command}, "tool_use_id": id, "cwd": "/tmp",
        "transcript_path": "/tmp/none.jsonl"
    });
    if kind == "PostToolUseFailure" {
        e["error"] = json!(error);
    }
    e
}

#[test]
fn no_form_of_the_corpus_is_written_verbatim_by_any_path() {
    let env = Env::new();
    let forms = forms();
    assert!(forms.len() >= 60, "the corpus shrank: {}", forms.len());
    // A user rule that fires (monitor) on every Bash call: each form reaches the audit chain.
    env.write_home(
        "rules.json",
        &json!({"rules": [{"id": "see-every-call", "tool": "Bash", "any": ["(?s)."],
                           "action": "monitor", "message": "seen"}]})
        .to_string(),
    );
    let mut outputs: Vec<(String, Vec<u8>)> = Vec::new();
    let mut transcript = String::new();
    for (i, (_, _, text)) in forms.iter().enumerate() {
        let error = format!("Exit code 1\nerror: rejected {text}\n");
        // The hook recorder: a pre event, then the failure (command and error text).
        record(
            &env,
            &bash_event("PreToolUse", &format!("toolu_h{i}"), text, ""),
        );
        record(
            &env,
            &bash_event("PostToolUseFailure", &format!("toolu_h{i}"), text, &error),
        );
        // The guard: the audit record's preview, digest and error.
        let guard = bash_event("PreToolUse", &format!("toolu_g{i}"), text, "");
        let out = env.run(&["guard"], guard.to_string().as_bytes());
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        outputs.push((format!("guard output {i}"), out.stdout.clone()));
        outputs.push((format!("guard stderr {i}"), out.stderr.clone()));
        // A Claude Code transcript for `record import`.
        let ts = format!("2026-11-29T21:{:02}:{:02}.000Z", i / 60, i % 60);
        transcript.push_str(
            &json!({"type": "assistant", "sessionId": "s-import", "timestamp": ts,
            "cwd": "/tmp", "message": {"role": "assistant", "content": [{"type": "tool_use",
            "id": format!("toolu_t{i}"), "name": "Bash", "input": {"command": text}}]}})
            .to_string(),
        );
        transcript.push('\n');
        transcript.push_str(
            &json!({"type": "user", "sessionId": "s-import", "timestamp": ts,
            "cwd": "/tmp", "message": {"role": "user", "content": [{"type": "tool_result",
            "tool_use_id": format!("toolu_t{i}"), "content": error, "is_error": true}]}})
            .to_string(),
        );
        transcript.push('\n');
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s-import.jsonl");
    std::fs::write(&file, &transcript).unwrap();
    let summary = import(&env, &[file]);
    outputs.push(("import summary".into(), summary.to_string().into_bytes()));
    let imported = super::count(
        &env,
        "SELECT count(*) FROM tool_calls WHERE tool_use_id LIKE 'toolu_t%'",
    );
    assert_eq!(imported, forms.len() as i64, "{summary}");
    assert_eq!(
        super::count(&env, "SELECT count(*) FROM audit"),
        forms.len() as i64,
        "every guard call fired the monitor rule"
    );

    // The busy-store spool, then its merge.
    let lock = rusqlite::Connection::open(env.db()).unwrap();
    lock.execute_batch("BEGIN EXCLUSIVE").unwrap();
    lock.execute("DELETE FROM sessions WHERE 0", []).unwrap();
    for (i, (_, _, text)) in forms.iter().take(5).enumerate() {
        record(
            &env,
            &bash_event("PreToolUse", &format!("toolu_s{i}"), text, ""),
        );
    }
    let spool = env.home_path().join("spool");
    assert_eq!(std::fs::read_dir(&spool).unwrap().count(), 5, "spooled");
    let mut spooled = Vec::new();
    for f in files(&spool) {
        spooled.extend(std::fs::read(f).unwrap());
    }
    let spool_leaks = leaks("the spool", &spooled, &forms);
    drop(lock);
    record(&env, &bash_event("PreToolUse", "toolu_merge", "true", ""));
    // Merged: nothing is left, and the emptied spool's directory is gone.
    assert!(!spool.exists(), "merged");

    // Derive (candidates.json under the home), report, export.
    for args in [
        vec![
            "derive",
            "--since",
            "3650d",
            "--min-count",
            "1",
            "--keep-anecdotal",
        ],
        vec![
            "derive",
            "--since",
            "3650d",
            "--min-count",
            "1",
            "--keep-anecdotal",
            "--json",
        ],
        vec!["report", "--since", "3650d", "--json"],
        vec!["guard", "audit", "export", "--jsonl"],
        vec!["guard", "audit", "tail"],
        vec!["record", "stats", "--json"],
    ] {
        let out = env.run(&args, b"");
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        outputs.push((args.join(" "), out.stdout.clone()));
        outputs.push((format!("{} stderr", args.join(" ")), out.stderr.clone()));
    }
    let html = env.home_path().join("report.html");
    let out = env.run(
        &[
            "report",
            "--since",
            "3650d",
            "--html",
            html.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        env.home_path().join("candidates.json").exists(),
        "derive wrote its candidates: {}",
        stdout(&out)
    );

    let mut found = spool_leaks;
    for f in files(env.home_path()) {
        found.extend(leaks(
            &f.display().to_string(),
            &std::fs::read(&f).unwrap(),
            &forms,
        ));
    }
    for (what, bytes) in &outputs {
        found.extend(leaks(what, bytes, &forms));
    }
    assert!(
        found.is_empty(),
        "secrets written verbatim:\n{}",
        found.join("\n")
    );
}
