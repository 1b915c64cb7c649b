//! The report's period: `--since` and `--until` as durations back from now (`90d`, `12h`) or
//! dates (`YYYY-MM-DD`, midnight UTC) or RFC 3339 times. Half-open: `[since, until)`.

use chrono::{DateTime, NaiveDate, Utc};

use crate::{Error, Result};

/// Parse one point in time relative to `now`.
pub fn parse_point(s: &str, now: DateTime<Utc>) -> Result<DateTime<Utc>> {
    let s = s.trim();
    let bad = || {
        Error::Invalid(format!(
            "'{s}' is not a duration like 7d/12h or a date YYYY-MM-DD"
        ))
    };
    if let Some(num) = s.strip_suffix('d').or_else(|| s.strip_suffix('h')) {
        let n: i64 = num.parse().map_err(|_| bad())?;
        let d = if s.ends_with('d') {
            chrono::Duration::days(n)
        } else {
            chrono::Duration::hours(n)
        };
        return Ok(now - d);
    }
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Ok(t.with_timezone(&Utc));
    }
    NaiveDate::parse_from_str(s, "%Y-%m-%d")
        .ok()
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|t| t.and_utc())
        .ok_or_else(bad)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_dates_and_garbage() {
        let now = parse_point("2026-05-10T12:00:00Z", Utc::now()).unwrap();
        assert_eq!(
            parse_point("7d", now).unwrap().to_rfc3339(),
            "2026-05-03T12:00:00+00:00"
        );
        assert_eq!(
            parse_point("12h", now).unwrap().to_rfc3339(),
            "2026-05-10T00:00:00+00:00"
        );
        assert_eq!(
            parse_point("2026-01-02", now).unwrap().to_rfc3339(),
            "2026-01-02T00:00:00+00:00"
        );
        assert!(parse_point("soon", now).is_err());
        assert!(parse_point("xd", now).is_err());
    }
}
