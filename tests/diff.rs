//! `walscope diff` and the diff library (#40): a message diff names exactly what changed, with
//! byte ranges; its edits turn A into B for random messages of every built-in type; a dump
//! diff of two salvages of one window, one cut short, reports exactly the missing frames; the
//! CLI's exit codes and `--jsonl`.

use crate::common::{Rng, random_message};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use prost_reflect::{DynamicMessage, MessageDescriptor, ReflectMessage, Value};
use std::path::{Path, PathBuf};
use walscope::codec;
use walscope::diff::{ChangeKind, diff_messages};
use walscope::schema::SchemaSet;

/// B made from A: each field kept, taken from an unrelated message `c`, or cleared, and lists
/// reordered or cut, so that pairs share most of their structure (as a frame and its edit do).
fn related(a: &DynamicMessage, c: &DynamicMessage, rng: &mut Rng) -> DynamicMessage {
    let mut b = a.clone();
    for fd in a.descriptor().fields() {
        match rng.below(6) {
            0 => {
                if c.has_field(&fd) {
                    b.set_field(&fd, c.get_field(&fd).into_owned());
                } else {
                    b.clear_field(&fd);
                }
            }
            1 => b.clear_field(&fd),
            2 if fd.is_list() => {
                if let Value::List(mut items) = b.get_field(&fd).into_owned() {
                    if items.len() > 1 {
                        let k = rng.below(items.len() as u64) as usize;
                        let x = items.remove(k);
                        if rng.chance(50) {
                            items.push(x);
                        }
                    }
                    b.set_field(&fd, Value::List(items));
                }
            }
            3 => {
                if let Value::Message(m) = b.get_field(&fd).into_owned()
                    && let Value::Message(cm) = c.get_field(&fd).into_owned()
                {
                    b.set_field(&fd, Value::Message(related(&m, &cm, rng)));
                }
            }
            _ => {}
        }
    }
    b
}

fn check_pair(desc: &MessageDescriptor, a: &[u8], b: &[u8]) -> Result<(), TestCaseError> {
    let fail = |what: &str, e: &dyn std::fmt::Display| {
        TestCaseError::fail(format!("{}: {what}: {e}", desc.full_name()))
    };
    let same = diff_messages(Some(desc), a, a).map_err(|e| fail("diff(a, a)", &e))?;
    prop_assert!(same.is_empty(), "diff(a, a) of {} is not empty: {:?}", desc.full_name(), same.changes);
    let d = diff_messages(Some(desc), a, b).map_err(|e| fail("diff(a, b)", &e))?;
    let want = codec::decode(desc, b).map_err(|e| fail("decode b", &e))?.message;
    let have = codec::decode(desc, a).map_err(|e| fail("decode a", &e))?.message;
    prop_assert_eq!(
        d.is_empty(),
        have == want,
        "{}: empty diff iff equal: {:?}",
        desc.full_name(),
        d.changes
    );
    let edits = d.to_edits().map_err(|e| fail("to_edits", &e))?;
    let applied = codec::apply_edits(desc, a, &edits).map_err(|e| fail(&format!("apply {edits:?}"), &e))?;
    let got = codec::decode(desc, &applied).map_err(|e| fail("decode applied", &e))?.message;
    prop_assert_eq!(
        codec::encode(&got),
        codec::encode(&want),
        "{}: diff(a, b) applied to a is not b\nchanges: {:?}\nedits: {:?}",
        desc.full_name(),
        d.changes,
        edits
    );
    for c in &d.changes {
        if let Some(s) = &c.a_span {
            prop_assert!(s.end <= a.len(), "{}: A span {s:?} past the end", c.path);
        }
        if let Some(s) = &c.b_span {
            prop_assert!(s.end <= b.len(), "{}: B span {s:?} past the end", c.path);
        }
    }
    Ok(())
}

/// Property: for random messages of every built-in type, `diff(a, a)` is empty and the edits
/// of `diff(a, b)` applied to `a` give `b` (field by field).
#[test]
fn diff_of_a_message_with_itself_is_empty_and_its_edits_make_b() {
    let set = SchemaSet::builtin();
    let mut tested = 0;
    let changed = std::cell::Cell::new(0usize);
    for desc in set.pool().all_messages() {
        if desc.is_map_entry() || desc.full_name().starts_with("google.protobuf.") {
            continue;
        }
        tested += 1;
        let mut runner =
            TestRunner::new(Config { cases: 32, failure_persistence: None, ..Config::default() });
        let result = runner.run(&any::<u64>(), |seed| {
            let mut rng = Rng(seed);
            let Some(a) = random_message(&desc, &mut rng, 0) else { return Ok(()) };
            let Some(c) = random_message(&desc, &mut rng, 0) else { return Ok(()) };
            let b = if rng.chance(25) { c.clone() } else { related(&a, &c, &mut rng) };
            let (ab, bb) = (codec::encode(&a), codec::encode(&b));
            if ab != bb {
                changed.set(changed.get() + 1);
            }
            check_pair(&desc, &ab, &bb)?;
            check_pair(&desc, &bb, &ab)
        });
        if let Err(e) = result {
            panic!("{}: {e}", desc.full_name());
        }
    }
    assert!(tested > 150, "only {tested} built-in message types found");
    assert!(changed.get() > tested * 8, "only {} differing pairs", changed.get());
}

/// A list element equal to one elsewhere is a move, not a remove and an add.
#[test]
fn a_reordered_list_element_is_a_move() {
    let set = SchemaSet::builtin();
    let d = set.message("openmldb.datasync.TaskStatusResponse").expect("type");
    let msg = |order: &[u32]| {
        let tasks: Vec<String> =
            order.iter().map(|t| format!("{{\"progress\": {{\"tid\": {t}}}}}")).collect();
        let json = format!("{{\"task\": [{}]}}", tasks.join(","));
        codec::encode(&codec::from_json(&d, &json).expect("json"))
    };
    let (a, b) = (msg(&[1, 2, 3]), msg(&[2, 3, 1]));
    let diff = diff_messages(Some(&d), &a, &b).expect("diff");
    assert_eq!(diff.changes.len(), 1, "{:?}", diff.changes);
    let c = &diff.changes[0];
    assert_eq!((c.path.as_str(), c.kind, c.moved), ("task[2]", ChangeKind::Moved, Some((0, 2))), "{c:?}");
}

// --- The CLI and dumps -------------------------------------------------------------------

const BIN: &str = env!("CARGO_BIN_EXE_walscope");

fn walscope(args: &[&str]) -> std::process::Output {
    std::process::Command::new(BIN).args(args).output().expect("walscope runs")
}

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn jsonl(o: &std::process::Output) -> Vec<serde_json::Value> {
    stdout(o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {e}: {l}")))
        .collect()
}

fn sample(dir: &Path, name: &str, messages: u64) -> PathBuf {
    let out = dir.join(name);
    let n = messages.to_string();
    let o = walscope(&["sample", "--kind", "milvus-dump", "--messages", &n, "--seed", "1", "--out", s(&out)]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    out
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// The span of the `properties` entry with key `key` in an `ImmutableMessage` inside a
/// `DumpMessagesResponse`, found with the schema-less wire decoder (not the typed tree the
/// diff walks): its field `message`, then that one's field `properties`.
fn property_entry_span(frame: &[u8], key: &str) -> std::ops::Range<usize> {
    let set = SchemaSet::builtin();
    let imm = set.message("milvus.proto.common.ImmutableMessage").expect("type");
    let props = imm.get_field_by_name("properties").expect("properties").number();
    let response = set.message("milvus.proto.milvus.DumpMessagesResponse").expect("type");
    let message_no = response.get_field_by_name("message").expect("message").number();
    let w = walscope::wire::decode(frame);
    let message = w.root.fields.iter().find(|f| f.number == message_no).expect("message field");
    let walscope::wire::WireContent::Message { message: inner, .. } = &message.content else {
        panic!("field 1 is not a message")
    };
    inner
        .fields
        .iter()
        .filter(|f| f.number == props)
        .find(|f| frame[f.value.clone()].windows(key.len()).any(|w| w == key.as_bytes()))
        .map(|f| f.whole())
        .expect("the entry")
}

/// An edited frame against its original: exactly the edited path, with its byte ranges, from
/// the library, from `diff A#N B#N`, and as the only changed frame of `diff A B`.
#[test]
fn an_edited_frame_differs_from_its_original_in_exactly_the_edited_path() {
    let dir = tempfile::tempdir().expect("temp dir");
    let a = sample(dir.path(), "a.dump", 100);
    let b = dir.path().join("b.dump");
    let value = "by-dev-rootcoord-dml_3_5001v0";
    let set_arg = format!("message.properties[\"_vc\"]={value}");
    let o = walscope(&[
        "edit",
        s(&a),
        "--framing",
        "varint",
        "--frame",
        "5",
        "--type",
        "milvus.proto.milvus.DumpMessagesResponse",
        "--set",
        &set_arg,
        "--out",
        s(&b),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    // The library, on the two frames' bytes.
    let set = SchemaSet::builtin();
    let desc = set.message("milvus.proto.milvus.DumpMessagesResponse").expect("type");
    let frame = |p: &Path| {
        let bytes = std::fs::read(p).expect("dump");
        let (_, _, r) = walscope::dump::framing::locate(&bytes, walscope::dump::Framing::VarintDelimited, 5)
            .expect("frame 5");
        bytes[r].to_vec()
    };
    let (fa, fb) = (frame(&a), frame(&b));
    let d = diff_messages(Some(&desc), &fa, &fb).expect("diff");
    assert_eq!(d.changes.len(), 1, "{:?}", d.changes);
    let c = &d.changes[0];
    assert_eq!((c.path.as_str(), c.kind), ("message.properties[\"_vc\"]", ChangeKind::Changed));
    assert_eq!(c.new.as_deref(), Some(format!("\"{value}\"").as_str()));
    assert_eq!(c.a_span, Some(property_entry_span(&fa, "_vc")));
    assert_eq!(c.b_span, Some(property_entry_span(&fb, "_vc")));

    // The CLI on the two frames.
    let a5 = format!("{}#5", s(&a));
    let b5 = format!("{}#5", s(&b));
    let o = walscope(&["diff", &a5, &b5, "--jsonl"]);
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    let lines = jsonl(&o);
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(lines[0]["path"], "message.properties[\"_vc\"]");
    assert_eq!(lines[0]["kind"], "changed");
    let span = property_entry_span(&fa, "_vc");
    assert_eq!(lines[0]["a_span"], serde_json::json!({"start": span.start, "end": span.end}));
    assert_eq!(lines[1]["kind"], "summary");
    assert_eq!(lines[1]["differences"], 1);

    // The CLI on the two dumps: frame 5 changed, nothing else; the human form names the path.
    let o = walscope(&["diff", s(&a), s(&b), "--jsonl"]);
    assert_eq!(o.status.code(), Some(1));
    let lines = jsonl(&o);
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(
        (lines[0]["kind"].as_str(), lines[0]["a"].as_u64(), lines[0]["b"].as_u64()),
        (Some("changed"), Some(5), Some(5))
    );
    assert_eq!((lines[1]["changed"].as_u64(), lines[1]["identical_frames"].as_u64()), (Some(1), Some(99)));
    let human = stdout(&walscope(&["diff", s(&a), s(&b)]));
    assert!(
        human.contains(&format!(
            "message.properties[\"_vc\"]: \"by-dev-rootcoord-dml_2_5001v0\" → \"{value}\""
        )),
        "{human}"
    );
    assert!(human.contains("only in A 0, only in B 0, changed 1, identical 99"), "{human}");
}

/// Exit codes as `diff`: 0 identical, 1 different, 2 error; errors in words, never a panic.
#[test]
fn exit_codes_are_those_of_diff_and_garbage_is_an_error_in_words() {
    let dir = tempfile::tempdir().expect("temp dir");
    let a = sample(dir.path(), "a.dump", 30);
    let copy = dir.path().join("copy.dump");
    std::fs::copy(&a, &copy).expect("copy");
    let o = walscope(&["diff", s(&a), s(&copy)]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("identical: only in A 0, only in B 0, changed 0, identical 30"),
        "{}",
        stdout(&o)
    );
    let o = walscope(&["diff", s(&a), s(&copy), "--jsonl"]);
    assert_eq!(o.status.code(), Some(0));
    let lines = jsonl(&o);
    assert_eq!(
        (lines.len(), lines[0]["kind"].as_str(), lines[0]["identical"].as_bool()),
        (1, Some("summary"), Some(true))
    );

    let garbage = dir.path().join("garbage.bin");
    std::fs::write(&garbage, b"\x07\xffnot a dump at all\xff\xff\xff\xff").expect("write");
    for args in [
        vec!["diff", s(&garbage), s(&a)],
        vec!["diff", s(&a), s(&garbage), "--jsonl"],
        vec!["diff", s(&garbage), s(&garbage)],
        vec!["diff", s(&a), "/nonexistent/b.dump"],
        vec!["diff", &format!("{}#999", s(&a)), &format!("{}#0", s(&a))],
    ] {
        let o = walscope(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.starts_with("error: ") && !err.contains("panicked"), "{args:?}: {err}");
    }
    let o = walscope(&["diff", &format!("{}#999", s(&a)), &format!("{}#0", s(&a))]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("has no frame 999: it has 30 frames"));
}

/// Two salvages of one window from the demo Milvus, the second stopped earlier: the diff is
/// exactly the frames the short one lacks, by index and message id, and nothing else.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_salvages_of_one_window_one_cut_short_differ_by_exactly_the_missing_frames() {
    use crate::common::salvage::{demo, expected, spec};
    use walscope::salvage::job as salvage;
    let (_, end_full, full) = expected(60);
    let (_, end_short, short) = expected(40);
    assert!(short < full);
    let demo = demo(walscope::sim::milvus::Faults::default()).await;
    let addr = demo.addr().to_string();
    let dir = tempfile::tempdir().expect("temp dir");
    let (a, b) = (dir.path().join("full.dump"), dir.path().join("short.dump"));
    salvage::spawn(spec(&addr, &a, end_full, false, 0)).wait().await.expect("full salvage");
    salvage::spawn(spec(&addr, &b, end_short, false, 0)).wait().await.expect("short salvage");

    let (a2, b2) = (a.clone(), b.clone());
    let (diff, rows) = tokio::task::spawn_blocking(move || {
        (walscope(&["diff", s(&a2), s(&b2), "--jsonl"]), walscope(&["inspect", s(&a2), "--jsonl"]))
    })
    .await
    .expect("runs");
    assert_eq!(diff.status.code(), Some(1), "{}", String::from_utf8_lossy(&diff.stderr));
    let ids: Vec<String> = jsonl(&rows).iter().filter_map(|r| r["id"].as_str().map(String::from)).collect();
    assert_eq!(ids.len(), full);
    let lines = jsonl(&diff);
    let (pairs, summary) = lines.split_at(lines.len() - 1);
    let got: Vec<(String, u64, String)> = pairs
        .iter()
        .map(|p| {
            assert!(p["b"].is_null(), "{p}");
            (
                p["kind"].as_str().unwrap_or("").to_string(),
                p["a"].as_u64().unwrap_or(u64::MAX),
                p["message_id"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    let want: Vec<(String, u64, String)> =
        (short..full).map(|i| ("only_a".to_string(), i as u64, ids[i].clone())).collect();
    assert_eq!(got, want);
    let s = &summary[0];
    assert_eq!(
        (s["only_a"].as_u64(), s["only_b"].as_u64(), s["changed"].as_u64(), s["identical_frames"].as_u64()),
        (Some((full - short) as u64), Some(0), Some(0), Some(short as u64))
    );
}

/// Elements of a repeated message field with a key field (`FieldSchema.fieldID`) are matched by
/// key: a field dropped from the middle of a schema is one removal, and the field after it is
/// compared with itself, not with the one dropped.
#[test]
fn repeated_messages_with_a_key_field_are_aligned_by_key() {
    let set = SchemaSet::builtin();
    let d = set.message("milvus.proto.schema.CollectionSchema").expect("type");
    let enc = |json: &str| codec::encode(&codec::from_json(&d, json).expect("json"));
    let a = enc(
        r#"{"name": "c", "fields": [{"fieldID": "100", "name": "pk"}, {"fieldID": "101", "name": "vec"}, {"fieldID": "102", "name": "ts"}]}"#,
    );
    let b = enc(
        r#"{"name": "c", "fields": [{"fieldID": "100", "name": "pk"}, {"fieldID": "102", "name": "ts2"}]}"#,
    );
    let diff = diff_messages(Some(&d), &a, &b).expect("diff");
    let mut got: Vec<(String, ChangeKind)> = diff.changes.iter().map(|c| (c.path.clone(), c.kind)).collect();
    got.sort_by(|x, y| x.0.cmp(&y.0));
    assert_eq!(
        got,
        vec![
            ("fields[1]".to_string(), ChangeKind::Removed),
            ("fields[1].name".to_string(), ChangeKind::Changed)
        ],
        "{:?}",
        diff.changes
    );
    let removed = diff.changes.iter().find(|c| c.kind == ChangeKind::Removed).expect("removed");
    assert!(removed.old.as_deref().is_some_and(|o| o.contains("2 fields")), "{removed:?}");
    let edits = diff.to_edits().expect("edits");
    let applied = codec::apply_edits(&d, &a, &edits).expect("apply");
    assert_eq!(
        codec::decode(&d, &applied).expect("decode").message,
        codec::decode(&d, &b).expect("decode").message
    );
}

/// A field the schema does not have is compared by number and bytes; it cannot be an edit.
#[test]
fn an_unknown_field_is_compared_by_number_and_bytes() {
    let set = SchemaSet::builtin();
    let d = set.message("openmldb.datasync.Task").expect("type");
    let base = codec::encode(&codec::from_json(&d, r#"{"status": "RUNNING"}"#).expect("json"));
    let with = |v: u8| {
        let mut b = base.clone();
        b.extend_from_slice(&[0xb8, 0x3e, v]); // field 999, varint v
        b
    };
    let (a, b) = (with(5), with(6));
    let diff = diff_messages(Some(&d), &a, &b).expect("diff");
    assert_eq!(diff.changes.len(), 1, "{:?}", diff.changes);
    let c = &diff.changes[0];
    assert_eq!(
        (c.path.as_str(), c.kind, c.old.as_deref(), c.new.as_deref()),
        ("#999", ChangeKind::Changed, Some("5"), Some("6"))
    );
    assert_eq!(c.a_span, Some(base.len()..base.len() + 3));
    let err = diff.to_edits().expect_err("an unknown field has no name to edit").to_string();
    assert!(err.contains("#999"), "{err}");
    assert!(diff_messages(Some(&d), &a, &a).expect("diff").is_empty());
}

/// Frames re-ordered within the look-ahead window are still paired (by message id); a frame
/// dropped from B is the one only in A, with its id.
#[test]
fn frames_reordered_within_the_window_are_still_paired() {
    use walscope::diff::{DumpDiffControl, DumpSide, PairKind, diff_dumps};
    use walscope::dump::framing::{locate, write_frame};
    use walscope::dump::view::FrameDecoder;
    use walscope::dump::{DumpFile, Framing, OpenOptions};
    let dir = tempfile::tempdir().expect("temp dir");
    let bytes = std::fs::read(sample(dir.path(), "a.dump", 60)).expect("dump");
    let frames: Vec<Vec<u8>> = (0..60)
        .map(|i| bytes[locate(&bytes, Framing::VarintDelimited, i).expect("frame").2].to_vec())
        .collect();
    let mut order: Vec<usize> = (0..60).filter(|&i| i != 20).collect();
    order.swap(10, 12);
    let mut b = Vec::new();
    for &i in &order {
        write_frame(Framing::VarintDelimited, &frames[i], &mut b);
    }
    let set = SchemaSet::builtin();
    let desc = set.message("milvus.proto.milvus.DumpMessagesResponse").expect("type");
    let open = |name: &str, bytes: Vec<u8>| {
        let opts = OpenOptions {
            message_type: Some(desc.clone()),
            framing: Some(Framing::VarintDelimited),
            ..OpenOptions::default()
        };
        (
            DumpFile::from_bytes(name, bytes, opts),
            FrameDecoder::new(set.pool().clone(), Some(desc.clone()), 64),
        )
    };
    let (da, xa) = open("a", bytes.clone());
    let (db, xb) = open("b", b);
    let mut pairs = Vec::new();
    let summary = diff_dumps(
        DumpSide { dump: &da, decoder: &xa },
        DumpSide { dump: &db, decoder: &xb },
        &DumpDiffControl::default(),
        |p| pairs.push(p),
    )
    .expect("diff");
    assert_eq!(
        (summary.only_a, summary.only_b, summary.changed, summary.identical),
        (1, 0, 0, 59),
        "{summary:?}"
    );
    let only: Vec<_> = pairs.iter().filter(|p| p.kind != PairKind::Identical).collect();
    assert_eq!(only.len(), 1);
    assert_eq!((only[0].kind, only[0].a, only[0].b), (PairKind::OnlyA, Some(20), None));
    let id = xa.view_uncached(&da, 20).and_then(|v| v.wal).map(|w| w.message_id).expect("an id");
    assert_eq!(only[0].message_id.as_deref(), Some(id.as_str()));
    // Frame 10 of A is frame 12 of B.
    assert!(pairs.iter().any(|p| p.a == Some(10) && p.b == Some(12) && p.kind == PairKind::Identical));
}

/// A row value edited inside a frame's WAL payload is named by its path inside the payload, as
/// the issue's `payload.fields_data[2].scalars.long_data.data[17]`, with the bytes of that one
/// value on both sides; the edits still turn A into B.
#[test]
fn a_value_edited_inside_the_wal_payload_is_named_inside_the_payload() {
    let dir = tempfile::tempdir().expect("temp dir");
    let a = sample(dir.path(), "a.dump", 100);
    let bytes = std::fs::read(&a).expect("dump");
    let set = SchemaSet::builtin();
    let frame_desc = set.message("milvus.proto.milvus.DumpMessagesResponse").expect("type");
    let insert = set.message("milvus.proto.msg.InsertRequest").expect("type");
    let payload_field = |frame: &DynamicMessage| -> Vec<u8> {
        let Some(Value::Message(m)) = frame.get_field_by_name("message").map(|v| v.into_owned()) else {
            return Vec::new();
        };
        m.get_field_by_name("payload").and_then(|v| v.as_bytes().map(|b| b.to_vec())).unwrap_or_default()
    };
    // The first Insert frame with at least two values in its first scalar column.
    let (frame, payload, old) = (0..100)
        .find_map(|i| {
            let (_, _, r) =
                walscope::dump::framing::locate(&bytes, walscope::dump::Framing::VarintDelimited, i).ok()?;
            let frame = bytes[r].to_vec();
            let m = DynamicMessage::decode(frame_desc.clone(), frame.as_slice()).ok()?;
            let payload = payload_field(&m);
            let body = DynamicMessage::decode(insert.clone(), payload.as_slice()).ok()?;
            let json = codec::to_json_value_or_error(&body);
            let old = json["fieldsData"][0]["scalars"]["longData"]["data"][1].as_str()?.to_string();
            Some((frame, payload, old))
        })
        .expect("an Insert frame with two int64 values");
    let new_payload = codec::apply_edits(
        &insert,
        &payload,
        &[codec::Edit::set("fields_data[0].scalars.long_data.data[1]=424242").unwrap()],
    )
    .expect("payload edit");
    let hex: String = new_payload.iter().map(|b| format!("{b:02x}")).collect();
    let edited = codec::apply_edits(
        &frame_desc,
        &frame,
        &[codec::Edit::set(&format!("message.payload=hex:{hex}")).unwrap()],
    )
    .expect("frame edit");

    let d = diff_messages(Some(&frame_desc), &frame, &edited).expect("diff");
    assert_eq!(d.changes.len(), 1, "{:?}", d.changes);
    let c = &d.changes[0];
    assert_eq!(
        (c.path.as_str(), c.kind),
        ("message.payload.fields_data[0].scalars.long_data.data[1]", ChangeKind::Changed)
    );
    assert_eq!((c.old.as_deref(), c.new.as_deref()), (Some(old.as_str()), Some("424242")));
    // The bytes of that one value: a varint on each side, inside the payload.
    let b_span = c.b_span.clone().expect("B's bytes");
    let varint = |v: u64| {
        let mut out = Vec::new();
        prost::encoding::encode_varint(v, &mut out);
        out
    };
    assert_eq!(edited[b_span.clone()], varint(424_242), "424242 as a varint at {b_span:?}");
    let a_span = c.a_span.clone().expect("A's bytes");
    assert_eq!(frame[a_span.clone()], varint(old.parse().expect("an int64")), "{old} at {a_span:?}");
    // Applying the diff's edits to A gives B.
    let applied = codec::apply_edits(&frame_desc, &frame, &d.to_edits().expect("edits")).expect("apply");
    assert_eq!(applied, edited);
}
