//! The fast summary reader: the [`RowFacts`] of a dumped WAL message read straight from its wire
//! bytes, for list rows, filters, statistics and whole-file scans. No `DynamicMessage` is built
//! and the payload is never copied; the payload and headers are only checked against their types
//! with rules compiled once ([`crate::wire::scan::Rules`]).
//!
//! Owns: giving exactly the facts [`super::analyze_row`] gives. It reads only messages with no
//! problem at all, and says so by returning `None` for anything else (a malformed property, a
//! header that does not decode, a payload that does not fit its type, merged duplicates): the
//! caller then runs the full analysis, which explains the problem. Must never: guess, or return
//! facts for a message the full analysis would flag.

mod properties;
mod short_base64;
mod types;

use super::analyze::IMMUTABLE_MESSAGE;
use super::base36::{parse_base36_i64, parse_base36_u64};
use super::message_id::{WalBackend, display_message_id, message_id_parts};
use super::summary::RowFacts;
use super::types::{MESSAGE_TYPE_ENUM, expected_version, header_body_types};
use crate::wire::scan::{self, Rules, TypeId, Value};
use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use properties::{Key, Properties};
use prost_reflect::{DescriptorPool, Kind, MessageDescriptor};
use types::Types;

/// A 64-bit integer field that the full analysis reads by name.
#[derive(Debug, Clone)]
struct IntField {
    number: u32,
    kind: Kind,
}

impl IntField {
    fn of(desc: &MessageDescriptor, name: &str) -> Option<IntField> {
        let fd = desc.get_field_by_name(name).filter(|f| !f.is_list())?;
        let kind = fd.kind();
        matches!(kind, Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 | Kind::Uint64 | Kind::Fixed64)
            .then(|| IntField { number: fd.number(), kind })
    }

    /// The last value of the field in `bytes` (0 when absent), as the analysis's `int_field`.
    #[inline]
    fn read(&self, bytes: &[u8]) -> i128 {
        let mut out = 0i128;
        // A loop rather than `.flatten()` (which cost a twenty-fifth of a scan): the fields
        // stop at the first unreadable one either way.
        for item in scan::fields(bytes) {
            let Ok((n, v)) = item else { break };
            if n == self.number {
                out = scan::as_i64(&self.kind, v)
                    .map(i128::from)
                    .or_else(|| scan::as_u64(&self.kind, v).map(i128::from))
                    .unwrap_or(0);
            }
        }
        out
    }
}

/// A header type and the count fields the analysis reads from it.
#[derive(Debug)]
struct HeaderInfo {
    ty: TypeId,
    collection_id: Option<IntField>,
    rows: Option<IntField>,
    /// `partitions` (repeated message) and the `rows` of its entries.
    partitions: Option<(u32, Option<IntField>)>,
}

#[derive(Debug, Default)]
struct TypeEntry {
    name: String,
    expected_version: Option<u32>,
    header: Option<HeaderInfo>,
    body_v1: Option<TypeId>,
    body_v2: Option<TypeId>,
}

/// Side headers the analysis decodes: key, type, and (for `_tx`) `txn_id`, (for `_ch`)
/// `collection_id`.
#[derive(Debug)]
struct SideHeader {
    key: Key,
    /// None when the schema lacks the type: a message carrying the header goes slow.
    ty: Option<TypeId>,
    int: Option<IntField>,
}

/// Field numbers of the envelope, checked to have the kinds the analysis expects.
#[derive(Debug)]
struct Envelope {
    /// `DumpMessagesResponse.status` and `.message` when frames are responses.
    response: Option<(u32, u32)>,
    frame: TypeId,
    /// `ImmutableMessage` and its properties' map entry type.
    imm: TypeId,
    entry: TypeId,
    id: u32,
    payload: u32,
    properties: u32,
    id_text: u32,
    id_wal: u32,
}

/// How much of [`RowFacts`] a read fills in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detail {
    /// Everything the full analysis gives.
    Full,
    /// Everything but `id`, left empty (statistics and filters do not read it).
    Counts,
}

#[derive(Debug)]
pub struct SummaryReader {
    rules: Rules,
    envelope: Envelope,
    types: Types,
    side: Vec<SideHeader>,
}

impl SummaryReader {
    /// A reader for frames of `frame_type` (`DumpMessagesResponse` or `ImmutableMessage`) with
    /// the schemas of `pool`; `None` when the types are not shaped as the analysis reads them.
    pub fn new(pool: &DescriptorPool, frame_type: &MessageDescriptor) -> Option<SummaryReader> {
        let imm = pool.get_message_by_name(IMMUTABLE_MESSAGE)?;
        let mut rules = Rules::default();
        let response = match frame_type.full_name() {
            IMMUTABLE_MESSAGE => None,
            "milvus.proto.milvus.DumpMessagesResponse" => {
                let status = frame_type.get_field_by_name("status")?;
                let message = frame_type.get_field_by_name("message")?;
                match message.kind() {
                    Kind::Message(m) if m.full_name() == IMMUTABLE_MESSAGE && !message.is_list() => {}
                    _ => return None,
                }
                Some((status.number(), message.number()))
            }
            _ => return None,
        };
        let frame = rules.add(frame_type);
        let field = |d: &MessageDescriptor, name: &str| d.get_field_by_name(name).filter(|f| !f.is_list());
        let id = field(&imm, "id")?;
        let Kind::Message(id_desc) = id.kind() else { return None };
        let payload = field(&imm, "payload").filter(|f| f.kind() == Kind::Bytes)?;
        let properties = imm.get_field_by_name("properties").filter(|f| f.is_map())?;
        let Kind::Message(entry) = properties.kind() else { return None };
        let string = |f: prost_reflect::FieldDescriptor| f.kind() == Kind::String;
        if !string(entry.map_entry_key_field()) || !string(entry.map_entry_value_field()) {
            return None;
        }
        let id_text = field(&id_desc, "id").filter(|f| f.kind() == Kind::String)?;
        let id_wal = field(&id_desc, "WAL_name").filter(|f| matches!(f.kind(), Kind::Enum(_)))?;
        let envelope = Envelope {
            response,
            frame,
            imm: rules.add(&imm),
            entry: rules.add(&entry),
            id: id.number(),
            payload: payload.number(),
            properties: properties.number(),
            id_text: id_text.number(),
            id_wal: id_wal.number(),
        };

        let mut types = Types::default();
        if let Some(e) = pool.get_enum_by_name(MESSAGE_TYPE_ENUM) {
            for v in e.values() {
                let t = v.number();
                if types.get(t).is_none() {
                    let entry = type_entry(pool, &mut rules, t);
                    types.insert(t, entry);
                }
            }
        }
        let mut side = Vec::new();
        for (key, name, int) in [
            (Key::Tx, "TxnContext", Some("txn_id")),
            (Key::Bh, "BroadcastHeader", None),
            (Key::Rh, "ReplicateHeader", None),
            (Key::Tc, "TraceContextHeader", None),
            (Key::Ch, "CipherHeader", Some("collection_id")),
        ] {
            let desc = pool.get_message_by_name(&format!("milvus.proto.messages.{name}"));
            let int = desc.as_ref().zip(int).and_then(|(d, n)| IntField::of(d, n));
            side.push(SideHeader { key, ty: desc.map(|d| rules.add(&d)), int });
        }
        Some(SummaryReader { rules, envelope, types, side })
    }

    /// The facts of one frame, or `None` when the full analysis must look at it (see the
    /// module doc). `frame` is the whole frame as the reader's frame type.
    pub fn read(&self, frame: &[u8]) -> Option<RowFacts> {
        self.read_with(frame, Detail::Full)
    }

    /// [`SummaryReader::read`], with `Detail::Counts` leaving out the facts that are only
    /// shown (the id's text); the frame is checked all the same.
    pub fn read_with(&self, frame: &[u8], detail: Detail) -> Option<RowFacts> {
        let env = &self.envelope;
        // One walk: each field is checked as `Rules::accepts` would check it in the frame, and
        // the envelope's id, payload and properties are kept on the way.
        let (imm, depth) = match env.response {
            None => (frame, 0),
            Some((status, message)) => {
                let mut imm = None;
                for item in scan::fields(frame) {
                    match item.ok()? {
                        (n, _) if n == status => return None,
                        (n, Value::Len(b)) if n == message => scan::set_once(&mut imm, b)?,
                        (n, v) if self.rules.accepts_field(env.frame, n, v, 0) => {}
                        _ => return None,
                    }
                }
                (imm?, 1)
            }
        };
        self.read_message(imm, depth, detail)
    }

    /// `imm` is the `ImmutableMessage`, nested `depth` deep in the frame.
    fn read_message(&self, imm: &[u8], depth: usize, detail: Detail) -> Option<RowFacts> {
        let env = &self.envelope;
        let mut id = None;
        let mut payload: &[u8] = &[];
        let mut props = Properties::default();
        for item in scan::fields(imm) {
            match item.ok()? {
                // `payload` is bytes: any length-delimited value is accepted.
                (n, Value::Len(b)) if n == env.payload => payload = b,
                (n, Value::Len(b)) if n == env.properties => {
                    props.insert_entry(&self.rules, env.entry, b, depth + 1)?
                }
                (n, v) if self.rules.accepts_field(env.imm, n, v, depth) => {
                    if let (true, Value::Len(b)) = (n == env.id, v) {
                        scan::set_once(&mut id, b)?;
                    }
                }
                _ => return None,
            }
        }
        // Chunks are rare and read differently (no body of their own): the full analysis does.
        if props.get(Key::Chunk).is_some() {
            return None;
        }
        let raw_prop = |k: Key| props.get(k).map(str::as_bytes);
        let prop = |k: Key| props.get(k);
        let mut facts = RowFacts { payload_len: payload.len(), ..RowFacts::default() };

        let backend = match id {
            None => WalBackend::Unknown,
            Some(b) => {
                let (raw, wal) = message_id(b, env.id_text, env.id_wal)?;
                let backend = WalBackend::from_number(wal);
                facts.id = match message_id_parts(backend, raw) {
                    Ok(parts) if detail == Detail::Full => display_message_id(backend, &parts),
                    Ok(_) => String::new(),
                    Err(_) if backend != WalBackend::Unknown => return None,
                    Err(e) => format!("invalid id: {e}"),
                };
                backend
            }
        };
        let version = match prop(Key::V) {
            None => {
                facts.legacy = true;
                None
            }
            Some(v) => Some(v.parse::<u32>().ok()?),
        };
        let mut entry = None;
        match prop(Key::T) {
            None => facts.type_name = if facts.legacy { "legacy" } else { "Unknown" }.to_string(),
            Some(t) => {
                let t = t.parse::<i32>().ok()?;
                facts.type_number = Some(t);
                entry = self.types.get(t);
                facts.type_name = entry.map_or_else(|| t.to_string(), |e| e.name.clone());
            }
        }
        if let (Some(e), Some(v)) = (entry, version)
            && e.expected_version.is_some_and(|x| x != v)
        {
            return None;
        }
        facts.timetick = prop(Key::Tt).map(parse_base36_u64).transpose().ok()?;
        prop(Key::Btt).map(parse_base36_u64).transpose().ok()?;
        prop(Key::Wt).map(parse_base36_i64).transpose().ok()?;
        facts.vchannel = prop(Key::Vc).map(str::to_string);
        if let Some(lc) = prop(Key::Lc)
            && message_id_parts(backend, lc).is_err()
            && backend != WalBackend::Unknown
        {
            return None;
        }

        let mut cipher_collection = 0i128;
        for side in &self.side {
            let Some(value) = raw_prop(side.key) else { continue };
            let mut buf = [0u8; 192];
            let bytes = decode_base64(value, &mut buf)?;
            if !self.rules.accepts(side.ty?, bytes) {
                return None;
            }
            match side.key {
                // The summary shows txn_id only when prost-reflect reads it as an I64.
                Key::Tx => {
                    facts.txn_id = side
                        .int
                        .as_ref()
                        .filter(|f| matches!(f.kind, Kind::Int64 | Kind::Sint64 | Kind::Sfixed64))
                        .map(|f| f.read(bytes) as i64)
                }
                Key::Ch => {
                    facts.encrypted = true;
                    cipher_collection = side.int.as_ref().map_or(0, |f| f.read(bytes));
                }
                _ => {}
            }
        }

        let (header, body) = match (entry, version) {
            (Some(e), Some(v)) if v != 0 => (e.header.as_ref(), if v == 1 { e.body_v1 } else { e.body_v2 }),
            _ => (None, None),
        };
        let mut header_bytes = None;
        // Headers are a few dozen bytes: decoded on the stack, a long one into a Vec.
        let mut small = [0u8; 256];
        let large: Vec<u8>;
        if let Some(h) = raw_prop(Key::H) {
            let bytes: &[u8] = match decode_base64_into(h, &mut small) {
                Ok(n) => &small[..n],
                Err(base64::DecodeSliceError::OutputSliceTooSmall) => {
                    large = BASE64.decode(h).ok()?;
                    &large
                }
                Err(_) => return None,
            };
            if let Some(info) = header {
                if !self.rules.accepts(info.ty, bytes) {
                    return None;
                }
                header_bytes = Some((info, bytes));
            }
        }
        if let (Some(body), false, false) = (body, facts.encrypted, facts.legacy)
            && !self.rules.accepts(body, payload)
        {
            return None;
        }
        derive_counts(&mut facts, header_bytes, cipher_collection);
        Some(facts)
    }
}

fn type_entry(pool: &DescriptorPool, rules: &mut Rules, t: i32) -> TypeEntry {
    let name = super::types::message_type_name(pool, t).unwrap_or_else(|| t.to_string());
    let (header, body_v1) = header_body_types(pool, t, 1);
    let (_, body_v2) = header_body_types(pool, t, 2);
    let header = header.map(|h| HeaderInfo {
        ty: rules.add(&h),
        collection_id: IntField::of(&h, "collection_id"),
        rows: IntField::of(&h, "rows"),
        partitions: h.get_field_by_name("partitions").filter(|f| f.is_list()).and_then(|f| match f.kind() {
            Kind::Message(m) => Some((f.number(), IntField::of(&m, "rows"))),
            _ => None,
        }),
    });
    TypeEntry {
        name,
        expected_version: expected_version(pool, t),
        header,
        body_v1: body_v1.map(|b| rules.add(&b)),
        body_v2: body_v2.map(|b| rules.add(&b)),
    }
}

/// Standard padded base64 into `buf` (the side headers are a few dozen bytes); `None` when it
/// is not valid base64 or does not fit, which the full analysis then looks at.
fn decode_base64<'b>(text: &[u8], buf: &'b mut [u8]) -> Option<&'b [u8]> {
    let n = decode_base64_into(text, buf).ok()?;
    Some(&buf[..n])
}

/// `BASE64.decode_slice`, through the table decoder for the canonical short values it decides.
fn decode_base64_into(text: &[u8], buf: &mut [u8]) -> Result<usize, base64::DecodeSliceError> {
    match short_base64::decode(text, buf) {
        Some(n) => Ok(n),
        None => BASE64.decode_slice(text, buf),
    }
}

/// `MessageID.id` and `.WAL_name` (last occurrence of each, as prost reads them).
pub fn message_id(bytes: &[u8], text: u32, wal: u32) -> Option<(&str, i32)> {
    let (mut raw, mut number): (&[u8], i32) = (&[], 0);
    for item in scan::fields(bytes) {
        match item.ok()? {
            (n, Value::Len(b)) if n == text => raw = b,
            (n, Value::Varint(x)) if n == wal => number = x as i32,
            _ => {}
        }
    }
    Some((scan::as_text(raw)?, number))
}

/// As the analysis: collection from the header, else the cipher header; rows from the header's
/// partitions, else its `rows`. Zero means absent.
fn derive_counts(facts: &mut RowFacts, header: Option<(&HeaderInfo, &[u8])>, cipher_collection: i128) {
    let int = |f: &Option<IntField>, b: &[u8]| f.as_ref().map_or(0, |f| f.read(b));
    let collection = header.map_or(0, |(i, b)| int(&i.collection_id, b));
    let collection = if collection != 0 { collection } else { cipher_collection };
    facts.collection_id = (collection != 0).then_some(collection).and_then(|v| i64::try_from(v).ok());

    let partition_rows = header.and_then(|(info, bytes)| {
        let (number, rows) = info.partitions.as_ref()?;
        let mut sum = 0i128;
        for item in scan::fields(bytes) {
            let Ok((n, v)) = item else { break };
            if let (true, Value::Len(entry), Some(rows)) = (n == *number, v, rows) {
                sum += rows.read(entry);
            }
        }
        (sum != 0).then_some(sum)
    });
    let rows = partition_rows.or_else(|| {
        let r = header.map_or(0, |(i, b)| int(&i.rows, b));
        (r != 0).then_some(r)
    });
    facts.rows = rows.and_then(|v| u64::try_from(v).ok());
}
