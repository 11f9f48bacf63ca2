//! Start-up probe: how long the window takes to show its first frame, for
//! `scripts/measure-startup.sh`. Off unless `WALSCOPE_STARTUP_PROBE` is set:
//!
//! * `WALSCOPE_STARTUP_PROBE=1` prints one line to stderr once the first frame has been painted;
//! * `WALSCOPE_STARTUP_PROBE=exit` prints it and closes the window.
//!
//! The line reads `walscope startup: first frame painted after N ms (first ui() after M ms,
//! since main) unix_ms=E`. "Painted" is the start of the second frame: eframe paints and
//! presents frame 1 before it calls `ui()` again, so N is an upper bound. Times count from
//! [`mark`] (the first line of `main`); `unix_ms` lets a script add exec and dynamic linking,
//! which happen before `main`.

use eframe::egui;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

static START: OnceLock<Instant> = OnceLock::new();
static FIRST_UI_MS: OnceLock<f64> = OnceLock::new();
static FRAMES: AtomicU32 = AtomicU32::new(0);

/// Remembers when the process reached `main`; call it first thing.
pub fn mark() {
    START.get_or_init(Instant::now);
}

/// Called at the start of every native frame; does nothing unless the probe is on.
pub fn frame(ctx: &egui::Context) {
    static MODE: OnceLock<Option<String>> = OnceLock::new();
    let Some(mode) = MODE.get_or_init(|| std::env::var("WALSCOPE_STARTUP_PROBE").ok()) else { return };
    let since = START.get_or_init(Instant::now).elapsed().as_secs_f64() * 1000.0;
    match FRAMES.fetch_add(1, Ordering::Relaxed) {
        0 => {
            FIRST_UI_MS.get_or_init(|| since);
            // Make sure there is a second frame to notice that the first was painted.
            ctx.request_repaint();
        }
        1 => {
            let unix_ms = walscope_core::time::now_ms();
            let first = FIRST_UI_MS.get().copied().unwrap_or(since);
            eprintln!(
                "walscope startup: first frame painted after {since:.1} ms (first ui() after {first:.1} ms, since main) unix_ms={unix_ms}"
            );
            if mode == "exit" {
                ctx.send_viewport_cmd(egui::ViewportCommand::Close);
            }
        }
        _ => {}
    }
}
