//! A generated dump with upstream master's newer WAL types (row-level security, snapshots,
//! BatchUpdateManifest, RefreshExternalCollection) and chunked payloads: every header decodes
//! with no unknown field, from the CLI as from the library the window uses.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use walscope::sim::walgen::newer::NEWER_TYPES;

fn walscope(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_walscope")).args(args).output().expect("walscope runs")
}

fn ok(o: Output) -> String {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).to_string()
}

/// `walscope sample` with the newer types and chunks, into `dir`.
pub fn newer_dump(dir: &Path) -> PathBuf {
    let out = dir.join("newer.dump");
    let s = out.to_str().unwrap();
    ok(walscope(&[
        "sample",
        "--kind",
        "milvus-dump",
        "--messages",
        "400",
        "--seed",
        "5",
        "--newer-types",
        "--chunk-bytes",
        "1500",
        "--out",
        s,
    ]));
    out
}

#[test]
fn every_newer_header_decodes_with_no_unknown_field_and_chunks_are_counted() {
    let dir = tempfile::tempdir().unwrap();
    let dump = newer_dump(dir.path());
    let d = dump.to_str().unwrap();
    let filter = format!("type={}", NEWER_TYPES.join("|"));
    let rows = ok(walscope(&["inspect", d, "--jsonl", "--filter", &filter]));
    let mut seen = std::collections::BTreeSet::new();
    for line in rows.lines() {
        let r: serde_json::Value = serde_json::from_str(line).unwrap();
        let Some(frame) = r["frame"].as_u64() else { continue };
        let t = r["type"].as_str().unwrap().to_string();
        // The tree of the frame: the header's part names every field with its type, none unknown.
        let tree = ok(walscope(&[
            "decode",
            "--framing",
            "varint",
            "--frame",
            &frame.to_string(),
            "--type",
            "DumpMessagesResponse",
            d,
        ]));
        let header = tree
            .split_once("header (_h) as")
            .map(|(_, h)| h)
            .unwrap_or_else(|| panic!("{t}: no header: {tree}"));
        let header = header.split_once("  payload as").map_or(header, |(h, _)| h);
        assert!(!header.contains("# unknown"), "{t} frame {frame}: {header}");
        assert!(header.contains(&format!("milvus.proto.messages.{t}MessageHeader")), "{header}");
        assert!(r["header"].as_object().is_some_and(|h| !h.is_empty()), "{r}");
        seen.insert(t);
    }
    assert_eq!(seen.len(), NEWER_TYPES.len(), "every newer type is in the sample: {seen:?}");
    // The fields upstream added, by name, in the rows' headers.
    for field in
        ["snapshot_fingerprint", "compaction_protection_seconds", "cache_expirations", "external_spec"]
    {
        assert!(rows.contains(&format!("\"{field}\"")), "{field} in the rows");
    }
    let stats: serde_json::Value =
        serde_json::from_str(&ok(walscope(&["inspect", d, "--stats", "--jsonl"]))).unwrap();
    assert!(stats["chunks"]["groups"].as_u64().unwrap() > 10, "{stats}");
    assert!(stats["chunks"]["incomplete"].as_array().unwrap().is_empty(), "{stats}");

    // The library the window reads with: no unknown field in any header of the dump (chunks too).
    let set = walscope::schema::SchemaSet::builtin();
    let file = walscope::dump::DumpFile::open(&dump, Default::default()).unwrap();
    file.wait_indexed();
    let resp = set.message("milvus.proto.milvus.DumpMessagesResponse").unwrap();
    for i in 0..file.frame_count() {
        let loc = file.frame(i).unwrap();
        let (_, bytes) = file.message_bytes(&loc);
        let m = walscope::codec::decode_message(&resp, bytes).unwrap();
        let imm = walscope::wal::reading::immutable_of(&m).unwrap();
        let w = walscope::wal::analyze(set.pool(), &imm);
        if let Some(Ok(h)) = &w.header {
            assert_eq!(
                walscope::codec::count_unknown(h),
                0,
                "frame {i} ({}): {}",
                w.type_name,
                walscope::codec::to_json(h, false)
            );
        }
        assert!(w.problems.is_empty(), "frame {i}: {:?}", w.problems);
    }
}
