//! The salvage job against the demo Milvus over 127.0.0.1: the dump equals the demo WAL exactly
//! (count, order, bytes), also after a dropped stream (automatic reconnect, or a later resume
//! from the manifest), and a cancelled run leaves a file its manifest describes.

use crate::common;

use common::salvage::{demo, expected, spec};
use walscope::dump::{Manifest, manifest_path};
use walscope::salvage::job::{self as salvage, SalvageState};
use walscope::sim::milvus::Faults;

async fn salvage_equals_wal(n: usize) {
    let (want, end, count) = expected(n);
    let demo = demo(Faults::default()).await;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("salvage.dump");
    let outcome = salvage::spawn(spec(&demo.addr().to_string(), &out, end, false, 0)).wait().await.unwrap();
    assert_eq!(outcome.written as usize, count);
    assert!(outcome.manifest.complete);
    assert_eq!(outcome.manifest.frames as usize, count);
    let got = std::fs::read(&out).unwrap();
    assert_eq!(got.len(), want.len());
    assert!(got == want, "the dump differs from the demo WAL");
    let m = Manifest::load(&manifest_path(&out)).unwrap();
    assert_eq!(m.source_endpoint.as_deref(), Some(demo.addr().to_string().as_str()));
    assert_eq!(m.request["include_start_message"], true);
    assert_eq!(m.resume.map(|r| r.timetick), Some(end));
    demo.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn salvage_of_3k_messages_equals_the_demo_wal() {
    salvage_equals_wal(3_000).await;
}

/// The full-size check; the synthetic WAL is slow to generate in debug builds, so run it with
/// `cargo test --release --test tests -- --ignored salvage_demo::`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore]
async fn salvage_of_100k_messages_equals_the_demo_wal() {
    salvage_equals_wal(100_000).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropped_stream_reconnects_without_duplicates_or_gaps() {
    let (want, end, _) = expected(3_000);
    let demo = demo(Faults { drop_after: Some(1_500), ..Default::default() }).await;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("salvage.dump");
    let handle = salvage::spawn(spec(&demo.addr().to_string(), &out, end, false, 3));
    // Watch the states the job goes through: the drop must have been seen and survived.
    let mut progress = handle.progress.clone();
    let watcher = tokio::spawn(async move {
        let mut reconnects = Vec::new();
        while progress.changed().await.is_ok() {
            let p = progress.borrow_and_update().clone();
            if let SalvageState::Reconnecting { attempt, reason } = p.state {
                reconnects.push((attempt, reason, p.frames));
            }
        }
        reconnects
    });
    let outcome = handle.wait().await.unwrap();
    let reconnects = watcher.await.unwrap();
    assert!(outcome.manifest.complete);
    assert!(std::fs::read(&out).unwrap() == want, "the dump differs from an uninterrupted run");
    assert_eq!(reconnects.len(), 1, "exactly one reconnect, after the drop: {reconnects:?}");
    let (attempt, reason, frames) = &reconnects[0];
    assert_eq!(*attempt, 1);
    assert!(reason.contains("UNAVAILABLE") || reason.to_lowercase().contains("unavailable"), "{reason}");
    assert!(*frames >= 1_400, "the drop came after the 1,500th message was sent: {frames} written");
    demo.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_from_the_manifest_after_a_drop_equals_an_uninterrupted_run() {
    resume_after_drop(3_000, 1_500).await;
}

/// The full-size check (release only, like the 100k salvage): drop at 50k, resume to 100k.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore]
async fn resume_of_100k_after_a_drop_at_50k_equals_an_uninterrupted_run() {
    resume_after_drop(100_000, 50_000).await;
}

async fn resume_after_drop(n: usize, drop_at: u64) {
    let (want, end, _) = expected(n);
    let demo = demo(Faults { drop_after: Some(drop_at), ..Default::default() }).await;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("salvage.dump");
    let addr = demo.addr().to_string();
    let err = salvage::spawn(spec(&addr, &out, end, false, 0)).wait().await.unwrap_err();
    assert!(err.to_string().contains("UNAVAILABLE"), "{err}");
    let m = Manifest::load(&manifest_path(&out)).unwrap();
    assert_eq!(m.frames, drop_at);
    assert!(!m.complete);
    let outcome = salvage::spawn(spec(&addr, &out, end, true, 0)).wait().await.unwrap();
    assert!(outcome.manifest.complete);
    assert!(std::fs::read(&out).unwrap() == want, "the resumed dump differs from an uninterrupted run");
    demo.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_leaves_a_file_its_manifest_describes() {
    let demo = demo(Faults::default()).await;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("salvage.dump");
    let mut handle = salvage::spawn(spec(&demo.addr().to_string(), &out, 0, false, 0));
    while handle.progress.borrow().frames < 300 {
        handle.progress.changed().await.unwrap();
    }
    handle.cancel.cancel();
    let outcome = handle.wait().await.unwrap();
    assert!(outcome.cancelled && !outcome.manifest.complete);
    assert_eq!(std::fs::metadata(&out).unwrap().len(), outcome.manifest.bytes);
    demo.shutdown().await;
}
