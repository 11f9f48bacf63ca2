//! The dump writer: a SIGKILL mid-write leaves a file readable up to its last complete frame
//! with a manifest never ahead of the data; resume continues without duplicates or gaps.

use std::process::Command;
use std::time::{Duration, Instant};
use walscope::dump::{
    DumpFile, DumpWriter, Framing, Manifest, OpenOptions, ResumePoint, SyncPolicy, manifest_path,
};
use walscope::schema::SchemaSet;
use walscope::sim::{WalGenConfig, WalGenerator};

const T: &str = "milvus.proto.milvus.DumpMessagesResponse";

fn open_typed(path: &std::path::Path) -> DumpFile {
    let set = SchemaSet::builtin();
    let d = DumpFile::open(
        path,
        OpenOptions { message_type: Some(set.message(T).unwrap()), ..Default::default() },
    )
    .unwrap();
    d.wait_indexed();
    d
}

#[test]
fn sigkill_mid_write_leaves_every_complete_frame_and_an_honest_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("crash.dump");
    let path = &target;
    let mut child = Command::new(env!("CARGO_BIN_EXE_walscope"))
        .args([
            "sample",
            "--kind",
            "milvus-dump",
            "--messages",
            "5000000",
            "--seed",
            "11",
            "--sync-every",
            "25",
        ])
        .arg("--out")
        .arg(path)
        .spawn()
        .unwrap();
    // `sample` writes the whole dump beside its target and renames it at the end: the writer's
    // file is the temp one until then.
    let start = Instant::now();
    let path = loop {
        let tmp = std::fs::read_dir(dir.path()).unwrap().filter_map(|e| e.ok()).map(|e| e.path()).find(|p| {
            let n = p.file_name().unwrap().to_string_lossy().into_owned();
            n.starts_with(".crash.dump.walscope-tmp-") && !n.ends_with(".manifest.json")
        });
        if let Some(t) = tmp {
            break t;
        }
        assert!(start.elapsed() < Duration::from_secs(120), "the writer made no file");
        std::thread::sleep(Duration::from_millis(20));
    };
    loop {
        let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        let synced = Manifest::load(&manifest_path(&path)).map(|m| m.frames).unwrap_or(0);
        if size > 1_500_000 && synced > 100 {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(120), "the writer made no progress");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert!(!target.exists(), "an interrupted sample never puts a partial dump in place");

    let manifest = Manifest::load(&manifest_path(&path)).unwrap();
    assert!(!manifest.complete);
    let d = open_typed(&path);
    let on_disk = std::fs::metadata(&path).unwrap().len();
    assert!(manifest.bytes <= on_disk, "manifest says {} bytes, disk has {on_disk}", manifest.bytes);
    assert!(manifest.frames as usize <= d.frame_count());
    // The manifest's last frame ends exactly where it says, and its resume point is that frame.
    let last = d.frame(manifest.frames as usize - 1).unwrap();
    assert_eq!(last.end(), manifest.bytes);
    // Every complete frame is there, byte for byte what the generator produced.
    let set = SchemaSet::builtin();
    let generated = WalGenerator::new(
        set.pool(),
        WalGenConfig { seed: 11, total: Some(5_000_000), ..Default::default() },
    );
    let mut resume_id = None;
    for (i, m) in generated.take(d.frame_count()).enumerate() {
        let loc = d.frame(i).unwrap();
        assert_eq!(d.message_bytes(&loc).1, &m.response[..], "frame {i}");
        if i + 1 == manifest.frames as usize {
            resume_id = Some(m.message_id.clone());
        }
    }
    assert_eq!(manifest.resume.unwrap().message_id, resume_id.unwrap());
    // At most a torn tail after the last complete frame.
    let problems = d.problems();
    assert!(problems.len() <= 1 && problems.iter().all(|p| p.truncated), "{problems:?}");
}

#[test]
fn resume_cuts_unconfirmed_frames_and_continues_without_gaps() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.dump");
    let set = SchemaSet::builtin();
    let all: Vec<_> =
        WalGenerator::new(set.pool(), WalGenConfig { seed: 5, ..Default::default() }).take(60).collect();
    let policy = SyncPolicy { every_frames: 10, every: Duration::from_secs(3600) };
    let rp = |i: usize| ResumePoint {
        message_id: all[i].message_id.clone(),
        wal: all[i].backend.name().into(),
        last_confirmed_id: all[i].last_confirmed_id.clone(),
        timetick: all[i].timetick,
    };
    {
        let manifest = Manifest::new(Framing::VarintDelimited, T, Some("test".into()), serde_json::json!({}));
        let mut w = DumpWriter::create(&path, Framing::VarintDelimited, manifest, policy).unwrap();
        for (i, m) in all.iter().enumerate().take(25) {
            w.append(&m.response, Some(rp(i))).unwrap();
        }
        // Dropped without finish: 5 frames reach the disk but not the manifest.
    }
    let m = Manifest::load(&manifest_path(&path)).unwrap();
    assert_eq!((m.frames, m.resume.as_ref().unwrap().message_id.clone()), (20, all[19].message_id.clone()));
    assert_eq!(open_typed(&path).frame_count(), 25);

    let mut w = DumpWriter::resume(&path, policy).unwrap();
    assert_eq!(w.frames(), 20);
    for (i, m) in all.iter().enumerate().skip(20) {
        w.append(&m.response, Some(rp(i))).unwrap();
    }
    let m = w.finish(true).unwrap();
    assert!(m.complete);
    assert_eq!(m.frames, 60);
    let d = open_typed(&path);
    let got: Vec<Vec<u8>> =
        (0..d.frame_count()).map(|i| d.message_bytes(&d.frame(i).unwrap()).1.to_vec()).collect();
    let want: Vec<Vec<u8>> = all.iter().map(|m| m.response.clone()).collect();
    assert_eq!(got, want);
    assert!(d.problems().is_empty());
}

#[test]
fn resume_refuses_a_file_shorter_than_its_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("short.dump");
    let manifest = Manifest::new(Framing::VarintDelimited, T, None, serde_json::json!({}));
    let mut w = DumpWriter::create(&path, Framing::VarintDelimited, manifest, SyncPolicy::default()).unwrap();
    w.append(b"\x12\x00", None).unwrap();
    w.finish(false).unwrap();
    std::fs::write(&path, b"").unwrap();
    let e = DumpWriter::resume(&path, SyncPolicy::default()).err().unwrap();
    assert!(e.contains("the file was cut"), "{e}");
}
