//! Framing autodetection: try every framing on the head of the file and keep the one under
//! which the most bytes form valid frames, with a confidence the operator can read and a reason
//! they can check. Always overridable.

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
    covered: usize,
    sample: usize,
}

fn trial(buf: &[u8], framing: Framing, desc: Option<&MessageDescriptor>) -> Trial {
    let sample = buf.len().min(SAMPLE);
    if framing == Framing::Single && buf.len() > SINGLE_LIMIT {
        return Trial { framing, frames: 0, substantial: 0, covered: 0, sample };
    }
    let mut pos = 0;
    let mut frames = 0;
    let mut substantial = 0;
    while pos < sample && frames < MAX_FRAMES {
        let Ok(h) = read_header(buf, pos, framing) else { break };
        let body = &buf[pos + h.header_len as usize..pos + h.total() as usize];
        if check_message(&body[message_range(body, framing, &h)], desc).is_err() {
            break;
        }
        frames += 1;
        if h.body_len > 0 {
            substantial += 1;
        }
        pos += h.total() as usize;
        if framing == Framing::Single {
            break;
        }
    }
    Trial { framing, frames, substantial, covered: pos.min(sample), sample }
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
    let full: Vec<&Trial> = trials
        .iter()
        .filter(|t| t.covered == t.sample && t.framing != Framing::Single && t.frames > 0)
        .collect();
    let single = trials.iter().find(|t| t.framing == Framing::Single && t.frames == 1);
    let what = desc.map_or_else(|| "protobuf".to_string(), |d| d.full_name().to_string());
    if let Some(best) = full
        .iter()
        .max_by_key(|t| (t.substantial, std::cmp::Reverse(t.frames), std::cmp::Reverse(t.framing as u8)))
    {
        let contenders =
            full.iter().filter(|t| t.substantial == best.substantial && t.frames == best.frames).count();
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
        let sampled = if best.sample < buf.len() {
            format!("the first {} bytes", best.sample)
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
    let best = trials.iter().filter(|t| t.framing != Framing::Single).max_by_key(|t| t.covered);
    match best {
        Some(t) if t.frames > 0 => Detection {
            framing: t.framing,
            frames: t.frames,
            confidence: 0.3 * t.covered as f32 / t.sample.max(1) as f32,
            reason: format!(
                "{} framing: {} valid frame(s), then damage at byte {}; choose a framing if this is wrong",
                t.framing, t.frames, t.covered
            ),
        },
        _ => Detection {
            framing: Framing::VarintDelimited,
            frames: 0,
            confidence: 0.0,
            reason: format!("no framing fits the first bytes as {what}; assuming varint-delimited"),
        },
    }
}
