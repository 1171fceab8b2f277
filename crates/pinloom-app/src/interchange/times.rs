//! Times as Open Loom writes them, and as Pinloom reads them back.

use chrono::{DateTime, SecondsFormat, Utc};

/// A time as Open Loom writes it: ISO-8601 in UTC with milliseconds.
pub(in crate::interchange) fn iso(ms: i64) -> String {
    DateTime::<Utc>::from_timestamp_millis(ms)
        .unwrap_or_default()
        .to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// An ISO-8601 time with a zone, in milliseconds since the Unix epoch; `None` without a zone or
/// when it does not parse (the spec: leave it out rather than guess).
pub(in crate::interchange) fn parse_time(text: &str) -> Option<i64> {
    DateTime::parse_from_rfc3339(text).ok().map(|time| time.timestamp_millis())
}

#[cfg(test)]
mod tests {
    use super::{iso, parse_time};

    #[test]
    fn times_round_trip_in_utc_with_milliseconds() {
        assert_eq!(iso(1_783_545_240_123), "2026-07-08T21:14:00.123Z");
        assert_eq!(parse_time("2026-07-08T21:14:00.123Z"), Some(1_783_545_240_123));
        assert_eq!(parse_time("2026-07-08T23:14:00+02:00"), Some(1_783_545_240_000));
        assert_eq!(
            parse_time("2023-02-28-19.24.17"),
            None,
            "socketteer's local times are left out"
        );
        assert_eq!(parse_time("2026-07-08T21:14:00"), None, "no zone, no guess");
    }
}
