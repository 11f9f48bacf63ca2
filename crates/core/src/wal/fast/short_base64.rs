//! Standard padded base64 for the short values of the WAL's header properties (`_h`, `_tx`,
//! `_bh`…, a few dozen characters each): decoded in one pass over a table, where the `base64`
//! crate's general engine spends more on setting up than on decoding such a value.
//!
//! Owns: giving exactly the bytes the crate's `STANDARD` engine gives, or `None` to let the
//! crate decide. It decides only canonical input (whole groups of four, `=` only as padding,
//! zero trailing bits) that fits `out`. Must never: accept text the crate refuses, or give other
//! bytes than it would.

/// 0xff: not in the standard alphabet.
const INVALID: u8 = 0xff;

const DECODE: [u8; 256] = {
    let mut t = [INVALID; 256];
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut i = 0;
    while i < 64 {
        t[alphabet[i] as usize] = i as u8;
        i += 1;
    }
    t
};

/// The decoded length, the bytes written to `out`; `None` when the crate must decide.
#[inline]
pub(super) fn decode(text: &[u8], out: &mut [u8]) -> Option<usize> {
    if !text.len().is_multiple_of(4) {
        return None;
    }
    let pad = match text {
        [.., b'=', b'='] => 2,
        [.., b'='] => 1,
        _ => 0,
    };
    let len = text.len() / 4 * 3 - pad;
    if len > out.len() {
        return None;
    }
    let mut written = 0;
    for group in text.chunks_exact(4) {
        let last = written + 3 > len;
        let d = |i: usize| DECODE[group[i] as usize];
        let (a, b) = (d(0), d(1));
        let (c, e) = if last && pad == 2 {
            (0, 0)
        } else if last && pad == 1 {
            (d(2), 0)
        } else {
            (d(2), d(3))
        };
        // INVALID is above every symbol's value; `=` inside the text is INVALID too.
        if a.max(b).max(c).max(e) == INVALID {
            return None;
        }
        let n = (u32::from(a) << 18) | (u32::from(b) << 12) | (u32::from(c) << 6) | u32::from(e);
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        let take = if last { len - written } else { 3 };
        // Trailing bits: what the padding leaves of the last symbol must be zero.
        if take < 3 && bytes[take..].iter().any(|&x| x != 0) {
            return None;
        }
        // Byte by byte: `copy_from_slice` of a length not known here is a call to `memcpy`.
        for (to, from) in out[written..written + take].iter_mut().zip(bytes) {
            *to = from;
        }
        written += take;
    }
    Some(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine;
    use base64::engine::general_purpose::STANDARD;

    /// Wherever this decoder decides, the crate gives the same bytes; and it decides every
    /// canonical encoding that fits.
    #[test]
    fn agrees_with_the_crate() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut decided = 0;
        let mut cases: Vec<Vec<u8>> = [
            "", "=", "==", "====", "A===", "AA==", "AB==", "AAA=", "AAB=", "AAAA", "A=AA", "AA=A", "AAAA====",
        ]
        .iter()
        .map(|s| s.as_bytes().to_vec())
        .collect();
        for _ in 0..20_000 {
            let raw: Vec<u8> = (0..next() % 40).map(|_| next() as u8).collect();
            let mut text = STANDARD.encode(&raw).into_bytes();
            cases.push(text.clone());
            // And damaged: a byte changed to a character near the alphabet's edges.
            if !text.is_empty() {
                let at = (next() % text.len() as u64) as usize;
                text[at] = b"=+/-_ .AZaz09\x80"[(next() % 14) as usize];
                cases.push(text);
            }
        }
        for text in &cases {
            let mut out = [0u8; 32];
            let mut theirs = [0u8; 32];
            let crate_says = STANDARD.decode_slice(text, &mut theirs);
            match decode(text, &mut out) {
                Some(n) => {
                    decided += 1;
                    assert_eq!(crate_says, Ok(n), "{:?}", String::from_utf8_lossy(text));
                    assert_eq!(out[..n], theirs[..n], "{:?}", String::from_utf8_lossy(text));
                }
                None => {
                    let canonical =
                        crate_says.is_ok_and(|n| STANDARD.encode(&theirs[..n]).as_bytes() == text);
                    assert!(
                        !canonical,
                        "a canonical encoding left undecided: {:?}",
                        String::from_utf8_lossy(text)
                    );
                }
            }
        }
        assert!(decided > 20_000, "decided {decided} of {}", cases.len());
    }
}
