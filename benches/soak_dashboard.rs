//! Soak: the sync-task dashboard of the desktop app (headless in egui_kittest) watching a demo
//! SyncTool with three tables syncing (7 sub-tasks, a batch every 50 ms each), polling every
//! second and drawing a frame every 50 ms, for SOAK_SECONDS (default 3,600). The resident memory
//! of this process is sampled every second; it must stay flat (the dashboard keeps bounded
//! histories and trends) and the frame time must not grow: the first minute against the last,
//! in the same run.

use egui_kittest::Harness;
use std::time::{Duration, Instant};
use walscope::datasync::SyncMode;
use walscope::net::SyncToolClient;
use walscope::net::profile::{ConnectionProfile, TransportKind};
use walscope::sim::collector::CollectorConfig;
use walscope::sim::datasync::DatasyncDemo;
use walscope::ui::WalscopeApp;

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmRSS:")).map(str::to_string))
        .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        .unwrap_or(0)
}

fn main() {
    let seconds: u64 = std::env::var("SOAK_SECONDS").ok().and_then(|v| v.parse().ok()).unwrap_or(3600);
    let rt =
        tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().expect("runtime");
    let any = "127.0.0.1:0".parse().expect("address");
    let cfg = CollectorConfig { batch_interval: Duration::from_millis(50), full_mode_batches: u64::MAX };
    let demo = rt.block_on(DatasyncDemo::start(any, any, Duration::from_secs(3600 * 24), cfg)).expect("demo");
    let endpoint = demo.synctool.addr().to_string();
    let t: std::sync::Arc<dyn walscope::net::Transport> =
        std::sync::Arc::new(walscope::net::brpc::BrpcTransport::new(endpoint.clone()));
    let client = SyncToolClient::new(t, Default::default());
    for table in ["orders", "users", "clicks"] {
        rt.block_on(client.create_sync_task(
            "demo_db",
            table,
            SyncMode::IncrementalByTimestamp,
            Some(0),
            &format!("/tmp/walscope-soak/{table}"),
        ))
        .expect("create task");
    }
    let _guard = rt.enter();
    let dir = tempfile::tempdir().expect("dir");
    let mut app = WalscopeApp::new();
    app.config_dir = Some(dir.path().to_path_buf());
    app.connections.demo.push(ConnectionProfile::plain("synctool", TransportKind::Brpc, endpoint));
    app.show_tasks = true;
    app.tasks.profile = "synctool".into();
    app.tasks.interval_secs = 1;
    let mut h = Harness::builder()
        .with_size(eframe::egui::Vec2::new(1600.0, 1200.0))
        .build_ui_state(|ui, app: &mut WalscopeApp| app.ui(ui), app);
    h.step();
    use egui_kittest::kittest::Queryable;
    h.get_by_label("Watch").click();
    let start = Instant::now();
    let mut samples: Vec<(u64, u64, f64, u64)> = Vec::new(); // (second, rss KiB, mean frame ms, polls)
    let (mut frames, mut frame_time) = (0u32, Duration::ZERO);
    let mut next_sample = Duration::from_secs(1);
    while start.elapsed() < Duration::from_secs(seconds) {
        let t = Instant::now();
        h.step();
        frame_time += t.elapsed();
        frames += 1;
        if start.elapsed() >= next_sample {
            let polls = h.state().tasks.poller.as_ref().map_or(0, |p| p.board().polls);
            samples.push((
                next_sample.as_secs(),
                rss_kib(),
                frame_time.as_secs_f64() * 1000.0 / frames.max(1) as f64,
                polls,
            ));
            (frames, frame_time) = (0, Duration::ZERO);
            next_sample += Duration::from_secs(1);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let board = h.state().tasks.poller.as_ref().map(|p| p.board()).unwrap_or_default();
    let minute = samples.len().min(60);
    let avg = |s: &[(u64, u64, f64, u64)], f: fn(&(u64, u64, f64, u64)) -> f64| {
        s.iter().map(f).sum::<f64>() / s.len().max(1) as f64
    };
    let (first, last) = (&samples[..minute], &samples[samples.len() - minute..]);
    let (lo, hi) = samples.iter().skip(minute).fold((u64::MAX, 0), |(lo, hi), s| (lo.min(s.1), hi.max(s.1)));
    println!(
        "dashboard soak: {seconds} s, {} polls, {} sub-tasks, rows {}",
        board.polls,
        board.rows.len(),
        board.rows.iter().map(|r| r.count).sum::<u64>()
    );
    println!(
        "  resident memory: first minute {:.1} MiB, last minute {:.1} MiB; after the first minute between {:.1} and {:.1} MiB",
        avg(first, |s| s.1 as f64) / 1024.0,
        avg(last, |s| s.1 as f64) / 1024.0,
        lo as f64 / 1024.0,
        hi as f64 / 1024.0
    );
    println!(
        "  frame time: first minute {:.2} ms, last minute {:.2} ms (ratio {:.2})",
        avg(first, |s| s.2),
        avg(last, |s| s.2),
        avg(last, |s| s.2) / avg(first, |s| s.2).max(1e-9)
    );
    for s in samples.iter().step_by(300) {
        println!("  t={:>5}s rss {:.1} MiB frame {:.2} ms polls {}", s.0, s.1 as f64 / 1024.0, s.2, s.3);
    }
}
