//! The window's save, headless with egui_kittest, on copies in temp folders: Ctrl+S and Save
//! open a confirmation with the byte diff, the file replaced and its backup, and nothing is
//! written before its Save (Cancel writes nothing); Save writes and keeps FILE.bak; a save that
//! changes no byte writes nothing and says so; the filter, the selection and the scroll survive
//! a save; "Save as…" asks before replacing an existing file and refuses the file itself (also
//! through a hard link or a symlink); `--demo` with no file opens its own copy of the sample,
//! outside the repository. Every write is checked by the fingerprint (bytes, inode) of the file
//! and its backup before and after.

use crate::common::gui::{harness, settle, step_until};
use eframe::egui::{Key, Modifiers};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use walscope::ui::WalscopeApp;

/// The window size these tests draw at.
const SIZE: [f32; 2] = [1400.0, 900.0];

fn sample(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/samples").join(rel)
}

/// What a file is now: a hash of its bytes and its inode (a replaced file has a new one), or
/// None when there is no file.
fn fingerprint(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let bytes = std::fs::read(path).ok()?;
    let mut h = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut h);
    Some((h.finish(), std::fs::metadata(path).ok()?.ino()))
}

/// Where the backup of `path` goes: `FILE.bak` beside it.
fn bak(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap().to_os_string();
    name.push(".bak");
    path.with_file_name(name)
}

/// The progress file's sync point offset, as `walscope decode` reads it from disk.
fn offset_on_disk(path: &Path) -> u64 {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_walscope"))
        .arg("decode")
        .arg(path)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    v["syncPoint"]["offset"].as_str().unwrap().parse().unwrap()
}

/// Opens a copy of the SyncTool progress sample made in `dir` and selects its one message.
fn open_progress(dir: &Path, name: &str) -> (Harness<'static, WalscopeApp>, PathBuf) {
    let file = dir.join(name);
    std::fs::copy(sample("synctool/7/0.progress"), &file).unwrap();
    let mut h = harness(SIZE, WalscopeApp::new());
    h.step();
    h.state_mut().open(file.clone());
    step_until(&mut h, "the file", |h| {
        h.state().tabs.len() == 1 && h.state().tabs[0].dump.frame_count() == 1
    });
    h.state_mut().tabs[0].select(0);
    settle(&mut h);
    (h, file)
}

fn status_says(h: &Harness<'static, WalscopeApp>, words: &str) -> bool {
    h.state().notice.as_ref().is_some_and(|n| n.text.contains(words))
}

/// Replaces what the text box labelled `label` holds with `text`.
fn type_into(h: &mut Harness<'static, WalscopeApp>, label: &str, text: &str) {
    h.get_by_label(label).click();
    h.step();
    h.key_press_modifiers(Modifiers::COMMAND, Key::A);
    h.step();
    h.get_by_label(label).type_text(text);
    settle(h);
}

#[test]
fn ctrl_s_asks_first_cancel_writes_nothing_save_keeps_the_backup_and_no_change_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (mut h, file) = open_progress(dir.path(), "0.progress");
    let original = fingerprint(&file);
    assert_ne!(offset_on_disk(&file), 99);
    h.state_mut().tabs[0].apply_edit(0, "sync_point.offset", "99");
    assert!(h.state().tabs[0].session.is_dirty(), "the edit applied");
    settle(&mut h);

    // Ctrl+S opens the confirmation: the byte diff, the file replaced, where its backup goes.
    // Nothing is written meanwhile (the old window wrote here at once).
    h.key_press_modifiers(Modifiers::COMMAND, Key::S);
    step_until(&mut h, "the save confirmation (or a write)", |h| {
        h.query_by_label_contains(&format!("Replaces {}", file.display())).is_some()
            || fingerprint(&file) != original
    });
    assert_eq!(fingerprint(&file), original, "Ctrl+S wrote the file before any confirmation");
    assert_eq!(fingerprint(&bak(&file)), None, "no backup made before any confirmation");
    settle(&mut h);
    h.get_by_label_contains(&format!("Its current contents are kept as {}", bak(&file).display()));
    h.get_by_label_contains("What changes: frame 0: bytes ");
    h.get_by_label("frame 0 before");
    h.get_by_label("frame 0 after");
    h.get_by_label("Save as…");

    // Cancel: nothing written, the edits still there.
    h.get_by_label("Cancel").click();
    settle(&mut h);
    assert!(h.query_by_label_contains("Replaces ").is_none(), "the confirmation closed");
    assert_eq!(fingerprint(&file), original, "Cancel wrote nothing");
    assert_eq!(fingerprint(&bak(&file)), None);
    assert!(h.state().tabs[0].session.is_dirty(), "the edits are kept");

    // The edit bar's Save asks the same way; its Save writes, keeping the original as .bak.
    h.get_by_label("Save").click();
    settle(&mut h);
    assert_eq!(fingerprint(&file), original, "the edit bar's Save only asks");
    h.get_by_label_contains(&format!("Replaces {}", file.display()));
    h.get_by_label("Save").click();
    step_until(&mut h, "the save", |h| status_says(h, "saved ") && h.state().tabs[0].saving.is_none());
    assert_eq!(offset_on_disk(&file), 99);
    assert_eq!(fingerprint(&bak(&file)).map(|f| f.0), original.map(|f| f.0), "the .bak holds the original");
    assert!(status_says(&h, &format!("its previous contents are in {}", bak(&file).display())));

    // An edit taken back by another edit changes no byte: the confirmation says so, and its
    // Save writes nothing (neither the file nor the backup is touched) and says so.
    settle(&mut h);
    let (saved, backup) = (fingerprint(&file), fingerprint(&bak(&file)));
    h.state_mut().tabs[0].select(0);
    h.state_mut().tabs[0].apply_edit(0, "sync_point.offset", "5");
    h.state_mut().tabs[0].apply_edit(0, "sync_point.offset", "99");
    settle(&mut h);
    h.key_press_modifiers(Modifiers::COMMAND, Key::S);
    step_until(&mut h, "the confirmation", |h| {
        h.query_by_label_contains(&format!("No byte of {} would change", file.display())).is_some()
    });
    settle(&mut h);
    h.get_by_label("Save").click();
    step_until(&mut h, "the save's report", |h| status_says(h, "nothing written"));
    assert!(status_says(&h, "already holds exactly these bytes"));
    assert_eq!(fingerprint(&file), saved, "an unchanged save writes nothing");
    assert_eq!(fingerprint(&bak(&file)), backup, "and leaves the backup alone");
}

#[test]
fn filter_selection_and_scroll_survive_a_save() {
    // Big enough that reading it again and filtering it again take longer than a frame: the
    // list is short for a while after the save, and the scroll must still come back.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("milvus-3000.dump");
    let set = walscope::schema::SchemaSet::builtin();
    walscope::sim::sample::write_milvus_dump(set.pool(), &file, 3000, 1, Default::default(), None).unwrap();
    let original = fingerprint(&file);
    let mut h = harness(SIZE, WalscopeApp::new());
    h.step();
    h.state_mut().open(file.clone());
    step_until(&mut h, "the file indexed", |h| {
        h.state().tabs.len() == 1 && h.state().tabs[0].dump.index().is_done()
    });

    // Filtered to the Inserts, the 40th of them selected with a field, the list scrolled.
    h.get_by_label("Filter:").click();
    h.get_by_label("Filter:").type_text("type=Insert");
    h.get_by_label("Apply filter").click();
    step_until(&mut h, "the filter", |h| h.state().tabs[0].scan.as_ref().is_some_and(|s| s.is_done()));
    let frame = h.state().tabs[0].frames(40..41)[0];
    h.state_mut().tabs[0].select(frame);
    h.state_mut().tabs[0].scroll_to = Some(600.0);
    settle(&mut h);
    let scrolled = h.state().tabs[0].scroll_y;
    assert!(scrolled > 100.0, "the list scrolled ({scrolled})");
    h.state_mut().tabs[0].apply_edit(frame, "message.properties[\"_vc\"]", "edited-vc");
    assert!(h.state().tabs[0].session.is_dirty(), "the edit applied");
    settle(&mut h);

    h.key_press_modifiers(Modifiers::COMMAND, Key::S);
    step_until(&mut h, "the confirmation", |h| h.query_by_label_contains("Replaces ").is_some());
    assert_eq!(fingerprint(&file), original, "nothing written before Save");
    settle(&mut h);
    h.get_by_label("Save").click();
    step_until(&mut h, "the save, the file read again and the view back", |h| {
        let t = &h.state().tabs[0];
        t.saving.is_none()
            && !t.session.is_dirty()
            && t.selected == Some(frame)
            && t.detail.as_ref().is_some_and(|d| d.index == frame)
            && t.scan.as_ref().is_some_and(|s| s.is_done())
            && (t.scroll_y - scrolled).abs() < 1.0
    });
    settle(&mut h);
    let t = &h.state().tabs[0];
    assert_eq!(t.filter_text, "type=Insert", "the filter text survives");
    assert!(t.scan.is_some(), "and is applied");
    assert_eq!(t.frames(40..41), vec![frame], "the same rows");
    assert!(t.detail.as_ref().unwrap().json.contains("edited-vc"), "the detail shows the saved message");
    assert_eq!(fingerprint(&bak(&file)).map(|f| f.0), original.map(|f| f.0), "the .bak holds the original");
    h.get_by_label_contains("matching of 3,000 scanned");
}

#[test]
fn save_as_asks_before_replacing_and_refuses_the_file_itself() {
    let dir = tempfile::tempdir().unwrap();
    let (mut h, file) = open_progress(dir.path(), "0.progress");
    let original = fingerprint(&file);
    h.state_mut().tabs[0].apply_edit(0, "sync_point.offset", "77");
    settle(&mut h);
    h.get_by_label("Save as…").click();
    settle(&mut h);

    // The file itself, a hard link to it and a symlink to it are refused in words.
    let link = dir.path().join("hard.progress");
    std::fs::hard_link(&file, &link).unwrap();
    let sym = dir.path().join("sym.progress");
    std::os::unix::fs::symlink(&file, &sym).unwrap();
    for (target, words) in [
        (&file, "Not saved: that is this file: use Save"),
        (&link, "is this file under another name (a hard link"),
        (&sym, "Not saved: that is this file"),
    ] {
        type_into(&mut h, "Save as:", &target.display().to_string());
        h.get_by_label("Save copy").click();
        settle(&mut h);
        h.get_by_label_contains(words);
        assert_eq!(fingerprint(&file), original, "{} refused, nothing written", target.display());
    }
    assert_eq!(fingerprint(&bak(&file)), None);

    // An existing file: asked first (and told it is kept as .bak); nothing written until then.
    let other = dir.path().join("other.progress");
    std::fs::copy(sample("synctool/7/0.progress"), &other).unwrap();
    let before = fingerprint(&other);
    type_into(&mut h, "Save as:", &other.display().to_string());
    h.get_by_label("Save copy").click();
    settle(&mut h);
    h.get_by_label_contains(&format!(
        "{} already exists. Replace it? Its current contents are kept as {}",
        other.display(),
        bak(&other).display()
    ));
    assert_eq!(fingerprint(&other), before, "asked, not written");
    assert_eq!(fingerprint(&bak(&other)), None);
    h.get_by_label("Replace it").click();
    step_until(&mut h, "the copy", |h| {
        h.state().tabs.len() == 1 && h.state().tabs[0].path == other && h.state().tabs[0].saving.is_none()
    });
    assert_eq!(offset_on_disk(&other), 77);
    assert_eq!(fingerprint(&bak(&other)).map(|f| f.0), before.map(|f| f.0), "the replaced file is kept");
    assert_eq!(fingerprint(&file), original, "the original is untouched");
    assert_eq!(fingerprint(&bak(&file)), None);
    assert!(status_says(&h, &format!("the file that was there is kept as {}", bak(&other).display())));
}

/// `--demo` with no file: its own copy of the sample, in a temp folder outside the repository,
/// gone with the app and never remembered as a file to reopen.
#[test]
fn demo_without_a_file_opens_a_copy_in_a_temp_folder() {
    let config = tempfile::tempdir().unwrap();
    let repo_sample = fingerprint(&sample("milvus-100.dump"));
    let mut app = WalscopeApp::new();
    app.config_dir = Some(config.path().to_path_buf());
    app.launch(Default::default(), &[], true);
    let mut h = harness(SIZE, app);
    step_until(&mut h, "the demo's copy", |h| {
        h.state().tabs.len() == 1 && h.state().tabs[0].dump.index().is_done()
    });
    let folder = h.state().demo_folder().expect("a demo folder").to_path_buf();
    let copy = h.state().tabs[0].path.clone();
    assert!(copy.starts_with(&folder) && folder.starts_with(std::env::temp_dir()), "{}", copy.display());
    assert!(!copy.starts_with(env!("CARGO_MANIFEST_DIR")), "not a file of the repository");
    assert_eq!(h.state().tabs[0].dump.frame_count(), 100);
    assert!(copy.with_file_name("milvus-100.dump.manifest.json").exists(), "with its manifest");
    let remembered = h.state().persisted(walscope::ui::recent::Theme::System);
    assert!(!remembered.open_files.contains(&copy) && !remembered.recent.contains(&copy));
    drop(h);
    assert!(!folder.exists(), "the folder goes with the app");
    assert_eq!(fingerprint(&sample("milvus-100.dump")), repo_sample);

    // With a file named, that file opens and no copy is made.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("0.progress");
    std::fs::copy(sample("synctool/7/0.progress"), &file).unwrap();
    let mut app = WalscopeApp::new();
    app.config_dir = Some(config.path().to_path_buf());
    app.launch(Default::default(), std::slice::from_ref(&file), true);
    let mut h = harness(SIZE, app);
    step_until(&mut h, "the named file", |h| h.state().tabs.len() == 1 && h.state().opening.is_empty());
    assert_eq!(h.state().tabs[0].path, file);
    assert!(h.state().demo_folder().is_none());
}
