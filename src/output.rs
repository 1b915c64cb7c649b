//! How commands print: every table, every wrapped line of prose and every JSON document goes
//! through here.
//!
//! Guarantees: stdout carries data only (tables for people, pretty JSON for machines);
//! a table printed to a terminal is fitted to its width (columns wrap, nothing is cut);
//! a table printed to a pipe or a file is plain and never wrapped, so `grep` and `cut` see
//! whole rows. `$COLUMNS` overrides the detected width, as it does for most CLIs.
//!
//! Human text that is not a table goes through [`fit`] (or [`print_text`]): on a terminal
//! (or with `$COLUMNS`) each line wider than the width is word-wrapped by [`wrap`], with a
//! hanging indent; to a pipe or a file it is left exactly as written. JSON is never wrapped.
//!
//! Width is display width (`unicode-width`, the measure comfy-table fits its tables by): a
//! CJK character counts two columns, a combining mark none, so wrapped prose and fitted
//! tables line up.

use std::borrow::Cow;
use std::io::IsTerminal;
use std::os::fd::AsFd;

use comfy_table::{ColumnConstraint, ContentArrangement, Table, presets};
use unicode_width::UnicodeWidthStr as _;

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

/// Whether `t` fits the terminal without wrapping a cell: always when there is no width to
/// fit to (a pipe, a file). A printer with a record layout uses it when the table does not
/// fit, rather than squeeze many columns into a few characters each.
#[must_use]
pub(crate) fn fits(t: &Table) -> bool {
    let Some(width) = terminal_width() else {
        return true;
    };
    let mut natural = t.clone();
    natural.set_content_arrangement(ContentArrangement::Disabled);
    natural
        .to_string()
        .lines()
        .all(|l| l.width() <= usize::from(width))
}

/// Keep the cells of `column` whole when `t` is fitted to the terminal (the other columns
/// give up the room): for short values a reader scans or copies, like a timestamp, that a
/// fitted column would break mid-value. `column` must have been added (a header or a row).
pub(crate) fn keep_whole(t: &mut Table, column: usize) {
    if let Some(c) = t.column_mut(column) {
        c.set_constraint(ColumnConstraint::ContentWidth);
    }
}

/// The width to fit tables to: `$COLUMNS` when set to a number, else the terminal's width
/// when stdout is a terminal, else `None` (not a terminal: never wrap).
#[must_use]
pub(crate) fn terminal_width() -> Option<u16> {
    width_of(&std::io::stdout())
}

/// `$COLUMNS` when set to a number, else the width of `stream` when it is a terminal.
fn width_of(stream: &(impl IsTerminal + AsFd)) -> Option<u16> {
    if let Some(cols) = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<u16>().ok())
        .filter(|&c| c > 0)
    {
        return Some(cols);
    }
    if !stream.is_terminal() {
        return None;
    }
    terminal_size::terminal_size_of(stream).map(|(w, _)| w.0)
}

/// `text` fitted to the terminal: wrapped by [`wrap`] to [`terminal_width`] when there is
/// one (a terminal, or `$COLUMNS`), else exactly as given (scripts parse it).
#[must_use]
pub(crate) fn fit(text: &str) -> Cow<'_, str> {
    match terminal_width() {
        Some(width) => Cow::Owned(wrap(text, usize::from(width))),
        None => Cow::Borrowed(text),
    }
}

/// Print human text to stdout, fitted to the terminal ([`fit`]).
pub(crate) fn print_text(text: &str) {
    write_stdout(&fit(text));
}

/// Print a human message to stderr (a status line, a note), fitted to stderr's terminal the
/// way [`print_text`] fits stdout's. Errors are not printed through here: they stay one line.
pub(crate) fn eprint_text(text: &str) {
    use std::io::Write as _;
    let stderr = std::io::stderr();
    let text = match width_of(&stderr) {
        Some(width) => Cow::Owned(wrap(text, usize::from(width))),
        None => Cow::Borrowed(text),
    };
    let _ = stderr.lock().write_all(text.as_bytes());
}

/// Word-wrap every line of `text` wider than `width` columns.
///
/// - A line is broken only at spaces, never inside a word or a `` `code` `` span: a path, a
///   quoted command or a rule id longer than the room left goes whole onto a line of its own, from column 0 when it is
///   wider than `width` (the one case where a line is wider than `width`), so it can still
///   be copied.
/// - Continuation lines hang: they start under the first line's second column when the line
///   is laid out in columns (`fired:    ID …`: a gap of two or more spaces after the first
///   word, within the left half), else two columns right of the line's own indentation.
/// - Lines that fit, empty lines and table lines (starting with a box-drawing border: tables
///   are fitted by comfy-table) are kept byte for byte; runs of spaces inside a wrapped line
///   are kept except where the line breaks.
#[must_use]
pub(crate) fn wrap(text: &str, width: usize) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for line in text.split_inclusive('\n') {
        let (body, nl) = line.strip_suffix('\n').map_or((line, ""), |b| (b, "\n"));
        if body.width() <= width || is_table_line(body) {
            out.push_str(body);
        } else {
            wrap_line(body, width, &mut out);
        }
        out.push_str(nl);
    }
    out
}

/// A line drawn by comfy-table (`UTF8_BORDERS_ONLY`): it starts with a border character.
fn is_table_line(line: &str) -> bool {
    line.trim_start_matches(' ')
        .starts_with(['┌', '│', '╞', '└', '├', '╭', '╰'])
}

/// Append one line wider than `width`, wrapped, to `out` (without its final newline).
fn wrap_line(line: &str, width: usize, out: &mut String) {
    let body = line.trim_start_matches(' ');
    let indent = &line[..line.len() - body.len()];
    let hang = hang(indent.len(), body, width);
    out.push_str(indent);
    let mut col = indent.len();
    let mut first = true;
    for (gap, word) in words(body) {
        let w = word.width();
        if first {
            // The first word stays after the line's own indentation, however wide.
            first = false;
        } else if col + gap.len() + w <= width {
            out.push_str(gap);
            col += gap.len();
        } else {
            out.push('\n');
            // A word that fits the width but not after the hang moves left, not past it; one
            // wider than the width starts at column 0.
            let pad = hang.min(width.saturating_sub(w));
            out.extend(std::iter::repeat_n(' ', pad));
            col = pad;
        }
        out.push_str(word);
        col += w;
    }
}

/// The column continuation lines start at (see [`wrap`]).
fn hang(indent: usize, body: &str, width: usize) -> usize {
    let fallback = (indent + 2).min(width / 2);
    let Some(end) = body.find(' ') else {
        return fallback;
    };
    let after = &body[end..];
    let rest = after.trim_start_matches(' ');
    let gap = after.len() - rest.len();
    let column = indent + body[..end].width() + gap;
    if gap >= 2 && !rest.is_empty() && column <= width / 2 {
        column
    } else {
        fallback
    }
}

/// The words of `text` (no leading spaces), each with the run of spaces before it; trailing
/// spaces are dropped.
fn words(text: &str) -> impl Iterator<Item = (&str, &str)> {
    let mut rest = text;
    std::iter::from_fn(move || {
        let word_start = rest.len() - rest.trim_start_matches(' ').len();
        if word_start == rest.len() {
            return None;
        }
        let (gap, tail) = rest.split_at(word_start);
        let word_end = word_end(tail);
        let (word, next) = tail.split_at(word_end);
        rest = next;
        Some((gap, word))
    })
}

/// Where the word at the start of `text` ends: at the first space outside a `` `code` ``
/// span, so a quoted command (`` `callus install --codex` ``) is one word and is never split
/// across lines (copied from a terminal, a line break would run it half-typed). A backtick
/// with no closing one on the line quotes nothing: the word ends at the next space.
fn word_end(text: &str) -> usize {
    let mut in_code = false;
    for (i, c) in text.char_indices() {
        match c {
            '`' => in_code = !in_code,
            ' ' if !in_code => return i,
            _ => {}
        }
    }
    if in_code {
        text.find(' ').unwrap_or(text.len())
    } else {
        text.len()
    }
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

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use unicode_width::UnicodeWidthStr as _;

    use super::wrap;

    /// A line wider than `width` is allowed only when it holds one word (after its indent).
    fn over_width(text: &str, width: usize) -> Vec<&str> {
        text.lines()
            .filter(|l| l.width() > width && l.split_whitespace().count() > 1)
            .collect()
    }

    #[test]
    fn a_line_of_exactly_the_width_stays_and_one_more_column_wraps() {
        let exact = "aaaa bbbb cccc";
        assert_eq!(wrap(exact, 14), exact);
        assert_eq!(wrap("aaaa bbbb ccccc", 14), "aaaa bbbb\n  ccccc");
        assert_eq!(wrap("aaaa bbbb cccc\n", 13), "aaaa bbbb\n  cccc\n");
    }

    #[test]
    fn empty_input_blank_lines_and_the_final_newline_are_kept() {
        assert_eq!(wrap("", 20), "");
        assert_eq!(wrap("\n\n", 20), "\n\n");
        assert_eq!(wrap("a\n\nb", 1), "a\n\nb");
        let long = "one two three four five six";
        assert!(!wrap(long, 10).ends_with('\n'));
        assert!(wrap(&format!("{long}\n"), 10).ends_with("six\n"));
    }

    #[test]
    fn a_word_longer_than_the_width_stays_whole_on_its_own_line() {
        let path = "/home/user/projects/some/deeply/nested/file.rs";
        let out = wrap(&format!("error: cannot read {path} at all"), 20);
        // Whole, and from column 0: the line is already too wide, the hang would only widen it.
        assert_eq!(out, format!("error: cannot read\n{path}\n  at all"));
        // The first word of a line is never moved off it, however wide.
        let out = wrap(&format!("{path} is missing"), 20);
        assert_eq!(out, format!("{path}\n  is missing"));
        assert_eq!(over_width(&out, 20), Vec::<&str>::new());
    }

    #[test]
    fn a_word_that_fits_the_width_but_not_after_the_hang_moves_left() {
        // 18 columns: too wide after a 4-column hang at width 20, fits from column 2.
        let out = wrap("    note: 123456789012345678", 20);
        assert_eq!(out, "    note:\n  123456789012345678");
        assert!(out.lines().all(|l| l.width() <= 20), "{out}");
    }

    #[test]
    fn continuation_lines_hang_two_columns_right_of_the_indent() {
        let out = wrap("    error: rule 'x': field 'pattern': unknown rule key", 30);
        assert_eq!(
            out,
            "    error: rule 'x': field\n      'pattern': unknown rule\n      key"
        );
        let out = wrap("- a push can be rejected by repository rules", 20);
        assert_eq!(out, "- a push can be\n  rejected by\n  repository rules");
    }

    #[test]
    fn a_line_laid_out_in_columns_hangs_under_its_second_column() {
        let out = wrap("fired:    some-rule [nudge] from /a/b/rules.json", 40);
        assert_eq!(
            out,
            "fired:    some-rule [nudge] from\n          /a/b/rules.json"
        );
        // A second column beyond half the width: the plain hang instead.
        let out = wrap(
            "  a-long-rule-id-here          enforced for 3 days, less than the window",
            40,
        );
        assert!(
            out.starts_with("  a-long-rule-id-here          enforced\n    for 3"),
            "{out}"
        );
    }

    #[test]
    fn spaces_inside_a_line_are_kept_except_at_a_break() {
        let out = wrap("  · id-1  6x, 9 of 77 failed  [file does not exist.]", 34);
        assert_eq!(
            out,
            "  · id-1  6x, 9 of 77 failed\n    [file does not exist.]"
        );
        assert_eq!(wrap("a  b   ", 4), "a  b");
        assert_eq!(wrap("a  b", 3), "a\n b");
    }

    #[test]
    fn table_lines_are_left_to_the_table() {
        let row = "│ derived-bash-sudo-cad622be   9   Bash   ^sudo\\b   deterministic │";
        let text = format!("┌──────────────┐\n{row}\n  {row}\n└──────────────┘\n");
        assert_eq!(wrap(&text, 20), text);
    }

    #[test]
    fn width_is_display_width_not_bytes_or_chars() {
        // "é" is two bytes and one column: "ééé ééé" is 7 columns and fits 7.
        assert_eq!(wrap("ééé ééé", 7), "ééé ééé");
        // A CJK character is two columns: "漢字 漢字" is 9 columns and does not fit 8.
        assert_eq!(wrap("漢字 漢字", 8), "漢字\n  漢字");
        assert_eq!(wrap("漢字 漢字", 9), "漢字 漢字");
    }

    #[test]
    fn a_quoted_command_is_one_word() {
        let out = wrap(
            "  · codex: not wired (to wire it: `callus install --codex`)",
            40,
        );
        assert_eq!(
            out,
            "  · codex: not wired (to wire it:\n    `callus install --codex`)"
        );
        // Wider than the line: whole, on its own line.
        let out = wrap("run `callus rules promote ID --action A` now", 20);
        assert_eq!(out, "run\n`callus rules promote ID --action A`\n  now");
        // An unclosed backtick quotes nothing.
        assert_eq!(wrap("a `b c d e", 6), "a `b c\n  d e");
        // Two spans on a line, each whole.
        assert_eq!(wrap("`a b` and `c d`", 9), "`a b` and\n  `c d`");
    }

    proptest! {
        /// For any prose: no line over the width but a one-word line, every word kept in
        /// order, and a line that fits is returned as it was.
        #[test]
        fn wrapped_prose_fits_and_keeps_every_word(
            lines in prop::collection::vec(
                (0usize..6, prop::collection::vec(
                    prop::sample::select(vec![
                        "a", "to", "the", "rule", "failed", "é", "漢字", "·", "—",
                        "/very/long/path/to/some/file.jsonl", "x", "deterministic",
                    ]),
                    0..30,
                ), 1usize..3),
                0..8,
            ),
            width in 1usize..100,
        ) {
            let mut text = String::new();
            for (indent, words, gap) in &lines {
                text.push_str(&" ".repeat(*indent));
                text.push_str(&words.join(&" ".repeat(*gap)));
                text.push('\n');
            }
            let out = wrap(&text, width);
            prop_assert!(over_width(&out, width).is_empty(), "{:?}", out);
            prop_assert_eq!(
                out.split_whitespace().collect::<Vec<_>>(),
                text.split_whitespace().collect::<Vec<_>>()
            );
            for line in text.lines().filter(|l| l.width() <= width) {
                prop_assert!(out.lines().any(|o| o == line), "{:?} lost from {:?}", line, out);
            }
        }
    }
}
