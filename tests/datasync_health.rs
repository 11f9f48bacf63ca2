//! The sync-task health read from real TaskStatus polls of the demo SyncTool over 127.0.0.1,
//! with its fault switches: a sub-task stalled with heartbeats (lastUpdateTime moves, count
//! does not), one stuck in INIT, one reassigned again and again, one FAILED, and a SyncTool
//! restart (counts reset), each detected and explained by `datasync::health` through the
//! poller's board; the summary, table names, progress paths, update ages and the plot's series.

use std::sync::Arc;
use std::time::Duration;
use walscope::datasync::health::{HealthConfig, Trouble};
use walscope::datasync::{SyncMode, TableNames};
use walscope::jobs::task_poll::{PollerConfig, TaskBoard, TaskPoller};
use walscope::net::SyncToolClient;
use walscope::net::brpc::BrpcTransport;
use walscope::net::{CallOptions, Transport};
use walscope::sim::collector::CollectorConfig;
use walscope::sim::datasync::DatasyncDemo;

const CLICKS: u32 = 5;
const ORDERS: u32 = 2;
const USERS: u32 = 3;

fn troubles(b: &TaskBoard, tid: u32, pid: u32) -> Vec<Trouble> {
    b.health.iter().find(|h| h.tid == tid && h.pid == pid).map(|h| h.troubles.clone()).unwrap_or_default()
}

/// Waits (at most 30 s) for a board that satisfies `done`.
async fn until(poller: &TaskPoller, what: &str, done: impl Fn(&TaskBoard) -> bool) -> TaskBoard {
    let mut rx = poller.subscribe();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let b = rx.borrow_and_update().clone();
        if done(&b) {
            return b;
        }
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        match tokio::time::timeout(left, rx.changed()).await {
            Ok(Ok(())) => {}
            _ => panic!("never saw {what}; last board: {:#?}", (b.summary, b.health)),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stalls_failures_reassignments_and_restarts_are_detected_from_polls() {
    let any = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
    let cfg = CollectorConfig { batch_interval: Duration::from_millis(50), full_mode_batches: 1_000 };
    let check = Duration::from_millis(300);
    let demo = DatasyncDemo::start(any, any, check, cfg).await.unwrap();
    let endpoint = demo.synctool.addr().to_string();
    let transport: Arc<dyn Transport> = Arc::new(BrpcTransport::new(endpoint.clone()));
    let client = SyncToolClient::new(
        Arc::new(BrpcTransport::new(endpoint)),
        CallOptions { timeout: Some(Duration::from_secs(5)), ..Default::default() },
    );
    let dir = tempfile::tempdir().unwrap();
    let names_file = dir.path().join("sync_tables.json");
    let mut names = TableNames::default();
    names.name_tid(ORDERS, "demo_db.orders");
    let config = PollerConfig {
        every: Duration::from_millis(100),
        keep: 30,
        health: HealthConfig {
            init_after: Duration::from_millis(1_500),
            stall_after: Duration::from_millis(1_500),
            check_period: check,
            ..Default::default()
        },
        names,
        names_file: Some(names_file.clone()),
    };
    let poller = TaskPoller::spawn_with(&tokio::runtime::Handle::current(), transport, config);
    poller.remember_table("demo_db", "clicks", "/offline/clicks");
    poller.poll_now();
    // users' only partition never gets data: its collector is quiet from the start.
    demo.stall(USERS, 0, false);
    for (table, dest) in
        [("clicks", "/offline/clicks"), ("orders", "/offline/orders"), ("users", "/offline/users")]
    {
        client.create_sync_task("demo_db", table, SyncMode::FullAndContinuous, None, dest).await.unwrap();
    }
    let b = until(&poller, "every partition of clicks and orders RUNNING with rows", |b| {
        b.rows.len() == 7
            && b.rows.iter().filter(|r| r.tid != USERS).all(|r| r.status == "RUNNING" && r.count > 0)
    })
    .await;
    let h = b.health.iter().find(|h| h.tid == CLICKS && h.pid == 0).unwrap();
    assert_eq!(h.table.as_deref(), Some("demo_db.clicks"), "named by the dest it was created with");
    assert_eq!(h.progress_path.as_deref(), Some("/tmp/sync_task_progress/5/0.progress"));
    assert!(h.last_update_age_ms.is_some_and(|a| a < 5_000), "{h:?}");
    assert!(b.health.iter().any(|h| h.tid == ORDERS && h.table.as_deref() == Some("demo_db.orders")));
    assert!(TableNames::load(&names_file).name(CLICKS) == Some("demo_db.clicks"), "the names are kept");

    // clicks/0: heartbeats only; clicks/1: silent (reassigned again and again); orders/0: fails.
    demo.stall(CLICKS, 0, true);
    demo.stall(CLICKS, 1, false);
    demo.fail(ORDERS, 0);
    let b = until(&poller, "all four troubles", |b| {
        troubles(b, CLICKS, 0).iter().any(|t| matches!(t, Trouble::Stalled { heartbeat: true, .. }))
            && troubles(b, CLICKS, 1)
                .iter()
                .any(|t| matches!(t, Trouble::Reassigned { times } if *times >= 2))
            && troubles(b, ORDERS, 0).contains(&Trouble::Failed)
            && troubles(b, USERS, 0).iter().any(|t| matches!(t, Trouble::LongInit { .. }))
    })
    .await;
    // The heartbeat moves lastUpdateTime while count stands still.
    let hb = b.health.iter().find(|h| h.tid == CLICKS && h.pid == 0).unwrap();
    assert!(hb.last_update_age_ms.is_some_and(|a| a < 1_000), "{hb:?}");
    for (tid, pid) in [(CLICKS, 2), (CLICKS, 3), (ORDERS, 1)] {
        assert!(troubles(&b, tid, pid).is_empty(), "{tid}/{pid}: {:?}", troubles(&b, tid, pid));
    }
    assert!(b.summary.failed == 1 && b.summary.stalled >= 2, "{:?}", b.summary);
    assert!(
        b.summary.text.contains("of 7 partitions stalled") && b.summary.text.contains("1 failed"),
        "{}",
        b.summary.text
    );
    for t in troubles(&b, CLICKS, 0).iter().chain(&troubles(&b, ORDERS, 0)).chain(&troubles(&b, USERS, 0)) {
        assert!(!t.meaning(check).is_empty() && !t.action().is_empty() && !t.label().is_empty());
    }
    let init = &troubles(&b, USERS, 0)[0];
    assert!(init.meaning(check).contains("never checks INIT"), "{}", init.meaning(check));
    let hb = troubles(&b, CLICKS, 0).into_iter().find(|t| matches!(t, Trouble::Stalled { .. })).unwrap();
    assert!(hb.meaning(check).contains("heartbeat"), "{}", hb.meaning(check));
    assert!(Trouble::Failed.action().contains("restart SyncTool"));
    let rows_before: u64 =
        b.health.iter().filter(|h| h.tid == CLICKS && h.pid == 2).map(|h| h.total_rows).sum();
    assert!(b.trends.table(CLICKS).is_some_and(|s| s.len() >= 2));

    // SyncTool restarts: every count back to 0, every sub-task RUNNING again.
    demo.clear_faults();
    demo.restart_synctool();
    let b = until(&poller, "the count reset", |b| {
        troubles(b, CLICKS, 2).iter().any(|t| matches!(t, Trouble::CountReset { .. }))
    })
    .await;
    assert!(b.summary.restarted >= 1 && b.summary.text.contains("SyncTool restarted"), "{:?}", b.summary);
    let h = b.health.iter().find(|h| h.tid == CLICKS && h.pid == 2).unwrap();
    assert!(h.restarts == 1 && h.count < rows_before && h.total_rows >= rows_before, "{h:?}");
    assert!(Trouble::CountReset { from: 9, to: 0 }.meaning(check).contains("restarted"));
    let orders0 = b.health.iter().find(|h| h.tid == ORDERS && h.pid == 0).unwrap();
    assert_eq!(orders0.status, "RUNNING", "a restart recovers FAILED sub-tasks as RUNNING");

    // The interval changes and polling pauses while the poller runs.
    poller.set_interval(Duration::from_millis(200));
    until(&poller, "the new interval", |b| b.interval == Duration::from_millis(200)).await;
    poller.set_paused(true);
    let b = until(&poller, "a paused board", |b| b.paused).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(poller.board().polls, b.polls, "no polls while paused");
    poller.set_paused(false);
    until(&poller, "polling again", |x| !x.paused && x.polls > b.polls).await;
}
