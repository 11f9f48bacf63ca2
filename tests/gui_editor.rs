//! Editing in the window, headless with egui_kittest: open an OpenMLDB progress file, edit
//! `sync_point.offset`, undo and redo, save; the file decodes to the new value and only those
//! bytes changed. An invalid number is refused with a message at the field.

use crate::common::gui::{harness, sample_copy, settle, step_until};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use std::path::Path;
use walscope::ui::WalscopeApp;

fn offset_of(path: &Path) -> u64 {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_walscope"))
        .arg("decode")
        .arg(path)
        .arg("--format")
        .arg("json")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    v["syncPoint"]["offset"].as_str().unwrap().parse().unwrap()
}

/// Puts `target` in the save confirmation's "Save as" box of tab `i`.
fn set_save_as(h: &mut Harness<'static, WalscopeApp>, i: usize, target: &Path) {
    let ask = h.state_mut().tabs[i].confirm_save.as_mut().expect("the save confirmation");
    ask.save_as.as_mut().expect("its Save as view").text = target.display().to_string();
    h.step();
}

#[test]
fn edit_a_progress_file_and_save() {
    let dir = tempfile::tempdir().unwrap();
    let file = sample_copy(dir.path(), "synctool/7/0.progress", "0.progress");
    let original = std::fs::read(&file).unwrap();
    let old_offset = offset_of(&file);

    let mut h = harness([1400.0, 900.0], WalscopeApp::new());
    h.step();
    h.state_mut().open(file.clone());
    step_until(&mut h, "the row", |h| h.query_by_label_contains("at binlog offset=").is_some());
    h.get_all_by_label("0").next().unwrap().click();
    step_until(&mut h, "the detail", |h| h.state().tabs[0].detail.is_some());
    settle(&mut h);

    // Select the field; an invalid number is refused at the field and nothing changes.
    h.get_by_label_contains(&format!("offset: {old_offset}")).click();
    h.step();
    h.step();
    h.get_by_label("New value:").click();
    h.step();
    h.get_by_label("New value:").type_text("x");
    h.step();
    h.get_by_label("Apply edit").click();
    h.step();
    h.step();
    h.get_by_label_contains("Not applied:");
    h.get_by_label_contains("is not a valid uint64");
    assert!(!h.state().tabs[0].session.is_dirty());

    // A valid value is applied in memory and shown; the file is untouched until saved.
    h.state_mut().tabs[0].detail.as_mut().unwrap().edit_text = Some(String::new());
    h.step();
    h.get_by_label("New value:").click();
    h.step();
    h.get_by_label("New value:").type_text("1234");
    h.get_by_label("Apply edit").click();
    settle(&mut h);
    h.get_by_label_contains("offset: 1234");
    h.get_by_label_contains("Unsaved edits: frame 0");
    assert_eq!(std::fs::read(&file).unwrap(), original);

    // Undo and redo.
    h.get_by_label("Undo").click();
    settle(&mut h);
    h.get_by_label_contains(&format!("offset: {old_offset}"));
    h.get_by_label("Redo").click();
    settle(&mut h);
    h.get_by_label_contains("offset: 1234");

    // Save: asks first (the file is untouched until confirmed), then atomic, with a backup;
    // the file decodes to the new value, and only the frame length, the sync_point length and
    // the offset changed.
    h.get_by_label("Save").click();
    settle(&mut h);
    assert_eq!(std::fs::read(&file).unwrap(), original);
    h.get_by_label("Save").click();
    step_until(&mut h, "the save", |h| {
        h.state().tabs.len() == 1 && !h.state().tabs[0].session.is_dirty() && h.state().opening.is_empty()
    });
    assert_eq!(offset_of(&file), 1234);
    assert_eq!(std::fs::read(dir.path().join("0.progress.bak")).unwrap(), original);
    let saved = std::fs::read(&file).unwrap();
    let tablet = original.windows(2).position(|w| w == [0x32, 0x0f]).unwrap();
    let suffix = original.iter().rev().zip(saved.iter().rev()).take_while(|(a, b)| a == b).count();
    assert!(suffix >= original.len() - tablet, "bytes after the sync point are untouched");
}

/// Before saving: the byte diff; closing asks first; save as writes a copy and leaves the
/// original alone; Ctrl+F goes to the filter and Esc drops the selection.
#[test]
fn review_close_guard_save_as_and_keys() {
    use eframe::egui::{Key, Modifiers};
    let dir = tempfile::tempdir().unwrap();
    let file = sample_copy(dir.path(), "synctool/7/0.progress", "0.progress");
    let original = std::fs::read(&file).unwrap();
    let mut h = harness([1400.0, 900.0], WalscopeApp::new());
    h.step();
    h.state_mut().open(file.clone());
    step_until(&mut h, "the file", |h| h.state().tabs.len() == 1);
    h.state_mut().tabs[0].select(0);
    h.state_mut().tabs[0].apply_edit(0, "sync_point.offset", "99");
    settle(&mut h);

    h.get_by_label("Review changes (byte diff)").click();
    settle(&mut h);
    h.get_by_label("frame 0 before");
    h.get_by_label("frame 0 after");
    // What the diff shows is exactly the bytes that differ, found here independently.
    let diff = h.state_mut().tabs[0].diff();
    let (old, new) = {
        let t = &h.state().tabs[0];
        let loc = t.dump.frame(0).unwrap();
        (t.dump.message_bytes(&loc).1.to_vec(), t.session.message(&t.dump, 0).unwrap())
    };
    let prefix = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
    let suffix = old
        .iter()
        .rev()
        .zip(new.iter().rev())
        .take_while(|(a, b)| a == b)
        .count()
        .min(old.len().min(new.len()) - prefix);
    assert_eq!(
        diff,
        vec![(0, (prefix, old.len() - prefix - suffix, new.len() - prefix - suffix))],
        "{old:02x?} -> {new:02x?}"
    );
    let edited = walscope::codec::decode(&h.state().tabs[0].decoder.message_type().unwrap().clone(), &new)
        .unwrap()
        .message;
    assert!(
        walscope::codec::to_json(&edited, false).contains("\"offset\":\"99\""),
        "the edit is in the bytes"
    );

    // Closing a file with unsaved edits asks; keeping it keeps the edits.
    h.key_press_modifiers(Modifiers::COMMAND, Key::W);
    settle(&mut h);
    h.get_by_label_contains("has unsaved edits in 1 message.");
    h.get_by_label("Keep it open").click();
    settle(&mut h);
    assert_eq!(h.state().tabs.len(), 1);
    assert!(h.state().tabs[0].session.is_dirty());

    // Save as onto the file itself is refused; a new name writes a copy.
    h.get_by_label("Save as…").click();
    settle(&mut h);
    set_save_as(&mut h, 0, &file);
    h.get_by_label("Save copy").click();
    settle(&mut h);
    h.get_by_label_contains("Not saved: that is this file");
    let copy = dir.path().join("copy.progress");
    set_save_as(&mut h, 0, &copy);
    h.get_by_label("Save copy").click();
    step_until(&mut h, "the copy to open", |h| {
        h.state().opening.is_empty()
            && h.state().tabs.len() == 1
            && h.state().tabs[0].path.ends_with("copy.progress")
    });
    assert_eq!(std::fs::read(&file).unwrap(), original, "the original is untouched");
    assert!(!dir.path().join("0.progress.bak").exists());
    assert_eq!(offset_of(&copy), 99);

    // Ctrl+F puts the cursor in the filter box; Esc (outside it) drops the selection.
    h.state_mut().tabs[0].select(0);
    settle(&mut h);
    h.key_press_modifiers(Modifiers::COMMAND, Key::F);
    h.step();
    h.step();
    assert!(h.get_by_label("Filter:").is_focused());
    h.get_by_label("Filter:").type_text("type=Insert");
    h.step();
    assert_eq!(h.state().tabs[0].filter_text, "type=Insert");
    h.key_press(Key::Tab);
    h.step();
    h.step();
    h.key_press(Key::Escape);
    settle(&mut h);
    assert!(h.state().tabs[0].selected.is_none());
}

/// Closing the window with unsaved edits asks first (the close is cancelled until answered).
#[test]
fn closing_the_window_with_unsaved_edits_asks() {
    let dir = tempfile::tempdir().unwrap();
    let file = sample_copy(dir.path(), "synctool/7/0.progress", "0.progress");
    let mut h = harness([1400.0, 900.0], WalscopeApp::new());
    h.step();
    h.state_mut().open(file);
    step_until(&mut h, "the file", |h| h.state().tabs.len() == 1);
    assert!(!h.state_mut().guard_window_close(), "nothing unsaved: the window may close");
    h.state_mut().tabs[0].apply_edit(0, "sync_point.offset", "5");
    assert!(h.state_mut().guard_window_close(), "unsaved edits: the close is cancelled");
    settle(&mut h);
    h.get_by_label_contains("has unsaved edits in 1 message.");
    h.get_by_label("Discard edits and close").click();
    settle(&mut h);
    assert!(h.state().tabs.is_empty());
    assert!(!h.state_mut().guard_window_close());
}

/// Save as refuses to write over a file that is open in another tab.
#[test]
fn save_as_refuses_a_file_open_in_another_tab() {
    let dir = tempfile::tempdir().unwrap();
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/samples/synctool/7/0.progress");
    let (a, b) = (dir.path().join("a.progress"), dir.path().join("b.progress"));
    std::fs::copy(&sample, &a).unwrap();
    std::fs::copy(&sample, &b).unwrap();
    let mut h = harness([1400.0, 900.0], WalscopeApp::new());
    h.step();
    h.state_mut().open(a.clone());
    step_until(&mut h, "a", |h| h.state().tabs.len() == 1);
    h.state_mut().open(b.clone());
    step_until(&mut h, "b", |h| h.state().tabs.len() == 2);
    let i = h.state().tabs.iter().position(|t| t.path.ends_with("a.progress")).unwrap();
    h.state_mut().active = i;
    h.state_mut().tabs[i].apply_edit(0, "sync_point.offset", "7");
    h.state_mut().tabs[i].ask_save_as();
    settle(&mut h);
    set_save_as(&mut h, i, &b);
    h.get_by_label("Save copy").click();
    settle(&mut h);
    h.get_by_label_contains("is open in another tab");
    assert_eq!(std::fs::read(&b).unwrap(), std::fs::read(&sample).unwrap());
}
