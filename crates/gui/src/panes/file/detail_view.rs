//! The selected message: WAL reading, then Tree | Hex | Wire | JSON. Selecting a tree node
//! highlights its bytes; clicking a byte selects the field that holds it.

use crate::codec::tree::TypedNode;
use crate::panes::file::detail::{DetailView, MessageDetail};
use crate::panes::file::field_edit::EditRequest;
use crate::panes::file::field_editor;
use crate::widgets::hex;
use eframe::egui;
use prost_reflect::MessageDescriptor;

/// Draws the detail; returns what the operator asked the editor to do. `file` and `framing`
/// name where the message is (for the copied command line); `root` is its type.
pub fn show(
    d: &mut MessageDetail,
    ui: &mut egui::Ui,
    (file, framing): (&std::path::Path, &str),
    root: Option<&MessageDescriptor>,
) -> Option<EditRequest> {
    let mut action = None;
    ui.horizontal(|ui| {
        for label in MessageDetail::COPY_LABELS {
            // The forms are built on the click only: hex and base64 of a big message cost.
            if ui.small_button(label).clicked()
                && let Some((_, text)) = d.copy_forms(file, framing).into_iter().find(|(l, _)| *l == label)
            {
                ui.ctx().copy_text(text);
            }
        }
    });
    ui.strong(d.heading());
    if let Some(e) = &d.error {
        ui.colored_label(ui.visuals().error_fg_color, format!("Error: {e}"));
    }
    if !d.wal_lines.is_empty() {
        egui::Grid::new("wal").num_columns(2).show(ui, |ui| {
            for (k, v) in &d.wal_lines {
                ui.label(k);
                // One line each (a header's JSON can be long): the whole text on hover.
                ui.add(egui::Label::new(v).truncate()).on_hover_text(v);
                ui.end_row();
            }
        });
    }
    if let Some(g) = &d.chunk_group {
        crate::panes::file::chunk_group::show(ui, g);
    }
    ui.horizontal(|ui| {
        crate::widgets::look::segmented(
            ui,
            &mut d.view,
            &[
                (DetailView::Tree, "Tree"),
                (DetailView::Hex, "Hex"),
                (DetailView::Wire, "Wire"),
                (DetailView::Json, "JSON"),
            ],
        );
        if let Some(n) = &d.selected_node {
            ui.label(format!("selected: {n}"));
        }
    });
    ui.separator();
    // The field editor goes below the tree (or the hex) in the room kept for it while a node is
    // selected: selecting a node must not move the tree under the pointer.
    let room = if d.view != DetailView::Json && d.selected_node.is_some() {
        (ui.available_height() * 0.45).max(120.0).min(ui.available_height())
    } else {
        0.0
    };
    let above = (ui.available_height() - room).max(0.0);
    match d.view {
        DetailView::Tree | DetailView::Wire => {
            let wire = d.view == DetailView::Wire;
            let picked = egui::ScrollArea::vertical()
                .id_salt("tree")
                .max_height(above)
                .show(ui, |ui| tree_nodes(ui, d, wire, TreeMarks::default()))
                .inner;
            if let Some((path, span)) = picked {
                if d.view == DetailView::Tree {
                    d.select_node(&path, root);
                } else {
                    // Wire nodes have no schema: show their bytes, nothing to edit.
                    d.selected_node = Some(path);
                    d.highlight = Some(span);
                    d.editor = Default::default();
                    d.edit_text = None;
                }
            }
        }
        DetailView::Hex => {
            let size = egui::vec2(ui.available_width(), above);
            let at =
                ui.allocate_ui(size, |ui| hex::show(ui, &d.bytes, d.file_offset, d.highlight.clone())).inner;
            if let Some(at) = at
                && let Some((path, _)) = d.node_at(at)
            {
                d.select_node(&path, root);
            }
        }
        DetailView::Json => return json_view(d, ui),
    }
    if room > 0.0 {
        egui::ScrollArea::vertical()
            .id_salt("field_editor")
            .show(ui, |ui| action = field_editor::show(d, ui));
    }
    action
}

/// The message as JSON; "Edit JSON" makes it editable, and applying rewrites only the fields
/// whose values changed.
fn json_view(d: &mut MessageDetail, ui: &mut egui::Ui) -> Option<EditRequest> {
    let mut action = None;
    if d.wal_json.is_some() && d.json_edit.is_none() {
        ui.horizontal(|ui| {
            crate::widgets::look::segmented(
                ui,
                &mut d.json_reading,
                &[(true, "WAL reading: header and body decoded"), (false, "Message as stored")],
            );
            ui.weak("(its raw bytes: the Hex tab)");
        });
    }
    if d.json_reading
        && d.json_edit.is_none()
        && let Some(reading) = &d.wal_json
    {
        egui::ScrollArea::both().id_salt("wal-json").show(ui, |ui| {
            let mut text = reading.as_str();
            ui.add(egui::TextEdit::multiline(&mut text).code_editor().desired_width(f32::INFINITY));
        });
        return None;
    }
    ui.horizontal(|ui| match &d.json_edit {
        None if d.json.len() > MAX_JSON_CHARS => {
            ui.label(format!(
                "{} KiB of JSON: the first {} KiB are shown and it is too large to edit here; use Copy JSON, or `walscope decode --format json` and `walscope edit`",
                d.json.len() >> 10,
                MAX_JSON_CHARS >> 10
            ));
        }
        None => {
            if ui.button("Edit JSON").clicked() {
                d.json_edit = Some(d.json.clone());
                d.edit_error = None;
            }
        }
        Some(text) => {
            if ui.button("Apply JSON").clicked() {
                action = Some(EditRequest::Json { node: None, json: text.clone() });
            }
            if ui.button("Discard JSON edits").clicked() {
                d.json_edit = None;
                d.edit_error = None;
            }
            ui.label("Only fields whose values change are rewritten; unknown fields keep their bytes.");
        }
    });
    if let Some(e) = &d.edit_error {
        ui.colored_label(ui.visuals().error_fg_color, format!("Not applied: {e}"));
    }
    egui::ScrollArea::both().id_salt("json").show(ui, |ui| match d.json_edit.as_mut() {
        Some(text) => {
            ui.add(egui::TextEdit::multiline(text).code_editor().desired_width(f32::INFINITY));
        }
        None => {
            // Laid out every frame: a huge message shows its head here (the CLI prints it all).
            let mut text = match d.json.char_indices().nth(MAX_JSON_CHARS) {
                Some((cut, _)) => &d.json[..cut],
                None => d.json.as_str(),
            };
            ui.add(egui::TextEdit::multiline(&mut text).code_editor().desired_width(f32::INFINITY));
        }
    });
    action
}

/// What a tree shows besides its nodes: the node selected by path (the diff pane selects by
/// path, a node one side may not have), and a path to open and scroll to once.
#[derive(Default, Clone, Copy)]
pub(crate) struct TreeMarks<'a> {
    pub selected: Option<&'a str>,
    pub reveal: Option<&'a str>,
    /// Paths marked with an icon before their label (the diff pane's changes: `~`, `+`, ...).
    pub changed: Option<&'a std::collections::HashMap<String, &'static str>>,
}

/// Draws `d`'s typed tree (with its decoded bytes fields), or its wire tree; returns the node
/// clicked (its path and bytes). Drawn from the detail by reference: a big message's tree is
/// never copied per frame.
pub(crate) fn tree_nodes(
    ui: &mut egui::Ui,
    d: &mut MessageDetail,
    wire: bool,
    marks: TreeMarks<'_>,
) -> Picked {
    let mut picked = None;
    let mut expand = None;
    let mut t = TreeDraw {
        hl: d.highlight.clone(),
        marks,
        expanded: &d.expanded,
        picked: &mut picked,
        expand: &mut expand,
    };
    if wire {
        t.nodes(ui, &d.wire, "");
    } else {
        t.nodes(ui, &d.tree, "");
        for e in &d.embedded {
            t.node(ui, &e.root, "");
        }
    }
    if let Some(p) = expand {
        // A thousand more per click: a million-element vector never lays out at once.
        *d.expanded.entry(p).or_insert(MAX_CHILDREN) += 1000;
    }
    picked
}

/// Long values and long lists are cut here; selecting a value shows all of it in the editor.
const MAX_VALUE_CHARS: usize = 160;
const MAX_CHILDREN: usize = 64;
const MAX_JSON_CHARS: usize = 256 << 10;

/// The node the user clicked: its label path and its bytes.
pub(crate) type Picked = Option<(String, crate::wire::Span)>;

struct TreeDraw<'a> {
    hl: Option<crate::wire::Span>,
    marks: TreeMarks<'a>,
    expanded: &'a std::collections::HashMap<String, usize>,
    picked: &'a mut Picked,
    expand: &'a mut Option<String>,
}

impl TreeDraw<'_> {
    /// The icon before a marked path's label, and a space (nothing for the others).
    fn mark(&self, p: &str) -> String {
        self.marks.changed.and_then(|c| c.get(p)).map_or_else(String::new, |icon| format!("{icon} "))
    }

    fn nodes(&mut self, ui: &mut egui::Ui, nodes: &[TypedNode], path: &str) {
        let limit = self.expanded.get(path).copied().unwrap_or(MAX_CHILDREN);
        for n in nodes.iter().take(limit) {
            self.node(ui, n, path);
        }
        if nodes.len() > limit
            && ui
                .button(format!(
                    "Show more: {} of {} fields of {} shown",
                    limit,
                    nodes.len(),
                    if path.is_empty() { "the message" } else { path }
                ))
                .clicked()
        {
            *self.expand = Some(path.to_string());
        }
    }

    fn node(&mut self, ui: &mut egui::Ui, n: &TypedNode, path: &str) {
        let p = if path.is_empty() { n.label.clone() } else { format!("{path}.{}", n.label) };
        let span = n.whole();
        let selected = match self.marks.selected {
            Some(sel) => sel == p,
            None => self.hl.as_ref() == Some(&span),
        };
        let reveal = self.marks.reveal;
        let unknown = if n.known { "" } else { " (unknown field)" };
        if n.children.is_empty() {
            let value = n.value.as_deref().unwrap_or("");
            let shown = match value.char_indices().nth(MAX_VALUE_CHARS) {
                Some((cut, _)) => {
                    format!("{}… ({} chars; select to see all)", &value[..cut], value.chars().count())
                }
                None => value.to_string(),
            };
            let text = format!(
                "{}{}: {shown}   [{}{unknown}] @{}..{}",
                self.mark(&p),
                n.label,
                n.type_name,
                span.start,
                span.end
            );
            let r = ui.selectable_label(selected, egui::RichText::new(text).monospace());
            if reveal == Some(p.as_str()) {
                r.scroll_to_me(Some(egui::Align::Center));
            }
            if r.clicked() {
                *self.picked = Some((p, span));
            }
        } else {
            let header = format!(
                "{}{}   [{}{unknown}] @{}..{}",
                self.mark(&p),
                n.label,
                n.type_name,
                span.start,
                span.end
            );
            // Opened on the way to the node to reveal (once: the operator may close it again).
            let on_the_way = reveal
                .is_some_and(|r| r.len() > p.len() && r.starts_with(&p) && r[p.len()..].starts_with('.'));
            let mut h = egui::CollapsingHeader::new(egui::RichText::new(header).monospace())
                .id_salt(&p)
                .default_open(path.split('.').count() < 3);
            if on_the_way {
                h = h.open(Some(true));
            }
            let r = h.show(ui, |ui| self.nodes(ui, &n.children, &p));
            if reveal == Some(p.as_str()) {
                r.header_response.scroll_to_me(Some(egui::Align::Center));
            }
            if r.header_response.clicked() {
                *self.picked = Some((p, span));
            }
        }
    }
}
