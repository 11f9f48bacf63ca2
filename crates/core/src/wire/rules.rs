//! The schema check of the fast paths, compiled once per type: "would the strict decoders
//! accept these bytes?", answered without building anything. Re-exported by [`super::scan`].
//!
//! Owns: the rule that [`Rules::accepts`] says yes only for bytes that both
//! [`super::decode_with`] (with that schema) and prost-reflect's `DynamicMessage::decode` accept
//! without a single error. It may say no to bytes they accept (groups, very deep nesting, large
//! unknown fields): callers then take the slow path, which explains what is wrong. Must never:
//! allocate per field, panic on any input, or say yes to bytes the slow path would flag.

use super::scan::Value;
use super::varint::read_varint;
use super::{DEFAULT_MAX_DEPTH, WireType};
use prost_reflect::{Kind, MessageDescriptor};
use std::collections::HashMap;

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

/// What the check does with one field, from its key: the rule and the wire type resolved
/// together, so the hot loop dispatches once per field.
#[derive(Debug, Clone, Copy)]
enum Op {
    Reject,
    Varint,
    Fixed64,
    Fixed32,
    /// A length-delimited field the schema does not know.
    Unknown,
    Bytes,
    Text,
    PackedVarints,
    /// Packed fixed-size elements of this many bytes.
    PackedFixed(u8),
    Message(u32),
}

impl Op {
    fn of(rule: Option<Rule>, wire: u64) -> Op {
        match wire {
            0 if scalar_fits(rule, WireType::Varint) => Op::Varint,
            1 if scalar_fits(rule, WireType::Fixed64) => Op::Fixed64,
            5 if scalar_fits(rule, WireType::Fixed32) => Op::Fixed32,
            2 => match rule {
                None => Op::Unknown,
                Some(Rule::Message(m)) => u32::try_from(m).map_or(Op::Reject, Op::Message),
                Some(Rule::Text) => Op::Text,
                Some(Rule::Bytes) => Op::Bytes,
                Some(Rule::Scalar { packed: Some(0), .. }) => Op::PackedVarints,
                Some(Rule::Scalar { packed: Some(n), .. }) => {
                    u8::try_from(n).map_or(Op::Reject, Op::PackedFixed)
                }
                Some(Rule::Scalar { packed: None, .. } | Rule::Group) => Op::Reject,
            },
            // Groups (and invalid wire types) go to the slow path.
            _ => Op::Reject,
        }
    }
}

#[derive(Debug)]
struct MessageRules {
    /// Rules indexed by field number when the numbers are small, else looked up.
    dense: Vec<Option<Rule>>,
    sparse: HashMap<u32, Rule>,
    /// The [`Op`] of every one-byte key (fields 1 to 15, nearly all fields on the wire).
    one_byte: [Op; 128],
}

impl Default for MessageRules {
    fn default() -> Self {
        MessageRules { dense: Vec::new(), sparse: HashMap::new(), one_byte: [Op::Reject; 128] }
    }
}

impl MessageRules {
    fn get(&self, number: u32) -> Option<Rule> {
        match self.dense.get(number as usize) {
            Some(r) => *r,
            None => self.sparse.get(&number).copied(),
        }
    }

    fn fill_one_byte_keys(&mut self) {
        for key in 8..128u64 {
            self.one_byte[key as usize] = Op::of(self.get((key >> 3) as u32), key & 7);
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
        rules.fill_one_byte_keys();
        self.messages[index] = rules;
        TypeId(index)
    }

    /// True only if `bytes` decode as the type without any error (see the module doc).
    pub fn accepts(&self, ty: TypeId, bytes: &[u8]) -> bool {
        self.message(ty.0, bytes, 0)
    }

    /// A hand loop rather than [`Fields`]: this runs over every field of every payload in a
    /// whole-file scan. One-byte keys (almost all of them) take their [`Op`] from a table.
    fn message(&self, index: usize, bytes: &[u8], depth: usize) -> bool {
        let Some(rules) = self.messages.get(index) else { return false };
        let end = bytes.len();
        let mut pos = 0;
        while pos < end {
            let first = bytes[pos];
            let op = if first < 0x80 {
                pos += 1;
                rules.one_byte[first as usize]
            } else {
                let Ok((key, next)) = read_varint(bytes, pos, end) else { return false };
                let number = key >> 3;
                if number == 0 || number > 536_870_911 {
                    return false;
                }
                pos = next;
                Op::of(rules.get(number as u32), key & 7)
            };
            pos = match op {
                Op::Reject => return false,
                Op::Varint => match read_varint(bytes, pos, end) {
                    Ok((_, after)) => after,
                    Err(_) => return false,
                },
                Op::Fixed64 | Op::Fixed32 => {
                    let n = if matches!(op, Op::Fixed64) { 8 } else { 4 };
                    if end - pos < n {
                        return false;
                    }
                    pos + n
                }
                _ => {
                    let Ok((len, start)) = read_varint(bytes, pos, end) else { return false };
                    if len > (end - start) as u64 {
                        return false;
                    }
                    let stop = start + len as usize;
                    if !self.len_fits(op, &bytes[start..stop], depth) {
                        return false;
                    }
                    stop
                }
            };
        }
        true
    }

    /// A length-delimited value where the field's [`Op`] is `op`, in a message at `depth`.
    #[inline(always)]
    fn len_fits(&self, op: Op, b: &[u8], depth: usize) -> bool {
        match op {
            Op::Unknown => unknown_len_is_safe(b, depth),
            Op::Message(m) => depth < MAX_DEPTH && self.message(m as usize, b, depth + 1),
            Op::Text => is_text(b),
            Op::Bytes => true,
            Op::PackedVarints => packed_varints_fit(b),
            Op::PackedFixed(n) => b.len().is_multiple_of(usize::from(n)),
            Op::Reject | Op::Varint | Op::Fixed64 | Op::Fixed32 => false,
        }
    }

    /// One field of a message of type `ty` nested `depth` deep, checked exactly as
    /// [`Rules::accepts`] checks it inside the message: a caller that walks a message's fields
    /// itself (with [`fields`], which stops where the check would) and passes each field here,
    /// or checks it the same way, has checked the whole message.
    pub fn accepts_field(&self, ty: TypeId, number: u32, value: Value<'_>, depth: usize) -> bool {
        let Some(rules) = self.messages.get(ty.0) else { return false };
        match (Op::of(rules.get(number), u64::from(value.wire_type().bits())), value) {
            (Op::Varint, Value::Varint(_))
            | (Op::Fixed64, Value::Fixed64(_))
            | (Op::Fixed32, Value::Fixed32(_)) => true,
            (op, Value::Len(b)) => self.len_fits(op, b, depth),
            _ => false,
        }
    }
}

/// A string field's bytes as the strict decoders accept them: UTF-8. Nearly every string is
/// ASCII, which is checked eight bytes at a time.
#[inline(always)]
pub fn is_text(b: &[u8]) -> bool {
    as_text(b).is_some()
}

/// [`is_text`] giving the text: the fast readers keep property values as `&str`, and checking
/// each one twice (ASCII here, UTF-8 again in `from_utf8`) was a twentieth of a whole-file scan.
#[inline(always)]
pub fn as_text(b: &[u8]) -> Option<&str> {
    if b.is_ascii() {
        // SAFETY: ASCII bytes are valid UTF-8; `is_ascii` has just checked every one of them.
        Some(unsafe { std::str::from_utf8_unchecked(b) })
    } else {
        std::str::from_utf8(b).ok()
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

/// True when `b` is a whole number of varints that [`read_varint`] reads: the last byte ends
/// one, and no varint runs past 10 bytes or past 64 bits (a 10th byte above 1). Packed row ids
/// and timestamps are most of an Insert's bytes, so this counts runs of continuation bytes
/// instead of decoding each value, eight bytes at a time where no varint continues.
fn packed_varints_fit(b: &[u8]) -> bool {
    if b.last().is_some_and(|last| last & 0x80 != 0) {
        return false;
    }
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // Continuation bytes carried into the next word.
    let mut run = 0usize;
    let mut words = b.chunks_exact(8);
    for word in &mut words {
        let w = u64::from_le_bytes([word[0], word[1], word[2], word[3], word[4], word[5], word[6], word[7]]);
        // One bit per byte that ends a varint (its high bit clear).
        let ends = !w & HIGH;
        if ends == 0 {
            run += 8;
            if run >= 10 {
                return false;
            }
            continue;
        }
        // Only the first varint ending here can be too long (the run carried in, then this
        // word's first bytes); those that start and end inside the word have at most 7 bytes.
        let first = (ends.trailing_zeros() / 8) as usize;
        let before = run + first;
        if before >= 10 || (before == 9 && word[first] > 1) {
            return false;
        }
        run = (ends.leading_zeros() / 8) as usize;
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

#[cfg(test)]
mod tests {
    use super::*;

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
        // Varints of 8 to 11 continuation bytes (the 10-byte edge and past it), then an end
        // byte of each kind, at every place across the 8-byte word edges.
        for continued in 8..=11 {
            for last in [0u8, 1, 2, 0x7f] {
                let mut long = vec![0xff; continued];
                long.push(last);
                cases.push(long.clone());
                for pad in 0..17 {
                    let mut c = vec![5u8; pad];
                    c.extend_from_slice(&long);
                    c.extend_from_slice(&[0x96, 0x01, 3]);
                    cases.push(c);
                }
            }
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
}
