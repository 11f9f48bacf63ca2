//! The selected message: WAL reading, then Tree | Hex | Wire | JSON. Selecting a tree node
//! highlights its bytes; clicking a byte selects the field that holds it.

use crate::codec::tree::TypedNode;
use crate::ui::detail::{DetailView, FrameDetail};
use crate::ui::widgets::hex;
use eframe::egui;

/// Draws the detail; returns an edit the user asked for: (field path, new value). `copy` holds
/// the message's copyable forms (JSON, hex, base64, a command line).
pub fn show(
    d: &mut FrameDetail,
    ui: &mut egui::Ui,
    copy: &[(&'static str, String)],
) -> Option<(String, String)> {
    let mut action = None;
    ui.horizontal(|ui| {
        for (label, text) in copy {
            if ui.small_button(*label).clicked() {
                ui.ctx().copy_text(text.clone());
            }
        }
    });
    ui.strong(format!(
        "frame {} | {} | {} bytes at file offset {}",
        d.index,
        d.type_name,
        d.bytes.len(),
        d.file_offset
    ));
    if let Some(e) = &d.error {
        ui.colored_label(ui.visuals().error_fg_color, format!("Error: {e}"));
    }
    if !d.wal_lines.is_empty() {
        egui::Grid::new("wal").num_columns(2).show(ui, |ui| {
            for (k, v) in &d.wal_lines {
                ui.label(k);
                ui.label(v);
                ui.end_row();
            }
        });
    }
    ui.horizontal(|ui| {
        ui.selectable_value(&mut d.view, DetailView::Tree, "Tree");
        ui.selectable_value(&mut d.view, DetailView::Hex, "Hex");
        ui.selectable_value(&mut d.view, DetailView::Wire, "Wire");
        ui.selectable_value(&mut d.view, DetailView::Json, "JSON");
        if let Some(n) = &d.selected_node {
            ui.label(format!("selected: {n}"));
        }
    });
    if let (Some(node), Some(text)) = (d.selected_node.clone(), d.edit_text.as_mut()) {
        ui.horizontal(|ui| {
            let l = ui.label("New value:");
            let r = ui.add(egui::TextEdit::singleline(text).desired_width(320.0)).labelled_by(l.id);
            let enter = r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
            if ui.button("Apply edit").clicked() || enter {
                action = Some((node, text.clone()));
            }
        });
        if let Some(e) = &d.edit_error {
            ui.colored_label(ui.visuals().error_fg_color, format!("Not applied: {e}"));
        }
    }
    ui.separator();
    match d.view {
        DetailView::Tree | DetailView::Wire => {
            let nodes = if d.view == DetailView::Tree { d.all_nodes() } else { d.wire.clone() };
            let mut picked = None;
            egui::ScrollArea::vertical().id_salt("tree").show(ui, |ui| {
                tree(ui, &nodes, "", d.highlight.clone(), &mut picked);
            });
            if let Some((path, span, node)) = picked {
                // Fields inside the decoded payload live in a bytes field: not editable in place yet.
                let editable = d.view == DetailView::Tree
                    && node.known
                    && node.children.is_empty()
                    && !path.contains('#')
                    && !path.starts_with("payload (decoded)");
                d.edit_text = editable.then(|| prefill(&node, &d.bytes));
                d.edit_error = None;
                d.selected_node = Some(path);
                d.highlight = Some(span);
            }
        }
        DetailView::Hex => {
            if let Some(at) = hex::show(ui, &d.bytes, d.file_offset, d.highlight.clone())
                && let Some((path, span)) = d.node_at(at)
            {
                d.selected_node = Some(path);
                d.highlight = Some(span);
                d.edit_text = None;
            }
        }
        DetailView::Json => {
            egui::ScrollArea::both().id_salt("json").show(ui, |ui| {
                let mut text = d.json.as_str();
                ui.add(egui::TextEdit::multiline(&mut text).code_editor().desired_width(f32::INFINITY));
            });
        }
    }
    action
}

/// The current value as the edit box should start: strings quoted, enums by name, bytes as hex.
fn prefill(node: &TypedNode, bytes: &[u8]) -> String {
    let v = node.value.clone().unwrap_or_default();
    if node.type_name == "bytes" {
        let b = &bytes[node.value_span.start.min(bytes.len())..node.value_span.end.min(bytes.len())];
        return format!("hex:{}", b.iter().map(|x| format!("{x:02x}")).collect::<String>());
    }
    if node.type_name.starts_with("enum ") {
        return v.split(" (").next().unwrap_or(&v).to_string();
    }
    v
}

/// The node the user clicked: its label path, its bytes, and the node itself.
type Picked = Option<(String, crate::wire::Span, TypedNode)>;

fn tree(
    ui: &mut egui::Ui,
    nodes: &[TypedNode],
    path: &str,
    hl: Option<crate::wire::Span>,
    picked: &mut Picked,
) {
    for n in nodes {
        let p = if path.is_empty() { n.label.clone() } else { format!("{path}.{}", n.label) };
        let span = n.whole();
        let selected = hl.as_ref() == Some(&span);
        let unknown = if n.known { "" } else { " (unknown field)" };
        if n.children.is_empty() {
            let text = format!(
                "{}: {}   [{}{unknown}] @{}..{}",
                n.label,
                n.value.as_deref().unwrap_or(""),
                n.type_name,
                span.start,
                span.end
            );
            if ui.selectable_label(selected, egui::RichText::new(text).monospace()).clicked() {
                *picked = Some((p, span, n.clone()));
            }
        } else {
            let header = format!("{}   [{}{unknown}] @{}..{}", n.label, n.type_name, span.start, span.end);
            let r = egui::CollapsingHeader::new(egui::RichText::new(header).monospace())
                .id_salt(&p)
                .default_open(path.split('.').count() < 3)
                .show(ui, |ui| tree(ui, &n.children, &p, hl.clone(), picked));
            if r.header_response.clicked() {
                *picked = Some((p, span, n.clone()));
            }
        }
    }
}
