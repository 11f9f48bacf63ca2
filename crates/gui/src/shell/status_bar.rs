//! The status bar: every running job of the registry (label, progress, a cancel), any insecure
//! connection in use, and the last result or error, each in its own colour.
//! Must never: start or stop work itself; it sends commands.

use crate::WalscopeApp;
use crate::panes::command::AppCommand;
use eframe::egui;

/// Width of each running job's progress, whatever its text says: the cancel buttons stay
/// where the pointer aimed while the figures beside them change every frame.
const JOB_WIDTH: f32 = 220.0;

pub fn show(app: &mut WalscopeApp, ui: &mut egui::Ui) {
    let mut cancel = Vec::new();
    ui.horizontal(|ui| {
        for job in app.jobs.running() {
            let p = job.progress();
            let text = if p.text.is_empty() { job.label.clone() } else { p.text.clone() };
            // The slot is narrow: the whole, with the job's name, on hover.
            let whole =
                if p.text.is_empty() { job.label.clone() } else { format!("{}: {}", job.label, p.text) };
            // The cancel comes first: its place depends only on the jobs before it, whose
            // slots have a fixed width.
            let stop = ui.add_enabled(!job.is_cancelled(), egui::Button::new("x").small());
            if stop.on_hover_text(format!("Cancel {}", job.label)).clicked() {
                cancel.push(job.id);
            }
            match p.fraction {
                Some(f) => {
                    ui.add(egui::ProgressBar::new(f.clamp(0.0, 1.0)).desired_width(JOB_WIDTH).text(text))
                        .on_hover_text(&whole);
                }
                None => {
                    let size = egui::vec2(JOB_WIDTH, ui.spacing().interact_size.y);
                    ui.allocate_ui_with_layout(
                        size,
                        egui::Layout::left_to_right(egui::Align::Center),
                        |ui| {
                            ui.set_width(JOB_WIDTH);
                            // A watch between its rounds (a poller waiting for its next poll)
                            // is not busy: a still mark, so an idle window stays idle.
                            if job.is_waiting() {
                                ui.label("⟳");
                            } else {
                                crate::widgets::look::busy(ui);
                            }
                            ui.add(egui::Label::new(text).truncate()).on_hover_text(&whole);
                        },
                    );
                }
            }
            ui.separator();
        }
        match &app.notice {
            Some(n) => {
                let colour = if n.is_error { ui.visuals().error_fg_color } else { ui.visuals().text_color() };
                let text = if n.is_error { format!("Error: {}", n.text) } else { n.text.clone() };
                // "dismiss" first, so a long message never pushes it past the window's edge;
                // the message shortened to the room left, whole on hover.
                if ui.small_button("dismiss").clicked() {
                    app.notice = None;
                }
                ui.add(egui::Label::new(egui::RichText::new(&text).color(colour)).truncate())
                    .on_hover_text(&text);
            }
            None if app.jobs.running().is_empty() => {
                ui.label("ready");
            }
            None => {}
        }
    });
    for id in cancel {
        app.send(AppCommand::CancelJob(id));
    }
}
