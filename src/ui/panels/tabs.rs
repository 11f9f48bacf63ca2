//! The row of open files. Returns the tab to close, if its ✕ was clicked.

use crate::ui::WalscopeApp;
use eframe::egui;

pub fn show(app: &mut WalscopeApp, ui: &mut egui::Ui) -> Option<usize> {
    let mut close = None;
    ui.horizontal(|ui| {
        for i in 0..app.tabs.len() {
            let title = app.tabs[i].title();
            if ui.selectable_label(i == app.active, &title).clicked() {
                app.active = i;
            }
            if ui.small_button("x").on_hover_text(format!("Close {title}")).clicked() {
                close = Some(i);
            }
            ui.separator();
        }
    });
    close
}
