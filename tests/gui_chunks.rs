//! A chunked payload in the browser: selecting any chunk of a message shows the message as one
//! (its chunks by frame, the joined payload read as its body), found by a job; a group missing
//! a chunk says which one.

use crate::common::gui::{harness, step_until};
use egui_kittest::kittest::Queryable;
use walscope::schema::SchemaSet;
use walscope::sim::{WalGenConfig, WalGenerator};
use walscope::ui::WalscopeApp;

const SIZE: [f32; 2] = [1280.0, 900.0];

/// The first 120 frames the demo writes with payloads over 1,500 bytes in chunks, as a
/// varint-delimited dump; `drop` leaves one frame out.
fn chunked_dump(path: &std::path::Path, drop: Option<usize>) -> Vec<Vec<u8>> {
    let set = SchemaSet::builtin();
    let cfg = WalGenConfig { chunk_bytes: Some(1500), ..Default::default() };
    let frames: Vec<Vec<u8>> = WalGenerator::new(set.pool(), cfg).take(120).map(|m| m.response).collect();
    let mut out = Vec::new();
    for (i, f) in frames.iter().enumerate() {
        if Some(i) == drop {
            continue;
        }
        walscope::dump::framing::write_frame(walscope::dump::Framing::VarintDelimited, f, &mut out);
    }
    std::fs::write(path, out).expect("write the dump");
    frames
}

/// (frame, index, total) of every chunk among `frames`.
fn chunks_of(frames: &[Vec<u8>]) -> Vec<(usize, u32, u32)> {
    frames
        .iter()
        .enumerate()
        .filter_map(|(i, f)| {
            let c = walscope::dump::chunks::frame_chunk(f, true)?;
            let m = c.mark?.ok()?;
            Some((i, m.index, m.total))
        })
        .collect()
}

fn open(file: std::path::PathBuf) -> egui_kittest::Harness<'static, WalscopeApp> {
    let mut h = harness(SIZE, WalscopeApp::new());
    h.step();
    h.state_mut().open(file);
    step_until(&mut h, "the index", |h| {
        h.state().tabs.len() == 1 && h.state().tabs[0].dump.index().is_done()
    });
    h
}

#[test]
fn a_chunk_shows_its_whole_message_with_the_joined_body() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("chunked.dump");
    let frames = chunked_dump(&file, None);
    let chunks = chunks_of(&frames);
    let &(second, _, total) = chunks.iter().find(|(_, i, _)| *i == 1).expect("a message in chunks");
    let first = second - 1;
    let mut h = open(file);
    // Any chunk of the message shows the message: here its second one.
    h.state_mut().tabs[0].select(second);
    let want = format!("One message in {total} chunks");
    step_until(&mut h, "the chunk group", |h| h.query_by_label_contains(&want).is_some());
    let members: Vec<String> = (first..first + total as usize).map(|f| f.to_string()).collect();
    h.get_by_label_contains(&format!("{total} chunks: frames {}", members.join(", ")));
    // The joined payload is read as its body: an InsertRequest with its rows.
    h.get_by_label_contains("\"num_rows\"");
    // A filter counts messages and chunks apart: every frame is an Insert's chunk or not.
    let inserts: Vec<&(usize, u32, u32)> = chunks.iter().collect();
    let groups = inserts.iter().filter(|(_, i, _)| *i == 0).count();
    h.state_mut().tabs[0].filter_text = "chunk=yes".into();
    h.state_mut().tabs[0].apply_filter();
    let want = format!(
        "{} frames matching ({} messages: {} chunks of {} messages)",
        chunks.len(),
        groups,
        chunks.len(),
        groups
    );
    step_until(&mut h, "the filter's count", |h| {
        h.state().tabs[0].scan.as_ref().is_some_and(|s| s.is_done())
            && h.query_by_label_contains(&want).is_some()
    });
    // The list names each chunk.
    assert!(
        h.state().tabs[0]
            .decoder
            .view(&h.state().tabs[0].dump, second)
            .unwrap()
            .summary
            .contains(&format!("[chunk 2 of {total}]"))
    );
}

#[test]
fn a_group_missing_a_chunk_says_which() {
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("whole.dump");
    let frames = chunked_dump(&whole, None);
    let &(second, _, total) =
        chunks_of(&frames).iter().find(|(_, i, _)| *i == 1).expect("a message in chunks");
    let file = dir.path().join("cut.dump");
    chunked_dump(&file, Some(second));
    let mut h = open(file);
    h.state_mut().tabs[0].select(second - 1);
    let want = format!("Incomplete message: chunk 1 of {total}");
    step_until(&mut h, "the chunk group", |h| h.query_by_label_contains(&want).is_some());
    h.get_by_label_contains(&format!("chunk 2 of {total} missing"));
    assert!(h.query_by_label_contains("Joined message").is_none(), "no body is shown for a partial group");
}

/// A generated dump of upstream master's newer types: the detail's WAL reading shows each
/// header whole (every field by its JSON name; none unknown).
#[test]
fn the_newer_types_headers_show_whole_in_the_detail() {
    let dir = tempfile::tempdir().unwrap();
    let file = crate::newer_types::newer_dump(dir.path());
    let mut h = open(file);
    let wanted = [
        ("RestoreSnapshot", "snapshotFingerprint"),
        ("AlterRLSMetadata", "cacheExpirations"),
        ("BatchUpdateManifest", "collectionId"),
        ("RefreshExternalCollection", "externalSource"),
    ];
    for (t, field) in wanted {
        let n = h.state().tabs[0].dump.frame_count();
        let i = (0..n)
            .find(|i| {
                let tab = &h.state().tabs[0];
                tab.decoder.view(&tab.dump, *i).and_then(|v| v.wal.clone()).is_some_and(|w| w.type_name == t)
            })
            .unwrap_or_else(|| panic!("a {t} frame"));
        h.state_mut().tabs[0].select(i);
        h.step();
        let line = format!("header ({t}MessageHeader)");
        let d = h.state().tabs[0].detail.as_ref().expect("a detail");
        let (_, v) = d
            .wal_lines
            .iter()
            .find(|(k, _)| *k == line)
            .unwrap_or_else(|| panic!("{line} in {:?}", d.wal_lines));
        assert!(v.contains(field), "{t}: {v}");
        assert!(!d.wal_lines.iter().any(|(k, _)| k == "problem"), "{:?}", d.wal_lines);
        h.get_by_label(&line);
    }
}
