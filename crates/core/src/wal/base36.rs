//! The base-36 integers Milvus uses in WAL properties (`_tt`, `_btt`, `_wt`) and in
//! RocksMQ/Kafka message ids (what a timetick means in wall time is [`crate::time`]'s).
//!
//! Owns: base-36 text in both directions, with Go's `strconv` rules (no sign for unsigned,
//! either letter case, no empty string). Must never: panic or wrap around on outside text;
//! overflow is an error, not a smaller number.

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
