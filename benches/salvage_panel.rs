//! Salvage of four pchannels in parallel from the demo's old primary (after a forced failover),
//! against one pchannel alone and against the rate at which the same server streams one
//! pchannel to a client that discards everything, in the same run (the demo's WAL cache warmed
//! first); then the same four from the salvage pane running headless, with the UI thread's CPU
//! per frame (`Harness::step` + tessellation, frames at 60 per second) while they run. Target: a
//! frame under 8 ms. WALSCOPE_BENCH_SALVAGE overrides the messages per pchannel (20,000).

mod common;

use common::thread_cpu;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use std::time::{Duration, Instant};
use walscope::net::profile::{ConnectionProfile, TransportKind};
use walscope::salvage::set::{self as salvage_set, SalvageSetSpec};
use walscope::sim::milvus::pair::{MilvusPair, MilvusPairConfig};
use walscope::ui::WalscopeApp;
use walscope::ui::panes::salvage::SalvageState;

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let per: usize =
        std::env::var("WALSCOPE_BENCH_SALVAGE").ok().and_then(|v| v.parse().ok()).unwrap_or(20_000);
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let wal = walscope::sim::WalGenConfig { seed: 5, rows: (1, 1), total: None, ..Default::default() };
    let pair = rt
        .block_on(MilvusPair::start(MilvusPairConfig { wal: wal.clone(), ..Default::default() }))
        .expect("pair");
    let profile =
        |n: &str, a: std::net::SocketAddr| ConnectionProfile::plain(n, TransportKind::Grpc, a.to_string());
    let (new, old) = (profile("new", pair.new_addr()), profile("old", pair.old_addr()));
    let set = walscope::schema::SchemaSet::builtin();
    let end = walscope::sim::WalGenerator::new(set.pool(), wal).nth(per * 4).expect("WAL").timetick;
    let pchannels = MilvusPair::pchannels();
    let run = walscope::salvage::set::RunOptions::default();
    let ckpts = rt
        .block_on(walscope::salvage::checkpoint::fetch_checkpoints(
            &new,
            Some(&old),
            walscope::sim::milvus::OLD_CLUSTER_ID,
            &pchannels,
            &run.connect,
            run.timeout,
        ))
        .expect("checkpoints");

    // The raw stream of one pchannel to a client that keeps nothing.
    let dump = set
        .pool()
        .get_service_by_name("milvus.proto.milvus.MilvusService")
        .unwrap()
        .methods()
        .find(|m| m.name() == "DumpMessages")
        .unwrap();
    let raw = |pchannel: &str| -> (u64, f64) {
        let c = ckpts.reports.iter().find(|r| r.pchannel == pchannel).unwrap().result.as_ref().unwrap();
        let req = walscope::codec::from_json(&dump.input(), &c.dump_request(end, true).to_string()).unwrap();
        rt.block_on(async {
            let t = walscope::net::connect(&old).await.unwrap();
            let started = Instant::now();
            let s = walscope::net::call::call_server_stream(
                t.as_ref(),
                &dump,
                &walscope::net::CallRequest::Message(req),
                &Default::default(),
                &Default::default(),
                |_| Ok(()),
            )
            .await;
            (s.count, started.elapsed().as_secs_f64())
        })
    };
    for p in &pchannels {
        raw(p); // warm-up: the demo generates and caches its WAL
    }
    let (raw_n, raw_s) = raw(&pchannels[0]);
    let dir = tempfile::tempdir().unwrap();
    let salvage = |chans: Vec<String>, folder: &str| -> (u64, f64) {
        let mut spec = SalvageSetSpec::new(
            new.clone(),
            old.clone(),
            walscope::sim::milvus::OLD_CLUSTER_ID,
            chans,
            &dir.path().join(folder),
        );
        spec.end_timetick = Some(end);
        rt.block_on(async {
            let started = Instant::now();
            let run = salvage_set::start(spec).await.expect("start");
            let (_, results) = run.wait().await;
            let frames: u64 = results
                .into_iter()
                .map(|(p, r)| r.unwrap_or_else(|e| panic!("{p}: {e}")).manifest.frames)
                .sum();
            (frames, started.elapsed().as_secs_f64())
        })
    };
    let (one_n, one_s) = salvage(vec![pchannels[0].clone()], "one");
    let (four_n, four_s) = salvage(pchannels.clone(), "four");

    // The pane, running the same four.
    let mut app = WalscopeApp::new();
    app.config_dir = Some(dir.path().to_path_buf());
    app.connections.demo.push(profile("demo-old-primary", pair.old_addr()));
    app.connections.demo.push(profile("demo-new-primary", pair.new_addr()));
    let mut h = Harness::builder()
        .with_size(eframe::egui::Vec2::new(1600.0, 1200.0))
        .with_step_dt(1.0 / 60.0)
        .build_ui_state(|ui, app: &mut WalscopeApp| app.ui(ui), app);
    h.step();
    h.state_mut().new_salvage();
    {
        let s = h.state_mut().panes.first_mut::<SalvageState>().unwrap();
        s.pchannels = pchannels.join("\n");
        s.end_time = end.to_string();
        s.folder = dir.path().join("pane").display().to_string();
    }
    for _ in 0..10 {
        h.step();
    }
    h.get_by_label("Fetch checkpoints").click();
    let until = Instant::now() + Duration::from_secs(60);
    while h.state().panes.first::<SalvageState>().unwrap().ready_pchannels().len() < 4 {
        h.step();
        assert!(Instant::now() < until, "no checkpoints");
        std::thread::sleep(Duration::from_millis(10));
    }
    for _ in 0..10 {
        h.step();
    }
    h.get_by_label("Start salvage").click();
    let mut frames = Vec::new();
    let started = Instant::now();
    loop {
        let next = Instant::now() + Duration::from_micros(16_667);
        let c0 = thread_cpu();
        h.step();
        let (shapes, ppp) = (h.output().shapes.clone(), h.output().pixels_per_point);
        let _ = h.ctx.tessellate(shapes, ppp);
        frames.push(thread_cpu() - c0);
        let s = h.state().panes.first::<SalvageState>().unwrap();
        if s.ends.len() == 4 && !s.running {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(600), "the pane's salvage never ended");
        std::thread::sleep(next.saturating_duration_since(Instant::now()));
    }
    let pane_s = started.elapsed().as_secs_f64();
    frames.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let mean = frames.iter().map(|d| ms(*d)).sum::<f64>() / frames.len() as f64;
    let p99 = ms(frames[(frames.len() * 99 / 100).min(frames.len() - 1)]);
    let max = ms(*frames.last().unwrap());
    let rate = |n: u64, s: f64| n as f64 / s;
    eprintln!("salvage_panel: ~{per} small messages per pchannel, 4 pchannels, from the demo's old primary");
    eprintln!(
        "  raw stream of one pchannel, client discards: {:.0} msg/s ({raw_n} msgs)",
        rate(raw_n, raw_s)
    );
    eprintln!(
        "  salvage of one pchannel alone: {:.0} msg/s = {:.2} of raw",
        rate(one_n, one_s),
        rate(one_n, one_s) / rate(raw_n, raw_s)
    );
    eprintln!(
        "  salvage of four in parallel: {:.0} msg/s in all = {:.2}x one alone, {:.2} of raw ({four_n} msgs)",
        rate(four_n, four_s),
        rate(four_n, four_s) / rate(one_n, one_s),
        rate(four_n, four_s) / rate(raw_n, raw_s)
    );
    eprintln!(
        "  the pane running the four: {pane_s:.1} s; UI thread per frame ({} frames): mean {mean:.2} ms, p99 {p99:.2} ms, max {max:.2} ms (target < 8 ms)",
        frames.len()
    );
}
