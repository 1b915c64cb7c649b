//! Claude Code end to end: `claude -p` against the Messages stand-in, callus wired in by
//! hand and by `callus install --project`.

use super::harness::{self, Client};
use super::scenario::{Outcome, outcome, play};
use super::wiring::Wiring;

fn hand(test: &str) -> Option<&'static Outcome> {
    outcome(Client::Claude, Wiring::Hand, test)
}

fn installed(test: &str) -> Option<&'static Outcome> {
    outcome(Client::Claude, Wiring::Install, test)
}

#[test]
fn block_rule_stops_rm_rf_of_a_marker_dir() {
    if let Some(o) = hand("claude::block_rule_stops_rm_rf_of_a_marker_dir") {
        o.assert_block();
    }
}

#[test]
fn deny_rule_refuses_and_the_model_gets_the_reason() {
    if let Some(o) = hand("claude::deny_rule_refuses_and_the_model_gets_the_reason") {
        o.assert_deny();
    }
}

#[test]
fn nudge_lets_the_call_run_and_the_model_gets_the_message() {
    if let Some(o) = hand("claude::nudge_lets_the_call_run_and_the_model_gets_the_message") {
        o.assert_nudge();
    }
}

#[test]
fn monitor_rule_changes_nothing_but_is_audited() {
    if let Some(o) = hand("claude::monitor_rule_changes_nothing_but_is_audited") {
        o.assert_monitor();
    }
}

#[test]
fn audit_chain_verifies() {
    if let Some(o) = hand("claude::audit_chain_verifies") {
        o.assert_audit_verifies();
    }
}

#[test]
fn calls_are_recorded_with_their_status() {
    if let Some(o) = hand("claude::calls_are_recorded_with_their_status") {
        o.assert_recorded();
    }
}

#[test]
fn installed_hooks_enforce_every_action() {
    if let Some(o) = installed("claude::installed_hooks_enforce_every_action") {
        o.assert_block();
        o.assert_deny();
        o.assert_nudge();
        o.assert_monitor();
        o.assert_audit_verifies();
    }
}

#[test]
fn installed_hooks_record_calls_with_their_status() {
    if let Some(o) = installed("claude::installed_hooks_record_calls_with_their_status") {
        o.assert_recorded();
    }
}

#[test]
fn doctor_reports_everything_wired_and_firing() {
    if let Some(o) = installed("claude::doctor_reports_everything_wired_and_firing") {
        o.assert_doctor();
    }
}

/// The oldest Claude Code `callus doctor` calls verified (`CALLUS_E2E_CLAUDE_OLDEST`, the
/// bottom of the host table's range) still blocks, denies and records with the installed
/// hooks, and doctor reports it verified.
#[test]
fn oldest_verified_client_still_enforces_and_records() {
    let test = "claude::oldest_verified_client_still_enforces_and_records";
    let Some(exe) = harness::exe_or_skip("CALLUS_E2E_CLAUDE_OLDEST", "claude (oldest)", test)
    else {
        return;
    };
    let o = play(Client::Claude, Wiring::Install, &exe).unwrap_or_else(|e| panic!("{e}"));
    assert!(o.version.starts_with("2.1.328"), "{}", o.version);
    o.assert_block();
    o.assert_deny();
    o.assert_recorded();
    o.assert_doctor();
    let (_, json) = o.doctor.as_ref().expect("doctor ran");
    assert!(
        json.stdout.contains("Claude Code 2.1.328: verified"),
        "{}",
        json.stdout
    );
}
