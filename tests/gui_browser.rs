//! The desktop app, headless with egui_kittest: the start page, opening a sample dump, rows
//! appearing, filtering by type, selecting a message, and tree ↔ hex linking.

use crate::common::gui::{harness, sample_copy, settle, step_until};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use std::path::Path;
use walscope::ui::panes::command::AppCommand;
use walscope::ui::panes::file::TabWork;
use walscope::ui::{CLI_USAGE, WalscopeApp};

/// The window size these tests draw at.
const SIZE: [f32; 2] = [1280.0, 800.0];

fn sample() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/samples/milvus-100.dump")
}

#[test]
fn start_page_explains_the_tool() {
    let mut h = harness(SIZE, WalscopeApp::new());
    h.run();
    h.get_by_label("walscope");
    h.get_by_label_contains("protobuf write-ahead-log traffic");
    h.get_by_label_contains("built-in types are loaded");
    for (cmd, what) in CLI_USAGE {
        h.get_by_label(cmd);
        h.get_by_label(what);
    }
}

#[test]
fn open_filter_select_and_link_tree_to_hex() {
    let mut h = harness(SIZE, WalscopeApp::new());
    h.step();
    h.state_mut().open(sample());
    step_until(&mut h, "the file to open", |h| h.state().tabs.len() == 1);
    step_until(&mut h, "decoded rows", |h| h.query_by_label_contains("CreateCollection coll=4491").is_some());
    assert!(h.query_by_label("RocksMQ 1000").is_some(), "the id column");
    // A click anywhere in a row selects it.
    h.get_by_label("Kafka 1000").click();
    h.step();
    assert_eq!(h.state().tabs[0].selected, Some(2));

    // Filter by type.
    h.get_by_label("Filter:").click();
    h.step();
    h.get_by_label("Filter:").type_text("type=Delete");
    h.get_by_label("Apply filter").click();
    step_until(&mut h, "the filter scan", |h| h.state().tabs[0].scan.as_ref().is_some_and(|s| s.is_done()));
    let matches = h.state().tabs[0].row_count();
    assert!(matches > 0 && matches < 100, "{matches}");
    step_until(&mut h, "Delete rows", |h| h.query_all_by_label_contains("Delete coll=").count() == matches);
    assert!(h.query_by_label_contains("Insert coll=").is_none(), "only Deletes are listed");

    // Select the first Delete: the tree shows the decoded message.
    let first = h.state().tabs[0].frames(0..1)[0];
    h.get_by_label(&first.to_string()).click();
    step_until(&mut h, "the detail", |h| h.state().tabs[0].detail.as_ref().is_some_and(|d| d.index != 2));
    let frame = h.state().tabs[0].selected.unwrap();
    assert_eq!(frame, first);
    h.step();

    h.get_by_label_contains(&format!("frame {frame} | milvus.proto.milvus.DumpMessagesResponse"));
    h.get_by_label_contains("header (DeleteMessageHeader)");
    // The payload is decoded in place as the Delete body, its bytes inside the message's.
    h.get_by_label_contains("payload (decoded as DeleteRequest)");
    h.get_by_label_contains("collectionID: ");
    {
        let d = h.state().tabs[0].detail.as_ref().unwrap();
        let body = &d.embedded[0];
        assert_eq!((body.field_path.as_str(), body.automatic), ("message.payload", true));
        assert_eq!(body.root.type_name, "milvus.proto.msg.DeleteRequest");
        let inner = &body.root.children[0];
        let (path, _) = d.node_at(inner.value_span.start).unwrap();
        assert!(path.starts_with("message.payload (decoded as DeleteRequest)."), "{path}");
    }

    // Copy the message as a command line that decodes exactly this frame.
    h.get_by_label("Copy command").click();
    h.step();
    let copied: Vec<String> = h
        .output()
        .platform_output
        .commands
        .iter()
        .filter_map(|c| match c {
            eframe::egui::OutputCommand::CopyText(t) => Some(t.clone()),
            _ => None,
        })
        .collect();
    assert!(
        copied.iter().any(|t| t.starts_with(&format!("walscope decode --framing varint --frame {frame} --type milvus.proto.milvus.DumpMessagesResponse "))),
        "{copied:?}"
    );

    // Select a field: its bytes are highlighted in the hex view.
    h.get_by_label_contains("properties[\"_vc\"]: \"by-dev-rootcoord-dml_").click();
    h.step();
    let (node, span) = {
        let d = h.state().tabs[0].detail.as_ref().unwrap();
        (d.selected_node.clone().unwrap(), d.highlight.clone().unwrap())
    };
    assert!(node.contains("properties[\"_vc\"]"), "{node}");
    h.get_by_label("Hex").click();
    h.step();
    h.step();
    // Click a byte inside that field: the same field is selected (the link goes both ways).
    {
        let d = h.state_mut().tabs[0].detail.as_mut().unwrap();
        d.selected_node = None;
        d.highlight = None;
    }
    let inside = span.start + 3;
    // The field editor above the hex view goes with the selection: let the layout settle.
    settle(&mut h);
    h.get_by_label_contains(&format!("byte {inside}: ")).click();
    h.step();
    let d = h.state().tabs[0].detail.as_ref().unwrap();
    assert_eq!(d.highlight.clone(), Some(span));
    assert_eq!(d.selected_node.clone(), Some(node));
}

#[test]
fn read_a_file_as_another_framing_and_type() {
    let mut h = harness(SIZE, WalscopeApp::new());
    h.step();
    h.state_mut().open(sample());
    step_until(&mut h, "the file to open", |h| h.state().tabs.len() == 1);
    h.get_by_label("Read as...").click();
    for _ in 0..10 {
        h.step();
    }
    h.state_mut().tabs[0].read_as.framing = Some(walscope::dump::Framing::Single);
    h.state_mut().tabs[0].read_as.type_name = Some("milvus.proto.common.ImmutableMessage".into());
    h.step();
    h.get_by_label("Reopen").click();
    step_until(&mut h, "the reopened file", |h| {
        h.state().tabs.len() == 1 && h.state().tabs[0].dump.framing == walscope::dump::Framing::Single
    });
    let tab = &h.state().tabs[0];
    assert_eq!(tab.why_type, "chosen by hand");
    assert_eq!(tab.decoder.message_type().unwrap().full_name(), "milvus.proto.common.ImmutableMessage");
    h.get_by_label_contains("single framing (100% sure)");
}

/// Sorting on the cheap columns: size (computed off the UI thread) and number, either way;
/// arrow keys follow the shown order.
#[test]
fn sort_by_size_and_number_and_move_with_arrows() {
    let mut h = harness(SIZE, WalscopeApp::new());
    h.step();
    h.state_mut().open(sample());
    step_until(&mut h, "the index", |h| {
        h.state().tabs.len() == 1 && h.state().tabs[0].dump.index().is_done()
    });
    let sizes = |h: &Harness<'static, WalscopeApp>| -> Vec<u64> {
        let tab = &h.state().tabs[0];
        tab.frames(0..tab.row_count()).iter().map(|f| tab.dump.frame(*f).unwrap().header.total()).collect()
    };
    h.get_by_label("size").click();
    step_until(&mut h, "the size order", |h| h.query_by_label("size (asc)").is_some());
    let s = sizes(&h);
    assert_eq!(s.len(), 100);
    assert!(s.windows(2).all(|w| w[0] <= w[1]), "ascending by size: {s:?}");
    h.get_by_label("size (asc)").click();
    step_until(&mut h, "descending", |h| h.query_by_label("size (desc)").is_some());
    let s = sizes(&h);
    assert!(s.windows(2).all(|w| w[0] >= w[1]), "descending by size: {s:?}");

    // Arrow keys walk the shown order, not frame numbers.
    let shown = h.state().tabs[0].frames(0..3);
    h.state_mut().tabs[0].select(shown[0]);
    h.step();
    h.key_press(eframe::egui::Key::ArrowDown);
    h.step();
    assert_eq!(h.state().tabs[0].selected, Some(shown[1]));

    h.get_by_label("#").click();
    step_until(&mut h, "number order", |h| h.query_by_label("# (asc)").is_some());
    h.get_by_label("# (asc)").click();
    step_until(&mut h, "number order, descending", |h| h.query_by_label("# (desc)").is_some());
    assert_eq!(h.state().tabs[0].frames(0..2), [99, 98]);
}

/// The flow word for word: open a sample dump → rows appear → filter by type → select a
/// message → the tree shows the decoded Insert → select a field → its hex range is highlighted.
#[test]
fn filter_inserts_and_highlight_a_payload_field() {
    let mut h = harness(SIZE, WalscopeApp::new());
    h.step();
    h.state_mut().open(sample());
    step_until(&mut h, "rows", |h| h.query_by_label_contains("CreateCollection coll=4491").is_some());
    h.get_by_label("Filter:").click();
    h.step();
    h.get_by_label("Filter:").type_text("type=Insert");
    h.get_by_label("Apply filter").click();
    step_until(&mut h, "the filter scan", |h| h.state().tabs[0].scan.as_ref().is_some_and(|s| s.is_done()));
    step_until(&mut h, "Insert rows", |h| h.query_all_by_label_contains("Insert coll=").count() > 0);
    assert!(h.query_by_label_contains("Delete coll=").is_none(), "only Inserts are listed");

    let first = h.state().tabs[0].frames(0..1)[0];
    h.get_by_label(&first.to_string()).click();
    step_until(&mut h, "the detail", |h| h.state().tabs[0].detail.is_some());
    settle(&mut h);
    h.get_by_label_contains("payload (decoded as InsertRequest)");
    h.get_by_label_contains("collection_name: \"");

    // Below the fold in an 800-pixel window: scroll to it as a user would, then click.
    h.get_by_label_contains("collection_name: \"").scroll_to_me();
    settle(&mut h);
    h.get_by_label_contains("collection_name: \"").click();
    settle(&mut h);
    let span = {
        let d = h.state().tabs[0].detail.as_ref().unwrap();
        let node = d.selected_node.clone().unwrap();
        assert!(node.ends_with("(decoded as InsertRequest).collection_name"), "{node}");
        let span = d.highlight.clone().unwrap();
        assert_eq!(Some(span.clone()), d.span_of(&node));
        span
    };
    h.get_by_label("Hex").click();
    settle(&mut h);
    // The highlighted bytes are the field's: its key byte is shown, and a click on any byte of
    // it selects this same field.
    h.get_by_label_contains(&format!("byte {}: ", span.start)).click();
    settle(&mut h);
    let d = h.state().tabs[0].detail.as_ref().unwrap();
    assert_eq!(d.highlight.clone(), Some(span));
    assert!(d.selected_node.as_deref().unwrap_or("").ends_with("collection_name"));
}

/// A dump cut short on disk while its tab is open (issue #36): the window does not die of it.
/// Within a second (the row loader looks once a second) the tab says in words that the file
/// shrank, from what size to what, and from which frame nothing can be read; it keeps the rows
/// it had; a frame past the new end is shown as unreadable, never decoded from zeros. A dump
/// replaced by rename keeps its tab whole and says so too.
#[cfg(unix)]
#[test]
fn a_file_cut_short_or_replaced_while_open_is_said_and_survived() {
    use walscope::dump::view::FrameStatus;
    let dir = tempfile::tempdir().unwrap();
    let (path, other) = (dir.path().join("cut.dump"), dir.path().join("replaced.dump"));
    let set = walscope::schema::SchemaSet::builtin();
    for p in [&path, &other] {
        let policy = walscope::dump::SyncPolicy::default();
        walscope::sim::sample::write_milvus_dump(set.pool(), p, 3000, 4, policy, None).unwrap();
    }
    let was = std::fs::metadata(&path).unwrap().len();
    let mut h = harness(SIZE, WalscopeApp::new());
    h.step();
    h.state_mut().open(path.clone());
    step_until(&mut h, "the file to open", |h| h.state().tabs.len() == 1);
    step_until(&mut h, "its index", |h| h.state().tabs[0].dump.index().is_done());
    step_until(&mut h, "the first rows", |h| h.state().tabs[0].decoder.cached(0).is_some());
    let (first, n) = {
        let t = &h.state().tabs[0];
        (t.decoder.cached(0).unwrap(), t.dump.frame_count())
    };
    let k = n / 2;
    let at = h.state().tabs[0].dump.frame(k).unwrap().offset + 50;
    std::fs::OpenOptions::new().write(true).open(&path).unwrap().set_len(at).unwrap();

    let words = format!("cut.dump shrank from {was} to {at} bytes on disk after it was opened");
    step_until(&mut h, "the cut, in words", |h| h.query_by_label_contains(&words).is_some());
    h.get_by_label_contains(&format!("frames from {k} on are past its new end"));
    h.get_by_label("Reopen the file");
    {
        let t = &h.state().tabs[0];
        assert_eq!(t.dump.frame_count(), n, "the rows are kept");
        assert_eq!(*t.decoder.view(&t.dump, 0).unwrap(), *first, "the rows before the cut read as before");
        let last = t.decoder.view(&t.dump, n - 1).unwrap();
        let unreadable =
            matches!(&last.status, FrameStatus::Undecodable { reason, .. } if reason.contains("shrank"));
        assert!(unreadable, "the last frame: {last:?}");
    }
    h.state_mut().tabs[0].select(n - 1);
    h.step();
    assert!(h.state().tabs[0].detail.is_none(), "no detail decoded from zeros");
    h.get_by_label_contains(&format!("Unreadable: frame {} (bytes", n - 1));
    // An edit to a frame before the cut may be made, but not saved over the cut file.
    let refused = save_refused(&mut h, 0);
    assert!(refused.contains(&format!("shrank from {was} to {at} bytes")), "{refused}");
    assert_eq!(std::fs::metadata(&path).unwrap().len(), at, "the cut file is left as it is");

    // Replaced by rename: the tab still shows the file as it was opened, and says so.
    h.state_mut().open(other.clone());
    step_until(&mut h, "the second file", |h| h.state().tabs.len() == 2);
    let new = dir.path().join("new.dump");
    std::fs::write(&new, b"another file").unwrap();
    std::fs::rename(&new, &other).unwrap();
    step_until(&mut h, "the replacement, in words", |h| {
        h.query_by_label_contains("replaced.dump was replaced on disk after it was opened").is_some()
    });
    let t = &h.state().tabs[1];
    assert_eq!(t.dump.check_unchanged().ok(), Some(()), "the file opened is whole in its mapping");
    let refused = save_refused(&mut h, 1);
    assert!(refused.contains("replaced on disk after it was opened"), "{refused}");
    assert_eq!(std::fs::read(&other).unwrap(), b"another file", "the new file is not written over");
    assert!(
        std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .all(|e| !e.file_name().to_string_lossy().contains("tmp"))
    );
}

/// Issue #38, trouble first: the 64 bytes of garbage after frame 19 of the sample are a row of
/// their own between frames 19 and 20 (⚠, offset, length and why), found by `status=bad` and
/// left out by `type=Insert`; a click or the arrow keys select it, and the detail shows its
/// bytes in the hex view, at their offsets in the file.
#[test]
fn a_damaged_range_is_a_row_found_by_status_bad_with_its_bytes_in_hex() {
    use walscope::ui::panes::file::rows::RowItem;
    let dir = tempfile::tempdir().unwrap();
    let file = sample_copy(dir.path(), "milvus-40-garbage.dump", "garbage.dump");
    let bytes = std::fs::read(&file).unwrap();
    let mut h = harness(SIZE, WalscopeApp::new());
    h.step();
    h.state_mut().open(file);
    step_until(&mut h, "the index", |h| {
        h.state().tabs.len() == 1 && h.state().tabs[0].dump.index().is_done()
    });
    let damaged = |h: &Harness<'static, WalscopeApp>| -> Vec<(usize, walscope::dump::Problem)> {
        let t = &h.state().tabs[0];
        let items = t.items(0..t.row_count());
        items
            .into_iter()
            .enumerate()
            .filter_map(|(r, i)| match i {
                RowItem::Damaged(p) => Some((r, p)),
                RowItem::Frame(_) => None,
            })
            .collect()
    };
    let rows = damaged(&h);
    assert_eq!(rows.len(), 1, "{rows:?}");
    let (row, p) = rows[0].clone();
    assert_eq!((row, p.offset, p.len), (20, 34108, 64));
    assert_eq!(h.state().tabs[0].row_count(), 41);
    assert_eq!(h.state().tabs[0].items(19..22)[0], RowItem::Frame(19));
    assert_eq!(h.state().tabs[0].items(19..22)[2], RowItem::Frame(20));
    // On screen: a word and an icon (not colour alone), its offset and why.
    step_until(&mut h, "the damaged row", |h| h.query_by_label("⚠ damaged").is_some());
    h.get_by_label("34108");
    h.get_by_label_contains("bytes 34108..34172 skipped");

    // A click selects it: its words and its bytes, no tree.
    h.get_by_label("⚠ damaged").click();
    settle(&mut h);
    assert_eq!(h.state().tabs[0].selected_damaged.as_ref().map(|p| p.offset), Some(34108));
    assert!(h.state().tabs[0].detail.is_none());
    h.get_by_label_contains("⚠ Damaged range: bytes 34108..34172 (64 bytes)");
    h.get_by_label("0000853c");
    h.get_by_label(&format!("byte 0: {:02x}", bytes[34108]));
    h.get_by_label(&format!("byte 63: {:02x}", bytes[34108 + 63]));

    // The arrow keys go through it like any row.
    h.key_press(eframe::egui::Key::ArrowDown);
    h.step();
    assert_eq!(h.state().tabs[0].selected, Some(20));
    h.key_press(eframe::egui::Key::ArrowUp);
    h.step();
    assert_eq!(h.state().tabs[0].selected_damaged.as_ref().map(|p| p.offset), Some(34108));
    h.key_press(eframe::egui::Key::ArrowUp);
    h.step();
    assert_eq!(h.state().tabs[0].selected, Some(19));
    assert!(h.state().tabs[0].selected_damaged.is_none());

    // status=bad finds it; type=Insert leaves it out.
    for (filter, kept) in [("status=bad", true), ("type=Insert", false)] {
        h.state_mut().tabs[0].filter_text = filter.into();
        h.state_mut().tabs[0].apply_filter();
        step_until(&mut h, filter, |h| h.state().tabs[0].scan.as_ref().is_some_and(|s| s.is_done()));
        settle(&mut h);
        assert_eq!(!damaged(&h).is_empty(), kept, "{filter}");
        assert_eq!(h.query_by_label("⚠ damaged").is_some(), kept, "{filter}");
        // The count beside the filter says what the list shows: the range is counted apart.
        assert_eq!(h.query_by_label_contains("and 1 damaged range").is_some(), kept, "{filter}");
    }
}

/// A filter that matches nothing says so where the table would be, with what to do, and a
/// cleared filter leaves nothing of itself in the status bar (it said "filtering: 0 matches"
/// after the filter was gone).
#[test]
fn a_filter_with_no_match_says_so_and_clearing_it_leaves_no_words() {
    let mut h = harness(SIZE, WalscopeApp::new());
    h.step();
    h.state_mut().open(sample());
    step_until(&mut h, "the index", |h| {
        h.state().tabs.len() == 1 && h.state().tabs[0].dump.index().is_done()
    });
    h.state_mut().tabs[0].filter_text = "type=NoSuchType".into();
    h.state_mut().tabs[0].apply_filter();
    step_until(&mut h, "the filter scan", |h| h.state().tabs[0].scan.as_ref().is_some_and(|s| s.is_done()));
    step_until(&mut h, "the scan's job to end", |h| h.state().jobs.running().is_empty());
    settle(&mut h);
    h.get_by_label("No message matches `type=NoSuchType`");
    h.get_by_label_contains("Clear the filter to see every message");
    assert!(h.query_by_label("summary").is_none(), "no empty table");

    h.get_by_label("Clear the filter").click();
    settle(&mut h);
    assert!(h.state().tabs[0].scan.is_none());
    assert!(h.query_by_label_contains("filtering").is_none(), "no words of the cleared filter");
    assert!(h.query_by_label_contains("No message matches").is_none());
}

/// A dump with no frames says so where the table would be, with what to try.
#[test]
fn a_dump_with_no_frames_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("empty.dump");
    std::fs::write(&file, b"").unwrap();
    let mut h = harness(SIZE, WalscopeApp::new());
    h.step();
    h.state_mut().open(file);
    step_until(&mut h, "the index", |h| {
        h.state().tabs.len() == 1 && h.state().tabs[0].dump.index().is_done()
    });
    settle(&mut h);
    h.get_by_label("This dump has no frames");
    h.get_by_label_contains("choose it under \"Read as...\"");
    assert!(h.query_by_label("summary").is_none(), "no empty table");
}

/// Edits frame 0 of tab `i` and runs its save: the refusal, in words.
fn save_refused(h: &mut Harness<'static, WalscopeApp>, i: usize) -> String {
    let tab = &mut h.state_mut().tabs[i];
    tab.apply_edit(0, "message.properties[\"_vc\"]", "edited");
    assert!(tab.session.is_dirty(), "the edit is made");
    tab.ask_save();
    tab.save_confirmed();
    // The save the tab asked the app for (taken before the app runs it).
    let save = h.state().sender().drain().into_iter().find_map(|c| match c {
        AppCommand::FileWork { work: TabWork::Save(s), .. } => Some(s),
        _ => None,
    });
    // The job's body (work/, not the pane) writes it.
    walscope::ui::work::save::save(&save.expect("a save")).expect_err("the save is refused").to_string()
}
