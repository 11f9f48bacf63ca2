//! The Timeline pane, headless with egui_kittest (issue #40, items 2 and 4): a salvage folder
//! read as a job shows one lane per pchannel by name with the gap, the open transaction and
//! the damage counted; "+", "−" and "Fit all" zoom; a click on a frame's mark opens its dump
//! with that frame selected; the Replay pane's "Timeline" opens the pane on its folder.

use crate::common::gui::{harness, settle, step_until};
use crate::common::timeline::make;
use eframe::egui::{self, Event, PointerButton};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use walscope::ui::WalscopeApp;
use walscope::ui::panes::timeline::TimelineState;

const SIZE: [f32; 2] = [1400.0, 900.0];

fn pane<'a>(h: &'a Harness<'static, WalscopeApp>) -> &'a TimelineState {
    h.state().panes.first::<TimelineState>().expect("a timeline pane")
}

fn pane_mut<'a>(h: &'a mut Harness<'static, WalscopeApp>) -> &'a mut TimelineState {
    h.state_mut().panes.first_mut::<TimelineState>().expect("a timeline pane")
}

/// The app with a timeline of a fresh folder (4000 messages over four pchannels) read.
fn opened(dir: &std::path::Path) -> (Harness<'static, WalscopeApp>, crate::common::timeline::Made) {
    let made = make(dir, 4000);
    let mut app = WalscopeApp::new();
    app.config_dir = Some(dir.to_path_buf());
    let mut h = harness(SIZE, app);
    h.step();
    h.state_mut().new_timeline(Some(dir.to_path_buf()));
    step_until(&mut h, "the timeline", |h| pane(h).data.is_some());
    settle(&mut h);
    (h, made)
}

#[test]
fn a_folder_shows_its_pchannels_as_lanes() {
    let dir = tempfile::tempdir().unwrap();
    let (h, made) = opened(dir.path());
    for p in &made.pchannels {
        h.get_by_label(p);
    }
    h.get_by_label_contains("1 gap, 2 damaged ranges");
    h.get_by_label_contains("(1 open)");
    h.get_by_label("Timeline lanes: drag to pan, turn the wheel to zoom, click a mark to open its frame");
    assert_eq!(pane(&h).lane_rects.len(), 4);
}

#[test]
fn zoom_buttons_and_fit_all() {
    let dir = tempfile::tempdir().unwrap();
    let (mut h, _made) = opened(dir.path());
    let span = |h: &Harness<'static, WalscopeApp>| pane(h).to - pane(h).from;
    let whole = span(&h);
    h.get_by_label("+").click();
    h.step();
    assert!((span(&h) - whole / 2.0).abs() < whole * 1e-6);
    h.get_by_label("+").click();
    h.step();
    assert!((span(&h) - whole / 4.0).abs() < whole * 1e-6);
    h.get_by_label("−").click();
    h.step();
    assert!((span(&h) - whole / 2.0).abs() < whole * 1e-6);
    h.get_by_label("Fit all").click();
    h.step();
    assert!((span(&h) - whole).abs() < whole * 1e-6);
    // The wheel over the lanes zooms in about the pointer.
    let c = pane(&h).canvas.unwrap().center();
    h.input_mut().events.push(Event::PointerMoved(c));
    h.input_mut().events.push(Event::MouseWheel {
        unit: egui::MouseWheelUnit::Point,
        delta: egui::vec2(0.0, 120.0),
        phase: egui::TouchPhase::Move,
        source: egui::MouseWheelSource::Wheel,
        modifiers: egui::Modifiers::NONE,
    });
    for _ in 0..10 {
        h.step();
    }
    assert!(span(&h) < whole * 0.9, "the wheel zoomed in: {} of {whole}", span(&h));
}

#[test]
fn a_click_on_a_mark_opens_that_frame_in_its_dump() {
    let dir = tempfile::tempdir().unwrap();
    let (mut h, made) = opened(dir.path());
    // A frame of lane 1 alone in its milliseconds (no neighbour within 2 ms): its mark is
    // the only one under the pointer.
    let (i, frame, tt) = {
        let l = &pane(&h).data.as_ref().unwrap().lanes[1];
        let ms = |i: usize| l.tt[i] >> 18;
        let i = (200..l.len() - 1)
            .find(|&i| ms(i - 1) + 2 < ms(i) && ms(i) + 2 < ms(i + 1))
            .expect("a lone frame");
        (i, l.frame[i] as usize, l.tt[i])
    };
    let p = pane_mut(&mut h);
    let half = (3u64 << 18) as f64;
    (p.from, p.to) = (tt as f64 - half, tt as f64 + half);
    h.step();
    let at = pane(&h).point_of(1, i).expect("its mark is drawn");
    h.input_mut().events.push(Event::PointerMoved(at));
    h.step();
    let words = pane(&h).hovered.clone().unwrap_or_default();
    assert!(words.contains(&format!("frame {frame}")), "{words}");
    for pressed in [true, false] {
        h.input_mut().events.push(Event::PointerButton {
            pos: at,
            button: PointerButton::Primary,
            pressed,
            modifiers: egui::Modifiers::NONE,
        });
        h.step();
    }
    let dump = dir.path().join(format!("{}.dump", made.pchannels[1]));
    step_until(&mut h, "the dump opened at the frame", |h| {
        h.state().tabs.iter().any(|t| t.path == dump && t.selected == Some(frame))
    });
}

#[test]
fn the_replay_pane_opens_a_timeline_of_its_folder() {
    let dir = tempfile::tempdir().unwrap();
    make(dir.path(), 600);
    let mut app = WalscopeApp::new();
    app.config_dir = Some(dir.path().to_path_buf());
    app.new_replay(Some(dir.path().to_path_buf()), None);
    let mut h = harness(SIZE, app);
    settle(&mut h);
    h.get_by_label("Timeline").click();
    step_until(&mut h, "a timeline of the folder", |h| {
        h.state().panes.first::<TimelineState>().is_some_and(|t| t.data.is_some())
    });
    assert_eq!(pane(&h).folder, dir.path().display().to_string());
}
