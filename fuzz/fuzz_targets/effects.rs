//! Fuzz the command model: `shell::model::analyse` on arbitrary UTF-8 must never panic, and
//! must give the same effects twice.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let a = callus::testing::effect_lines(text, "/w/p", "/h", "/h/.callus");
    let b = callus::testing::effect_lines(text, "/w/p", "/h", "/h/.callus");
    assert_eq!(a, b);
});
