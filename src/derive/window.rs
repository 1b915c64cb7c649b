//! The time window derive looks at: half-open `[since, until)` in UTC milliseconds.
//!
//! `--since` takes a duration (`7d`, `12h`, `2w`, `30m`) counted back from the end of the
//! window, or a date `YYYY-MM-DD` (midnight UTC, inclusive) or an RFC 3339 time. `--until`
//! takes the same absolute forms (exclusive) and defaults to now. A window that ends before it
//! starts is an input error, never an empty result that looks reassuring.

use chrono::{DateTime, NaiveDate, SecondsFormat, TimeZone as _, Utc};
use serde_json::{Value, json};

use crate::{Error, Result};

const MINUTE_MS: i64 = 60_000;
const DAY_MS: i64 = 86_400_000;

/// A half-open time window `[since_ms, until_ms)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// First millisecond inside the window.
    pub since_ms: i64,
    /// First millisecond after the window.
    pub until_ms: i64,
}

impl Window {
    /// Parse `--since` / `--until` relative to `now_ms`.
    pub fn parse(since: &str, until: Option<&str>, now_ms: i64) -> Result<Self> {
        let until_ms = match until {
            None => now_ms,
            Some(u) => absolute(u).ok_or_else(|| {
                Error::Invalid(format!(
                    "--until '{u}': expected a date YYYY-MM-DD or an RFC 3339 time"
                ))
            })?,
        };
        let since_ms = match duration_ms(since) {
            Some(d) => until_ms - d,
            None => absolute(since).ok_or_else(|| {
                Error::Invalid(format!(
                    "--since '{since}': expected a duration like 7d, 12h, 2w or a date YYYY-MM-DD"
                ))
            })?,
        };
        if since_ms >= until_ms {
            return Err(Error::Invalid(format!(
                "the window is empty: --since {} is not before --until {}",
                iso(since_ms),
                iso(until_ms)
            )));
        }
        Ok(Window { since_ms, until_ms })
    }

    /// Whole days the window spans, rounded up (the "in 7d" of messages).
    #[must_use]
    pub fn days(&self) -> i64 {
        ((self.until_ms - self.since_ms) + DAY_MS - 1) / DAY_MS
    }

    /// The window as a JSON object (`since`, `until`, `days`).
    #[must_use]
    pub fn to_json(&self) -> Value {
        json!({"since": iso(self.since_ms), "until": iso(self.until_ms), "days": self.days()})
    }

    /// Read back a window written by [`Window::to_json`].
    #[must_use]
    pub fn from_json(v: &Value) -> Option<Self> {
        let since_ms = absolute(v.get("since")?.as_str()?)?;
        let until_ms = absolute(v.get("until")?.as_str()?)?;
        (since_ms < until_ms).then_some(Window { since_ms, until_ms })
    }
}

/// `7d`, `12h`, `2w`, `30m` in milliseconds.
fn duration_ms(s: &str) -> Option<i64> {
    let s = s.trim();
    let unit = s.chars().last()?;
    let n: i64 = s[..s.len() - unit.len_utf8()].parse().ok()?;
    let per = match unit {
        'm' => MINUTE_MS,
        'h' => 60 * MINUTE_MS,
        'd' => DAY_MS,
        'w' => 7 * DAY_MS,
        _ => return None,
    };
    (n > 0).then(|| n.saturating_mul(per))
}

/// A date (midnight UTC) or an RFC 3339 time, in Unix milliseconds.
fn absolute(s: &str) -> Option<i64> {
    let s = s.trim();
    if let Ok(d) = NaiveDate::parse_from_str(s, "%Y-%m-%d") {
        return Some(
            Utc.from_utc_datetime(&d.and_hms_opt(0, 0, 0)?)
                .timestamp_millis(),
        );
    }
    DateTime::parse_from_rfc3339(s)
        .ok()
        .map(|t| t.timestamp_millis())
}

/// Unix milliseconds as an RFC 3339 UTC time (`2026-07-02T10:00:00Z`).
#[must_use]
pub fn iso(ms: i64) -> String {
    Utc.timestamp_millis_opt(ms)
        .single()
        .map_or_else(String::new, |t| {
            t.to_rfc3339_opts(SecondsFormat::Secs, true)
        })
}

/// Unix milliseconds as a UTC date `YYYY-MM-DD`.
#[must_use]
pub fn date(ms: i64) -> String {
    Utc.timestamp_millis_opt(ms)
        .single()
        .map_or_else(String::new, |t| t.format("%Y-%m-%d").to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_785_000_000_000;

    #[test]
    fn durations_count_back_from_the_end() {
        let w = Window::parse("7d", None, NOW).unwrap();
        assert_eq!(w.until_ms - w.since_ms, 7 * DAY_MS);
        assert_eq!(w.days(), 7);
        let w = Window::parse("2w", Some("2026-07-15"), NOW).unwrap();
        assert_eq!(iso(w.since_ms), "2026-07-01T00:00:00Z");
        assert_eq!(Window::parse("12h", None, NOW).unwrap().days(), 1);
    }

    #[test]
    fn dates_are_half_open_and_round_trip() {
        let w = Window::parse("2026-07-01", Some("2026-07-08"), NOW).unwrap();
        assert_eq!(iso(w.since_ms), "2026-07-01T00:00:00Z");
        assert_eq!(iso(w.until_ms), "2026-07-08T00:00:00Z");
        assert_eq!(w.days(), 7);
        assert_eq!(Window::from_json(&w.to_json()), Some(w));
    }

    #[test]
    fn bad_or_empty_windows_are_errors() {
        assert!(Window::parse("yesterday", None, NOW).is_err());
        assert!(Window::parse("0d", None, NOW).is_err());
        assert!(Window::parse("2026-07-08", Some("2026-07-01"), NOW).is_err());
        assert!(Window::parse("7d", Some("soon"), NOW).is_err());
    }
}
