//! The window's own open dialog (Ctrl+O, File > Open…; issue #38: opening a file must work
//! where no desktop file dialog is): a path field whose folders and files are listed as it is
//! typed (folders first; a click or Enter on a folder goes into it, on a file opens it; Tab
//! completes, Up and Down choose), the recent files, the desktop's dialog when one may be
//! there, and why the last open failed, in the open job's words.
//!
//! Owns: [`OpenDialog`], what is typed and listed. Must never: read a folder or open a file
//! itself (it sends `CompletePath`, `OpenFromDialog` and `PickFile`; the app runs them as jobs),
//! show a listing for other text than what is typed (each asking has a generation; older
//! answers are dropped), or let a failure go unsaid.

use crate::panes::command::{AppCommand, CommandSender};
use crate::path_complete::{Candidate, Completions};
use crate::recent::RecentFiles;
use crate::widgets::look;
use eframe::egui;
use std::path::{Path, PathBuf};

/// The height of the folder's listing (its box keeps it whatever is listed).
const LIST_HEIGHT: f32 = 260.0;

/// The open dialog's state (hidden until [`OpenDialog::show_at`]).
#[derive(Default)]
pub struct OpenDialog {
    pub visible: bool,
    /// What is typed.
    pub text: String,
    /// What a relative path is relative to.
    cwd: PathBuf,
    /// The text the listing was last asked for.
    asked: Option<String>,
    /// Raised with each asking; an answer of another generation is stale.
    generation: u64,
    /// The listing of what is typed (None: asked, not answered yet).
    pub completions: Option<Completions>,
    /// The candidate Up and Down chose.
    selected: Option<usize>,
    /// Why the last open from here failed, in the open job's words.
    pub error: Option<String>,
    /// A plain word: nothing was chosen in the desktop's dialog.
    note: Option<String>,
    /// The file being opened from here (absolute): its result closes the dialog or says why not.
    pub waiting: Option<PathBuf>,
    /// The desktop's dialog is up.
    pub desktop_running: bool,
    /// Put the cursor at the end of the text on the next frame (the text was set, not typed).
    cursor_to_end: bool,
    /// Choosing the other side of a comparison with this ("Compare with…", "Choose a file…"):
    /// the chosen file is compared, not opened.
    pub compare_with: Option<crate::panes::diff::Side>,
}

/// What was done to a candidate.
enum Act {
    /// Go into a folder, or put a file's path in the field (Tab).
    Fill(PathBuf, bool),
    Open(PathBuf),
}

impl OpenDialog {
    /// Shows the dialog with `text` typed (a folder ends with `/`); relative paths are relative
    /// to `cwd`.
    pub fn show_at(&mut self, text: String, cwd: PathBuf) {
        *self = OpenDialog { generation: self.generation, ..Default::default() };
        self.visible = true;
        self.text = text;
        self.cwd = cwd;
        self.cursor_to_end = true;
    }

    pub fn close(&mut self) {
        self.visible = false;
        self.waiting = None;
        self.compare_with = None;
    }

    /// A listing came back: kept only when it is for the text typed now.
    pub fn take_completions(&mut self, generation: u64, completions: Completions) {
        if generation == self.generation {
            self.completions = Some(completions);
            self.selected = None;
        }
    }

    /// `path` opened: when it was opened from here, the dialog's work is done.
    pub fn opened(&mut self, path: &Path) {
        if self.waiting.as_deref() == Some(path) {
            self.close();
        }
    }

    /// Opening `path` failed: true when it was opened from here (the dialog says why).
    pub fn failed(&mut self, path: &Path, words: String) -> bool {
        if !self.visible || self.waiting.as_deref() != Some(path) {
            return false;
        }
        self.waiting = None;
        self.error = Some(words);
        true
    }

    /// The desktop's dialog ended: a file to open (the caller opens it), nothing chosen, or
    /// why it did not show.
    pub fn desktop_ended(&mut self, picked: &crate::desktop_dialog::Picked) {
        self.desktop_running = false;
        match picked {
            Ok(Some(_)) => {}
            Ok(None) => self.note = Some("No file was chosen in the desktop's dialog.".into()),
            Err(e) => self.error = Some(format!("{e}. Type the path above instead.")),
        }
    }

    /// Draws the dialog (when shown). `desktop`: a desktop dialog may be there.
    pub fn show(&mut self, ctx: &egui::Context, recent: &RecentFiles, desktop: bool, tx: &CommandSender) {
        if !self.visible {
            return;
        }
        if self.asked.as_deref() != Some(self.text.as_str()) {
            self.generation += 1;
            self.asked = Some(self.text.clone());
            self.completions = None;
            tx.send(AppCommand::CompletePath {
                text: self.text.clone(),
                cwd: self.cwd.clone(),
                generation: self.generation,
            });
        }
        let mut act = None;
        // Hung from the top, and the listing in a box of fixed height: nothing moves under the
        // pointer as the listing grows or shrinks (a centred dialog would move every row).
        let id = egui::Id::unique("open_dialog");
        let area = egui::Modal::default_area(id).anchor(egui::Align2::CENTER_TOP, egui::vec2(0.0, 60.0));
        // Comparing: the desktop's dialog would open the file, not compare it.
        let desktop = desktop && self.compare_with.is_none();
        let modal = egui::Modal::new(id).area(area).show(ctx, |ui| {
            ui.set_width(680.0);
            match &self.compare_with {
                Some(a) => ui.heading(format!("Choose the file to compare {} with", a.label())),
                None => ui.heading("Open a file"),
            };
            act = self.field(ui);
            let height = LIST_HEIGHT + ui.spacing().interact_size.y * 2.0;
            let width = ui.available_width();
            let listed = ui.allocate_ui(egui::vec2(width, height), |ui| {
                ui.set_min_size(egui::vec2(width, height));
                self.listing(ui)
            });
            if let Some(a) = listed.inner {
                act = Some(a);
            }
            // The buttons right under the listing's box: what is said below them never moves
            // them.
            if let Some(a) = self.buttons(ui, desktop, tx) {
                act = Some(a);
            }
            if let Some(e) = &self.error {
                ui.colored_label(look::Tone::Bad.color(ui), format!("{} {e}", look::Tone::Bad.icon()));
            }
            if let Some(n) = &self.note {
                ui.weak(n);
            }
            if let Some(a) = recent_files(ui, recent, tx) {
                act = Some(a);
            }
        });
        if act.is_some() {
            // The text or the listing changes after it was drawn: show it without waiting for input.
            ctx.request_repaint();
        }
        match act {
            Some(Act::Fill(path, is_dir)) => {
                let mut text = path.display().to_string();
                if is_dir && !text.ends_with(std::path::MAIN_SEPARATOR) {
                    text.push(std::path::MAIN_SEPARATOR);
                }
                self.text = text;
                self.cursor_to_end = true;
                self.error = None;
            }
            Some(Act::Open(path)) => {
                self.error = None;
                self.note = None;
                match self.compare_with.take() {
                    Some(a) => {
                        let b = crate::panes::diff::Pick::Path(path);
                        tx.send(AppCommand::Compare(Box::new(crate::panes::diff::CompareAsk { a, b })));
                        self.close();
                    }
                    None => tx.send(AppCommand::OpenFromDialog(path)),
                }
            }
            None => {}
        }
        if modal.should_close() && !self.desktop_running {
            self.close();
        }
    }

    /// The path field, with its keys: Tab completes, Up and Down choose, Enter opens.
    fn field(&mut self, ui: &mut egui::Ui) -> Option<Act> {
        let (up, down, tab, enter) = ui.input(|i| {
            use egui::Key;
            (
                i.key_pressed(Key::ArrowUp),
                i.key_pressed(Key::ArrowDown),
                i.key_pressed(Key::Tab),
                i.key_pressed(Key::Enter),
            )
        });
        let id = egui::Id::unique("open_dialog_path");
        let label = ui.label("Path (Tab completes, Up/Down choose, Enter opens):");
        let mut out = egui::TextEdit::singleline(&mut self.text)
            .id(id)
            .hint_text("/path/to/dump or ~/dumps/…")
            .desired_width(f32::INFINITY)
            // Tab completes here instead of moving on to the next widget.
            .lock_focus(true)
            .show(ui);
        let r = out.response.response.clone().labelled_by(label.id);
        if self.cursor_to_end {
            let end = egui::text::CCursor::new(self.text.chars().count());
            out.state.cursor.set_char_range(Some(egui::text::CCursorRange::one(end)));
            out.state.store(ui.ctx(), id);
            self.cursor_to_end = false;
        }
        // Typing always goes to the path, whatever was clicked last.
        if !r.has_focus() && !self.desktop_running {
            r.request_focus();
        }
        if r.changed() {
            self.error = None;
            self.note = None;
            self.selected = None;
        }
        let listed = self.completions.as_ref().map_or(&[][..], |c| c.candidates.as_slice());
        if down && !listed.is_empty() {
            self.selected = Some(self.selected.map_or(0, |s| (s + 1).min(listed.len() - 1)));
        }
        if up {
            self.selected = self.selected.and_then(|s| s.checked_sub(1));
        }
        let chosen = self.selected.and_then(|s| listed.get(s));
        if tab {
            return match (chosen, listed) {
                (Some(c), _) | (None, [c]) => Some(Act::Fill(c.path.clone(), c.is_dir)),
                (None, _) => self.complete_common(listed),
            };
        }
        if enter && self.waiting.is_none() {
            return match chosen {
                Some(c) if c.is_dir => Some(Act::Fill(c.path.clone(), true)),
                Some(c) => Some(Act::Open(c.path.clone())),
                None if self.text.trim().is_empty() => None,
                None => Some(Act::Open(crate::path_complete::resolve(&self.text, &self.cwd))),
            };
        }
        None
    }

    /// Tab with several candidates: what they all share is added to the text.
    fn complete_common(&self, listed: &[Candidate]) -> Option<Act> {
        let shared = crate::path_complete::common_start(listed);
        let folder = &self.completions.as_ref()?.folder;
        let typed = self.text.rsplit(std::path::MAIN_SEPARATOR).next().unwrap_or("");
        (shared.len() > typed.len()).then(|| Act::Fill(folder.join(shared), false))
    }

    /// The folders and files the text names, folders first.
    fn listing(&mut self, ui: &mut egui::Ui) -> Option<Act> {
        let Some(c) = &self.completions else {
            ui.horizontal(|ui| {
                look::busy(ui);
                ui.weak("listing…");
            });
            return None;
        };
        ui.weak(format!("In {}:", c.folder.display()));
        if let Some(e) = &c.error {
            ui.colored_label(look::Tone::Warn.color(ui), format!("{} {e}", look::Tone::Warn.icon()));
            return None;
        }
        if c.candidates.is_empty() {
            look::empty_state(
                ui,
                "Nothing here starts with what is typed.",
                "Type less of the name, or another folder.",
            );
            return None;
        }
        let mut act = None;
        egui::ScrollArea::vertical().id_salt("open_dialog_list").max_height(LIST_HEIGHT).show(ui, |ui| {
            for (i, cand) in c.candidates.iter().enumerate() {
                let name = if cand.is_dir { format!("{}/", cand.name) } else { cand.name.clone() };
                let r = ui.selectable_label(self.selected == Some(i), name);
                if self.selected == Some(i) {
                    r.scroll_to_me(None);
                }
                if r.clicked() {
                    act = Some(if cand.is_dir {
                        Act::Fill(cand.path.clone(), true)
                    } else {
                        Act::Open(cand.path.clone())
                    });
                }
            }
        });
        if c.more {
            ui.weak(format!("Only the first {} are listed: type more of the name.", c.candidates.len()));
        }
        act
    }

    fn buttons(&mut self, ui: &mut egui::Ui, desktop: bool, tx: &CommandSender) -> Option<Act> {
        let mut act = None;
        ui.horizontal(|ui| {
            let can_open = !self.text.trim().is_empty() && self.waiting.is_none();
            // Choosing the other side of a comparison: the file is compared, not opened.
            let word = if self.compare_with.is_some() { "Compare" } else { "Open" };
            let open = ui.add_enabled_ui(can_open, |ui| look::primary(ui, word)).inner;
            if open.clicked() {
                act = Some(Act::Open(crate::path_complete::resolve(&self.text, &self.cwd)));
            }
            if look::secondary(ui, "Cancel").on_hover_text("Esc").clicked() {
                self.close();
            }
            if desktop {
                let b = ui.add_enabled(!self.desktop_running, egui::Button::new("Desktop dialog…"));
                if b.on_hover_text("the desktop's own file dialog").clicked() {
                    self.desktop_running = true;
                    self.error = None;
                    self.note = None;
                    tx.send(AppCommand::PickFile);
                }
            }
            if let Some(p) = &self.waiting {
                look::busy(ui);
                ui.label(format!("opening {}", p.display()));
            } else if self.desktop_running {
                look::busy(ui);
                ui.label("waiting for the desktop's dialog");
            }
        });
        act
    }
}

/// The recent files, each a click away (greyed, with the reason, when gone).
fn recent_files(ui: &mut egui::Ui, recent: &RecentFiles, tx: &CommandSender) -> Option<Act> {
    if recent.paths().is_empty() {
        return None;
    }
    if recent.wants_check() {
        tx.send(AppCommand::RefreshRecent);
    }
    let mut act = None;
    ui.separator();
    ui.strong("Recent files");
    for p in recent.paths() {
        let missing = recent.missing(p);
        let r = ui.add_enabled(missing.is_none(), egui::Button::new(p.display().to_string()).frame(false));
        if let Some(why) = &missing {
            r.on_disabled_hover_text(format!("Cannot open: {why}"));
        } else if r.clicked() {
            act = Some(Act::Open(p.clone()));
        }
    }
    act
}
