//! The `callus` binary: parse the command line and hand it to the library.

fn main() -> std::process::ExitCode {
    callus::main_entry()
}
