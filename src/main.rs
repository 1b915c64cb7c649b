//! The `callus` binary: parse the command line and hand it to the library.
//!
//! On Linux with glibc the binary has its own C `main` instead of Rust's generated one. Each
//! hook call is a new process, and Rust's runtime set-up before `main` finds the main
//! thread's stack bounds for its stack-overflow message by having glibc read and parse
//! `/proc/self/maps` (`pthread_getattr_np`): about 100,000 instructions and four system calls
//! on every start, a fifth of a quiet `callus guard` call (measured with callgrind). What that
//! set-up does that callus needs is done here: `SIGPIPE` ignored (so a closed pipe is an
//! `EPIPE` error, not a kill), stdout flushed at exit, and a panic that escapes becomes exit
//! code 101 (Rust's) instead of an abort. A stack overflow still ends the process with a
//! signal; it only loses Rust's one-line message. Elsewhere the usual `fn main` is used.

// The C entry point needs `no_mangle` and one libc call: this file is the only place in
// the crate that allows unsafe code (`lib.rs` forbids it).
#![allow(unsafe_code)]
// (Not under `cargo test`, whose harness brings its own `main`.)
#![cfg_attr(all(target_os = "linux", target_env = "gnu", not(test)), no_main)]

#[cfg(all(target_os = "linux", target_env = "gnu", not(test)))]
#[unsafe(no_mangle)]
extern "C" fn main(
    _argc: std::ffi::c_int,
    _argv: *const *const std::ffi::c_char,
) -> std::ffi::c_int {
    use std::io::Write as _;
    // SAFETY: setting a signal's disposition to SIG_IGN before any other thread exists; no
    // handler code runs.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
    // `std::env::args` still works: glibc hands argv to the library's initialiser too.
    let code = std::panic::catch_unwind(callus::main_code).unwrap_or(101);
    let _ = std::io::stdout().flush();
    std::ffi::c_int::from(code)
}

#[cfg(any(not(all(target_os = "linux", target_env = "gnu")), test))]
fn main() -> std::process::ExitCode {
    callus::main_entry()
}
