//! The window's shell, headless with egui_kittest: menus (File, Edit, View, Connections, Help),
//! dock panes, shortcuts, recent files and the state kept between runs, and the `--demo`
//! connection profiles checked against the real demo servers on loopback.

use crate::common::gui::{harness, settle, step_until};
use eframe::egui::{Key, Modifiers};
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use std::path::{Path, PathBuf};
use walscope::ui::WalscopeApp;
use walscope::ui::panes::PaneId as Pane;
use walscope::ui::recent::{PersistedState, RECENT_MAX, RecentFiles, Theme};

/// The window size these tests draw at.
const SIZE: [f32; 2] = [1400.0, 900.0];

fn sample(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/samples").join(rel)
}

/// A copy of the SyncTool progress sample (editable, small) in `dir`.
fn progress_copy(dir: &Path, name: &str) -> PathBuf {
    crate::common::gui::sample_copy(dir, "synctool/7/0.progress", name)
}

/// Ctrl as winit reports it off macOS (Ctrl and Command both set).
const CTRL: Modifiers = Modifiers { ctrl: true, command: true, alt: false, shift: false, mac_cmd: false };

fn open_menu(h: &mut Harness<'static, WalscopeApp>, name: &str) {
    h.get_by_label(name).click();
    settle(h);
}

#[test]
fn edit_menu_undoes_redoes_and_is_disabled_without_edits() {
    let dir = tempfile::tempdir().unwrap();
    let file = progress_copy(dir.path(), "0.progress");
    let mut h = harness(SIZE, WalscopeApp::new());
    h.step();
    open_menu(&mut h, "Edit");
    assert!(h.get_by_label("Undo Ctrl+Z").accesskit_node().is_disabled(), "nothing open: nothing to undo");
    h.key_press(Key::Escape);
    h.state_mut().open(file.clone());
    step_until(&mut h, "the file to open", |h| h.state().tabs.len() == 1);
    step_until(&mut h, "the row", |h| h.state().tabs[0].dump.frame_count() > 0);
    h.state_mut().tabs[0].select(0);
    h.state_mut().tabs[0].apply_edit(0, "sync_point.offset", "4242");
    assert!(h.state().tabs[0].session.is_dirty(), "the edit applied");
    settle(&mut h);
    h.get_by_label_contains("0.progress (edited)");

    open_menu(&mut h, "Edit");
    h.get_by_label_contains("Ctrl+Shift+Z");
    assert!(h.get_by_label("Redo Ctrl+Shift+Z").accesskit_node().is_disabled());
    h.get_by_label("Undo Ctrl+Z").click();
    h.step();
    assert!(!h.state().tabs[0].session.is_dirty(), "Edit > Undo took the edit back");
    open_menu(&mut h, "Edit");
    assert!(!h.get_by_label("Redo Ctrl+Shift+Z").accesskit_node().is_disabled(), "and it can be redone");
    h.get_by_label("Redo Ctrl+Shift+Z").click();
    h.step();
    assert!(h.state().tabs[0].session.is_dirty(), "Edit > Redo put it back");
    open_menu(&mut h, "Edit");
    h.get_by_label("Save 0.progress Ctrl+S").click();
    settle(&mut h);
    // Edit > Save shows the confirmation; its Save writes.
    h.get_by_label("Save").click();
    step_until(&mut h, "the save and reopen", |h| {
        h.state().tabs.len() == 1 && !h.state().tabs[0].session.is_dirty() && h.state().opening.is_empty()
    });
    assert!(dir.path().join("0.progress.bak").exists(), "Edit > Save wrote the file with a backup");
    assert_ne!(std::fs::read(&file).unwrap(), std::fs::read(sample("synctool/7/0.progress")).unwrap());
}

#[test]
fn panes_follow_the_view_menu_and_close_with_their_tab() {
    let mut h = harness(SIZE, WalscopeApp::new());
    h.step();
    assert!(h.state().layout.has(&Pane::Start), "the start page with no file open");
    open_menu(&mut h, "View");
    h.get_by_label("Schemas panel").click();
    settle(&mut h);
    open_menu(&mut h, "View");
    h.get_by_label("Sync tasks panel").click();
    settle(&mut h);
    assert!(h.state().layout.has(&Pane::Schemas) && h.state().layout.has(&Pane::Tasks));
    h.get_by_label_contains("built-in schema (");
    assert!(
        h.query_all_by_label("Schemas").count() >= 1 && h.query_all_by_label("Sync tasks").count() >= 1,
        "tab titles"
    );

    // Unchecking removes the pane; the tab's close button hides the panel.
    open_menu(&mut h, "View");
    h.get_by_label("Sync tasks panel").click();
    settle(&mut h);
    assert!(!h.state().layout.has(&Pane::Tasks) && !h.state().show_tasks);
    h.get_by_label("Close").click();
    settle(&mut h);
    assert!(!h.state().show_schemas, "closing the Schemas tab hides the panel");
    assert!(!h.state().layout.has(&Pane::Schemas));
    assert!(h.state().layout.has(&Pane::Start));
}

#[test]
fn shortcuts_cycle_and_close_files() {
    let dir = tempfile::tempdir().unwrap();
    let [a, b, c] = ["a", "b", "c"].map(|n| progress_copy(dir.path(), &format!("{n}.progress")));
    let mut h = harness(SIZE, WalscopeApp::new());
    h.step();
    for (i, f) in [&a, &b, &c].into_iter().enumerate() {
        h.state_mut().open(f.clone());
        step_until(&mut h, "the file", |h| h.state().tabs.len() == i + 1);
    }
    settle(&mut h);
    let active = |h: &Harness<'static, WalscopeApp>| h.state().tabs[h.state().active].path.clone();
    assert_eq!(active(&h), c, "the newest file is active");
    assert!(!h.state().layout.has(&Pane::Start), "the start page gives way to files");
    h.key_press_modifiers(CTRL, Key::Tab);
    h.step();
    assert_eq!(active(&h), a, "Ctrl+Tab: next file (wraps)");
    settle(&mut h);
    assert!(h.state().layout.is_shown(&Pane::File(a.clone())), "its pane comes to the front");
    assert!(!h.state().layout.is_shown(&Pane::File(c.clone())));
    h.key_press_modifiers(CTRL | Modifiers::SHIFT, Key::Tab);
    h.step();
    assert_eq!(active(&h), c, "Ctrl+Shift+Tab: previous file (wraps)");
    h.key_press_modifiers(CTRL | Modifiers::SHIFT, Key::Tab);
    h.step();
    assert_eq!(active(&h), b, "Ctrl+Shift+Tab: previous file");
    h.key_press_modifiers(CTRL, Key::W);
    settle(&mut h);
    assert_eq!(h.state().tabs.len(), 2, "Ctrl+W closed the active file");
    assert!(!h.state().layout.has(&Pane::File(b.clone())), "its pane went too");
    assert!(h.state().tabs.iter().all(|t| t.path != b));
    // Opening an open file shows it instead of opening it twice.
    h.state_mut().open(a.clone());
    settle(&mut h);
    assert_eq!(h.state().tabs.len(), 2);
    assert_eq!(active(&h), a);
}

#[test]
fn recent_files_are_recorded_listed_and_persisted() {
    let dir = tempfile::tempdir().unwrap();
    let file = progress_copy(dir.path(), "r.progress");
    let gone = dir.path().join("gone.progress");
    let mut app = WalscopeApp::new();
    app.recent = RecentFiles::new(vec![gone.clone()]);
    app.show_schemas = true;
    let mut h = harness(SIZE, app);
    h.step();
    h.state_mut().open(file.clone());
    step_until(&mut h, "the file", |h| h.state().tabs.len() == 1);
    assert_eq!(h.state().recent.paths(), [std::path::absolute(&file).unwrap(), gone.clone()], "newest first");

    open_menu(&mut h, "File");
    h.get_by_label("Recent files").click();
    step_until(&mut h, "the missing file's reason", |h| {
        h.query_by_label_contains("the file is gone (moved or deleted)").is_some()
    });
    assert!(h.get_by_label(&gone.display().to_string()).accesskit_node().is_disabled(), "greyed out");
    assert!(!h.get_by_label(&file.display().to_string()).accesskit_node().is_disabled());

    // What is saved at exit comes back: recent files, panels, layout, open files, theme.
    let saved = h.state().persisted(Theme::Dark).to_json();
    let state = PersistedState::from_json(&saved);
    assert_eq!(state.theme, Theme::Dark);
    assert_eq!(state.open_files, vec![file.clone()]);
    let mut again = WalscopeApp::new();
    let theme = again.restore(state, &[]);
    assert_eq!(theme, Theme::Dark);
    assert_eq!(again.recent.paths(), h.state().recent.paths());
    assert!(again.show_schemas && !again.show_tasks);
    assert!(again.layout.has(&Pane::Schemas) && again.layout.has(&Pane::File(file.clone())));
    let mut h2 = harness(SIZE, again);
    step_until(&mut h2, "the previous file to reopen", |h| h.state().tabs.len() == 1);
    assert_eq!(h2.state().tabs[0].path, file);

    // Files named on the command line replace the previous ones; missing ones do not reopen.
    let mut other = WalscopeApp::new();
    other.restore(PersistedState::from_json(&saved), std::slice::from_ref(&gone));
    assert!(!other.layout.has(&Pane::File(file.clone())));
    std::fs::remove_file(&file).unwrap();
    let mut later = WalscopeApp::new();
    later.restore(PersistedState::from_json(&saved), &[]);
    assert!(later.opening.is_empty(), "a file that is gone is not reopened");

    // Damaged or old state gives defaults; the list keeps only the last ten.
    assert!(PersistedState::from_json("not json").recent.is_empty());
    let many = RecentFiles::new((0..15).map(|i| PathBuf::from(format!("/x/{i}"))).collect());
    assert_eq!(many.paths().len(), RECENT_MAX);
    assert_eq!(many.paths()[0], PathBuf::from("/x/0"));
}

#[test]
fn demo_profiles_are_listed_and_checked_against_the_demo_servers() {
    let mut app = WalscopeApp::new();
    app.start_demo();
    let names: Vec<String> = app.connections.demo.iter().map(|p| p.name.clone()).collect();
    assert_eq!(
        names,
        ["demo-milvus", "demo-old-primary", "demo-new-primary", "demo-synctool", "demo-collector"]
    );
    let mut h = harness(SIZE, app);
    h.step();
    open_menu(&mut h, "Connections");
    h.get_by_label("demo-milvus (demo)");
    h.get_by_label("demo-collector (demo)");
    assert_eq!(h.query_all_by_label("brpc").count(), 2);
    // One at a time: an answer arriving moves the buttons below it, and a click found before
    // that frame would land beside its button.
    for n in ["demo-milvus", "demo-synctool", "demo-collector"] {
        settle(&mut h);
        h.get_by_label(&format!("Test {n}")).click();
        step_until(&mut h, "the check to start", |h| h.state().connections.result(n).is_some());
    }
    step_until(&mut h, "three answers", |h| {
        ["demo-milvus", "demo-synctool", "demo-collector"].iter().all(|n| {
            !matches!(
                h.state().connections.result(n),
                None | Some(walscope::ui::panes::connections::CheckResult::Running)
            )
        })
    });
    settle(&mut h);
    h.get_by_label_contains("OK: Milvus v2.6.20-walscope-demo (GetVersion) in ");
    h.get_by_label_contains("reflection: not served");
    h.get_by_label_contains("OK: SyncTool: 0 sub-tasks in ");
    let collector = h.state().connections.result("demo-collector").map(|r| r.text()).unwrap_or_default();
    assert!(collector.starts_with("OK: ") && collector.contains("DataCollector"), "{collector}");
}

#[test]
fn a_check_against_a_closed_port_fails_in_words() {
    let (_held, closed) = crate::common::refused_address();
    let port = closed.port();
    let mut app = WalscopeApp::new();
    app.connections.demo.push(walscope::net::profile::ConnectionProfile::plain(
        "nobody",
        walscope::net::profile::TransportKind::Grpc,
        format!("127.0.0.1:{port}"),
    ));
    let mut h = harness(SIZE, app);
    h.step();
    open_menu(&mut h, "Connections");
    h.get_by_label("Test nobody").click();
    step_until(&mut h, "the failure", |h| h.query_by_label_contains("Failed: ").is_some());
    h.get_by_label_contains("cannot connect to");
}

#[test]
fn dragging_a_tab_splits_the_files_side_by_side() {
    let dir = tempfile::tempdir().unwrap();
    let a = progress_copy(dir.path(), "a.progress");
    let b = progress_copy(dir.path(), "b.progress");
    let mut h = harness(SIZE, WalscopeApp::new());
    h.step();
    h.state_mut().open(a.clone());
    step_until(&mut h, "a", |h| h.state().tabs.len() == 1);
    h.state_mut().open(b.clone());
    step_until(&mut h, "b", |h| h.state().tabs.len() == 2);
    settle(&mut h);
    assert_eq!(h.state().layout.file_groups(), 1, "both files start as tabs of one group");
    let from = h.get_by_label("b.progress").rect().center();
    let to = eframe::egui::pos2(1380.0, 450.0);
    h.hover_at(from);
    h.step();
    h.drag_at(from);
    h.step();
    for i in 1..=20 {
        h.hover_at(from + (to - from) * (i as f32 / 20.0));
        h.step();
    }
    h.drop_at(to);
    settle(&mut h);
    assert_eq!(h.state().layout.file_groups(), 2, "the dragged file got its own group beside the other");
    assert!(h.state().layout.is_shown(&Pane::File(a)) && h.state().layout.is_shown(&Pane::File(b)));
}

/// A running job's cancel button stays where it was while the progress texts of the jobs
/// before it change (an operator's pointer aimed at it must not land on something else), and
/// clicking it cancels that job and no other.
#[test]
fn status_bar_cancel_buttons_stay_put_while_progress_texts_change() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};
    use walscope::ui::jobs::{JobOwner, JobProgress};
    let mut app = WalscopeApp::new();
    let text = Arc::new(Mutex::new(String::from("1 frame")));
    let stopped: Vec<Arc<AtomicBool>> = (0..2).map(|_| Arc::new(AtomicBool::new(false))).collect();
    for (k, stop) in stopped.iter().enumerate() {
        let (text, stop) = (text.clone(), stop.clone());
        // The first job has no known end (spinner and words), the second a fraction (a bar).
        let probe = Box::new(move || {
            let t = text.lock().unwrap().clone();
            (JobProgress { fraction: (k == 1).then_some(0.25), text: t }, false)
        });
        app.jobs.watch(
            format!("job {k}"),
            JobOwner::App,
            walscope::ui::jobs::Pace::Working(std::time::Duration::from_millis(100)),
            probe,
            Box::new(move || stop.store(true, Ordering::SeqCst)),
        );
    }
    let mut h = harness(SIZE, app);
    settle(&mut h);
    let buttons = |h: &Harness<'static, WalscopeApp>| -> Vec<_> {
        h.query_all_by_label("x").map(|n| n.rect().min).collect()
    };
    let before = buttons(&h);
    assert_eq!(before.len(), 2, "a cancel button per running job");
    for t in [
        "dumping: 1,234,567 frames, 1.2 GiB at 345,678 frames/s, 12 s left".to_string(),
        "2".to_string(),
        "x".repeat(300),
    ] {
        *text.lock().unwrap() = t.clone();
        settle(&mut h);
        assert_eq!(buttons(&h), before, "the cancel buttons moved when the text became {t:?}");
    }
    h.query_all_by_label("x").nth(1).expect("the second job's cancel").click();
    step_until(&mut h, "the second job to be cancelled", |_| stopped[1].load(Ordering::SeqCst));
    assert!(!stopped[0].load(Ordering::SeqCst), "the first job still runs");
}
