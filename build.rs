//! Link the `callus` executable for a cheap start on Linux.
//!
//! The hooks start a fresh process before and after every tool call, so start-up is most of
//! their cost. Two things here:
//!
//! - **Non-PIE.** A position-independent executable makes the dynamic loader write the
//!   address of every pointer in its read-only data (vtables, static tables: about 16,000
//!   relocations over some 70 pages) at each start, and each of those pages is a
//!   copy-on-write fault; on a virtual machine a fault costs microseconds. Linked non-PIE,
//!   those pages are read straight from the page cache and the loader has nothing to
//!   relocate: a quiet `callus guard` measured +0.98 ms over `/bin/true` as PIE and +0.64 ms
//!   without. The cost is address-space randomisation of the executable's own image (the
//!   stack, heap and shared libraries stay randomised), as with Go's default Linux builds.
//!   `CALLUS_PIE=1` at build time keeps a PIE.
//! - **The unwinder from `libgcc_eh.a`** (see [`link_unwinder_statically`]): one shared
//!   library fewer to load, about 0.17 ms less per start.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=CALLUS_PIE");
    let linux = std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux");
    let pie_wanted = std::env::var_os("CALLUS_PIE").is_some_and(|v| !v.is_empty() && v != "0");
    if linux && !pie_wanted {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
    let gnu = std::env::var("CARGO_CFG_TARGET_ENV").is_ok_and(|env| env == "gnu");
    // A fully static build (`+crt-static`) takes the unwinder from `libgcc_eh.a` already.
    let crt_static = std::env::var("CARGO_CFG_TARGET_FEATURE")
        .is_ok_and(|features| features.split(',').any(|f| f == "crt-static"));
    if linux && gnu && !crt_static {
        link_unwinder_statically();
    }
}

/// Take the unwinder (`_Unwind_*`, which `catch_unwind` needs: the hooks catch panics) from
/// GCC's static `libgcc_eh.a` instead of the shared `libgcc_s.so.1`. Loading `libgcc_s` at
/// every start cost a hook about 0.17 ms on the benchmark VM (it is mapped, relocated and
/// runs its own CPU-feature probe), more than the rest of a quiet guard call's work. A fully
/// static build takes the unwinder from the same archive. Skipped, leaving the shared
/// library, when the C compiler cannot name the archive.
fn link_unwinder_statically() {
    println!("cargo:rerun-if-env-changed=CC");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let found = std::process::Command::new(&cc)
        .arg("-print-file-name=libgcc_eh.a")
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|out| std::path::PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()));
    if let Some(archive) = found.filter(|p| p.is_absolute() && p.is_file()) {
        if let Some(dir) = archive.parent() {
            println!("cargo:rustc-link-search=native={}", dir.display());
        }
        // Whole archive, linked ahead of the standard library's `-lgcc_s`, so every
        // `_Unwind_*` symbol is already defined there and `--as-needed` drops `libgcc_s`.
        println!("cargo:rustc-link-lib=static:-bundle,+whole-archive=gcc_eh");
        println!("cargo:rustc-env=CALLUS_STATIC_UNWINDER=1");
    }
}
