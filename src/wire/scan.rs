//! Zero-copy reading of wire bytes for the fast paths (list rows, whole-file scans, the salvage
//! job's bookkeeping): a field iterator over borrowed bytes, and a schema check compiled once per
//! type that answers "would the strict decoders accept this?" without building anything.
//!
//! Owns: the rule that [`Rules::accepts`] says yes only for bytes that both
//! [`super::decode_with`] (with that schema) and prost-reflect's `DynamicMessage::decode` accept
//! without a single error. It may say no to bytes they accept (groups, very deep nesting, large
//! unknown fields): callers then take the slow path, which explains what is wrong. Must never:
//! allocate per field, panic on any input, or say yes to bytes the slow path would flag.

use super::varint::read_varint;
use super::{DEFAULT_MAX_DEPTH, WireType};
use prost_reflect::{Kind, MessageDescriptor};
use std::collections::HashMap;

/// One field's value as it sits in the buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value<'a> {
    Varint(u64),
    Fixed64(u64),
    Fixed32(u32),
    Len(&'a [u8]),
}

/// The fields of one message, in order. Yields `Err(())` once and stops at the first byte it
/// cannot read (a bad key or length, a truncated value, or a group, which it does not follow).
pub struct Fields<'a> {
    buf: &'a [u8],
    pos: usize,
    failed: bool,
}

pub fn fields(buf: &[u8]) -> Fields<'_> {
    Fields { buf, pos: 0, failed: false }
}

impl<'a> Iterator for Fields<'a> {
    type Item = Result<(u32, Value<'a>), ()>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.pos >= self.buf.len() {
            return None;
        }
        let item = self.read();
        if item.is_err() {
            self.failed = true;
        }
        Some(item)
    }
}

impl<'a> Fields<'a> {
    #[inline]
    fn read(&mut self) -> Result<(u32, Value<'a>), ()> {
        let end = self.buf.len();
        let (key, pos) = read_varint(self.buf, self.pos, end).map_err(|_| ())?;
        let number = key >> 3;
        if number == 0 || number > 536_870_911 {
            return Err(());
        }
        let (value, next) = match key & 7 {
            0 => {
                let (v, next) = read_varint(self.buf, pos, end).map_err(|_| ())?;
                (Value::Varint(v), next)
            }
            1 => {
                let b = self.buf.get(pos..pos + 8).ok_or(())?;
                (Value::Fixed64(u64::from_le_bytes(b.try_into().map_err(|_| ())?)), pos + 8)
            }
            5 => {
                let b = self.buf.get(pos..pos + 4).ok_or(())?;
                (Value::Fixed32(u32::from_le_bytes(b.try_into().map_err(|_| ())?)), pos + 4)
            }
            2 => {
                let (len, start) = read_varint(self.buf, pos, end).map_err(|_| ())?;
                if len > (end - start) as u64 {
                    return Err(());
                }
                let stop = start + len as usize;
                (Value::Len(&self.buf[start..stop]), stop)
            }
            _ => return Err(()),
        };
        self.pos = next;
        Ok((number as u32, value))
    }
}

impl Value<'_> {
    pub fn wire_type(&self) -> WireType {
        match self {
            Value::Varint(_) => WireType::Varint,
            Value::Fixed64(_) => WireType::Fixed64,
            Value::Fixed32(_) => WireType::Fixed32,
            Value::Len(_) => WireType::Len,
        }
    }
}

/// How the schema reads one field.
#[derive(Debug, Clone, Copy)]
enum Rule {
    /// A message (or map entry), by its index in [`Rules::messages`].
    Message(usize),
    Text,
    Bytes,
    /// A scalar of this wire type; `packed` is the element size (0 = varints) when the field is
    /// repeated and may also come packed.
    Scalar {
        wire: WireType,
        packed: Option<usize>,
    },
    /// A group field: never followed here.
    Group,
}

#[derive(Debug, Default)]
struct MessageRules {
    /// Rules indexed by field number when the numbers are small, else looked up.
    dense: Vec<Option<Rule>>,
    sparse: HashMap<u32, Rule>,
}

impl MessageRules {
    fn get(&self, number: u32) -> Option<Rule> {
        match self.dense.get(number as usize) {
            Some(r) => *r,
            None => self.sparse.get(&number).copied(),
        }
    }
}

/// Compiled checks for a set of message types and every type they reach.
#[derive(Debug, Default)]
pub struct Rules {
    messages: Vec<MessageRules>,
    by_name: HashMap<String, usize>,
}

/// A compiled type within [`Rules`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TypeId(usize);

/// Nesting the fast check follows before it hands the bytes to the slow path: well inside both
/// the wire decoder's limit and prost's recursion limit (100).
const MAX_DEPTH: usize = 32;

impl Rules {
    /// Compiles `desc` (and what it reaches), once per type.
    pub fn add(&mut self, desc: &MessageDescriptor) -> TypeId {
        if let Some(&i) = self.by_name.get(desc.full_name()) {
            return TypeId(i);
        }
        let index = self.messages.len();
        self.messages.push(MessageRules::default());
        self.by_name.insert(desc.full_name().to_string(), index);
        let mut rules = MessageRules::default();
        let mut list = Vec::new();
        for fd in desc.fields() {
            let rule = if fd.is_group() {
                Rule::Group
            } else {
                match fd.kind() {
                    Kind::Message(m) => Rule::Message(self.add(&m).0),
                    Kind::String => Rule::Text,
                    Kind::Bytes => Rule::Bytes,
                    k => {
                        let (wire, unit) = match k {
                            Kind::Double | Kind::Fixed64 | Kind::Sfixed64 => (WireType::Fixed64, 8),
                            Kind::Float | Kind::Fixed32 | Kind::Sfixed32 => (WireType::Fixed32, 4),
                            _ => (WireType::Varint, 0),
                        };
                        Rule::Scalar { wire, packed: fd.is_list().then_some(unit) }
                    }
                }
            };
            list.push((fd.number(), rule));
        }
        let max = list.iter().map(|(n, _)| *n).max().unwrap_or(0);
        if max < 512 {
            rules.dense = vec![None; max as usize + 1];
            for (n, r) in list {
                rules.dense[n as usize] = Some(r);
            }
        } else {
            rules.sparse = list.into_iter().collect();
        }
        self.messages[index] = rules;
        TypeId(index)
    }

    /// True only if `bytes` decode as the type without any error (see the module doc).
    pub fn accepts(&self, ty: TypeId, bytes: &[u8]) -> bool {
        self.message(ty.0, bytes, 0)
    }

    /// A hand loop rather than [`Fields`]: this runs over every field of every payload in a
    /// whole-file scan.
    fn message(&self, index: usize, bytes: &[u8], depth: usize) -> bool {
        let Some(rules) = self.messages.get(index) else { return false };
        let end = bytes.len();
        let mut pos = 0;
        while pos < end {
            let Ok((key, next)) = read_varint(bytes, pos, end) else { return false };
            let number = key >> 3;
            if number == 0 || number > 536_870_911 {
                return false;
            }
            let rule = rules.get(number as u32);
            pos = match key & 7 {
                0 => {
                    let Ok((_, after)) = read_varint(bytes, next, end) else { return false };
                    if !scalar_fits(rule, WireType::Varint) {
                        return false;
                    }
                    after
                }
                1 | 5 => {
                    let (wire, n) =
                        if key & 7 == 1 { (WireType::Fixed64, 8) } else { (WireType::Fixed32, 4) };
                    if end - next < n || !scalar_fits(rule, wire) {
                        return false;
                    }
                    next + n
                }
                2 => {
                    let Ok((len, start)) = read_varint(bytes, next, end) else { return false };
                    if len > (end - start) as u64 {
                        return false;
                    }
                    let stop = start + len as usize;
                    let b = &bytes[start..stop];
                    let ok = match rule {
                        None => unknown_len_is_safe(b, depth),
                        Some(Rule::Message(m)) => depth < MAX_DEPTH && self.message(m, b, depth + 1),
                        // Nearly every string is ASCII, which is checked eight bytes at a time.
                        Some(Rule::Text) => b.is_ascii() || std::str::from_utf8(b).is_ok(),
                        Some(Rule::Bytes) => true,
                        Some(Rule::Scalar { packed: Some(unit), .. }) => packed_fits(b, unit),
                        Some(Rule::Scalar { packed: None, .. } | Rule::Group) => false,
                    };
                    if !ok {
                        return false;
                    }
                    stop
                }
                _ => return false, // groups (and invalid wire types) go to the slow path
            };
        }
        true
    }
}

/// A varint or fixed value where the schema expects `rule`: unknown fields take anything.
fn scalar_fits(rule: Option<Rule>, found: WireType) -> bool {
    match rule {
        None => true,
        Some(Rule::Scalar { wire, .. }) => wire == found,
        Some(_) => false,
    }
}

/// The wire decoder guesses what an unknown length-delimited field holds and reports only one
/// thing from that guess: nesting past its limit. Each guessed level takes at least two bytes,
/// so a field this short cannot reach it.
fn unknown_len_is_safe(b: &[u8], depth: usize) -> bool {
    depth + 2 + b.len() / 2 < DEFAULT_MAX_DEPTH
}

fn packed_fits(b: &[u8], unit: usize) -> bool {
    match unit {
        0 => packed_varints_fit(b),
        n => b.len().is_multiple_of(n),
    }
}

/// True when `b` is a whole number of varints that [`read_varint`] reads: the last byte ends
/// one, and no varint runs past 10 bytes or past 64 bits (a 10th byte above 1). Packed row ids
/// and timestamps are most of an Insert's bytes, so this counts runs of continuation bytes
/// instead of decoding each value, eight bytes at a time where no varint continues.
fn packed_varints_fit(b: &[u8]) -> bool {
    if b.last().is_some_and(|last| last & 0x80 != 0) {
        return false;
    }
    let mut run = 0usize;
    let mut words = b.chunks_exact(8);
    for word in &mut words {
        let w = u64::from_le_bytes([word[0], word[1], word[2], word[3], word[4], word[5], word[6], word[7]]);
        if w & 0x8080_8080_8080_8080 == 0 {
            // Eight one-byte varints; only a run of nine before them can end here, badly.
            if run == 9 && word[0] > 1 {
                return false;
            }
            run = 0;
            continue;
        }
        for &byte in word {
            if !varint_byte_fits(byte, &mut run) {
                return false;
            }
        }
    }
    words.remainder().iter().all(|&byte| varint_byte_fits(byte, &mut run))
}

/// One byte of a packed varint run; `run` counts the continuation bytes before it.
#[inline(always)]
fn varint_byte_fits(byte: u8, run: &mut usize) -> bool {
    if byte & 0x80 != 0 {
        *run += 1;
        *run < 10
    } else {
        let ok = *run < 9 || byte <= 1;
        *run = 0;
        ok
    }
}

/// Fills `slot` with `value` the first time; `None` the second time: a message field given
/// twice is merged by the decoders, which the fast readers leave to them.
pub fn set_once<'a>(slot: &mut Option<&'a [u8]>, value: &'a [u8]) -> Option<()> {
    match slot.replace(value) {
        None => Some(()),
        Some(_) => None,
    }
}

/// The one occurrence of length-delimited field `number`; `None` when it is absent, repeated
/// (prost would merge the copies) or when field `refuse` is present.
pub fn single_len(bytes: &[u8], number: u32, refuse: Option<u32>) -> Option<&[u8]> {
    let mut found = None;
    for item in fields(bytes) {
        match item.ok()? {
            (n, _) if Some(n) == refuse => return None,
            (n, Value::Len(b)) if n == number => set_once(&mut found, b)?,
            _ => {}
        }
    }
    found
}

/// A `map<string, string>` read as prost reads it (a later entry for a key replaces an
/// earlier one; a missing key or value is empty), keys and values left as bytes. A WAL
/// message has a handful of properties: they are kept inline (no allocation per frame) and
/// compared byte by byte (no call per comparison).
#[derive(Debug, Default)]
pub struct StringMap<'a> {
    inline: [(&'a [u8], &'a [u8]); MAP_INLINE],
    len: usize,
    more: Vec<(&'a [u8], &'a [u8])>,
}

const MAP_INLINE: usize = 16;

impl<'a> StringMap<'a> {
    /// Adds one encoded map entry; `None` when its fields cannot be read.
    #[inline]
    pub fn insert_entry(&mut self, entry: &'a [u8]) -> Option<()> {
        let (mut k, mut v): (&[u8], &[u8]) = (&[], &[]);
        for item in fields(entry) {
            match item.ok()? {
                (1, Value::Len(b)) => k = b,
                (2, Value::Len(b)) => v = b,
                _ => {}
            }
        }
        if let Some(slot) = self.slot(k) {
            *slot = v;
        } else if self.len < MAP_INLINE {
            self.inline[self.len] = (k, v);
            self.len += 1;
        } else {
            self.more.push((k, v));
        }
        Some(())
    }

    fn slot(&mut self, key: &[u8]) -> Option<&mut &'a [u8]> {
        let (inline, more) = (&mut self.inline[..self.len], &mut self.more);
        inline.iter_mut().chain(more.iter_mut()).find(|(k, _)| same(k, key)).map(|(_, v)| v)
    }

    #[inline]
    pub fn get(&self, key: &str) -> Option<&'a [u8]> {
        let key = key.as_bytes();
        self.inline[..self.len].iter().chain(&self.more).find(|(k, _)| same(k, key)).map(|(_, v)| *v)
    }
}

/// Slice equality for short keys, inlined (`==` on slices calls `memcmp`).
#[inline(always)]
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

/// Reads a varint field's value as the signed 64-bit kinds prost-reflect keeps as `I64`.
pub fn as_i64(kind: &Kind, v: Value<'_>) -> Option<i64> {
    match (kind, v) {
        (Kind::Int64, Value::Varint(x)) => Some(x as i64),
        (Kind::Sint64, Value::Varint(x)) => Some(((x >> 1) as i64) ^ -((x & 1) as i64)),
        (Kind::Sfixed64, Value::Fixed64(x)) => Some(x as i64),
        _ => None,
    }
}

/// Reads a field's value as the unsigned 64-bit kinds prost-reflect keeps as `U64`.
pub fn as_u64(kind: &Kind, v: Value<'_>) -> Option<u64> {
    match (kind, v) {
        (Kind::Uint64, Value::Varint(x)) | (Kind::Fixed64, Value::Fixed64(x)) => Some(x),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iterates_fields_and_stops_at_damage() {
        // 1: varint 150, 2: "hi", 3: fixed32, then a truncated length.
        let bytes = [0x08, 0x96, 0x01, 0x12, 2, b'h', b'i', 0x1d, 1, 0, 0, 0, 0x22, 9, 1];
        let got: Vec<_> = fields(&bytes).collect();
        assert_eq!(got[0], Ok((1, Value::Varint(150))));
        assert_eq!(got[1], Ok((2, Value::Len(b"hi"))));
        assert_eq!(got[2], Ok((3, Value::Fixed32(1))));
        assert_eq!(got[3], Err(()));
        assert_eq!(got.len(), 4);
        assert!(fields(&[0x0b, 0x0c]).next().is_some_and(|r| r.is_err()), "groups are not followed");
    }

    /// The run counter agrees with decoding varint by varint, on every length and edge.
    #[test]
    fn packed_varints_agree_with_read_varint() {
        fn by_decoding(b: &[u8]) -> bool {
            let mut pos = 0;
            while pos < b.len() {
                match read_varint(b, pos, b.len()) {
                    Ok((_, next)) => pos = next,
                    Err(_) => return false,
                }
            }
            true
        }
        let mut cases: Vec<Vec<u8>> = vec![vec![], vec![0], vec![0x80], vec![0xff; 9], vec![0xff; 10]];
        let mut nine = vec![0xff; 9];
        for last in [0u8, 1, 2, 0x7f] {
            nine.push(last);
            cases.push(nine.clone());
            // The same varint after one- and many-byte ones, across the 8-byte word edges.
            for pad in 0..17 {
                let mut c = vec![5u8; pad];
                c.extend_from_slice(&nine);
                c.extend_from_slice(&[0x96, 0x01, 3]);
                cases.push(c);
            }
            nine.pop();
        }
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let len = (x % 40) as usize;
            // Mostly continuation bytes, so long runs and the overflow edge come up often.
            let c: Vec<u8> = (0..len)
                .map(|i| {
                    let r = x.rotate_left(i as u32 * 5);
                    if r.is_multiple_of(5) { (r >> 8) as u8 & 0x7f } else { 0x80 | (r >> 16) as u8 }
                })
                .collect();
            cases.push(c);
        }
        for c in &cases {
            assert_eq!(packed_varints_fit(c), by_decoding(c), "{c:02x?}");
        }
    }

    /// Later entries replace earlier ones, past the inline entries too; missing parts are empty.
    #[test]
    fn string_map_keeps_the_last_value_of_each_key() {
        fn entry(k: &str, v: &str) -> Vec<u8> {
            let mut e = vec![0x0a, k.len() as u8];
            e.extend_from_slice(k.as_bytes());
            e.extend_from_slice(&[0x12, v.len() as u8]);
            e.extend_from_slice(v.as_bytes());
            e
        }
        let mut entries: Vec<Vec<u8>> = (0..20).map(|i| entry(&format!("k{i}"), &format!("v{i}"))).collect();
        entries.push(entry("k3", "three"));
        entries.push(entry("k18", "eighteen"));
        entries.push(vec![0x12, 1, b'x']); // no key: the empty key
        let mut m = StringMap::default();
        for e in &entries {
            m.insert_entry(e).unwrap();
        }
        assert_eq!(m.get("k0"), Some(&b"v0"[..]));
        assert_eq!(m.get("k3"), Some(&b"three"[..]));
        assert_eq!(m.get("k17"), Some(&b"v17"[..]));
        assert_eq!(m.get("k18"), Some(&b"eighteen"[..]));
        assert_eq!(m.get(""), Some(&b"x"[..]));
        assert_eq!(m.get("k20"), None);
        assert!(m.insert_entry(&[0x0a, 9]).is_none(), "a cut entry");
    }

    #[test]
    fn zigzag() {
        assert_eq!(as_i64(&Kind::Sint64, Value::Varint(3)), Some(-2));
        assert_eq!(as_i64(&Kind::Sint64, Value::Varint(4)), Some(2));
        assert_eq!(as_i64(&Kind::Int32, Value::Varint(4)), None);
    }
}
