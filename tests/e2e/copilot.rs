//! Copilot CLI: `copilot -p` against the Messages stand-in (BYOK provider), callus wired in by
//! `callus install --copilot --project`.

use super::peers::{Peer, PeerOutcome, outcome};

fn played(test: &str) -> Option<&'static PeerOutcome> {
    outcome(Peer::Copilot, test)
}

#[test]
fn block_rule_refuses_rm_rf_of_a_marker_dir() {
    if let Some(o) = played("copilot::block_rule_refuses_rm_rf_of_a_marker_dir") {
        o.assert_block();
    }
}

#[test]
fn deny_rule_refuses_and_the_model_gets_the_reason() {
    if let Some(o) = played("copilot::deny_rule_refuses_and_the_model_gets_the_reason") {
        o.assert_deny();
    }
}

#[test]
fn benign_call_runs_and_the_hooks_add_nothing() {
    if let Some(o) = played("copilot::benign_call_runs_and_the_hooks_add_nothing") {
        o.assert_benign_untouched();
    }
}

#[test]
fn failure_is_recorded_as_a_failure() {
    if let Some(o) = played("copilot::failure_is_recorded_as_a_failure") {
        o.assert_recorded();
    }
}

#[test]
fn doctor_reports_the_wiring_and_the_verified_client() {
    if let Some(o) = played("copilot::doctor_reports_the_wiring_and_the_verified_client") {
        o.assert_doctor();
    }
}

#[test]
fn install_then_uninstall_leaves_the_project_byte_identical() {
    if let Some(o) = played("copilot::install_then_uninstall_leaves_the_project_byte_identical") {
        o.assert_round_trip();
    }
}
