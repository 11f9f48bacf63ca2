//! Absurd inputs: a file of zeros (2 GB of them took 38 s and 8.8 GB, wrote a 3.4 GB index into
//! the cache and listed 20 million "ok" empty frames), a dump with a zero-filled tail, an
//! export of zeros (100 MB became 2 GB of JSON), and an absurd value (a number a proto2 enum
//! does not define).

use super::util::*;
use std::path::Path;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

/// Runs walscope and measures its peak resident memory (the kernel's count for that child
/// alone: `wait4`), which includes the pages of the mapped file it touched.
#[cfg(target_os = "linux")]
#[allow(clippy::zombie_processes)] // reaped by wait4, which also gives its usage
fn run_measured(dir: &Path, args: &[&str]) -> (Output, u64) {
    use std::io::Read;
    use std::os::unix::process::ExitStatusExt;
    let mut child =
        command(dir, args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("run walscope");
    let mut out = child.stdout.take().expect("stdout");
    let mut err = child.stderr.take().expect("stderr");
    let reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = out.read_to_end(&mut v);
        v
    });
    let mut stderr = Vec::new();
    let _ = err.read_to_end(&mut stderr);
    let stdout = reader.join().expect("stdout reader");
    let mut status = 0;
    // SAFETY: a zeroed rusage is a valid value for wait4 to fill.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for our own child, whose pid we hold and which nobody else reaps.
    let pid = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as libc::pid_t, "wait4");
    let status = std::process::ExitStatus::from_raw(status);
    (Output { status, stdout, stderr }, usage.ru_maxrss as u64 * 1024)
}

/// Bytes of every file under `dir` (the cache).
fn size_of_tree(dir: &Path) -> u64 {
    let mut total = 0;
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        match e.file_type() {
            Ok(t) if t.is_dir() => total += size_of_tree(&e.path()),
            _ => total += e.metadata().map_or(0, |m| m.len()),
        }
    }
    total
}

/// 256 MiB of zeros (a sparse file: nothing on disk): no frames, said in words, in memory that
/// is the file's own pages and little more, with nothing large written into the cache, and an
/// exit that says nothing could be read. (Before: about 54 million "ok" empty gRPC frames, an
/// index of over 400 MB in memory and in the cache.)
///
/// The peak is the child's as the kernel counts it, which starts from this process's own pages
/// when it forks: so it runs in a process of its own (this binary, that test only), where no
/// other test (the window's suites draw whole frames) has grown the parent.
#[cfg(target_os = "linux")]
#[test]
fn a_file_of_zeros_is_no_frames_in_bounded_memory_and_cache() {
    let exe = std::env::current_exe().expect("the test binary");
    let out = std::process::Command::new(exe)
        .args([
            "mistakes::absurd::zeros_measured_alone",
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("WALSCOPE_MEASURE_ALONE", "1")
        .output()
        .expect("run the measurement");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{text}");
    assert!(text.contains("1 passed"), "the measurement did not run: {text}");
}

/// The measurement itself (started by [`a_file_of_zeros_is_no_frames_in_bounded_memory_and_cache`];
/// on its own it does nothing).
#[cfg(target_os = "linux")]
#[test]
#[ignore = "run alone by a_file_of_zeros_is_no_frames_in_bounded_memory_and_cache"]
fn zeros_measured_alone() {
    if std::env::var_os("WALSCOPE_MEASURE_ALONE").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let len: u64 = 256 << 20;
    std::fs::File::create(d.join("zeros.bin")).unwrap().set_len(len).unwrap();
    let before = snapshot(d);
    let started = Instant::now();
    let (o, peak) = run_measured(d, &["inspect", "zeros.bin"]);
    let took = started.elapsed();
    no_panic(&o);
    let (out, err) = (stdout(&o), stderr(&o));
    assert!(out.contains("frames:  0, damaged ranges: 1"), "{out}");
    assert!(out.contains(&format!("no frames: {len} bytes of zeros")), "{out}");
    assert!(!o.status.success(), "nothing could be read: not a success");
    assert!(err.contains("nothing in zeros.bin could be read"), "{err}");
    // The file's own pages, plus what the program needs: no index of millions of frames.
    assert!(peak < len + (96 << 20), "peak resident memory {} MiB for a {} MiB file", peak >> 20, len >> 20);
    let cached = size_of_tree(&d.join(".cache"));
    assert!(cached < 64 << 10, "{cached} bytes written into the cache");
    assert!(took < Duration::from_secs(60), "took {took:?}");
    assert_eq!(snapshot(d), before);
}

/// A dump with a preallocated, zero-filled tail: every real frame, then one damaged range of
/// zeros (before: a million "ok" empty frames after the real ones).
#[test]
fn a_zero_filled_tail_is_one_range_after_every_frame() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let dump = sample_dump(d, "tail.dump", 200);
    let real = std::fs::metadata(&dump).unwrap().len();
    let file = std::fs::OpenOptions::new().append(true).open(&dump).unwrap();
    file.set_len(real + (1 << 20)).unwrap();
    let o = walscope(d, &["inspect", "tail.dump", "--stats", "--jsonl"]);
    no_panic(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    let stats: serde_json::Value = serde_json::from_slice(&o.stdout).expect("stats JSON");
    assert_eq!(stats["frames"], 200, "{stats}");
    assert_eq!((stats["damaged_ranges"].as_u64(), stats["damaged_bytes"].as_u64()), (Some(1), Some(1 << 20)));
    let listing = stdout(&walscope(d, &["inspect", "tail.dump", "--jsonl"]));
    let last = listing.lines().last().unwrap_or_default();
    assert!(last.contains(&format!("no frames: {} bytes of zeros (bytes {real}..", 1 << 20)), "{last}");
}

/// `export` of zeros wrote gigabytes of JSON about empty frames; now it writes nothing and says
/// why.
#[test]
fn an_export_of_zeros_writes_nothing_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::File::create(d.join("zeros.bin")).unwrap().set_len(4 << 20).unwrap();
    let before = snapshot(d);
    for to in ["jsonl", "dump", "raw"] {
        let out = format!("out.{to}");
        let o = walscope(d, &["export", "zeros.bin", "--to", to, "--out", &out]);
        failed_cleanly(&o, d, &before, "nothing was written: nothing in zeros.bin could be read");
        assert!(stderr(&o).contains("bytes of zeros"), "{}", stderr(&o));
    }
}

/// `edit 0.progress --set mode=77` gave a proto2 (closed) enum a number it does not define,
/// which a reader drops as an unknown field. Now refused in words naming the defined values;
/// a proto3 (open) enum keeps accepting an unknown number.
#[test]
fn a_closed_enum_refuses_an_undefined_number() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/samples");
    std::fs::copy(samples.join("synctool/7/0.progress"), d.join("0.progress")).unwrap();
    let before = snapshot(d);
    for args in [
        vec!["edit", "0.progress", "--set", "mode=77"],
        vec!["edit", "0.progress", "--set", "mode=77", "--dry-run"],
        vec!["edit", "0.progress", "--set", "mode=-1", "--out", "other.progress"],
    ] {
        let o = walscope(d, &args);
        failed_cleanly(
            &o,
            d,
            &before,
            "is not a value of openmldb.datasync.SyncMode, a closed (proto2) enum",
        );
        assert!(stderr(&o).contains("kFull = 0, kIncrementalByTimestamp = 1, kFullAndContinuous = 2"));
    }
    let o = walscope(d, &["edit", "0.progress", "--set", "mode=kFullAndContinuous"]);
    assert!(o.status.success(), "a defined value is set: {}", stderr(&o));
    // proto3: open.
    std::fs::write(d.join("base.json"), r#"{"msg_type": "Insert", "msgID": "7"}"#).unwrap();
    let t = "milvus.proto.common.MsgBase";
    let o = walscope(d, &["encode", "--type", t, "--from", "json", "--out", "base.bin", "base.json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = walscope(d, &["edit", "base.bin", "--type", t, "--set", "msg_type=77777"]);
    assert!(o.status.success(), "an open enum keeps an unknown number: {}", stderr(&o));
    let json = stdout(&walscope(d, &["decode", "--type", t, "--format", "json", "base.bin"]));
    assert!(json.contains("77777"), "{json}");
}
