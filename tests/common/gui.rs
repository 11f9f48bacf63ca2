//! Driving the app in egui_kittest tests: step until background work shows up, and let
//! animations settle before clicking.

use egui_kittest::Harness;
use std::time::{Duration, Instant};
use walscope::ui::WalscopeApp;

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
