//! A stable layout (issue #38, item 3): the detail pane never slides under the message list,
//! splits keep the size the user gave them, nothing inserts itself above what the pointer is
//! on, and closing a tab never moves another pane.

use crate::common::gui::{harness, sample_copy, settle, step_until};
use eframe::egui;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use walscope::ui::WalscopeApp;

type H = Harness<'static, WalscopeApp>;

/// Opens a copy of the Milvus sample in `dir` and selects frame 4 (an Insert).
fn open_and_select(h: &mut H, dir: &std::path::Path) -> std::path::PathBuf {
    let copy = sample_copy(dir, "milvus-100.dump", "wal.dump");
    h.step();
    h.state_mut().open(copy.clone());
    step_until(h, "decoded rows", |h| h.query_by_label("Pulsar 100/2/-1").is_some());
    h.get_by_label("Pulsar 100/2/-1").click();
    step_until(h, "the detail", |h| h.state().tabs[0].detail.as_ref().is_some_and(|d| d.index == 4));
    settle(h);
    copy
}

fn copied(h: &H) -> Vec<String> {
    h.output()
        .platform_output
        .commands
        .iter()
        .filter_map(|c| match c {
            eframe::egui::OutputCommand::CopyText(t) => Some(t.clone()),
            _ => None,
        })
        .collect()
}

/// After rearranging panes (the Schemas pane on the left, Sync tasks below), a file tab is
/// narrower than its detail's content: the detail's left part (its copy buttons, "Send...")
/// was drawn under the message list, where no click reached it.
#[test]
fn the_detail_is_never_under_the_list() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = harness([900.0, 800.0], WalscopeApp::new());
    open_and_select(&mut h, dir.path());
    h.state_mut().show_tasks = true;
    h.state_mut().show_schemas = true;
    settle(&mut h);
    h.get_by_label("Copy JSON").click();
    h.step();
    assert!(
        copied(&h).iter().any(|t| t.contains("\"header\"") || t.starts_with('{')),
        "Copy JSON did nothing"
    );
}

/// Selecting a tree node opens its editor below the tree: the node stays under the pointer.
#[test]
fn the_tree_does_not_move_when_a_node_is_selected() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = harness([1400.0, 1000.0], WalscopeApp::new());
    open_and_select(&mut h, dir.path());
    let node = "properties[\"_vc\"]: \"by-dev-rootcoord-dml_";
    let before = h.get_by_label_contains(node).rect();
    h.get_by_label_contains(node).click();
    step_until(&mut h, "the node selected", |h| {
        h.state().tabs[0].detail.as_ref().is_some_and(|d| d.selected_node.is_some())
    });
    settle(&mut h);
    assert_eq!(h.get_by_label_contains(node).rect(), before, "the tree moved when its node was selected");
    // The heading of the detail did not move either.
    h.get_by_label("Send...");
}

/// The list/detail divider stays where it was dragged: through another selection, Esc (the
/// detail shows its empty state at the same width), the file read again and a restart of the
/// app.
#[test]
fn the_split_keeps_the_width_it_was_dragged_to() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = harness([1400.0, 1000.0], WalscopeApp::new());
    let file = open_and_select(&mut h, dir.path());
    let x0 = h.get_by_label("Send...").rect().min.x;
    // The divider sits in the gap just left of the detail.
    let from = egui::pos2(x0 - 3.0, 600.0);
    let to = egui::pos2(x0 - 203.0, 600.0);
    h.hover_at(from);
    h.step();
    h.drag_at(from);
    h.step();
    for i in 1..=10 {
        h.hover_at(from + (to - from) * (i as f32 / 10.0));
        h.step();
    }
    h.drop_at(to);
    settle(&mut h);
    let x = h.get_by_label("Send...").rect().min.x;
    assert!((x - (x0 - 200.0)).abs() < 4.0, "dragged from {x0} to {x}");
    // Another message: the same width, whatever its content.
    h.get_by_label("Pulsar 100/1/-1").click();
    step_until(&mut h, "frame 3", |h| h.state().tabs[0].detail.as_ref().is_some_and(|d| d.index == 3));
    settle(&mut h);
    assert_eq!(h.get_by_label("Send...").rect().min.x, x, "the split followed the content");
    // Esc drops the selection; the detail keeps its width and says what is empty.
    h.key_press(egui::Key::Escape);
    settle(&mut h);
    assert!(h.state().tabs[0].detail.is_none());
    let empty = h.get_by_label("Select a message to see its fields, bytes and JSON.").rect().min.x;
    assert!((empty - x).abs() < 1.0, "Esc moved the split from {x} to {empty}");
    // The file read again ("Read as..." > Reopen, as after a save): the same split.
    h.get_by_label("Read as...").click();
    settle(&mut h);
    h.state_mut().tabs[0].read_as.framing = Some(walscope::dump::Framing::VarintDelimited);
    h.step();
    h.get_by_label("Reopen").click();
    step_until(&mut h, "the file read again", |h| {
        h.query_by_label_contains("varint framing (100% sure)").is_some()
            && h.query_by_label("Pulsar 100/2/-1").is_some()
    });
    h.get_by_label("Pulsar 100/2/-1").click();
    step_until(&mut h, "the detail", |h| h.state().tabs[0].detail.as_ref().is_some_and(|d| d.index == 4));
    settle(&mut h);
    assert_eq!(h.get_by_label("Send...").rect().min.x, x, "the split after the file was read again");
    // A restart with what was remembered.
    let saved = h.state().persisted(walscope::ui::recent::Theme::Dark).to_json();
    drop(h);
    let mut again = WalscopeApp::new();
    again.restore(walscope::ui::recent::PersistedState::from_json(&saved), &[]);
    let mut h = harness([1400.0, 1000.0], again);
    step_until(&mut h, "the file reopened", |h| h.query_by_label("Pulsar 100/2/-1").is_some());
    assert_eq!(h.state().tabs[0].path, file);
    h.get_by_label("Pulsar 100/2/-1").click();
    step_until(&mut h, "the detail", |h| h.state().tabs[0].detail.as_ref().is_some_and(|d| d.index == 4));
    settle(&mut h);
    assert_eq!(h.get_by_label("Send...").rect().min.x, x, "the split after a restart");
}

/// Closing the last file (its tab's close button) leaves the Sync tasks pane where it was.
#[test]
fn closing_a_file_leaves_the_sync_tasks_pane_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = harness([1400.0, 1000.0], WalscopeApp::new());
    open_and_select(&mut h, dir.path());
    h.state_mut().show_tasks = true;
    settle(&mut h);
    let tasks = |h: &H| h.get_by_label_contains("Choose a SyncTool profile").rect();
    let before = tasks(&h);
    let tab = h.get_by_label("wal.dump").rect();
    let close = h
        .query_all_by_label("Close")
        .min_by(|a, b| {
            let d = |r: egui::Rect| r.center().distance(tab.center());
            d(a.rect()).total_cmp(&d(b.rect()))
        })
        .expect("the file tab's close button");
    close.click();
    step_until(&mut h, "the file closed", |h| h.state().tabs.is_empty());
    settle(&mut h);
    assert_eq!(tasks(&h), before, "the Sync tasks pane moved when the file closed");
}

/// Tests every demo profile from the Connections menu: the answers arrive, and no Test button
/// moves sideways nor runs past the window's edge (the answers are shortened, whole on hover).
#[test]
fn the_connections_menu_stays_put_as_answers_arrive() {
    const WIDTH: f32 = 1100.0;
    let mut app = WalscopeApp::new();
    app.start_demo();
    let mut h = harness([WIDTH, 800.0], app);
    h.step();
    h.get_by_label("Connections").click();
    settle(&mut h);
    let names = ["demo-milvus", "demo-synctool", "demo-collector"];
    let buttons = |h: &H| -> Vec<egui::Rect> {
        names.iter().map(|n| h.get_by_label(&format!("Test {n}")).rect()).collect()
    };
    let before = buttons(&h);
    for n in names {
        h.get_by_label(&format!("Test {n}")).click();
        step_until(&mut h, "the check to start", |h| h.state().connections.result(n).is_some());
        assert_eq!(buttons(&h), before, "a Test button moved when {n}'s test started");
    }
    step_until(&mut h, "three answers", |h| {
        names.iter().all(|n| {
            !matches!(
                h.state().connections.result(n),
                None | Some(walscope::ui::panes::connections::CheckResult::Running)
            )
        })
    });
    settle(&mut h);
    h.get_by_label_contains("OK: Milvus v2.6.20-walscope-demo (GetVersion) in ");
    assert_eq!(buttons(&h), before, "the Test buttons moved as the answers arrived");
    for n in names {
        let answer = h.state().connections.result(n).map(|r| r.text()).unwrap_or_default();
        let shown = h.get_by_label(&answer).rect();
        assert!(shown.max.x <= WIDTH, "{n}'s answer runs past the window's edge: {shown:?}");
    }
}

/// The sidebar (on at start, as remembered): a profile with its last test's answer as a badge,
/// and a recent file that opens on a click.
#[test]
fn the_sidebar_lists_profiles_with_their_answers_and_opens_recent_files() {
    use walscope::ui::recent::PersistedState;
    let dir = tempfile::tempdir().unwrap();
    let copy = sample_copy(dir.path(), "milvus-100.dump", "wal.dump");
    let mut app = WalscopeApp::new();
    app.start_demo();
    let state = PersistedState { recent: vec![copy.clone()], ..Default::default() };
    app.restore(state, &[]);
    let mut h = harness([1400.0, 900.0], app);
    settle(&mut h);
    // The sidebar shows at first start, on the left (220 points wide).
    assert!(
        h.query_all_by_label("demo-milvus").any(|n| n.rect().max.x <= 220.0),
        "demo-milvus in the sidebar"
    );
    assert!(h.query_all_by_label("○ untested").count() >= 5, "every demo profile, not tested yet");
    // Tested from the Connections menu (the sidebar's section has the same name, below it).
    h.query_all_by_label("Connections")
        .min_by(|a, b| a.rect().min.y.total_cmp(&b.rect().min.y))
        .expect("the Connections menu")
        .click();
    settle(&mut h);
    h.get_by_label("Test demo-milvus").click();
    step_until(&mut h, "the answer", |h| {
        matches!(
            h.state().connections.result("demo-milvus"),
            Some(walscope::ui::panes::connections::CheckResult::Done(_))
        )
    });
    h.key_press(egui::Key::Escape);
    settle(&mut h);
    h.get_by_label("✔ OK");
    // The recent file opens on a click.
    let folder = dir.path().display().to_string();
    h.get_by_label(&format!("wal.dump — {folder}")).click();
    step_until(&mut h, "the file open", |h| h.state().tabs.iter().any(|t| t.path == copy));
    // Remembered: shown, and its width.
    let saved = h.state().persisted(walscope::ui::recent::Theme::Dark).to_json();
    assert!(saved.contains("\"show_sidebar\":true") && saved.contains("\"sidebar_width\":"), "{saved}");
}
