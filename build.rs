//! Link the `callus` executable as a position-dependent (non-PIE) binary on Linux.
//!
//! The hooks start a fresh process before and after every tool call, so start-up is most of
//! their cost. A position-independent executable makes the dynamic loader write the address of
//! every pointer in its read-only data (vtables, static tables: about 16,000 relocations over
//! some 70 pages) at each start, and each of those pages is a copy-on-write fault; on a virtual
//! machine a fault costs microseconds. Linked non-PIE, those pages are read straight from the
//! page cache and the loader has nothing to relocate: `scripts/bench` measured a quiet
//! `callus guard` at +0.98 ms over `/bin/true` as PIE and +0.64 ms without.
//!
//! The cost is address-space randomisation of the executable's own image (the stack, heap and
//! shared libraries stay randomised), as with Go's default Linux builds. `CALLUS_PIE=1` at
//! build time keeps a PIE.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=CALLUS_PIE");
    let linux = std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux");
    let pie_wanted = std::env::var_os("CALLUS_PIE").is_some_and(|v| !v.is_empty() && v != "0");
    if linux && !pie_wanted {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
