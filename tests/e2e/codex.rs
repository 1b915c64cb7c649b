//! Codex end to end: `codex exec` against the Responses stand-in, callus wired in by hand
//! (with `--dangerously-bypass-hook-trust`) and by `callus install --codex` (without it:
//! the trust install records must be enough).

use super::harness::Client;
use super::scenario::{Outcome, outcome};
use super::wiring::Wiring;

fn hand(test: &str) -> Option<&'static Outcome> {
    outcome(Client::Codex, Wiring::Hand, test)
}

fn installed(test: &str) -> Option<&'static Outcome> {
    outcome(Client::Codex, Wiring::Install, test)
}

#[test]
fn block_rule_stops_rm_rf_of_a_marker_dir() {
    if let Some(o) = hand("codex::block_rule_stops_rm_rf_of_a_marker_dir") {
        o.assert_block();
    }
}

#[test]
fn deny_rule_refuses_and_the_model_gets_the_reason() {
    if let Some(o) = hand("codex::deny_rule_refuses_and_the_model_gets_the_reason") {
        o.assert_deny();
    }
}

#[test]
fn nudge_lets_the_call_run_and_the_model_gets_the_message() {
    if let Some(o) = hand("codex::nudge_lets_the_call_run_and_the_model_gets_the_message") {
        o.assert_nudge();
    }
}

#[test]
fn monitor_rule_changes_nothing_but_is_audited() {
    if let Some(o) = hand("codex::monitor_rule_changes_nothing_but_is_audited") {
        o.assert_monitor();
    }
}

#[test]
fn audit_chain_verifies() {
    if let Some(o) = hand("codex::audit_chain_verifies") {
        o.assert_audit_verifies();
    }
}

#[test]
fn calls_are_recorded_with_their_status() {
    if let Some(o) = hand("codex::calls_are_recorded_with_their_status") {
        o.assert_recorded();
    }
}

#[test]
fn installed_trusted_hooks_enforce_every_action() {
    if let Some(o) = installed("codex::installed_trusted_hooks_enforce_every_action") {
        o.assert_codex_trusted();
        o.assert_block();
        o.assert_deny();
        o.assert_nudge();
        o.assert_monitor();
        o.assert_audit_verifies();
    }
}

#[test]
fn installed_hooks_record_calls_with_their_status() {
    if let Some(o) = installed("codex::installed_hooks_record_calls_with_their_status") {
        o.assert_recorded();
    }
}

#[test]
fn doctor_reports_everything_wired_and_firing() {
    if let Some(o) = installed("codex::doctor_reports_everything_wired_and_firing") {
        o.assert_doctor();
    }
}
