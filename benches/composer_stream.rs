//! A 100,000-message DumpMessages stream arriving in a request composer, against the same stream
//! taken by `walscope call --save-dump` from the same demo server in the same run.
//!
//! Reported: the UI thread's CPU per frame while the stream arrives (`Harness::step` and
//! tessellation, as in `gui_frame`; GPU painting not included), frames stepped at a display's
//! 60 per second; the process's resident memory sampled every 100 ms (start, peak, end); the
//! stream's rate in the composer against the CLI's (the demo's WAL cache warmed first). Targets: a frame under 8 ms, memory flat
//! (the composer keeps a bounded ring; every message goes to the dump), the composer's rate
//! within 10% of the CLI's. WALSCOPE_BENCH_STREAM overrides the message count.

mod common;

use common::thread_cpu;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use std::time::{Duration, Instant};
use walscope::ui::WalscopeApp;
use walscope::ui::panes::composer::{ComposerState, Response};

const PCHANNEL: &str = "by-dev-rootcoord-dml_0";

/// Resident memory of this process, in MiB (Linux; 0 elsewhere).
fn rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmRSS:")).map(str::to_string))
        .and_then(|l| l.split_whitespace().nth(1).and_then(|kb| kb.parse::<f64>().ok()))
        .map_or(0.0, |kb| kb / 1024.0)
}

/// The request: from the salvage checkpoint to the timetick of the `n`-th message after it.
fn request(endpoint: &str, n: usize) -> String {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_walscope"))
        .args(["call", endpoint, "milvus.proto.milvus.MilvusService/GetReplicateInfo", "-d"])
        .arg(format!(r#"{{"source_cluster_id": "by-dev-old", "target_pchannel": "{PCHANNEL}"}}"#))
        .output()
        .expect("walscope call");
    let info: serde_json::Value = serde_json::from_slice(&o.stdout).expect("GetReplicateInfo answers");
    let ckpt = &info["salvageCheckpoint"];
    let start: u64 = ckpt["timeTick"].as_str().and_then(|t| t.parse().ok()).expect("a checkpoint timetick");
    let set = walscope::schema::SchemaSet::builtin();
    let wal = walscope::sim::WalGenConfig { seed: 11, rows: (1, 1), total: None, ..Default::default() };
    let end = walscope::sim::WalGenerator::new(set.pool(), wal)
        .filter(|m| m.pchannel == PCHANNEL && m.timetick > start)
        .nth(n - 1)
        .map(|m| m.timetick)
        .expect("enough WAL");
    format!(
        r#"{{"pchannel": "{PCHANNEL}", "start_message_id": {}, "end_timetick": "{end}"}}"#,
        ckpt["messageId"]
    )
}

fn main() {
    // `cargo bench` passes --bench; a plain `cargo test --benches` run passes nothing: skip the
    // long measurement there.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let n: usize =
        std::env::var("WALSCOPE_BENCH_STREAM").ok().and_then(|v| v.parse().ok()).unwrap_or(100_000);
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let wal = walscope::sim::WalGenConfig { seed: 11, rows: (1, 1), total: None, ..Default::default() };
    let cfg = walscope::sim::milvus::MilvusDemoConfig { wal, ..Default::default() };
    let demo = rt.block_on(walscope::sim::milvus::MilvusDemo::start(cfg)).expect("demo Milvus");
    let endpoint = demo.addr().to_string();
    let req = request(&endpoint, n);
    let dir = tempfile::tempdir().expect("temp dir");

    // Warm the demo's WAL cache (it generates messages on first use), so both runs below see
    // the same server.
    let warm = std::process::Command::new(env!("CARGO_BIN_EXE_walscope"))
        .args([
            "call",
            &endpoint,
            "milvus.proto.milvus.MilvusService/DumpMessages",
            "-d",
            &req,
            "--quiet",
            "--save-dump",
        ])
        .arg(dir.path().join("warm.dump"))
        .output()
        .expect("walscope call --save-dump");
    assert!(warm.status.success(), "{}", String::from_utf8_lossy(&warm.stderr));
    // The CLI, the same stream, the same server.
    let cli_out = dir.path().join("cli.dump");
    let t0 = Instant::now();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_walscope"))
        .args([
            "call",
            &endpoint,
            "milvus.proto.milvus.MilvusService/DumpMessages",
            "-d",
            &req,
            "--quiet",
            "--save-dump",
        ])
        .arg(&cli_out)
        .output()
        .expect("walscope call --save-dump");
    let cli_secs = t0.elapsed().as_secs_f64();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    // The composer.
    let mut app = WalscopeApp::new();
    app.config_dir = Some(dir.path().to_path_buf());
    app.connections.demo.push(walscope::net::profile::ConnectionProfile::plain(
        "bench-milvus",
        walscope::net::profile::TransportKind::Grpc,
        endpoint.clone(),
    ));
    let mut h = Harness::builder()
        .with_size(eframe::egui::Vec2::new(1600.0, 1200.0))
        .with_step_dt(1.0 / 60.0)
        .build_ui_state(|ui, app: &mut WalscopeApp| app.ui(ui), app);
    h.step();
    let pool = h.state().schemas.pool().clone();
    h.state_mut().new_composer(
        Some("bench-milvus".into()),
        Some("milvus.proto.milvus.MilvusService.DumpMessages".into()),
        Vec::new(),
        None,
    );
    {
        let c = h.state_mut().panes.first_mut::<ComposerState>().unwrap();
        c.json = req.clone();
        c.json_changed(&pool);
        assert!(c.json_error.is_none(), "{:?}", c.json_error);
    }
    for _ in 0..30 {
        h.step();
    }
    let rss_start = rss_mib();
    h.get_by_label("Send Ctrl+Enter").click();
    let mut frames: Vec<Duration> = Vec::new();
    let (mut rss_peak, mut last_sample) = (rss_start, Instant::now());
    let mut rss_samples = vec![rss_start];
    let started = Instant::now();
    loop {
        let next = Instant::now() + Duration::from_micros(16_667);
        let c0 = thread_cpu();
        h.step();
        let (shapes, ppp) = (h.output().shapes.clone(), h.output().pixels_per_point);
        let _ = h.ctx.tessellate(shapes, ppp);
        frames.push(thread_cpu() - c0);
        if last_sample.elapsed() >= Duration::from_millis(100) {
            let r = rss_mib();
            rss_samples.push(r);
            rss_peak = rss_peak.max(r);
            last_sample = Instant::now();
        }
        if let Response::Stream(s) = &h.state().panes.first::<ComposerState>().unwrap().response
            && s.summary.is_some()
        {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(900), "the stream never ended");
        std::thread::sleep(next.saturating_duration_since(Instant::now()));
    }
    let Response::Stream(s) = &h.state().panes.first::<ComposerState>().unwrap().response else {
        unreachable!()
    };
    let summary = s.summary.as_ref().expect("ended").as_ref().expect("the dump was written").clone();
    assert!(matches!(summary.end, walscope::net::StreamEnd::Completed), "{:?}", summary.end);
    let count = summary.count as f64;
    // Send pressed to the end seen by the UI, connection included, as the CLI's time includes
    // its start-up and connection.
    let composer_rate = count / started.elapsed().as_secs_f64();
    let stream_only = count / summary.elapsed.as_secs_f64();
    let cli_rate = count / cli_secs;
    let rss_end = rss_mib();

    frames.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let mean = frames.iter().map(|d| ms(*d)).sum::<f64>() / frames.len() as f64;
    let p99 = ms(frames[(frames.len() * 99 / 100).min(frames.len() - 1)]);
    let max = ms(*frames.last().unwrap_or(&Duration::ZERO));
    eprintln!("composer_stream: {} messages over loopback from the demo Milvus", summary.count);
    eprintln!(
        "  UI thread per frame while streaming ({} frames): mean {mean:.2} ms, p99 {p99:.2} ms, max {max:.2} ms (target < 8 ms)",
        frames.len()
    );
    eprintln!(
        "  resident memory: start {rss_start:.0} MiB, peak {rss_peak:.0} MiB, end {rss_end:.0} MiB ({} samples; the ring holds at most 1,000 messages / 64 MiB)",
        rss_samples.len()
    );
    eprintln!(
        "  rate: composer {composer_rate:.0} msg/s (Send to the end on screen; {stream_only:.0} msg/s once open), `walscope call --save-dump` {cli_rate:.0} msg/s (process start to exit): composer / CLI = {:.2} (target 0.9-1.1)",
        composer_rate / cli_rate
    );
    drop(demo);
}
