//! The wire decoder against hostile input: random and mutated bytes never panic, spans always
//! stay inside the buffer, and absurd nesting is an error rather than a stack overflow.

use crate::common;

use common::{Rng, random_message};
use walscope::codec;
use walscope::schema::SchemaSet;
use walscope::wire::{self, DecodeOptions, WireContent, WireDecoding, WireErrorKind, WireMessage};

fn check_spans(m: &WireMessage, len: usize) {
    assert!(m.span.start <= m.span.end && m.span.end <= len);
    let mut pos = m.span.start;
    for f in &m.fields {
        assert_eq!(f.key.start, pos, "fields tile their message without gaps");
        assert!(f.key.end <= f.value.start && f.value.end <= len);
        if let Some(lp) = &f.len_prefix {
            assert!(f.key.end == lp.start && lp.end == f.value.start);
        }
        match &f.content {
            WireContent::Message { message, .. } | WireContent::Group { message, .. } => {
                check_spans(message, len)
            }
            WireContent::Packed(p) => {
                for s in p.spans() {
                    assert!(f.value.start <= s.start && s.end <= f.value.end);
                }
            }
            _ => {}
        }
        pos = f.whole().end;
    }
    match &m.raw_tail {
        Some(t) => assert!(t.start == pos && t.end <= len),
        None => assert!(pos == m.span.end || m.fields.is_empty() && pos == m.span.start),
    }
}

fn check(d: &WireDecoding, len: usize) {
    check_spans(&d.root, len);
    for e in &d.errors {
        assert!(e.offset <= len, "error offset {} past the end {len}", e.offset);
    }
    if d.root.raw_tail.is_some() {
        assert!(!d.errors.is_empty(), "a raw tail always comes with the error that caused it");
    }
}

#[test]
fn hundred_thousand_random_and_mutated_inputs() {
    let set = SchemaSet::builtin();
    let types: Vec<_> = set.pool().all_messages().filter(|m| !m.is_map_entry()).collect();
    let mut rng = Rng(0x5eed);
    let mut seeds: Vec<Vec<u8>> = Vec::new();
    for t in types.iter().take(400) {
        if let Some(m) = random_message(t, &mut rng, 0) {
            let b = codec::encode(&m);
            if !b.is_empty() {
                seeds.push(b);
            }
        }
    }
    assert!(seeds.len() > 100);
    let mut clean = 0;
    for i in 0..100_000u32 {
        let input: Vec<u8> = if i % 2 == 0 {
            rng.bytes(64)
        } else {
            let mut b = seeds[rng.below(seeds.len() as u64) as usize].clone();
            for _ in 0..=rng.below(3) {
                let at = rng.below(b.len() as u64 + 1) as usize;
                match rng.below(4) {
                    0 if at < b.len() => b[at] ^= 1 << rng.below(8),
                    1 => b.insert(at, rng.next() as u8),
                    2 if at < b.len() => {
                        b.remove(at);
                    }
                    _ => b.truncate(at),
                }
            }
            b
        };
        let d = wire::decode(&input);
        check(&d, input.len());
        if d.is_clean() {
            clean += 1;
        }
        let t = &types[rng.below(types.len() as u64) as usize];
        let opts = DecodeOptions { schema: Some(t.clone()), ..Default::default() };
        let typed = wire::decode_with(&input, &opts);
        check(&typed, input.len());
        // The strict codec agrees with the wire check: clean wire => prost-reflect decodes.
        if typed.is_clean() {
            codec::decode(t, &input).unwrap_or_else(|e| panic!("{}: {e} on {:02x?}", t.full_name(), input));
        }
    }
    assert!(clean > 1000, "mutations should leave some inputs valid ({clean})");
}

fn nested(levels: usize) -> Vec<u8> {
    let mut inner: Vec<u8> = vec![0x08, 0x01];
    for _ in 0..levels {
        let mut outer = vec![0x0a];
        wire::varint::write_varint(inner.len() as u64, &mut outer);
        outer.extend_from_slice(&inner);
        inner = outer;
    }
    inner
}

#[test]
fn ten_thousand_nested_levels_are_an_error_not_a_crash() {
    let bytes = nested(10_000);
    let d = wire::decode(&bytes);
    let e = d.first_error().expect("too deep must be reported");
    assert!(matches!(e.kind, WireErrorKind::TooDeep(100)), "{e}");
    assert!(e.to_string().contains("nesting deeper than 100 levels"));
    check(&d, bytes.len());

    // Groups nest without length prefixes: the same limit applies.
    let mut groups = vec![0x0b; 10_000];
    groups.extend(vec![0x0c; 10_000]);
    let d = wire::decode(&groups);
    assert!(d.errors.iter().any(|e| matches!(e.kind, WireErrorKind::TooDeep(_))), "{:?}", d.errors.first());

    // Schema-guided, with a self-recursive type.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("r.proto"),
        "syntax = \"proto3\"; package t; message R { R r = 1; int32 x = 2; }",
    )
    .unwrap();
    let mut set = SchemaSet::empty();
    set.add_proto_files(&[dir.path().to_path_buf()], &["r.proto".into()]).unwrap();
    let r = set.message("t.R").unwrap();
    let e = codec::decode(&r, &bytes).unwrap_err();
    assert!(e.to_string().contains("nesting deeper than 100"), "{e}");
    // 50 levels are fine.
    let ok = nested(50);
    assert!(wire::decode(&ok).is_clean());
}

#[test]
fn malformed_input_keeps_what_it_could_and_names_the_offset() {
    // field 1 = 150, then field 2 declares 100 bytes but only 3 follow.
    let bytes = [0x08, 0x96, 0x01, 0x12, 0x64, b'a', b'b', b'c'];
    let d = wire::decode(&bytes);
    assert_eq!(d.root.fields.len(), 1);
    assert_eq!(d.root.fields[0].content, WireContent::Varint(150));
    let e = d.first_error().unwrap();
    assert_eq!(e.offset, 4);
    assert_eq!(
        e.to_string(),
        "at byte 4: length prefix says 100 bytes but only 3 remain (truncated or corrupt frame)"
    );
    assert_eq!(d.root.raw_tail, Some(3..8));

    let huge = [0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f];
    let e = wire::decode(&huge).first_error().unwrap().clone();
    assert!(matches!(e.kind, WireErrorKind::LengthOverrun { declared: 4294967295, .. }));

    let bad_wire_type = [0x08, 0x01, 0x0f];
    let e = wire::decode(&bad_wire_type).first_error().unwrap().clone();
    assert_eq!((e.offset, e.kind), (2, WireErrorKind::InvalidWireType(7)));

    let overlong = [0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f];
    let e = wire::decode(&overlong).first_error().unwrap().clone();
    assert_eq!((e.offset, e.kind), (1, WireErrorKind::VarintOverflow));
}

#[test]
fn guesses_strings_messages_and_packed_values() {
    // 1: "hello", 2: {1: 5}, 3: packed floats [1.0, 2.5], 4: group {1: 7}
    let mut b = vec![0x0a, 5];
    b.extend_from_slice(b"hello");
    b.extend_from_slice(&[0x12, 2, 0x08, 5]);
    b.extend_from_slice(&[0x1a, 8]);
    b.extend_from_slice(&1.0f32.to_le_bytes());
    b.extend_from_slice(&2.5f32.to_le_bytes());
    b.extend_from_slice(&[0x23, 0x08, 0x07, 0x24]);
    let d = wire::decode(&b);
    assert!(d.is_clean(), "{:?}", d.errors);
    let f = &d.root.fields;
    assert_eq!(f[0].content, WireContent::Text);
    assert!(
        matches!(&f[1].content, WireContent::Message { guessed: true, message } if message.fields.len() == 1)
    );
    assert!(matches!(&f[2].content, WireContent::Packed(p) if p.len() == 2));
    assert!(
        matches!(&f[3].content, WireContent::Group { message, end_key: Some(_) } if message.fields[0].content == WireContent::Varint(7))
    );
    assert_eq!(f[3].whole(), 21..25, "group span includes its end key");
}
