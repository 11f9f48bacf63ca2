//! Salvage re-runs against a real demo failover pair on 127.0.0.1: a re-run over a complete
//! dump with the old primary gone, `--force`, and `--resume` with a new `--end-timetick`.

use super::util::*;
use std::path::Path;
use std::time::Duration;
use walscope::dump::{Manifest, manifest_path};
use walscope::sim::WalGenConfig;
use walscope::sim::milvus::pair::{MilvusPair, MilvusPairConfig};
use walscope::sim::milvus::{Faults, OLD_CLUSTER_ID};

const PCHANNEL: &str = "by-dev-rootcoord-dml_1";

fn end_timetick() -> String {
    ((walscope::sim::walgen::START_MS + 2_000) << 18).to_string()
}

/// A port nothing listens on.
fn closed_port() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap().to_string();
    drop(l);
    addr
}

async fn pair(faults: Faults) -> MilvusPair {
    let wal = WalGenConfig { seed: 41, rows: (1, 1), total: None, ..Default::default() };
    MilvusPair::start(MilvusPairConfig { wal, old_faults: faults, ..Default::default() }).await.unwrap()
}

/// `walscope salvage ... --out FILE` with `extra` flags, run off the runtime's threads, killed
/// (and reported as hanging) after `limit`.
async fn salvage(dir: &Path, new: &str, old: &str, extra: &[&str], limit: Duration) -> std::process::Output {
    let mut args: Vec<String> = ["salvage", "--new-primary", new, "--old-primary", old]
        .into_iter()
        .chain(["--source-cluster-id", OLD_CLUSTER_ID, "--pchannel", PCHANNEL, "--retries", "0"])
        .map(String::from)
        .collect();
    args.extend(extra.iter().map(|s| s.to_string()));
    let dir = dir.to_path_buf();
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        finish_within(&mut command(&dir, &args), limit, "salvage (it ignores the end)")
    })
    .await
    .unwrap()
}

/// A re-run over a complete dump while the old primary is unreachable emptied the dump (the
/// file was truncated before the stream gave a frame). Now it is refused before any server is
/// asked, naming --resume; with --force it still fails on the unreachable primary and leaves the
/// dump where it was (the old one is moved aside only once a frame has arrived); into a new file,
/// a failure before the first frame creates nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rerun_salvage_never_costs_the_dump() {
    let p = pair(Faults::default()).await;
    let (new, old) = (p.new_addr().to_string(), p.old_addr().to_string());
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let end = end_timetick();
    let o =
        salvage(d, &new, &old, &["--out", "s.dump", "--end-timetick", &end], Duration::from_secs(60)).await;
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(Manifest::load(&manifest_path(&d.join("s.dump"))).unwrap().complete);
    let before = snapshot(d);
    let gone = closed_port();

    let o =
        salvage(d, &new, &gone, &["--out", "s.dump", "--end-timetick", &end], Duration::from_secs(60)).await;
    failed_cleanly(&o, d, &before, "already holds a dump");
    assert!(stderr(&o).contains("--resume"), "{}", stderr(&o));

    let o = salvage(
        d,
        &new,
        &gone,
        &["--out", "s.dump", "--end-timetick", &end, "--force"],
        Duration::from_secs(60),
    )
    .await;
    failed_cleanly(&o, d, &before, "refused");

    let o =
        salvage(d, &new, &gone, &["--out", "fresh.dump", "--end-timetick", &end], Duration::from_secs(60))
            .await;
    failed_cleanly(&o, d, &before, "refused");

    // --force with the old primary there: the new dump in place, the old one kept whole.
    let o = salvage(
        d,
        &new,
        &old,
        &["--out", "s.dump", "--end-timetick", &end, "--force"],
        Duration::from_secs(60),
    )
    .await;
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(Some(before[Path::new("s.dump")]), checksum(&d.join("s.dump.bak")));
    assert_eq!(
        Some(before[Path::new("s.dump.manifest.json")]),
        checksum(&d.join("s.dump.manifest.json.bak"))
    );
    assert_eq!(checksum(&d.join("s.dump")), checksum(&d.join("s.dump.bak")), "the same salvage again");
    assert!(leftovers(d).is_empty());
    p.shutdown().await;
}

/// `salvage --resume --end-timetick T` ignored T and ran until killed. Now the new end is
/// applied and recorded in the manifest; an end the dump has already passed is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_applies_a_new_end_timetick() {
    // The first stream drops after 60 messages; no end was given, so it would run for ever.
    let p = pair(Faults { drop_after: Some(60), ..Default::default() }).await;
    let (new, old) = (p.new_addr().to_string(), p.old_addr().to_string());
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let o = salvage(d, &new, &old, &["--out", "s.dump"], Duration::from_secs(60)).await;
    assert!(!o.status.success(), "the dropped stream fails the run");
    let m = Manifest::load(&manifest_path(&d.join("s.dump"))).unwrap();
    assert!(!m.complete && m.frames > 0, "{m:?}");
    let written = m.resume.as_ref().unwrap().timetick;

    // An end the dump already passed: refused in words, nothing changed.
    let before = snapshot(d);
    let early = (written - 1).to_string();
    let o = salvage(
        d,
        &new,
        &old,
        &["--out", "s.dump", "--resume", "--end-timetick", &early],
        Duration::from_secs(60),
    )
    .await;
    failed_cleanly(&o, d, &before, "past --end-timetick");

    let end = end_timetick();
    let o = salvage(
        d,
        &new,
        &old,
        &["--out", "s.dump", "--resume", "--end-timetick", &end],
        Duration::from_secs(60),
    )
    .await;
    assert!(o.status.success(), "{}", stderr(&o));
    let m = Manifest::load(&manifest_path(&d.join("s.dump"))).unwrap();
    assert!(m.complete, "{m:?}");
    assert_eq!(m.request["end_timetick"], serde_json::json!(end), "the new end is recorded");
    assert!(m.resume.unwrap().timetick <= end.parse::<u64>().unwrap());
    p.shutdown().await;
}

/// `call --save-dump FILE` is an output too: an existing dump is refused before any server is
/// called; with --force a call that fails before its first message leaves it where it was.
#[test]
fn call_save_dump_never_overwrites_a_dump() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    sample_dump(d, "s.dump", 20);
    let before = snapshot(d);
    let gone = closed_port();
    let method = "milvus.proto.milvus.MilvusService/DumpMessages";
    let o = walscope(d, &["call", &gone, method, "--save-dump", "s.dump"]);
    failed_cleanly(&o, d, &before, "already exists");
    let o = walscope(d, &["call", &gone, method, "--save-dump", "s.dump", "--force"]);
    failed_cleanly(&o, d, &before, "refused");
}
