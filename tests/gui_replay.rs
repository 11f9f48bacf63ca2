//! The replay pane, headless with egui_kittest, against a demo old and new primary after a
//! forced failover (a rehearsal: the new primary holds what it had at the promotion plus its
//! own writes since) over loopback: a salvage folder is planned (nothing sent), the plan's
//! tables and skip reasons shown, the confirmation opened without anything being sent, then
//! applied and verified OK; the salvage pane's "Replay into the new primary..." opens the pane
//! on its folder and new primary; a folder that is no salvage is explained in words.

use crate::common::gui::{harness, settle, step_until};
use crate::common::walgen::{small_wal, timetick_of_message};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};
use walscope::net::grpc::GrpcSettings;
use walscope::net::profile::{ConnectionProfile, TransportKind};
use walscope::replay::{NewPrimary, SkipReason};
use walscope::sim::milvus::MilvusDemo;
use walscope::sim::milvus::pair::{MilvusPair, MilvusPairConfig};
use walscope::ui::WalscopeApp;
use walscope::ui::panes::replay::{ReplayState, Stage};
use walscope::ui::panes::salvage::SalvageState;

/// Small messages, so the salvage and the replay are quick in a debug build; `events` is
/// dropped and created again after the checkpoints, which the plan warns about.
fn rehearsal_wal() -> walscope::sim::WalGenConfig {
    walscope::sim::WalGenConfig {
        rehearsal: true,
        recreate_events_at: Some(walscope::sim::walgen::AUDIT_STEP + 30),
        total: walscope::sim::WalGenConfig::default().total,
        ..small_wal(5)
    }
}

/// The window size these tests draw at.
const SIZE: [f32; 2] = [1600.0, 2400.0];

fn rehearsal(rt: &tokio::runtime::Runtime) -> MilvusPair {
    rt.block_on(MilvusDemo::start_pair(MilvusPairConfig {
        wal: rehearsal_wal(),
        rehearsal: true,
        ..Default::default()
    }))
    .unwrap()
}

/// A finished salvage of every pchannel into `folder`, through the library.
fn salvage(pair: &MilvusPair, rt: &tokio::runtime::Runtime, folder: &Path, end: u64) {
    crate::common::salvage::salvage_pair(pair, rt, folder, end);
}

/// An app that knows the pair's two profiles and keeps its files in `dir`.
fn app_with(pair: &MilvusPair, dir: &Path) -> Harness<'static, WalscopeApp> {
    let mut app = WalscopeApp::new();
    app.config_dir = Some(dir.to_path_buf());
    for (name, addr) in [("demo-old-primary", pair.old_addr()), ("demo-new-primary", pair.new_addr())] {
        app.connections.demo.push(ConnectionProfile::plain(name, TransportKind::Grpc, addr.to_string()));
    }
    let mut h = harness(SIZE, app);
    h.step();
    h
}

fn pane<'a>(h: &'a Harness<'static, WalscopeApp>) -> &'a ReplayState {
    h.state().panes.first::<ReplayState>().unwrap()
}

/// Row counts of the collections on the new primary, read over the wire.
fn counts(pair: &MilvusPair, rt: &tokio::runtime::Runtime, names: &[String]) -> BTreeMap<String, u64> {
    rt.block_on(async {
        let settings = GrpcSettings::new(pair.new_addr().to_string());
        let t = NewPrimary::connect(&settings, Duration::from_secs(10)).await.unwrap();
        let mut out = BTreeMap::new();
        for n in names {
            let exists = t.describe(n).await.unwrap().is_some();
            out.insert(n.clone(), if exists { t.count(n).await.unwrap() } else { 0 });
        }
        out
    })
}

#[test]
fn a_salvage_is_planned_confirmed_applied_and_verified() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let pair = rehearsal(&rt);
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("salvage");
    salvage(&pair, &rt, &folder, timetick_of_message(rehearsal_wal(), 600));
    let mut h = app_with(&pair, dir.path());
    h.state_mut().new_replay(Some(folder.clone()), Some("demo-new-primary".into()));
    settle(&mut h);
    h.get_by_label("Salvage folder:");
    assert!(!pane(&h).can_apply(), "no plan yet: Apply... is disabled");

    h.get_by_label("Plan").click();
    step_until(&mut h, "the plan", |h| pane(h).stage == Stage::Planned);
    settle(&mut h);
    let planned = match &pane(&h).planned {
        Some(Ok(p)) => p.clone(),
        Some(Err(e)) => panic!("no plan: {e}"),
        None => panic!("no plan"),
    };
    let plan = &planned.plan;
    h.get_by_label_contains("Planning sent nothing.");
    for name in ["orders", "users", "events"] {
        assert!(plan.collections.contains_key(name), "{name} in {:?}", plan.collections.keys());
        h.get_by_label(&format!("Collection {name}"));
    }
    let orders = &plan.collections["orders"];
    assert!(orders.inserts > 0 && orders.insert_rows > 0, "{orders:?}");
    assert!(
        h.query_all_by_label_contains(&orders.insert_rows.to_string()).count() >= 1,
        "the row count is shown"
    );
    // The new primary's own writes since the promotion: keys the salvage inserts again.
    assert!(!orders.conflicts.is_empty(), "the demo's own writes conflict");
    h.get_by_label_contains("already on the new primary");
    // Frames that are not sent, grouped by reason with its words: the demo's encrypted ones,
    // and the late `audit` collection the new primary created itself.
    let reasons = plan.skipped_by_reason();
    assert!(reasons.contains_key(&SkipReason::Encrypted), "skipped: {reasons:?}");
    h.get_by_label_contains("skipped: encrypted payload (_ch): cannot be read");
    assert!(reasons.contains_key(&SkipReason::AlreadyExists), "skipped: {reasons:?}");
    h.get_by_label_contains("skipped: the new primary already has it");
    assert!(plan.can_apply(), "problems: {:?}", plan.problems);
    assert!(pane(&h).can_apply());
    // The plan is said in words: its time in the one pattern, its options as they act.
    h.get_by_label_contains("Policy for existing keys: skip: keep the new primary's rows");
    assert!(h.query_by_label_contains("Policy for existing keys: Skip").is_none(), "no Debug names");
    h.get_by_label_contains(" UTC: ");

    // The confirmation says what and where; nothing is sent while it is open.
    let names: Vec<String> = plan.collections.keys().cloned().collect();
    let before = counts(&pair, &rt, &names);
    h.get_by_label("⚠ Apply...").click();
    settle(&mut h);
    assert_eq!(pane(&h).stage, Stage::Confirming);
    h.get_by_label("Apply this replay?");
    h.get_by_label_contains(&format!("to demo-new-primary ({}, database {})", plan.endpoint, plan.db));
    h.get_by_label_contains("Nothing has been sent yet.");
    // The plan's warnings are repeated where the operator decides.
    assert!(!plan.warnings.is_empty(), "the rehearsal's plan warns of something");
    for w in &plan.warnings {
        h.get_by_label(&format!("Warning: {w}"));
    }
    for _ in 0..30 {
        h.step();
    }
    assert!(h.state().jobs.running().iter().all(|j| j.label != "replay apply"), "no apply before Apply");
    assert_eq!(counts(&pair, &rt, &names), before, "nothing reached the new primary before confirming");

    h.get_by_label("⚠ Apply").click();
    let until = Instant::now() + Duration::from_secs(300);
    loop {
        h.step();
        if pane(&h).stage == Stage::Applied && pane(&h).verification.is_some() {
            break;
        }
        assert!(
            Instant::now() < until,
            "the apply did not end: {:?}",
            pane(&h).applied.as_ref().map(|a| a.as_ref().err().map(|e| e.to_string()))
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    settle(&mut h);
    if let Some(Err(e)) = &pane(&h).applied {
        panic!("not applied: {e}");
    }
    let v = match &pane(&h).verification {
        Some(Ok(v)) => v.clone(),
        other => {
            panic!("no verification: {:?}", other.as_ref().map(|r| r.as_ref().err().map(|e| e.to_string())))
        }
    };
    assert!(v.ok(), "verification: {v:?}");
    h.get_by_label("Verification: OK");
    h.get_by_label("orders: OK");
    assert_ne!(counts(&pair, &rt, &names), before, "the replay wrote");

    // Verify again reads the new primary once more, with the same answer.
    h.get_by_label("Verify again").click();
    step_until(&mut h, "the second verification", |h| !pane(h).verifying);
    settle(&mut h);
    assert!(matches!(&pane(&h).verification, Some(Ok(v)) if v.ok()));
    h.get_by_label("Verification: OK");
}

#[test]
fn the_salvage_pane_offers_the_replay_of_its_folder() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let pair = rehearsal(&rt);
    let dir = tempfile::tempdir().unwrap();
    let mut h = app_with(&pair, dir.path());
    let folder = dir.path().join("salvage-x");
    h.state_mut().new_salvage();
    {
        let s = h.state_mut().panes.first_mut::<SalvageState>().unwrap();
        s.folder = folder.display().to_string();
        s.ends.push(walscope::ui::panes::salvage::DumpEnd {
            pchannel: "by-dev-rootcoord-dml_0".into(),
            file: folder.join("dml_0.dump"),
            outcome: Ok(walscope::ui::panes::salvage::DumpOutcome::Complete { frames: 10, bytes: 1000 }),
            resumable: false,
            report: None,
        });
    }
    settle(&mut h);
    h.get_by_label("Replay into the new primary...").click();
    step_until(&mut h, "the replay pane", |h| h.state().panes.first::<ReplayState>().is_some());
    settle(&mut h);
    assert_eq!(pane(&h).folder, folder.display().to_string());
    assert_eq!(pane(&h).new_primary, "demo-new-primary");
    h.get_by_label("Replay a salvage into the new primary");
    // Each tab names its folder: two replays (or salvages) are told apart.
    h.get_by_label("Replay: salvage-x");
    h.get_by_label("Salvage: salvage-x");
}

#[test]
fn a_folder_that_is_no_salvage_is_explained() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let pair = rehearsal(&rt);
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("nothing-here");
    std::fs::create_dir_all(&empty).unwrap();
    let mut h = app_with(&pair, dir.path());
    h.state_mut().new_replay(Some(empty), Some("demo-new-primary".into()));
    settle(&mut h);
    h.get_by_label("Plan").click();
    step_until(&mut h, "the answer", |h| pane(h).stage == Stage::Planned);
    settle(&mut h);
    assert!(matches!(pane(&h).planned, Some(Err(_))));
    h.get_by_label_contains("No plan: ");
    assert!(!pane(&h).can_apply());
}
