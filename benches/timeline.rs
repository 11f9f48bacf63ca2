//! The Timeline pane's frame time at full zoom-out over a one-million-frame salvage folder
//! (issue #40, item 5: p99 within the window's 8 ms budget), beside baselines taken in the same
//! run: the Start page's frame (an empty window) and the file browser's frame on one of the
//! folder's dumps. Also the folder's loading time against `inspect --stats`' way of reading the
//! same dumps (every frame counted on every core while the index finds it).
//!
//! The folder: the sample generator's WAL (one row per Insert) split by pchannel into four
//! dumps and a `salvage.json`, generated once into the temp directory and reused
//! (WALSCOPE_BENCH_FRAMES overrides the million). A measured frame is `Harness::step` (the
//! app's `ui()`, layout and AccessKit) plus tessellation, in the UI thread's CPU time, as in
//! benches/gui_frame.rs. Scenarios: `still` (the pointer moving over the bins, so hover words
//! are made), `panning` (the view moved by 0.5% each frame: every bin is counted again).

mod common;

use common::thread_cpu;
use eframe::egui::{self, Event, Pos2, Vec2};
use egui_kittest::Harness;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use walscope::dump::Framing;
use walscope::dump::framing::write_frame;
use walscope::salvage::FolderManifest;
use walscope::salvage::folder::{ClusterRef, FolderEntry};
use walscope::schema::SchemaSet;
use walscope::sim::{WalGenConfig, WalGenerator};
use walscope::ui::WalscopeApp;
use walscope::ui::panes::timeline::TimelineState;

type H = Harness<'static, WalscopeApp>;

/// Frames measured per scenario.
const FRAMES: usize = 300;

/// The folder of `n` frames over four pchannels (made once, then reused).
fn folder(n: u64) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("walscope-bench-timeline-{n}"));
    if FolderManifest::load(&dir).is_ok_and(|m| m.pchannels.iter().map(|e| e.frames).sum::<u64>() == n) {
        return dir;
    }
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("bench folder");
    let set = SchemaSet::builtin();
    let cfg = WalGenConfig { seed: 9, rows: (1, 1), bookkeeping: true, ..Default::default() };
    let mut lanes: std::collections::BTreeMap<String, (std::io::BufWriter<std::fs::File>, u64, u64)> =
        Default::default();
    let mut buf = Vec::new();
    for m in WalGenerator::new(set.pool(), cfg).take(n as usize) {
        let lane = lanes.entry(m.pchannel.clone()).or_insert_with(|| {
            let f = std::fs::File::create(dir.join(format!("{}.dump", m.pchannel))).expect("dump");
            (std::io::BufWriter::with_capacity(1 << 20, f), 0, 0)
        });
        buf.clear();
        write_frame(Framing::VarintDelimited, &m.response, &mut buf);
        std::io::Write::write_all(&mut lane.0, &buf).expect("write");
        lane.1 += 1;
        lane.2 += buf.len() as u64;
    }
    let mut entries = Vec::new();
    for (p, (mut w, frames, bytes)) in lanes {
        std::io::Write::flush(&mut w).expect("flush");
        entries.push(FolderEntry {
            pchannel: p.clone(),
            checkpoint: None,
            no_checkpoint: None,
            file: Some(format!("{p}.dump")),
            complete: true,
            frames,
            bytes,
            last_error: None,
            ended_before_end: false,
        });
    }
    let cluster = |e: &str| ClusterRef { endpoint: e.into(), profile: None, version: None };
    FolderManifest {
        format_version: 1,
        walscope_version: "bench".into(),
        created_at: "2026-12-06T00:00:00.000Z".into(),
        updated_at: "2026-12-06T00:00:00.000Z".into(),
        new_primary: cluster("127.0.0.1:19530"),
        old_primary: cluster("127.0.0.1:19531"),
        source_cluster_id: "by-dev-old".into(),
        end_timetick: None,
        skip_replicated: true,
        pchannels: entries,
    }
    .save(&dir)
    .expect("salvage.json");
    dir
}

fn harness() -> H {
    Harness::builder()
        .with_size(Vec2::new(1280.0, 800.0))
        .with_step_dt(1.0 / 60.0)
        .build_ui_state(|ui, app: &mut WalscopeApp| app.ui(ui), WalscopeApp::new())
}

fn step_until(h: &mut H, what: &str, done: impl Fn(&mut H) -> bool) {
    let start = Instant::now();
    while !done(h) {
        h.step();
        assert!(start.elapsed() < Duration::from_secs(900), "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// One measured frame (step + tessellation), UI-thread CPU in ms.
fn frame(h: &mut H, events: Vec<Event>) -> f64 {
    h.input_mut().events.extend(events);
    let c0 = thread_cpu();
    h.step();
    let c1 = thread_cpu();
    let (shapes, ppp) = (h.output().shapes.clone(), h.output().pixels_per_point);
    let c2 = thread_cpu();
    drop(h.ctx.tessellate(shapes, ppp));
    ((c1 - c0) + (thread_cpu() - c2)).as_secs_f64() * 1e3
}

/// (p50, p99, max) of `v`, ms.
fn stats(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    let at = |q: usize| v[(v.len() * q / 100).min(v.len() - 1)];
    (at(50), at(99), *v.last().unwrap_or(&0.0))
}

fn report(name: &str, v: Vec<f64>) -> (f64, f64, f64) {
    let s = stats(v);
    eprintln!("{name:<40} p50 {:>7.3} ms   p99 {:>7.3} ms   max {:>7.3} ms", s.0, s.1, s.2);
    s
}

fn pane(h: &mut H) -> &mut TimelineState {
    h.state_mut().panes.first_mut::<TimelineState>().expect("the timeline pane")
}

/// `inspect --stats`' reading of every dump of `dir`: counted on every core while indexing.
fn inspect_stats_way(dir: &Path) -> Duration {
    let set = SchemaSet::builtin();
    let t = set.message(common::T).expect("type");
    let start = Instant::now();
    for e in FolderManifest::load(dir).expect("folder").pchannels {
        let opts = walscope::dump::OpenOptions {
            framing: Some(Framing::VarintDelimited),
            message_type: Some(t.clone()),
            index_cache: walscope::dump::IndexCache::Off,
            defer_index: true,
            ..Default::default()
        };
        let d = walscope::dump::DumpFile::open(&dir.join(e.file.expect("file")), opts).expect("open");
        let dec = walscope::dump::view::FrameDecoder::new(set.pool().clone(), Some(t.clone()), 1);
        let n = walscope::dump::scan::fold_all_views(
            &d,
            &dec,
            walscope::wal::Detail::Counts,
            || 0u64,
            |n, v| n + u64::from(v.wal.is_some()),
            |a, b| a + b,
        );
        assert!(n > 0);
    }
    start.elapsed()
}

fn main() {
    let n = common::frames_wanted();
    let t0 = Instant::now();
    let dir = folder(n);
    eprintln!("folder of {n} frames ready in {:.1} s: {}", t0.elapsed().as_secs_f64(), dir.display());

    let stats_time = inspect_stats_way(&dir);
    let t0 = Instant::now();
    let t = walscope::timeline::load(&dir, &Default::default(), &mut |_, _, _| true).expect("loads");
    let load_time = t0.elapsed();
    let frames = t.summary().frames;
    eprintln!(
        "load: timeline {:.2} s, inspect --stats' reading {:.2} s (ratio {:.2}x); {frames} frames",
        load_time.as_secs_f64(),
        stats_time.as_secs_f64(),
        load_time.as_secs_f64() / stats_time.as_secs_f64().max(1e-9)
    );
    // The data side alone: every lane's bins at full zoom-out (400 bins, as a 1280-point
    // window draws them), without and with a filter.
    let (a, b) = t.span().expect("a span");
    let per_frame = |filter: &walscope::timeline::Filter| {
        let c0 = thread_cpu();
        for _ in 0..50 {
            for l in &t.lanes {
                std::hint::black_box(l.bins(a, b + 1, 400, filter));
            }
        }
        (thread_cpu() - c0).as_secs_f64() * 1e3 / 50.0
    };
    let all = per_frame(&Default::default());
    let one = walscope::timeline::Filter { collection: t.collections().first().copied(), types: vec![] };
    let filtered = per_frame(&one);
    eprintln!("bins of every lane, full zoom-out: {all:.3} ms; filtered by a collection: {filtered:.3} ms");
    drop(t);

    // Baseline 1: the Start page.
    let mut h = harness();
    for _ in 0..10 {
        h.step();
    }
    let start_page = report("baseline: start page", (0..FRAMES).map(|_| frame(&mut h, vec![])).collect());
    drop(h);

    // Baseline 2: the file browser on the folder's first dump.
    let first = FolderManifest::load(&dir).expect("folder").pchannels[0].file.clone().expect("file");
    let mut h = harness();
    h.step();
    h.state_mut().open(dir.join(first));
    step_until(&mut h, "the dump", |h| h.state().tabs.first().is_some_and(|t| t.dump.index().is_done()));
    for _ in 0..30 {
        h.step();
    }
    let browser =
        report("baseline: file browser, one dump", (0..FRAMES).map(|_| frame(&mut h, vec![])).collect());
    drop(h);

    // The timeline at full zoom-out.
    let mut h = harness();
    h.step();
    h.state_mut().new_timeline(Some(dir.clone()));
    step_until(&mut h, "the timeline", |h| {
        h.state().panes.first::<TimelineState>().is_some_and(|t| t.data.is_some())
    });
    pane(&mut h).fit_all();
    for _ in 0..10 {
        h.step();
    }
    let canvas = pane(&mut h).canvas.expect("drawn");
    let still: Vec<f64> = (0..FRAMES)
        .map(|i| {
            let x = canvas.left() + (i as f32 * 7.0) % canvas.width();
            frame(&mut h, vec![Event::PointerMoved(Pos2::new(x, canvas.center().y))])
        })
        .collect();
    let still = report("timeline, full zoom-out, pointer moving", still);
    let panning: Vec<f64> = (0..FRAMES)
        .map(|i| {
            pane(&mut h).pan(if i % 200 < 100 { 0.005 } else { -0.005 });
            frame(&mut h, vec![])
        })
        .collect();
    let panning = report("timeline, full zoom-out, panning", panning);
    eprintln!(
        "p99 against the baselines: still {:.2}x start page, {:.2}x file browser; panning {:.2}x, {:.2}x; budget 8 ms: {}",
        still.1 / start_page.1.max(1e-9),
        still.1 / browser.1.max(1e-9),
        panning.1 / start_page.1.max(1e-9),
        panning.1 / browser.1.max(1e-9),
        if still.1.max(panning.1) <= 8.0 { "within" } else { "OVER" }
    );
    let _ = egui::Context::default();
}
