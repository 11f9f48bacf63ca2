//! The salvage window (reference §4): by default a salvage leaves out what the new primary
//! already has, by CDC's rule: timeticks above the checkpoint's, judged per transaction by its
//! commit; `--keep-replicated` keeps everything after the checkpoint id. The default dump is
//! exactly the kept one without the frames judged at or below the checkpoint's timetick. (The
//! generator's transactions do not straddle a checkpoint, so the per-transaction judging is
//! computed here but not put to a test of its own.)

use crate::common;

use common::salvage::spec;
use std::collections::HashMap;
use walscope::dump::view::FrameDecoder;
use walscope::dump::{DumpFile, OpenOptions};
use walscope::salvage::job::{self as salvage, SalvageOptions};
use walscope::schema::SchemaSet;
use walscope::sim::milvus::{Faults, MilvusDemo, MilvusDemoConfig};

/// (message id, timetick, txn id) of every frame.
fn frames(path: &std::path::Path) -> Vec<(String, u64, Option<i64>)> {
    let set = SchemaSet::builtin();
    let desc = set.message("milvus.proto.milvus.DumpMessagesResponse").unwrap();
    let d =
        DumpFile::open(path, OpenOptions { message_type: Some(desc.clone()), ..Default::default() }).unwrap();
    d.wait_indexed();
    let decoder = FrameDecoder::new(set.pool().clone(), Some(desc), 16);
    (0..d.frame_count())
        .map(|i| {
            let w = decoder.view_uncached(&d, i).unwrap().wal.unwrap();
            (w.message_id, w.timetick.unwrap(), w.txn)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_window_skips_only_what_the_new_primary_has() {
    // The checkpoint's id lags 40 entries behind the last replicated message, as a real
    // last-confirmed id does, so the dump from it starts well before the checkpoint's timetick.
    let config = MilvusDemoConfig {
        wal: common::salvage::wal(),
        checkpoint_index: 200,
        checkpoint_lag: 40,
        faults: Faults::default(),
        ..Default::default()
    };
    let demo = MilvusDemo::start(config).await.unwrap();
    let addr = demo.addr().to_string();
    let dir = tempfile::tempdir().unwrap();
    let (skip, keep) = (dir.path().join("skip.dump"), dir.path().join("keep.dump"));
    let end = {
        // A window of a few thousand messages after the checkpoint.
        let (_, end, _) = common::salvage::expected(3_000);
        end
    };
    let run = |out: std::path::PathBuf, skip_replicated: bool| {
        let options = SalvageOptions { skip_replicated, ..Default::default() };
        salvage::spawn_with(spec(&addr, &out, end, false, 0), options)
    };
    let skipped = run(skip.clone(), true).wait().await.unwrap();
    let kept = run(keep.clone(), false).wait().await.unwrap();
    assert!(skipped.manifest.complete && kept.manifest.complete);
    let checkpoint = skipped.manifest.job.as_ref().unwrap()["checkpoint"]["time_tick"].as_u64().unwrap();

    let (skip, keep) = (frames(&skip), frames(&keep));
    // Each transaction is judged by its commit, the last frame carrying its txn id.
    let mut commit: HashMap<i64, u64> = HashMap::new();
    for (_, tt, txn) in &keep {
        if let Some(t) = txn {
            commit.insert(*t, *tt);
        }
    }
    let judge = |tt: u64, txn: Option<i64>| txn.and_then(|t| commit.get(&t).copied()).unwrap_or(tt);
    let expected: Vec<_> =
        keep.iter().filter(|(_, tt, txn)| judge(*tt, *txn) > checkpoint).cloned().collect();
    assert!(expected.len() < keep.len(), "the kept dump holds messages the new primary has");
    assert_eq!(skip, expected, "skipped exactly the frames judged at or below the checkpoint");
    demo.shutdown().await;
}
