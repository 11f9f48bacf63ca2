//! Numbers as an operator reads them, one way for the CLI, the window and every message: byte
//! sizes in binary units (`18.7 MiB`: [`bytes`]), with the exact count beside them where both
//! help (`18.7 MiB (19,561,295 bytes)`: [`bytes_exact`]), and counts with thousands separators
//! ([`count`]), and a count with its noun in the right number (`1 partition`, `2,048 frames`:
//! [`counted`]), so no message says "partition(s)". Times are [`crate::time`]'s.
//!
//! Must never: round a size to a unit it does not reach (below 1 KiB a size is in bytes), or
//! print a decimal a size does not have (an exact 512 MiB is `512 MiB`).

const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];

/// A byte size, short: `512 B`, `18.7 MiB`, `512 MiB`, `1.2 GiB`.
pub fn bytes(n: u64) -> String {
    if n < 1024 {
        return format!("{n} B");
    }
    let mut unit = 0;
    let mut size = 1024u64;
    while unit + 1 < UNITS.len() && n >= size * 1024 {
        unit += 1;
        size *= 1024;
    }
    if n.is_multiple_of(size) {
        format!("{} {}", n / size, UNITS[unit])
    } else {
        format!("{:.1} {}", n as f64 / size as f64, UNITS[unit])
    }
}

/// A byte size, and its exact count where the short form rounds: `18.7 MiB (19,561,295 bytes)`;
/// `300 bytes` below 1 KiB.
pub fn bytes_exact(n: u64) -> String {
    if n < 1024 { format!("{n} bytes") } else { format!("{} ({} bytes)", bytes(n), count(n)) }
}

/// A count with thousands separators: `19,561,295`.
pub fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A count and its noun, singular for exactly one: `1 partition`, `0 partitions`, `2,048
/// frames`. `noun` is the singular; nouns whose plural is not `+s` give theirs with
/// [`counted_as`].
pub fn counted(n: u64, noun: &str) -> String {
    if n == 1 { format!("1 {noun}") } else { format!("{} {noun}s", count(n)) }
}

/// [`counted`] with the plural given: `counted_as(2, "entry", "entries")` is `2 entries`.
pub fn counted_as(n: u64, singular: &str, plural: &str) -> String {
    if n == 1 { format!("1 {singular}") } else { format!("{} {plural}", count(n)) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_with_their_nouns() {
        assert_eq!(counted(1, "partition"), "1 partition");
        assert_eq!(counted(0, "partition"), "0 partitions");
        assert_eq!(counted(2048, "frame"), "2,048 frames");
        assert_eq!(counted_as(1, "entry", "entries"), "1 entry");
        assert_eq!(counted_as(3, "entry", "entries"), "3 entries");
    }

    #[test]
    fn sizes_short_and_exact() {
        assert_eq!(bytes(0), "0 B");
        assert_eq!(bytes(1023), "1023 B");
        assert_eq!(bytes(1024), "1 KiB");
        assert_eq!(bytes(1536), "1.5 KiB");
        assert_eq!(bytes(19_561_295), "18.7 MiB");
        assert_eq!(bytes(512 << 20), "512 MiB");
        assert_eq!(bytes(1_288_490_189), "1.2 GiB");
        assert_eq!(bytes(u64::MAX), "16.0 EiB");
        assert_eq!(bytes_exact(300), "300 bytes");
        assert_eq!(bytes_exact(19_561_295), "18.7 MiB (19,561,295 bytes)");
        assert_eq!(bytes_exact(1 << 20), "1 MiB (1,048,576 bytes)");
    }

    #[test]
    fn counts_are_grouped_by_thousands() {
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(1000), "1,000");
        assert_eq!(count(1_234_567), "1,234,567");
        assert_eq!(count(u64::MAX), "18,446,744,073,709,551,615");
    }
}
