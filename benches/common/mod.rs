//! Shared by the benchmarks: the ~1 GiB dump of one million WAL frames, generated once into the
//! temp directory (WALSCOPE_BENCH_FRAMES overrides the frame count) and reused while its
//! manifest matches.
#![allow(dead_code)]

use std::path::PathBuf;
use std::time::Duration;
use walscope::dump::{DumpWriter, Framing, Manifest, SyncPolicy, manifest_path};
use walscope::schema::SchemaSet;
use walscope::sim::{WalGenConfig, WalGenerator};

/// The message type of every frame of the bench file.
pub const T: &str = "milvus.proto.milvus.DumpMessagesResponse";

/// Frames in the bench file: 1,000,000 unless WALSCOPE_BENCH_FRAMES says otherwise.
pub fn frames_wanted() -> u64 {
    std::env::var("WALSCOPE_BENCH_FRAMES").ok().and_then(|v| v.parse().ok()).unwrap_or(1_000_000)
}

/// 20,000 distinct WAL messages (1-3 rows of 128-dim vectors each, ~1.1 KiB), repeated.
pub fn bench_file() -> PathBuf {
    let n = frames_wanted();
    let path = std::env::temp_dir().join(format!("walscope-bench-{n}.dump"));
    if Manifest::load(&manifest_path(&path)).is_ok_and(|m| m.complete && m.frames == n) {
        return path;
    }
    let set = SchemaSet::builtin();
    let unique: Vec<Vec<u8>> = WalGenerator::new(
        set.pool(),
        WalGenConfig { seed: 1, rows: (1, 3), total: None, ..Default::default() },
    )
    .take(20_000)
    .map(|m| m.response)
    .collect();
    let manifest =
        Manifest::new(Framing::VarintDelimited, T, Some("bench".into()), serde_json::json!({"frames": n}));
    let policy = SyncPolicy { every_frames: 100_000, every: Duration::from_secs(60) };
    let mut w =
        DumpWriter::create(&path, Framing::VarintDelimited, manifest, policy).expect("create bench file");
    for i in 0..n as usize {
        w.append(&unique[i % unique.len()], None).expect("write bench file");
    }
    w.finish(true).expect("finish bench file");
    path
}

/// CPU time used so far by the calling thread (the UI thread's cost of a frame).
#[cfg(unix)]
pub fn thread_cpu() -> std::time::Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec into the valid pointer given.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    std::time::Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Without a thread clock, wall time stands in.
#[cfg(not(unix))]
pub fn thread_cpu() -> std::time::Duration {
    static T0: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    T0.get_or_init(std::time::Instant::now).elapsed()
}
