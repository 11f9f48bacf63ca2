//! The app state and the frame loop: poll background work, draw the shell (menu, tabs, status
//! bar) and the active tab's panels, and apply what the panels ask for.

use super::file_tab::{FileTab, ReadAs};
use super::panels;
use crate::dump::background::Wake;
use crate::schema::SchemaSet;
use eframe::egui;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock, mpsc};

type Opened = (PathBuf, Result<FileTab, String>);

pub struct WalscopeApp {
    pub tabs: Vec<FileTab>,
    pub active: usize,
    /// The last error, shown in the status bar until the next one.
    pub last_error: Option<String>,
    /// Files being opened by worker threads.
    pub opening: Vec<PathBuf>,
    /// What is typed in File > Open path.
    pub open_path: String,
    pub schemas: Arc<SchemaSet>,
    pub show_schemas: bool,
    pub show_tasks: bool,
    pub tasks: panels::tasks::TasksState,
    /// Demo servers started by `--demo`, kept alive with the window.
    demo: Option<crate::sim::datasync::DatasyncDemo>,
    runtime: Option<Arc<tokio::runtime::Runtime>>,
    pub schemas_state: panels::schemas::SchemasState,
    opened_tx: mpsc::Sender<Opened>,
    opened_rx: mpsc::Receiver<Opened>,
    wake: Wake,
    /// The context background work repaints; known from the first frame on.
    ctx: Arc<OnceLock<egui::Context>>,
}

impl Default for WalscopeApp {
    fn default() -> Self {
        Self::new()
    }
}

impl WalscopeApp {
    pub fn new() -> WalscopeApp {
        let (opened_tx, opened_rx) = mpsc::channel();
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
            last_error: None,
            opening: Vec::new(),
            open_path: String::new(),
            schemas: Arc::new(SchemaSet::shared_builtin().clone()),
            show_schemas: false,
            show_tasks: false,
            tasks: Default::default(),
            demo: None,
            runtime: None,
            schemas_state: Default::default(),
            opened_tx,
            opened_rx,
            wake,
            ctx,
        }
    }

    /// The app's async runtime (network calls, pollers), started on first use.
    pub fn runtime(&mut self) -> Option<tokio::runtime::Handle> {
        if self.runtime.is_none() {
            match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
                Ok(rt) => self.runtime = Some(Arc::new(rt)),
                Err(e) => self.last_error = Some(format!("cannot start the network runtime: {e}")),
            }
        }
        self.runtime.as_ref().map(|rt| rt.handle().clone())
    }

    /// Starts the demo SyncTool and DataCollector on free loopback ports and watches them.
    /// Called at start-up (binding two loopback ports), never from a frame.
    pub fn start_demo(&mut self) {
        let Some(rt) = self.runtime() else { return };
        let any = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
        let started = rt.block_on(crate::sim::datasync::DatasyncDemo::start(
            any,
            any,
            std::time::Duration::from_secs(10),
            crate::sim::collector::CollectorConfig::default(),
        ));
        match started {
            Ok(d) => {
                self.tasks.endpoint = d.synctool.addr().to_string();
                self.tasks.db = "demo_db".into();
                self.tasks.table = "orders".into();
                self.tasks.mode = 2;
                self.tasks.dest = "/tmp/walscope-demo/orders".into();
                self.tasks.watch(&rt);
                self.show_tasks = true;
                self.demo = Some(d);
            }
            Err(e) => self.last_error = Some(format!("cannot start the demo servers: {e}")),
        }
    }

    /// Opens `path` in a new tab, on a worker thread.
    pub fn open(&mut self, path: PathBuf) {
        self.open_as(path, ReadAs::default());
    }

    /// Opens `path` reading it as chosen (framing, type), on a worker thread.
    pub fn open_as(&mut self, path: PathBuf, read_as: ReadAs) {
        if self.opening.contains(&path) {
            return;
        }
        self.opening.push(path.clone());
        let (tx, set, wake) = (self.opened_tx.clone(), self.schemas.clone(), self.wake.clone());
        let spawned = std::thread::Builder::new().name("walscope-open".into()).spawn(move || {
            let tab = FileTab::open_as(&path, &set, wake.clone(), &read_as);
            let _ = tx.send((path, tab));
            wake();
        });
        if let Err(e) = spawned {
            self.last_error = Some(format!("cannot start opening: {e}"));
        }
    }

    /// Shows the system's file dialog on a worker thread (it blocks while open); the chosen
    /// file opens like any other. No dialog available (no portal, no zenity) means no file.
    pub fn pick_file(&mut self) {
        let (tx, set, wake) = (self.opened_tx.clone(), self.schemas.clone(), self.wake.clone());
        let spawned = std::thread::Builder::new().name("walscope-dialog".into()).spawn(move || {
            if let Some(path) = rfd::FileDialog::new().set_title("Open a dump or message file").pick_file() {
                let tab = FileTab::open(&path, &set, wake.clone());
                let _ = tx.send((path, tab));
                wake();
            }
        });
        if let Err(e) = spawned {
            self.last_error = Some(format!("cannot show the file dialog: {e}"));
        }
    }

    /// Takes in finished background work. Never waits.
    pub fn poll(&mut self) {
        let mut reopen = Vec::new();
        for (i, tab) in self.tabs.iter_mut().enumerate() {
            let done = tab.saving.as_ref().and_then(|rx| rx.try_recv().ok());
            match done {
                Some(Ok(())) => reopen.push(i),
                Some(Err(e)) => {
                    tab.saving = None;
                    self.last_error = Some(e);
                }
                None => {}
            }
        }
        // A saved file is read again from disk, so what is shown is what was written.
        for i in reopen.into_iter().rev() {
            let tab = self.tabs.remove(i);
            self.last_error = Some(format!(
                "saved {} (previous version in {}.bak)",
                tab.path.display(),
                tab.path.display()
            ));
            self.open(tab.path.clone());
        }
        while let Ok((path, result)) = self.opened_rx.try_recv() {
            self.opening.retain(|p| *p != path);
            match result {
                Ok(tab) => {
                    self.tabs.push(tab);
                    self.active = self.tabs.len() - 1;
                }
                Err(e) => self.last_error = Some(e),
            }
        }
    }

    /// Draws everything into `ui` (the whole window).
    pub fn ui(&mut self, ui: &mut egui::Ui) {
        let _ = self.ctx.set(ui.ctx().clone());
        self.poll();
        let dropped: Vec<PathBuf> = ui.ctx().input(|i| {
            i.raw
                .dropped_files
                .iter()
                .map(|f| f.path().to_path_buf())
                .filter(|p| !p.as_os_str().is_empty())
                .collect()
        });
        for p in dropped {
            self.open(p);
        }
        egui::Panel::top("menu").show(ui, |ui| panels::menu::show(self, ui));
        egui::Panel::bottom("status").show(ui, |ui| panels::status_bar::show(self, ui));
        panels::schemas::poll(self);
        if self.show_tasks {
            egui::Panel::bottom("tasks").resizable(true).min_size(300.0).default_size(340.0).show(ui, |ui| {
                egui::ScrollArea::vertical()
                    .id_salt("tasks_panel")
                    .show(ui, |ui| panels::tasks::show(self, ui));
            });
        }
        if self.show_schemas {
            egui::Panel::left("schemas").resizable(true).default_size(320.0).show(ui, |ui| {
                egui::ScrollArea::vertical()
                    .id_salt("schemas_panel")
                    .show(ui, |ui| panels::schemas::show(self, ui));
            });
        }
        egui::CentralPanel::default().show(ui, |ui| {
            if self.tabs.is_empty() {
                panels::start::show(self, ui);
                return;
            }
            if let Some(close) = panels::tabs::show(self, ui) {
                self.tabs.remove(close);
                self.active = self.active.min(self.tabs.len().saturating_sub(1));
            }
            let mut reopen = None;
            if let Some(tab) = self.tabs.get_mut(self.active) {
                reopen = panels::file_view::show(tab, ui);
            }
            // Reading a file another way means opening it again; the old tab goes.
            if let Some(read_as) = reopen {
                let tab = self.tabs.remove(self.active);
                self.active = self.active.min(self.tabs.len().saturating_sub(1));
                self.open_as(tab.path.clone(), read_as);
            }
        });
        // Background work reports through `wake`; while a scan runs, keep the numbers moving.
        let busy = !self.opening.is_empty()
            || self
                .tabs
                .iter()
                .any(|t| !t.dump.index().is_done() || t.scan.as_ref().is_some_and(|s| !s.is_done()));
        if busy {
            ui.ctx().request_repaint_after(std::time::Duration::from_millis(100));
        } else if self.show_tasks && self.tasks.poller.is_some() {
            // The poller publishes into a channel the UI reads; look again soon after each poll.
            ui.ctx().request_repaint_after(std::time::Duration::from_millis(500));
        }
    }
}

impl eframe::App for WalscopeApp {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        super::startup::frame(ui.ctx());
        WalscopeApp::ui(self, ui);
    }
}
