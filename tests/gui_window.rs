//! The window as an app people find (issue #38, item 9): its icon is the one in `assets/`,
//! and its title names the file in front, marked while it has unsaved edits, so a task
//! switcher tells two walscope windows apart.

use crate::common::gui::{harness, sample_copy, step_until};
use eframe::egui::{ViewportCommand, ViewportId};
use walscope::ui::WalscopeApp;

/// The titles the app sent to the window in its last frame.
fn titles(h: &egui_kittest::Harness<'static, WalscopeApp>) -> Vec<String> {
    let Some(v) = h.output().viewport_output.get(&ViewportId::ROOT) else { return Vec::new() };
    v.commands
        .iter()
        .filter_map(|c| match c {
            ViewportCommand::Title(t) => Some(t.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn the_icon_is_the_assets_one() {
    let icon = walscope::ui::icon();
    assert_eq!((icon.width, icon.height), (256, 256));
    assert_eq!(icon.rgba.len(), 256 * 256 * 4);
    assert!(icon.rgba.chunks(4).any(|p| p[3] == 255), "not a blank icon");
}

#[test]
fn the_title_names_the_file_in_front() {
    let dir = tempfile::tempdir().unwrap();
    let copy = sample_copy(dir.path(), "milvus-100.dump", "wal-copy.dump");
    let mut h = harness([1280.0, 800.0], WalscopeApp::new());
    h.step();
    assert_eq!(h.state().window_title(), "walscope");
    h.state_mut().open(copy.clone());
    let seen = std::cell::RefCell::new(Vec::new());
    step_until(&mut h, "the title to name the file", |h| {
        seen.borrow_mut().extend(titles(h));
        seen.borrow().iter().any(|t| t.starts_with("wal-copy.dump — "))
    });
    let title = h.state().window_title();
    assert!(title.contains(&dir.path().display().to_string()) && title.ends_with("— walscope"), "{title}");
    assert!(!title.contains("unsaved"), "{title}");
}
