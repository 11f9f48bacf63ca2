//! The dockable layout: every open file, the start page, the Schemas, Connections and Sync
//! tasks panels and every pane of [`crate::panes::Panes`] are tiles of one
//! [`egui_tiles::Tree`] that can be split, dragged and tabbed.
//!
//! Owns: the tree of [`crate::panes::PaneId`]s, keeping it in step with `WalscopeApp::tabs`, the View menu's
//! panels and the open panes (tiles come and go with them; closing a tile's tab closes the
//! file, hides the panel or closes the pane), and which file pane has the focus
//! (`WalscopeApp::active`). A pane of the map is asked through the [`crate::panes::Pane`]
//! trait for its title, placement, closability and drawing. File panes are keyed by path, so a
//! file reopened after a save or a "Read as" keeps its place.
//! Must never: own a pane's state (files are `FileTab`s, the rest `Panes`), or read files or the
//! network.

mod draw;
use crate::WalscopeApp;
use crate::panes::{PaneId as Pane, Placement};
use eframe::egui;
use egui_tiles::{Container, Tile, TileId, Tiles, Tree};
use std::path::PathBuf;

pub struct Layout {
    pub tree: Tree<Pane>,
    /// The file whose pane was last made active (to notice when `active` changes elsewhere).
    focused: Option<PathBuf>,
    /// A pane to show in front on the next frame (a new composer).
    bring_forward: Option<Pane>,
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

    /// Adds `pane` where its kind goes (see [`Placement`]).
    fn add(&mut self, pane: Pane, placement: Placement, tools: &[Pane]) {
        let tiles = &mut self.tree.tiles;
        let is_file_or_start = |t: &Tile<Pane>| matches!(t, Tile::Pane(Pane::File(_) | Pane::Start));
        if placement == Placement::Tools {
            // Beside the other tools, else as a tab beside the files.
            let sibling = tiles
                .iter()
                .find(|(_, t)| matches!(t, Tile::Pane(p) if tools.contains(p)))
                .or_else(|| tiles.iter().find(|(_, t)| is_file_or_start(t)))
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
        if placement == Placement::Files {
            // Beside the focused file, else beside any file or the start page.
            let focused = self.focused.clone().and_then(|p| tiles.find_pane(&Pane::File(p)));
            let sibling =
                focused.or_else(|| tiles.iter().find(|(_, t)| is_file_or_start(t)).map(|(id, _)| *id));
            if add_as_tab_beside(tiles, sibling, new) {
                return;
            }
            let tabs = tiles.insert_tab_tile(vec![new]);
            self.tree.root = Some(tiles.insert_horizontal_tile(vec![root, tabs]));
            return;
        }
        // Left (schemas) in a column, Below (dashboards) in a row, as the old fixed panels were.
        let left = placement == Placement::Left;
        let tabs = tiles.insert_tab_tile(vec![new]);
        let (children, share) = if left { (vec![tabs, root], 0.3) } else { (vec![root, tabs], 0.45) };
        let split =
            if left { tiles.insert_horizontal_tile(children) } else { tiles.insert_vertical_tile(children) };
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

    /// Brings the tiles in step with the app's files and the panes it has open (`open`: each
    /// with its placement, in the order to add them), and shows the active file.
    fn sync(
        &mut self,
        files: &[PathBuf],
        opening: &[PathBuf],
        active: Option<&PathBuf>,
        open: &[(Pane, Placement)],
    ) {
        let kept_file = |p: &PathBuf| files.contains(p) || opening.contains(p);
        for p in self.panes() {
            let keep = match &p {
                Pane::File(path) => kept_file(path),
                Pane::Start => true,
                other => open.iter().any(|(o, _)| o == other),
            };
            if keep {
                continue;
            }
            // The last file gives its tile to the start page: removing it would let egui_tiles
            // fold its container away and the start page be added elsewhere, moving the other
            // panes (the Sync tasks pane went from the bottom to the left).
            let last_file = matches!(&p, Pane::File(_))
                && !self.has(&Pane::Start)
                && !self.panes().iter().any(|o| matches!(o, Pane::File(f) if kept_file(f)));
            match self.tree.tiles.find_pane(&p) {
                Some(id) if last_file => self.tree.tiles.insert(id, Tile::Pane(Pane::Start)),
                _ => self.remove(&p),
            }
        }
        let tools: Vec<Pane> =
            open.iter().filter(|(_, at)| *at == Placement::Tools).map(|(p, _)| p.clone()).collect();
        for f in files {
            if !self.has(&Pane::File(f.clone())) {
                self.add(Pane::File(f.clone()), Placement::Files, &tools);
            }
        }
        let any_file = self.panes().iter().any(|p| matches!(p, Pane::File(_)));
        if any_file {
            self.remove(&Pane::Start);
        } else if !self.has(&Pane::Start) {
            self.add(Pane::Start, Placement::Files, &tools);
        }
        for (p, at) in open {
            if !self.has(p) {
                self.add(p.clone(), *at, &tools);
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
}

impl egui_tiles::Behavior<Pane> for Shell<'_> {
    fn pane_ui(&mut self, ui: &mut egui::Ui, _id: TileId, pane: &mut Pane) -> egui_tiles::UiResponse {
        draw::draw(self, ui, pane);
        egui_tiles::UiResponse::None
    }

    fn tab_title_for_pane(&mut self, pane: &Pane) -> egui::WidgetText {
        match pane {
            Pane::Start => "Start".into(),
            Pane::File(path) => {
                let name = path
                    .file_name()
                    .map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
                let dirty = self.app.tabs.iter().any(|t| t.path == *path && t.session.is_dirty());
                if dirty { format!("{name} (edited)").into() } else { name.into() }
            }
            other => {
                let profiles = self.app.connections.profiles();
                let view = self.app.view(&profiles);
                self.app.pane(other).map_or_else(String::new, |p| p.title(&view)).into()
            }
        }
    }

    fn is_tab_closable(&self, tiles: &Tiles<Pane>, id: TileId) -> bool {
        match tiles.get(id) {
            Some(Tile::Pane(Pane::Start)) | None | Some(Tile::Container(_)) => false,
            Some(Tile::Pane(Pane::File(_))) => true,
            Some(Tile::Pane(other)) => self.app.pane(other).is_none_or(|p| p.closable()),
        }
    }

    fn on_tab_close(&mut self, tiles: &mut Tiles<Pane>, id: TileId) -> bool {
        let Some(Tile::Pane(p)) = tiles.get(id) else { return true };
        self.closed.push(p.clone());
        // A file's tile goes when the app closes the file (`Layout::sync`): a file with unsaved
        // edits keeps it until the operator says to discard them, and the last file hands it
        // to the start page so no other pane moves.
        !matches!(p, Pane::File(_))
    }

    fn on_tab_button(&mut self, tiles: &mut Tiles<Pane>, id: TileId, r: egui::Response) -> egui::Response {
        if let Some(Tile::Pane(Pane::File(p))) = tiles.get(id) {
            if r.clicked() || r.drag_started() {
                self.focus = Some(p.clone());
            }
            // A file's tab: compare the whole dump with another.
            r.context_menu(|ui| {
                if ui.button("Compare with…").clicked() {
                    let from = crate::panes::diff::CompareFrom::File(p.clone());
                    self.app.send(crate::panes::command::AppCommand::CompareWith(from));
                    ui.close();
                }
            });
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

/// The panes to show besides the files and the start page, each with its placement: the View
/// menu's panels, then every open pane of the map in the order opened.
fn wanted(app: &WalscopeApp) -> Vec<(Pane, Placement)> {
    let shown = [
        (Pane::Schemas, app.show_schemas),
        (Pane::Tasks, app.show_tasks),
        (Pane::Connections, app.show_connections),
    ];
    let app_panes = shown.into_iter().filter(|(_, on)| *on).map(|(id, _)| id);
    app_panes
        .chain(app.panes.ids())
        .map(|id| {
            let at = app.pane(&id).map_or(Placement::Tools, |p| p.placement());
            (id, at)
        })
        .collect()
}

/// Draws the layout into `ui` and applies what was done in it (closing, focusing, reopening).
pub fn show(app: &mut WalscopeApp, ui: &mut egui::Ui) {
    let files: Vec<PathBuf> = app.tabs.iter().map(|t| t.path.clone()).collect();
    let active = app.tabs.get(app.active).map(|t| t.path.clone());
    let open = wanted(app);
    app.layout.sync(&files, &app.opening, active.as_ref(), &open);
    let mut tree = std::mem::replace(&mut app.layout.tree, Tree::empty(egui::Id::unique(TREE_ID)));
    let mut shell = Shell { app, closed: Vec::new(), focus: None };
    tree.ui(&mut shell, ui);
    let Shell { app, closed, focus } = shell;
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
            Pane::Start => {}
            other => app.send(crate::panes::command::AppCommand::ClosePane(other)),
        }
    }
}
