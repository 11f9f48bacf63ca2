//! Two messages compared: the list of changes (each with its kind as an icon and a word, its
//! path, old → new), then both sides' typed trees and hex views side by side, in step: picking
//! a change selects its path in both trees and highlights its byte ranges in both hex views
//! (scrolled to them); picking a node (or a byte) on one side picks the same path on the other.
//!
//! Owns: [`MessageCompare`] (both sides decoded, the changes, what is picked). Must never:
//! decode or diff (the job did, see `work/diff.rs`), or edit a side (a diff is read-only).

use crate::panes::file::detail::MessageDetail;
use crate::panes::file::detail_view::{TreeMarks, tree_nodes};
use crate::widgets::look::Tone;
use crate::wire::Span;
use eframe::egui;

/// What a change did to its path (the library's kinds, drawn here with an icon and a word).
pub use walscope_core::diff::ChangeKind;

/// A kind's icon and word (never the colour alone).
fn words(kind: ChangeKind) -> &'static str {
    match kind {
        ChangeKind::Added => "+ added",
        ChangeKind::Removed => "- removed",
        ChangeKind::Changed => "~ changed",
        ChangeKind::Moved => "⟳ moved",
    }
}

/// A kind's icon alone (marked in the trees).
fn icon(kind: ChangeKind) -> &'static str {
    match kind {
        ChangeKind::Added => "+",
        ChangeKind::Removed => "-",
        ChangeKind::Changed => "~",
        ChangeKind::Moved => "⟳",
    }
}

fn tone(kind: ChangeKind) -> Tone {
    match kind {
        ChangeKind::Added => Tone::Good,
        ChangeKind::Removed => Tone::Bad,
        ChangeKind::Changed => Tone::Warn,
        ChangeKind::Moved => Tone::Info,
    }
}

/// One difference, as the list shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ChangeRow {
    /// The field path (`payload.fields_data[2].scalars.long_data.data[17]`).
    pub path: String,
    pub kind: ChangeKind,
    /// The value in A and in B, in words (None: not on that side).
    pub old: Option<String>,
    pub new: Option<String>,
    pub type_name: String,
    /// Its bytes in A and in B (None: not on that side).
    pub a_span: Option<Span>,
    pub b_span: Option<Span>,
    /// Where the trees show it: `path`, except inside a WAL payload decoded in place, whose
    /// node is labelled `message.payload (decoded as InsertRequest)`. Set by
    /// [`MessageCompare::new`].
    pub tree_path: String,
}

/// Two messages of one type, decoded, and their differences.
pub struct MessageCompare {
    pub a: MessageDetail,
    pub b: MessageDetail,
    pub changes: Vec<ChangeRow>,
    /// The change picked in the list.
    pub picked: Option<usize>,
    /// The path selected in both trees.
    pub selected: Option<String>,
    /// A path to open and scroll to in both trees on the next frame (once).
    reveal: Option<String>,
    /// Each changed path's icon, marked in both trees.
    marks: std::collections::HashMap<String, &'static str>,
}

impl MessageCompare {
    pub fn new(a: MessageDetail, b: MessageDetail, mut changes: Vec<ChangeRow>) -> MessageCompare {
        for c in &mut changes {
            c.tree_path = tree_path(&a, &c.path);
        }
        let marks = changes.iter().map(|c| (c.tree_path.clone(), icon(c.kind))).collect();
        MessageCompare { a, b, changes, picked: None, selected: None, reveal: None, marks }
    }

    /// Picks change `i`: its path in both trees, its byte ranges in both hex views.
    pub fn pick_change(&mut self, i: usize) {
        let Some(c) = self.changes.get(i) else { return };
        self.picked = Some(i);
        self.selected = Some(c.tree_path.clone());
        self.reveal = Some(c.tree_path.clone());
        self.a.highlight = c.a_span.clone().or_else(|| nearest(&self.a, &c.tree_path));
        self.b.highlight = c.b_span.clone().or_else(|| nearest(&self.b, &c.tree_path));
        self.a.selected_node = Some(c.tree_path.clone());
        self.b.selected_node = Some(c.tree_path.clone());
    }

    /// Picks the node at `path` on both sides (a click in one tree or hex view): the change at
    /// that path when there is one, else that node's bytes on each side that has it.
    pub fn pick_path(&mut self, path: &str) {
        if let Some(i) = self.changes.iter().position(|c| c.tree_path == path) {
            self.pick_change(i);
            return;
        }
        self.picked = None;
        self.selected = Some(path.to_string());
        self.reveal = Some(path.to_string());
        for d in [&mut self.a, &mut self.b] {
            d.highlight = d.span_of(path);
            d.selected_node = Some(path.to_string());
        }
    }

    /// The change picked, if any.
    pub fn picked_change(&self) -> Option<&ChangeRow> {
        self.picked.and_then(|i| self.changes.get(i))
    }
}

/// The tree's path for a diff path: a path inside a WAL payload decoded in place goes under its
/// decoded node (both sides decode it as the same type, or the diff compares it as bytes).
fn tree_path(d: &MessageDetail, path: &str) -> String {
    for e in &d.embedded {
        if let Some(rest) = path.strip_prefix(e.field_path.as_str()).and_then(|r| r.strip_prefix('.')) {
            return format!("{}.{rest}", e.root.label);
        }
    }
    path.to_string()
}

/// The bytes of `path` on side `d`, or of its nearest enclosing node there (an element added in
/// B is shown in A by the list it would be in).
fn nearest(d: &MessageDetail, path: &str) -> Option<Span> {
    let mut p = path;
    loop {
        if let Some(s) = d.span_of(p) {
            return Some(s);
        }
        let cut = p.rfind(['.', '['])?;
        p = &p[..cut];
    }
}

/// The width a hex view's rows need (offset, 16 bytes, their characters).
const HEX_WIDTH: f32 = 540.0;

/// Draws the comparison.
pub fn show(m: &mut MessageCompare, ui: &mut egui::Ui) {
    let n = m.changes.len() as u64;
    ui.horizontal_wrapped(|ui| {
        if n == 0 {
            crate::widgets::look::badge(ui, Tone::Info, "identical");
            ui.label(format!("{} | no difference", m.a.type_name));
        } else {
            crate::widgets::look::badge(ui, Tone::Warn, "different");
            ui.label(format!(
                "{} | {} | A {} | B {}",
                m.a.type_name,
                walscope_core::fmt::counted(n, "change"),
                walscope_core::fmt::bytes_exact(m.a.bytes.len() as u64),
                walscope_core::fmt::bytes_exact(m.b.bytes.len() as u64)
            ));
        }
    });
    let list_h = if n == 0 { 0.0 } else { (ui.available_height() * 0.3).clamp(80.0, 240.0) };
    if n > 0 {
        let mut picked = change_list(m, ui, list_h);
        // Up and Down walk the changes while the pointer is over the pane (a file beside it
        // keeps its own arrows).
        let over = ui.ui_contains_pointer() || ui.rect_contains_pointer(ui.max_rect());
        if picked.is_none() && over && !ui.ctx().egui_wants_keyboard_input() {
            let (up, down) =
                ui.input(|i| (i.key_pressed(egui::Key::ArrowUp), i.key_pressed(egui::Key::ArrowDown)));
            picked = match (m.picked, up, down) {
                (None, _, true) => Some(0),
                (Some(i), _, true) => Some((i + 1).min(m.changes.len() - 1)),
                (Some(i), true, _) => Some(i.saturating_sub(1)),
                _ => None,
            };
        }
        if let Some(i) = picked {
            m.pick_change(i);
        }
    }
    ui.separator();
    let reveal = m.reveal.take();
    let mut picked_path = None;
    // Two halves of exactly the room there is, each clipped to itself: a wide tree or hex row
    // scrolls inside its side and never draws over the other.
    let full = ui.available_rect_before_wrap();
    let gap = ui.spacing().item_spacing.x * 2.0;
    let half = ((full.width() - gap) / 2.0).max(0.0);
    for (k, (side, d)) in [("A", &mut m.a), ("B", &mut m.b)].into_iter().enumerate() {
        let min = full.min + egui::vec2(k as f32 * (half + gap), 0.0);
        let rect = egui::Rect::from_min_size(min, egui::vec2(half, full.height()));
        let mut child = ui.new_child(egui::UiBuilder::new().max_rect(rect).id_salt(side));
        child.set_clip_rect(rect.intersect(ui.clip_rect()));
        let marks =
            TreeMarks { selected: m.selected.as_deref(), reveal: reveal.as_deref(), changed: Some(&m.marks) };
        if let Some(p) = side_view(&mut child, side, d, marks) {
            picked_path = Some(p);
        }
    }
    let x = full.min.x + half + gap / 2.0;
    ui.painter().vline(x, full.y_range(), ui.visuals().widgets.noninteractive.bg_stroke);
    ui.allocate_rect(full, egui::Sense::hover());
    if let Some(p) = picked_path {
        m.pick_path(&p);
    }
}

/// The changes, one row each (only the rows on screen are laid out). Returns the row clicked.
fn change_list(m: &MessageCompare, ui: &mut egui::Ui, height: f32) -> Option<usize> {
    use egui_extras::{Column, TableBuilder};
    let mut clicked = None;
    ui.push_id("changes", |ui| {
        ui.style_mut().interaction.selectable_labels = false;
        ui.style_mut().wrap_mode = Some(egui::TextWrapMode::Truncate);
        let width = ui.available_width();
        TableBuilder::new(ui)
            .striped(true)
            .sense(egui::Sense::click())
            .min_scrolled_height(height)
            .max_scroll_height(height)
            .column(Column::exact(96.0))
            .column(Column::exact((width * 0.42).max(200.0)))
            .column(Column::remainder().at_least(160.0).clip(true))
            .header(20.0, |mut h| {
                for name in ["change", "path", "value in A ⏵ in B"] {
                    h.col(|ui| {
                        ui.strong(name);
                    });
                }
            })
            .body(|body| {
                body.rows(18.0, m.changes.len(), |mut row| {
                    let i = row.index();
                    let c = &m.changes[i];
                    row.set_selected(m.picked == Some(i));
                    row.col(|ui| {
                        ui.colored_label(tone(c.kind).color(ui), words(c.kind));
                    });
                    row.col(|ui| {
                        ui.monospace(&c.path).on_hover_text(format!("{} ({})", c.path, c.type_name));
                    });
                    let values = values_words(c);
                    row.col(|ui| {
                        ui.monospace(&values).on_hover_text(&values);
                    });
                    if row.response().clicked() {
                        clicked = Some(i);
                    }
                });
            });
    });
    clicked
}

/// `old → new`, or the one value there is.
fn values_words(c: &ChangeRow) -> String {
    match (&c.old, &c.new) {
        (Some(o), Some(n)) => format!("{o} → {n}"),
        (Some(o), None) => format!("{o} (only in A)"),
        (None, Some(n)) => format!("{n} (only in B)"),
        (None, None) => String::new(),
    }
}

/// One side: its heading, its tree, its hex view. Returns the path of a node picked there (a
/// tree node, or the node holding a clicked byte).
fn side_view(ui: &mut egui::Ui, side: &str, d: &mut MessageDetail, marks: TreeMarks<'_>) -> Option<String> {
    let height = ui.available_height();
    ui.horizontal(|ui| {
        ui.strong(side);
        ui.label(format!("{} | {}", d.type_name, walscope_core::fmt::bytes_exact(d.bytes.len() as u64)));
    });
    if let Some(e) = &d.error {
        ui.colored_label(Tone::Bad.color(ui), format!("{} {e}", Tone::Bad.icon()));
    }
    let tree_h = ((height - 40.0) * 0.55).max(80.0);
    let picked = egui::ScrollArea::both()
        .id_salt("tree")
        .max_height(tree_h)
        .auto_shrink([false, false])
        .show(ui, |ui| tree_nodes(ui, d, false, marks))
        .inner
        .map(|(p, _)| p);
    ui.separator();
    // The hex rows are wider than a narrow side: they scroll sideways.
    let size = egui::vec2(HEX_WIDTH.max(ui.available_width()), ui.available_height().max(60.0));
    let at = egui::ScrollArea::horizontal()
        .id_salt("hex_sideways")
        .show(ui, |ui| {
            ui.allocate_ui(size, |ui| {
                crate::widgets::hex::show(ui, &d.bytes, d.file_offset, d.highlight.clone())
            })
            .inner
        })
        .inner;
    let from_hex = at.and_then(|at| d.node_at(at)).map(|(p, _)| p);
    picked.or(from_hex)
}
