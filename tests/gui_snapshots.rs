//! The window's looks, pinned (issue #38, item 7): every pane kind drawn at a fixed size in the
//! dark and the light theme, in a fixed state (committed samples, profiles that point nowhere,
//! no clock on screen), compared with the images in `tests/snapshots/` within egui_kittest's
//! tolerance. A pane drawn clipped, overlapping or cut off fails here. The README shows these
//! same images, so its screenshots never go stale.
//!
//! After a deliberate change of looks: `UPDATE_SNAPSHOTS=1 cargo test --test tests
//! gui_snapshots::`, look at the new images, commit them.

use crate::common::gui::{sample_copy, settle, step_until};
use eframe::egui;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use std::path::Path;
use walscope::net::profile::{ConnectionProfile, TransportKind};
use walscope::ui::WalscopeApp;
use walscope::ui::panes::composer::ComposerState;
use walscope::ui::panes::diff::{CompareFrom, DiffState};
use walscope::ui::panes::salvage::{DumpEnd, DumpOutcome, SalvageState};

/// The size every pane is drawn at (a laptop's window).
const SIZE: egui::Vec2 = egui::vec2(1280.0, 760.0);

const THEMES: [(egui::Theme, &str); 2] = [(egui::Theme::Dark, "dark"), (egui::Theme::Light, "light")];

/// Profiles that point nowhere (fixed addresses: no port of a running server on screen).
fn profiles() -> Vec<ConnectionProfile> {
    vec![
        ConnectionProfile::plain("new-primary", TransportKind::Grpc, "127.0.0.1:19530".into()),
        ConnectionProfile::plain("old-primary", TransportKind::Grpc, "127.0.0.1:19531".into()),
        ConnectionProfile::plain("synctool", TransportKind::Brpc, "127.0.0.1:8848".into()),
    ]
}

fn app(config: &Path) -> WalscopeApp {
    let mut app = WalscopeApp::new();
    app.config_dir = Some(config.to_path_buf());
    app.connections.demo = profiles();
    app
}

fn harness(app: WalscopeApp, theme: egui::Theme) -> Harness<'static, WalscopeApp> {
    Harness::builder()
        .with_size(SIZE)
        .with_theme(theme)
        .build_ui_state(|ui, app: &mut WalscopeApp| app.ui(ui), app)
}

/// Draws `setup`'s window in both themes and compares each with `tests/snapshots/NAME_THEME.png`.
fn pin(name: &str, setup: impl Fn(&Path, egui::Theme) -> Harness<'static, WalscopeApp>) {
    let mut results = egui_kittest::SnapshotResults::new();
    for (theme, suffix) in THEMES {
        // A fixed folder: the Connections pane shows where profiles.json is, and a random
        // temp folder's name would change the image at every run (and on every machine).
        let dir = Path::new("/tmp/walscope-snapshots").join(format!("{name}-{suffix}"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut h = setup(&dir, theme);
        settle(&mut h);
        h.snapshot(format!("pane_{name}_{suffix}"));
        results.extend_harness(&mut h);
    }
}

#[test]
fn start_page() {
    pin("start", |dir, theme| harness(app(dir), theme));
}

#[test]
fn file_with_a_message_selected() {
    pin("file", |dir, theme| {
        let copy = sample_copy(dir, "milvus-100.dump", "wal.dump");
        let mut h = harness(app(dir), theme);
        h.step();
        h.state_mut().open(copy);
        step_until(&mut h, "decoded rows", |h| h.query_by_label("Pulsar 100/2/-1").is_some());
        h.get_by_label("Pulsar 100/2/-1").click();
        step_until(&mut h, "the detail", |h| h.state().tabs[0].detail.as_ref().is_some_and(|d| d.index == 4));
        h
    });
}

#[test]
fn file_with_a_damaged_range() {
    pin("file_damaged", |dir, theme| {
        let copy = sample_copy(dir, "milvus-40-garbage.dump", "damaged.dump");
        let mut h = harness(app(dir), theme);
        h.step();
        h.state_mut().open(copy);
        step_until(&mut h, "the file", |h| h.state().tabs.first().is_some_and(|t| t.dump.index().is_done()));
        h
    });
}

#[test]
fn composer_with_a_request() {
    pin("composer", |dir, theme| {
        let mut app = app(dir);
        let method = Some("milvus.proto.milvus.MilvusService.GetReplicateInfo".to_string());
        app.new_composer(Some("new-primary".into()), method, Vec::new(), None);
        let mut h = harness(app, theme);
        settle(&mut h);
        let pool = h.state().schemas.pool().clone();
        let c = h.state_mut().panes.first_mut::<ComposerState>().unwrap();
        c.json = r#"{"source_cluster_id": "by-dev-old", "target_pchannel": "by-dev-rootcoord-dml_2"}"#.into();
        c.json_changed(&pool);
        h
    });
}

#[test]
fn composer_without_a_method() {
    pin("composer_services", |dir, theme| {
        let mut app = app(dir);
        app.new_composer(Some("new-primary".into()), None, Vec::new(), None);
        harness(app, theme)
    });
}

#[test]
fn connections() {
    pin("connections", |dir, theme| {
        let mut app = app(dir);
        app.show_connections = true;
        harness(app, theme)
    });
}

#[test]
fn schemas() {
    pin("schemas", |dir, theme| {
        let mut app = app(dir);
        app.show_schemas = true;
        harness(app, theme)
    });
}

#[test]
fn sync_tasks_before_watching() {
    pin("tasks", |dir, theme| {
        let mut app = app(dir);
        app.show_tasks = true;
        app.tasks.profile = "synctool".into();
        harness(app, theme)
    });
}

#[test]
fn salvage_with_ended_dumps() {
    pin("salvage", |dir, theme| {
        let mut app = app(dir);
        app.new_salvage();
        let mut h = harness(app, theme);
        let s = h.state_mut().panes.first_mut::<SalvageState>().unwrap();
        s.new_primary = "new-primary".into();
        s.old_primary = "old-primary".into();
        s.cluster_id = "by-dev-old".into();
        s.pchannels = "by-dev-rootcoord-dml_0\nby-dev-rootcoord-dml_1".into();
        s.folder = "/var/tmp/salvage-0412".into();
        s.end_time = "2026-11-30 00:15:00".into();
        for (p, outcome) in [
            ("by-dev-rootcoord-dml_0", DumpOutcome::Complete { frames: 1_204, bytes: 19_561_295 }),
            ("by-dev-rootcoord-dml_1", DumpOutcome::Cancelled { frames: 311 }),
        ] {
            s.ends.push(DumpEnd {
                pchannel: p.into(),
                file: format!("/var/tmp/salvage-0412/{p}.dump").into(),
                outcome: Ok(outcome),
                resumable: matches!(outcome, DumpOutcome::Cancelled { .. }),
                report: None,
            });
        }
        h
    });
}

#[test]
fn replay_setup() {
    pin("replay", |dir, theme| {
        let mut app = app(dir);
        app.new_replay(Some("/var/tmp/salvage-0412".into()), Some("new-primary".into()));
        harness(app, theme)
    });
}

#[test]
fn timeline_of_a_salvage_folder() {
    pin("timeline", |dir, theme| {
        let folder = dir.join("salvage-0412");
        std::fs::create_dir_all(&folder).unwrap();
        crate::common::timeline::make(&folder, 4000);
        let mut app = app(dir);
        app.new_timeline(Some(folder));
        let mut h = harness(app, theme);
        step_until(&mut h, "the timeline", |h| {
            h.state()
                .panes
                .first::<walscope::ui::panes::timeline::TimelineState>()
                .is_some_and(|t| t.data.is_some())
        });
        h
    });
}

#[test]
fn jobs() {
    pin("jobs", |dir, theme| {
        let mut h = harness(app(dir), theme);
        h.step();
        h.get_by_label("View").click();
        settle(&mut h);
        h.get_by_label_contains("Jobs").click();
        h
    });
}

#[test]
fn diff_of_an_edited_frame() {
    pin("diff", |dir, theme| {
        let copy = sample_copy(dir, "milvus-100.dump", "wal.dump");
        let mut h = harness(app(dir), theme);
        h.step();
        h.state_mut().open(copy.clone());
        step_until(&mut h, "decoded rows", |h| h.query_by_label("Pulsar 100/2/-1").is_some());
        h.state_mut().tabs[0].select(4);
        h.state_mut().tabs[0].apply_edit(4, "message.properties[\"_vc\"]", "edited");
        h.state_mut().compare_with(CompareFrom::Frame { path: copy, index: 4 });
        settle(&mut h);
        h.get_by_label("Compare with frame 4 of wal.dump as saved").click();
        step_until(&mut h, "the diff", |h| {
            h.state().panes.first::<DiffState>().is_some_and(|d| d.messages().is_some())
        });
        settle(&mut h);
        if let Some(m) = h.state_mut().panes.first_mut::<DiffState>().and_then(DiffState::messages_mut) {
            m.pick_change(0);
        }
        h
    });
}

/// The file header says its size and count in the one format (`206.3 KiB (211,279 bytes)`,
/// `100 frames`), not a bare byte count beside other sizes in MiB.
#[test]
fn the_file_header_uses_the_one_size_format() {
    let dir = tempfile::tempdir().unwrap();
    let copy = sample_copy(dir.path(), "milvus-100.dump", "wal.dump");
    let len = std::fs::metadata(&copy).unwrap().len();
    let mut h = harness(app(dir.path()), egui::Theme::Dark);
    h.step();
    h.state_mut().open(copy);
    step_until(&mut h, "the header", |h| h.query_by_label_contains(" framing (").is_some());
    h.get_by_label_contains(&format!("raw | {} | varint framing", walscope::fmt::bytes_exact(len)));
    h.get_by_label_contains("| 100 frames");
}
