//! An idle window sleeps (issue #38, "idle means idle"): with the sync-task dashboard watching
//! a demo SyncTool over loopback (the poller `--demo` starts), nothing asks to be drawn again
//! until a poll brings something new; a spinner is redrawn at most ten times a second. (egui's own
//! spinner asked for every frame: both cores busy with `--demo`, doing nothing.)

use crate::common::gui::{harness, settle, step_until};
use eframe::egui::{self, ViewportId};
use egui_kittest::kittest::Queryable;
use std::time::Duration;
use walscope::net::profile::{ConnectionProfile, TransportKind};
use walscope::sim::collector::CollectorConfig;
use walscope::sim::datasync::DatasyncDemo;
use walscope::ui::WalscopeApp;

/// How soon the last frame asked to be drawn again.
fn repaint_delay(h: &egui_kittest::Harness<'static, WalscopeApp>) -> Duration {
    h.output().viewport_output.get(&ViewportId::ROOT).map_or(Duration::MAX, |v| v.repaint_delay)
}

#[test]
fn a_watching_dashboard_is_drawn_only_when_what_it_shows_changes() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let any = "127.0.0.1:0".parse().unwrap();
    let cfg = CollectorConfig { batch_interval: Duration::from_millis(500), full_mode_batches: 3 };
    let demo = rt.block_on(DatasyncDemo::start(any, any, Duration::from_secs(30), cfg)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut app = WalscopeApp::new();
    app.config_dir = Some(dir.path().to_path_buf());
    let endpoint = demo.synctool.addr().to_string();
    app.connections.demo.push(ConnectionProfile::plain("synctool", TransportKind::Brpc, endpoint.clone()));
    app.show_tasks = true;
    app.tasks.profile = "synctool".into();
    app.tasks.interval_secs = 2;
    let mut h = harness([1400.0, 900.0], app);
    settle(&mut h);
    h.get_by_label("Watch").click();
    step_until(&mut h, "the first poll", |h| {
        h.query_by_label_contains("No sync tasks on this SyncTool").is_some()
    });
    // The click's own frames (the button's hover and press animate) are over after a few.
    settle(&mut h);
    // Nothing moves on the SyncTool: no frame on a timer at all (polls that bring the same
    // board do not draw the window).
    for _ in 0..5 {
        h.step();
        let delay = repaint_delay(&h);
        let why = h.ctx.repaint_causes();
        assert!(delay == Duration::MAX, "an idle window asked to be drawn again after {delay:?}: {why:?}");
    }
    std::thread::sleep(Duration::from_secs(5));
    assert!(!h.ctx.has_requested_repaint(), "two polls with nothing new drew nothing");
    h.get_by_label_contains("up to date: polled every 2 s");
    // Something changes on the SyncTool: the next poll wakes the window.
    crate::common::create_task(&rt, &endpoint, "orders");
    let until = std::time::Instant::now() + Duration::from_secs(15);
    while !h.ctx.has_requested_repaint() {
        assert!(std::time::Instant::now() < until, "a new sub-task did not wake the window");
        std::thread::sleep(Duration::from_millis(50));
    }
    step_until(&mut h, "the new rows", |h| {
        h.query_by_label("0 sub-tasks").is_none() && h.query_by_label_contains("sub-task").is_some()
    });
}

#[test]
fn a_spinner_asks_for_ten_frames_a_second_at_most() {
    let mut h = egui_kittest::Harness::new_ui(|ui| {
        walscope::ui::widgets::look::busy(ui);
    });
    h.step();
    h.step();
    let delay =
        h.output().viewport_output.get(&egui::ViewportId::ROOT).map_or(Duration::MAX, |v| v.repaint_delay);
    assert!(delay >= walscope::ui::widgets::look::BUSY_FRAME, "{delay:?}");
    assert!(delay < Duration::MAX, "a spinner keeps moving");
}
