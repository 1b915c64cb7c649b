//! Fuzz the shell splitter: it must never panic, and a split's segments must re-split
//! stably (every segment's argv, re-quoted, is one segment with the same argv).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let split = callus::shell::split(text);
    for seg in &split.segments {
        if seg.argv.is_empty() {
            continue;
        }
        let again = callus::shell::split(&callus::shell::quote(&seg.argv));
        assert!(
            again.segments.iter().any(|s| s.argv == seg.argv),
            "re-split changed {:?}",
            seg.argv
        );
    }
    let _ = callus::shell::pipelines(&split);
    let _ = callus::shell::write_targets(&split);
});
