//! Gemini CLI: `gemini -p` against the Gemini API stand-in, callus wired in by
//! `callus install --gemini --project`.

use super::peers::{Peer, PeerOutcome, outcome};

fn played(test: &str) -> Option<&'static PeerOutcome> {
    outcome(Peer::Gemini, test)
}

#[test]
fn block_rule_refuses_rm_rf_of_a_marker_dir() {
    if let Some(o) = played("gemini::block_rule_refuses_rm_rf_of_a_marker_dir") {
        o.assert_block();
    }
}

#[test]
fn deny_rule_refuses_and_the_model_gets_the_reason() {
    if let Some(o) = played("gemini::deny_rule_refuses_and_the_model_gets_the_reason") {
        o.assert_deny();
    }
}

#[test]
fn benign_call_runs_and_the_hooks_add_nothing() {
    if let Some(o) = played("gemini::benign_call_runs_and_the_hooks_add_nothing") {
        o.assert_benign_untouched();
    }
}

#[test]
fn failure_is_recorded_as_a_failure() {
    if let Some(o) = played("gemini::failure_is_recorded_as_a_failure") {
        o.assert_recorded();
    }
}

#[test]
fn doctor_reports_the_wiring_and_the_verified_client() {
    if let Some(o) = played("gemini::doctor_reports_the_wiring_and_the_verified_client") {
        o.assert_doctor();
    }
}

#[test]
fn install_then_uninstall_leaves_the_project_byte_identical() {
    if let Some(o) = played("gemini::install_then_uninstall_leaves_the_project_byte_identical") {
        o.assert_round_trip();
    }
}
