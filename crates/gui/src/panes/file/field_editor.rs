//! The editor for the selected tree node, with a widget fit for its type: enums as drop-downs,
//! booleans as a checkbox, numbers with their range, bytes as hex, base64 or UTF-8, strings;
//! list elements move and go, map entries go, fields clear, messages take JSON and new fields,
//! and bytes fields can be decoded as any loaded type. Returns a request; applies nothing.

use crate::codec::EditOp;
use crate::embedded;
use crate::panes::file::detail::MessageDetail;
use crate::panes::file::field_edit::{BytesForm, EditRequest};
use eframe::egui;
use prost_reflect::{DynamicMessage, Kind};

pub fn show(d: &mut MessageDetail, ui: &mut egui::Ui) -> Option<EditRequest> {
    let path = d.selected_node.clone()?;
    if d.editor.field.is_none() && d.editor.message.is_none() {
        return None;
    }
    let mut action = None;
    egui::Frame::group(ui.style()).show(ui, |ui| {
        if let Some(why) = &d.editor.not_inline {
            ui.label(format!("Not editable here: {why}"));
        }
        action = value_editor(d, ui, &path)
            .or_else(|| structure_buttons(d, ui, &path))
            .or_else(|| message_editor(d, ui, &path))
            .or_else(|| decode_as(d, ui, &path));
        if let Some(e) = &d.edit_error {
            ui.colored_label(ui.visuals().error_fg_color, format!("Not applied: {e}"));
        }
    });
    action
}

fn set(path: &str, value: String) -> Option<EditRequest> {
    Some(EditRequest::Field { node: path.to_string(), op: EditOp::Set(value) })
}

/// The value of a leaf, in the widget its type calls for.
fn value_editor(d: &mut MessageDetail, ui: &mut egui::Ui, path: &str) -> Option<EditRequest> {
    let kind = d.editor.kind()?;
    let text = d.edit_text.as_mut()?;
    match &kind {
        Kind::Enum(e) => {
            let mut chosen = None;
            ui.horizontal(|ui| {
                let l = ui.label("Value:");
                egui::ComboBox::from_id_salt("enum_value")
                    .selected_text(text.as_str())
                    .show_ui(ui, |ui| {
                        for v in e.values() {
                            let item = format!("{} ({})", v.name(), v.number());
                            if ui.selectable_label(*text == v.name(), item).clicked() {
                                chosen = Some(v.name().to_string());
                            }
                        }
                    })
                    .response
                    .labelled_by(l.id);
            });
            chosen.and_then(|v| set(path, v))
        }
        Kind::Bool => {
            let mut on = text.trim() == "true";
            let r = ui.checkbox(&mut on, format!("{} is true", d.editor.field.as_ref()?.name()));
            if r.changed() { set(path, on.to_string()) } else { None }
        }
        _ => {
            let mut apply = false;
            if kind == Kind::Bytes {
                ui.horizontal(|ui| {
                    ui.label("Bytes as:");
                    for (form, name) in
                        [(BytesForm::Hex, "hex"), (BytesForm::Base64, "base64"), (BytesForm::Utf8, "UTF-8")]
                    {
                        if ui.selectable_label(d.editor.bytes_form == form, name).clicked() {
                            d.edit_error = d.editor.set_bytes_form(form, text).err().map(|e| e.to_string());
                        }
                    }
                    if let Some(b) = &d.editor.bytes {
                        ui.label(format!("{} bytes now", b.len()));
                    }
                });
            }
            let valid = d.editor.value_for(text);
            ui.horizontal(|ui| {
                let l = ui.label("New value:");
                let mut edit = egui::TextEdit::singleline(text).desired_width(320.0);
                if valid.is_err() {
                    edit = edit.text_color(ui.visuals().error_fg_color);
                }
                let r = ui.add(edit).labelled_by(l.id);
                let enter = r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
                apply = ui.button("Apply edit").clicked() || enter;
            });
            // On its own line: a wider row would widen the panel and move what is clicked.
            if let Some(hint) = d.editor.range_hint() {
                ui.weak(hint);
            }
            if let Err(e) = &valid
                && d.edit_error.is_none()
            {
                ui.colored_label(ui.visuals().warn_fg_color, format!("Not valid: {e}"));
            }
            if !apply {
                return None;
            }
            // An invalid value is sent anyway so the refusal is shown at the field, worded by
            // the codec; nothing changes.
            match valid {
                Ok(v) => set(path, v),
                Err(e) => {
                    d.edit_error = Some(e.to_string());
                    None
                }
            }
        }
    }
}

/// Reordering and removing list elements, removing map entries, clearing fields, appending.
fn structure_buttons(d: &mut MessageDetail, ui: &mut egui::Ui, path: &str) -> Option<EditRequest> {
    let fd = d.editor.field.clone()?;
    let op = |op: EditOp| Some(EditRequest::Field { node: path.to_string(), op });
    let mut action = None;
    ui.horizontal(|ui| {
        if d.editor.element && fd.is_map() {
            if ui.button("Remove entry").clicked() {
                action = op(EditOp::Clear);
            }
        } else if d.editor.element {
            if ui.button("Move up").clicked() {
                action = op(EditOp::Move(-1));
            }
            if ui.button("Move down").clicked() {
                action = op(EditOp::Move(1));
            }
            if ui.button("Remove element").clicked() {
                action = op(EditOp::Clear);
            }
        } else if ui
            .button("Clear field")
            .on_hover_text("Removes the field's bytes (absent / default)")
            .clicked()
        {
            action = op(EditOp::Clear);
        }
    });
    if d.editor.element && fd.is_list() {
        let list = path.rsplit_once('[').map_or(path, |(l, _)| l).to_string();
        ui.horizontal(|ui| {
            let l = ui.label(format!("Append to {}:", fd.name()));
            ui.add(egui::TextEdit::singleline(&mut d.editor.append_text).desired_width(240.0))
                .labelled_by(l.id);
            if ui.button("Append").clicked() {
                action =
                    Some(EditRequest::Field { node: list, op: EditOp::Append(d.editor.append_text.clone()) });
            }
        });
    }
    action
}

/// A message node: edit it as JSON, or add a field it does not hold yet.
fn message_editor(d: &mut MessageDetail, ui: &mut egui::Ui, path: &str) -> Option<EditRequest> {
    let m = d.editor.message.clone()?;
    let mut action = None;
    match d.editor.json.as_mut() {
        None => {
            if ui.button(format!("Edit {} as JSON", m.name())).clicked() {
                d.editor.json = Some(node_json(d, &m));
            }
        }
        Some(text) => {
            ui.add(
                egui::TextEdit::multiline(text).code_editor().desired_rows(6).desired_width(f32::INFINITY),
            );
            let json = text.clone();
            let mut cancel = false;
            ui.horizontal(|ui| {
                if ui.button("Apply JSON to this message").clicked() {
                    action = Some(EditRequest::Json { node: Some(path.to_string()), json });
                }
                cancel = ui.button("Cancel").clicked();
            });
            if cancel {
                d.editor.json = None;
            }
        }
    }
    let addable = d.editor.addable_fields();
    if addable.is_empty() {
        return action;
    }
    ui.horizontal(|ui| {
        ui.label("Add field:");
        egui::ComboBox::from_id_salt("add_field").selected_text(d.editor.add_field.as_str()).show_ui(
            ui,
            |ui| {
                for f in &addable {
                    let what = crate::codec::tree::type_label(&f.kind());
                    let list = if f.is_map() {
                        "map "
                    } else if f.is_list() {
                        "repeated "
                    } else {
                        ""
                    };
                    ui.selectable_value(
                        &mut d.editor.add_field,
                        f.name().to_string(),
                        format!("{} ({list}{what})", f.name()),
                    );
                }
            },
        );
        let l = ui.label("with value:");
        ui.add(egui::TextEdit::singleline(&mut d.editor.add_value).desired_width(200.0)).labelled_by(l.id);
        let chosen = addable.iter().find(|f| f.name() == d.editor.add_field);
        if ui.add_enabled(chosen.is_some(), egui::Button::new("Add")).clicked()
            && let Some(f) = chosen
        {
            let v = d.editor.add_value.clone();
            let field = if path.is_empty() { f.name().to_string() } else { format!("{path}.{}", f.name()) };
            action = Some(match (f.is_map(), f.is_list()) {
                // A map entry is `name[key]`; the value box then holds `key=value`.
                (true, _) => match v.split_once('=') {
                    Some((k, val)) => EditRequest::Field {
                        node: format!("{field}[{}]", serde_json::Value::String(k.trim().into())),
                        op: EditOp::Set(val.to_string()),
                    },
                    None => {
                        d.edit_error = Some("for a map, type key=value".into());
                        return;
                    }
                },
                (false, true) => EditRequest::Field { node: field, op: EditOp::Append(v) },
                (false, false) => EditRequest::Field { node: field, op: EditOp::Set(v) },
            });
        }
    });
    action
}

/// The JSON of a message node as it stands (a map entry's value for an entry).
fn node_json(d: &MessageDetail, m: &prost_reflect::MessageDescriptor) -> String {
    let raw = d.bytes.get(d.editor.value_span.clone()).unwrap_or_default();
    let decoded = match d.editor.field.as_ref().filter(|f| f.is_map()) {
        Some(f) => match f.kind() {
            Kind::Message(entry) => DynamicMessage::decode(entry.clone(), raw)
                .ok()
                .and_then(|e| e.get_field(&entry.map_entry_value_field()).as_message().cloned()),
            _ => None,
        },
        None => DynamicMessage::decode(m.clone(), raw).ok(),
    };
    decoded.map_or_else(|| "{}".into(), |msg| crate::codec::to_json(&msg, true))
}

/// "Decode as...": a bytes field of the message shown decoded as a chosen type.
fn decode_as(d: &mut MessageDetail, ui: &mut egui::Ui, path: &str) -> Option<EditRequest> {
    let fd = d.editor.field.as_ref()?;
    if fd.kind() != Kind::Bytes || !d.editor.known || embedded::find(&d.tree, path).is_none() {
        return None;
    }
    let pool = fd.parent_message().parent_pool().clone();
    let mut action = None;
    ui.horizontal(|ui| {
        let l = ui.label("Decode as:");
        ui.add(
            egui::TextEdit::singleline(&mut d.editor.decode_as)
                .hint_text("message type")
                .desired_width(280.0),
        )
        .labelled_by(l.id);
        if ui.button("Decode").clicked() {
            action =
                Some(EditRequest::DecodeAs { node: path.to_string(), type_name: d.editor.decode_as.clone() });
        }
    });
    let typed = d.editor.decode_as.trim().to_ascii_lowercase();
    if typed.len() >= 2 {
        ui.horizontal_wrapped(|ui| {
            let matches = pool.all_messages().filter(|m| m.full_name().to_ascii_lowercase().contains(&typed));
            for m in matches.take(8) {
                if ui.small_button(m.full_name()).clicked() {
                    d.editor.decode_as = m.full_name().to_string();
                }
            }
        });
    }
    action
}
