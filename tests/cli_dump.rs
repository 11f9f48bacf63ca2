//! `walscope inspect`, `export`, `sample` and progress-file editing end to end, on the committed
//! samples and on fresh ones.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_walscope");

fn run(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().unwrap()
}

fn ok(o: Output) -> String {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/samples")
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn committed_samples_are_what_the_generator_writes() {
    let dir = tempfile::tempdir().unwrap();
    for (name, messages, seed, corrupt) in [
        ("milvus-100.dump", "100", "1", None),
        ("milvus-40-truncate.dump", "40", "2", Some("truncate")),
        ("milvus-40-garbage.dump", "40", "2", Some("garbage")),
        ("milvus-40-huge-length.dump", "40", "2", Some("huge-length")),
    ] {
        let out = dir.path().join(name);
        let mut args =
            vec!["sample", "--kind", "milvus-dump", "--messages", messages, "--seed", seed, "--out", s(&out)];
        if let Some(c) = corrupt {
            args.extend(["--corrupt", c]);
        }
        ok(run(&args));
        assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(samples().join(name)).unwrap(), "{name}");
    }
}

#[test]
fn inspect_lists_filters_and_summarises() {
    let dump = samples().join("milvus-100.dump");
    let all = ok(run(&["inspect", s(&dump)]));
    assert!(all.contains("type:    milvus.proto.milvus.DumpMessagesResponse"), "{all}");
    assert!(all.contains("frames:  100, damaged ranges: 0"), "{all}");
    assert!(
        all.contains(
            "CreateCollection coll=4491 vchannel=by-dev-rootcoord-dml_0_4491v0 tt=2026-11-30 00:12:00."
        ),
        "{all}"
    );
    assert!(all.contains("RocksMQ 1000") && all.contains("Pulsar 100/0/-1"), "{all}");

    let jsonl = ok(run(&["inspect", s(&dump), "--filter", "type=Insert", "--jsonl"]));
    let rows: Vec<serde_json::Value> = jsonl.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert!(!rows.is_empty());
    assert!(rows.iter().all(|r| r["type"] == "Insert"));
    assert!(rows.iter().any(|r| r["status"] == "encrypted"));
    assert!(rows.iter().all(|r| r["message"]["message"]["properties"]["_t"] == "2"));

    let stats = ok(run(&["inspect", s(&dump), "--stats", "--jsonl"]));
    let st: serde_json::Value = serde_json::from_str(stats.trim()).unwrap();
    assert_eq!(st["frames"], 100);
    assert_eq!(st["per_type"]["Insert"].as_u64().unwrap(), rows.len() as u64);
    let per_type_total: u64 = st["per_type"].as_object().unwrap().values().map(|v| v.as_u64().unwrap()).sum();
    assert_eq!(per_type_total, 100);
    assert_eq!(st["timetick"]["from_time"].as_str().unwrap()[..16], *"2026-11-30 00:12");

    let vc = ok(run(&["inspect", s(&dump), "--filter", "vchannel=dml_3,type=Delete|Insert", "--jsonl"]));
    assert!(vc.lines().all(|l| l.contains("by-dev-rootcoord-dml_3")), "{vc}");
    let window = ok(run(&[
        "inspect",
        s(&dump),
        "--filter",
        "tt=2026-11-30 00:12:00.000..2026-11-30 00:12:00.010",
        "--jsonl",
    ]));
    assert!(!window.is_empty() && window.lines().count() < 100);
    let bad = run(&["inspect", s(&dump), "--filter", "colour=red"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown filter key \"colour\""));
}

#[test]
fn damaged_samples_report_offsets_and_keep_frames() {
    for (name, offset, what) in [
        ("milvus-40-truncate.dump", 70015, "truncated"),
        ("milvus-40-garbage.dump", 34108, "skipped"),
        ("milvus-40-huge-length.dump", 34108, "skipped"),
    ] {
        let out = ok(run(&["inspect", s(&samples().join(name)), "--filter", "status=bad"]));
        let want_frames = if what == "truncated" { 39 } else { 40 };
        assert!(out.contains(&format!("frames:  {want_frames}, damaged ranges: 1")), "{name}: {out}");
        let line =
            out.lines().find(|l| l.trim_start().starts_with('!')).unwrap_or_else(|| panic!("{name}: {out}"));
        assert!(line.contains(&format!(" {offset} ")) && line.contains(what), "{name}: {line}");
        // A damaged range is bytes that are no frame: a filter on what frames carry leaves it
        // out, as the window's list does (dump::FrameFilter::keeps_damaged).
        for spec in ["type=Insert", "status=ok", "collection=5001"] {
            let out = ok(run(&["inspect", s(&samples().join(name)), "--filter", spec]));
            assert!(!out.lines().any(|l| l.trim_start().starts_with('!')), "{name} {spec}: {out}");
        }
    }
}

/// Each row's `message` is the message exactly as `codec::decode` and `codec::to_json` print it
/// (how rows were embedded before they were decoded with a check compiled once per dump and
/// embedded as a tree), on the clean sample and on the damaged ones.
#[test]
fn jsonl_rows_embed_each_message_as_decode_prints_it() {
    let set = walscope::schema::SchemaSet::builtin();
    let ty = set.message("milvus.proto.milvus.DumpMessagesResponse").unwrap();
    for (name, at_least) in [
        ("milvus-100.dump", 100),
        ("milvus-40-truncate.dump", 30),
        ("milvus-40-garbage.dump", 30),
        ("milvus-40-huge-length.dump", 30),
    ] {
        let path = samples().join(name);
        let listing = ok(run(&["inspect", s(&path), "--jsonl"]));
        let opts = walscope::dump::OpenOptions { message_type: Some(ty.clone()), ..Default::default() };
        let d = walscope::dump::DumpFile::open(&path, opts).unwrap();
        d.wait_indexed();
        let mut embedded = 0;
        for line in listing.lines() {
            let row: serde_json::Value = serde_json::from_str(line).unwrap();
            let Some(message) = row.get("message") else { continue };
            let i = row["frame"].as_u64().unwrap() as usize;
            let loc = d.frame(i).unwrap();
            let decoded = walscope::codec::decode(&ty, d.message_bytes(&loc).1).unwrap().message;
            let printed = walscope::codec::to_json(&decoded, false);
            assert_eq!(serde_json::to_string(message).unwrap(), printed, "{name}, frame {i}");
            embedded += 1;
        }
        assert!(embedded >= at_least, "{name}: {embedded} rows with a message");
    }
}

#[test]
fn export_to_jsonl_dump_and_raw() {
    let dir = tempfile::tempdir().unwrap();
    let dump = samples().join("milvus-100.dump");
    let deletes = ok(run(&["inspect", s(&dump), "--filter", "type=Delete", "--jsonl"]));
    let n = deletes.lines().count();
    assert!(n > 0);
    let jl = dir.path().join("d.jsonl");
    ok(run(&["export", s(&dump), "--to", "jsonl", "--out", s(&jl), "--filter", "type=Delete"]));
    // The same rows as the listing, byte for byte (the export streams them to the file).
    assert_eq!(std::fs::read_to_string(&jl).unwrap(), deletes);
    // Exporting over it needs --force, and keeps the old file as a backup; all rows,
    // unfiltered, as the listing.
    assert!(!run(&["export", s(&dump), "--to", "jsonl", "--out", s(&jl)]).status.success());
    ok(run(&["export", s(&dump), "--to", "jsonl", "--out", s(&jl), "--force"]));
    let backup = dir.path().join("d.jsonl.bak");
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), deletes);
    assert_eq!(std::fs::read_to_string(&jl).unwrap(), ok(run(&["inspect", s(&dump), "--jsonl"])));
    let nowhere = dir.path().join("no such dir").join("d.jsonl");
    let failed = run(&["export", s(&dump), "--to", "jsonl", "--out", s(&nowhere)]);
    assert!(!failed.status.success());
    assert!(String::from_utf8_lossy(&failed.stderr).contains("does not exist"), "{failed:?}");
    let sub = dir.path().join("d.dump");
    ok(run(&["export", s(&dump), "--to", "dump", "--out", s(&sub), "--filter", "type=Delete"]));
    let again = ok(run(&["inspect", s(&sub), "--jsonl"]));
    assert_eq!(again.lines().count(), n);
    assert!(again.lines().all(|l| l.contains("\"type\":\"Delete\"")));
    let raw = dir.path().join("raw");
    ok(run(&["export", s(&dump), "--to", "raw", "--out", s(&raw), "--filter", "type=Delete"]));
    let files: Vec<_> = std::fs::read_dir(&raw).unwrap().collect();
    assert_eq!(files.len(), n);
    // A raw file is exactly one message: it decodes on its own.
    let one = files[0].as_ref().unwrap().path();
    let tree = ok(run(&["decode", "--type", "DumpMessagesResponse", s(&one)]));
    assert!(tree.contains("properties[\"_t\"]: \"3\""), "{tree}");
}

#[test]
fn progress_files_are_recognised_summarised_and_editable() {
    let dir = tempfile::tempdir().unwrap();
    let synctool = dir.path().join("0.progress");
    std::fs::copy(samples().join("synctool/7/0.progress"), &synctool).unwrap();
    let before = std::fs::read(&synctool).unwrap();
    let out = ok(run(&["inspect", s(&synctool)]));
    assert!(out.contains("SyncTool progress file"), "{out}");
    assert!(out.contains("at binlog offset="), "{out}");
    ok(run(&["edit", s(&synctool), "--set", "sync_point.offset=1234"]));
    let after = std::fs::read(&synctool).unwrap();
    let tree = ok(run(&["decode", s(&synctool)]));
    assert!(tree.contains("offset: 1234"), "{tree}");
    // Only the frame length, the sync_point length and the offset value may differ.
    let prefix = before.iter().zip(&after).take_while(|(a, b)| a == b).count();
    let suffix = before.iter().rev().zip(after.iter().rev()).take_while(|(a, b)| a == b).count();
    // Everything from tablet_endpoint (field 6, after the sync point) on is untouched.
    let tablet = before.windows(2).position(|w| w == [0x32, 0x0f]).unwrap();
    assert!(suffix >= before.len() - tablet, "bytes after the sync point changed");
    assert_eq!(prefix, 0, "the frame length changes");
    assert!(before.len() - prefix - suffix <= tablet);

    let collector = dir.path().join("task.progress");
    std::fs::copy(samples().join("datacollector/7-0/task.progress"), &collector).unwrap();
    let out = ok(run(&["inspect", s(&collector)]));
    assert!(out.contains("DataCollector task.progress"), "{out}");
    ok(run(&["edit", s(&collector), "--set", "sync_point.type=kSNAPSHOT", "--clear", "sync_point.offset"]));
    let json = ok(run(&["decode", s(&collector), "--format", "json"]));
    assert!(json.contains("\"type\": \"kSNAPSHOT\"") && !json.contains("\"offset\""), "{json}");
}

/// `walscope inspect big.dump | head`: a reader that stops early is not an error.
#[test]
fn inspect_into_a_closed_pipe_ends_quietly() {
    use std::io::{BufRead, BufReader};
    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("big.dump");
    ok(run(&["sample", "--kind", "milvus-dump", "--messages", "3000", "--seed", "5", "--out", s(&dump)]));
    let mut child = Command::new(env!("CARGO_BIN_EXE_walscope"))
        .args(["inspect", s(&dump)])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let first = BufReader::new(child.stdout.take().unwrap()).lines().next().unwrap().unwrap();
    assert!(first.starts_with("file:"), "{first}");
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(o.stderr.is_empty(), "{}", String::from_utf8_lossy(&o.stderr));
}
