//! The dockable layout: every open file, the start page, the Schemas panel and the Sync tasks
//! dashboard are panes of one [`egui_tiles::Tree`] that can be split, dragged and tabbed.
//!
//! Owns: the tree, keeping it in step with `WalscopeApp::tabs` / `show_schemas` / `show_tasks`
//! (panes come and go with them; closing a pane's tab closes the file or hides the panel), and
//! which file pane has the focus (`WalscopeApp::active`). File panes are keyed by path, so a
//! file reopened after a save or a "Read as" keeps its place.
//! Must never: own file state (that is `FileTab`), or read files or the network.

mod draw;
use crate::WalscopeApp;
use crate::panes::file::ReadAs;
use eframe::egui;
use egui_tiles::{Container, Tile, TileId, Tiles, Tree};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// What a pane shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Pane {
    /// What the window shows with no file open.
    Start,
    File(PathBuf),
    Schemas,
    Tasks,
    Connections,
    /// A request composer, by its id.
    Composer(u64),
    /// A salvage, by its id.
    Salvage(u64),
    /// A replay of a salvage into the new primary, by its id.
    Replay(u64),
    /// A sync-task dashboard besides the first (`Tasks`), by its id.
    Dashboard(u64),
}

pub struct Layout {
    pub tree: Tree<Pane>,
    /// The file whose pane was last made active (to notice when `active` changes elsewhere).
    focused: Option<PathBuf>,
    /// A pane to show in front on the next frame (a new composer).
    bring_forward: Option<Pane>,
}

/// Which panels and composers the app has open.
struct Shown {
    schemas: bool,
    tasks: bool,
    connections: bool,
    composers: Vec<u64>,
    salvages: Vec<u64>,
    replays: Vec<u64>,
    dashboards: Vec<u64>,
}

const TREE_ID: &str = "walscope_layout";

impl Default for Layout {
    fn default() -> Self {
        Layout { tree: Tree::empty(egui::Id::unique(TREE_ID)), focused: None, bring_forward: None }
    }
}

impl Layout {
    /// A layout restored from storage (its panes are brought in step on the next frame).
    pub fn from_tree(tree: Tree<Pane>) -> Layout {
        Layout { tree, focused: None, bring_forward: None }
    }

    /// Every pane in the tree.
    pub fn panes(&self) -> Vec<Pane> {
        self.tree
            .tiles
            .tiles()
            .filter_map(|t| if let Tile::Pane(p) = t { Some(p.clone()) } else { None })
            .collect()
    }

    /// Shows `pane` in front on the next frame (it is added first when new).
    pub fn show_pane(&mut self, pane: Pane) {
        self.bring_forward = Some(pane);
    }

    pub fn has(&self, pane: &Pane) -> bool {
        self.tree.tiles.find_pane(pane).is_some()
    }

    /// True when `pane` is on screen (not behind another tab).
    pub fn is_shown(&self, pane: &Pane) -> bool {
        self.tree.tiles.find_pane(pane).is_some_and(|id| self.tree.active_tiles().contains(&id))
    }

    /// How many tab groups hold a file (2 or more after a split).
    pub fn file_groups(&self) -> usize {
        self.tree
            .tiles
            .iter()
            .filter(|(_, t)| match t {
                Tile::Container(Container::Tabs(tabs)) => tabs
                    .children
                    .iter()
                    .any(|c| matches!(self.tree.tiles.get(*c), Some(Tile::Pane(Pane::File(_))))),
                _ => false,
            })
            .count()
    }

    /// Drops file panes whose path is not in `keep` (a restored layout, before its files open).
    pub fn retain_files(&mut self, keep: &[PathBuf]) {
        let gone: Vec<TileId> = self
            .tree
            .tiles
            .iter()
            .filter_map(|(id, t)| match t {
                Tile::Pane(Pane::File(p)) if !keep.contains(p) => Some(*id),
                _ => None,
            })
            .collect();
        for id in gone {
            self.tree.remove_recursively(id);
        }
    }

    fn add(&mut self, pane: Pane) {
        let tiles = &mut self.tree.tiles;
        let is_file = matches!(pane, Pane::File(_) | Pane::Start);
        let schemas = pane == Pane::Schemas;
        if let Pane::Composer(_) | Pane::Connections | Pane::Salvage(_) | Pane::Replay(_) = pane {
            // Beside the other composers, else as a tab beside the files.
            let sibling = tiles
                .iter()
                .find(|(_, t)| {
                    matches!(t, Tile::Pane(Pane::Composer(_) | Pane::Salvage(_) | Pane::Replay(_)))
                })
                .or_else(|| tiles.iter().find(|(_, t)| matches!(t, Tile::Pane(Pane::File(_) | Pane::Start))))
                .map(|(id, _)| *id);
            let new = tiles.insert_pane(pane);
            if add_as_tab_beside(tiles, sibling, new) {
                return;
            }
            match self.tree.root {
                Some(root) => {
                    let tabs = tiles.insert_tab_tile(vec![new]);
                    self.tree.root = Some(tiles.insert_horizontal_tile(vec![root, tabs]));
                }
                None => self.tree.root = Some(tiles.insert_tab_tile(vec![new])),
            }
            return;
        }
        let new = tiles.insert_pane(pane);
        let Some(root) = self.tree.root else {
            self.tree.root = Some(tiles.insert_tab_tile(vec![new]));
            return;
        };
        if is_file {
            // Beside the focused file, else beside any file or the start page.
            let focused = self.focused.clone().and_then(|p| tiles.find_pane(&Pane::File(p)));
            let sibling = focused.or_else(|| {
                tiles
                    .iter()
                    .find(|(_, t)| matches!(t, Tile::Pane(Pane::File(_) | Pane::Start)))
                    .map(|(id, _)| *id)
            });
            if add_as_tab_beside(tiles, sibling, new) {
                return;
            }
            let tabs = tiles.insert_tab_tile(vec![new]);
            self.tree.root = Some(tiles.insert_horizontal_tile(vec![root, tabs]));
            return;
        }
        // Schemas to the left, the dashboard below, as the old fixed panels were.
        let tabs = tiles.insert_tab_tile(vec![new]);
        let (children, share) = if schemas { (vec![tabs, root], 0.3) } else { (vec![root, tabs], 0.45) };
        let split = if schemas {
            tiles.insert_horizontal_tile(children)
        } else {
            tiles.insert_vertical_tile(children)
        };
        if let Some(Tile::Container(Container::Linear(l))) = tiles.get_mut(split) {
            l.shares.set_share(tabs, share);
            l.shares.set_share(root, 1.0 - share);
        }
        self.tree.root = Some(split);
    }

    fn remove(&mut self, pane: &Pane) {
        while let Some(id) = self.tree.tiles.find_pane(pane) {
            self.tree.remove_recursively(id);
        }
    }

    /// Brings the panes in step with the app's files and panels, and shows the active file.
    fn sync(&mut self, files: &[PathBuf], opening: &[PathBuf], active: Option<&PathBuf>, shown: &Shown) {
        let (schemas, tasks) = (shown.schemas, shown.tasks);
        for p in self.panes() {
            let keep = match &p {
                Pane::File(path) => files.contains(path) || opening.contains(path),
                Pane::Schemas => schemas,
                Pane::Tasks => tasks,
                Pane::Connections => shown.connections,
                Pane::Composer(id) => shown.composers.contains(id),
                Pane::Salvage(id) => shown.salvages.contains(id),
                Pane::Replay(id) => shown.replays.contains(id),
                Pane::Dashboard(id) => shown.dashboards.contains(id),
                Pane::Start => true,
            };
            if !keep {
                self.remove(&p);
            }
        }
        for f in files {
            if !self.has(&Pane::File(f.clone())) {
                self.add(Pane::File(f.clone()));
            }
        }
        let any_file = self.panes().iter().any(|p| matches!(p, Pane::File(_)));
        if any_file {
            self.remove(&Pane::Start);
        } else if !self.has(&Pane::Start) {
            self.add(Pane::Start);
        }
        if schemas && !self.has(&Pane::Schemas) {
            self.add(Pane::Schemas);
        }
        if tasks && !self.has(&Pane::Tasks) {
            self.add(Pane::Tasks);
        }
        if shown.connections && !self.has(&Pane::Connections) {
            self.add(Pane::Connections);
        }
        for id in &shown.composers {
            if !self.has(&Pane::Composer(*id)) {
                self.add(Pane::Composer(*id));
            }
        }
        for id in &shown.salvages {
            if !self.has(&Pane::Salvage(*id)) {
                self.add(Pane::Salvage(*id));
            }
        }
        for id in &shown.replays {
            if !self.has(&Pane::Replay(*id)) {
                self.add(Pane::Replay(*id));
            }
        }
        for id in &shown.dashboards {
            if !self.has(&Pane::Dashboard(*id)) {
                self.add(Pane::Dashboard(*id));
            }
        }
        if let Some(pane) = self.bring_forward.take() {
            self.tree.make_active(|_, t| matches!(t, Tile::Pane(p) if *p == pane));
        }
        if let Some(want) = active
            && self.focused.as_ref() != Some(want)
        {
            let target = Pane::File(want.clone());
            self.tree.make_active(|_, t| matches!(t, Tile::Pane(p) if *p == target));
            self.focused = Some(want.clone());
        }
    }
}

/// Adds `new` as the active tab of the tab container holding `sibling`. False (nothing added)
/// when there is no sibling or it does not sit in tabs: the caller then splits instead.
fn add_as_tab_beside(tiles: &mut Tiles<Pane>, sibling: Option<TileId>, new: TileId) -> bool {
    let Some(parent) = sibling.and_then(|s| tiles.parent_of(s)) else { return false };
    let Some(Tile::Container(Container::Tabs(tabs))) = tiles.get_mut(parent) else { return false };
    tabs.add_child(new);
    tabs.set_active(new);
    true
}

/// What happened in the panes this frame, applied once the tree is drawn.
pub(crate) struct Shell<'a> {
    pub(crate) app: &'a mut WalscopeApp,
    closed: Vec<Pane>,
    pub(crate) focus: Option<PathBuf>,
    pub(crate) reopen: Vec<(PathBuf, ReadAs)>,
}

impl egui_tiles::Behavior<Pane> for Shell<'_> {
    fn pane_ui(&mut self, ui: &mut egui::Ui, _id: TileId, pane: &mut Pane) -> egui_tiles::UiResponse {
        draw::draw(self, ui, pane);
        egui_tiles::UiResponse::None
    }

    fn tab_title_for_pane(&mut self, pane: &Pane) -> egui::WidgetText {
        match pane {
            Pane::Start => "Start".into(),
            Pane::Schemas => "Schemas".into(),
            Pane::Tasks => "Sync tasks".into(),
            Pane::Connections => "Connections".into(),
            Pane::Salvage(_) => "Salvage".into(),
            Pane::Replay(_) => "Replay".into(),
            Pane::Dashboard(_) => "Sync tasks".into(),
            Pane::Composer(id) => {
                let c = self.app.composers.iter().find(|c| c.id == *id);
                let insecure = c.is_some_and(|c| {
                    self.app
                        .connections
                        .profiles()
                        .iter()
                        .any(|(p, _)| p.name == c.profile && p.is_insecure())
                });
                let title = c.map_or_else(|| "Composer".to_string(), |c| c.title());
                if insecure { format!("{title} (INSECURE)").into() } else { title.into() }
            }
            Pane::File(path) => {
                let name = path
                    .file_name()
                    .map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
                let dirty = self.app.tabs.iter().any(|t| t.path == *path && t.session.is_dirty());
                if dirty { format!("{name} (edited)").into() } else { name.into() }
            }
        }
    }

    fn is_tab_closable(&self, tiles: &Tiles<Pane>, id: TileId) -> bool {
        // A replay closes when no apply runs (an apply is cancelled in the pane, on purpose).
        if let Some(Tile::Pane(Pane::Replay(r))) = tiles.get(id) {
            return self.app.replays.iter().find(|s| s.id == *r).is_none_or(|s| s.live_apply().is_none());
        }
        matches!(
            tiles.get(id),
            Some(Tile::Pane(
                Pane::File(_) | Pane::Schemas | Pane::Tasks | Pane::Connections | Pane::Composer(_)
            ))
        )
    }

    fn on_tab_close(&mut self, tiles: &mut Tiles<Pane>, id: TileId) -> bool {
        let Some(Tile::Pane(p)) = tiles.get(id) else { return true };
        self.closed.push(p.clone());
        // A file with unsaved edits keeps its pane until the operator says to discard them.
        !matches!(p, Pane::File(path) if self.app.tabs.iter().any(|t| t.path == *path && t.session.is_dirty()))
    }

    fn on_tab_button(&mut self, tiles: &mut Tiles<Pane>, id: TileId, r: egui::Response) -> egui::Response {
        if (r.clicked() || r.drag_started())
            && let Some(Tile::Pane(Pane::File(p))) = tiles.get(id)
        {
            self.focus = Some(p.clone());
        }
        r
    }

    fn simplification_options(&self) -> egui_tiles::SimplificationOptions {
        egui_tiles::SimplificationOptions { all_panes_must_have_tabs: true, ..Default::default() }
    }

    /// Ctrl+Tab walks the open files instead (see `shortcuts`).
    fn cycle_tabs_with_keyboard(&self) -> bool {
        false
    }

    /// A preview would draw the file's widgets a second time with the same ids.
    fn preview_dragged_panes(&self) -> bool {
        false
    }
}

/// Draws the layout into `ui` and applies what was done in it (closing, focusing, reopening).
pub fn show(app: &mut WalscopeApp, ui: &mut egui::Ui) {
    let files: Vec<PathBuf> = app.tabs.iter().map(|t| t.path.clone()).collect();
    let active = app.tabs.get(app.active).map(|t| t.path.clone());
    let shown = Shown {
        schemas: app.show_schemas,
        tasks: app.show_tasks,
        connections: app.show_connections,
        composers: app.composers.iter().map(|c| c.id).collect(),
        salvages: app.salvages.iter().map(|s| s.id).collect(),
        replays: app.replays.iter().map(|r| r.id).collect(),
        dashboards: app.dashboards.iter().map(|d| d.id).collect(),
    };
    app.layout.sync(&files, &app.opening, active.as_ref(), &shown);
    let mut tree = std::mem::replace(&mut app.layout.tree, Tree::empty(egui::Id::unique(TREE_ID)));
    let mut shell = Shell { app, closed: Vec::new(), focus: None, reopen: Vec::new() };
    tree.ui(&mut shell, ui);
    let Shell { app, closed, focus, reopen } = shell;
    app.layout.tree = tree;
    if let Some(path) = focus
        && let Some(i) = app.tabs.iter().position(|t| t.path == path)
    {
        app.active = i;
        app.layout.focused = Some(path);
    }
    for pane in closed {
        match pane {
            Pane::File(path) => {
                if let Some(i) = app.tabs.iter().position(|t| t.path == path) {
                    app.close_tab(i);
                }
            }
            Pane::Schemas => app.show_schemas = false,
            Pane::Tasks => {
                app.show_tasks = false;
                app.send(crate::panes::command::AppCommand::CloseDashboard(
                    crate::panes::tasks::TASKS_DASHBOARD,
                ));
            }
            Pane::Connections => app.show_connections = false,
            Pane::Composer(id) => app.send(crate::panes::command::AppCommand::CloseComposer(id)),
            Pane::Salvage(id) => app.send(crate::panes::command::AppCommand::CloseSalvage(id)),
            Pane::Replay(id) => app.send(crate::panes::command::AppCommand::CloseReplay(id)),
            Pane::Dashboard(id) => app.send(crate::panes::command::AppCommand::CloseDashboard(id)),
            Pane::Start => {}
        }
    }
    // Reading a file another way means opening it again; its pane waits in place.
    for (path, read_as) in reopen {
        if let Some(i) = app.tabs.iter().position(|t| t.path == path) {
            app.tabs.remove(i);
            app.active = app.active.min(app.tabs.len().saturating_sub(1));
            app.open_as(path, read_as);
        }
    }
}
