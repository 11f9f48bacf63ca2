//! What each tile draws: the start page and a file by hand; every other pane through the
//! [`crate::panes::Pane`] trait, with `&mut` its own state, a
//! read-only [`crate::panes::AppView`] and the app's command sender.
//!
//! Must never: do work for a pane (panes send commands), or hand one pane another's state.

use super::Shell;
use crate::panes::PaneId as Pane;
use eframe::egui;

/// Draws `pane` into `ui`.
pub(crate) fn draw(shell: &mut Shell<'_>, ui: &mut egui::Ui, pane: &mut Pane) {
    let rect = ui.max_rect();
    match pane {
        Pane::Start => {
            egui::ScrollArea::vertical().id_salt("start_pane").show(ui, |ui| {
                let app = &mut *shell.app;
                let types = app.schemas.symbols().len();
                crate::panes::start::show(&mut app.start_path, types, ui, &app.commands)
            });
        }
        Pane::File(path) => {
            let pressed = ui.input(|i| {
                i.pointer.any_pressed() && i.pointer.interact_pos().is_some_and(|p| rect.contains(p))
            });
            if pressed {
                shell.focus = Some(path.clone());
            }
            let active = shell.app.tabs.get(shell.app.active).is_some_and(|t| t.path == *path);
            let app = &mut *shell.app;
            match app.tabs.iter_mut().find(|t| t.path == *path) {
                Some(tab) => {
                    let (tx, width) = (&app.commands, &mut app.detail_width);
                    ui.push_id(path.as_path(), |ui| {
                        crate::panes::file::view::show(tab, ui, active, tx, width)
                    });
                }
                None => {
                    ui.horizontal(|ui| {
                        crate::widgets::look::busy(ui);
                        ui.label(format!("opening {}", path.display()));
                    });
                }
            }
        }
        // Every other kind draws itself through the trait.
        other => {
            let profiles = shell.app.connections.profiles();
            if let (view, Some(p), tx) = shell.app.view_and_pane(other, &profiles) {
                p.draw(ui, &view, tx);
            }
        }
    }
}
