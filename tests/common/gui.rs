//! Driving the app in egui_kittest tests: the one harness, stepping until background work
//! shows up, and letting animations settle before clicking.

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use std::time::{Duration, Instant};
use walscope::ui::WalscopeApp;

/// The window `app` draws into, headless, `size` points wide and high (each suite picks the size
/// its panes need to show whole).
pub fn harness(size: [f32; 2], app: WalscopeApp) -> Harness<'static, WalscopeApp> {
    Harness::builder()
        .with_size(eframe::egui::Vec2::new(size[0], size[1]))
        .build_ui_state(|ui, app: &mut WalscopeApp| app.ui(ui), app)
}

/// Steps the UI until `done` holds, letting background threads work in between.
pub fn step_until(
    h: &mut Harness<'static, WalscopeApp>,
    what: &str,
    done: impl Fn(&mut Harness<'static, WalscopeApp>) -> bool,
) {
    let start = Instant::now();
    loop {
        h.step();
        if done(h) {
            return;
        }
        assert!(start.elapsed() < Duration::from_secs(30), "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Lets opening animations (collapsing headers) finish so widgets stay where they were found.
pub fn settle(h: &mut Harness<'static, WalscopeApp>) {
    for _ in 0..20 {
        h.step();
    }
}

/// A copy of the committed sample `rel` (under `assets/samples/`) in `dir` as `name`: the window
/// saves what it opens, so tests never open a file of the repository itself.
pub fn sample_copy(dir: &std::path::Path, rel: &str, name: &str) -> std::path::PathBuf {
    let file = dir.join(name);
    std::fs::copy(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/samples").join(rel), &file)
        .expect("copy the sample");
    file
}

/// A new composer on `profile` with the method found by typing `search` and picking the entry
/// labelled `pick`; its pane number.
pub fn compose(h: &mut Harness<'static, WalscopeApp>, profile: &str, search: &str, pick: &str) -> u64 {
    let id = h.state_mut().new_composer(Some(profile.into()), None, Vec::new(), None);
    settle(h);
    h.get_by_label("Method:").click();
    h.get_by_label("Method:").type_text(search);
    h.step();
    h.get_by_label(pick).click();
    settle(h);
    id
}
