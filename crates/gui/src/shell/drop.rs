//! Files dragged onto the window: a hint over everything while they hover, and the paths of
//! those dropped (each then opens like any other; a folder shows the open dialog inside it).
//!
//! Must never: read or open a dropped file itself (the app opens it as a job).

use eframe::egui;
use std::path::PathBuf;

/// The paths dropped on the window this frame.
pub fn dropped(ctx: &egui::Context) -> Vec<PathBuf> {
    ctx.input(|i| {
        i.raw
            .dropped_files
            .iter()
            .map(|f| f.path().to_path_buf())
            .filter(|p| !p.as_os_str().is_empty())
            .collect()
    })
}

/// While files hover over the window: the window dimmed, and what a drop will do.
pub fn hint(ctx: &egui::Context) {
    let hovered: Vec<String> = ctx.input(|i| {
        i.raw
            .hovered_files
            .iter()
            .map(|f| {
                f.path
                    .as_ref()
                    .and_then(|p| p.file_name())
                    .map_or(String::new(), |n| n.to_string_lossy().into_owned())
            })
            .collect()
    });
    if hovered.is_empty() {
        return;
    }
    let words = match hovered.as_slice() {
        [one] if !one.is_empty() => format!("Drop to open {one}"),
        [_] => "Drop to open this file".to_string(),
        many => format!("Drop to open these {} files", many.len()),
    };
    let screen = ctx.content_rect();
    let layer = egui::LayerId::new(egui::Order::Foreground, egui::Id::unique("drop_dim"));
    ctx.layer_painter(layer).rect_filled(screen, 0.0, egui::Color32::from_black_alpha(160));
    egui::Area::new(egui::Id::unique("drop_hint"))
        .order(egui::Order::Tooltip)
        .anchor(egui::Align2::CENTER_CENTER, egui::Vec2::ZERO)
        .interactable(false)
        .show(ctx, |ui| {
            egui::Frame::popup(ui.style()).inner_margin(16).show(ui, |ui| {
                ui.heading(words);
                ui.weak("each file opens in its own tab; a folder opens the open dialog inside it");
            });
        });
}
