//! Fuzz the hook payload parser and the decision on whatever it accepts: neither may panic,
//! whatever bytes a host (or an attacker controlling tool input) sends.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;

fn starter() -> &'static callus::testing::RuleSet {
    static SET: OnceLock<callus::testing::RuleSet> = OnceLock::new();
    SET.get_or_init(|| callus::testing::RuleSet::starter().expect("starter parses"))
}

fuzz_target!(|data: &[u8]| {
    let Ok(event) = callus::testing::parse_hook_payload(data) else {
        return;
    };
    let call = callus::testing::Call::new(&event.tool_name, &event.tool_input);
    let _ = callus::testing::evaluate(starter(), &call);
});
