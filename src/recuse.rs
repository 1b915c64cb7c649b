//! RECUSE halt signals: find the sentinels a governed resource puts in a tool result, and
//! halt the session on a stop.
//!
//! A sentinel is `RECUSE/<major>.<minor> <directive>[; key=value]*` (recusal-recuse.md §7).
//! Parsing is fail-closed, as the spec's §3.6 asks and stricter than the reference library:
//! once the case-sensitive anchor `RECUSE/` is seen, anything that is not a well-formed
//! sentinel — a bad version, a separator other than one space, an upper-case or unknown
//! directive, junk after the directive — counts as a stop. A malformed *parameter* only drops
//! that parameter (rule 4). An advisory directive (`warn`, `throttle`) under an unknown major
//! version is a stop too (rule 2: ambiguity resolves toward withdrawal). `expires` is kept
//! but not honoured: a halt is lifted by a human (`callus session resume`), not by a clock.
//!
//! Every sentinel in a text is found, one per line, and the first *stop* wins over any
//! advisory, so a `warn` earlier in the text never hides a later `halt`. The anchor counts
//! only where the spec puts a sentinel: at the start of a line, at the start of a JSON string
//! (text still JSON-encoded), or as the value of a header or banner field (`Recuse-Signal:`,
//! `X-Recuse:`, `Warning:`, `NOTICE:`); a mention inside prose, a quoted example or a path
//! never halts a session. The two-character escapes `\n` and `\r` end a line too.
//!
//! [`scan`] is what the recorder calls on every tool result: without the anchor it costs one
//! substring search; on a stop it writes the session's halt marker, which `callus guard`
//! checks with one `open` per call.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;

use serde::Serialize;

use crate::config::Home;

/// The literal that starts a sentinel (case-sensitive).
pub(crate) const ANCHOR: &str = "RECUSE/";

/// Longest sentinel line the spec allows, in bytes, not counting the line ending.
pub(crate) const MAX_LINE: usize = 998;

/// What a sentinel tells a running agent to do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase", tag = "kind", content = "value")]
pub enum Directive {
    /// Stop now, mid-task (v0.2).
    Halt,
    /// Automated access is prohibited: stop.
    Deny,
    /// Rate-limited or discouraged: advisory.
    Throttle,
    /// Governed and observed: advisory.
    Warn,
    /// A well-formed but unknown directive: a stop (fail-closed).
    Unknown(String),
    /// The anchor was there but the sentinel did not parse: a stop (fail-closed).
    Malformed(String),
}

impl Directive {
    /// `halt`, `deny`, `throttle`, `warn`, `unknown`, `malformed`.
    #[must_use]
    pub fn as_str(&self) -> &'static str {
        match self {
            Directive::Halt => "halt",
            Directive::Deny => "deny",
            Directive::Throttle => "throttle",
            Directive::Warn => "warn",
            Directive::Unknown(_) => "unknown",
            Directive::Malformed(_) => "malformed",
        }
    }
}

/// One sentinel found in a text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Signal {
    /// The directive (or why it could not be read).
    pub directive: Directive,
    /// `(major, minor)` when the version parsed.
    pub version: Option<(u32, u32)>,
    /// The parameters that parsed, first occurrence of each key only, percent-decoded.
    pub params: Vec<(String, String)>,
    /// 1-based line of the text the sentinel is on.
    pub line: usize,
    /// The sentinel as seen, redacted and capped (for the record and the marker).
    pub raw: String,
}

impl Signal {
    /// Whether the session must stop: `halt`, `deny`, unknown or malformed — or an advisory
    /// under a major version this parser does not know.
    #[must_use]
    pub fn is_stop(&self) -> bool {
        match self.directive {
            Directive::Halt | Directive::Deny | Directive::Unknown(_) | Directive::Malformed(_) => {
                true
            }
            Directive::Warn | Directive::Throttle => {
                self.version.is_some_and(|(major, _)| major != 0)
            }
        }
    }

    /// The first value of parameter `key`.
    #[must_use]
    pub fn param(&self, key: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// `reason`, when given.
    #[must_use]
    pub fn reason(&self) -> Option<&str> {
        self.param("reason")
    }

    /// `id`, when given.
    #[must_use]
    pub fn id(&self) -> Option<&str> {
        self.param("id")
    }

    /// One line for people and the halt marker: directive, reason and id.
    #[must_use]
    pub fn summary(&self) -> String {
        let mut s = format!("RECUSE {}", self.directive.as_str());
        let _ = match &self.directive {
            Directive::Unknown(d) => write!(s, " directive '{d}'"),
            Directive::Malformed(why) => write!(s, " sentinel: {why}"),
            _ => Ok(()),
        };
        for key in ["reason", "id", "ref"] {
            if let Some(v) = self.param(key) {
                let _ = write!(s, "; {key}={v}");
            }
        }
        crate::redact::redact_capped(&s, 300)
    }
}

/// Every sentinel in `text`, in order (at most one per line).
#[must_use]
pub(crate) fn scan_text(text: &str) -> Vec<Signal> {
    if !text.contains(ANCHOR) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (i, line) in split_lines(text).enumerate() {
        if let Some(start) = find_anchor(line) {
            out.push(parse_at(&line[start..], i + 1));
        }
    }
    out
}

/// The signal that decides for `text`: the first stop if there is one, else the first
/// advisory, else `None`.
#[must_use]
pub(crate) fn decide(text: &str) -> Option<Signal> {
    let signals = scan_text(text);
    let stop = signals.iter().position(Signal::is_stop);
    match stop {
        Some(i) => signals.into_iter().nth(i),
        None => signals.into_iter().next(),
    }
}

/// Scan one tool result of `session_id`. On a stop, write the session's halt marker (first
/// line: the signal's directive, reason and id) so `callus guard` blocks every later call of
/// that session until `callus session resume`. Returns the deciding signal, advisory ones
/// included, for the caller to record. A marker that cannot be written is logged to
/// `errors.log`; an existing marker (an earlier halt) is kept as it is.
#[must_use = "an advisory signal should be recorded"]
pub fn scan(home: &Home, session_id: &str, text: &str) -> Option<Signal> {
    let signal = decide(text)?;
    if signal.is_stop()
        && !session_id.is_empty()
        && let Err(e) = write_marker(home, session_id, &signal)
    {
        crate::runtime::log_error(
            home,
            &format!("RECUSE halt of session {session_id} not recorded: {e}"),
        );
    }
    Some(signal)
}

/// The halt marker file of `session_id`.
#[must_use]
pub fn marker_path(home: &Home, session_id: &str) -> PathBuf {
    home.halts_dir().join(marker_name(session_id))
}

/// A file name for a session id that cannot escape the halts directory.
#[must_use]
pub(crate) fn marker_name(session_id: &str) -> String {
    session_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The reason a session was halted (its marker's first line), if its marker file exists.
/// One `stat`-and-read: `callus guard` checks it on every call.
#[must_use]
pub(crate) fn halted(home: &Home, session_id: &str) -> Option<String> {
    if session_id.is_empty() {
        return None;
    }
    let dir = home.halts_dir();
    let marker = marker_path(home, session_id);
    // Read safely: a FIFO or device put where a marker goes must not hang the guard, and a
    // marker that is there but cannot be read still halts.
    match crate::untrusted::read(&marker, Some(&dir), 64 * 1024) {
        Ok(None) => None,
        Ok(Some(text)) => Some(text.lines().next().unwrap_or("halt").trim().to_string()),
        Err(e) => Some(format!("halt marker unreadable: {e}")),
    }
}

fn write_marker(home: &Home, session_id: &str, signal: &Signal) -> crate::Result<()> {
    let dir = home.halts_dir();
    crate::config::ensure_private_dir(&dir)?;
    let path = marker_path(home, session_id);
    let body = format!(
        "{}\nsession: {}\nsentinel: {}\nline: {}\nat: {}\n",
        signal.summary(),
        crate::redact::redact_capped(session_id, 200),
        signal.raw,
        signal.line,
        chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
    );
    // create_new: the first halt's reason stands; a second stop changes nothing.
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
    {
        Ok(mut f) => f
            .write_all(body.as_bytes())
            .map_err(|e| crate::Error::io(&path, e)),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(crate::Error::io(&path, e)),
    }
}

/// Lines of `text`, also ending at the two-character escapes `\n` and `\r`.
fn split_lines(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(text);
    std::iter::from_fn(move || {
        let s = rest?;
        let bytes = s.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'\n' | b'\r' => {
                    rest = Some(&s[i + 1..]);
                    return Some(&s[..i]);
                }
                b'\\' if matches!(bytes.get(i + 1), Some(b'n' | b'r')) => {
                    rest = Some(&s[i + 2..]);
                    return Some(&s[..i]);
                }
                _ => i += 1,
            }
        }
        rest = None;
        Some(s)
    })
}

/// Byte offset of the first anchor in `line` that stands where the spec puts a sentinel
/// (see [`sentinel_position`]).
fn find_anchor(line: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(off) = line[from..].find(ANCHOR) {
        let at = from + off;
        if sentinel_position(&line[..at]) {
            return Some(at);
        }
        from = at + ANCHOR.len();
    }
    None
}

/// The header and banner fields a sentinel may follow (any case): the HTTP headers
/// `Recuse-Signal` and `X-Recuse`, a Kubernetes `Warning:`, a `PostgreSQL` `NOTICE:`.
const FIELDS: &[&str] = &["recuse-signal", "x-recuse", "warning", "notice"];

/// Does a sentinel after `before` (the line up to the anchor) stand in one of the spec's
/// forms? Its own line (after indentation, or the `<`/`>` that `curl -v` puts before header
/// lines); the start of a JSON string (a tool result still JSON-encoded: a documented JSON
/// field, or a whole output that is the sentinel); or the value of a header or banner field
/// ([`FIELDS`]). Anywhere else — a word inside prose, a quoted example, a path — it is not
/// a sentinel, so a page that merely mentions RECUSE does not halt the session.
fn sentinel_position(before: &str) -> bool {
    let lead = before.trim_start_matches([' ', '\t', '<', '>']);
    if lead.is_empty() {
        return true;
    }
    if let Some(open) = before.strip_suffix('"') {
        let open = open.trim_end();
        if open.is_empty() || open.ends_with([':', '[', ',']) {
            return true;
        }
    }
    let Some(field) = lead.trim_end().strip_suffix(':') else {
        return false;
    };
    FIELDS
        .iter()
        .any(|f| field.trim_end().eq_ignore_ascii_case(f))
}

/// Parse the sentinel starting at `s` (which starts with the anchor).
fn parse_at(s: &str, line: usize) -> Signal {
    // Text embedded in JSON or quotes closes after the sentinel: those closers are not part
    // of it (the reference library trims them too). Trailing whitespace (a CR) likewise.
    let s = s.trim_end_matches(|c: char| {
        c.is_whitespace() || matches!(c, '"' | '\'' | '`' | ',' | '}' | ']')
    });
    let raw = crate::redact::redact_capped(s, 300);
    let mut signal = Signal {
        directive: Directive::Malformed(String::new()),
        version: None,
        params: Vec::new(),
        line,
        raw,
    };
    match parse_sentinel(s, &mut signal) {
        Ok(directive) => signal.directive = directive,
        Err(why) => signal.directive = Directive::Malformed(why.to_string()),
    }
    signal
}

fn parse_sentinel(s: &str, signal: &mut Signal) -> Result<Directive, &'static str> {
    if s.len() > MAX_LINE {
        return Err("longer than 998 bytes");
    }
    let rest = &s[ANCHOR.len()..];
    let (major, rest) = digits(rest).ok_or("no major version")?;
    let rest = rest.strip_prefix('.').ok_or("no '.' in the version")?;
    let (minor, rest) = digits(rest).ok_or("no minor version")?;
    signal.version = Some((major, minor));
    let rest = rest
        .strip_prefix(' ')
        .ok_or("no single space after the version")?;
    let end = rest.find(';').unwrap_or(rest.len());
    let (word, params) = rest.split_at(end);
    if word.is_empty() || !word.bytes().all(|b| b.is_ascii_lowercase() || b == b'-') {
        return Err("the directive is not lower-case letters and '-'");
    }
    signal.params = parse_params(params);
    Ok(match word {
        "halt" => Directive::Halt,
        "deny" => Directive::Deny,
        "throttle" => Directive::Throttle,
        "warn" => Directive::Warn,
        other => Directive::Unknown(other.to_string()),
    })
}

fn digits(s: &str) -> Option<(u32, &str)> {
    let n = s.bytes().take_while(u8::is_ascii_digit).count();
    if n == 0 {
        return None;
    }
    Some((s[..n].parse().ok()?, &s[n..]))
}

/// `; key=value` pairs; a malformed one is dropped, the first occurrence of a key wins.
fn parse_params(s: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for part in s.split(';').skip(1) {
        let Some((key, value)) = part.trim().split_once('=') else {
            continue;
        };
        let valid_key = !key.is_empty() && key.bytes().all(|b| b.is_ascii_lowercase() || b == b'-');
        let Some(value) = percent_decode(value.trim()) else {
            continue;
        };
        if valid_key && !value.is_empty() && !out.iter().any(|(k, _)| k == key) {
            out.push((key.to_string(), value));
        }
    }
    out
}

/// Decode `%HH` escapes; `None` for a bad escape, whitespace, or invalid UTF-8.
fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = s.get(i + 1..i + 3)?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 3;
            }
            b if b.is_ascii_whitespace() => return None,
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> Signal {
        let mut v = scan_text(text);
        assert_eq!(v.len(), 1, "expected one sentinel in {text:?}, got {v:?}");
        v.remove(0)
    }

    #[test]
    fn valid_sentinels_parse_with_params() {
        let s = one(
            "df: 80% used\n\nRECUSE/0.2 halt; reason=operator-request; ref=https://example.com/ai-policy; id=abc-123\nThis operation...",
        );
        assert_eq!(s.directive, Directive::Halt);
        assert_eq!(s.version, Some((0, 2)));
        assert_eq!(s.reason(), Some("operator-request"));
        assert_eq!(s.id(), Some("abc-123"));
        assert_eq!(s.param("ref"), Some("https://example.com/ai-policy"));
        assert_eq!(s.line, 3);
        assert!(s.is_stop());
        for (text, directive, stop) in [
            ("RECUSE/0.1 deny", Directive::Deny, true),
            ("RECUSE/0.1 throttle", Directive::Throttle, false),
            ("RECUSE/0.1 warn; reason=production", Directive::Warn, false),
            ("RECUSE/0.2 halt", Directive::Halt, true),
            (
                "RECUSE/9.9 halt; reason=operator-request; id=z9",
                Directive::Halt,
                true,
            ),
        ] {
            let s = one(text);
            assert_eq!(s.directive, directive, "{text}");
            assert_eq!(s.is_stop(), stop, "{text}");
        }
    }

    /// Issue 15, item 6: a page or file that mentions the sentinel in prose (callus's own
    /// README included) halted the session. Only the spec's forms count.
    #[test]
    fn a_sentinel_counts_only_in_the_spec_forms() {
        for prose in [
            "garbage RECUSE/ oops not-a-sentinel",
            "a `RECUSE/1.0 halt` sentinel in a tool result halts the session",
            "prefix text RECUSE/0.2 halt; id=1",
            "echo 'RECUSE/0.2 halt'",
            r#"{"text":"the docs say RECUSE/0.2 halt stops you"}"#,
            "Subject: RECUSE/0.2 halt",
            include_str!("../README.md"),
        ] {
            assert!(scan_text(prose).is_empty(), "{prose:?}");
        }
        for form in [
            "RECUSE/0.2 halt; id=1",
            "    RECUSE/0.2 halt; id=1",
            "Recuse-Signal: RECUSE/0.3 halt; id=1",
            "< x-recuse: RECUSE/0.2 halt; id=1",
            "NOTICE:  RECUSE/0.2 halt; id=1",
            "Warning: RECUSE/0.2 halt; id=1",
            r#"{"content":[{"type":"text","text":"RECUSE/0.2 halt; id=1"}]}"#,
            r#"{"status":"error","recuse": "RECUSE/0.2 halt; id=1"}"#,
        ] {
            let s = one(form);
            assert_eq!(
                (&s.directive, s.id()),
                (&Directive::Halt, Some("1")),
                "{form:?}"
            );
        }
    }

    #[test]
    fn no_anchor_no_signal_and_case_matters() {
        assert!(scan_text("df: 43% used\nmem: 61% used\nall nominal").is_empty());
        assert!(scan_text("see https://github.com/mthamil107/Recuse for details").is_empty());
        assert!(scan_text("recuse/0.2 halt; reason=x").is_empty());
        assert!(scan_text("https://example.com/RECUSE/0.2").is_empty());
        assert!(scan_text("fooRECUSE/0.2 halt").is_empty());
    }

    #[test]
    fn malformed_after_the_anchor_is_a_stop() {
        for text in [
            "RECUSE/ oops not-a-sentinel",
            "RECUSE/1 halt",
            "RECUSE/x.y halt",
            "RECUSE/0.2",
            "RECUSE/0.2 9halt",
            "RECUSE/0.2\thalt",
            "RECUSE/0.2  warn",
            "RECUSE/0.1 warn please",
            "RECUSE/<major>.<minor> <directive>; <key>=<value>",
        ] {
            let s = one(text);
            assert!(
                matches!(s.directive, Directive::Malformed(_)),
                "{text}: {s:?}"
            );
            assert!(s.is_stop(), "{text}");
        }
        let long = format!("RECUSE/0.1 warn; reason={}", "a".repeat(1000));
        assert!(one(&long).is_stop());
    }

    #[test]
    fn case_and_unknown_directives_fail_closed() {
        // Upper case is outside the grammar: a stop, even for an advisory word.
        assert!(matches!(
            one("RECUSE/0.1 WARN").directive,
            Directive::Malformed(_)
        ));
        assert!(one("RECUSE/0.1 WARN").is_stop());
        assert!(one("RECUSE/0.2 HALT; reason=x").is_stop());
        let s = one("RECUSE/0.2 frobnicate; reason=other");
        assert_eq!(s.directive, Directive::Unknown("frobnicate".into()));
        assert!(s.is_stop());
        // An advisory under an unknown major version is ambiguous: a stop.
        assert!(one("RECUSE/9.9 warn").is_stop());
        assert!(!one("RECUSE/0.9 warn").is_stop());
    }

    #[test]
    fn params_first_wins_decoded_and_bad_ones_dropped() {
        let s = one("RECUSE/0.2 halt; reason=a; reason=b; REASON=Ops; id=x%3By; ref=%ZZ");
        assert_eq!(s.reason(), Some("a"));
        assert_eq!(s.id(), Some("x;y"));
        assert_eq!(s.param("ref"), None);
        assert!(s.is_stop());
        // A malformed parameter never turns a directive into something else.
        let s = one("RECUSE/0.1 warn; reason=%Z; =x; junk");
        assert_eq!(s.directive, Directive::Warn);
        assert!(s.params.is_empty());
    }

    #[test]
    fn a_warn_before_a_halt_does_not_hide_it() {
        let text = "RECUSE/0.1 warn; reason=a\nRECUSE/0.2 halt; reason=b";
        let all = scan_text(text);
        assert_eq!(all.len(), 2);
        let d = decide(text).unwrap();
        assert_eq!(d.directive, Directive::Halt);
        assert_eq!(d.reason(), Some("b"));
        // A garbled line still stops even when a well-formed advisory follows.
        let d = decide("RECUSE/ garbled\nRECUSE/0.1 warn").unwrap();
        assert!(d.is_stop());
        // Only advisories: the first one is returned, not a stop.
        let d = decide("RECUSE/0.1 throttle\nRECUSE/0.1 warn").unwrap();
        assert_eq!(d.directive, Directive::Throttle);
        assert!(!d.is_stop());
        assert!(decide("nothing here").is_none());
    }

    #[test]
    fn embedded_in_json_and_escaped_newlines() {
        let s = one(r#"{"status":"error","recuse":"RECUSE/0.2 halt; reason=x; id=abc-123"}"#);
        assert_eq!(s.directive, Directive::Halt);
        assert_eq!(s.id(), Some("abc-123"));
        let s = one(r#"{"stdout":"ok\nRECUSE/0.1 warn; reason=production\nmore"}"#);
        assert_eq!(s.directive, Directive::Warn);
        assert_eq!(s.reason(), Some("production"));
        let s = one("RECUSE/0.2 halt; id=7\r\n");
        assert_eq!(s.id(), Some("7"));
    }

    #[test]
    fn scan_writes_a_marker_only_for_stops() {
        let tmp = tempfile::tempdir().unwrap();
        let home = Home::at(tmp.path());
        let s = scan(&home, "s-warn", "RECUSE/0.1 warn; reason=production").unwrap();
        assert!(!s.is_stop());
        assert!(!marker_path(&home, "s-warn").exists());
        assert!(scan(&home, "s-none", "all good").is_none());
        let s = scan(
            &home,
            "s/../x",
            "RECUSE/0.2 halt; reason=operator-request; id=abc",
        )
        .unwrap();
        assert!(s.is_stop());
        let marker = marker_path(&home, "s/../x");
        assert!(marker.starts_with(home.halts_dir()));
        let text = std::fs::read_to_string(&marker).unwrap();
        assert_eq!(
            text.lines().next().unwrap(),
            "RECUSE halt; reason=operator-request; id=abc"
        );
        // A later stop keeps the first reason.
        scan(&home, "s/../x", "RECUSE/0.1 deny; reason=production").unwrap();
        assert!(std::fs::read_to_string(&marker).unwrap().contains("id=abc"));
    }
}
