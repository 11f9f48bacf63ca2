//! Wall-clock time, one way for the whole house: now ([`now_ms`]), the one pattern a time is
//! shown in (UTC, `YYYY-MM-DD hh:mm:ss.mmm`: [`format_millis_utc`], to the second
//! [`format_secs_utc`]), the stamps files carry (RFC 3339 in manifests and journals:
//! [`now_rfc3339`]; `YYYYMMDD-hhmmss` in a new folder's name: [`stamp`]), the UTC times an
//! operator types ([`parse_utc`], [`parse_date`]), and Milvus's hybrid timetick ↔ wall time
//! (`physical_ms << 18 | logical`: [`timetick_to_millis`], [`millis_to_timetick`]).
//!
//! On one date crate: jiff, because egui_extras' date picker is built on it (its
//! `DatePickerButton` edits a [`Date`]), so the app carries it anyway.
//! Must never: use the local time zone (every time walscope shows or writes is UTC), or panic on
//! a number outside the calendar (a time past 9999 is said in milliseconds instead).

use jiff::Timestamp;
use jiff::civil::DateTime;
use jiff::tz::TimeZone;

/// A calendar day (UTC), as the app's date picker edits it.
pub use jiff::civil::Date;

/// Bits of a hybrid timestamp that hold the logical counter (Milvus `pkg/util/tsoutil`,
/// `logicalBits`).
pub const LOGICAL_BITS: u32 = 18;

/// Milliseconds since the Unix epoch, now (0 on a clock set before 1970).
pub fn now_ms() -> u64 {
    u64::try_from(Timestamp::now().as_millisecond()).unwrap_or(0)
}

/// Wall-clock milliseconds since the Unix epoch of a hybrid timetick.
pub const fn timetick_to_millis(tt: u64) -> u64 {
    tt >> LOGICAL_BITS
}

/// The logical counter of a hybrid timetick.
pub const fn timetick_logical(tt: u64) -> u64 {
    tt & ((1 << LOGICAL_BITS) - 1)
}

/// The first timetick of a millisecond (logical counter 0).
pub const fn millis_to_timetick(ms: u64) -> u64 {
    ms << LOGICAL_BITS
}

/// The last timetick of a millisecond (the logical counter at its largest).
pub const fn last_timetick_of(ms: u64) -> u64 {
    millis_to_timetick(ms + 1) - 1
}

/// UTC wall-clock time of a timetick: `"2025-11-30 00:12:01.123"`.
pub fn format_timetick(tt: u64) -> String {
    format_millis_utc(timetick_to_millis(tt))
}

/// UTC time of Unix milliseconds in the one pattern, `YYYY-MM-DD hh:mm:ss.mmm`. Past the
/// calendar's end (the last day of 9999), the milliseconds themselves, said so.
pub fn format_millis_utc(ms: u64) -> String {
    let Some(t) = civil(ms) else {
        return format!("{ms} ms after 1970 (past 9999)");
    };
    // Digits by hand: list rows format one of these per frame, and `format!` is most of that.
    let mut out = *b"0000-00-00 00:00:00.000";
    let mut put = |at: usize, width: usize, v: i16| {
        let mut v = v.unsigned_abs();
        for i in (at..at + width).rev() {
            out[i] = b'0' + (v % 10) as u8;
            v /= 10;
        }
    };
    put(0, 4, t.year());
    put(5, 2, t.month().into());
    put(8, 2, t.day().into());
    put(11, 2, t.hour().into());
    put(14, 2, t.minute().into());
    put(17, 2, t.second().into());
    put(20, 3, t.millisecond());
    out.iter().map(|&b| b as char).collect()
}

/// UTC time of Unix seconds in the one pattern, to the second: `YYYY-MM-DD hh:mm:ss`. None
/// outside the calendar.
pub fn format_secs_utc(secs: i64) -> Option<String> {
    let ms = u64::try_from(secs).ok()?.checked_mul(1000)?;
    civil(ms)?;
    let mut text = format_millis_utc(ms);
    text.truncate("YYYY-MM-DD hh:mm:ss".len());
    Some(text)
}

/// Now, as manifests, journals and `salvage.json` record it: `2025-11-30T00:12:01.123Z`.
pub fn now_rfc3339() -> String {
    let mut text = format_millis_utc(now_ms());
    text.replace_range(10..11, "T");
    text.push('Z');
    text
}

/// A time a manifest or journal recorded (`2025-11-30T00:12:01.123Z`, see [`now_rfc3339`]) in
/// the one pattern the window and the CLI show: `2025-11-30 00:12:01.123 UTC`. Text that is not
/// such a time is shown as it is.
pub fn shown_recorded(text: &str) -> String {
    match parse_utc(text).and_then(|ms| u64::try_from(ms).ok()) {
        Some(ms) => format!("{} UTC", format_millis_utc(ms)),
        None => text.to_string(),
    }
}

/// `20251130-001201`: UTC to the second, for a file or folder name.
pub fn stamp(ms: u64) -> String {
    let text = format_millis_utc(ms);
    let digits = |r: std::ops::Range<usize>| text[r].replace(['-', ':'], "");
    format!("{}-{}", digits(0..10), digits(11..19))
}

/// The UTC day of Unix milliseconds (1970-01-01 past the calendar's end).
pub fn date_of(ms: u64) -> Date {
    civil(ms).map(|t| t.date()).unwrap_or_default()
}

/// Today, UTC.
pub fn today() -> Date {
    date_of(now_ms())
}

/// A day as an operator types it, `YYYY-MM-DD`.
pub fn parse_date(text: &str) -> Option<Date> {
    text.trim().parse().ok()
}

/// Unix milliseconds (negative before 1970) of a UTC time as an operator types it:
/// `YYYY-MM-DD hh:mm:ss[.fff]` or `YYYY-MM-DD hh:mm`, with `T` or a space between day and
/// time, and an optional trailing `Z`. None for anything else.
pub fn parse_utc(text: &str) -> Option<i64> {
    const FORMS: [&str; 4] =
        ["%Y-%m-%d %H:%M:%S%.f", "%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%d %H:%M", "%Y-%m-%dT%H:%M"];
    let text = text.trim().trim_end_matches('Z');
    FORMS.iter().find_map(|form| {
        let t = jiff::fmt::strtime::parse(form, text).ok()?.to_datetime().ok()?;
        Some(TimeZone::UTC.to_timestamp(t).ok()?.as_millisecond())
    })
}

/// The UTC calendar time of Unix milliseconds; None past the calendar's end.
fn civil(ms: u64) -> Option<DateTime> {
    let t = Timestamp::from_millisecond(i64::try_from(ms).ok()?).ok()?;
    Some(TimeZone::UTC.to_datetime(t))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_recorded_time_is_shown_in_the_one_pattern() {
        assert_eq!(super::shown_recorded("2025-11-30T00:12:01.123Z"), "2025-11-30 00:12:01.123 UTC");
        assert_eq!(super::shown_recorded("yesterday"), "yesterday");
        let now = super::now_rfc3339();
        assert!(super::shown_recorded(&now).ends_with(" UTC"), "{now}");
    }

    use super::*;

    #[test]
    fn formats_a_hand_computed_timetick() {
        // 1764461521 s = 20422 days + 721 s; day 20422 is 2025-11-30 (2025-01-01 is day 20089,
        // 333 days later, Jan..Oct = 304 days, so November 30th); 721 s = 00:12:01.
        let tt = (1_764_461_521_123u64 << 18) | 5;
        assert_eq!(timetick_to_millis(tt), 1_764_461_521_123);
        assert_eq!(timetick_logical(tt), 5);
        assert_eq!(format_timetick(tt), "2025-11-30 00:12:01.123");
        assert_eq!(format_timetick(0), "1970-01-01 00:00:00.000");
        // Leap day: 2024-02-29 00:00:00 UTC = 1709164800 s.
        assert_eq!(format_millis_utc(1_709_164_800_000), "2024-02-29 00:00:00.000");
        assert_eq!(format_millis_utc(1_709_164_799_999), "2024-02-28 23:59:59.999");
        // The largest timetick still formats, without overflow: 2^46 - 1 ms.
        assert_eq!(format_timetick(u64::MAX), "4199-11-24 01:22:57.663");
        assert_eq!(format_millis_utc(253_370_764_800_000), "9999-01-01 00:00:00.000");
        assert_eq!(format_millis_utc(u64::MAX), "18446744073709551615 ms after 1970 (past 9999)");
    }

    #[test]
    fn timeticks_of_a_millisecond_bound_it() {
        assert_eq!(millis_to_timetick(1_795_997_521_000), 1_795_997_521_000 << 18);
        assert_eq!(last_timetick_of(1_795_997_521_123), (1_795_997_521_124u64 << 18) - 1);
        assert_eq!(timetick_to_millis(last_timetick_of(7)), 7);
    }

    #[test]
    fn the_other_shapes_are_the_one_pattern() {
        assert_eq!(format_secs_utc(1_709_164_800).as_deref(), Some("2024-02-29 00:00:00"));
        assert_eq!(format_secs_utc(-1), None);
        assert_eq!(format_secs_utc(i64::MAX), None);
        assert_eq!(stamp(1_764_461_521_123), "20251130-001201");
        let now = now_rfc3339();
        assert_eq!((now.len(), &now[10..11], &now[23..]), (24, "T", "Z"), "{now}");
        assert!(now_ms() > 1_700_000_000_000);
        assert_eq!(date_of(1_709_164_800_000).to_string(), "2024-02-29");
        assert_eq!(parse_date(" 2024-02-29 "), Some(date_of(1_709_164_800_000)));
        assert_eq!(parse_date("2024-02-30"), None);
    }

    #[test]
    fn reads_the_times_an_operator_types() {
        let ms = 1_795_997_521_123;
        for text in ["2026-11-30 00:12:01.123", "2026-11-30T00:12:01.123Z", " 2026-11-30 00:12:01.123 "] {
            assert_eq!(parse_utc(text), Some(ms), "{text}");
        }
        assert_eq!(parse_utc("2026-11-30 00:12:01"), Some(ms - 123));
        assert_eq!(parse_utc("2026-11-30T00:12"), Some(ms - 1123));
        assert_eq!(parse_utc("1969-12-31 23:59:59"), Some(-1000));
        for bad in ["2026-11-30", "yesterday", "2026-13-01 00:00", "2026-11-30 00:12:01 junk"] {
            assert_eq!(parse_utc(bad), None, "{bad}");
        }
    }
}
