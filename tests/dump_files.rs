//! Dump reading against the corrupt-file catalogue, framing detection, and the writer.

use crate::common;

use walscope::codec;
use walscope::dump::{DumpFile, Framing, OpenOptions, TextEncoding};
use walscope::schema::SchemaSet;

const T: &str = "milvus.proto.milvus.DumpMessagesResponse";

/// Distinct DumpMessagesResponse bodies of varying sizes.
fn messages(n: usize) -> Vec<Vec<u8>> {
    let set = SchemaSet::builtin();
    let desc = set.message(T).unwrap();
    (0..n)
        .map(|i| {
            let json = format!(
                r#"{{"message": {{"id": {{"id": "{}", "WALName": "RocksMQ"}}, "payload": "{}", "properties": {{"_t": "2", "_v": "1", "_vc": "ch{}"}}}}}}"#,
                walscope_base36(i as u64 + 1000),
                base64_of(&vec![i as u8; i % 300]),
                i % 3
            );
            codec::encode(&codec::from_json(&desc, &json).unwrap())
        })
        .collect()
}

fn walscope_base36(mut v: u64) -> String {
    let digits = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut s = Vec::new();
    loop {
        s.push(digits[(v % 36) as usize]);
        v /= 36;
        if v == 0 {
            break;
        }
    }
    s.reverse();
    String::from_utf8(s).unwrap()
}

fn base64_of(b: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(b)
}

fn frame_all(framing: Framing, msgs: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    for m in msgs {
        walscope::dump::framing::write_frame(framing, m, &mut out);
    }
    out
}

fn open(bytes: Vec<u8>, typed: bool) -> DumpFile {
    let set = SchemaSet::builtin();
    let opts = OpenOptions { message_type: typed.then(|| set.message(T).unwrap()), ..Default::default() };
    let d = DumpFile::from_bytes("test.dump", bytes, opts);
    d.wait_indexed();
    d
}

/// Every frame of `d` in order, as message bytes.
fn frames(d: &DumpFile) -> Vec<Vec<u8>> {
    (0..d.frame_count()).map(|i| d.message_bytes(&d.frame(i).unwrap()).1.to_vec()).collect()
}

#[test]
fn detects_every_framing_with_confidence() {
    let msgs = messages(20);
    let set = SchemaSet::builtin();
    for framing in [Framing::VarintDelimited, Framing::Grpc, Framing::Brpc, Framing::U32Be, Framing::U32Le] {
        let bytes = frame_all(framing, &msgs);
        for desc in [None, Some(set.message(T).unwrap())] {
            let d = DumpFile::from_bytes(
                "x",
                bytes.clone(),
                OpenOptions { message_type: desc.clone(), ..Default::default() },
            );
            assert_eq!(d.framing, framing, "{} typed={}: {}", framing, desc.is_some(), d.detection.reason);
            assert!(d.detection.confidence > 0.5, "{framing}: {:?}", d.detection);
            d.wait_indexed();
            assert_eq!(frames(&d), msgs, "{framing}");
        }
    }
    let single = DumpFile::from_bytes("x", msgs[5].clone(), OpenOptions::default());
    assert_eq!(single.framing, Framing::Single, "{}", single.detection.reason);
    // A forced framing is obeyed.
    let forced = DumpFile::from_bytes(
        "x",
        frame_all(Framing::Grpc, &msgs),
        OpenOptions { framing: Some(Framing::Grpc), ..Default::default() },
    );
    assert_eq!((forced.framing, forced.detection.confidence), (Framing::Grpc, 1.0));
}

#[test]
fn base64_and_hex_text_dumps() {
    use base64::Engine;
    let msgs = messages(10);
    let bin = frame_all(Framing::VarintDelimited, &msgs);
    let dir = tempfile::tempdir().unwrap();
    // base64, wrapped at 76 columns like MIME; and one base64 message per line (single-frame lines).
    let b64 = base64::engine::general_purpose::STANDARD.encode(&bin);
    let wrapped: Vec<String> =
        b64.as_bytes().chunks(76).map(|c| String::from_utf8(c.to_vec()).unwrap()).collect();
    let p = dir.path().join("dump.b64");
    std::fs::write(&p, wrapped.join("\n")).unwrap();
    let d = DumpFile::open(&p, OpenOptions::default()).unwrap();
    d.wait_indexed();
    assert_eq!(d.encoding, TextEncoding::Base64);
    assert_eq!(frames(&d), msgs);
    let hex: String = bin.iter().map(|b| format!("{b:02x}")).collect();
    let p = dir.path().join("dump.hex");
    std::fs::write(&p, hex).unwrap();
    let d = DumpFile::open(&p, OpenOptions::default()).unwrap();
    d.wait_indexed();
    assert_eq!(d.encoding, TextEncoding::Hex);
    assert_eq!(frames(&d), msgs);
    std::fs::write(&p, "zz not hex at all\n").unwrap();
    let e = DumpFile::open(&p, OpenOptions { encoding: Some(TextEncoding::Hex), ..Default::default() })
        .err()
        .unwrap();
    assert!(e.to_string().contains("not hex"), "{e}");
}

#[test]
fn truncated_tail_keeps_every_complete_frame() {
    let msgs = messages(30);
    let mut bytes = frame_all(Framing::VarintDelimited, &msgs);
    bytes.truncate(bytes.len() - 7);
    for typed in [false, true] {
        let d = open(bytes.clone(), typed);
        assert_eq!(frames(&d), msgs[..29], "typed={typed}");
        let p = d.problems();
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(p[0].truncated);
        let last_start = frame_all(Framing::VarintDelimited, &msgs[..29]).len();
        assert_eq!(p[0].offset as usize, last_start);
        assert!(p[0].reason.contains(&format!("truncated tail at byte {last_start}")), "{}", p[0].reason);
    }
}

#[test]
fn garbage_frame_in_the_middle_loses_no_intact_frame() {
    let msgs = messages(40);
    let mut rng = common::Rng(7);
    for trial in 0..20 {
        let mut bytes = frame_all(Framing::VarintDelimited, &msgs[..20]);
        let at = bytes.len();
        let garbage = rng.bytes(200).into_iter().chain([0xff]).collect::<Vec<u8>>();
        bytes.extend_from_slice(&garbage);
        bytes.extend(frame_all(Framing::VarintDelimited, &msgs[20..]));
        let d = open(bytes, true);
        assert_eq!(frames(&d), msgs, "trial {trial}");
        let p = d.problems();
        assert_eq!(p.len(), 1, "trial {trial}: {p:?}");
        assert_eq!((p[0].offset as usize, p[0].len as usize), (at, garbage.len()), "trial {trial}: {p:?}");
        // The words name the range, and an offset outside it only with how the range was found
        // from it (the list's damaged row once named a byte outside its own range, unexplained).
        let (r, end) = (&p[0].reason, at + garbage.len());
        assert!(r.starts_with(&format!("bytes {at}..{end} skipped")), "trial {trial}: {r}");
        for named in r.split("byte ").skip(1).filter_map(|t| t.split(|c: char| !c.is_ascii_digit()).next()) {
            let Ok(n) = named.parse::<usize>() else { continue };
            assert!((at..=end).contains(&n) || r.contains("traced back to byte"), "trial {trial}: {r}");
        }
    }
}

#[test]
fn huge_length_prefix_is_skipped() {
    let msgs = messages(10);
    let mut bytes = frame_all(Framing::VarintDelimited, &msgs[..5]);
    let at = bytes.len();
    walscope::wire::varint::write_varint(1u64 << 62, &mut bytes);
    bytes.extend_from_slice(b"\x0a\x02\x08\x01");
    bytes.extend(frame_all(Framing::VarintDelimited, &msgs[5..]));
    for typed in [false, true] {
        let d = open(bytes.clone(), typed);
        let got = frames(&d);
        if typed {
            assert_eq!(got, msgs);
        } else {
            // Without a type the filler "02 08 01" is itself a valid frame; no real one is lost.
            let mut it = got.iter();
            assert!(msgs.iter().all(|m| it.any(|g| g == m)), "every message, in order");
        }
        let p = d.problems();
        assert_eq!(p[0].offset as usize, at);
        assert!(p[0].reason.contains("exceeds the 512 MiB limit"), "{}", p[0].reason);
    }
}

#[test]
fn zero_length_frames_random_bytes_and_empty_files() {
    let msgs = messages(3);
    let mut with_empty = msgs.clone();
    with_empty.insert(1, Vec::new());
    with_empty.insert(3, Vec::new());
    let d = open(frame_all(Framing::VarintDelimited, &with_empty), true);
    assert_eq!(frames(&d), with_empty);
    assert!(d.problems().is_empty());

    let empty = open(Vec::new(), true);
    assert_eq!(empty.frame_count(), 0);
    assert!(empty.problems().is_empty());
    assert_eq!(empty.detection.reason, "empty file");

    let mut rng = common::Rng(99);
    for _ in 0..50 {
        let junk = rng.bytes(4096);
        let d = open(junk.clone(), true);
        // Whatever is found, frames and problems tile the file without overlap.
        let mut covered: Vec<(u64, u64)> = (0..d.frame_count())
            .map(|i| {
                let f = d.frame(i).unwrap();
                (f.offset, f.end())
            })
            .collect();
        covered.extend(d.problems().iter().map(|p| (p.offset, p.offset + p.len)));
        covered.sort();
        let mut pos = 0;
        for (s, e) in covered {
            assert_eq!(s, pos, "gap or overlap at {s}");
            pos = e;
        }
        assert_eq!(pos, junk.len() as u64);
    }
}

#[test]
fn index_of_a_million_frames_costs_under_64_mib() {
    // One million small frames (10 MB), indexed; the index must stay far below 64 MiB.
    let frame = [0x08u8, 0x0a, 0x02, 0x08, 0x01, 0x12, 0x02, b'o', b'k'];
    let mut bytes = Vec::with_capacity(frame.len() * 1_000_000);
    for _ in 0..1_000_000 {
        bytes.extend_from_slice(&frame);
    }
    let d = DumpFile::from_bytes(
        "m",
        bytes,
        OpenOptions { framing: Some(Framing::VarintDelimited), ..Default::default() },
    );
    d.wait_indexed();
    assert_eq!(d.frame_count(), 1_000_000);
    let heap = d.index().heap_bytes();
    assert!(heap < 64 << 20, "index uses {heap} bytes");
    assert!(heap >= 8_000_000, "8 bytes per frame: {heap}");
}
