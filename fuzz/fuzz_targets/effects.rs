//! Fuzz the command model: `shell::model::analyse` on arbitrary UTF-8 must never panic, and
//! must give the same effects twice.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let ctx = callus::shell::model::Context {
        cwd: Some("/w/p".into()),
        home: Some("/h".into()),
        repo_root: Some("/w/p".into()),
        callus_home: Some("/h/.callus".into()),
        realpath: None,
    };
    let a = callus::shell::model::analyse(text, &ctx);
    let b = callus::shell::model::analyse(text, &ctx);
    assert_eq!(a.effects, b.effects);
});
