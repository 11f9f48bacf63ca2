//! The sync-task dashboard, headless with egui_kittest, against a demo SyncTool and
//! DataCollector over loopback: create a task from the form, it runs, its rows rise on the plot;
//! a stalled sub-task and a SyncTool restart's count reset are flagged with what they mean;
//! deleting waits for a second click (checked on the server); clear_all waits for the words.

use crate::common::gui::{harness, settle, step_until};
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use std::time::Duration;
use walscope::datasync::Trouble;
use walscope::net::profile::{ConnectionProfile, TransportKind};
use walscope::sim::collector::CollectorConfig;
use walscope::sim::datasync::DatasyncDemo;
use walscope::ui::WalscopeApp;

fn rows_on_server(rt: &tokio::runtime::Runtime, endpoint: &str) -> usize {
    rt.block_on(crate::common::synctool(endpoint).task_status()).unwrap().0.len()
}

#[test]
fn create_watch_trouble_and_delete_a_sync_task() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let any = "127.0.0.1:0".parse().unwrap();
    let cfg = CollectorConfig { batch_interval: Duration::from_millis(50), full_mode_batches: 3 };
    let demo = rt.block_on(DatasyncDemo::start(any, any, Duration::from_secs(30), cfg)).unwrap();
    let endpoint = demo.synctool.addr().to_string();
    let dir = tempfile::tempdir().unwrap();
    let mut app = WalscopeApp::new();
    app.config_dir = Some(dir.path().to_path_buf());
    app.connections.demo.push(ConnectionProfile::plain("synctool", TransportKind::Brpc, endpoint.clone()));
    app.tasks_health.stall_after = Duration::from_secs(2);
    app.show_tasks = true;
    app.tasks.profile = "synctool".into();
    app.tasks.interval_secs = 1;
    let mut h = harness([1600.0, 1600.0], app);
    settle(&mut h);
    h.get_by_label("Watch").click();
    step_until(&mut h, "the first poll", |h| {
        h.query_by_label_contains("No sync tasks on this SyncTool").is_some()
    });
    assert!(h.query_by_label("no sync tasks").is_none(), "said once, by the table");

    // Create, from the form: refused first without a destination, then sent.
    {
        let t = &mut h.state_mut().tasks;
        t.db = "demo_db".into();
        t.table = "orders".into();
        t.mode = 2;
    }
    settle(&mut h);
    h.get_by_label("Create task").click();
    settle(&mut h);
    h.get_by_label_contains("Not sent: name the destination");
    assert_eq!(rows_on_server(&rt, &endpoint), 0, "nothing sent");
    h.state_mut().tasks.dest = "/tmp/walscope-test/orders".into();
    settle(&mut h);
    h.get_by_label("Create task").click();
    settle(&mut h);
    // It says what it will do, in a modal, and waits for the confirmation.
    h.get_by_label("Create this sync task?");
    h.get_by_label_contains("This creates a sync task for demo_db.orders on synctool, writing its rows to /tmp/walscope-test/orders");
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(rows_on_server(&rt, &endpoint), 0, "nothing sent before the confirmation");
    h.get_by_label("⚠ Create it").click();
    let board = |h: &Harness<'static, WalscopeApp>| {
        h.state().tasks.poller.as_ref().map(|p| p.board()).unwrap_or_default()
    };
    step_until(&mut h, "the task to run", |h| {
        let b = board(h);
        b.rows.len() == 2 && b.rows.iter().all(|r| r.status == "RUNNING" && r.count > 0)
    });
    settle(&mut h);
    h.get_by_label_contains("CreateSyncTask: done (demo_db.orders)");
    assert_eq!(h.query_all_by_label("RUNNING").count(), 2, "a badge per partition, in words");
    h.get_by_label_contains("demo_db.orders (tid ");
    let tid = board(&h).rows[0].tid;
    // Its rows rise on the plot.
    step_until(&mut h, "rows rising on the plot", |h| {
        let b = board(h);
        b.trends.table(tid).is_some_and(|s| s.len() >= 3 && s.points().last().unwrap().1 > s.points()[0].1)
    });

    // A stalled partition (its collector sends zero-row heartbeats) is flagged.
    demo.stall(tid, 0, true);
    step_until(&mut h, "the stall", |h| {
        board(h).health.iter().any(|x| {
            x.pid == 0 && x.troubles.iter().any(|t| matches!(t, Trouble::Stalled { heartbeat: true, .. }))
        })
    });
    settle(&mut h);
    h.get_by_label_contains("pid 0: no rows for");
    h.get_by_label_contains("What to do: Check whether the table still gets writes");
    assert!(board(&h).summary.text.contains("stalled"), "{}", board(&h).summary.text);
    demo.heal(tid, 0);

    // SyncTool restarts: counts go back to 0, flagged as a reset.
    demo.restart_synctool();
    step_until(&mut h, "the count reset", |h| {
        board(h).health.iter().any(|x| x.troubles.iter().any(|t| matches!(t, Trouble::CountReset { .. })))
    });
    settle(&mut h);
    assert!(h.query_all_by_label_contains("count reset").count() >= 1, "flagged at its row");

    // Delete: the first click only asks, in a modal (a double click cannot delete), and the
    // table's name must be typed; Cancel keeps the task.
    let delete = format!("⚠ Delete the task of tid {tid}");
    h.get_by_label(&delete).click();
    settle(&mut h);
    h.get_by_label("Delete this sync task?");
    h.get_by_label_contains("2 partitions stop");
    assert!(h.get_by_label("⚠ Delete the task").accesskit_node().is_disabled(), "the name is typed first");
    h.get_by_label("Cancel").click();
    settle(&mut h);
    assert!(h.query_by_label("Delete this sync task?").is_none(), "Cancel closes it");
    std::thread::sleep(Duration::from_millis(300));
    settle(&mut h);
    assert_eq!(rows_on_server(&rt, &endpoint), 2, "nothing deleted without the confirmation");
    h.get_by_label(&delete).click();
    settle(&mut h);
    let field = h.get_by_label("Type orders to go on:");
    field.click();
    field.type_text("orders");
    settle(&mut h);
    h.get_by_label("⚠ Delete the task").click();
    step_until(&mut h, "the task to go", |_| rows_on_server(&rt, &endpoint) == 0);
    step_until(&mut h, "the board to follow", |h| board(h).rows.is_empty());

    // clear_all needs the words.
    crate::common::create_task(&rt, &endpoint, "users");
    step_until(&mut h, "the new task", |h| !board(h).rows.is_empty());
    settle(&mut h);
    h.get_by_label("⚠ Delete every task (clear_all)...").click();
    settle(&mut h);
    assert!(
        h.get_by_label("⚠ Delete every task").accesskit_node().is_disabled(),
        "refused until the words are typed"
    );
    let field = h.get_by_label("Type clear all to go on:");
    field.click();
    field.type_text("clear all");
    settle(&mut h);
    h.get_by_label("⚠ Delete every task").click();
    step_until(&mut h, "every task to go", |_| rows_on_server(&rt, &endpoint) == 0);
}

/// The create form is a typed change from the form to the call: a mode SyncTool does not know
/// is refused in words (never sent as another mode), and mode 1 carries its start time in ms.
#[test]
fn the_create_form_is_a_typed_change() {
    use walscope::datasync::{SyncMode, TaskChange};
    use walscope::ui::panes::tasks::{FormRefused, TasksState};
    let mut t = TasksState {
        db: "demo_db".into(),
        table: "orders".into(),
        dest: "/tmp/o".into(),
        ..Default::default()
    };
    t.mode = 7;
    let refused = t.create_request().expect_err("mode 7 is not a sync mode");
    assert_eq!(refused, FormRefused::UnknownMode(7));
    assert!(refused.to_string().contains("mode 7 is not a sync mode"), "{refused}");
    t.mode = 1;
    assert_eq!(t.create_request(), Err(FormRefused::NoStartTime));
    t.start_time = "1700000000000".into();
    assert_eq!(
        t.create_request(),
        Ok(TaskChange::Create {
            db: "demo_db".into(),
            table: "orders".into(),
            mode: SyncMode::IncrementalByTimestamp,
            start_ts: Some(1_700_000_000_000),
            dest: "/tmp/o".into(),
        })
    );
    assert_eq!(TaskChange::ClearAll.method(), "TaskStatus", "clear_all goes as TaskStatus");
}

/// Issue #38, trouble first: a partition whose reassignment is refused turns FAILED; its whole
/// row is in trouble with an icon and the word (a badge "✖ FAILED", not a coloured word alone),
/// its rate is "—" (never the last number seen), and the summary above says a partition failed.
#[test]
fn a_failed_partition_is_flagged_at_its_row_with_no_stale_rate() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let any = "127.0.0.1:0".parse().unwrap();
    let cfg = CollectorConfig { batch_interval: Duration::from_millis(50), full_mode_batches: 3 };
    let demo = rt.block_on(DatasyncDemo::start(any, any, Duration::from_secs(1), cfg)).unwrap();
    let endpoint = demo.synctool.addr().to_string();
    crate::common::create_task(&rt, &endpoint, "orders");
    let tid = DatasyncDemo::tid_of("demo_db", "orders").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut app = WalscopeApp::new();
    app.config_dir = Some(dir.path().to_path_buf());
    app.connections.demo.push(ConnectionProfile::plain("synctool", TransportKind::Brpc, endpoint));
    app.show_tasks = true;
    app.tasks.profile = "synctool".into();
    app.tasks.interval_secs = 1;
    let mut h = harness([1600.0, 1600.0], app);
    settle(&mut h);
    h.get_by_label("Watch").click();
    let board = |h: &Harness<'static, WalscopeApp>| {
        h.state().tasks.poller.as_ref().map(|p| p.board()).unwrap_or_default()
    };
    step_until(&mut h, "the task to run with a rate", |h| {
        let b = board(h);
        b.rows.len() == 2
            && b.rows.iter().all(|r| r.status == "RUNNING")
            && b.rates.iter().all(|r| r.is_some())
    });
    demo.fail(tid, 1);
    step_until(&mut h, "partition 1 to fail", |h| {
        board(h).rows.iter().any(|r| r.pid == 1 && r.status == "FAILED")
    });
    settle(&mut h);
    let b = board(&h);
    let failed = b.rows.iter().position(|r| r.pid == 1).unwrap();
    assert_eq!(b.rates[failed], None, "no rate for a FAILED sub-task");
    h.get_by_label("✖ FAILED");
    assert!(h.query_all_by_label("—").count() >= 1, "its rate is a dash");
    h.get_by_label_contains("1 partition in trouble");
    assert!(b.summary.text.contains("1 of 2 partitions failed"), "{}", b.summary.text);
    h.get_by_label_contains(&b.summary.text);
    h.get_by_label_contains("pid 1: FAILED");
}
