//! Soak: a salvage of SOAK_MESSAGES (default 10,000,000) messages from the demo Milvus, whose
//! WAL cycles through its first 50,000 messages so the server stays small, with the resident
//! memory of the `walscope salvage` process sampled every second. Memory must stay flat (the
//! writer streams frames to disk) and throughput must not decay: the rate of the first million
//! against the last million, in the same run. Stopped with Ctrl-C at the count, as an operator
//! would, which also checks that the dump is left whole.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use walscope::dump::{Manifest, manifest_path};
use walscope::sim::WalGenConfig;
use walscope::sim::milvus::{MilvusDemo, MilvusDemoConfig, OLD_CLUSTER_ID};

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmRSS:")).map(str::to_string))
        .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        .unwrap_or(0)
}

fn main() {
    let total: u64 = std::env::var("SOAK_MESSAGES").ok().and_then(|v| v.parse().ok()).unwrap_or(10_000_000);
    let million = (total / 10).min(1_000_000);
    let rt =
        tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().expect("runtime");
    let config = MilvusDemoConfig {
        wal: WalGenConfig { seed: 3, rows: (1, 1), total: None, ..Default::default() },
        wal_cycle: Some(50_000),
        ..Default::default()
    };
    let demo = rt.block_on(MilvusDemo::start(config)).expect("demo");
    let addr = demo.addr().to_string();
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("soak.dump");
    let mut child = Command::new(env!("CARGO_BIN_EXE_walscope"))
        .args([
            "salvage",
            "--new-primary",
            &addr,
            "--old-primary",
            &addr,
            "--source-cluster-id",
            OLD_CLUSTER_ID,
        ])
        .args(["--pchannel", "by-dev-rootcoord-dml_1", "--keep-replicated", "--retries", "0"])
        .arg("--out")
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("walscope salvage");
    let started = Instant::now();
    let mut samples: Vec<(f64, u64, u64)> = Vec::new(); // (seconds, frames, RSS KiB)
    loop {
        std::thread::sleep(Duration::from_secs(1));
        let frames = Manifest::load(&manifest_path(&out)).map_or(0, |m| m.frames);
        let rss = rss_kib(child.id());
        samples.push((started.elapsed().as_secs_f64(), frames, rss));
        eprintln!(
            "{:>6.0} s {frames:>10} frames {:>8.1} MiB",
            started.elapsed().as_secs_f64(),
            rss as f64 / 1024.0
        );
        if frames >= total || child.try_wait().ok().flatten().is_some() {
            break;
        }
    }
    // SAFETY: kill(2) with the pid of our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let _ = child.wait();
    let m = Manifest::load(&manifest_path(&out)).expect("manifest");
    let on_disk = std::fs::metadata(&out).map_or(0, |f| f.len());
    let at = |frames: u64| samples.iter().find(|s| s.1 >= frames).map_or(f64::NAN, |s| s.0);
    let first = million as f64 / at(million);
    let last = million as f64 / (at(total) - at(total - million));
    let warm: Vec<u64> = samples.iter().filter(|s| s.1 >= million).map(|s| s.2).collect();
    let (lo, hi) = (warm.iter().min().copied().unwrap_or(0), warm.iter().max().copied().unwrap_or(0));
    println!(
        "\n== walscope salvage soak: {} messages in {:.0} s ==",
        m.frames,
        samples.last().map_or(0.0, |s| s.0)
    );
    println!(
        "dump: {} frames, {} MiB, manifest bytes {} = file bytes {on_disk}",
        m.frames,
        on_disk >> 20,
        m.bytes
    );
    println!(
        "resident memory after the first {million} frames: {:.1} .. {:.1} MiB (max / min {:.2})",
        lo as f64 / 1024.0,
        hi as f64 / 1024.0,
        hi as f64 / lo.max(1) as f64
    );
    println!(
        "rate: first {million} {first:.0} msg/s, last {million} {last:.0} msg/s (last / first {:.2})",
        last / first
    );
    rt.block_on(demo.shutdown());
}
