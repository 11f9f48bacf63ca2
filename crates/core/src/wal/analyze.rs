//! One dumped WAL message (`common.ImmutableMessage`) read the way Milvus reads it: the id, the
//! property map (reference §3.2), the header from `_h` and the body from the payload, typed by
//! `_t` and `_v` (§3.4).
//!
//! Owns: turning every malformed property into a line in [`WalMessage::problems`] while still
//! reading the rest. Must never: panic or give up on outside data, call an encrypted payload
//! corrupt, or guess a body type for a legacy message or an unknown type.

use super::base36::{parse_base36_i64, parse_base36_u64};
use super::message_id::{RenderedId, WalBackend, render_message_id};
use super::types::{expected_version, header_body_types, message_type_name};
use crate::codec;
use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use prost_reflect::{DescriptorPool, DynamicMessage, MapKey, MessageDescriptor, ReflectMessage, Value};
use std::collections::BTreeMap;

pub const IMMUTABLE_MESSAGE: &str = "milvus.proto.common.ImmutableMessage";

/// Whether the payload can be read.
#[derive(Debug, Clone, PartialEq)]
pub enum Encryption {
    None,
    /// `_ch` is present: the payload is ciphertext. `cipher_header` is `None` when `_ch` itself
    /// could not be decoded (that is listed in the problems).
    Encrypted {
        cipher_header: Option<DynamicMessage>,
    },
}

/// Everything walscope knows about one WAL message.
#[derive(Debug, Clone)]
pub struct WalMessage {
    pub id: Option<Result<RenderedId, String>>,
    pub type_number: Option<i32>,
    /// The type's name; the raw number as text when the schema does not know it; `"Unknown"`
    /// when `_t` is missing or unreadable, `"legacy"` when a legacy message has no `_t`.
    pub type_name: String,
    pub version: Option<u32>,
    /// No `_v`: a pre-streaming message whose payload is in the old msgstream form.
    pub legacy: bool,
    pub timetick: Option<u64>,
    pub barrier_timetick: Option<u64>,
    pub wal_term: Option<i64>,
    pub vchannel: Option<String>,
    pub last_confirmed: Option<Result<RenderedId, String>>,
    pub last_confirmed_is_self: bool,
    pub txn: Option<DynamicMessage>,
    pub broadcast: Option<DynamicMessage>,
    pub replicate: Option<DynamicMessage>,
    pub trace: Option<DynamicMessage>,
    pub encryption: Encryption,
    pub header: Option<Result<DynamicMessage, String>>,
    pub body: Option<Result<DynamicMessage, String>>,
    pub collection_id: Option<i64>,
    pub rows: Option<u64>,
    pub flags: Vec<String>,
    pub problems: Vec<String>,
    pub payload_len: usize,
    /// Set when the payload is one chunk of a larger one (`_ci`/`_ct`, see [`super::chunk`]):
    /// its body is read only once its group is joined. An error when the markers are malformed.
    pub chunk: Option<Result<super::chunk::ChunkMark, String>>,
}

impl WalMessage {
    fn empty() -> Self {
        WalMessage {
            id: None,
            type_number: None,
            type_name: "Unknown".to_string(),
            version: None,
            legacy: false,
            timetick: None,
            barrier_timetick: None,
            wal_term: None,
            vchannel: None,
            last_confirmed: None,
            last_confirmed_is_self: false,
            txn: None,
            broadcast: None,
            replicate: None,
            trace: None,
            encryption: Encryption::None,
            header: None,
            body: None,
            collection_id: None,
            rows: None,
            flags: Vec::new(),
            problems: Vec::new(),
            payload_len: 0,
            chunk: None,
        }
    }

    pub fn is_encrypted(&self) -> bool {
        matches!(self.encryption, Encryption::Encrypted { .. })
    }

    /// True when `_t` holds a number the schema does not name.
    pub fn is_unknown_type(&self) -> bool {
        self.type_number.is_some_and(|t| self.type_name == t.to_string())
    }
}

/// Decodes `immutable_message_bytes` as `common.ImmutableMessage`, then [`analyze`]s it. Only a
/// frame that is not an ImmutableMessage at all is an error.
pub fn analyze_bytes(pool: &DescriptorPool, immutable_message_bytes: &[u8]) -> Result<WalMessage, String> {
    let desc = pool
        .get_message_by_name(IMMUTABLE_MESSAGE)
        .ok_or_else(|| format!("the schema has no {IMMUTABLE_MESSAGE}; load the Milvus protos"))?;
    let decoded = codec::decode_message(&desc, immutable_message_bytes).map_err(|e| e.to_string())?;
    Ok(analyze(pool, &decoded))
}

/// Reads one `common.ImmutableMessage`. Never fails: what cannot be read is in `problems`, or in
/// the `Err` of the part it concerns.
pub fn analyze(pool: &DescriptorPool, msg: &DynamicMessage) -> WalMessage {
    analyze_with(pool, msg, Payload::Decode)
}

/// [`analyze`] for list rows: the payload is only checked against its body type (every problem
/// is still found) and `body` stays `None`, which makes a row several times cheaper. Counts
/// then come from the header, which carries them for the types that matter (Insert, Delete).
pub fn analyze_row(pool: &DescriptorPool, msg: &DynamicMessage) -> WalMessage {
    analyze_with(pool, msg, Payload::Check)
}

/// [`analyze`] of the envelope only: properties, ids and headers; the payload is neither
/// decoded nor checked (its problems, if any, are not found). For rows that leave the body out.
pub fn analyze_envelope(pool: &DescriptorPool, msg: &DynamicMessage) -> WalMessage {
    analyze_with(pool, msg, Payload::Skip)
}

/// What [`analyze_with`] does with the payload.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Payload {
    Decode,
    Check,
    Skip,
}

fn analyze_with(pool: &DescriptorPool, msg: &DynamicMessage, payload_use: Payload) -> WalMessage {
    let mut out = WalMessage::empty();
    if msg.descriptor().full_name() != IMMUTABLE_MESSAGE {
        out.problems.push(format!(
            "expected {IMMUTABLE_MESSAGE}, got {}; reading fields by name",
            msg.descriptor().full_name()
        ));
    }
    let payload = field(msg, "payload").and_then(|v| v.as_bytes().cloned()).unwrap_or_default();
    out.payload_len = payload.len();
    let props = properties(msg);

    let backend = read_id(msg, &mut out);
    read_type_and_version(pool, &props, &mut out);
    read_scalars(&props, backend, &mut out);
    out.txn = side_header(pool, &props, "_tx", "TxnContext", &mut out.problems);
    out.broadcast = side_header(pool, &props, "_bh", "BroadcastHeader", &mut out.problems);
    out.replicate = side_header(pool, &props, "_rh", "ReplicateHeader", &mut out.problems);
    out.trace = side_header(pool, &props, "_tc", "TraceContextHeader", &mut out.problems);
    out.chunk = super::chunk::mark_of(|k| props.get(k).map(String::as_str));
    if let Some(Err(e)) = &out.chunk {
        out.problems.push(format!("chunk markers: {e}"));
    }
    if props.contains_key("_ch") {
        let cipher_header = side_header(pool, &props, "_ch", "CipherHeader", &mut out.problems);
        out.encryption = Encryption::Encrypted { cipher_header };
    }

    let (header_desc, body_desc) = match (out.type_number, out.version) {
        (Some(t), Some(v)) => header_body_types(pool, t, v),
        _ => (None, None),
    };
    if let Some(h) = props.get("_h") {
        let header = match base64_prop("_h", h) {
            Err(e) => {
                out.problems.push(e.clone());
                Err(e)
            }
            Ok(bytes) => match &header_desc {
                Some(desc) => decode_as("_h", desc, &bytes).inspect_err(|e| out.problems.push(e.clone())),
                None => Err(no_header_type(&out, bytes.len())),
            },
        };
        out.header = Some(header);
    }
    // Encrypted and legacy payloads are not protobuf we can read; no body type means nothing to
    // decode against; a chunk is a slice of a body. None of these is a fault of the message.
    if let (Some(desc), false, false, None) = (&body_desc, out.is_encrypted(), out.legacy, &out.chunk) {
        // A field upstream re-typed under the same number is kept as an unknown field (compat.rs).
        if let Some(note) = codec::compat::note(desc, &payload) {
            out.flags.push(note);
        }
        let alt = codec::compat::alternative(desc, &payload);
        let desc = alt.as_ref().unwrap_or(desc);
        if payload_use == Payload::Decode {
            // Only the message is kept: no wire tree (a span per packed value of a big body).
            let body = codec::decode_message(desc, &payload).map_err(|e| format!("payload: {e}"));
            if let Err(e) = &body {
                out.problems.push(e.clone());
            }
            out.body = Some(body);
        } else if payload_use == Payload::Check {
            let opts = crate::wire::DecodeOptions { schema: Some(desc.clone()), ..Default::default() };
            if let Some(e) = crate::wire::decode_with(&payload, &opts).first_error() {
                out.problems.push(format!("payload: not a valid {}: {e}", desc.full_name()));
            }
        }
    }
    read_flags(&props, &mut out);
    derive_counts(&mut out);
    out
}

fn field<'a>(msg: &'a DynamicMessage, name: &str) -> Option<std::borrow::Cow<'a, Value>> {
    msg.get_field_by_name(name)
}

/// The property map, sorted by key. Non-string entries cannot occur with the Milvus schema.
fn properties(msg: &DynamicMessage) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    if let Some(v) = field(msg, "properties")
        && let Some(map) = v.as_map()
    {
        for (k, v) in map {
            if let (MapKey::String(k), Some(v)) = (k, v.as_str()) {
                out.insert(k.clone(), v.to_string());
            }
        }
    }
    out
}

/// Fills `out.id` and returns the backend, which `_lc` shares.
fn read_id(msg: &DynamicMessage, out: &mut WalMessage) -> WalBackend {
    if !msg.has_field_by_name("id") {
        return WalBackend::Unknown;
    }
    let Some(id_msg) = field(msg, "id").and_then(|v| v.as_message().cloned()) else {
        return WalBackend::Unknown;
    };
    let raw = field(&id_msg, "id").and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
    let wal = field(&id_msg, "WAL_name").and_then(|v| v.as_enum_number()).unwrap_or(0);
    let backend = WalBackend::from_number(wal);
    let rendered = render_message_id(backend, &raw);
    if let (Err(e), false) = (&rendered, backend == WalBackend::Unknown) {
        out.problems.push(format!("id: {e}"));
    }
    out.id = Some(rendered);
    backend
}

fn read_type_and_version(pool: &DescriptorPool, props: &BTreeMap<String, String>, out: &mut WalMessage) {
    match props.get("_v").map(|v| (v, v.parse::<u32>())) {
        None => out.legacy = true,
        Some((_, Ok(v))) => out.version = Some(v),
        Some((raw, Err(e))) => out.problems.push(format!("_v: {raw:?} is not a decimal version: {e}")),
    }
    match props.get("_t").map(|t| (t, t.parse::<i32>())) {
        None => out.type_name = if out.legacy { "legacy" } else { "Unknown" }.to_string(),
        Some((_, Ok(t))) => {
            out.type_number = Some(t);
            out.type_name = message_type_name(pool, t).unwrap_or_else(|| t.to_string());
        }
        Some((raw, Err(e))) => out.problems.push(format!("_t: {raw:?} is not a decimal message type: {e}")),
    }
    if let (Some(t), Some(v)) = (out.type_number, out.version)
        && let Some(expected) = expected_version(pool, t)
        && expected != v
    {
        out.problems.push(format!(
            "_v: {} messages are written with _v={expected}, this one says {v}; the body format may differ",
            out.type_name
        ));
    }
}

fn read_scalars(props: &BTreeMap<String, String>, backend: WalBackend, out: &mut WalMessage) {
    let problems = &mut out.problems;
    let mut u64_prop = |key: &str| {
        props.get(key).and_then(|v| {
            parse_base36_u64(v).map_err(|e| problems.push(format!("{key}: bad base-36 timetick: {e}"))).ok()
        })
    };
    out.timetick = u64_prop("_tt");
    out.barrier_timetick = u64_prop("_btt");
    out.wal_term = props.get("_wt").and_then(|v| {
        parse_base36_i64(v).map_err(|e| out.problems.push(format!("_wt: bad base-36 WAL term: {e}"))).ok()
    });
    out.vchannel = props.get("_vc").cloned();
    out.last_confirmed_is_self = props.contains_key("_lcs");
    if let Some(lc) = props.get("_lc") {
        let rendered = render_message_id(backend, lc);
        if let (Err(e), false) = (&rendered, backend == WalBackend::Unknown) {
            out.problems.push(format!("_lc: {e}"));
        }
        out.last_confirmed = Some(rendered);
    }
}

fn base64_prop(key: &str, value: &str) -> Result<Vec<u8>, String> {
    BASE64.decode(value).map_err(|e| format!("{key}: not valid base64 (standard, padded): {e}"))
}

/// A base64 property holding a `milvus.proto.messages.<type_name>`; faults go to `problems`.
fn side_header(
    pool: &DescriptorPool,
    props: &BTreeMap<String, String>,
    key: &str,
    type_name: &str,
    problems: &mut Vec<String>,
) -> Option<DynamicMessage> {
    let value = props.get(key)?;
    let full = format!("milvus.proto.messages.{type_name}");
    let result = base64_prop(key, value).and_then(|bytes| {
        let desc =
            pool.get_message_by_name(&full).ok_or_else(|| format!("{key}: the schema has no {full}"))?;
        decode_as(key, &desc, &bytes)
    });
    result.map_err(|e| problems.push(e)).ok()
}

fn decode_as(key: &str, desc: &MessageDescriptor, bytes: &[u8]) -> Result<DynamicMessage, String> {
    codec::decode_message(desc, bytes).map_err(|e| format!("{key}: {e}"))
}

/// Why `_h` was left undecoded (legacy message, unknown type): not a fault of the message.
fn no_header_type(out: &WalMessage, len: usize) -> String {
    let what = if out.legacy { "legacy message" } else { "type" };
    format!("no header type for {what} {}; {len} bytes of _h left undecoded", out.type_name)
}

const KNOWN_KEYS: &[&str] = &[
    "_t", "_v", "_tt", "_btt", "_wt", "_lc", "_lcs", "_vc", "_h", "_bh", "_tx", "_ch", "_rh", "_tc", "_np",
    "_pcl", "_ur", "_puc", "_ik", "_ct", "_ci",
];

fn read_flags(props: &BTreeMap<String, String>, out: &mut WalMessage) {
    let described = [
        ("_np", "not persisted"),
        ("_pcl", "pchannel-level message"),
        ("_ur", "unsafe to replicate"),
        ("_puc", "partial-update CAS marker"),
        ("_ik", "idempotency key"),
    ];
    for (key, what) in described {
        if let Some(v) = props.get(key) {
            let shown = if v.is_empty() { String::new() } else { format!("={v}") };
            out.flags.push(format!("{key}{shown} ({what})"));
        }
    }
    if let Some(Ok(m)) = &out.chunk {
        out.flags.push(format!(
            "{} (_ci/_ct): the payload is a slice of the body; join the group to read it",
            m.label()
        ));
    }
    for key in props.keys().filter(|k| !KNOWN_KEYS.contains(&k.as_str())) {
        out.flags.push(format!("unknown property {key}"));
    }
    if let Some(Ok(body)) = &out.body
        && body.descriptor().name() == "TxnMessageBody"
        && let Some(v) = field(body, "messages")
        && let Some(list) = v.as_list()
    {
        out.flags.push(format!("Txn body holds {} messages", list.len()));
    }
}

fn int_field(msg: &DynamicMessage, name: &str) -> Option<i128> {
    let v = field(msg, name)?;
    v.as_i64().map(i128::from).or_else(|| v.as_u64().map(i128::from))
}

/// collection_id and rows: from the header when it carries them, else the body (msg.* names),
/// else (collection only) the cipher header, which is readable even when the body is not.
fn derive_counts(out: &mut WalMessage) {
    let header = out.header.as_ref().and_then(|h| h.as_ref().ok());
    let body = out.body.as_ref().and_then(|b| b.as_ref().ok());
    let cipher = match &out.encryption {
        Encryption::Encrypted { cipher_header } => cipher_header.as_ref(),
        Encryption::None => None,
    };
    let first_nonzero = |candidates: &[(Option<&DynamicMessage>, &str)]| {
        candidates.iter().filter_map(|(m, name)| m.and_then(|m| int_field(m, name))).find(|v| *v != 0)
    };
    out.collection_id = first_nonzero(&[
        (header, "collection_id"),
        (body, "collection_id"),
        (body, "collectionID"),
        (cipher, "collection_id"),
    ])
    .and_then(|v| i64::try_from(v).ok());

    let partition_rows = header
        .and_then(|h| field(h, "partitions").map(|v| v.into_owned()))
        .and_then(|v| {
            let list = v.as_list()?;
            let sum: i128 =
                list.iter().filter_map(|p| p.as_message()).filter_map(|p| int_field(p, "rows")).sum();
            Some(sum)
        })
        .filter(|s| *s != 0);
    out.rows = partition_rows
        .or_else(|| first_nonzero(&[(header, "rows"), (body, "num_rows")]))
        .and_then(|v| u64::try_from(v).ok());
}
