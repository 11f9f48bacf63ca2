//! Zero-copy reading of wire bytes for the fast paths (list rows, whole-file scans, the salvage
//! job's bookkeeping): a field iterator over borrowed bytes, and a schema check compiled once per
//! type that answers "would the strict decoders accept this?" without building anything.
//!
//! Owns: reading fields as they are, borrowed. The schema check is [`Rules`] (in
//! `wire/rules.rs`). Must never: allocate per field or panic on any input.

use super::WireType;
pub use super::rules::{Rules, TypeId, as_text};
use super::varint::read_varint;
use prost_reflect::Kind;

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

    #[inline(always)]
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
    #[inline(always)]
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

/// Fills `slot` with `value` the first time; `None` the second time: a message field given
/// twice is merged by the decoders, which the fast readers leave to them.
pub fn set_once<'a>(slot: &mut Option<&'a [u8]>, value: &'a [u8]) -> Option<()> {
    match slot.replace(value) {
        None => Some(()),
        Some(_) => None,
    }
}

/// The first occurrence of length-delimited field `number` (later ones are not looked at), or
/// `None` when there is none before the first unreadable byte.
pub fn first_len(bytes: &[u8], number: u32) -> Option<&[u8]> {
    fields(bytes).find_map(|f| match f {
        Ok((n, Value::Len(b))) if n == number => Some(b),
        _ => None,
    })
}

/// The last occurrence of length-delimited field `number` (the one a decoder keeps), or `None`
/// when there is none or a byte is unreadable.
pub fn last_len(bytes: &[u8], number: u32) -> Option<&[u8]> {
    let mut found = None;
    for item in fields(bytes) {
        if let (n, Value::Len(b)) = item.ok()?
            && n == number
        {
            found = Some(b);
        }
    }
    found
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
