//! What the window remembers between runs (through eframe's storage): the dock layout, which
//! panels are shown, the theme, the files that were open, and the last 10 files opened.
//!
//! Owns: [`PersistedState`] (a plain serde struct with `to_string`/`from_str`, so it is tested
//! without a window) and [`RecentFiles`] (the list plus whether each file is still there,
//! checked on a worker thread). Must never: read a file's contents, stat files on the UI thread,
//! or fail start-up because the stored state is old or damaged (it is then ignored).

use crate::panes::PaneId;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// The eframe storage key.
pub const STORAGE_KEY: &str = "walscope_state";
/// The sidebar's width at first start.
pub const SIDEBAR_WIDTH: f32 = 220.0;
/// How many recent files are kept.
pub const RECENT_MAX: usize = 10;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Theme {
    #[default]
    System,
    Light,
    Dark,
}

impl Theme {
    pub fn preference(self) -> eframe::egui::ThemePreference {
        match self {
            Theme::System => eframe::egui::ThemePreference::System,
            Theme::Light => eframe::egui::ThemePreference::Light,
            Theme::Dark => eframe::egui::ThemePreference::Dark,
        }
    }

    pub fn from_preference(p: eframe::egui::ThemePreference) -> Theme {
        match p {
            eframe::egui::ThemePreference::System => Theme::System,
            eframe::egui::ThemePreference::Light => Theme::Light,
            eframe::egui::ThemePreference::Dark => Theme::Dark,
        }
    }
}

/// Everything restored at start. The window size is kept by eframe itself (`persist_window`).
#[derive(Serialize, Deserialize)]
#[serde(default)]
pub struct PersistedState {
    pub version: u32,
    pub theme: Theme,
    /// Most recent first.
    pub recent: Vec<PathBuf>,
    /// Files open at exit; reopened at start if they still exist and no file was named.
    pub open_files: Vec<PathBuf>,
    pub show_schemas: bool,
    pub show_tasks: bool,
    pub show_connections: bool,
    /// The dock arrangement.
    pub layout: Option<egui_tiles::Tree<PaneId>>,
    /// The file tabs' detail width as last dragged (None: never dragged).
    pub detail_width: Option<f32>,
    /// The left sidebar: shown (on at first start), and its width.
    pub show_sidebar: bool,
    pub sidebar_width: f32,
}

impl Default for PersistedState {
    fn default() -> Self {
        PersistedState {
            version: 1,
            theme: Theme::System,
            recent: Vec::new(),
            open_files: Vec::new(),
            show_schemas: false,
            show_tasks: false,
            show_connections: false,
            layout: None,
            detail_width: None,
            show_sidebar: true,
            sidebar_width: SIDEBAR_WIDTH,
        }
    }
}

impl PersistedState {
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The stored state; anything unreadable (older format, damage) gives the defaults.
    pub fn from_json(text: &str) -> PersistedState {
        serde_json::from_str(text).unwrap_or_default()
    }
}

/// Why a recent file cannot be opened, or None when it can.
pub type Availability = Option<String>;

/// The last files opened, most recent first, and whether each is still there.
#[derive(Default)]
pub struct RecentFiles {
    paths: Vec<PathBuf>,
    status: Arc<Mutex<HashMap<PathBuf, Availability>>>,
    checked_at: Option<std::time::Instant>,
}

impl RecentFiles {
    pub fn new(paths: Vec<PathBuf>) -> RecentFiles {
        let mut r = RecentFiles::default();
        for p in paths.into_iter().rev() {
            r.push(p);
        }
        r
    }

    pub fn paths(&self) -> &[PathBuf] {
        &self.paths
    }

    /// Records an opened file (moved to the top; the list keeps [`RECENT_MAX`]).
    pub fn push(&mut self, path: PathBuf) {
        let path = std::path::absolute(&path).unwrap_or(path);
        self.paths.retain(|p| *p != path);
        self.paths.insert(0, path);
        self.paths.truncate(RECENT_MAX);
        self.checked_at = None;
    }

    /// True when the files were not checked in the last 2 s.
    pub fn wants_check(&self) -> bool {
        self.checked_at.is_none_or(|t| t.elapsed() >= std::time::Duration::from_secs(2))
    }

    /// The work that checks whether the files are still there (the caller runs it off the UI
    /// thread), or None when they were checked in the last 2 s.
    pub fn start_check(&mut self) -> Option<impl FnOnce() + Send + 'static> {
        if !self.wants_check() {
            return None;
        }
        self.checked_at = Some(std::time::Instant::now());
        let (paths, status) = (self.paths.clone(), self.status.clone());
        Some(move || {
            let found: HashMap<PathBuf, Availability> =
                paths.into_iter().map(|p| (p.clone(), why_missing(&p))).collect();
            if let Ok(mut s) = status.lock() {
                *s = found;
            }
        })
    }

    /// None: there (or not checked yet); Some(reason): cannot be opened.
    pub fn missing(&self, path: &PathBuf) -> Availability {
        self.status.lock().ok().and_then(|s| s.get(path).cloned().flatten())
    }
}

/// Why `path` cannot be opened (in words), or None.
pub fn why_missing(path: &std::path::Path) -> Availability {
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => None,
        Ok(_) => Some("not a file any more".into()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Some("the file is gone (moved or deleted)".into())
        }
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => Some("no permission to read it".into()),
        Err(e) => Some(e.to_string()),
    }
}
