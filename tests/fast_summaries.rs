//! The fast summary reader gives exactly what the full analysis gives: on every frame of the
//! samples (clean and damaged), on thousands of frames mutated at random and on purpose (the
//! reader must either agree or hand the frame to the full analysis), and through the CLI
//! (`inspect`, `--jsonl`, `--stats`, `--filter` byte for byte with `--full-analysis`).

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use prost_reflect::{DynamicMessage, MapKey, Value};
use std::path::Path;
use std::process::Command;
use walscope::dump::view::FrameDecoder;
use walscope::dump::{DumpFile, OpenOptions, SyncPolicy};
use walscope::schema::SchemaSet;
use walscope::sim::rng::SimRng;
use walscope::sim::sample::{Corruption, write_milvus_dump};
use walscope::sim::{WalGenConfig, WalGenerator};
use walscope::wal::{self, RowFacts, SummaryReader};

const T: &str = "milvus.proto.milvus.DumpMessagesResponse";

fn open(path: &Path, set: &SchemaSet) -> DumpFile {
    let opts = OpenOptions { message_type: Some(set.message(T).unwrap()), ..Default::default() };
    let d = DumpFile::open(path, opts).unwrap();
    d.wait_indexed();
    d
}

#[test]
fn rows_equal_the_full_analysis_on_every_sample_frame() {
    let set = SchemaSet::builtin();
    let dir = tempfile::tempdir().unwrap();
    let desc = set.message(T).unwrap();
    let reader = SummaryReader::new(set.pool(), &desc).expect("the built-in schema suits the reader");
    for corrupt in [None, Some(Corruption::Truncate), Some(Corruption::Garbage), Some(Corruption::HugeLength)]
    {
        let path = dir.path().join(format!("{corrupt:?}.dump"));
        write_milvus_dump(set.pool(), &path, 3000, 7, SyncPolicy::default(), corrupt).unwrap();
        let d = open(&path, &set);
        let fast = FrameDecoder::new(set.pool().clone(), Some(desc.clone()), 16);
        let slow = FrameDecoder::new(set.pool().clone(), Some(desc.clone()), 16).without_fast_summaries();
        assert!(fast.has_fast_summaries() && !slow.has_fast_summaries());
        let mut read_fast = 0;
        for i in 0..d.frame_count() {
            let (a, b) = (fast.view_uncached(&d, i), slow.view_uncached(&d, i));
            assert_eq!(a, b, "{corrupt:?} frame {i}");
            let loc = d.frame(i).unwrap();
            read_fast += usize::from(reader.read(d.message_bytes(&loc).1).is_some());
        }
        // Every generated message is sound, so nearly all rows take the fast path; the rest
        // are the frames the corruption touched.
        assert!(read_fast + 2 >= d.frame_count(), "{corrupt:?}: {read_fast} of {} fast", d.frame_count());
    }
}

/// The facts the full analysis gives for a frame, if it has no problem at all.
fn full_facts(set: &SchemaSet, frame: &[u8]) -> Option<RowFacts> {
    let desc = set.message(T).unwrap();
    let decoded = walscope::codec::decode(&desc, frame).ok()?.message;
    if decoded.has_field_by_name("status") || !decoded.has_field_by_name("message") {
        return None;
    }
    let imm = decoded.get_field_by_name("message")?.as_message()?.clone();
    let w = wal::analyze_row(set.pool(), &imm);
    w.problems.is_empty().then(|| w.row_facts())
}

fn set_prop(frame: &DynamicMessage, key: &str, value: Option<String>) -> DynamicMessage {
    let mut out = frame.clone();
    if let Some(Value::Message(imm)) = out.get_field_by_name_mut("message")
        && let Some(Value::Map(props)) = imm.get_field_by_name_mut("properties")
    {
        match value {
            Some(v) => props.insert(MapKey::String(key.into()), Value::String(v)),
            None => props.remove(&MapKey::String(key.into())),
        };
    }
    out
}

fn prop(frame: &DynamicMessage, key: &str) -> Option<String> {
    let imm = frame.get_field_by_name("message")?.as_message()?.clone();
    let props = imm.get_field_by_name("properties")?;
    props.as_map()?.get(&MapKey::String(key.into()))?.as_str().map(str::to_string)
}

/// One frame changed at random: flipped, cut or inserted bytes, or a property (type,
/// version, timeticks, ids, headers) given a value the analysis must judge.
fn mutate(set: &SchemaSet, rng: &mut SimRng, frame: &[u8]) -> Vec<u8> {
    let pick = |rng: &mut SimRng, n: usize| rng.range(0, n as u64 - 1) as usize;
    let mut bytes = frame.to_vec();
    match rng.range(0, 9) {
        0 => {
            let i = pick(rng, bytes.len());
            bytes[i] ^= 1 << rng.range(0, 7);
        }
        1 => bytes.truncate(pick(rng, bytes.len())),
        2 => {
            let i = pick(rng, bytes.len());
            bytes.insert(i, rng.range(0, 255) as u8);
        }
        3 => bytes.extend_from_slice(&[0x1a, 0x02, 0x08, 0x01]), // a second `message`: merged
        4 => bytes.extend_from_slice(&[0xf8, 0x3e, 0x05]),       // an unknown varint field
        5 if rng.percent(50) => bytes = with_entry_given_twice(&bytes, rng),
        _ => {
            let desc = set.message(T).unwrap();
            let msg = DynamicMessage::decode(desc, frame).unwrap();
            let keys = ["_t", "_v", "_tt", "_btt", "_wt", "_vc", "_lc", "_h", "_tx", "_ch", "_bh", "_rh"];
            let key = keys[pick(rng, keys.len())];
            let values = [
                None,
                Some("".to_string()),
                Some("2".into()),
                Some("1".into()),
                Some("0".into()),
                Some("999".into()),
                Some("4711".into()),
                Some("x".into()),
                Some("-1".into()),
                Some("zzzzzzzzzzzzzz".into()),
                Some(BASE64.encode([0x08, 0x96, 0x01])),
                Some(BASE64.encode([0x0a, 0x05, 0x61])),
                Some("not base64!".into()),
                Some(BASE64.encode([0xff; 300])),
            ];
            let mut value = values[pick(rng, values.len())].clone();
            if rng.range(0, 3) == 0
                && let Some(old) = prop(&msg, key)
                && let Ok(mut raw) = BASE64.decode(&old)
                && !raw.is_empty()
            {
                let i = pick(rng, raw.len());
                raw[i] ^= 1 << rng.range(0, 7);
                value = Some(BASE64.encode(raw));
            }
            bytes = walscope::codec::encode(&set_prop(&msg, key, value));
        }
    }
    bytes
}

/// A property entry added inside the frame's `message` whose key or value comes twice, the first
/// of them not UTF-8 half of the time: the later one replaces it, but the decoders refuse it.
fn with_entry_given_twice(frame: &[u8], rng: &mut SimRng) -> Vec<u8> {
    let Some(imm) = walscope::wire::scan::single_len(frame, 2, None) else { return frame.to_vec() };
    let bad: &[u8] = if rng.percent(50) { &[0xff] } else { b"x" };
    let key = ["_t", "_v", "_tt", "_vc", "_zz"][rng.range(0, 4) as usize].as_bytes();
    let mut entry = Vec::new();
    let field = |out: &mut Vec<u8>, n: u8, b: &[u8]| {
        out.extend_from_slice(&[n << 3 | 2, b.len() as u8]);
        out.extend_from_slice(b);
    };
    if rng.percent(50) {
        field(&mut entry, 1, key);
        field(&mut entry, 2, bad);
        field(&mut entry, 2, b"2");
    } else {
        field(&mut entry, 1, bad);
        field(&mut entry, 1, key);
        field(&mut entry, 2, b"2");
    }
    let mut inner = imm.to_vec();
    field(&mut inner, 3, &entry);
    let mut out = vec![0x12];
    walscope::wire::varint::write_varint(inner.len() as u64, &mut out);
    out.extend_from_slice(&inner);
    out
}

#[test]
fn mutated_frames_are_read_alike_or_handed_to_the_full_analysis() {
    let set = SchemaSet::builtin();
    let desc = set.message(T).unwrap();
    let reader = SummaryReader::new(set.pool(), &desc).unwrap();
    let cfg = WalGenConfig { seed: 11, total: Some(400), ..Default::default() };
    let frames: Vec<Vec<u8>> = WalGenerator::new(set.pool(), cfg).take(400).map(|m| m.response).collect();
    let mut rng = SimRng::new(5);
    let (mut agreed, mut handed) = (0, 0);
    for round in 0..8000 {
        let original = &frames[round % frames.len()];
        let frame = mutate(&set, &mut rng, original);
        let full = full_facts(&set, &frame);
        match reader.read(&frame) {
            Some(fast) => {
                assert_eq!(Some(&fast), full.as_ref(), "round {round}: {}", BASE64.encode(&frame));
                agreed += 1;
            }
            None => handed += 1,
        }
    }
    // Both outcomes must occur often, or the mutations test nothing.
    assert!(agreed > 1500 && handed > 1500, "agreed {agreed}, handed over {handed}");
}

/// Walking a message with `fields` and checking each field with `Rules::accepts_field` (what
/// the fused envelope reader does) says yes exactly where `Rules::accepts` does.
#[test]
fn field_by_field_checks_agree_with_the_whole_message_check() {
    use walscope::wire::scan::{Rules, fields};
    let set = SchemaSet::builtin();
    let mut rules = Rules::default();
    let types: Vec<_> = [T, "milvus.proto.common.ImmutableMessage", "milvus.proto.msg.InsertRequest"]
        .iter()
        .map(|t| rules.add(&set.message(t).unwrap()))
        .collect();
    let cfg = WalGenConfig { seed: 12, total: Some(300), ..Default::default() };
    let frames: Vec<Vec<u8>> = WalGenerator::new(set.pool(), cfg).take(300).map(|m| m.response).collect();
    let mut rng = SimRng::new(9);
    let (mut yes, mut no) = (0, 0);
    for round in 0..6000 {
        let frame = mutate(&set, &mut rng, &frames[round % frames.len()]);
        // The frame, the ImmutableMessage inside it, and its payload, each as its own type.
        let imm = walscope::wire::scan::single_len(&frame, 2, None).unwrap_or_default();
        let payload = fields(imm).flatten().find(|(n, _)| *n == 2).map_or(&[][..], |(_, v)| match v {
            walscope::wire::scan::Value::Len(b) => b,
            _ => &[],
        });
        for (ty, bytes) in types.iter().zip([&frame[..], imm, payload]) {
            let whole = rules.accepts(*ty, bytes);
            let by_field = fields(bytes).all(|f| f.is_ok_and(|(n, v)| rules.accepts_field(*ty, n, v, 0)));
            assert_eq!(whole, by_field, "round {round}: {}", BASE64.encode(bytes));
            if whole { yes += 1 } else { no += 1 }
        }
    }
    assert!(yes > 3000 && no > 1000, "accepted {yes}, refused {no}");
}

fn walscope(args: &[&str]) -> Vec<u8> {
    let out = Command::new(env!("CARGO_BIN_EXE_walscope")).args(args).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

fn cli_outputs_match(messages: u64, corruption: Option<Corruption>) {
    let set = SchemaSet::builtin();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("d.dump");
    write_milvus_dump(set.pool(), &path, messages, 3, SyncPolicy::default(), corruption).unwrap();
    let file = path.to_str().unwrap();
    for extra in [
        &["--jsonl"][..],
        &[],
        &["--stats"],
        &["--stats", "--jsonl"],
        &["--filter", "type=Insert|Delete,text=rows=3"],
        &["--filter", "status=encrypted", "--jsonl"],
        &["--filter", "collection=4492,vchannel=dml_1", "--limit", "50"],
    ] {
        let mut fast = vec!["inspect", file];
        fast.extend_from_slice(extra);
        let mut full = fast.clone();
        full.push("--full-analysis");
        let (a, b) = (walscope(&fast), walscope(&full));
        assert!(a.len() > 100, "{extra:?} printed {} bytes", a.len());
        assert!(a == b, "{extra:?}: outputs differ");
    }
    stats_agree_with_the_listing(file, corruption.is_some());
}

/// `--stats` (counted on every core, then merged) against the same counts taken from the
/// `--jsonl` listing (one row per frame, in order, on another path).
fn stats_agree_with_the_listing(file: &str, damaged_file: bool) {
    let stats: serde_json::Value =
        serde_json::from_slice(&walscope(&["inspect", file, "--stats", "--jsonl"])).expect("stats JSON");
    let listing = walscope(&["inspect", file, "--jsonl"]);
    let (mut frames, mut bytes, mut encrypted, mut damaged, mut damaged_bytes) =
        (0u64, 0u64, 0u64, 0u64, 0u64);
    let mut per_type = std::collections::BTreeMap::<String, u64>::new();
    let mut per_vchannel = std::collections::BTreeMap::<String, u64>::new();
    let (mut lo, mut hi) = (u64::MAX, 0u64);
    for line in listing.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        let row: serde_json::Value = serde_json::from_slice(line).expect("row JSON");
        if let Some(d) = row.get("damaged") {
            damaged += 1;
            damaged_bytes += d["len"].as_u64().expect("len");
            continue;
        }
        frames += 1;
        bytes += row["size"].as_u64().expect("size");
        encrypted += u64::from(row["status"] == "encrypted");
        if let Some(t) = row["type"].as_str() {
            *per_type.entry(t.to_string()).or_default() += 1;
        }
        if let Some(v) = row["vchannel"].as_str().filter(|v| !v.is_empty()) {
            *per_vchannel.entry(v.to_string()).or_default() += 1;
        }
        if let Some(t) = row["timetick"].as_u64() {
            (lo, hi) = (lo.min(t), hi.max(t));
        }
    }
    assert!(frames > 1000, "{frames} frames");
    assert_eq!(damaged > 0, damaged_file, "{damaged} damaged ranges");
    assert_eq!(stats["frames"], frames);
    assert_eq!(stats["bytes"], bytes);
    assert_eq!(stats["encrypted"], encrypted);
    assert_eq!(stats["damaged_ranges"], damaged);
    assert_eq!(stats["damaged_bytes"], damaged_bytes);
    assert_eq!(stats["per_type"], serde_json::json!(per_type));
    assert_eq!(stats["per_vchannel"], serde_json::json!(per_vchannel));
    assert_eq!(stats["timetick"]["from"], lo);
    assert_eq!(stats["timetick"]["to"], hi);
}

#[test]
fn cli_output_is_the_same_with_the_full_analysis() {
    cli_outputs_match(3000, Some(Corruption::Garbage));
}

/// The 100,000-frame check of the issue (release build: `.ci/run` runs it with `--ignored`).
/// The clean dump (about 200 MB) is large enough for `--stats` to count its frames while the
/// index is built on every core; the damaged one's are counted over its index.
#[test]
#[ignore]
fn cli_output_is_the_same_on_100k_frames() {
    cli_outputs_match(100_000, None);
    cli_outputs_match(100_000, Some(Corruption::Garbage));
}

/// A large dump's index is stored once built and reused while the file is unchanged; any
/// change (appended frames, edited head or tail bytes, another framing) scans afresh.
#[test]
fn persisted_index_is_reused_only_for_the_same_file() {
    use walscope::dump::index::CacheUse;
    use walscope::dump::{Framing, IndexCache};
    let set = SchemaSet::builtin();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("d.dump");
    write_milvus_dump(set.pool(), &path, 2000, 5, SyncPolicy::default(), Some(Corruption::Garbage)).unwrap();
    let cache = dir.path().join("cache");
    let opts = |cache_on: bool| OpenOptions {
        message_type: Some(set.message(T).unwrap()),
        index_cache: if cache_on {
            IndexCache::At { dir: cache.clone(), min_bytes: 0 }
        } else {
            IndexCache::Off
        },
        ..Default::default()
    };
    let settled = |d: &DumpFile| {
        d.wait_indexed();
        // The index thread stores the cache after it publishes `done`.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while d.index().cache_use() == CacheUse::Pending {
            assert!(std::time::Instant::now() < deadline, "the index thread never finished");
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        d.index().cache_use()
    };
    let open_as = |o: OpenOptions, expect: CacheUse| {
        let d = DumpFile::open(&path, o).unwrap();
        assert_eq!(settled(&d), expect);
        (d.index().offsets(0..usize::MAX), d.problems())
    };
    let fresh = open_as(opts(false), CacheUse::NotCached);
    assert!(!std::fs::exists(&cache).unwrap(), "Off writes nothing");
    let first = open_as(opts(true), CacheUse::Stored);
    assert_eq!(first, fresh);
    let files: Vec<_> = std::fs::read_dir(&cache).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(files.len(), 1, "one cache file");
    assert_eq!(fresh.1.len(), 1, "the garbage range is part of the index");

    // The reopen reads the cache: poison its offsets (same length, still ascending) and see
    // them come back, which proves the scan did not run.
    let mut data = std::fs::read(&files[0]).unwrap();
    let n = data.len();
    let last = u64::from_le_bytes(data[n - 8..].try_into().unwrap());
    data[n - 8..].copy_from_slice(&(last + 1).to_le_bytes());
    std::fs::write(&files[0], &data).unwrap();
    let reused = open_as(opts(true), CacheUse::Loaded);
    assert_eq!(reused.0.last(), Some(&(last + 1)), "the cached index was used");
    assert_eq!(reused.1, fresh.1);

    // A different framing is a different index; a truncated cache file is ignored.
    let other = DumpFile::open(&path, OpenOptions { framing: Some(Framing::U32Be), ..opts(true) }).unwrap();
    assert_eq!(settled(&other), CacheUse::Stored);
    assert_ne!(other.index().offsets(0..usize::MAX), reused.0);
    std::fs::write(&files[0], &data[..n - 3]).unwrap();
    assert_eq!(open_as(opts(true), CacheUse::Stored), fresh, "a damaged cache file is rebuilt");

    // Appending to the dump (a salvage still writing) changes the key: scanned afresh.
    std::fs::write(&files[0], &data).unwrap();
    let dump_bytes = std::fs::read(&path).unwrap();
    let last_frame = dump_bytes[*fresh.0.last().unwrap() as usize..].to_vec();
    let mut f = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
    std::io::Write::write_all(&mut f, &last_frame).unwrap();
    drop(f);
    let appended = open_as(opts(true), CacheUse::Stored);
    assert_eq!(appended.0.len(), fresh.0.len() + 1, "the appended frame is indexed");
    assert_eq!(&appended.0[..fresh.0.len()], &fresh.0[..]);
}
