//! The desktop app (eframe/egui). A map of the crate:
//!
//! - [`app`]: [`WalscopeApp`], the frame loop (take in finished jobs, draw, apply commands),
//!   the open files and the app's own panes; `app/apply.rs` applies what was asked,
//!   `app/results.rs` routes each job's typed result to its owner.
//! - [`panes`]: one folder per pane kind (`start`, `schemas`, `file`, `composer`,
//!   `connections`, `tasks`, `salvage`, `replay`, `jobs`) with its state, drawing and what it
//!   does with its results; the [`panes::Pane`] trait, the [`panes::Panes`] map, the read-only
//!   [`panes::AppView`], the commands ([`panes::command::AppCommand`] through the cloneable
//!   [`panes::command::CommandSender`]) and the results ([`panes::outcome::JobOutput`]).
//! - [`layout`]: the dock the panes live in (egui_tiles), dispatching through the trait.
//! - [`shell`]: the frame around the panes (menu bar, status bar, "unsaved edits" question,
//!   the open dialog, files dropped on the window); [`desktop_dialog`]: the desktop's own file
//!   dialog, and why it did not show.
//! - [`work`]: what a command starts as a job, and the job bodies that call walscope-core and
//!   walscope-ops (calls, streams, SyncTool, salvage, replay).
//! - [`jobs`]: the one [`jobs::JobRegistry`] (runtime, progress, cancel, typed [`jobs::JobError`]).
//! - [`widgets`]: reusable pieces (the hex view, a sparkline); [`recent`]: what is remembered
//!   between runs; [`demo`], [`demo_copy`]: `--demo`; [`embedded`], [`startup`]: small helpers.
//!
//! Must never: block the UI thread on files or the network, or decode more than the one
//! selected message on it (rows are decoded by a background loader); a pane never does work
//! itself (tests/house.rs checks `panes/`).

pub mod app;
pub mod demo;
pub mod demo_copy;
pub mod desktop_dialog;
pub mod embedded;
pub mod jobs;
pub mod layout;
pub mod panes;
pub mod path_complete;
pub mod recent;
pub mod shell;
pub mod startup;
pub mod widgets;
pub mod work;

pub use app::WalscopeApp;

// The modules of the crates below under the names this crate's code uses (`crate::dump`,
// `crate::jobs`, ...).
use walscope_core::{atomic, codec, datasync, dump, net, schema, wal, wire};
#[cfg(feature = "demo")]
use walscope_sim as sim;

/// Short description of the CLI shown on the start page (kept in one place for tests).
pub const CLI_USAGE: &[(&str, &str)] = &[
    ("walscope inspect FILE --filter type=Insert --stats", "list, filter and count a dump"),
    ("walscope decode --type T --format tree|json|text|wire FILE", "decode one message"),
    ("walscope edit FILE --type T --set PATH=VALUE", "lossless edit, atomic save with FILE.bak"),
    ("walscope tasks status --endpoint HOST:PORT", "OpenMLDB sync tasks"),
    ("walscope sample --kind milvus-dump --out FILE", "realistic practice data"),
];

/// Opens the window with `files` open in tabs; `demo` starts the demo servers (Milvus, SyncTool,
/// DataCollector) too, and without files opens a copy of the sample dump in a temp folder.
/// Layout, theme, recent files and window size come back from the last run (eframe storage;
/// under `WALSCOPE_CONFIG_DIR` when that is set). The window has its icon and an app id that
/// matches `assets/walscope.desktop`'s `StartupWMClass`.
pub fn run_native(files: Vec<std::path::PathBuf>, demo: bool) -> Result<(), eframe::Error> {
    let options = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_inner_size([1280.0, 800.0])
            .with_title("walscope")
            .with_app_id("walscope")
            .with_icon(std::sync::Arc::new(icon())),
        persist_window: true,
        persistence_path: std::env::var_os("WALSCOPE_CONFIG_DIR")
            .map(|d| std::path::PathBuf::from(d).join("window-state.ron")),
        ..Default::default()
    };
    eframe::run_native(
        "walscope",
        options,
        Box::new(move |cc| {
            let mut app = WalscopeApp::new();
            let stored = cc.storage.and_then(|s| s.get_string(recent::STORAGE_KEY));
            let state = stored.map(|t| recent::PersistedState::from_json(&t)).unwrap_or_default();
            let theme = app.launch(state, &files, demo);
            cc.egui_ctx.set_theme(theme.preference());
            Ok(Box::new(app))
        }),
    )
}

/// The window's icon (assets/icons/walscope-256.png, drawn from walscope.svg).
pub fn icon() -> egui::IconData {
    // A PNG built into the binary and decoded by a test: it cannot fail at run time, but a
    // window without its icon is still a window.
    eframe::icon_data::from_png_bytes(include_bytes!("../../../assets/icons/walscope-256.png"))
        .unwrap_or_default()
}

use eframe::egui;
