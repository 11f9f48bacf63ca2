//! Runs of empty frames: a file of zeros, or a zero-filled or preallocated tail, reads under
//! most framings as millions of frames with nothing in them (a zero byte is an empty varint
//! frame, five are an empty gRPC frame). Listed one by one they cost the index 8 bytes each
//! and say nothing; such a run is recorded as one damaged range instead, in words ("no frames:
//! N bytes of zeros"), and zero bytes are stepped over by the word, not frame by frame.
//!
//! Owns: what counts as a run, finding its end, and stepping over zeros where no frame with a
//! body can start. Must never: take fewer than [`EMPTY_RUN`] empty frames for a run (an empty
//! message is legal, and a few in a row may be real), or depend on anything but the bytes from
//! the run's start (the walk and the regions walked ahead must find the same runs).

use super::framing::Framing;
use super::index::{Problem, Scan};

/// Empty frames in a row that make a run: more than any real stream sends, and few enough
/// that a preallocated tail of a dump shows as what it is.
pub(super) const EMPTY_RUN: u64 = 16;

/// How often (in positions tried) a search for a frame start checks whether to stop.
const STOP_CHECK: usize = 1 << 16;

/// The length of an empty frame's header when that header is all zeros (a zero varint, a gRPC
/// header with flag and length 0, a zero u32 length); `None` where it never is.
pub(super) fn zero_header(framing: Framing) -> Option<usize> {
    match framing {
        Framing::VarintDelimited => Some(1),
        Framing::Grpc => Some(5),
        Framing::U32Be | Framing::U32Le => Some(4),
        Framing::Brpc | Framing::Single => None,
    }
}

/// How many bytes at the start of `buf` are zero, eight at a time.
pub(crate) fn zero_prefix(buf: &[u8]) -> usize {
    let mut n = 0;
    for word in buf.chunks_exact(8) {
        // A word that is not 8 bytes cannot happen; if it did, it would count as not zero.
        if u64::from_ne_bytes(word.try_into().unwrap_or([1; 8])) != 0 {
            break;
        }
        n += 8;
    }
    n + buf[n..].iter().position(|&b| b != 0).unwrap_or(buf.len() - n)
}

/// A run of at least [`EMPTY_RUN`] empty frames starting at `pos`: where it ends (the first
/// byte that is not an empty frame) and how many frames it holds.
pub(super) fn empty_run(scan: &Scan, pos: usize) -> Option<(usize, u64)> {
    if scan.framing == Framing::Single {
        return None;
    }
    let len = scan.buf.len();
    let zero = zero_header(scan.framing);
    let (mut p, mut frames) = (pos, 0u64);
    while p < len {
        if let Some(h) = zero
            && scan.buf[p] == 0
        {
            // Every whole zero header here is an empty frame the quick check accepts.
            let whole = zero_prefix(&scan.buf[p..]) / h;
            if whole > 0 {
                frames += whole as u64;
                p += whole * h;
                continue;
            }
        }
        match scan.quick(p) {
            Ok(header) if header.body_len == 0 => {
                frames += 1;
                p += header.total() as usize;
            }
            _ => break,
        }
    }
    (frames >= EMPTY_RUN).then_some((p, frames))
}

/// The damaged range a run of empty frames is recorded as.
pub(super) fn run_problem(scan: &Scan, start: usize, end: usize, frames: u64) -> Problem {
    let len = end - start;
    let reason = if zero_prefix(&scan.buf[start..end]) == len {
        format!(
            "no frames: {len} bytes of zeros (bytes {start}..{end}): zero-filled or preallocated space, not data"
        )
    } else {
        format!(
            "no frames: bytes {start}..{end} are {frames} empty {} frames in a row, not listed (an empty frame carries nothing; a run of them is zero-filled or preallocated space)",
            scan.framing
        )
    };
    Problem { offset: start as u64, len: len as u64, truncated: false, reason }
}

/// The first offset in `from..to` where `starts` holds, stepping over stretches where a whole
/// zero header fits (an empty frame: `starts` must be false there, as a chain needs a first
/// frame with a body). `None` when there is none, or when `stop` says so.
pub(super) fn find_start(
    scan: &Scan,
    from: usize,
    to: usize,
    mut starts: impl FnMut(usize) -> bool,
    stop: impl Fn() -> bool,
) -> Option<usize> {
    let len = scan.buf.len();
    let to = to.min(len);
    let zero = zero_header(scan.framing);
    let mut p = from;
    let mut tried = 0usize;
    while p < to {
        if let Some(h) = zero
            && scan.buf[p] == 0
        {
            let z = zero_prefix(&scan.buf[p..(to + h).min(len)]);
            if z >= h {
                p += z - (h - 1);
                continue;
            }
        }
        if starts(p) {
            return Some(p);
        }
        p += 1;
        tried += 1;
        if tried.is_multiple_of(STOP_CHECK) && stop() {
            return None;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_prefix_counts_to_the_first_other_byte() {
        for len in [0usize, 1, 7, 8, 9, 63, 64, 1000] {
            for at in 0..=len {
                let mut b = vec![0u8; len];
                if at < len {
                    b[at] = 3;
                }
                assert_eq!(zero_prefix(&b), at, "len {len}, non-zero at {at}");
            }
        }
    }
}
