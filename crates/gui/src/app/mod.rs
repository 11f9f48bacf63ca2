//! The app state and the frame loop: take in finished jobs, take the shell's shortcuts, draw
//! the shell (menu, dock layout, status bar), then apply what the panes asked for
//! ([`crate::panes::command`]); what is remembered between runs goes through [`PersistedState`].
//!
//! Must never: wait on a file, a dialog or the network in a frame (jobs do, see [`JobRegistry`]).

pub(crate) mod apply;
mod compare;
mod results;

use crate::dump::background::Wake;
use crate::jobs::JobRegistry;
use crate::layout::Layout;
use crate::panes::command::AppCommand;
use crate::panes::file::FileTab;
use crate::panes::outcome::Notice;
use crate::recent::{PersistedState, RecentFiles, SIDEBAR_WIDTH, Theme};
use crate::schema::SchemaSet;
use eframe::egui;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

/// The least the sidebar can be dragged to (its first width: [`SIDEBAR_WIDTH`]).
const SIDEBAR_MIN: f32 = 140.0;

pub struct WalscopeApp {
    pub tabs: Vec<FileTab>,
    pub active: usize,
    /// The status bar's last word: a result, or an error (until the next one).
    pub notice: Option<Notice>,
    /// Files whose opening job is running.
    pub opening: Vec<PathBuf>,
    /// What is typed in the start page's path box.
    pub start_path: String,
    /// The window's own open dialog (Ctrl+O, File > Open…).
    pub open_dialog: crate::shell::open_dialog::OpenDialog,
    /// The desktop's file dialog, when one may be there (None: no display to show it on);
    /// tests put their own here.
    pub desktop_dialog: Option<crate::desktop_dialog::Picker>,
    pub schemas: Arc<SchemaSet>,
    pub show_schemas: bool,
    pub show_tasks: bool,
    pub show_connections: bool,
    pub tasks: crate::panes::tasks::TasksState,
    /// The panes opened by id (composers, salvages, replays, dashboards besides the first,
    /// Jobs), each owning its state.
    pub panes: crate::panes::Panes,
    /// The jobs that ended, oldest first (the Jobs pane lists them; the last 200 are kept).
    pub ended_jobs: Vec<crate::panes::EndedJob>,
    /// The composer last clicked: it takes Ctrl+Enter and Esc.
    pub focused_composer: Option<u64>,
    /// The dashboards' trouble thresholds (INIT and stall times, SyncTool's check period).
    pub tasks_health: crate::datasync::HealthConfig,
    /// Where profiles.json, the call history and stream dumps live (None: the user's config
    /// directory, `WALSCOPE_CONFIG_DIR` when set). Tests give each app its own.
    pub config_dir: Option<PathBuf>,
    /// Demo servers started by `--demo`, kept alive with the window.
    #[cfg_attr(not(feature = "demo"), allow(dead_code))]
    pub(crate) demo: crate::demo::DemoServers,
    /// Every running job, and the runtime they run on.
    pub jobs: JobRegistry<crate::panes::outcome::JobOutput>,
    /// Where panes, the shell and the app send what they ask for (drained after drawing).
    pub(crate) commands: crate::panes::command::CommandSender,
    pub schemas_state: crate::panes::schemas::SchemasState,
    /// The dock: file panes, the start page and the other panes.
    pub layout: Layout,
    /// The width of the file tabs' detail side as the operator dragged it (None: never; see
    /// [`crate::widgets::split`]). Remembered with the layout.
    pub detail_width: Option<f32>,
    /// The left sidebar (View > Sidebar) and its width. Off in a bare app (tests); the
    /// remembered state turns it on at start (see [`PersistedState`]).
    pub show_sidebar: bool,
    pub sidebar_width: f32,
    /// The last files opened (File > Recent files).
    pub recent: RecentFiles,
    /// Profiles shown in the Connections menu and their checks.
    pub connections: crate::panes::connections::ConnectionsState,
    /// A file with unsaved edits the operator asked to close: waiting for "discard or keep".
    pub confirm_close: Option<PathBuf>,
    /// "Compare with…" choosing the other side of a comparison (see [`crate::panes::diff::picker`]).
    pub compare_picker: Option<crate::panes::diff::picker::ComparePicker>,
    /// Frames to select once their file is open (marks clicked on a timeline).
    pub pending_frames: Vec<(PathBuf, usize)>,
    /// The temp folder holding the demo's own copy of the sample dump (removed with the app).
    demo_folder: Option<Arc<crate::demo_copy::DemoFolder>>,
    wake: Wake,
    /// The context background work repaints; known from the first frame on.
    ctx: Arc<OnceLock<egui::Context>>,
    /// The window title last sent to the window manager.
    title: String,
}

impl Default for WalscopeApp {
    fn default() -> Self {
        Self::new()
    }
}

impl WalscopeApp {
    pub fn new() -> WalscopeApp {
        let ctx: Arc<OnceLock<egui::Context>> = Arc::default();
        let c = ctx.clone();
        let wake: Wake = Arc::new(move || {
            if let Some(ctx) = c.get() {
                ctx.request_repaint();
            }
        });
        WalscopeApp {
            tabs: Vec::new(),
            active: 0,
            notice: None,
            opening: Vec::new(),
            start_path: String::new(),
            open_dialog: Default::default(),
            desktop_dialog: crate::desktop_dialog::display_present()
                .then(crate::desktop_dialog::system_picker),
            schemas: Arc::new(SchemaSet::shared_builtin().clone()),
            show_schemas: false,
            show_tasks: false,
            show_connections: false,
            tasks: Default::default(),
            panes: Default::default(),
            ended_jobs: Vec::new(),
            focused_composer: None,
            config_dir: None,
            tasks_health: Default::default(),
            demo: Default::default(),
            jobs: JobRegistry::new(wake.clone()),
            commands: Default::default(),
            schemas_state: Default::default(),
            layout: Layout::default(),
            detail_width: None,
            show_sidebar: false,
            sidebar_width: SIDEBAR_WIDTH,
            confirm_close: None,
            compare_picker: None,
            pending_frames: Vec::new(),
            recent: RecentFiles::default(),
            connections: Default::default(),
            demo_folder: None,
            wake,
            title: String::new(),
            ctx,
        }
    }

    /// The app's async runtime (the job registry's), started on first use.
    pub fn runtime(&mut self) -> Option<tokio::runtime::Handle> {
        let rt = self.jobs.handle();
        if let Some(e) = self.jobs.runtime_error() {
            self.notice = Some(Notice::error(e.to_string()));
        }
        rt
    }

    /// Start-up as `walscope [--demo] [FILE...]` asks: what was remembered comes back (see
    /// [`Self::restore`]); with `demo`, the demo servers start and, when no file was named, the
    /// app's own copy of the sample dump opens (written into a temp folder, never a file of the
    /// repository). Returns the theme to apply.
    pub fn launch(&mut self, state: PersistedState, files: &[PathBuf], demo: bool) -> Theme {
        let theme = self.restore(state, files);
        if demo {
            self.start_demo();
            if files.is_empty() {
                self.open_demo_copy();
            }
        }
        theme
    }

    /// Opens the app's own copy of the sample Milvus dump: written (once) into a fresh private
    /// temp folder that lives as long as the app, so saving edits there is harmless.
    pub fn open_demo_copy(&mut self) {
        let folder = match &self.demo_folder {
            Some(f) => f.clone(),
            None => match crate::demo_copy::DemoFolder::create() {
                Ok(f) => self.demo_folder.insert(Arc::new(f)).clone(),
                Err(e) => {
                    self.notice = Some(Notice::error(format!("cannot make a copy of the sample dump: {e}")));
                    return;
                }
            },
        };
        let (set, wake) = (self.schemas.clone(), self.wake());
        self.jobs.spawn_blocking(
            "writing a copy of the sample dump",
            crate::jobs::JobOwner::App,
            move |_| {
                let path = folder.sample(set.pool()).map_err(|e| crate::panes::outcome::JobError::File {
                    path: folder.path().join(crate::demo_copy::SAMPLE_NAME),
                    reason: e.into(),
                })?;
                crate::app::apply::open_job(path, crate::panes::file::ReadAs::default(), &set, wake)
            },
        );
    }

    /// The temp folder of the demo's own files, once one was made.
    pub fn demo_folder(&self) -> Option<&std::path::Path> {
        self.demo_folder.as_deref().map(|f| f.path())
    }

    /// The profiles file this app reads and writes.
    pub fn profile_store(&self) -> crate::net::profile::ProfileStore {
        match &self.config_dir {
            Some(d) => crate::net::profile::ProfileStore::at(&d.join("profiles.json")),
            None => crate::net::profile::ProfileStore::user(),
        }
    }

    /// The call history this app records into.
    pub fn history_store(&self) -> crate::net::history::HistoryStore {
        match &self.config_dir {
            Some(d) => crate::net::history::HistoryStore::at(&d.join("history.jsonl")),
            None => crate::net::history::HistoryStore::user(),
        }
    }

    /// Where streamed calls are written as they arrive.
    pub fn streams_dir(&self) -> PathBuf {
        self.profile_store()
            .path()
            .parent()
            .map(std::path::Path::to_path_buf)
            .unwrap_or_default()
            .join("streams")
    }

    /// What background work calls to get a frame drawn.
    pub fn wake(&self) -> Wake {
        self.wake.clone()
    }

    /// Closes file tab `i`. A file with unsaved edits is not closed: the operator is asked
    /// first (see [`crate::shell::confirm_close`]).
    pub fn close_tab(&mut self, i: usize) {
        match self.tabs.get(i) {
            Some(t) if t.session.is_dirty() => self.confirm_close = Some(t.path.clone()),
            _ => self.discard_tab(i),
        }
    }

    /// The window is asked to close: when a file has unsaved edits, asks about it first and
    /// returns true (the close must be cancelled). Closing again after the answer goes through.
    /// The window's title: the file in front (marked when it has unsaved edits), so the
    /// operator's task switcher says which window holds which dump.
    pub fn window_title(&self) -> String {
        match self.tabs.get(self.active) {
            Some(t) => {
                let name = t
                    .path
                    .file_name()
                    .map_or_else(|| t.path.display().to_string(), |n| n.to_string_lossy().into_owned());
                let edited = if t.session.is_dirty() { " (unsaved edits)" } else { "" };
                format!(
                    "{name}{edited} — {} — walscope",
                    t.path.parent().map_or(String::new(), |p| p.display().to_string())
                )
            }
            None => "walscope".to_string(),
        }
    }

    pub fn guard_window_close(&mut self) -> bool {
        match self.tabs.iter().find(|t| t.session.is_dirty()) {
            Some(t) => {
                self.confirm_close = Some(t.path.clone());
                true
            }
            None => false,
        }
    }

    /// Closes file tab `i`, dropping any unsaved edits.
    pub fn discard_tab(&mut self, i: usize) {
        if i < self.tabs.len() {
            self.tabs.remove(i);
            if self.active > i || self.active >= self.tabs.len() {
                self.active = self.active.saturating_sub(1);
            }
        }
    }

    /// Makes the next (or previous) file the active one, wrapping around.
    pub fn cycle_tabs(&mut self, forward: bool) {
        let n = self.tabs.len();
        if n > 0 {
            self.active = if forward { (self.active + 1) % n } else { (self.active + n - 1) % n };
        }
    }

    /// What to remember: layout, panels, theme, open and recent files (not the demo's own
    /// copies: their folder goes with the app).
    pub fn persisted(&self, theme: Theme) -> PersistedState {
        let lasting = |p: &PathBuf| !self.demo_folder.as_ref().is_some_and(|f| f.holds(p));
        PersistedState {
            theme,
            recent: self.recent.paths().iter().filter(|p| lasting(p)).cloned().collect(),
            open_files: self.tabs.iter().map(|t| t.path.clone()).filter(lasting).collect(),
            show_schemas: self.show_schemas,
            show_tasks: self.show_tasks,
            show_connections: self.show_connections,
            layout: Some(self.layout.tree.clone()),
            detail_width: self.detail_width,
            show_sidebar: self.show_sidebar,
            sidebar_width: self.sidebar_width,
            ..Default::default()
        }
    }

    /// Takes back what was remembered. With `files` named on the command line, those open and
    /// the previous session's files do not; otherwise the previous files that still exist
    /// reopen in their places. Returns the theme to apply.
    pub fn restore(&mut self, state: PersistedState, files: &[PathBuf]) -> Theme {
        self.recent = RecentFiles::new(state.recent);
        self.show_schemas = state.show_schemas;
        self.show_tasks = state.show_tasks;
        self.show_connections = state.show_connections;
        self.detail_width = state.detail_width.filter(|w| w.is_finite() && *w > 0.0);
        self.show_sidebar = state.show_sidebar;
        if state.sidebar_width.is_finite() && state.sidebar_width >= SIDEBAR_MIN {
            self.sidebar_width = state.sidebar_width;
        }
        let reopen: Vec<PathBuf> = if files.is_empty() {
            state.open_files.into_iter().filter(|p| crate::recent::why_missing(p).is_none()).collect()
        } else {
            files.to_vec()
        };
        if let Some(tree) = state.layout {
            self.layout = Layout::from_tree(tree);
            self.layout.retain_files(&reopen);
        }
        for p in reopen {
            self.open(p);
        }
        state.theme
    }

    /// Draws everything into `ui` (the whole window).
    pub fn ui(&mut self, ui: &mut egui::Ui) {
        if self.ctx.set(ui.ctx().clone()).is_ok() {
            crate::widgets::look::install(ui.ctx());
        }
        self.take_results();
        self.show_pending_frames();
        // Closing the window must not drop unsaved edits without asking.
        if ui.ctx().input(|i| i.viewport().close_requested()) && self.guard_window_close() {
            ui.ctx().send_viewport_cmd(egui::ViewportCommand::CancelClose);
        }
        for p in crate::shell::drop::dropped(ui.ctx()) {
            self.open(p);
        }
        shortcuts(self, ui.ctx());
        egui::Panel::top("menu").show(ui, |ui| crate::shell::menu::show(self, ui));
        egui::Panel::bottom("status").show(ui, |ui| crate::shell::status_bar::show(self, ui));
        if self.show_sidebar {
            // Its width is the app's (remembered with the layout), not egui's memory: a
            // restart with another config keeps it too.
            let r = egui::Panel::left("sidebar")
                .resizable(true)
                .default_size(self.sidebar_width)
                .size_range(SIDEBAR_MIN..=480.0)
                .show(ui, |ui| crate::shell::sidebar::show(self, ui));
            self.sidebar_width = r.response.rect.width();
        }
        egui::CentralPanel::default().show(ui, |ui| crate::layout::show(self, ui));
        crate::shell::confirm_close::show(self, ui.ctx());
        crate::panes::file::confirm_save::show(&mut self.tabs, ui.ctx());
        let desktop = self.desktop_dialog.is_some();
        self.open_dialog.show(ui.ctx(), &self.recent, desktop, &self.commands);
        if self.compare_picker.is_some() {
            let cwd = std::env::current_dir().unwrap_or_default();
            crate::panes::diff::picker::show(&mut self.compare_picker, ui.ctx(), &cwd, &self.commands);
        }
        crate::shell::drop::hint(ui.ctx());
        // Commands are applied after drawing: what they changed (a dialog shown, a pane
        // opened) needs a frame of its own, even with no input coming (Ctrl+O is one key).
        if self.apply_commands() {
            ui.ctx().request_repaint();
        }
        let title = self.window_title();
        if title != self.title {
            ui.ctx().send_viewport_cmd(egui::ViewportCommand::Title(title.clone()));
            self.title = title;
        }
        // Jobs report through `wake`; while one runs, keep its numbers moving.
        if let Some(every) = self.jobs.next_repaint() {
            ui.ctx().request_repaint_after(every);
        }
    }
}

/// The shell's keys: Ctrl+O open, Ctrl+W close the active file, Ctrl+Tab / Ctrl+Shift+Tab next
/// and previous file. (Ctrl+F, Esc, Ctrl+Z, Ctrl+S belong to the file view.)
fn shortcuts(app: &mut WalscopeApp, ctx: &egui::Context) {
    use egui::{Key, Modifiers};
    let (open, close, prev, next) = ctx.input_mut(|i| {
        let open = i.consume_key(Modifiers::COMMAND, Key::O);
        let close = i.consume_key(Modifiers::COMMAND, Key::W);
        // The more specific first: consume_key ignores an extra Shift.
        let prev = i.consume_key(Modifiers::CTRL | Modifiers::SHIFT, Key::Tab);
        let next = !prev && i.consume_key(Modifiers::CTRL, Key::Tab);
        (open, close, prev, next)
    });
    if open {
        app.send(AppCommand::ShowOpenDialog);
    }
    if close {
        app.send(AppCommand::CloseTab(app.active));
    }
    if prev || next {
        app.cycle_tabs(next);
    }
}

impl eframe::App for WalscopeApp {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        crate::startup::frame(ui.ctx());
        WalscopeApp::ui(self, ui);
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        let theme = self
            .ctx
            .get()
            .map_or(Theme::System, |c| Theme::from_preference(c.options(|o| o.theme_preference)));
        storage.set_string(crate::recent::STORAGE_KEY, self.persisted(theme).to_json());
    }
}
