//! `{{idle_duration}}` (RULES 4.2): how long ago the user's message before the newest one was
//! written, in words, measured to the build's timestamp (never the clock).
//!
//! The words follow the usual rounding of a relative time: up to 44 seconds "a few seconds",
//! then "a minute", "N minutes" below 45, "an hour", "N hours" below 22, "a day", "N days" below
//! 26, "a month", "N months" below 11, "a year", "N years", each amount rounded to the nearest
//! whole unit.

use chrono::{DateTime, FixedOffset, NaiveDateTime, TimeZone};

/// What the macro says when no earlier user message has a readable time.
pub(super) const JUST_NOW: &str = "just now";

/// `since` read as a stored time: RFC 3339, milliseconds since 1970, or SillyTavern's
/// "November 22, 2026 3:04pm" (in the offset of `now`).
pub(super) fn parse_time(
    since: &str,
    now: &DateTime<FixedOffset>,
) -> Option<DateTime<FixedOffset>> {
    let since = since.trim();
    if let Ok(t) = DateTime::parse_from_rfc3339(since) {
        return Some(t);
    }
    if !since.is_empty() && since.bytes().all(|b| b.is_ascii_digit()) {
        let ms: i64 = since.parse().ok()?;
        return DateTime::from_timestamp_millis(ms).map(|t| t.with_timezone(now.offset()));
    }
    let naive =
        NaiveDateTime::parse_from_str(&since.to_ascii_uppercase(), "%B %d, %Y %I:%M%p").ok()?;
    now.offset().from_local_datetime(&naive).single()
}

/// The idle duration in words, from `since` (a stored time) to `now`.
pub(super) fn idle_duration(since: Option<&str>, now: &DateTime<FixedOffset>) -> String {
    match since.and_then(|s| parse_time(s, now)) {
        Some(then) => in_words((*now - then).num_milliseconds().unsigned_abs()),
        None => JUST_NOW.to_string(),
    }
}

/// A duration of `ms` milliseconds in words.
pub(super) fn in_words(ms: u64) -> String {
    let ms = ms as f64;
    let seconds = (ms / 1000.0).round();
    let minutes = (ms / 60_000.0).round();
    let hours = (ms / 3_600_000.0).round();
    let days_exact = ms / 86_400_000.0;
    let days = days_exact.round();
    // A month is 146097 / 4800 days, the mean of the Gregorian calendar.
    let months_exact = days_exact * 4800.0 / 146_097.0;
    let months = months_exact.round();
    let years = (months_exact / 12.0).round();
    let n = |x: f64| x as u64;
    if seconds <= 44.0 {
        "a few seconds".into()
    } else if minutes <= 1.0 {
        "a minute".into()
    } else if minutes < 45.0 {
        format!("{} minutes", n(minutes))
    } else if hours <= 1.0 {
        "an hour".into()
    } else if hours < 22.0 {
        format!("{} hours", n(hours))
    } else if days <= 1.0 {
        "a day".into()
    } else if days < 26.0 {
        format!("{} days", n(days))
    } else if months <= 1.0 {
        "a month".into()
    } else if months < 11.0 {
        format!("{} months", n(months))
    } else if years <= 1.0 {
        "a year".into()
    } else {
        format!("{} years", n(years))
    }
}
