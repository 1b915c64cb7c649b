//! Fuzz the shell splitter: it must never panic, and a split's segments must re-split
//! stably (every segment's argv, re-quoted, is one segment with the same argv).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let split = callus::testing::split(text);
    for seg in &split.segments {
        if seg.argv.is_empty() {
            continue;
        }
        let again = callus::testing::split(&callus::testing::quote(&seg.argv));
        assert!(
            again.segments.iter().any(|s| s.argv == seg.argv),
            "re-split changed {:?}",
            seg.argv
        );
    }
    let _ = callus::testing::pipelines(&split);
    let _ = callus::testing::write_targets(&split);
});
