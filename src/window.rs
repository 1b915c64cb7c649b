//! Time windows, as every command that looks back over the store takes them: `derive`,
//! `report`, `guard prune` and `record stats`.
//!
//! A [`Window`] is half-open, `[since, until)`, in UTC Unix milliseconds. `--since` takes a
//! duration (`30m`, `12h`, `7d`, `2w`) counted back from the end of the window, or an absolute
//! point; `--until` takes an absolute point (exclusive) or a duration counted back from now,
//! and defaults to now. An absolute point is a date `YYYY-MM-DD` (midnight UTC), an RFC 3339
//! time, or an ISO date-time without a zone (taken as UTC, as the audit chain writes it).
//! A duration must be positive. A value in none of these forms is a usage error (exit 2, as
//! for any flag clap refuses). A window that ends before it starts is an input error, never
//! an empty result that looks reassuring.
//!
//! This module depends on nothing but `chrono`, so the recorder, derive, prune and report can
//! all use it without depending on each other.

use chrono::{DateTime, NaiveDate, NaiveDateTime, SecondsFormat, TimeZone as _, Utc};
use serde_json::{Value, json};

use crate::{Error, Result};

/// One minute in milliseconds.
pub(crate) const MINUTE_MS: i64 = 60_000;
/// One day in milliseconds.
pub(crate) const DAY_MS: i64 = 86_400_000;

/// What the forms look like, for error messages.
const FORMS: &str = "a duration like 7d, 12h, 30m or 2w, a date YYYY-MM-DD or an RFC 3339 time";

/// A half-open time window `[since_ms, until_ms)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Window {
    /// First millisecond inside the window.
    pub since_ms: i64,
    /// First millisecond after the window.
    pub until_ms: i64,
}

impl Window {
    /// Parse `--since` / `--until` relative to `now_ms` (see the module docs).
    pub(crate) fn parse(since: &str, until: Option<&str>, now_ms: i64) -> Result<Self> {
        Self::resolve(Some(since), until, now_ms, |until_ms| until_ms)
    }

    /// Like [`Window::parse`] with `--since` optional: `default_since` gets the end of the
    /// window and returns its start (`report` starts at the first recorded call).
    pub(crate) fn resolve(
        since: Option<&str>,
        until: Option<&str>,
        now_ms: i64,
        default_since: impl FnOnce(i64) -> i64,
    ) -> Result<Self> {
        let until_ms = match until {
            None => now_ms,
            Some(u) => point(u, "--until", now_ms)?,
        };
        let since_ms = match since {
            None => default_since(until_ms),
            Some(s) => match duration_ms(s) {
                Some(d) => until_ms.saturating_sub(d),
                None => absolute(s).ok_or_else(|| bad("--since", s))?,
            },
        };
        Self::new(since_ms, until_ms)
    }

    /// The window `[since_ms, until_ms)`; an empty or inverted one is an input error.
    pub(crate) fn new(since_ms: i64, until_ms: i64) -> Result<Self> {
        if since_ms >= until_ms {
            return Err(Error::Invalid(format!(
                "the window is empty: --since {} is not before --until {}",
                iso(since_ms),
                iso(until_ms)
            )));
        }
        Ok(Window { since_ms, until_ms })
    }

    /// The `days` days up to `until_ms` (`guard prune --days N`; empty for 0).
    #[must_use]
    pub(crate) fn last_days(days: u32, until_ms: i64) -> Self {
        Window {
            since_ms: until_ms - i64::from(days) * DAY_MS,
            until_ms,
        }
    }

    /// Is `ms` inside the window?
    #[cfg(test)]
    #[must_use]
    pub(crate) fn contains(&self, ms: i64) -> bool {
        ms >= self.since_ms && ms < self.until_ms
    }

    /// Whole days the window spans, rounded up (the "in 7d" of messages).
    #[must_use]
    pub(crate) fn days(&self) -> i64 {
        ((self.until_ms - self.since_ms) + DAY_MS - 1) / DAY_MS
    }

    /// The window cut into consecutive pieces of `step_ms` (the last may be shorter).
    #[must_use]
    pub(crate) fn steps(&self, step_ms: i64) -> Vec<Window> {
        let mut out = Vec::new();
        let mut start = self.since_ms;
        while start < self.until_ms {
            let end = start.saturating_add(step_ms.max(1)).min(self.until_ms);
            out.push(Window {
                since_ms: start,
                until_ms: end,
            });
            start = end;
        }
        out
    }

    /// The window as a JSON object (`since`, `until`, `days`).
    #[must_use]
    pub(crate) fn to_json(self) -> Value {
        json!({"since": iso(self.since_ms), "until": iso(self.until_ms), "days": self.days()})
    }

    /// Read back a window written by [`Window::to_json`].
    #[must_use]
    pub(crate) fn from_json(v: &Value) -> Option<Self> {
        let since_ms = absolute(v.get("since")?.as_str()?)?;
        let until_ms = absolute(v.get("until")?.as_str()?)?;
        Window::new(since_ms, until_ms).ok()
    }
}

fn bad(flag: &str, text: &str) -> Error {
    Error::Usage(format!("{flag} '{text}': expected {FORMS}"))
}

/// One point in time: a duration counted back from `now_ms`, or an absolute point. `flag`
/// names the option in the error (`--since`, `--until`).
pub(crate) fn point(text: &str, flag: &str, now_ms: i64) -> Result<i64> {
    match duration_ms(text) {
        Some(d) => Ok(now_ms.saturating_sub(d)),
        None => absolute(text).ok_or_else(|| bad(flag, text)),
    }
}

/// `30m`, `12h`, `7d`, `2w` in milliseconds; `None` for anything else, zero or negative.
#[must_use]
pub(crate) fn duration_ms(text: &str) -> Option<i64> {
    let s = text.trim();
    let unit = s.chars().last()?;
    let digits = &s[..s.len() - unit.len_utf8()];
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: i64 = digits.parse().ok()?;
    let per = match unit {
        'm' => MINUTE_MS,
        'h' => 60 * MINUTE_MS,
        'd' => DAY_MS,
        'w' => 7 * DAY_MS,
        _ => return None,
    };
    (n > 0).then(|| n.saturating_mul(per))
}

/// An absolute point in Unix milliseconds: a date (midnight UTC), an RFC 3339 time (`Z` or
/// an offset), or an ISO date-time without a zone (`T` or a space between; taken as UTC).
#[must_use]
pub(crate) fn absolute(text: &str) -> Option<i64> {
    let s = text.trim();
    if s.is_empty() {
        return None;
    }
    if let Ok(d) = NaiveDate::parse_from_str(s, "%Y-%m-%d") {
        return Some(d.and_hms_opt(0, 0, 0)?.and_utc().timestamp_millis());
    }
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Some(t.timestamp_millis());
    }
    ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%d %H:%M:%S%.f"]
        .iter()
        .find_map(|f| NaiveDateTime::parse_from_str(s, f).ok())
        .map(|n| n.and_utc().timestamp_millis())
}

/// Unix milliseconds as an RFC 3339 UTC time (`2026-07-02T10:00:00Z`).
#[must_use]
pub(crate) fn iso(ms: i64) -> String {
    Utc.timestamp_millis_opt(ms)
        .single()
        .map_or_else(String::new, |t| {
            t.to_rfc3339_opts(SecondsFormat::Secs, true)
        })
}

/// Unix milliseconds as a UTC date `YYYY-MM-DD`.
#[must_use]
pub(crate) fn date(ms: i64) -> String {
    Utc.timestamp_millis_opt(ms)
        .single()
        .map_or_else(String::new, |t| t.format("%Y-%m-%d").to_string())
}

/// Unix milliseconds as a chrono time (`None` out of range).
#[must_use]
pub(crate) fn utc(ms: i64) -> Option<DateTime<Utc>> {
    Utc.timestamp_millis_opt(ms).single()
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_785_000_000_000;

    #[test]
    fn durations_count_back_from_the_end_of_the_window() {
        let w = Window::parse("7d", None, NOW).unwrap();
        assert_eq!(w.until_ms - w.since_ms, 7 * DAY_MS);
        assert_eq!(w.days(), 7);
        let w = Window::parse("2w", Some("2026-07-15"), NOW).unwrap();
        assert_eq!(iso(w.since_ms), "2026-07-01T00:00:00Z");
        assert_eq!(Window::parse("12h", None, NOW).unwrap().days(), 1);
        assert_eq!(
            Window::parse("30m", None, NOW).unwrap().since_ms,
            NOW - 30 * MINUTE_MS
        );
        // `--until` as a duration counts back from now.
        let w = Window::parse("2d", Some("1d"), NOW).unwrap();
        assert_eq!((w.since_ms, w.until_ms), (NOW - 3 * DAY_MS, NOW - DAY_MS));
    }

    #[test]
    fn dates_are_half_open_and_round_trip() {
        let w = Window::parse("2026-07-01", Some("2026-07-08"), NOW).unwrap();
        assert_eq!(iso(w.since_ms), "2026-07-01T00:00:00Z");
        assert_eq!(iso(w.until_ms), "2026-07-08T00:00:00Z");
        assert_eq!(w.days(), 7);
        assert!(w.contains(w.since_ms) && !w.contains(w.until_ms));
        assert_eq!(Window::from_json(&w.to_json()), Some(w));
        assert_eq!(date(w.until_ms - 1), "2026-07-07");
    }

    #[test]
    fn bad_or_empty_windows_are_errors() {
        assert!(Window::parse("yesterday", None, NOW).is_err());
        assert!(Window::parse("0d", None, NOW).is_err());
        assert!(Window::parse("-3d", None, NOW).is_err());
        assert!(Window::parse("xd", None, NOW).is_err());
        assert!(Window::parse("7y", None, NOW).is_err());
        assert!(Window::parse("2026-07-08", Some("2026-07-01"), NOW).is_err());
        assert!(Window::parse("7d", Some("soon"), NOW).is_err());
        let e = Window::parse("soon", None, NOW).unwrap_err().to_string();
        assert!(e.contains("--since 'soon'"), "{e}");
    }

    #[test]
    fn report_defaults_and_points() {
        let w = Window::resolve(None, Some("2026-07-08"), NOW, |u| u - DAY_MS).unwrap();
        assert_eq!(iso(w.since_ms), "2026-07-07T00:00:00Z");
        assert_eq!(
            point("12h", "--since", NOW).unwrap(),
            NOW - 12 * 60 * MINUTE_MS
        );
        assert_eq!(point("1970-01-02", "--since", NOW).unwrap(), DAY_MS);
        assert!(point("soon", "--since", NOW).is_err());
    }

    #[test]
    fn audit_timestamps_parse_with_zone_or_naive() {
        assert!(absolute("2026-11-29T10:00:00.000Z").is_some());
        assert_eq!(
            absolute("2026-11-29T10:00:00+02:00"),
            absolute("2026-11-29T08:00:00Z")
        );
        assert_eq!(
            absolute("2026-11-29T10:00:00"),
            absolute("2026-11-29T10:00:00Z")
        );
        assert_eq!(
            absolute("2026-11-29 10:00:00.5"),
            absolute("2026-11-29T10:00:00.500Z")
        );
        assert!(absolute("").is_none());
        assert!(absolute("yesterday").is_none());
    }

    #[test]
    fn steps_cover_the_window_exactly() {
        let w = Window::parse("2026-07-01", Some("2026-07-17"), NOW).unwrap();
        let s = w.steps(7 * DAY_MS);
        assert_eq!(s.len(), 3);
        assert_eq!(s[0].since_ms, w.since_ms);
        assert_eq!(s[2].until_ms, w.until_ms);
        assert_eq!(s[2].days(), 2);
        assert!(s.windows(2).all(|p| p[0].until_ms == p[1].since_ms));
    }
}
