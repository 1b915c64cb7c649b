//! `PostgreSQL`'s COPY text format, both ways: rows out to `COPY … FROM STDIN` and rows back
//! from `COPY … TO`.
//!
//! The text format (not CSV) because it is line-oriented: a row is one line, tabs separate
//! fields, and a backslash escapes every tab, newline, carriage return and backslash inside a
//! value, with `\N` for NULL. Two things follow. A row never spans lines, so reading back is a
//! split on `\n` then on `\t`. And no data line can be `\.` — the line `psql` takes as the end
//! of inline COPY data *whatever the quoting*, which makes CSV unsafe to stream through a
//! script: a multi-line quoted CSV value holding a `\.` line ends the data early (measured
//! with psql 15: `ERROR: unterminated CSV quoted field`).
//!
//! Guarantees: [`decode_row`] inverts [`encode_row`] for every value without a NUL byte,
//! including NULL versus the empty string (a NUL, which no `PostgreSQL` text can hold, is
//! sent as [`NUL_STAND_IN`] instead of failing the whole push), and understands every escape the server may emit (`\b \f \n \r \t \v
//! \\`, octal `\ooo` and hex `\xhh`).

use std::io::{self, Write};

/// What a NUL byte in a value is sent as (`PostgreSQL` text rejects NUL).
pub(crate) const NUL_STAND_IN: &str = "\u{2400}";

/// Write one row: fields tab-separated, NULLs as `\N`, ended by a newline.
pub(crate) fn encode_row(
    out: &mut (impl Write + ?Sized),
    fields: &[Option<&str>],
) -> io::Result<()> {
    for (i, field) in fields.iter().enumerate() {
        if i > 0 {
            out.write_all(b"\t")?;
        }
        match field {
            None => out.write_all(b"\\N")?,
            Some(text) => encode_field(out, text)?,
        }
    }
    out.write_all(b"\n")
}

fn encode_field(out: &mut (impl Write + ?Sized), text: &str) -> io::Result<()> {
    let bytes = text.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let escaped: &[u8] = match b {
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            // PostgreSQL text cannot hold NUL (`invalid byte sequence … 0x00`): it becomes
            // U+2400 SYMBOL FOR NULL, visible and one character, so the push goes through.
            0 => NUL_STAND_IN.as_bytes(),
            _ => continue,
        };
        out.write_all(&bytes[start..i])?;
        out.write_all(escaped)?;
        start = i + 1;
    }
    out.write_all(&bytes[start..])
}

/// Split one line (without its `\n`) into fields, undoing the escapes. `None` is NULL.
///
/// Fails on bytes that do not form UTF-8 after unescaping (the session is UTF-8).
pub(crate) fn decode_row(line: &[u8]) -> Result<Vec<Option<String>>, String> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    line.split(|&b| b == b'\t').map(decode_field).collect()
}

fn decode_field(raw: &[u8]) -> Result<Option<String>, String> {
    if raw == b"\\N" {
        return Ok(None);
    }
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        let b = raw[i];
        i += 1;
        if b != b'\\' || i == raw.len() {
            out.push(b);
            continue;
        }
        let c = raw[i];
        i += 1;
        match c {
            b'b' => out.push(0x08),
            b'f' => out.push(0x0c),
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b't' => out.push(b'\t'),
            b'v' => out.push(0x0b),
            b'0'..=b'7' => {
                let mut value = u32::from(c - b'0');
                for _ in 0..2 {
                    match raw.get(i) {
                        Some(&d @ b'0'..=b'7') => {
                            value = value * 8 + u32::from(d - b'0');
                            i += 1;
                        }
                        _ => break,
                    }
                }
                out.push((value & 0xff) as u8);
            }
            b'x' if raw.get(i).is_some_and(u8::is_ascii_hexdigit) => {
                let mut value = 0u8;
                for _ in 0..2 {
                    match raw.get(i).and_then(|&d| char::from(d).to_digit(16)) {
                        Some(d) => {
                            value = value * 16 + d as u8;
                            i += 1;
                        }
                        None => break,
                    }
                }
                out.push(value);
            }
            // Any other escaped character stands for itself (`\\`, `\.`, …).
            other => out.push(other),
        }
    }
    String::from_utf8(out)
        .map(Some)
        .map_err(|e| format!("a value is not UTF-8: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(fields: &[Option<&str>]) -> Vec<Option<String>> {
        let mut buf = Vec::new();
        encode_row(&mut buf, fields).unwrap();
        assert_eq!(memchr::memchr_iter(b'\n', &buf).count(), 1, "one line");
        decode_row(buf.strip_suffix(b"\n").unwrap()).unwrap()
    }

    #[test]
    fn every_awkward_value_survives_the_round_trip() {
        let values = [
            None,
            Some(""),
            Some("\\N"),
            Some("\\."),
            Some("line one\n\\.\nline three"),
            Some("tab\there, cr\r\n, backslash \\ and \\\\"),
            Some("quotes \" ' and , commas"),
            Some("ünïcödé ✓"),
            Some("\u{1}\u{7f} control"),
        ];
        let decoded = round_trip(&values);
        let expected: Vec<Option<String>> = values.iter().map(|v| v.map(str::to_string)).collect();
        assert_eq!(decoded, expected);
    }

    #[test]
    fn no_encoded_line_ends_inline_copy_data() {
        let mut buf = Vec::new();
        encode_row(&mut buf, &[Some("\\.")]).unwrap();
        encode_row(&mut buf, &[Some("a\n\\.\nb")]).unwrap();
        for line in buf.split(|&b| b == b'\n') {
            assert_ne!(line, b"\\.", "{:?}", String::from_utf8_lossy(&buf));
        }
    }

    #[test]
    fn server_escapes_decode() {
        let row = decode_row(b"\\b\\f\\v\\101\\x42\\x4\tx\\").unwrap();
        assert_eq!(row[0].as_deref(), Some("\u{8}\u{c}\u{b}AB\u{4}"));
        assert_eq!(
            row[1].as_deref(),
            Some("x\\"),
            "a trailing lone backslash is kept"
        );
    }

    #[test]
    fn a_nul_byte_is_sent_as_its_stand_in() {
        let mut buf = Vec::new();
        encode_row(&mut buf, &[Some("a\0b\0"), Some("\0")]).unwrap();
        assert!(!buf.contains(&0), "{buf:?}");
        let back = decode_row(buf.strip_suffix(b"\n").unwrap()).unwrap();
        assert_eq!(back[0].as_deref(), Some("a\u{2400}b\u{2400}"));
        assert_eq!(back[1].as_deref(), Some(NUL_STAND_IN));
    }

    #[test]
    fn bad_utf8_is_an_error_not_a_panic() {
        assert!(decode_row(b"\\xff").is_err());
    }
}
