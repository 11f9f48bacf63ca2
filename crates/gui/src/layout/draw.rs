//! What each pane draws: one arm per pane kind, each handing its panel its own state, a
//! read-only view and a command list (the shell applies the commands after the frame).
//!
//! Must never: do work for a panel (panels send commands), or reach one pane's state from another.

use super::{Pane, Shell};
use eframe::egui;

/// Draws `pane` into `ui`.
pub(crate) fn draw(shell: &mut Shell<'_>, ui: &mut egui::Ui, pane: &mut Pane) {
    let rect = ui.max_rect();
    match pane {
        Pane::Start => {
            egui::ScrollArea::vertical()
                .id_salt("start_pane")
                .show(ui, |ui| crate::panes::start::show(shell.app, ui));
        }
        Pane::Schemas => {
            egui::ScrollArea::vertical()
                .id_salt("schemas_panel")
                .show(ui, |ui| crate::panes::schemas::show(shell.app, ui));
        }
        Pane::Tasks | Pane::Dashboard(_) => {
            let id = match pane {
                Pane::Dashboard(id) => *id,
                _ => crate::panes::tasks::TASKS_DASHBOARD,
            };
            let profiles = shell.app.connections.profiles();
            let view = crate::panes::tasks::DashboardView { profiles: &profiles };
            let mut out = Vec::new();
            if let Some(d) = shell.app.dashboard_mut(id) {
                egui::ScrollArea::vertical().id_salt(("tasks_panel", id)).show(ui, |ui| {
                    ui.push_id(("tasks", id), |ui| crate::panes::tasks::show(d, &view, ui, &mut out))
                });
            }
            shell.app.commands.extend(out);
        }
        Pane::Connections => {
            let mut out = Vec::new();
            let store = shell.app.profile_store().path().to_path_buf();
            egui::ScrollArea::vertical().id_salt("connections_panel").show(ui, |ui| {
                crate::panes::connections::show(&mut shell.app.connections, &store, ui, &mut out)
            });
            shell.app.commands.extend(out);
        }
        Pane::Salvage(id) => {
            let id = *id;
            let profiles = shell.app.connections.profiles();
            let mut out = Vec::new();
            if let Some(s) = shell.app.salvages.iter_mut().find(|s| s.id == id) {
                egui::ScrollArea::vertical().id_salt(("salvage", id)).show(ui, |ui| {
                    ui.push_id(("salvage", id), |ui| {
                        crate::panes::salvage::view::show(s, &profiles, ui, &mut out)
                    })
                });
            }
            shell.app.commands.extend(out);
        }
        Pane::Replay(id) => {
            let id = *id;
            let profiles = shell.app.connections.profiles();
            let mut out = Vec::new();
            if let Some(r) = shell.app.replays.iter_mut().find(|r| r.id == id) {
                egui::ScrollArea::vertical().id_salt(("replay", id)).show(ui, |ui| {
                    ui.push_id(("replay", id), |ui| {
                        crate::panes::replay::view::show(r, &profiles, ui, &mut out)
                    })
                });
            }
            shell.app.commands.extend(out);
        }
        Pane::Composer(id) => {
            let id = *id;
            let pressed = ui.input(|i| {
                i.pointer.any_pressed() && i.pointer.interact_pos().is_some_and(|p| rect.contains(p))
            });
            if pressed {
                shell.app.focused_composer = Some(id);
            }
            let profiles = shell.app.connections.profiles();
            let view = crate::panes::composer::view::ComposerView {
                pool: shell.app.schemas.pool(),
                profiles: &profiles,
                focused: shell.app.focused_composer == Some(id),
            };
            let mut out = Vec::new();
            if let Some(c) = shell.app.composers.iter_mut().find(|c| c.id == id) {
                egui::ScrollArea::vertical().id_salt(("composer", id)).show(ui, |ui| {
                    ui.push_id(("composer", id), |ui| {
                        crate::panes::composer::view::show(c, &view, ui, &mut out)
                    })
                });
            }
            shell.app.commands.extend(out);
        }
        Pane::File(path) => {
            let pressed = ui.input(|i| {
                i.pointer.any_pressed() && i.pointer.interact_pos().is_some_and(|p| rect.contains(p))
            });
            if pressed {
                shell.focus = Some(path.clone());
            }
            let active = shell.app.tabs.get(shell.app.active).is_some_and(|t| t.path == *path);
            match shell.app.tabs.iter_mut().find(|t| t.path == *path) {
                Some(tab) => {
                    let out = ui
                        .push_id(path.as_path(), |ui| crate::panes::file::view::show(tab, ui, active))
                        .inner;
                    if let Some(read_as) = out.reopen {
                        shell.reopen.push((path.clone(), read_as));
                    }
                    if let Some((type_name, bytes)) = out.send {
                        shell
                            .app
                            .commands
                            .push(crate::panes::command::AppCommand::SendMessage { type_name, bytes });
                    }
                }
                None => {
                    ui.horizontal(|ui| {
                        ui.spinner();
                        ui.label(format!("opening {}", path.display()));
                    });
                }
            }
        }
    }
}
