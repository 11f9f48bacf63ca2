//! The diff pane (issue #40, item 1, the window's part), headless with egui_kittest: "Compare
//! with…" on a file tab against a copy cut short lists exactly the missing frames; on a frame
//! edited in the window, against the frame as saved, the change list names the edited path and
//! picking it highlights its bytes on both sides; a changed pair of two dumps opens the diff of
//! its two frames; a composer reply and a history entry open the pane too (against the demo
//! servers).

use crate::common::gui::{compose, harness, sample_copy, settle, step_until};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use std::path::{Path, PathBuf};
use walscope::ui::WalscopeApp;
use walscope::ui::panes::composer::{ComposerState, Response};
use walscope::ui::panes::diff::DiffState;
use walscope::ui::panes::diff::dump_view::PairFilter;

const SIZE: [f32; 2] = [1280.0, 800.0];

fn diff<'a>(h: &'a Harness<'static, WalscopeApp>) -> Option<&'a DiffState> {
    h.state().panes.first::<DiffState>()
}

/// A copy of the sample in `dir` as `name`, cut after its first `frames` frames.
fn cut_copy(dir: &Path, name: &str, frames: usize) -> PathBuf {
    let file = sample_copy(dir, "milvus-100.dump", name);
    let dump = walscope::dump::DumpFile::open(&file, Default::default()).unwrap();
    dump.wait_indexed();
    let end = dump.frame(frames).expect("the sample has more frames").offset;
    drop(dump);
    let f = std::fs::OpenOptions::new().write(true).open(&file).unwrap();
    f.set_len(end).unwrap();
    file
}

/// `file`'s tab in front (files open as jobs: their tabs' order is the order the jobs end).
fn front(h: &mut Harness<'static, WalscopeApp>, file: &Path) {
    let at = h.state().tabs.iter().position(|t| t.path == file).expect("the file is open");
    h.state_mut().active = at;
    settle(h);
}

fn open_indexed(h: &mut Harness<'static, WalscopeApp>, files: &[&Path]) {
    for f in files {
        h.state_mut().open(f.to_path_buf());
    }
    let n = files.len();
    step_until(h, "the files indexed", |h| {
        h.state().tabs.len() == n && h.state().tabs.iter().all(|t| t.dump.index().is_done())
    });
    settle(h);
}

#[test]
fn a_dump_cut_short_shows_exactly_the_missing_frames() {
    let dir = tempfile::tempdir().unwrap();
    let whole = sample_copy(dir.path(), "milvus-100.dump", "whole.dump");
    let short = cut_copy(dir.path(), "short.dump", 90);
    let mut h = harness(SIZE, WalscopeApp::new());
    h.step();
    open_indexed(&mut h, &[&whole, &short]);
    // The first file's tab in front: its header's "Compare with…".
    front(&mut h, &whole);
    settle(&mut h);
    h.get_by_label("Compare whole.dump with…").click();
    settle(&mut h);
    h.get_by_label("Compare with short.dump").click();
    step_until(&mut h, "the dumps compared", |h| diff(h).is_some_and(|d| d.dumps().is_some()));
    settle(&mut h);
    let d = diff(&h).unwrap().dumps().unwrap();
    let s = &d.summary;
    assert_eq!((s.a_frames, s.b_frames), (100, 90));
    assert_eq!((s.only_a, s.only_b, s.changed, s.identical), (10, 0, 0, 90));
    assert_eq!(d.filter, PairFilter::Different);
    let missing: Vec<usize> = d.shown().map(|r| r.a().expect("a frame of A")).collect();
    assert_eq!(missing, (90..100).collect::<Vec<_>>(), "exactly the frames cut off");
    assert!(d.shown().all(|r| r.b().is_none()));
    h.get_by_label("Only in A (10)");
    assert_eq!(h.query_all_by_label("- only in A").count(), 10, "one row each");
    h.get_by_label_contains("only in A: 10 | only in B: 0 | changed: 0 | identical: 90");
}

#[test]
fn an_edited_frame_names_the_edited_path_and_highlights_both_sides() {
    let dir = tempfile::tempdir().unwrap();
    let copy = sample_copy(dir.path(), "milvus-100.dump", "wal.dump");
    let mut h = harness(SIZE, WalscopeApp::new());
    h.step();
    open_indexed(&mut h, &[&copy]);
    step_until(&mut h, "decoded rows", |h| h.query_by_label("Pulsar 100/2/-1").is_some());
    h.get_by_label("Pulsar 100/2/-1").click();
    step_until(&mut h, "the detail", |h| h.state().tabs[0].detail.as_ref().is_some_and(|d| d.index == 4));
    h.state_mut().tabs[0].apply_edit(4, "message.properties[\"_vc\"]", "edited");
    assert!(h.state().tabs[0].session.is_edited(4));
    settle(&mut h);
    h.get_by_label("Compare this message with…").click();
    settle(&mut h);
    h.get_by_label("Compare with frame 4 of wal.dump as saved").click();
    step_until(&mut h, "the frames compared", |h| diff(h).is_some_and(|d| d.messages().is_some()));
    settle(&mut h);
    let m = diff(&h).unwrap().messages().unwrap();
    let paths: Vec<&str> = m.changes.iter().map(|c| c.path.as_str()).collect();
    assert_eq!(paths, ["message.properties[\"_vc\"]"], "exactly the edited path");
    let c = &m.changes[0];
    let (a_span, b_span) = (c.a_span.clone().expect("in A"), c.b_span.clone().expect("in B"));
    h.get_by_label("message.properties[\"_vc\"]").click();
    settle(&mut h);
    let m = diff(&h).unwrap().messages().unwrap();
    assert_eq!(m.picked, Some(0));
    assert_eq!(m.a.highlight, Some(a_span.clone()), "A's bytes highlighted");
    assert_eq!(m.b.highlight, Some(b_span.clone()), "B's bytes highlighted");
    // Both hex views show their side's bytes of it, scrolled to them.
    let first = |start: usize, bytes: &[u8]| format!("byte {start}: {:02x}", bytes[start]);
    let (in_a, in_b) = (first(a_span.start, &m.a.bytes), first(b_span.start, &m.b.bytes));
    if in_a == in_b {
        assert_eq!(h.query_all_by_label(&in_a).count(), 2, "both hex views show {in_a}");
    } else {
        h.get_by_label(&in_a);
        h.get_by_label(&in_b);
    }

    // A node picked in A's tree is picked in B's too: its path, its bytes on each side.
    let lcs = "message.properties[\"_lcs\"]";
    let nodes: Vec<_> = h.query_all_by_label_contains("properties[\"_lcs\"]: ").collect();
    assert_eq!(nodes.len(), 2, "one in each tree");
    nodes[0].click();
    settle(&mut h);
    let m2 = diff(&h).unwrap().messages().unwrap();
    assert_eq!(m2.selected.as_deref(), Some(lcs));
    assert_eq!(m2.picked, None, "no change there");
    assert!(m2.b.highlight.is_some() && m2.b.highlight == m2.b.span_of(lcs), "B's node highlighted");
    assert!(m2.a.highlight.is_some() && m2.a.highlight == m2.a.span_of(lcs));
    // Down (the pointer over the pane) walks to the first change again.
    h.key_press(eframe::egui::Key::ArrowDown);
    settle(&mut h);
    assert_eq!(diff(&h).unwrap().messages().unwrap().picked, Some(0));
}

/// A row value edited inside the WAL payload (decoded in place as InsertRequest) is one change
/// named inside the payload; picking it selects the value's node under the payload's decoded
/// node in both trees and highlights that value's bytes on both sides.
#[test]
fn a_value_edited_inside_the_payload_is_found_in_both_decoded_payloads() {
    let dir = tempfile::tempdir().unwrap();
    let copy = sample_copy(dir.path(), "milvus-100.dump", "wal.dump");
    let mut h = harness(SIZE, WalscopeApp::new());
    h.step();
    open_indexed(&mut h, &[&copy]);
    step_until(&mut h, "decoded rows", |h| h.query_by_label("Pulsar 100/2/-1").is_some());
    h.get_by_label("Pulsar 100/2/-1").click();
    step_until(&mut h, "the detail", |h| h.state().tabs[0].detail.as_ref().is_some_and(|d| d.index == 4));
    let node = "message.payload (decoded as InsertRequest).fields_data[0].scalars.long_data.data[1]";
    h.state_mut().tabs[0].apply_edit(4, node, "424242");
    assert!(h.state().tabs[0].session.is_edited(4), "the payload edit took");
    settle(&mut h);
    h.get_by_label("Compare this message with…").click();
    settle(&mut h);
    h.get_by_label("Compare with frame 4 of wal.dump as saved").click();
    step_until(&mut h, "the frames compared", |h| diff(h).is_some_and(|d| d.messages().is_some()));
    settle(&mut h);
    let m = diff(&h).unwrap().messages().unwrap();
    let paths: Vec<&str> = m.changes.iter().map(|c| c.path.as_str()).collect();
    let path = "message.payload.fields_data[0].scalars.long_data.data[1]";
    assert_eq!(paths, [path], "exactly the edited value, named inside the payload");
    let c = &m.changes[0];
    assert_eq!(c.new.as_deref().map(|v| v != "424242"), Some(true), "B is the file as saved");
    assert_eq!(c.old.as_deref(), Some("424242"), "A has the edit");
    let (a_span, b_span) = (c.a_span.clone().expect("in A"), c.b_span.clone().expect("in B"));
    h.get_by_label(path).click();
    settle(&mut h);
    let m = diff(&h).unwrap().messages().unwrap();
    assert_eq!(m.selected.as_deref(), Some(node), "the node under the decoded payload");
    assert_eq!((m.a.highlight.clone(), m.b.highlight.clone()), (Some(a_span.clone()), Some(b_span)));
    assert_eq!(m.a.span_of(node).map(|s| s.end), Some(a_span.end), "A's tree has the node");
    assert!(m.b.span_of(node).is_some(), "B's tree has the node");
}

#[test]
fn a_dump_on_disk_is_chosen_in_the_open_dialog() {
    let dir = tempfile::tempdir().unwrap();
    let whole = sample_copy(dir.path(), "milvus-100.dump", "whole.dump");
    let short = cut_copy(dir.path(), "short.dump", 95);
    let mut h = harness(SIZE, WalscopeApp::new());
    h.step();
    open_indexed(&mut h, &[&whole]);
    h.get_by_label("Compare whole.dump with…").click();
    settle(&mut h);
    h.get_by_label("Choose a file…").click();
    settle(&mut h);
    h.get_by_label("Choose the file to compare whole.dump with");
    h.state_mut().open_dialog.text = short.display().to_string();
    settle(&mut h);
    h.get_by_label("Compare").click();
    step_until(&mut h, "the dumps compared", |h| diff(h).is_some_and(|d| d.dumps().is_some()));
    assert!(!h.state().open_dialog.visible, "the dialog closed");
    assert_eq!(h.state().tabs.len(), 1, "the file was compared, not opened");
    let s = &diff(&h).unwrap().dumps().unwrap().summary;
    assert_eq!((s.only_a, s.only_b, s.changed, s.identical), (5, 0, 0, 95));
}

/// A copy of the sample whose frame `frame` was edited with `walscope edit` (as an operator would).
fn edited_copy(dir: &Path, name: &str, frame: usize) -> PathBuf {
    let file = sample_copy(dir, "milvus-100.dump", name);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_walscope"))
        .args(["edit", "--type", "milvus.proto.milvus.DumpMessagesResponse", "--framing", "varint"])
        .args(["--frame", &frame.to_string(), "--set", "message.properties[\"_vc\"]=edited"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    file
}

#[test]
fn a_changed_pair_opens_the_diff_of_its_two_frames() {
    let dir = tempfile::tempdir().unwrap();
    let whole = sample_copy(dir.path(), "milvus-100.dump", "whole.dump");
    let edited = edited_copy(dir.path(), "edited.dump", 7);
    let mut h = harness(SIZE, WalscopeApp::new());
    h.step();
    open_indexed(&mut h, &[&whole, &edited]);
    front(&mut h, &whole);
    settle(&mut h);
    h.get_by_label("Compare whole.dump with…").click();
    settle(&mut h);
    h.get_by_label("Compare with edited.dump").click();
    step_until(&mut h, "the dumps compared", |h| diff(h).is_some_and(|d| d.dumps().is_some()));
    settle(&mut h);
    let s = &diff(&h).unwrap().dumps().unwrap().summary;
    assert_eq!((s.only_a, s.only_b, s.changed, s.identical), (0, 0, 1, 99));
    h.get_by_label("~ changed").click();
    step_until(&mut h, "the pair compared", |h| diff(h).is_some_and(|d| d.messages().is_some()));
    settle(&mut h);
    let m = diff(&h).unwrap().messages().unwrap();
    let paths: Vec<&str> = m.changes.iter().map(|c| c.path.as_str()).collect();
    assert_eq!(paths, ["message.properties[\"_vc\"]"]);
    assert_eq!((m.a.index, m.b.index), (7, 7), "frame 7 of each");
    h.get_by_label("Back to the pairs").click();
    settle(&mut h);
    assert!(diff(&h).unwrap().messages().is_none());
    h.get_by_label("~ changed");
}

/// An app with the demo servers, keeping its profiles and history in `dir`.
fn demo_app(dir: &Path) -> WalscopeApp {
    let mut app = WalscopeApp::new();
    app.config_dir = Some(dir.to_path_buf());
    app.start_demo();
    app.show_tasks = false;
    app
}

fn composer<'a>(h: &'a Harness<'static, WalscopeApp>) -> &'a ComposerState {
    h.state().panes.first::<ComposerState>().unwrap()
}

/// Sends GetReplicateInfo for `pchannel` and waits for the reply.
fn call(h: &mut Harness<'static, WalscopeApp>, pchannel: &str) {
    let pool = h.state().schemas.pool().clone();
    let c = h.state_mut().panes.first_mut::<ComposerState>().unwrap();
    c.json = format!(r#"{{"source_cluster_id": "by-dev-old", "target_pchannel": "{pchannel}"}}"#);
    c.json_changed(&pool);
    h.step();
    let before = composer(h).replies.len();
    h.get_by_label("Send Ctrl+Enter").click();
    step_until(h, "the reply", |h| {
        composer(h).replies.len() > before && !matches!(composer(h).response, Response::Waiting { .. })
    });
    settle(h);
}

#[test]
fn a_composer_reply_and_a_history_entry_open_the_pane() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = harness([1600.0, 1400.0], demo_app(dir.path()));
    let id = compose(&mut h, "demo-milvus", "GetReplicateInfo", "MilvusService/GetReplicateInfo");
    call(&mut h, "by-dev-rootcoord-dml_0");
    call(&mut h, "by-dev-rootcoord-dml_1");

    // The reply against the earlier one.
    h.get_by_label("Compare this reply with…").click();
    settle(&mut h);
    h.get_by_label("Compare with reply 1 (GetReplicateInfo)").click();
    step_until(&mut h, "the replies compared", |h| diff(h).is_some_and(|d| d.messages().is_some()));
    let d = diff(&h).unwrap();
    assert_eq!(
        (d.a_label.as_str(), d.b_label.as_str()),
        ("reply 2 (GetReplicateInfo)", "reply 1 (GetReplicateInfo)")
    );
    h.state_mut().panes.clear::<DiffState>();
    h.state_mut().layout.show_pane(walscope::ui::panes::PaneId::Composer(id));
    settle(&mut h);

    // A history entry against the other.
    h.get_by_label("History").click();
    step_until(&mut h, "the history", |h| composer(h).history_entries().len() >= 2);
    settle(&mut h);
    let ids: Vec<u64> = composer(&h).history_entries().iter().map(|e| e.id).collect();
    let (first, second) = (ids[0], ids[1]);
    h.get_by_label(&format!("Compare #{second} with…")).click();
    settle(&mut h);
    h.get_by_label(&format!("Compare with history #{first} (GetReplicateInfo request)")).click();
    step_until(&mut h, "the requests compared", |h| diff(h).is_some_and(|d| d.messages().is_some()));
    let m = diff(&h).unwrap().messages().unwrap();
    assert!(!m.changes.is_empty(), "the two requests name other pchannels");
    assert!(
        m.changes.iter().any(|c| c.path.contains("target_pchannel")),
        "the pchannel is what differs: {:?}",
        m.changes.iter().map(|c| &c.path).collect::<Vec<_>>()
    );
}
