//! The status bar: every running job of the registry (label, progress, a cancel), any insecure
//! connection in use, and the last result or error, each in its own colour.
//! Must never: start or stop work itself; it sends commands.

use crate::ui::WalscopeApp;
use crate::ui::command::AppCommand;
use eframe::egui;

pub fn show(app: &mut WalscopeApp, ui: &mut egui::Ui) {
    let mut cancel = Vec::new();
    ui.horizontal(|ui| {
        for job in app.jobs.running() {
            let p = job.progress();
            let text = if p.text.is_empty() { job.label.clone() } else { p.text.clone() };
            match p.fraction {
                Some(f) => {
                    ui.add(egui::ProgressBar::new(f.clamp(0.0, 1.0)).desired_width(160.0).text(text))
                        .on_hover_text(&job.label);
                }
                None => {
                    ui.spinner();
                    ui.label(text).on_hover_text(&job.label);
                }
            }
            let stop = ui.add_enabled(!job.is_cancelled(), egui::Button::new("x").small());
            if stop.on_hover_text(format!("Cancel {}", job.label)).clicked() {
                cancel.push(job.id);
            }
            ui.separator();
        }
        match &app.notice {
            Some(n) => {
                let colour = if n.is_error { ui.visuals().error_fg_color } else { ui.visuals().text_color() };
                let text = if n.is_error { format!("Error: {}", n.text) } else { n.text.clone() };
                ui.colored_label(colour, text);
                if ui.small_button("dismiss").clicked() {
                    app.notice = None;
                }
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
