//! How commands print: every table and every JSON document goes through here.
//!
//! Guarantees: stdout carries data only (tables for people, pretty JSON for machines);
//! a table printed to a terminal is fitted to its width (columns wrap, nothing is cut);
//! a table printed to a pipe or a file is plain and never wrapped, so `grep` and `cut` see
//! whole rows. `$COLUMNS` overrides the detected width, as it does for most CLIs.

use std::io::IsTerminal as _;

use comfy_table::{ContentArrangement, Table, presets};

/// A table with a header row, in callus's plain style, fitted to the terminal when stdout
/// is one.
#[must_use]
pub(crate) fn table(header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_style(presets::UTF8_BORDERS_ONLY);
    t.set_header(header.to_vec());
    if let Some(width) = terminal_width() {
        t.set_content_arrangement(ContentArrangement::Dynamic);
        t.set_width(width);
    } else {
        t.set_content_arrangement(ContentArrangement::Disabled);
    }
    t
}

/// The width to fit tables to: `$COLUMNS` when set to a number, else the terminal's width
/// when stdout is a terminal, else `None` (not a terminal: never wrap).
#[must_use]
pub(crate) fn terminal_width() -> Option<u16> {
    if let Some(cols) = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<u16>().ok())
        .filter(|&c| c > 0)
    {
        return Some(cols);
    }
    let stdout = std::io::stdout();
    if !stdout.is_terminal() {
        return None;
    }
    terminal_size::terminal_size_of(&stdout).map(|(w, _)| w.0)
}

/// Print a JSON value, pretty, to stdout.
pub(crate) fn print_json(value: &serde_json::Value) {
    println!(
        "{}",
        serde_json::to_string_pretty(value).unwrap_or_default()
    );
}

/// Write a command's output to stdout. A reader that went away (`… | head`) is not an error
/// worth a panic or a message: the output was simply not wanted any more.
pub(crate) fn write_stdout(text: &str) {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}

/// Pretty JSON plus a newline, for `--json`.
#[must_use]
pub(crate) fn json_text(value: &serde_json::Value) -> String {
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.push('\n');
    text
}
