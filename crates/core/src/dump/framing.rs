//! How frames sit in a dump file, and reading one frame header. Pure functions over byte
//! slices: never reads past the slice, never trusts a length it has not compared with what is
//! left.

use crate::wire::varint::{VarintFault, read_varint};
use std::fmt;

/// The framing enum lives in `wire` (a fact about bytes, used by `datasync` too); re-exported
/// here where the frame readers and writers are.
pub use crate::wire::framing::Framing;

/// The largest frame we accept: Milvus sends messages up to 512 MiB.
pub const MAX_FRAME: u64 = 512 * 1024 * 1024;

/// One frame header as found at an offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameHeader {
    /// Bytes before the body.
    pub header_len: u32,
    /// Bytes of the body (for brpc: meta + message + attachment).
    pub body_len: u64,
    /// brpc only: the meta's size at the start of the body.
    pub meta_len: u32,
}

impl FrameHeader {
    pub fn total(&self) -> u64 {
        u64::from(self.header_len) + self.body_len
    }
}

/// Why no frame starts at an offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeaderFault {
    /// The file ends inside the header or the body: a truncated tail.
    Truncated { needed: u64, available: u64 },
    /// The header cannot be a frame: bad magic, bad flag, absurd length.
    Invalid(String),
}

impl fmt::Display for HeaderFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeaderFault::Truncated { needed, available } => {
                write!(f, "truncated frame: needs {needed} bytes, only {available} remain")
            }
            HeaderFault::Invalid(why) => f.write_str(why),
        }
    }
}

/// Reads the header of the frame starting at `pos` and checks that the whole frame fits.
pub fn read_header(buf: &[u8], pos: usize, framing: Framing) -> Result<FrameHeader, HeaderFault> {
    let avail = (buf.len() - pos.min(buf.len())) as u64;
    let fixed = |n: usize| -> Result<&[u8], HeaderFault> {
        if avail < n as u64 {
            Err(HeaderFault::Truncated { needed: n as u64, available: avail })
        } else {
            Ok(&buf[pos..pos + n])
        }
    };
    let header = match framing {
        Framing::Single => FrameHeader { header_len: 0, body_len: avail, meta_len: 0 },
        Framing::VarintDelimited => match read_varint(buf, pos, buf.len()) {
            Ok((len, next)) => FrameHeader { header_len: (next - pos) as u32, body_len: len, meta_len: 0 },
            Err(VarintFault::Truncated) => {
                return Err(HeaderFault::Truncated { needed: avail + 1, available: avail });
            }
            Err(VarintFault::Overflow) => return Err(HeaderFault::Invalid("length varint overflows".into())),
        },
        Framing::Grpc => {
            let h = fixed(5)?;
            if h[0] > 1 {
                return Err(HeaderFault::Invalid(format!(
                    "gRPC compressed flag is {} (must be 0 or 1)",
                    h[0]
                )));
            }
            let len = u32::from_be_bytes([h[1], h[2], h[3], h[4]]);
            FrameHeader { header_len: 5, body_len: u64::from(len), meta_len: 0 }
        }
        Framing::Brpc => {
            let h = fixed(12)?;
            if &h[..4] != b"PRPC" {
                return Err(HeaderFault::Invalid(format!("brpc magic is {:02x?}, not \"PRPC\"", &h[..4])));
            }
            let body = u32::from_be_bytes([h[4], h[5], h[6], h[7]]);
            let meta = u32::from_be_bytes([h[8], h[9], h[10], h[11]]);
            if meta > body {
                return Err(HeaderFault::Invalid(format!("brpc meta size {meta} exceeds body size {body}")));
            }
            FrameHeader { header_len: 12, body_len: u64::from(body), meta_len: meta }
        }
        Framing::U32Be | Framing::U32Le => {
            let h = fixed(4)?;
            let a = [h[0], h[1], h[2], h[3]];
            let len = if framing == Framing::U32Be { u32::from_be_bytes(a) } else { u32::from_le_bytes(a) };
            FrameHeader { header_len: 4, body_len: u64::from(len), meta_len: 0 }
        }
    };
    if header.body_len > MAX_FRAME {
        return Err(HeaderFault::Invalid(format!(
            "frame length {} exceeds the {} limit (corrupt length prefix)",
            header.body_len,
            crate::fmt::bytes(MAX_FRAME)
        )));
    }
    if header.total() > avail {
        return Err(HeaderFault::Truncated { needed: header.total(), available: avail });
    }
    Ok(header)
}

/// Appends one frame around `body` (brpc frames are written with an empty meta).
pub fn write_frame(framing: Framing, body: &[u8], out: &mut Vec<u8>) {
    write_frame_header(framing, body.len(), out);
    out.extend_from_slice(body);
}

/// Appends the header of a frame whose body is `body_len` bytes (the body is written apart).
pub fn write_frame_header(framing: Framing, body_len: usize, out: &mut Vec<u8>) {
    let len = body_len as u32;
    match framing {
        Framing::VarintDelimited => crate::wire::varint::write_varint(body_len as u64, out),
        Framing::Single => {}
        Framing::Grpc => {
            out.push(0);
            out.extend_from_slice(&len.to_be_bytes());
        }
        Framing::Brpc => {
            out.extend_from_slice(b"PRPC");
            out.extend_from_slice(&len.to_be_bytes());
            out.extend_from_slice(&0u32.to_be_bytes());
        }
        Framing::U32Be => out.extend_from_slice(&len.to_be_bytes()),
        Framing::U32Le => out.extend_from_slice(&len.to_le_bytes()),
    }
}

/// Where frame `n` of a small in-memory file sits: its start, header and the range of its
/// message (for brpc, between meta and attachment). Walks the headers from the start.
pub fn locate(
    buf: &[u8],
    framing: Framing,
    n: usize,
) -> Result<(usize, FrameHeader, std::ops::Range<usize>), String> {
    let mut pos = 0;
    for i in 0..=n {
        let h = read_header(buf, pos, framing).map_err(|e| format!("frame {i} at byte {pos}: {e}"))?;
        if i == n {
            let body_start = pos + h.header_len as usize;
            let body = &buf[body_start..pos + h.total() as usize];
            let r = super::validate::message_range(body, framing, &h);
            return Ok((pos, h, body_start + r.start..body_start + r.end));
        }
        pos += h.total() as usize;
        if pos >= buf.len() {
            return Err(format!("there is no frame {n}: the file holds {} frame(s)", i + 1));
        }
    }
    Err(format!("there is no frame {n}"))
}

/// The file with frame `n`'s message replaced by `message`; only that frame's header changes
/// (its length), every other byte stays as it was.
pub fn replace_message(buf: &[u8], framing: Framing, n: usize, message: &[u8]) -> Result<Vec<u8>, String> {
    let (start, h, msg) = locate(buf, framing, n)?;
    let end = start + h.total() as usize;
    let body_start = start + h.header_len as usize;
    let mut body = Vec::with_capacity(h.body_len as usize + message.len());
    body.extend_from_slice(&buf[body_start..msg.start]);
    body.extend_from_slice(message);
    body.extend_from_slice(&buf[msg.end..end]);
    let mut out = Vec::with_capacity(buf.len() + message.len());
    out.extend_from_slice(&buf[..start]);
    match framing {
        Framing::Brpc => {
            out.extend_from_slice(b"PRPC");
            out.extend_from_slice(&(body.len() as u32).to_be_bytes());
            out.extend_from_slice(&h.meta_len.to_be_bytes());
            out.extend_from_slice(&body);
        }
        Framing::Grpc => {
            out.push(buf[start]); // keep the compressed flag
            out.extend_from_slice(&(body.len() as u32).to_be_bytes());
            out.extend_from_slice(&body);
        }
        f => write_frame(f, &body, &mut out),
    }
    out.extend_from_slice(&buf[end..]);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_framing_writes_what_it_reads() {
        for f in Framing::ALL {
            let mut buf = Vec::new();
            write_frame(f, b"\x08\x01", &mut buf);
            let h = read_header(&buf, 0, f).unwrap();
            assert_eq!(h.total() as usize, buf.len(), "{f}");
            assert_eq!(h.body_len, 2);
            assert_eq!(Framing::parse(f.name()), Some(f));
        }
    }

    #[test]
    fn faults() {
        assert!(matches!(
            read_header(&[0x05, 1], 0, Framing::VarintDelimited),
            Err(HeaderFault::Truncated { .. })
        ));
        let huge = [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40];
        assert!(matches!(read_header(&huge, 0, Framing::VarintDelimited), Err(HeaderFault::Invalid(_))));
        assert!(matches!(
            read_header(b"XRPC\0\0\0\0\0\0\0\0", 0, Framing::Brpc),
            Err(HeaderFault::Invalid(_))
        ));
        assert!(matches!(
            read_header(b"PRPC\0\0\0\x01\0\0\0\x02\0", 0, Framing::Brpc),
            Err(HeaderFault::Invalid(_))
        ));
        assert!(matches!(read_header(&[2, 0, 0, 0, 0], 0, Framing::Grpc), Err(HeaderFault::Invalid(_))));
    }
}
