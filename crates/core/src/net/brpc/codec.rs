//! The baidu_std ("PRPC") packet: a 12-byte header (`PRPC`, body size and meta size as
//! big-endian u32), then `RpcMeta`, the message, and the attachment last.
//!
//! Written by hand because no crate speaks it. Must never: read a body before checking its size
//! against [`MAX_BODY`], trust `meta_size` or `attachment_size` without comparing them with the
//! body, or send request-meta field 7 (C++ and Java brpc disagree on its type).

use crate::codec::value::write_key;
use crate::schema::SchemaSet;
use crate::wire::WireType;
use crate::wire::varint::write_varint;
use bytes::{Buf, Bytes, BytesMut};
use prost_reflect::DynamicMessage;

pub const MAGIC: &[u8; 4] = b"PRPC";
pub const HEADER_LEN: usize = 12;
/// brpc's default `max_body_size`: larger bodies are refused before they are read.
pub const MAX_BODY: u32 = 64 * 1024 * 1024;

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RequestMeta {
    pub service_name: String,
    pub method_name: String,
    pub log_id: Option<i64>,
    pub timeout_ms: Option<i32>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ResponseMeta {
    pub error_code: i32,
    pub error_text: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RpcMeta {
    pub request: Option<RequestMeta>,
    pub response: Option<ResponseMeta>,
    pub compress_type: i32,
    pub correlation_id: i64,
    pub attachment_size: i32,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Packet {
    pub meta: RpcMeta,
    pub message: Bytes,
    pub attachment: Bytes,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    #[error("not baidu_std: the packet starts with {0:02x?}, not \"PRPC\"")]
    BadMagic([u8; 4]),
    #[error("body of {0} bytes exceeds the {MAX_BODY}-byte limit")]
    TooLarge(u32),
    #[error("meta size {meta} exceeds body size {body}")]
    MetaTooLarge { meta: u32, body: u32 },
    #[error("attachment size {attachment} exceeds the {available} bytes after the meta")]
    AttachmentTooLarge { attachment: i64, available: usize },
    #[error("RpcMeta does not decode: {0}")]
    BadMeta(String),
    #[error("compressed messages (compress_type {0}) are not supported; datasync never compresses")]
    Compressed(i32),
}

fn put_len_field(number: u32, body: &[u8], out: &mut Vec<u8>) {
    write_key(number, WireType::Len, out);
    write_varint(body.len() as u64, out);
    out.extend_from_slice(body);
}

fn put_varint_field(number: u32, v: u64, out: &mut Vec<u8>) {
    write_key(number, WireType::Varint, out);
    write_varint(v, out);
}

/// `RpcMeta` bytes, fields in number order; field 7 of the request meta is never written.
pub fn encode_meta(meta: &RpcMeta) -> Vec<u8> {
    let mut out = Vec::new();
    if let Some(r) = &meta.request {
        let mut b = Vec::new();
        put_len_field(1, r.service_name.as_bytes(), &mut b);
        put_len_field(2, r.method_name.as_bytes(), &mut b);
        if let Some(id) = r.log_id {
            put_varint_field(3, id as u64, &mut b);
        }
        if let Some(t) = r.timeout_ms {
            put_varint_field(8, i64::from(t) as u64, &mut b);
        }
        put_len_field(1, &b, &mut out);
    }
    if let Some(r) = &meta.response {
        let mut b = Vec::new();
        if r.error_code != 0 {
            put_varint_field(1, i64::from(r.error_code) as u64, &mut b);
        }
        if !r.error_text.is_empty() {
            put_len_field(2, r.error_text.as_bytes(), &mut b);
        }
        put_len_field(2, &b, &mut out);
    }
    if meta.compress_type != 0 {
        put_varint_field(3, i64::from(meta.compress_type) as u64, &mut out);
    }
    put_varint_field(4, meta.correlation_id as u64, &mut out);
    if meta.attachment_size != 0 {
        put_varint_field(5, i64::from(meta.attachment_size) as u64, &mut out);
    }
    out
}

/// Decodes `RpcMeta` strictly against the built-in `brpc.policy.RpcMeta`.
pub fn decode_meta(bytes: &[u8]) -> Result<RpcMeta, FrameError> {
    let set = SchemaSet::shared_builtin();
    let desc = set.message("brpc.policy.RpcMeta").map_err(|e| FrameError::BadMeta(e.to_string()))?;
    let m = crate::codec::decode(&desc, bytes).map_err(|e| FrameError::BadMeta(e.to_string()))?.message;
    let int = |m: &DynamicMessage, n: &str| {
        m.get_field_by_name(n).and_then(|v| v.as_i64().or(v.as_i32().map(i64::from))).unwrap_or(0)
    };
    let text = |m: &DynamicMessage, n: &str| {
        m.get_field_by_name(n).and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
    };
    let sub = |n: &str| {
        m.has_field_by_name(n).then(|| m.get_field_by_name(n)).flatten().and_then(|v| v.as_message().cloned())
    };
    Ok(RpcMeta {
        request: sub("request").map(|r| RequestMeta {
            service_name: text(&r, "service_name"),
            method_name: text(&r, "method_name"),
            log_id: r.has_field_by_name("log_id").then(|| int(&r, "log_id")),
            timeout_ms: r.has_field_by_name("timeout_ms").then(|| int(&r, "timeout_ms") as i32),
        }),
        response: sub("response").map(|r| ResponseMeta {
            error_code: int(&r, "error_code") as i32,
            error_text: text(&r, "error_text"),
        }),
        compress_type: int(&m, "compress_type") as i32,
        correlation_id: int(&m, "correlation_id"),
        attachment_size: int(&m, "attachment_size") as i32,
    })
}

/// One packet, ready for the socket. `attachment_size` is set from the attachment.
pub fn encode_packet(meta: &RpcMeta, message: &[u8], attachment: &[u8]) -> Vec<u8> {
    let mut meta = meta.clone();
    meta.attachment_size = attachment.len() as i32;
    let meta_bytes = encode_meta(&meta);
    let body = meta_bytes.len() + message.len() + attachment.len();
    let mut out = Vec::with_capacity(HEADER_LEN + body);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(body as u32).to_be_bytes());
    out.extend_from_slice(&(meta_bytes.len() as u32).to_be_bytes());
    out.extend_from_slice(&meta_bytes);
    out.extend_from_slice(message);
    out.extend_from_slice(attachment);
    out
}

/// Takes one complete packet off the front of `buf`, if there is one. Errors are final for the
/// connection: after a bad header nothing that follows can be trusted.
pub fn take_packet(buf: &mut BytesMut) -> Result<Option<Packet>, FrameError> {
    if buf.len() < 4 {
        if !MAGIC.starts_with(&buf[..]) {
            let mut m = [0u8; 4];
            m[..buf.len()].copy_from_slice(buf);
            return Err(FrameError::BadMagic(m));
        }
        return Ok(None);
    }
    if &buf[..4] != MAGIC {
        return Err(FrameError::BadMagic([buf[0], buf[1], buf[2], buf[3]]));
    }
    if buf.len() < HEADER_LEN {
        return Ok(None);
    }
    let body = u32::from_be_bytes([buf[4], buf[5], buf[6], buf[7]]);
    let meta = u32::from_be_bytes([buf[8], buf[9], buf[10], buf[11]]);
    if body > MAX_BODY {
        return Err(FrameError::TooLarge(body));
    }
    if meta > body {
        return Err(FrameError::MetaTooLarge { meta, body });
    }
    if buf.len() < HEADER_LEN + body as usize {
        buf.reserve(HEADER_LEN + body as usize - buf.len());
        return Ok(None);
    }
    buf.advance(HEADER_LEN);
    let mut body = buf.split_to(body as usize).freeze();
    let meta_bytes = body.split_to(meta as usize);
    let meta = decode_meta(&meta_bytes)?;
    if meta.compress_type != 0 {
        return Err(FrameError::Compressed(meta.compress_type));
    }
    let attachment = i64::from(meta.attachment_size);
    if attachment < 0 || attachment as usize > body.len() {
        return Err(FrameError::AttachmentTooLarge { attachment, available: body.len() });
    }
    let attachment = body.split_off(body.len() - attachment as usize);
    Ok(Some(Packet { meta, message: body, attachment }))
}

/// brpc's error numbers, in words, with what to do about them.
pub fn describe_error(code: i32) -> (&'static str, &'static str) {
    match code {
        1001 => (
            "ENOSERVICE: unknown service",
            "check the service name (SyncTool needs the full name openmldb.datasync.SyncTool)",
        ),
        1002 => ("ENOMETHOD: unknown method", "check the method name"),
        1003 => ("EREQUEST: bad request", "the server could not parse the request"),
        1008 => ("ERPCTIMEDOUT: the call timed out", "retry later, or raise the timeout"),
        1011 => ("EOVERCROWDED: the server is overcrowded", "wait and retry"),
        2001 => ("EINTERNAL: server-side failure", "brpc-java also answers this for a method it cannot find"),
        _ => ("brpc error", ""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(id: i64) -> RpcMeta {
        RpcMeta {
            request: Some(RequestMeta {
                service_name: "openmldb.datasync.SyncTool".into(),
                method_name: "SendData".into(),
                log_id: Some(id),
                timeout_ms: Some(5000),
            }),
            correlation_id: id,
            ..RpcMeta::default()
        }
    }

    #[test]
    fn packets_round_trip_in_pieces() {
        let mut wire = Vec::new();
        for id in 1..=3 {
            wire.extend(encode_packet(&request(id), b"\x08\x01", &vec![id as u8; id as usize * 10]));
        }
        // Fed one byte at a time, the decoder yields exactly the three packets.
        let mut buf = BytesMut::new();
        let mut got = Vec::new();
        for b in &wire {
            buf.extend_from_slice(&[*b]);
            while let Some(p) = take_packet(&mut buf).unwrap() {
                got.push(p);
            }
        }
        assert_eq!(got.len(), 3);
        for (i, p) in got.iter().enumerate() {
            let id = i as i64 + 1;
            assert_eq!(p.meta.correlation_id, id);
            assert_eq!(p.meta.attachment_size as usize, p.attachment.len());
            assert_eq!(p.attachment, vec![id as u8; id as usize * 10]);
            assert_eq!(&p.message[..], b"\x08\x01");
            assert_eq!(p.meta.request.as_ref().unwrap().method_name, "SendData");
        }
    }

    #[test]
    fn request_meta_field_7_is_never_written() {
        let meta = encode_meta(&request(9));
        let d = crate::wire::decode(&meta);
        let req = d.root.fields.iter().find(|f| f.number == 1).unwrap();
        let inner = crate::wire::decode(&meta[req.value.clone()]);
        let numbers: Vec<u32> = inner.root.fields.iter().map(|f| f.number).collect();
        assert_eq!(numbers, [1, 2, 3, 8]);
    }

    #[test]
    fn hostile_bytes_never_panic() {
        let mut seed = 0x1234_5678u64;
        for _ in 0..20_000 {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let len = (seed >> 58) as usize;
            let mut bytes: Vec<u8> = (0..len).map(|i| (seed >> (i % 56)) as u8).collect();
            if seed & 1 == 0 {
                let mut p = encode_packet(&request(1), b"\x08\x01", b"att");
                let at = (seed >> 8) as usize % p.len();
                p[at] ^= (seed >> 16) as u8 | 1;
                bytes = p;
            }
            let mut buf = BytesMut::from(&bytes[..]);
            while let Ok(Some(_)) = take_packet(&mut buf) {}
        }
        let mut attach_over = encode_packet(&request(1), b"", b"");
        // Claim a 100-byte attachment inside a body that has none.
        let meta = encode_meta(&RpcMeta { attachment_size: 100, ..request(1) });
        attach_over.truncate(4);
        attach_over.extend_from_slice(&(meta.len() as u32).to_be_bytes());
        attach_over.extend_from_slice(&(meta.len() as u32).to_be_bytes());
        attach_over.extend_from_slice(&meta);
        let e = take_packet(&mut BytesMut::from(&attach_over[..])).unwrap_err();
        assert!(matches!(e, FrameError::AttachmentTooLarge { attachment: 100, .. }), "{e}");
    }
}
