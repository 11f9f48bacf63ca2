//! A failover pair whose clusters name their pchannels after their ids, as upstream does (the
//! cluster id is the channel-name prefix): the old primary's `by-dev-old-rootcoord-dml_N`, the
//! new one's `by-dev-rootcoord-dml_N`. GetReplicateInfo answers only for the new primary's own
//! names (another name gets no answer until the deadline), so a salvage given the old primary's
//! names (`--all-pchannels` takes them from its configuration) asks the new primary by its own
//! name of each, at the same position; the checkpoints name the old primary's pchannels, which
//! the dumps read; and the dumps equal those of a pair that shares its names.

use crate::common::walgen::{small_wal, timetick_after_ms};
use std::path::Path;
use std::time::Duration;
use walscope::net::ConnectOptions;
use walscope::net::profile::{ConnectionProfile, TransportKind};
use walscope::salvage::checkpoint::{fetch_checkpoints, pchannel_to_ask, pchannels_from_configuration};
use walscope::salvage::set::{self as salvage_set, RunOptions, SalvageSetSpec};
use walscope::sim::milvus::OLD_CLUSTER_ID;
use walscope::sim::milvus::pair::{MilvusPair, MilvusPairConfig};

fn profile(name: &str, addr: std::net::SocketAddr) -> ConnectionProfile {
    ConnectionProfile::plain(name, TransportKind::Grpc, addr.to_string())
}

async fn pair(distinct_pchannels: bool) -> MilvusPair {
    let cfg = MilvusPairConfig { wal: small_wal(41), distinct_pchannels, ..Default::default() };
    MilvusPair::start(cfg).await.expect("the demo pair starts")
}

/// Every pchannel of `pair` salvaged into `dir`, given by `pchannels`; every dump complete.
async fn salvage_all(pair: &MilvusPair, pchannels: Vec<String>, dir: &Path, end: u64) {
    let (new, old) = (profile("new", pair.new_addr()), profile("old", pair.old_addr()));
    let mut spec = SalvageSetSpec::new(new, old, OLD_CLUSTER_ID, pchannels, dir);
    spec.end_timetick = Some(end);
    spec.skip_replicated = true;
    spec.run = RunOptions { max_retries: 0, timeout: Duration::from_secs(30), ..Default::default() };
    let (manifest, results) = salvage_set::start(spec).await.unwrap().wait().await;
    for (p, r) in &results {
        assert!(
            r.as_ref().is_ok_and(|o| o.manifest.complete),
            "{p}: {:?}",
            r.as_ref().err().map(|e| e.to_string())
        );
    }
    assert!(manifest.pchannels.iter().all(|e| e.complete), "{manifest:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_new_primary_is_asked_by_its_own_pchannel_names() {
    let distinct = pair(true).await;
    let (new, old) = (profile("new", distinct.new_addr()), profile("old", distinct.old_addr()));
    let (opts, t) = (ConnectOptions::default(), Duration::from_secs(10));
    let new_names = MilvusPair::pchannels();
    assert_eq!(distinct.new.pchannels(), new_names);
    let old_names = pchannels_from_configuration(&old, Some(OLD_CLUSTER_ID), &opts, t).await.unwrap();
    assert_eq!(old_names, distinct.old.pchannels());
    assert!(old_names.iter().all(|p| p.starts_with("by-dev-old-rootcoord-dml_")), "{old_names:?}");

    // Given either cluster's names: each asked by the new primary's name at its position, each
    // checkpoint naming the old primary's pchannel to dump.
    for given in [&old_names, &new_names] {
        let c = fetch_checkpoints(&new, Some(&old), OLD_CLUSTER_ID, given, &opts, t).await.unwrap();
        for ((r, o), n) in c.reports.iter().zip(&old_names).zip(&new_names) {
            let k = r.result.as_ref().unwrap_or_else(|e| panic!("{}: {e}", r.pchannel));
            assert_eq!((&k.target_pchannel, &k.pchannel), (n, o), "{given:?}");
        }
    }

    // The dumps equal a shared-name pair's, pchannel for pchannel.
    let shared = pair(false).await;
    let dir = tempfile::tempdir().unwrap();
    let end = timetick_after_ms(300);
    salvage_all(&distinct, old_names.clone(), &dir.path().join("distinct"), end).await;
    salvage_all(&shared, new_names.clone(), &dir.path().join("shared"), end).await;
    for (o, n) in old_names.iter().zip(&new_names) {
        let a = std::fs::read(dir.path().join("distinct").join(format!("{o}.dump"))).unwrap();
        let b = std::fs::read(dir.path().join("shared").join(format!("{n}.dump"))).unwrap();
        assert!(!a.is_empty() && a == b, "{o} differs from {n}");
    }
    distinct.shutdown().await;
    shared.shutdown().await;
}

/// The position rule alone: a name the new primary has is asked as it is; another is mapped by
/// its position in the old primary's list when both lists are as long; else left as given.
#[test]
fn a_pchannel_is_asked_by_the_new_primarys_name_at_its_position() {
    let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let new = names(&["b-dml_0", "b-dml_1"]);
    let old = names(&["a-dml_0", "a-dml_1"]);
    assert_eq!(pchannel_to_ask("b-dml_1", &new, &old), "b-dml_1");
    assert_eq!(pchannel_to_ask("a-dml_1", &new, &old), "b-dml_1");
    assert_eq!(pchannel_to_ask("c-dml_0", &new, &old), "c-dml_0");
    assert_eq!(pchannel_to_ask("a-dml_0", &new, &old[..1]), "a-dml_0", "lists of different lengths");
    assert_eq!(pchannel_to_ask("a-dml_0", &[], &old), "a-dml_0", "the new primary lists none");
}
