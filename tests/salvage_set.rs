//! Salvage sets against the demo pair (an old and a new primary after a forced failover) over
//! 127.0.0.1: four pchannels in parallel into one folder, each dump equal to what the old
//! primary's WAL holds for its window; the replicated messages skipped or kept, exactly; a
//! cancelled dump resumed, and a folder resumed after a "restart" (every task killed), both
//! identical to an uninterrupted run; missing checkpoints, old servers and missing privileges
//! explained; the result analysis (opaque transactions of servers before 2.6.20 flagged).

use crate::common::walgen::{small_wal, timetick_after_ms};
use std::path::Path;
use std::time::Duration;
use walscope::dump::framing::write_frame;
use walscope::dump::{Framing, SyncPolicy};
use walscope::net::ConnectOptions;
use walscope::net::grpc::{Auth, GrpcSettings};
use walscope::net::profile::{ConnectionProfile, TransportKind};
use walscope::salvage::checkpoint::{CheckpointProblem, fetch_checkpoints, pchannels_from_configuration};
use walscope::salvage::folder::{FolderManifest, find_unfinished};
use walscope::salvage::job::{self as salvage, SalvageOptions, SalvageSpec};
use walscope::salvage::report::{AnalyzeOptions, analyze_dump};
use walscope::salvage::set::{self as salvage_set, RunOptions, SalvageSetSpec};
use walscope::schema::SchemaSet;
use walscope::sim::milvus::pair::{MilvusPair, MilvusPairConfig};
use walscope::sim::milvus::{Faults, NEW_CLUSTER_ID, OLD_CLUSTER_ID};
use walscope::sim::{GeneratedMessage, WalGenConfig, WalGenerator};

const CHECKPOINT_INDEX: usize = 5;
const LAG: usize = 3;

/// This suite's WAL: small messages.
fn wal() -> WalGenConfig {
    small_wal(23)
}

fn plain(m: &GeneratedMessage) -> bool {
    m.last_confirmed_id == m.message_id && m.type_name != "BeginTxn" && m.type_name != "CommitTxn"
}

struct Expected {
    skip: Vec<u8>,
    keep: Vec<u8>,
    checkpoint_tt: u64,
    /// Frames of `keep` at or below the checkpoint.
    replicated: usize,
}

/// What the old primary's WAL holds for one pchannel's window, as DumpMessages sends it: from
/// the checkpoint's (lagging) last-confirmed id, each transaction judged by its commit.
fn expected(pchannel: &str, end: u64) -> Expected {
    let set = SchemaSet::builtin();
    let all: Vec<GeneratedMessage> = WalGenerator::new(set.pool(), wal())
        .filter(|m| m.pchannel == pchannel)
        .take_while(|m| m.timetick <= end + (500 << 18))
        .collect();
    let ckpt = (CHECKPOINT_INDEX..).find(|&i| plain(&all[i])).expect("checkpoint");
    let confirmed = &all[ckpt.saturating_sub(LAG)].last_confirmed_id;
    let start = all.iter().position(|m| &m.message_id == confirmed).expect("start");
    let tt = all[ckpt].timetick;
    let (mut skip, mut keep, mut replicated) = (Vec::new(), Vec::new(), 0);
    let mut i = start;
    while i < all.len() {
        let mut n = 1;
        if all[i].type_name == "BeginTxn" {
            while all[i + n - 1].type_name != "CommitTxn" {
                n += 1;
            }
        }
        let group = &all[i..i + n];
        i += n;
        let judge = group[n - 1].timetick;
        if judge > end {
            break;
        }
        for m in group {
            write_frame(Framing::VarintDelimited, &m.response, &mut keep);
            if m.timetick <= tt {
                replicated += 1;
            }
        }
        if judge > tt {
            for m in group {
                write_frame(Framing::VarintDelimited, &m.response, &mut skip);
            }
        }
    }
    Expected { skip, keep, checkpoint_tt: tt, replicated }
}

fn profile(name: &str, addr: std::net::SocketAddr) -> ConnectionProfile {
    ConnectionProfile::plain(name, TransportKind::Grpc, addr.to_string())
}

async fn pair(old_faults: Faults, new_faults: Faults) -> MilvusPair {
    MilvusPair::start(MilvusPairConfig {
        wal: wal(),
        checkpoint_index: CHECKPOINT_INDEX,
        checkpoint_lag: LAG,
        old_faults,
        new_faults,
        ..Default::default()
    })
    .await
    .expect("the demo pair starts")
}

fn run_options() -> RunOptions {
    RunOptions {
        max_retries: 0,
        timeout: Duration::from_secs(30),
        sync: SyncPolicy { every_frames: 25, every: Duration::from_millis(200) },
        ..Default::default()
    }
}

fn set_spec(p: &MilvusPair, dir: &Path, end: u64, skip: bool) -> SalvageSetSpec {
    let mut s = SalvageSetSpec::new(
        profile("new", p.new_addr()),
        profile("old", p.old_addr()),
        OLD_CLUSTER_ID,
        MilvusPair::pchannels(),
        dir,
    );
    s.end_timetick = Some(end);
    s.skip_replicated = skip;
    s.run = run_options();
    s
}

fn dump_of(dir: &Path, pchannel: &str) -> Vec<u8> {
    std::fs::read(dir.join(format!("{pchannel}.dump"))).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_pchannels_in_parallel_skip_or_keep_exactly_the_replicated_frames() {
    let end = timetick_after_ms(2_500);
    let p = pair(Faults::default(), Faults::default()).await;
    let root = tempfile::tempdir().unwrap();
    let (skip_dir, keep_dir) = (root.path().join("skip"), root.path().join("keep"));

    let run = salvage_set::start(set_spec(&p, &skip_dir, end, true)).await.unwrap();
    assert_eq!(run.jobs.len(), 4, "every pchannel has a checkpoint");
    let ckpts = run.checkpoints.clone().unwrap();
    assert!(ckpts.new_primary_version.as_deref().unwrap().starts_with("v2.6.20"));
    let mut progress = run.jobs[0].handle.progress.clone();
    let first_pchannel = run.jobs[0].pchannel.clone();
    let (manifest, results) = run.wait().await;
    for (pc, r) in &results {
        let o = r.as_ref().unwrap_or_else(|e| panic!("{pc}: {e}"));
        assert!(o.manifest.complete && !o.cancelled && !o.ended_before_end, "{pc}");
    }
    let last = progress.borrow_and_update().clone();
    let f = last.fraction().expect("an end is known");
    assert!((0.9..=1.0).contains(&f), "fraction {f}");
    // The finished job's progress is where its file ends, not its last throttled report.
    let (_, first) = results.iter().find(|(pc, _)| *pc == first_pchannel).unwrap();
    let first = &first.as_ref().unwrap().manifest;
    assert_eq!(last.frames, first.frames);
    assert_eq!(last.last_timetick, first.resume.as_ref().expect("a resume point").timetick);
    assert_eq!(manifest.pchannels.len(), 4);
    assert!(manifest.skip_replicated && manifest.end_timetick == Some(end));
    let run = salvage_set::start(set_spec(&p, &keep_dir, end, false)).await.unwrap();
    let (keep_manifest, _) = run.wait().await;
    assert!(!keep_manifest.skip_replicated);

    for (i, pc) in MilvusPair::pchannels().iter().enumerate() {
        let want = expected(pc, end);
        let ckpt = ckpts.reports[i].result.as_ref().unwrap();
        assert_eq!(ckpt.time_tick, want.checkpoint_tt, "{pc}");
        assert!(ckpt.time_utc.starts_with("2026-11-30 00:12:"), "{}", ckpt.time_utc);
        assert!(!ckpt.message_id_display.is_empty());
        let entry = &manifest.pchannels[i];
        assert!(entry.complete && entry.frames > 100, "{entry:?}");
        assert!(dump_of(&skip_dir, pc) == want.skip, "{pc}: the skip dump differs from the WAL");
        assert!(dump_of(&keep_dir, pc) == want.keep, "{pc}: the keep dump differs from the WAL");
        assert!(want.replicated > LAG, "{pc}: the checkpoint's lag shows in the dump");

        let skip = analyze_dump(&skip_dir.join(format!("{pc}.dump")), AnalyzeOptions::default()).unwrap();
        let keep = analyze_dump(&keep_dir.join(format!("{pc}.dump")), AnalyzeOptions::default()).unwrap();
        // Skipping drops exactly the frames at or below the checkpoint's timetick.
        assert_eq!(keep.frames - skip.frames, want.replicated as u64, "{pc}");
        assert_eq!(keep.replicated_frames, want.replicated as u64);
        assert_eq!(skip.replicated_frames, 0);
        assert!(skip.first_timetick.unwrap() > want.checkpoint_tt);
        assert!(keep.first_timetick.unwrap() <= want.checkpoint_tt);
        assert!(skip.last_timetick.unwrap() <= end);
        assert_eq!(skip.types.values().sum::<u64>(), skip.frames);
        assert!(skip.types.contains_key("Insert"), "{:?}", skip.types);
        assert!(skip.opaque_txn_frames.is_empty() && !skip.has_findings(), "{:?}", skip.notes);
        assert!(skip.notes.iter().any(|n| n.contains("were skipped")), "{:?}", skip.notes);
        assert!(keep.notes.iter().any(|n| n.contains("already has them")), "{:?}", keep.notes);
        assert!(
            skip.record.as_ref().unwrap().skip_replicated && !keep.record.as_ref().unwrap().skip_replicated
        );
    }
    // A folder that holds a salvage is never started over.
    let again = salvage_set::start(set_spec(&p, &skip_dir, end, true)).await;
    assert!(again.err().unwrap().to_string().contains("resume it"));
    p.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_dump_resumed_equals_an_uninterrupted_run() {
    let end = timetick_after_ms(2_000);
    let p = pair(Faults { stall_after: Some(150), ..Default::default() }, Faults::default()).await;
    let dir = tempfile::tempdir().unwrap();
    let run = salvage_set::start(set_spec(&p, dir.path(), end, true)).await.unwrap();
    let target = "by-dev-rootcoord-dml_2";
    let job = run.job(target).unwrap();
    let mut rx = job.handle.progress.clone();
    while rx.borrow_and_update().frames < 150 {
        rx.changed().await.unwrap();
    }
    // The others stay stalled; only this one is cancelled.
    run.jobs.iter().filter(|j| j.pchannel == target).for_each(|j| j.handle.cancel.cancel());
    p.old.set_faults(Faults::default());
    let mut others = Vec::new();
    let mut cancelled = None;
    for j in run.jobs {
        if j.pchannel == target {
            cancelled = Some(j.handle.wait().await.unwrap());
        } else {
            others.push(j);
        }
    }
    let outcome = cancelled.unwrap();
    assert!(outcome.cancelled && !outcome.manifest.complete && outcome.manifest.frames == 150);
    let unfinished = find_unfinished(dir.path()).unwrap();
    let u = unfinished.iter().find(|u| u.pchannel == target).unwrap();
    assert!(u.started && u.frames == 150 && u.last_timetick.is_some());
    let job = salvage_set::resume_one(dir.path(), u, &profile("old", p.old_addr()), &run_options()).unwrap();
    let done = job.handle.wait().await.unwrap();
    assert!(done.manifest.complete && done.written > 0);
    assert!(dump_of(dir.path(), target) == expected(target, end).skip, "the resumed dump differs");
    let folder = FolderManifest::load(dir.path()).unwrap();
    let entry = folder.pchannels.iter().find(|e| e.pchannel == target).unwrap();
    assert!(entry.complete && entry.last_error.is_none(), "{entry:?}");
    for j in &others {
        j.handle.cancel.cancel();
    }
    p.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_resumes_the_whole_folder_from_the_manifests() {
    let end = timetick_after_ms(2_500);
    let p = pair(Faults { stall_after: Some(60), ..Default::default() }, Faults::default()).await;
    let dir = tempfile::tempdir().unwrap();
    let run = salvage_set::start(set_spec(&p, dir.path(), end, true)).await.unwrap();
    for j in &run.jobs {
        let mut rx = j.handle.progress.clone();
        while rx.borrow_and_update().frames < 60 {
            let state = rx.borrow().state.clone();
            rx.changed().await.unwrap_or_else(|_| panic!("{} ended: {state:?}", j.pchannel));
        }
    }
    // The app goes away: every task killed where it stands, nothing finished or flushed.
    for j in run.jobs {
        j.handle.task.abort();
        let _ = j.handle.task.await;
    }
    p.old.set_faults(Faults::default());
    let unfinished = find_unfinished(dir.path()).unwrap();
    assert_eq!(unfinished.len(), 4);
    assert!(unfinished.iter().all(|u| u.started && u.frames <= 60), "{unfinished:?}");
    assert!(
        unfinished.iter().any(|u| u.frames > 0),
        "the time rule synced the stalled dumps: {unfinished:?}"
    );
    let run = salvage_set::resume(dir.path(), &profile("old", p.old_addr()), &run_options()).await.unwrap();
    assert_eq!(run.jobs.len(), 4);
    let (manifest, results) = run.wait().await;
    assert!(results.iter().all(|(_, r)| r.as_ref().is_ok_and(|o| o.manifest.complete)));
    assert!(manifest.pchannels.iter().all(|e| e.complete), "{manifest:?}");
    assert!(find_unfinished(dir.path()).unwrap().is_empty());
    for pc in MilvusPair::pchannels() {
        assert!(dump_of(dir.path(), &pc) == expected(&pc, end).skip, "{pc}: differs after the restart");
    }
    p.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_checkpoints_and_old_servers_are_explained() {
    let p = pair(Faults::old_server(), Faults::default()).await;
    let (new, old) = (profile("new", p.new_addr()), profile("old", p.old_addr()));
    let opts = ConnectOptions::default();
    let t = Duration::from_secs(10);
    let pcs = MilvusPair::pchannels();
    // The old primary's pchannels, from its replicate configuration.
    assert_eq!(pchannels_from_configuration(&old, Some(OLD_CLUSTER_ID), &opts, t).await.unwrap(), pcs);
    assert_eq!(pchannels_from_configuration(&old, None, &opts, t).await.unwrap(), pcs);

    let wrong = fetch_checkpoints(&new, Some(&old), "by-dev-typo", &pcs, &opts, t).await.unwrap();
    for r in &wrong.reports {
        let e = r.result.as_ref().unwrap_err().to_string();
        assert!(e.contains("no salvage checkpoint") && e.contains("calls itself \"by-dev-old\""), "{e}");
    }
    let own = fetch_checkpoints(&new, Some(&old), NEW_CLUSTER_ID, &pcs[..1], &opts, t).await.unwrap();
    let e = own.reports[0].result.as_ref().unwrap_err().to_string();
    assert!(e.contains("new primary's own cluster id"), "{e}");
    // Asked of the old primary (a 2.5.4 here): it predates the API.
    let reversed = fetch_checkpoints(&old, None, OLD_CLUSTER_ID, &pcs[..1], &opts, t).await.unwrap();
    let e = reversed.reports[0].result.as_ref().unwrap_err().to_string();
    assert!(e.contains("(v2.5.4) predates the salvage API") && e.contains("UNIMPLEMENTED"), "{e}");

    // The old primary predates DumpMessages: the dump fails, naming its version.
    let dir = tempfile::tempdir().unwrap();
    let run = salvage_set::start(set_spec(&p, dir.path(), timetick_after_ms(500), true)).await.unwrap();
    let (manifest, results) = run.wait().await;
    for (pc, r) in &results {
        let e = r.as_ref().err().unwrap_or_else(|| panic!("{pc} succeeded")).to_string();
        assert!(
            e.contains("UNIMPLEMENTED") && e.contains("v2.5.4") && e.contains("predates DumpMessages"),
            "{e}"
        );
    }
    assert!(manifest.pchannels.iter().all(|e| e.last_error.as_deref().is_some_and(|t| t.contains("v2.5.4"))));
    p.shutdown().await;

    // A new primary that predates the API: UNIMPLEMENTED, with its version.
    let p = pair(Faults::default(), Faults::old_server()).await;
    let (new, old) = (profile("new", p.new_addr()), profile("old", p.old_addr()));
    let too_old = fetch_checkpoints(&new, Some(&old), OLD_CLUSTER_ID, &pcs, &opts, t).await.unwrap();
    for r in &too_old.reports {
        match r.result.as_ref().unwrap_err() {
            CheckpointProblem::TooOld { version, .. } => assert_eq!(version, "v2.5.4"),
            other => panic!("{other}"),
        }
    }
    assert!(too_old.reports[0].result.as_ref().unwrap_err().to_string().contains("2.6.14"));
    p.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn permission_denied_names_the_privilege_and_the_admin_gets_through() {
    let admin = Auth::UserPassword { user: "root".into(), password: "Milvus".into() };
    let p =
        pair(Faults { dump_privilege: Some(admin.clone()), ..Default::default() }, Faults::default()).await;
    let dir = tempfile::tempdir().unwrap();
    let end = timetick_after_ms(300);
    // A user without the privilege (streams are authenticated first, then authorised).
    let mut spec = set_spec(&p, dir.path(), end, true);
    let alice = Auth::UserPassword { user: "alice".into(), password: "pw".into() };
    spec.old_primary.headers.push(("authorization".into(), alice.header_value()));
    let run = salvage_set::start(spec).await.unwrap();
    let (_, results) = run.wait().await;
    for (_, r) in &results {
        let e = r.as_ref().err().unwrap();
        let text = e.to_string();
        assert!(text.contains("PERMISSION_DENIED"), "{text}");
        assert!(
            text.contains(
                "PrivilegeUpdateReplicateConfiguration: permission deny to alice in the `default` database"
            ),
            "upstream's words: {text}"
        );
        assert!(text.contains("needs the Global privilege UpdateReplicateConfiguration"), "{text}");
        assert_eq!(e.kind(), Some(walscope::net::FailureKind::PermissionDenied));
    }
    // The same dump with the admin's credentials.
    let pc = "by-dev-rootcoord-dml_0";
    let mut old = GrpcSettings::new(p.old_addr().to_string());
    old.auth = Some(admin);
    let spec = SalvageSpec {
        new_primary: GrpcSettings::new(p.new_addr().to_string()),
        old_primary: old,
        source_cluster_id: OLD_CLUSTER_ID.into(),
        pchannel: pc.into(),
        out: dir.path().join("admin.dump"),
        end_timetick: end,
        resume: false,
        max_retries: 0,
        timeout: Duration::from_secs(30),
        sync: SyncPolicy::default(),
    };
    let o = salvage::spawn_with(spec, SalvageOptions::default()).wait().await.unwrap();
    assert!(o.manifest.complete);
    assert!(std::fs::read(dir.path().join("admin.dump")).unwrap() == expected(pc, end).skip);
    p.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transactions_from_a_server_before_2_6_20_are_flagged_as_lost() {
    // A 2.6.19 (no inclusive start) whose first stream drops: the reconnect, which asks for
    // the last written message again, gets the stream after it, and nothing is doubled or lost.
    let dropping = Faults { drop_after: Some(70), ..Faults::before_txn_fix() };
    let p = pair(dropping, Faults::default()).await;
    let clean = pair(Faults::before_txn_fix(), Faults::default()).await;
    let root = tempfile::tempdir().unwrap();
    let (dir, want) = (root.path().join("got"), root.path().join("want"));
    let end = timetick_after_ms(3_000);
    let mut spec = set_spec(&p, &dir, end, true);
    spec.run.max_retries = 2;
    let (manifest, _) = salvage_set::start(spec).await.unwrap().wait().await;
    assert!(manifest.pchannels.iter().all(|e| e.complete), "{manifest:?}");
    let (m, _) = salvage_set::start(set_spec(&clean, &want, end, true)).await.unwrap().wait().await;
    assert!(m.pchannels.iter().all(|e| e.complete));
    for pc in MilvusPair::pchannels() {
        assert!(dump_of(&dir, &pc) == dump_of(&want, &pc), "{pc}: the reconnected dump differs");
    }
    clean.shutdown().await;

    let mut opaque = 0;
    for pc in MilvusPair::pchannels() {
        let r = analyze_dump(&dir.join(format!("{pc}.dump")), AnalyzeOptions::default()).unwrap();
        assert!(!r.types.contains_key("BeginTxn"), "{:?}", r.types);
        if !r.opaque_txn_frames.is_empty() {
            opaque += r.opaque_txn_frames.len();
            assert_eq!(r.types.get("Txn").copied(), Some(r.opaque_txn_frames.len() as u64));
            assert!(r.has_findings());
            assert!(
                r.notes.iter().any(|n| n.contains("data is lost") && n.contains("2.6.20")),
                "{:?}",
                r.notes
            );
        }
    }
    assert!(opaque > 0, "the window holds transactions");
    p.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_old_primary_that_is_down_is_said_in_words() {
    let p = pair(Faults::default(), Faults::default()).await;
    let dir = tempfile::tempdir().unwrap();
    let mut spec = set_spec(&p, dir.path(), timetick_after_ms(300), true);
    spec.old_primary = ConnectionProfile::plain("old", TransportKind::Grpc, "127.0.0.1:1".into());
    let run = salvage_set::start(spec).await.unwrap();
    assert_eq!(run.jobs.len(), 4, "the checkpoints come from the new primary alone");
    let (manifest, results) = run.wait().await;
    for (_, r) in &results {
        let e = r.as_ref().err().unwrap();
        assert_eq!(e.kind(), Some(walscope::net::FailureKind::Refused), "{e}");
        assert!(e.to_string().contains("127.0.0.1:1"), "{e}");
    }
    assert!(manifest.pchannels.iter().all(|e| !e.complete && e.last_error.is_some()));
    assert_eq!(
        find_unfinished(dir.path()).unwrap().len(),
        4,
        "nothing was dumped, everything can start later"
    );
    p.shutdown().await;
}
