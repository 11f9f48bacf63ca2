//! WAL message ids (`common.MessageID.id` and the `_lc` property): what each backend's string
//! holds, rendered the way Milvus prints it, and encoded back for sample data.
//!
//! Owns: the per-backend codecs of reference §5 (base 36 for RocksMQ/Kafka, base64 of a small
//! protobuf for Pulsar and Woodpecker) and their validation. Must never: panic on an id from a
//! dump or a user, or accept an id it could not fully interpret (a bad id sent back to a proxy
//! could crash older servers, milvus#50341).

use super::base36::{parse_base36_i64, to_base36_i64};
use crate::wire::{self, WireContent, varint::write_varint};
use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;

/// `common.WALName`: which backend produced an id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WalBackend {
    Unknown,
    RocksMq,
    Pulsar,
    Kafka,
    Woodpecker,
    Test,
}

impl WalBackend {
    /// From the `WALName` enum number; numbers this build does not know are `Unknown`.
    pub fn from_number(n: i32) -> Self {
        match n {
            1 => WalBackend::RocksMq,
            2 => WalBackend::Pulsar,
            3 => WalBackend::Kafka,
            4 => WalBackend::Woodpecker,
            999 => WalBackend::Test,
            _ => WalBackend::Unknown,
        }
    }

    pub fn number(self) -> i32 {
        match self {
            WalBackend::Unknown => 0,
            WalBackend::RocksMq => 1,
            WalBackend::Pulsar => 2,
            WalBackend::Kafka => 3,
            WalBackend::Woodpecker => 4,
            WalBackend::Test => 999,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            WalBackend::Unknown => "Unknown",
            WalBackend::RocksMq => "RocksMQ",
            WalBackend::Pulsar => "Pulsar",
            WalBackend::Kafka => "Kafka",
            WalBackend::Woodpecker => "Woodpecker",
            WalBackend::Test => "Test",
        }
    }
}

/// What an id means, per backend.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MessageIdParts {
    /// RocksMQ message id or Kafka partition offset (base 36 on the wire).
    Sequential(i64),
    Pulsar {
        ledger: u64,
        entry: u64,
        partition: i32,
        batch_index: i32,
    },
    Woodpecker {
        segment: i64,
        entry: i64,
    },
}

/// A validated id: the raw string, its parts, and Milvus's human form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderedId {
    pub backend: WalBackend,
    pub raw: String,
    pub parts: MessageIdParts,
    /// e.g. `"RocksMQ 1007"`, `"Pulsar 12/3/-1"`, `"Woodpecker 4/17"`.
    pub display: String,
}

/// Interprets `id` as `backend` encodes it. Every failure names the backend and the fault.
pub fn render_message_id(backend: WalBackend, id: &str) -> Result<RenderedId, String> {
    let parts = message_id_parts(backend, id)?;
    let display = display(backend, &parts);
    Ok(RenderedId { backend, raw: id.to_string(), parts, display })
}

/// [`render_message_id`] without the strings: the parts, or the same error.
pub fn message_id_parts(backend: WalBackend, id: &str) -> Result<MessageIdParts, String> {
    Ok(match backend {
        // The test WAL of current upstream uses the same int64 codec as RocksMQ.
        WalBackend::RocksMq | WalBackend::Kafka | WalBackend::Test => {
            let v = parse_base36_i64(id)
                .map_err(|e| format!("{} message id {id:?} is not a base-36 integer: {e}", backend.name()))?;
            MessageIdParts::Sequential(v)
        }
        WalBackend::Pulsar => decode_pulsar(id)?,
        WalBackend::Woodpecker => decode_woodpecker(id)?,
        WalBackend::Unknown => {
            return Err(format!(
                "message id {id:?} has WAL backend Unknown (0): its encoding depends on the backend, \
                 so it cannot be checked"
            ));
        }
    })
}

/// Milvus's human form of an id (`"RocksMQ 1007"`), as [`RenderedId::display`].
pub fn display_message_id(backend: WalBackend, parts: &MessageIdParts) -> String {
    display(backend, parts)
}

/// Milvus's `String()` of each backend's id, prefixed with the backend name.
fn display(backend: WalBackend, parts: &MessageIdParts) -> String {
    match parts {
        MessageIdParts::Sequential(v) => format!("{} {v}", backend.name()),
        MessageIdParts::Pulsar { ledger, entry, partition, batch_index } => {
            let mut s = format!("{} {ledger}/{entry}/{batch_index}", backend.name());
            if *partition != -1 {
                s.push_str(&format!(" partition {partition}"));
            }
            s
        }
        MessageIdParts::Woodpecker { segment, entry } => format!("{} {segment}/{entry}", backend.name()),
    }
}

/// The id string for `parts` (inverse of [`render_message_id`]). Pulsar leaves partition and
/// batch index out when they hold their default -1; Woodpecker follows proto3 and leaves zeros
/// out, as Go's `proto.Marshal` does (so segment 0, entry 0 is the empty string).
pub fn encode_message_id(parts: &MessageIdParts) -> String {
    match parts {
        MessageIdParts::Sequential(v) => to_base36_i64(*v),
        MessageIdParts::Pulsar { ledger, entry, partition, batch_index } => {
            let mut out = Vec::new();
            // ledgerId and entryId are proto2 `required`: always written, even when zero.
            put_varint_field(1, *ledger, &mut out);
            put_varint_field(2, *entry, &mut out);
            if *partition != -1 {
                put_varint_field(3, i64::from(*partition) as u64, &mut out);
            }
            if *batch_index != -1 {
                put_varint_field(4, i64::from(*batch_index) as u64, &mut out);
            }
            BASE64.encode(out)
        }
        MessageIdParts::Woodpecker { segment, entry } => {
            let mut out = Vec::new();
            for (number, v) in [(1, *segment), (2, *entry)] {
                if v != 0 {
                    put_varint_field(number, v as u64, &mut out);
                }
            }
            BASE64.encode(out)
        }
    }
}

/// WAL order of two ids of one backend (Pulsar: ledger, entry, batch index; Woodpecker:
/// segment, entry; the others: the number); None when either id cannot be read.
pub fn compare_message_ids(backend: WalBackend, a: &str, b: &str) -> Option<std::cmp::Ordering> {
    let key = |id: &str| -> Option<(i64, i64, i64)> {
        Some(match render_message_id(backend, id).ok()?.parts {
            MessageIdParts::Sequential(v) => (v, 0, 0),
            MessageIdParts::Pulsar { ledger, entry, batch_index, .. } => {
                (ledger as i64, entry as i64, i64::from(batch_index))
            }
            MessageIdParts::Woodpecker { segment, entry } => (segment, entry, 0),
        })
    };
    Some(key(a)?.cmp(&key(b)?))
}

fn put_varint_field(number: u64, value: u64, out: &mut Vec<u8>) {
    write_varint(number << 3, out);
    write_varint(value, out);
}

/// base64 text -> the varint fields numbered `wanted` (last occurrence wins, as in protobuf);
/// other fields are skipped whatever their wire type.
/// The varint fields `wanted` (at most four) of a base64 protobuf id, last occurrence of each.
fn decode_varint_fields(
    backend: WalBackend,
    what: &str,
    id: &str,
    wanted: &[u32],
) -> Result<[Option<u64>; 4], String> {
    match varint_fields_quickly(id, wanted) {
        Some(found) => Ok(found),
        None => varint_fields_fully(backend, what, id, wanted),
    }
}

/// [`decode_varint_fields`] through the wire decoder, which explains every fault.
fn varint_fields_fully(
    backend: WalBackend,
    what: &str,
    id: &str,
    wanted: &[u32],
) -> Result<[Option<u64>; 4], String> {
    let name = backend.name();
    let bytes = BASE64
        .decode(id)
        .map_err(|e| format!("{name} message id {id:?} is not valid base64 (standard, padded): {e}"))?;
    let decoding = wire::decode(&bytes);
    if let Some(e) = decoding.first_error() {
        return Err(format!("{name} message id {id:?} does not hold a valid {what} protobuf: {e}"));
    }
    let mut found = [None; 4];
    for field in &decoding.root.fields {
        let Some(slot) = wanted.iter().position(|n| *n == field.number) else { continue };
        let WireContent::Varint(v) = field.content else {
            return Err(format!(
                "{name} message id {id:?}: {what} field {} is encoded as {}, not as a varint \
                 (not a {name} id?)",
                field.number,
                field.wire_type.name()
            ));
        };
        found[slot] = Some(v);
    }
    Ok(found)
}

/// [`decode_varint_fields`] for the ids it accepts that hold only varints and fixed values,
/// without allocating (ids are read for every frame of a scan); `None` leaves anything else,
/// errors included, to the full decoding, which explains them.
fn varint_fields_quickly(id: &str, wanted: &[u32]) -> Option<[Option<u64>; 4]> {
    let mut buf = [0u8; 48];
    let n = BASE64.decode_slice(id, &mut buf).ok()?;
    let mut found = [None; 4];
    for item in crate::wire::scan::fields(&buf[..n]) {
        match item.ok()? {
            (number, crate::wire::scan::Value::Varint(v)) => {
                if let Some(slot) = wanted.iter().position(|w| *w == number) {
                    *found.get_mut(slot)? = Some(v);
                }
            }
            (number, crate::wire::scan::Value::Fixed32(_) | crate::wire::scan::Value::Fixed64(_))
                if !wanted.contains(&number) => {}
            _ => return None,
        }
    }
    Some(found)
}

fn decode_pulsar(id: &str) -> Result<MessageIdParts, String> {
    let f = decode_varint_fields(WalBackend::Pulsar, "MessageIdData", id, &[1, 2, 3, 4])?;
    let missing =
        |what: &str| format!("Pulsar message id {id:?}: MessageIdData has no {what}, a required field");
    let ledger = f[0].ok_or_else(|| missing("ledgerId (field 1)"))?;
    let entry = f[1].ok_or_else(|| missing("entryId (field 2)"))?;
    // int32 fields: negative values are sign-extended to 64 bits; protobuf truncates them back.
    let partition = f[2].map_or(-1, |v| v as i32);
    let batch_index = f[3].map_or(-1, |v| v as i32);
    Ok(MessageIdParts::Pulsar { ledger, entry, partition, batch_index })
}

fn decode_woodpecker(id: &str) -> Result<MessageIdParts, String> {
    let f = decode_varint_fields(WalBackend::Woodpecker, "LogMessageIdData", id, &[1, 2])?;
    // proto3: an absent field is zero.
    Ok(MessageIdParts::Woodpecker { segment: f[0].unwrap_or(0) as i64, entry: f[1].unwrap_or(0) as i64 })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(b: WalBackend, id: &str) -> RenderedId {
        match render_message_id(b, id) {
            Ok(r) => r,
            Err(e) => panic!("{id}: {e}"),
        }
    }

    /// Where the allocation-free reading answers, the wire decoder gives the same fields.
    #[test]
    fn quick_id_fields_agree_with_the_wire_decoder() {
        let (mut x, mut answered) = (0x2545_f491_4f6c_dd1du64, 0);
        for round in 0..50_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let len = (x % 24) as usize;
            let mut bytes: Vec<u8> = (0..len).map(|i| (x.rotate_left(i as u32 * 7) >> 3) as u8).collect();
            // Half the inputs start as a real id, so the accepted branch is well exercised.
            if round % 2 == 0 {
                let mut id = vec![0x08, (x >> 40) as u8 & 0x7f, 0x10, 0x96, 0x01];
                id.truncate(len.clamp(2, 5));
                id.extend_from_slice(&bytes[..len.saturating_sub(5)]);
                bytes = id;
            }
            let id = BASE64.encode(&bytes);
            if let Some(quick) = varint_fields_quickly(&id, &[1, 2, 3, 4]) {
                let full = varint_fields_fully(WalBackend::Pulsar, "MessageIdData", &id, &[1, 2, 3, 4]);
                assert_eq!(full, Ok(quick), "{bytes:02x?}");
                answered += 1;
            }
        }
        assert!(answered > 5_000, "the quick reading answered only {answered} times");
    }

    #[test]
    fn backend_numbers_round_trip() {
        for b in [
            WalBackend::Unknown,
            WalBackend::RocksMq,
            WalBackend::Pulsar,
            WalBackend::Kafka,
            WalBackend::Woodpecker,
            WalBackend::Test,
        ] {
            assert_eq!(WalBackend::from_number(b.number()), b);
        }
        assert_eq!(WalBackend::from_number(17), WalBackend::Unknown);
        assert_eq!(WalBackend::from_number(-1), WalBackend::Unknown);
    }

    #[test]
    fn sequential_ids_hand_computed() {
        let r = ok(WalBackend::RocksMq, "rz"); // 27 * 36 + 35
        assert_eq!(r.parts, MessageIdParts::Sequential(1007));
        assert_eq!(r.display, "RocksMQ 1007");
        assert_eq!(r.raw, "rz");
        // Kafka offset 46656 = 36^3 -> "1000".
        let k = ok(WalBackend::Kafka, "1000");
        assert_eq!(k.parts, MessageIdParts::Sequential(46_656));
        assert_eq!(k.display, "Kafka 46656");
        assert_eq!(ok(WalBackend::Kafka, "0").display, "Kafka 0");
    }

    #[test]
    fn pulsar_ids_hand_computed() {
        // ledger 12, entry 3: 08 0c 10 03 -> "CAwQAw=="
        let r = ok(WalBackend::Pulsar, "CAwQAw==");
        assert_eq!(r.parts, MessageIdParts::Pulsar { ledger: 12, entry: 3, partition: -1, batch_index: -1 });
        assert_eq!(r.display, "Pulsar 12/3/-1");
        // + partition 2, batch 5: 08 0c 10 03 18 02 20 05 -> "CAwQAxgCIAU="
        let p = ok(WalBackend::Pulsar, "CAwQAxgCIAU=");
        assert_eq!(p.parts, MessageIdParts::Pulsar { ledger: 12, entry: 3, partition: 2, batch_index: 5 });
        assert_eq!(p.display, "Pulsar 12/3/5 partition 2");
        // As pulsar-client-go writes it: explicit partition -1 (ten-byte varint), batch -1,
        // batch_size 0 (field 6) which we ignore.
        let mut go = vec![0x08, 0x0c, 0x10, 0x03, 0x18];
        go.extend([0xff; 9]);
        go.push(0x01);
        go.push(0x20);
        go.extend([0xff; 9]);
        go.extend([0x01, 0x30, 0x00]);
        let g = ok(WalBackend::Pulsar, &BASE64.encode(&go));
        assert_eq!(g.parts, r.parts);
        assert_eq!(encode_message_id(&r.parts), "CAwQAw==");
        assert_eq!(encode_message_id(&p.parts), "CAwQAxgCIAU=");
    }

    #[test]
    fn woodpecker_ids_hand_computed() {
        // segId 4, entryId 17: 08 04 10 11 -> "CAQQEQ=="
        let r = ok(WalBackend::Woodpecker, "CAQQEQ==");
        assert_eq!(r.parts, MessageIdParts::Woodpecker { segment: 4, entry: 17 });
        assert_eq!(r.display, "Woodpecker 4/17");
        assert_eq!(encode_message_id(&r.parts), "CAQQEQ==");
        // segId 0 (omitted), entryId 1: 10 01 -> "EAE="
        assert_eq!(ok(WalBackend::Woodpecker, "EAE=").display, "Woodpecker 0/1");
    }

    #[test]
    fn encode_then_render_round_trips() {
        let cases = [
            (WalBackend::RocksMq, MessageIdParts::Sequential(0)),
            (WalBackend::RocksMq, MessageIdParts::Sequential(i64::MAX)),
            (WalBackend::Kafka, MessageIdParts::Sequential(123_456_789)),
            (WalBackend::Kafka, MessageIdParts::Sequential(-5)),
            (
                WalBackend::Pulsar,
                MessageIdParts::Pulsar { ledger: 0, entry: 0, partition: -1, batch_index: -1 },
            ),
            (
                WalBackend::Pulsar,
                MessageIdParts::Pulsar { ledger: u64::MAX, entry: 1 << 40, partition: 7, batch_index: -2 },
            ),
            (WalBackend::Woodpecker, MessageIdParts::Woodpecker { segment: 0, entry: 0 }),
            (WalBackend::Woodpecker, MessageIdParts::Woodpecker { segment: -1, entry: i64::MAX }),
        ];
        for (backend, parts) in cases {
            let id = encode_message_id(&parts);
            let r = ok(backend, &id);
            assert_eq!(r.parts, parts, "{id}");
            assert_eq!(r.raw, id);
        }
    }

    #[test]
    fn invalid_ids_are_clear_errors() {
        let e = render_message_id(WalBackend::RocksMq, "r!z").unwrap_err();
        assert!(e.contains("RocksMQ") && e.contains("base-36") && e.contains("position 1"), "{e}");
        let e = render_message_id(WalBackend::Kafka, "").unwrap_err();
        assert!(e.contains("Kafka") && e.contains("empty"), "{e}");
        let e = render_message_id(WalBackend::Kafka, "zzzzzzzzzzzzzzzz").unwrap_err();
        assert!(e.contains("64"), "{e}");
        let e = render_message_id(WalBackend::Pulsar, "CAwQAw").unwrap_err(); // padding missing
        assert!(e.contains("Pulsar") && e.contains("base64"), "{e}");
        let e = render_message_id(WalBackend::Pulsar, "not base64!").unwrap_err();
        assert!(e.contains("base64"), "{e}");
        // Protobuf garbage: 0xff 0xff ... is an unterminated varint key.
        let e = render_message_id(WalBackend::Pulsar, &BASE64.encode([0xff, 0xff, 0xff])).unwrap_err();
        assert!(e.contains("Pulsar") && e.contains("MessageIdData") && e.contains("byte 0"), "{e}");
        // Valid protobuf, but ledgerId is a string: 0a 01 41.
        let e = render_message_id(WalBackend::Pulsar, &BASE64.encode([0x0a, 0x01, 0x41])).unwrap_err();
        assert!(e.contains("field 1") && e.contains("length-delimited"), "{e}");
        // No ledgerId at all.
        let e = render_message_id(WalBackend::Pulsar, "").unwrap_err();
        assert!(e.contains("ledgerId"), "{e}");
        let e = render_message_id(WalBackend::Pulsar, "EAM=").unwrap_err(); // 10 03: entry only
        assert!(e.contains("ledgerId"), "{e}");
        let e = render_message_id(WalBackend::Woodpecker, &BASE64.encode([0x08])).unwrap_err();
        assert!(e.contains("Woodpecker") && e.contains("LogMessageIdData"), "{e}");
        let e = render_message_id(WalBackend::Woodpecker, "CAQQEQ=").unwrap_err();
        assert!(e.contains("base64"), "{e}");
        let e = render_message_id(WalBackend::Unknown, "rz").unwrap_err();
        assert!(e.contains("Unknown"), "{e}");
    }
}
