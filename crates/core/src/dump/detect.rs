//! Framing autodetection: try every framing on the head of the file and keep the one under
//! which the most bytes form valid frames, with a confidence the operator can read and a reason
//! they can check. Always overridable. Never chooses a framing under which every frame is empty
//! (zeros are empty frames in most framings): such bytes are "no frames", in words.

use super::framing::{Framing, read_header};
use super::validate::{check_message, message_range};
use prost_reflect::MessageDescriptor;

/// Bytes examined from the start of the file.
const SAMPLE: usize = 1 << 20;
/// Frames examined at most.
const MAX_FRAMES: usize = 256;
/// Larger files are not tried as one message during detection (choose `single` by hand).
const SINGLE_LIMIT: usize = 64 << 20;

#[derive(Debug, Clone, PartialEq)]
pub struct Detection {
    pub framing: Framing,
    /// Valid frames found in the sample before any damage.
    pub frames: usize,
    /// 0.0 (a guess) to 1.0 (every examined byte fits).
    pub confidence: f32,
    pub reason: String,
}

struct Trial {
    framing: Framing,
    frames: usize,
    /// Frames with a non-empty body: empty frames are too easy to find in any bytes.
    substantial: usize,
    /// Empty frames between frames with a body (not those after the last one: a zero tail).
    /// gRPC frames read as varint frames are each four empty frames and one with a body.
    interleaved: usize,
    covered: usize,
    sample: usize,
    /// Every frame tried is valid: the frames reach the end of the sample, or are
    /// [`MAX_FRAMES`] (enough to judge: a long dump is not "damaged" after its 256th frame).
    fits: bool,
}

fn trial(buf: &[u8], framing: Framing, desc: Option<&MessageDescriptor>) -> Trial {
    let sample = buf.len().min(SAMPLE);
    if framing == Framing::Single && buf.len() > SINGLE_LIMIT {
        return Trial { framing, frames: 0, substantial: 0, interleaved: 0, covered: 0, sample, fits: false };
    }
    let mut pos = 0;
    let mut frames = 0;
    let mut substantial = 0;
    let (mut interleaved, mut empties) = (0, 0);
    while pos < sample && frames < MAX_FRAMES {
        let Ok(h) = read_header(buf, pos, framing) else { break };
        let body = &buf[pos + h.header_len as usize..pos + h.total() as usize];
        if check_message(&body[message_range(body, framing, &h)], desc).is_err() {
            break;
        }
        frames += 1;
        if h.body_len > 0 {
            substantial += 1;
            interleaved += empties;
            empties = 0;
        } else {
            empties += 1;
        }
        pos += h.total() as usize;
        if framing == Framing::Single {
            break;
        }
    }
    let covered = pos.min(sample);
    let fits = covered == sample || frames == MAX_FRAMES;
    Trial { framing, frames, substantial, interleaved, covered, sample, fits }
}

/// Picks a framing for `buf`. `desc`, when given, makes the check strict (bodies must decode
/// as that type), which sharpens the guess a lot.
pub fn detect(buf: &[u8], desc: Option<&MessageDescriptor>) -> Detection {
    if buf.is_empty() {
        return Detection {
            framing: Framing::VarintDelimited,
            frames: 0,
            confidence: 0.0,
            reason: "empty file".into(),
        };
    }
    let trials: Vec<Trial> = Framing::ALL.into_iter().map(|f| trial(buf, f, desc)).collect();
    // Framed readings that reach the end of the sample win; among them the most frames; a
    // single message only when no framing explains the bytes (a varint-delimited stream is
    // rarely also one valid message, but a lone message often parses as one short frame).
    // A framing that finds only empty frames explains nothing (a file of zeros is millions of
    // empty frames in most of them): it is never chosen.
    let full: Vec<&Trial> =
        trials.iter().filter(|t| t.fits && t.framing != Framing::Single && t.substantial > 0).collect();
    let single = trials.iter().find(|t| t.framing == Framing::Single && t.frames == 1);
    let what = desc.map_or_else(|| "protobuf".to_string(), |d| d.full_name().to_string());
    if let Some(best) = full.iter().max_by_key(|t| {
        use std::cmp::Reverse;
        (t.substantial, Reverse(t.interleaved), Reverse(t.frames), Reverse(t.framing as u8))
    }) {
        let contenders = full
            .iter()
            .filter(|t| {
                (t.substantial, t.interleaved, t.frames) == (best.substantial, best.interleaved, best.frames)
            })
            .count();
        let single_bonus = single.is_some() && best.frames == 1;
        let mut confidence = match best.frames {
            1 => 0.5,
            2 => 0.7,
            3..=9 => 0.85,
            _ => 0.97,
        };
        if contenders > 1 || single_bonus {
            confidence *= 0.6;
        }
        let sampled = if best.covered < buf.len() {
            format!("the first {} bytes", best.covered)
        } else {
            "the whole file".into()
        };
        return Detection {
            framing: best.framing,
            frames: best.frames,
            confidence,
            reason: format!(
                "{} framing: {} frame(s) covering {sampled} decode as {what}{}",
                best.framing,
                best.frames,
                if contenders > 1 { " (other framings fit too)" } else { "" }
            ),
        };
    }
    if single.is_some() {
        return Detection {
            framing: Framing::Single,
            frames: 1,
            confidence: if buf.len() <= SAMPLE { 0.8 } else { 0.5 },
            reason: format!("no framing fits; the bytes decode as one {what} message"),
        };
    }
    let best =
        trials.iter().filter(|t| t.framing != Framing::Single && t.substantial > 0).max_by_key(|t| t.covered);
    let sample = &buf[..buf.len().min(SAMPLE)];
    match best {
        Some(t) => Detection {
            framing: t.framing,
            frames: t.frames,
            confidence: 0.3 * t.covered as f32 / t.sample.max(1) as f32,
            reason: format!(
                "{} framing: {} valid frame(s), then damage at byte {}; choose a framing if this is wrong",
                t.framing, t.frames, t.covered
            ),
        },
        None => Detection {
            framing: Framing::VarintDelimited,
            frames: 0,
            confidence: 0.0,
            reason: if super::index_empty::zero_prefix(sample) == sample.len() {
                let whole = if sample.len() == buf.len() { "the whole file" } else { "the first bytes" };
                format!("no frames: {whole} ({} bytes) are zeros", sample.len())
            } else if trials.iter().any(|t| t.frames > 0) {
                format!(
                    "no frames: the first bytes read only as empty frames, never as {what}; assuming varint-delimited"
                )
            } else {
                format!("no framing fits the first bytes as {what}; assuming varint-delimited")
            },
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dump::framing::write_frame;

    /// Zeros are empty frames in most framings: never chosen as frames, and said to be zeros.
    #[test]
    fn zeros_are_no_frames_and_said_so() {
        for len in [1usize, 5, 300, SAMPLE, SAMPLE * 3] {
            let d = detect(&vec![0u8; len], None);
            assert_eq!((d.frames, d.confidence), (0, 0.0), "{len} zeros: {d:?}");
            assert!(
                d.reason.starts_with("no frames:") && d.reason.contains("are zeros"),
                "{len}: {}",
                d.reason
            );
        }
        // Real frames before zeros: the framing of the frames is chosen.
        let mut buf = Vec::new();
        for _ in 0..20 {
            write_frame(Framing::Grpc, b"\x08\x01\x12\x02ok", &mut buf);
        }
        buf.extend(std::iter::repeat_n(0u8, 4096));
        let d = detect(&buf, None);
        assert_eq!(d.framing, Framing::Grpc, "{d:?}");
    }

    /// A long dump whose first 256 frames all decode is not "damaged" after them.
    #[test]
    fn a_long_dump_is_not_called_damaged_after_its_256th_frame() {
        let mut buf = Vec::new();
        while buf.len() < 2 * SAMPLE {
            write_frame(
                Framing::VarintDelimited,
                &[0x0a, 0x7f].into_iter().chain([b'x'; 127]).collect::<Vec<_>>(),
                &mut buf,
            );
        }
        let d = detect(&buf, None);
        assert_eq!(d.framing, Framing::VarintDelimited);
        assert!(d.confidence > 0.9 && !d.reason.contains("damage"), "{d:?}");
    }
}
