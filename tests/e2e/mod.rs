//! End-to-end tests with the real Claude Code, Codex, Gemini CLI and Copilot CLI clients
//! (issue 7 §3, issue 16; the last two in [`peers`]).
//!
//! Each client runs offline against [`standin`], a scripted local stand-in for its model
//! API, in a temp repo with a temp `CALLUS_HOME`, with callus's hooks wired in by hand
//! ([`wiring::wire_claude`], [`wiring::wire_codex`]) or by `callus install`. The hooks call
//! the binary under test. What the tests prove is listed in [`scenario`].
//!
//! The clients are found through `CALLUS_E2E_CLAUDE` / `CALLUS_E2E_CODEX`, which `.ci/run`
//! sets from `scripts/install-clients` (npm, pinned versions, cached). A missing client
//! makes each test print `E2E SKIPPED: …` on stderr and return — or fail, when
//! `CALLUS_E2E_REQUIRED=1` (set by `.ci/run` when the install succeeded). The client
//! versions and run times are printed past the test harness's capture. `CALLUS_E2E_KEEP=1`
//! keeps the scratch folders (under `target/tmp`).

mod claims;
mod claude;
mod codex;
mod copilot;
mod gemini;
mod harness;
mod peers;
mod scenario;
mod standin;
mod standin_gemini;
mod standin_http;
mod wiring;
