//! "Compare with…": the small window that chooses the other side of a comparison. It lists
//! what fits side A: for a message, the same frame as saved (when it has unsaved edits), a
//! frame of any open file (its number typed), earlier replies and history entries; for a dump,
//! the other open files. A file on disk is typed or chosen with the window's open dialog
//! ("Choose a file…"). Whatever is chosen opens a diff pane.
//!
//! Owns: [`ComparePicker`] (side A, the candidates found when it opened, what is typed). Must
//! never: read a file or diff (it sends `Compare`; the app resolves the choice and runs a job).

use super::sides::{CompareAsk, Pick, Side};
use crate::panes::command::{AppCommand, CommandSender};
use crate::widgets::look;
use eframe::egui;
use std::path::PathBuf;

/// One thing side A can be compared with.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// Its group's heading ("Earlier replies", "Open files").
    pub group: &'static str,
    pub label: String,
    pub pick: Pick,
}

/// An open file a frame number can be typed for.
#[derive(Debug, Clone, PartialEq)]
pub struct FrameChoice {
    pub path: PathBuf,
    pub name: String,
    pub frames: usize,
    /// The frame number typed (the file's selected frame at first).
    pub text: String,
}

/// The picker, while it is open.
#[derive(Debug, Clone, PartialEq)]
pub struct ComparePicker {
    pub a: Side,
    pub candidates: Vec<Candidate>,
    /// For a message: the open files, to pick one of their frames.
    pub frames: Vec<FrameChoice>,
    /// A file on disk, typed.
    pub path: String,
    /// Why the last choice was refused (a frame number that is no number).
    pub error: Option<String>,
}

impl ComparePicker {
    pub fn new(a: Side) -> ComparePicker {
        ComparePicker { a, candidates: Vec::new(), frames: Vec::new(), path: String::new(), error: None }
    }

    fn choose(&self, b: Pick, tx: &CommandSender) {
        tx.send(AppCommand::Compare(Box::new(CompareAsk { a: self.a.clone(), b })));
    }
}

/// Draws the picker when open; closes it (sets `None`) once something is chosen or it is
/// cancelled. `cwd`: what a relative path is relative to.
pub fn show(
    picker: &mut Option<ComparePicker>,
    ctx: &egui::Context,
    cwd: &std::path::Path,
    tx: &CommandSender,
) {
    let Some(p) = picker.as_mut() else { return };
    let mut done = false;
    let id = egui::Id::unique("compare_picker");
    let area = egui::Modal::default_area(id).anchor(egui::Align2::CENTER_TOP, egui::vec2(0.0, 60.0));
    let modal = egui::Modal::new(id).area(area).show(ctx, |ui| {
        ui.set_width(640.0);
        ui.heading("Compare with…");
        ui.label(format!("A: {}", p.a.label()));
        ui.weak("Choose B: what A is compared with. The comparison opens in a diff pane.");
        ui.separator();
        egui::ScrollArea::vertical().id_salt("compare_candidates").max_height(380.0).show(ui, |ui| {
            let mut group = "";
            for c in &p.candidates {
                if c.group != group {
                    group = c.group;
                    ui.strong(group);
                }
                if ui.button(format!("Compare with {}", c.label)).clicked() {
                    p.choose(c.pick.clone(), tx);
                    done = true;
                }
            }
            if !p.frames.is_empty() {
                ui.strong("A frame of an open file");
                for f in &mut p.frames {
                    ui.horizontal(|ui| {
                        let l = ui.label(format!(
                            "{} (frames 0 to {}): frame",
                            f.name,
                            f.frames.saturating_sub(1)
                        ));
                        let r = ui
                            .add(egui::TextEdit::singleline(&mut f.text).desired_width(80.0))
                            .labelled_by(l.id);
                        if r.changed() {
                            p.error = None;
                        }
                        let enter = r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
                        let name = format!("Compare with a frame of {}", f.name);
                        if look::named_button(ui, "Compare", &name).clicked() || enter {
                            match f.text.trim().parse::<usize>() {
                                Ok(index) => {
                                    let b = Pick::TabFrame { path: f.path.clone(), index };
                                    tx.send(AppCommand::Compare(Box::new(CompareAsk { a: p.a.clone(), b })));
                                    done = true;
                                }
                                Err(_) => {
                                    p.error = Some(format!("\"{}\" is not a frame number", f.text.trim()))
                                }
                            }
                        }
                    });
                }
            }
        });
        ui.separator();
        let what =
            if p.a.is_dump() { "A dump on disk" } else { "A message file on disk (its bytes, as A's type)" };
        ui.strong(what);
        ui.horizontal(|ui| {
            let l = ui.label("Path:");
            let r = ui
                .add(egui::TextEdit::singleline(&mut p.path).hint_text("/path/to/file").desired_width(380.0))
                .labelled_by(l.id);
            let enter = r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
            let typed = !p.path.trim().is_empty();
            let b = ui.add_enabled(typed, egui::Button::new("Compare with this file"));
            if (b.clicked() || enter) && typed {
                let path = crate::path_complete::resolve(&p.path, cwd);
                p.choose(Pick::Path(path), tx);
                done = true;
            }
            if ui.button("Choose a file…").on_hover_text("the window's open dialog").clicked() {
                tx.send(AppCommand::ChooseCompareFile(p.a.clone()));
                done = true;
            }
        });
        if let Some(e) = &p.error {
            ui.colored_label(look::Tone::Bad.color(ui), format!("{} {e}", look::Tone::Bad.icon()));
        }
        ui.separator();
        if look::secondary(ui, "Cancel").on_hover_text("Esc").clicked() {
            done = true;
        }
    });
    if done || modal.should_close() {
        *picker = None;
    }
}
