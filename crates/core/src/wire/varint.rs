//! Varint and key primitives shared by every parser of outside bytes. Never panics: every read
//! is bounds-checked and reports where it stopped.

/// Why a varint could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VarintFault {
    /// The buffer ended before a byte without the continuation bit.
    Truncated,
    /// More than 10 bytes, or a 10th byte that overflows 64 bits.
    Overflow,
}

/// Reads a base-128 varint starting at `pos`, not reading at or past `end`.
/// Returns the value and the offset just past it.
#[inline(always)]
pub fn read_varint(buf: &[u8], pos: usize, end: usize) -> Result<(u64, usize), VarintFault> {
    let end = end.min(buf.len());
    // Most keys and lengths are one byte: that case is inlined into every parser's loop.
    if pos < end && buf[pos] < 0x80 {
        return Ok((u64::from(buf[pos]), pos + 1));
    }
    read_long_varint(buf, pos, end)
}

/// [`read_varint`] past its one-byte case; `end` is already within `buf`.
#[inline(never)]
fn read_long_varint(buf: &[u8], pos: usize, end: usize) -> Result<(u64, usize), VarintFault> {
    let mut value: u64 = 0;
    let mut i = pos;
    for shift in 0..10u32 {
        if i >= end {
            return Err(VarintFault::Truncated);
        }
        let byte = buf[i];
        i += 1;
        if shift == 9 && byte > 1 {
            return Err(VarintFault::Overflow);
        }
        value |= u64::from(byte & 0x7f) << (7 * shift);
        if byte & 0x80 == 0 {
            return Ok((value, i));
        }
    }
    Err(VarintFault::Overflow)
}

/// Appends `value` as a canonical (shortest) varint.
pub fn write_varint(mut value: u64, out: &mut Vec<u8>) {
    while value >= 0x80 {
        out.push((value as u8 & 0x7f) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Number of bytes `write_varint` produces for `value`.
pub fn varint_len(value: u64) -> usize {
    let bits = 64 - (value | 1).leading_zeros() as usize;
    bits.div_ceil(7)
}

pub fn zigzag_decode(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

pub fn zigzag_encode(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varint_round_trip_and_limits() {
        for v in [0u64, 1, 127, 128, 300, u32::MAX as u64, u64::MAX] {
            let mut out = Vec::new();
            write_varint(v, &mut out);
            assert_eq!(out.len(), varint_len(v));
            assert_eq!(read_varint(&out, 0, out.len()), Ok((v, out.len())));
        }
        assert_eq!(read_varint(&[0x80], 0, 1), Err(VarintFault::Truncated));
        assert_eq!(read_varint(&[0xff; 11], 0, 11), Err(VarintFault::Overflow));
        // A non-canonical (padded) encoding is still a valid varint.
        assert_eq!(read_varint(&[0x81, 0x80, 0x00], 0, 3), Ok((1, 3)));
        assert_eq!(zigzag_decode(zigzag_encode(-5)), -5);
    }
}
