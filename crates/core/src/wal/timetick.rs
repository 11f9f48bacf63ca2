//! Timeticks and the base-36 integers Milvus uses in WAL properties (`_tt`, `_btt`, `_wt`) and in
//! RocksMQ/Kafka message ids.
//!
//! Owns: the hybrid-TSO split (`physical_ms << 18 | logical`) and base-36 text in both directions,
//! with Go's `strconv` rules (no sign for unsigned, either letter case, no empty string). Must
//! never: panic or wrap around on outside text; overflow is an error, not a smaller number.

/// Bits of a hybrid timestamp that hold the logical counter (`pkg/util/tsoutil`, `logicalBits`).
pub const LOGICAL_BITS: u32 = 18;

/// Wall-clock milliseconds since the Unix epoch of a hybrid timetick.
pub fn timetick_to_millis(tt: u64) -> u64 {
    tt >> LOGICAL_BITS
}

/// The logical counter of a hybrid timetick.
pub fn timetick_logical(tt: u64) -> u64 {
    tt & ((1 << LOGICAL_BITS) - 1)
}

/// UTC wall-clock time of a timetick: `"2025-11-30 00:12:01.123"`.
pub fn format_timetick(tt: u64) -> String {
    format_millis_utc(timetick_to_millis(tt))
}

/// UTC time of Unix milliseconds, `YYYY-MM-DD hh:mm:ss.mmm`. Done by hand (no date crate): a
/// timetick never predates 1970, so only the proleptic Gregorian forward direction is needed.
pub fn format_millis_utc(ms: u64) -> String {
    let secs = ms / 1000;
    let days = secs / 86_400;
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days(days);
    if y > 9999 {
        return format!(
            "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}.{:03}",
            rem / 3600,
            (rem % 3600) / 60,
            rem % 60,
            ms % 1000
        );
    }
    // Digits by hand: list rows format one of these per frame, and `format!` is most of that.
    let mut out = *b"0000-00-00 00:00:00.000";
    let mut put = |at: usize, width: usize, mut v: u64| {
        for i in (at..at + width).rev() {
            out[i] = b'0' + (v % 10) as u8;
            v /= 10;
        }
    };
    put(0, 4, y);
    put(5, 2, m);
    put(8, 2, d);
    put(11, 2, rem / 3600);
    put(14, 2, (rem % 3600) / 60);
    put(17, 2, rem % 60);
    put(20, 3, ms % 1000);
    out.iter().map(|&b| b as char).collect()
}

/// Year, month (1..=12) and day (1..=31) of a count of days since 1970-01-01 (Howard Hinnant's
/// `civil_from_days`, restricted to non-negative day counts). Any `u64 / 86_400_000` day count
/// is far too small to overflow the arithmetic below.
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468; // days since 0000-03-01
    let era = z / 146_097;
    let doe = z - era * 146_097; // [0, 146096]
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365; // [0, 399]
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // [0, 365], year starting in March
    let mp = (5 * doy + 2) / 153; // [0, 11], March = 0
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + u64::from(m <= 2);
    (y, m, d)
}

fn digit36(c: char) -> Option<u64> {
    c.to_digit(36).map(u64::from)
}

/// Parses an unsigned base-36 integer as Go's `strconv.ParseUint(s, 36, 64)` does.
pub fn parse_base36_u64(s: &str) -> Result<u64, String> {
    // The digits are ASCII: bytes are read here (every frame's `_tt` comes through), and the
    // walk below, by characters, words the error.
    let mut v: u64 = 0;
    for &b in s.as_bytes() {
        let d = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'z' => b - b'a' + 10,
            b'A'..=b'Z' => b - b'A' + 10,
            _ => return explain_base36_u64(s),
        };
        v = match v.checked_mul(36).and_then(|v| v.checked_add(u64::from(d))) {
            Some(v) => v,
            None => return explain_base36_u64(s),
        };
    }
    if s.is_empty() {
        return explain_base36_u64(s);
    }
    Ok(v)
}

/// [`parse_base36_u64`] character by character, saying where a bad input goes wrong.
fn explain_base36_u64(s: &str) -> Result<u64, String> {
    if s.is_empty() {
        return Err("empty string is not a base-36 number".to_string());
    }
    let mut v: u64 = 0;
    for (i, c) in s.chars().enumerate() {
        let Some(d) = digit36(c) else {
            return Err(format!("{c:?} at position {i} of {s:?} is not a base-36 digit (0-9, a-z)"));
        };
        v = v
            .checked_mul(36)
            .and_then(|v| v.checked_add(d))
            .ok_or_else(|| format!("base-36 number {s:?} does not fit in 64 bits"))?;
    }
    Ok(v)
}

/// Parses a signed base-36 integer as Go's `strconv.ParseInt(s, 36, 64)` does (optional sign).
pub fn parse_base36_i64(s: &str) -> Result<i64, String> {
    let (neg, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let magnitude = parse_base36_u64(digits).map_err(|e| {
        if digits.is_empty() && !s.is_empty() { format!("{s:?} has a sign but no digits") } else { e }
    })?;
    let out_of_range = || format!("base-36 number {s:?} is outside the signed 64-bit range");
    if neg {
        if magnitude == 1 << 63 {
            return Ok(i64::MIN);
        }
        i64::try_from(magnitude).map(|m| -m).map_err(|_| out_of_range())
    } else {
        i64::try_from(magnitude).map_err(|_| out_of_range())
    }
}

/// Lowercase base 36, as Go's `strconv.FormatUint(v, 36)`.
pub fn to_base36(mut v: u64) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut buf = Vec::with_capacity(13);
    loop {
        buf.push(DIGITS[(v % 36) as usize]);
        v /= 36;
        if v == 0 {
            break;
        }
    }
    buf.reverse();
    buf.into_iter().map(char::from).collect()
}

/// Lowercase signed base 36, as Go's `strconv.FormatInt(v, 36)`.
pub fn to_base36_i64(v: i64) -> String {
    if v < 0 { format!("-{}", to_base36(v.unsigned_abs())) } else { to_base36(v as u64) }
}

#[cfg(test)]
mod tests {
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
    }

    #[test]
    fn base36_round_trips_and_matches_go() {
        assert_eq!(parse_base36_u64("rz"), Ok(27 * 36 + 35));
        assert_eq!(parse_base36_u64("RZ"), Ok(1007));
        assert_eq!(to_base36(1007), "rz");
        assert_eq!(to_base36(0), "0");
        assert_eq!(to_base36(35), "z");
        assert_eq!(to_base36(36), "10");
        // Go: strconv.FormatUint(math.MaxUint64, 36) == "3w5e11264sgsf"
        assert_eq!(to_base36(u64::MAX), "3w5e11264sgsf");
        for v in [0, 1, 35, 36, 1007, 1 << 40, i64::MAX as u64, u64::MAX - 1, u64::MAX] {
            assert_eq!(parse_base36_u64(&to_base36(v)), Ok(v));
        }
        for v in [0i64, -1, 1007, -1007, i64::MAX, i64::MIN] {
            assert_eq!(parse_base36_i64(&to_base36_i64(v)), Ok(v));
        }
        assert_eq!(to_base36_i64(-1007), "-rz");
    }

    #[test]
    fn base36_rejects_bad_text() {
        let e = parse_base36_u64("r!z").unwrap_err();
        assert!(e.contains("'!' at position 1"), "{e}");
        assert!(parse_base36_u64("").is_err());
        assert!(parse_base36_u64("-1").is_err());
        assert!(parse_base36_u64("3w5e11264sgsg").unwrap_err().contains("64 bits"));
        assert!(parse_base36_u64("é").is_err());
        assert!(parse_base36_i64("-").unwrap_err().contains("no digits"));
        assert!(parse_base36_i64("1y2p0ij32e8e8").unwrap_err().contains("signed 64-bit"));
        assert_eq!(parse_base36_i64("-1y2p0ij32e8e8"), Ok(i64::MIN));
        assert_eq!(to_base36(i64::MAX as u64), "1y2p0ij32e8e7");
    }

    /// The byte loop gives what the character walk gives, value or error word for word.
    #[test]
    fn base36_bytes_agree_with_the_character_walk() {
        let mut cases: Vec<String> = [
            "",
            "0",
            "Zz9",
            "3w5e11264sgsf",
            "3w5e11264sgsg",
            "3W5E11264SGSF",
            "00000000000000000000001",
            "1é",
            "é1",
            "r z",
            "-",
            "_",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..5000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let alphabet = b"0123456789abcdefxyzABCXYZ!/:@[`{";
            let len = (x % 16) as usize;
            let pick =
                |i: usize| alphabet[(x.rotate_left(i as u32 * 5) % alphabet.len() as u64) as usize] as char;
            cases.push((0..len).map(pick).collect());
        }
        for c in &cases {
            assert_eq!(parse_base36_u64(c), explain_base36_u64(c), "{c:?}");
        }
    }
}
