//! Opening files always works (issue #38, item 1), headless with egui_kittest: the window's own
//! open dialog behind Ctrl+O (a typed folder lists its folders, then its files; a click goes
//! into a folder or opens a file; Tab completes; Enter opens; a bad path says why in the
//! dialog; the desktop's dialog is reachable from it and its failure is said), Enter in the
//! start page's path box, files dropped on the window (and the hint while they hover), and a
//! second file opening on the first try.

use crate::common::gui::{harness, sample_copy, settle, step_until};
use eframe::egui::{Key, Modifiers};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use walscope::ui::WalscopeApp;
use walscope::ui::desktop_dialog::DesktopDialogError;

const SIZE: [f32; 2] = [1400.0, 900.0];

/// The dialog's path field (its label).
const FIELD: &str = "Path (Tab completes, Up/Down choose, Enter opens):";

/// Ctrl as winit reports it off macOS (Ctrl and Command both set).
const CTRL: Modifiers = Modifiers { ctrl: true, command: true, alt: false, shift: false, mac_cmd: false };

/// A folder with `dumps/c.dump`, `a.dump`, `b.dump` and `notes.txt` (copies of the samples).
fn folder() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_path_buf();
    std::fs::create_dir(d.join("dumps")).unwrap();
    sample_copy(&d.join("dumps"), "milvus-40-truncate.dump", "c.dump");
    sample_copy(&d, "milvus-100.dump", "a.dump");
    sample_copy(&d, "milvus-40-garbage.dump", "b.dump");
    std::fs::write(d.join("notes.txt"), b"not a dump").unwrap();
    (dir, d)
}

/// A window with no desktop dialog (as under Xvfb or in CI), unless a test gives it one.
fn app() -> WalscopeApp {
    let mut app = WalscopeApp::new();
    app.desktop_dialog = None;
    app
}

fn dialog_shown(h: &Harness<'static, WalscopeApp>) -> bool {
    h.query_by_label("Open a file").is_some()
}

/// The dialog's entry `name` (not a tab of the same name: the entries are below its heading).
fn listed<'h>(h: &'h Harness<'static, WalscopeApp>, name: &'h str) -> Option<egui_kittest::Node<'h>> {
    let below = h.query_by_label("Open a file")?.rect().bottom();
    h.query_all_by_label(name).find(|n| n.rect().top() > below)
}

fn click_listed(h: &mut Harness<'static, WalscopeApp>, name: &str) {
    listed(h, name).unwrap_or_else(|| panic!("{name} is not listed")).click();
}

/// Replaces what the dialog's path field holds by `text`, as typed.
fn type_path(h: &mut Harness<'static, WalscopeApp>, text: &str) {
    h.key_press_modifiers(CTRL, Key::A);
    h.get_by_label(FIELD).type_text(text);
    h.step();
}

fn field_value(h: &Harness<'static, WalscopeApp>) -> String {
    h.get_by_label(FIELD).value().unwrap_or_default()
}

fn slash(p: &Path) -> String {
    format!("{}/", p.display())
}

#[test]
fn ctrl_o_shows_the_dialog_and_a_typed_folder_lists_folders_then_files() {
    let (_keep, d) = folder();
    let mut h = harness(SIZE, app());
    settle(&mut h);
    assert!(!dialog_shown(&h));
    h.key_press_modifiers(CTRL, Key::O);
    h.step();
    assert!(dialog_shown(&h), "Ctrl+O shows the open dialog");

    type_path(&mut h, &slash(&d));
    step_until(&mut h, "the folder's entries", |h| {
        listed(h, "dumps/").is_some() && listed(h, "a.dump").is_some()
    });
    assert!(listed(&h, "b.dump").is_some() && listed(&h, "notes.txt").is_some());
    let top = |h: &Harness<'static, WalscopeApp>, n: &str| listed(h, n).unwrap().rect().top();
    assert!(top(&h, "dumps/") < top(&h, "a.dump"), "folders first");
    assert!(top(&h, "a.dump") < top(&h, "b.dump"), "then files by name");
    // Typing narrows the listing.
    h.get_by_label(FIELD).type_text("b");
    step_until(&mut h, "only b.dump", |h| listed(h, "a.dump").is_none() && listed(h, "b.dump").is_some());

    // A click on a folder goes into it; a click on a file opens it and the dialog goes.
    type_path(&mut h, &slash(&d));
    step_until(&mut h, "the folder again", |h| listed(h, "dumps/").is_some());
    click_listed(&mut h, "dumps/");
    step_until(&mut h, "the inner folder's file", |h| listed(h, "c.dump").is_some());
    assert_eq!(field_value(&h), slash(&d.join("dumps")));
    click_listed(&mut h, "c.dump");
    step_until(&mut h, "c.dump to open", |h| h.state().tabs.len() == 1);
    assert_eq!(h.state().tabs[0].path, d.join("dumps/c.dump"));
    settle(&mut h);
    assert!(!dialog_shown(&h), "the dialog closes once its file opened");
}

#[test]
fn a_second_file_opens_on_the_first_try() {
    let (_keep, d) = folder();
    let mut h = harness(SIZE, app());
    h.step();
    h.state_mut().open(d.join("a.dump"));
    step_until(&mut h, "the first file", |h| h.state().tabs.len() == 1);
    settle(&mut h);

    h.key_press_modifiers(CTRL, Key::O);
    // The dialog starts in the folder of the file in front.
    step_until(&mut h, "its neighbours", |h| listed(h, "b.dump").is_some());
    assert_eq!(field_value(&h), slash(&d));
    h.get_by_label(FIELD).type_text("b");
    step_until(&mut h, "b alone", |h| listed(h, "a.dump").is_none() && listed(h, "b.dump").is_some());
    h.key_press(Key::Tab);
    h.step();
    assert_eq!(field_value(&h), d.join("b.dump").display().to_string(), "Tab completes the one candidate");
    h.key_press(Key::Enter);
    step_until(&mut h, "the second file", |h| h.state().tabs.len() == 2);
    let s = h.state();
    assert_eq!(s.tabs[s.active].path, d.join("b.dump"), "the second file is in front");
    assert!(s.notice.is_none(), "{:?}", s.notice);
    settle(&mut h);
    assert!(!dialog_shown(&h));

    // And a third, with the arrow keys, through File > Open….
    h.get_by_label("File").click();
    settle(&mut h);
    h.get_by_label("Open… Ctrl+O").click();
    step_until(&mut h, "the listing", |h| listed(h, "dumps/").is_some());
    h.key_press(Key::ArrowDown);
    h.step();
    h.key_press(Key::Enter);
    step_until(&mut h, "into dumps/", |h| listed(h, "c.dump").is_some());
    h.key_press(Key::ArrowDown);
    h.step();
    h.key_press(Key::Enter);
    step_until(&mut h, "the third file", |h| h.state().tabs.len() == 3);
}

#[test]
fn enter_in_the_start_page_path_box_opens_it() {
    let (_keep, d) = folder();
    let mut h = harness(SIZE, app());
    settle(&mut h);
    let field = h.get_by_label("Path:");
    field.click();
    h.step();
    h.get_by_label("Path:").type_text(&d.join("a.dump").display().to_string());
    h.step();
    h.key_press(Key::Enter);
    step_until(&mut h, "the file to open", |h| h.state().tabs.len() == 1);
    assert_eq!(h.state().tabs[0].path, d.join("a.dump"));
}

/// A file dropped the way the window's platform layer hands it over.
#[derive(Debug)]
struct Dropped(PathBuf);

impl eframe::egui::DroppedFile for Dropped {
    fn path(&self) -> &Path {
        &self.0
    }
    fn bytes(&self) -> Result<Vec<u8>, String> {
        std::fs::read(&self.0).map_err(|e| e.to_string())
    }
}

#[test]
fn files_dropped_on_the_window_open_and_a_hint_shows_while_they_hover() {
    let (_keep, d) = folder();
    let mut h = harness(SIZE, app());
    settle(&mut h);
    let hovering = |p: &Path| eframe::egui::HoveredFile { path: Some(p.to_path_buf()), ..Default::default() };
    h.input_mut().hovered_files.push(hovering(&d.join("a.dump")));
    // An area shows from its second frame (the first measures it).
    h.run_steps(2);
    h.get_by_label("Drop to open a.dump");
    h.input_mut().hovered_files = vec![hovering(&d.join("a.dump")), hovering(&d.join("b.dump"))];
    h.run_steps(2);
    h.get_by_label("Drop to open these 2 files");

    h.input_mut().hovered_files.clear();
    h.input_mut().dropped_files =
        vec![Arc::new(Dropped(d.join("a.dump"))), Arc::new(Dropped(d.join("b.dump")))];
    step_until(&mut h, "both dropped files", |h| h.state().tabs.len() == 2);
    assert!(h.query_by_label("Drop to open these 2 files").is_none(), "the hint goes with the drop");

    // A dropped folder shows the open dialog inside it.
    h.input_mut().dropped_files = vec![Arc::new(Dropped(d.join("dumps")))];
    step_until(&mut h, "the dialog in the folder", |h| listed(h, "c.dump").is_some());
    assert_eq!(field_value(&h), slash(&d.join("dumps")));
    h.get_by_label_contains("is a folder");
}

#[test]
fn a_bad_path_says_why_in_the_dialog() {
    let (_keep, d) = folder();
    let mut h = harness(SIZE, app());
    settle(&mut h);
    h.key_press_modifiers(CTRL, Key::O);
    step_until(&mut h, "the working folder's listing", |h| h.query_by_label_contains("In ").is_some());
    settle(&mut h);
    let cancel_at = h.get_by_label("Cancel").rect();
    type_path(&mut h, &d.join("missing.dump").display().to_string());
    step_until(&mut h, "the empty listing", |h| {
        h.query_by_label("Nothing here starts with what is typed.").is_some()
    });
    h.key_press(Key::Enter);
    step_until(&mut h, "why it did not open", |h| h.query_by_label_contains("No such file").is_some());
    h.get_by_label_contains("missing.dump: No such file");
    assert!(dialog_shown(&h), "the dialog stays to try again");
    assert!(h.state().notice.is_none(), "said once, in the dialog: {:?}", h.state().notice);
    assert!(h.state().tabs.is_empty());
    settle(&mut h);
    assert_eq!(h.get_by_label("Cancel").rect(), cancel_at, "a listing or words never move the buttons");

    // Typing again clears the words; a folder named without its slash goes into it.
    type_path(&mut h, &d.join("dumps").display().to_string());
    assert!(h.query_by_label_contains("No such file").is_none());
    step_until(&mut h, "the folder's own entry", |h| listed(h, "dumps/").is_some());
    h.query_all_by_label("Open").last().expect("the dialog's Open").click();
    step_until(&mut h, "the dialog inside the folder", |h| listed(h, "c.dump").is_some());
    h.get_by_label_contains("is a folder: name a file");

    // A folder that cannot be listed says so.
    type_path(&mut h, &format!("{}/nowhere/x", d.display()));
    step_until(&mut h, "the listing's failure", |h| {
        h.query_by_label_contains("cannot read the folder").is_some()
    });

    h.key_press(Key::Escape);
    settle(&mut h);
    assert!(!dialog_shown(&h), "Esc closes the dialog");
}

#[test]
fn the_desktop_dialog_is_reached_from_the_dialog_and_its_failure_is_said() {
    let (_keep, d) = folder();
    let mut h = harness(SIZE, app());
    settle(&mut h);
    h.key_press_modifiers(CTRL, Key::O);
    settle(&mut h);
    assert!(h.query_by_label("Desktop dialog…").is_none(), "no display: no desktop dialog offered");
    h.key_press(Key::Escape);
    settle(&mut h);

    h.state_mut().desktop_dialog = Some(Arc::new(|| Err(DesktopDialogError::DidNotOpen)));
    h.key_press_modifiers(CTRL, Key::O);
    settle(&mut h);
    h.get_by_label("Desktop dialog…").click();
    step_until(&mut h, "the failure in words", |h| {
        h.query_by_label_contains("the desktop's file dialog did not open").is_some()
    });
    assert!(dialog_shown(&h), "the in-app dialog stays, to type the path instead");

    h.state_mut().desktop_dialog = Some(Arc::new(|| Ok(None)));
    // A second click on the same button right after the first is a double click.
    settle(&mut h);
    h.get_by_label("Desktop dialog…").click();
    step_until(&mut h, "nothing chosen, said", |h| {
        h.query_by_label("No file was chosen in the desktop's dialog.").is_some()
    });

    let b = d.join("b.dump");
    h.state_mut().desktop_dialog = Some(Arc::new(move || Ok(Some(b.clone()))));
    h.get_by_label("Desktop dialog…").click();
    step_until(&mut h, "the chosen file", |h| h.state().tabs.len() == 1);
    assert_eq!(h.state().tabs[0].path, d.join("b.dump"));
    settle(&mut h);
    assert!(!dialog_shown(&h));
}
