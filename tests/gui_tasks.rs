//! The sync-task dashboard, headless with egui_kittest, against the demo SyncTool and
//! DataCollector that `--demo` starts: create a task, watch it run, delete it after confirming.
#![cfg(feature = "gui")]

mod common;

use common::gui::step_until;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use walscope::ui::WalscopeApp;

#[test]
fn create_watch_and_delete_a_sync_task() {
    let mut app = WalscopeApp::new();
    app.start_demo();
    assert!(app.show_tasks, "--demo opens the dashboard");
    let mut h = Harness::builder()
        .with_size(eframe::egui::Vec2::new(1400.0, 1000.0))
        .build_ui_state(|ui, app: &mut WalscopeApp| app.ui(ui), app);
    step_until(&mut h, "the first poll", |h| h.query_by_label_contains("0 sub-task(s)").is_some());
    h.get_by_label("Create task").click();
    step_until(&mut h, "the task to run with rates", |h| {
        let b = h.state().tasks.poller.as_ref().map(|p| p.board()).unwrap_or_default();
        b.rows.len() == 2
            && b.rows.iter().all(|r| r.status == "RUNNING")
            && b.rates.iter().all(|r| r.is_some())
    });
    h.get_by_label_contains("CreateSyncTask: done");
    assert_eq!(h.query_all_by_label("RUNNING").count(), 2, "a badge per sub-task, in words");
    // Each sub-task has a sparkline of its recent rows, which says what it shows.
    h.step();
    assert_eq!(h.query_all_by_label_contains("rows in ").count(), 2, "a sparkline per sub-task");

    // Delete needs the confirmation first.
    h.get_by_label("Delete task").click();
    h.step();
    assert!(h.query_by_label_contains("DeleteSyncTask").is_none(), "nothing sent without confirming");
    h.get_by_label("I understand delete cannot be undone").click();
    h.step();
    h.get_by_label("Delete task").click();
    step_until(&mut h, "the task to go", |h| {
        h.state().tasks.poller.as_ref().is_some_and(|p| p.board().rows.is_empty())
            && h.query_by_label_contains("DeleteSyncTask: done").is_some()
    });
}
