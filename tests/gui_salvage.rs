//! The salvage pane, headless with egui_kittest, against a demo old and new primary after a
//! forced failover over loopback: from the profiles to four finished dumps that open in the
//! browser; one pchannel cancelled and resumed, byte-identical to an uninterrupted run; the app
//! closed mid-salvage, then the folder resumed; a server without the salvage API explained.

use crate::common::gui::{harness, settle, step_until};
use crate::common::walgen::{small_wal, timetick_of_message};
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use std::path::{Path, PathBuf};
use std::time::Duration;
use walscope::net::profile::{ConnectionProfile, TransportKind};
use walscope::sim::milvus::Faults;
use walscope::sim::milvus::pair::{MilvusPair, MilvusPairConfig};
use walscope::ui::WalscopeApp;
use walscope::ui::panes::salvage::SalvageState;

/// The window size these tests draw at.
const SIZE: [f32; 2] = [1600.0, 1600.0];

/// The seed of this suite's WAL (small messages, so the dumps are quick in a debug build).
const SEED: u64 = 5;

fn pair(rt: &tokio::runtime::Runtime, old_faults: Faults, new_faults: Faults) -> MilvusPair {
    rt.block_on(MilvusPair::start(MilvusPairConfig {
        wal: small_wal(SEED),
        old_faults,
        new_faults,
        ..Default::default()
    }))
    .unwrap()
}

/// An app that knows the pair's two profiles and keeps its files in `dir`, with a salvage pane
/// open on `folder`.
fn app_with(pair: &MilvusPair, dir: &Path, folder: &Path) -> Harness<'static, WalscopeApp> {
    let mut app = WalscopeApp::new();
    app.config_dir = Some(dir.to_path_buf());
    for (name, addr) in [("demo-old-primary", pair.old_addr()), ("demo-new-primary", pair.new_addr())] {
        app.connections.demo.push(ConnectionProfile::plain(name, TransportKind::Grpc, addr.to_string()));
    }
    let mut h = harness(SIZE, app);
    h.step();
    h.state_mut().new_salvage();
    h.state_mut().panes.first_mut::<SalvageState>().unwrap().folder = folder.display().to_string();
    settle(&mut h);
    h
}

fn pane<'a>(h: &'a Harness<'static, WalscopeApp>) -> &'a SalvageState {
    h.state().panes.first::<SalvageState>().unwrap()
}

/// The dumps the pane's jobs are writing now, as the job registry holds them.
fn live_dumps(h: &Harness<'static, WalscopeApp>) -> Vec<walscope::ui::jobs::LiveDump> {
    let owner = walscope::ui::jobs::JobOwner::Pane(pane(h).id);
    h.state().jobs.live_of(&owner).iter().filter_map(|l| l.dumps()).flatten().cloned().collect()
}

/// Offers the pchannels from the old primary and fetches every checkpoint.
fn prepare(h: &mut Harness<'static, WalscopeApp>, end: u64) {
    h.get_by_label("Offer the old primary's pchannels").click();
    step_until(h, "the pchannels", |h| pane(h).pchannel_list().len() == 4);
    settle(h);
    h.get_by_label("Fetch checkpoints").click();
    step_until(h, "the checkpoints", |h| pane(h).ready_pchannels().len() == 4);
    h.state_mut().panes.first_mut::<SalvageState>().unwrap().end_time = end.to_string();
    settle(h);
}

fn wait_ends(h: &mut Harness<'static, WalscopeApp>, n: usize) {
    let until = std::time::Instant::now() + Duration::from_secs(300);
    loop {
        h.step();
        if pane(h).ends.len() >= n && !pane(h).running {
            break;
        }
        assert!(
            std::time::Instant::now() < until,
            "the dumps did not end: {:?}",
            pane(h).ends.iter().map(|e| &e.outcome).collect::<Vec<_>>()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    settle(h);
}

/// The bytes of every dump in `folder`, by file name.
fn dumps(folder: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(folder)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "dump"))
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&p).unwrap()))
        .collect();
    out.sort();
    out
}

/// The same salvage through the library, uninterrupted, for comparison.
fn uninterrupted(
    pair: &MilvusPair,
    rt: &tokio::runtime::Runtime,
    folder: &Path,
    end: u64,
) -> Vec<(String, Vec<u8>)> {
    crate::common::salvage::salvage_pair(pair, rt, folder, end);
    dumps(folder)
}

#[test]
fn four_pchannels_salvaged_and_opened() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let pair = pair(&rt, Faults::default(), Faults::default());
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("salvage");
    let mut h = app_with(&pair, dir.path(), &folder);
    let end = timetick_of_message(small_wal(SEED), 600);
    prepare(&mut h, end);
    h.get_by_label_contains("RocksMQ");
    h.get_by_label_contains("Pulsar");
    h.get_by_label("Start salvage").click();
    wait_ends(&mut h, 4);
    for e in &pane(&h).ends {
        assert!(
            e.outcome.as_ref().is_ok_and(|o| o.to_string().starts_with("complete: ")),
            "{}: {:?}",
            e.pchannel,
            e.outcome
        );
        let r = e.report.as_ref().unwrap().as_ref().unwrap();
        assert!(r.frames > 0 && r.first_utc().is_some(), "{}: {r:?}", e.pchannel);
    }
    // Each card says "complete" and its report line says the frames and bytes: once.
    settle(&mut h);
    assert_eq!(h.query_all_by_label("complete").count(), 4, "the outcome without its numbers");
    assert!(folder.join("salvage.json").exists(), "the folder manifest");
    let ours = dumps(&folder);
    assert_eq!(ours.len(), 4);
    assert_eq!(
        ours,
        uninterrupted(&pair, &rt, &dir.path().join("again"), end),
        "the same bytes as the library's run"
    );
    h.get_by_label("Open every dump").click();
    step_until(&mut h, "four tabs", |h| h.state().tabs.len() == 4);
}

#[test]
fn a_cancelled_pchannel_resumes_to_the_same_bytes() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let first = "by-dev-rootcoord-dml_0";
    // dml_0's stream holds after 40 frames, so the cancel lands mid-dump on any machine (a fast
    // one finished the whole dump before the click).
    let hold = Faults { stall_after: Some(40), stall_only: Some(first.into()), ..Default::default() };
    let pair = pair(&rt, hold, Faults::default());
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("salvage");
    let mut h = app_with(&pair, dir.path(), &folder);
    let end = timetick_of_message(small_wal(SEED), 4_000);
    prepare(&mut h, end);
    h.get_by_label("Start salvage").click();
    step_until(&mut h, "frames on dml_0", |h| {
        live_dumps(h).iter().any(|d| d.pchannel == first && d.progress.borrow().frames > 20)
    });
    h.get_by_label(&format!("Cancel {first}")).click();
    wait_ends(&mut h, 4);
    pair.old.set_faults(Faults::default());
    let e = pane(&h).ends.iter().find(|e| e.pchannel == first).unwrap();
    assert!(
        e.resumable && e.outcome.as_ref().is_ok_and(|o| o.to_string().starts_with("cancelled")),
        "{:?}",
        e.outcome
    );
    h.get_by_label(&format!("Resume {first}")).click();
    step_until(&mut h, "the resumed dump", |h| {
        !pane(h).running
            && pane(h).ends.iter().any(|e| {
                e.pchannel == first && e.outcome.as_ref().is_ok_and(|o| o.to_string().starts_with("complete"))
            })
    });
    assert_eq!(dumps(&folder), uninterrupted(&pair, &rt, &dir.path().join("again"), end));
}

#[test]
fn a_restart_mid_salvage_resumes_from_the_folder() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    // Every stream holds after 30 frames, so all four are mid-dump when the app goes away.
    let pair = pair(&rt, Faults { stall_after: Some(30), ..Default::default() }, Faults::default());
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("salvage");
    let end = timetick_of_message(small_wal(SEED), 4_000);
    {
        let mut h = app_with(&pair, dir.path(), &folder);
        prepare(&mut h, end);
        h.get_by_label("Start salvage").click();
        step_until(&mut h, "frames", |h| {
            live_dumps(h).iter().all(|d| d.progress.borrow().frames > 5) && live_dumps(h).len() == 4
        });
        // The app goes away with its jobs (as when the window closes).
    }
    // The app's drop waited for its dump writers: no file of the folder is still open here.
    #[cfg(target_os = "linux")]
    {
        let open: Vec<_> = std::fs::read_dir("/proc/self/fd")
            .unwrap()
            .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
            .filter(|p| p.starts_with(&folder))
            .collect();
        assert!(open.is_empty(), "the dropped app still has files of its folder open: {open:?}");
    }
    pair.old.set_faults(Faults::default());
    let mut h = app_with(&pair, dir.path(), &folder);
    h.get_by_label("Look for unfinished dumps").click();
    step_until(
        &mut h,
        "the unfinished dumps",
        |h| matches!(&pane(h).unfinished, Some(Ok(u)) if !u.is_empty()),
    );
    settle(&mut h);
    h.get_by_label_contains("4 unfinished dumps here, from an earlier run");
    h.get_by_label("Resume the folder").click();
    // Four resumed dumps take a while on a loaded machine; an end that is not complete is
    // shown with its outcome rather than as a timeout.
    wait_ends(&mut h, 4);
    let outcomes: Vec<_> = pane(&h).ends.iter().map(|e| (e.pchannel.clone(), e.outcome.clone())).collect();
    assert!(
        outcomes.iter().all(|(_, o)| o.as_ref().is_ok_and(|o| o.to_string().starts_with("complete"))),
        "the resumed folder: {outcomes:?}"
    );
    assert_eq!(dumps(&folder), uninterrupted(&pair, &rt, &dir.path().join("again"), end));
}

#[test]
fn a_server_without_the_salvage_api_is_explained() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let pair = pair(&rt, Faults::default(), Faults::old_server());
    let dir = tempfile::tempdir().unwrap();
    let mut h = app_with(&pair, dir.path(), &dir.path().join("salvage"));
    h.state_mut().panes.first_mut::<SalvageState>().unwrap().pchannels = "by-dev-rootcoord-dml_0".into();
    settle(&mut h);
    h.get_by_label("Fetch checkpoints").click();
    step_until(&mut h, "the answer", |h| pane(h).checkpoints.is_some());
    settle(&mut h);
    h.get_by_label_contains("no checkpoint");
    h.get_by_label_contains("predates the salvage API");
    assert!(h.query_all_by_label_contains("v2.5.4").count() >= 1, "the version is named");
    assert!(pane(&h).ready_pchannels().is_empty());
    let _ = PathBuf::new();
}

/// "Start salvage" sits in the pane's action bar: the pchannels and the checkpoints' table
/// arriving above it never move it away from the pointer (it used to slide below the fold).
#[test]
fn start_salvage_stays_put_while_the_form_fills() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let pair = pair(&rt, Faults::default(), Faults::default());
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("salvage");
    let mut h = app_with(&pair, dir.path(), &folder);
    settle(&mut h);
    let before = h.get_by_label("Start salvage").rect();
    prepare(&mut h, timetick_of_message(small_wal(SEED), 4_000));
    let after = h.get_by_label("Start salvage").rect();
    assert_eq!(before, after, "the main action moved");
    assert!(!h.get_by_label("Start salvage").accesskit_node().is_disabled(), "and it is ready");
}

/// While a salvage runs, its progress is drawn at ten frames a second at most (a job's
/// numbers move; a frame costs a software-rendered desktop a good part of a core).
#[test]
fn a_running_salvage_is_drawn_ten_times_a_second_at_most() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    // Every stream holds after 30 frames: the salvage keeps running while we look.
    let pair = pair(&rt, Faults { stall_after: Some(30), ..Default::default() }, Faults::default());
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("salvage");
    let mut h = app_with(&pair, dir.path(), &folder);
    settle(&mut h);
    prepare(&mut h, timetick_of_message(small_wal(SEED), 4_000));
    h.get_by_label("Start salvage").click();
    step_until(&mut h, "the dumps running", |h| live_dumps(h).len() == 4);
    settle(&mut h);
    for _ in 0..10 {
        h.step();
        let delay = h
            .output()
            .viewport_output
            .get(&eframe::egui::ViewportId::ROOT)
            .map_or(Duration::MAX, |v| v.repaint_delay);
        assert!(delay >= Duration::from_millis(100), "a running salvage asked for a frame after {delay:?}");
        assert!(delay < Duration::MAX, "its numbers still move");
    }
    h.get_by_label("Cancel all").click();
    wait_ends(&mut h, 4);
}

/// A pchannel the new primary does not have: it gives no answer until the profile's deadline
/// (upstream retries it), and the pane says, in full under the table, which pchannels the new
/// primary has and what GetReplicateInfo must be asked with.
#[test]
fn a_pchannel_the_new_primary_does_not_have_is_explained() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let pair = pair(&rt, Faults::default(), Faults::default());
    let dir = tempfile::tempdir().unwrap();
    let mut h = app_with(&pair, dir.path(), &dir.path().join("salvage"));
    for p in h.state_mut().connections.demo.iter_mut() {
        p.timeout_secs = Some(1);
    }
    h.state_mut().panes.first_mut::<SalvageState>().unwrap().pchannels = "by-dev-typo-rootcoord-dml_0".into();
    settle(&mut h);
    h.get_by_label("Fetch checkpoints").click();
    step_until(&mut h, "the answer", |h| pane(h).checkpoints.is_some());
    settle(&mut h);
    h.get_by_label_contains("no checkpoint");
    let why = h.get_by_label_contains("is not one of the new primary's pchannels");
    let node = why.accesskit_node();
    let text = node.label().or(node.value()).unwrap_or_default();
    assert!(text.contains("by-dev-rootcoord-dml_3") && text.contains("ITS pchannels"), "{text}");
    h.get_by_label_contains("pymilvus's docstring says the opposite; it is wrong");
    assert!(pane(&h).ready_pchannels().is_empty());
}
