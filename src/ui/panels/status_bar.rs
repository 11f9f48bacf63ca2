//! Running work (indexing, filter scans, files opening) with cancel buttons, and the last error.

use crate::ui::WalscopeApp;
use eframe::egui;

pub fn show(app: &mut WalscopeApp, ui: &mut egui::Ui) {
    ui.horizontal(|ui| {
        for p in &app.opening {
            ui.spinner();
            ui.label(format!("opening {}", p.display()));
            ui.separator();
        }
        if let Some(tab) = app.tabs.get_mut(app.active) {
            let idx = tab.dump.index();
            if !idx.is_done() {
                let frac = idx.scanned_bytes() as f32 / tab.dump.len().max(1) as f32;
                ui.add(
                    egui::ProgressBar::new(frac)
                        .desired_width(160.0)
                        .text(format!("indexing {} frames", tab.dump.frame_count())),
                );
                if ui.small_button("x").on_hover_text("Cancel indexing").clicked() {
                    idx.cancel();
                }
                ui.separator();
            }
            if let Some(scan) = &tab.scan
                && !scan.is_done()
            {
                let frac = scan.scanned() as f32 / tab.dump.frame_count().max(1) as f32;
                ui.add(
                    egui::ProgressBar::new(frac)
                        .desired_width(160.0)
                        .text(format!("filtering: {} matches", scan.match_count())),
                );
                if ui.small_button("x").on_hover_text("Cancel filter").clicked() {
                    scan.cancel();
                }
                ui.separator();
            }
        }
        match &app.last_error {
            Some(e) => {
                ui.colored_label(ui.visuals().error_fg_color, format!("Error: {e}"));
                if ui.small_button("dismiss").clicked() {
                    app.last_error = None;
                }
            }
            None => {
                ui.label("ready");
            }
        }
    });
}
