//! The Jobs pane: every job of the window, the running ones with their progress and a cancel,
//! then the ones that ended (newest first) and how.
//!
//! Owns: nothing but the choice to show the ended jobs. Must never: stop or start a job itself
//! (it sends `CancelJob`), or keep a job's handle.

use super::command::{AppCommand, CommandSender};
use super::{AppView, Pane, Placement};
use eframe::egui;

/// The Jobs pane's state.
pub struct JobsPane {
    pub show_ended: bool,
}

impl Default for JobsPane {
    fn default() -> Self {
        JobsPane { show_ended: true }
    }
}

impl Pane for JobsPane {
    fn title(&self, view: &AppView<'_>) -> String {
        format!("Jobs ({})", view.jobs.len())
    }

    fn placement(&self) -> Placement {
        Placement::Below
    }

    fn draw(&mut self, ui: &mut egui::Ui, view: &AppView<'_>, tx: &CommandSender) {
        egui::ScrollArea::vertical().id_salt("jobs_pane").show(ui, |ui| {
            ui.heading("Jobs");
            if view.jobs.is_empty() {
                ui.weak("No job is running.");
            }
            egui::Grid::new("jobs_running").striped(true).show(ui, |ui| {
                for job in view.jobs {
                    let p = job.progress();
                    ui.label(&job.label);
                    match p.fraction {
                        Some(f) => {
                            ui.add(
                                egui::ProgressBar::new(f.clamp(0.0, 1.0)).desired_width(200.0).text(&p.text),
                            );
                        }
                        None => {
                            ui.horizontal(|ui| {
                                crate::widgets::look::busy(ui);
                                ui.label(&p.text);
                            });
                        }
                    }
                    let stop = ui.add_enabled(!job.is_cancelled(), egui::Button::new("Cancel"));
                    if stop.on_hover_text(format!("Cancel {}", job.label)).clicked() {
                        tx.send(AppCommand::CancelJob(job.id));
                    }
                    ui.end_row();
                }
            });
            ui.separator();
            ui.checkbox(
                &mut self.show_ended,
                format!(
                    "Show the {} that ended",
                    walscope_core::fmt::counted(view.ended.len() as u64, "job")
                ),
            );
            if self.show_ended {
                egui::Grid::new("jobs_ended").striped(true).show(ui, |ui| {
                    for job in view.ended.iter().rev() {
                        ui.label(&job.label);
                        match &job.how {
                            crate::panes::JobEnd::Failed(_) => {
                                ui.colored_label(ui.visuals().error_fg_color, job.how.to_string())
                            }
                            how => ui.label(how.to_string()),
                        };
                        ui.end_row();
                    }
                });
            }
        });
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}
