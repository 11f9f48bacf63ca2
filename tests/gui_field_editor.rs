//! The field editor in the window, headless with egui_kittest: enums from a drop-down, list
//! elements moved and removed, fields cleared and added, JSON edits that rewrite only what
//! changed, and a bytes field decoded as a chosen type and edited inside.

use crate::common::gui::{harness, settle, step_until};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use std::path::{Path, PathBuf};
use walscope::codec;
use walscope::schema::SchemaSet;
use walscope::ui::WalscopeApp;
use walscope::ui::panes::file::ReadAs;

/// The window size these tests draw at.
const SIZE: [f32; 2] = [1400.0, 900.0];

/// One message of `type_name`, from JSON, alone in a file.
fn message_file(dir: &Path, name: &str, type_name: &str, json: &str) -> PathBuf {
    let set = SchemaSet::builtin();
    let msg = codec::from_json(&set.message(type_name).unwrap(), json).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, codec::encode(&msg)).unwrap();
    path
}

/// Opens `path` as one `type_name` message and selects it.
fn open(h: &mut Harness<'static, WalscopeApp>, path: PathBuf, type_name: &str) {
    h.step();
    let read_as =
        ReadAs { framing: Some(walscope::dump::Framing::Single), type_name: Some(type_name.to_string()) };
    h.state_mut().open_as(path, read_as);
    step_until(h, "the file to open", |h| h.state().tabs.len() == 1);
    h.state_mut().tabs[0].select(0);
    settle(h);
}

/// The current message of frame 0 as JSON.
fn current_json(h: &Harness<'static, WalscopeApp>, type_name: &str) -> serde_json::Value {
    let tab = &h.state().tabs[0];
    let bytes = tab.session.message(&tab.dump, 0).unwrap();
    let m = codec::decode(&SchemaSet::builtin().message(type_name).unwrap(), &bytes).unwrap().message;
    serde_json::from_str(&codec::to_json(&m, false)).unwrap()
}

/// Clicks the widget labelled exactly `label`, or else the one whose label contains it.
fn click(h: &mut Harness<'static, WalscopeApp>, label: &str) {
    match h.query_by_label(label) {
        Some(n) => n.click(),
        None => h.get_by_label_contains(label).click(),
    }
    settle(h);
}

#[test]
fn decode_a_bytes_field_as_a_type_and_edit_inside_it() {
    let dir = tempfile::tempdir().unwrap();
    let set = SchemaSet::builtin();
    let point = codec::from_json(
        &set.message("openmldb.datasync.SyncPoint").unwrap(),
        r#"{"type": "kBINLOG", "offset": "42"}"#,
    )
    .unwrap();
    let inner = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, codec::encode(&point));
    let file = message_file(
        dir.path(),
        "blob.bin",
        "milvus.proto.common.Blob",
        &format!(r#"{{"value": "{inner}"}}"#),
    );
    let mut h = harness(SIZE, WalscopeApp::new());
    open(&mut h, file, "milvus.proto.common.Blob");

    click(&mut h, "value: ");
    // A type that is not loaded is refused at the field.
    h.get_by_label("Decode as:").click();
    h.step();
    h.get_by_label("Decode as:").type_text("no.such.Type");
    click(&mut h, "Decode");
    h.get_by_label_contains("no message type \"no.such.Type\" is loaded");

    h.state_mut().tabs[0].detail.as_mut().unwrap().editor.decode_as = "openmldb.datasync.SyncPoint".into();
    h.step();
    h.get_by_label("Decode").click();
    step_until(&mut h, "the decoded field", |h| {
        h.query_by_label_contains("value (decoded as SyncPoint)").is_some()
    });
    settle(&mut h);

    // Edit inside: only the blob's bytes change, and they decode to the new offset.
    click(&mut h, "offset: 42");
    h.state_mut().tabs[0].detail.as_mut().unwrap().edit_text = Some(String::new());
    h.step();
    h.get_by_label("New value:").click();
    h.step();
    h.get_by_label("New value:").type_text("43");
    click(&mut h, "Apply edit");
    assert!(h.state().tabs[0].session.is_dirty());
    let blob = current_json(&h, "milvus.proto.common.Blob");
    let bytes =
        base64::Engine::decode(&base64::engine::general_purpose::STANDARD, blob["value"].as_str().unwrap())
            .unwrap();
    let p = codec::decode(&set.message("openmldb.datasync.SyncPoint").unwrap(), &bytes).unwrap().message;
    assert_eq!(codec::to_json(&p, false), r#"{"type":"kBINLOG","offset":"43"}"#);
    // The decoding stays while the message is edited.
    h.get_by_label_contains("offset: 43");
}

/// Longer than the tree's 200-character preview, with a character that needs escaping.
const LONG: &str = "collector-\\u00e9-0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789-end";

#[test]
fn move_and_remove_list_elements() {
    let dir = tempfile::tempdir().unwrap();
    let t = "openmldb.datasync.TaskStatusResponse";
    let file = message_file(
        dir.path(),
        "status.bin",
        t,
        &format!(
            r#"{{"task": [{{"status": "RUNNING", "count": "1"}}, {{"status": "FAILED", "count": "2"}},
                     {{"status": "SUCCESS", "count": "3", "dataCollector": "{LONG}"}}]}}"#
        ),
    );
    let mut h = harness(SIZE, WalscopeApp::new());
    open(&mut h, file, t);
    let statuses = |h: &Harness<'static, WalscopeApp>| -> Vec<String> {
        current_json(h, t)["task"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["status"].as_str().unwrap().into())
            .collect()
    };
    click(&mut h, "task[1]   [openmldb.datasync.Task]");
    click(&mut h, "Move up");
    assert_eq!(statuses(&h), ["FAILED", "RUNNING", "SUCCESS"]);
    // The moved element stays selected where it went.
    let selected = h.state().tabs[0].detail.as_ref().unwrap().selected_node.clone();
    assert_eq!(selected.as_deref(), Some("task[0]"));
    // Ctrl+Z and Ctrl+Shift+Z undo and redo the move.
    use eframe::egui::{Key, Modifiers};
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    settle(&mut h);
    assert_eq!(statuses(&h), ["RUNNING", "FAILED", "SUCCESS"]);
    h.key_press_modifiers(Modifiers::COMMAND | Modifiers::SHIFT, Key::Z);
    settle(&mut h);
    assert_eq!(statuses(&h), ["FAILED", "RUNNING", "SUCCESS"]);
    // The first element cannot go further up: refused at the field.
    click(&mut h, "task[0]   [openmldb.datasync.Task]");
    click(&mut h, "Move up");
    h.get_by_label_contains("cannot move -1 places");
    // A long value starts in the edit box whole (the tree shows a shortened preview).
    click(&mut h, "data_collector: ");
    let text = h.state().tabs[0].detail.as_ref().unwrap().edit_text.clone().unwrap();
    let value: String = serde_json::from_str(&format!("\"{LONG}\"")).unwrap();
    assert_eq!(text, serde_json::to_string(&value).unwrap());
    click(&mut h, "task[2]   [openmldb.datasync.Task]");
    click(&mut h, "Remove element");
    assert_eq!(statuses(&h), ["FAILED", "RUNNING"]);
    click(&mut h, "Undo");
    assert_eq!(statuses(&h), ["FAILED", "RUNNING", "SUCCESS"]);
}

#[test]
fn enum_drop_down_clear_add_and_json_edits_on_a_progress_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("0.progress");
    std::fs::copy(Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/samples/synctool/7/0.progress"), &file)
        .unwrap();
    let t = "openmldb.datasync.AddSyncTaskRequest";
    let mut h = harness(SIZE, WalscopeApp::new());
    h.step();
    h.state_mut().open(file);
    step_until(&mut h, "the file to open", |h| h.state().tabs.len() == 1);
    h.state_mut().tabs[0].select(0);
    settle(&mut h);
    let before = current_json(&h, t);

    // An enum is chosen from its values.
    click(&mut h, "mode: ");
    click(&mut h, "Value:");
    click(&mut h, "kFull (0)");
    assert_eq!(current_json(&h, t)["mode"], "kFull");

    // A proto2 optional field is cleared, then added back through its message.
    click(&mut h, "dest: ");
    click(&mut h, "Clear field");
    assert!(current_json(&h, t).get("dest").is_none());
    click(&mut h, "sync_point   [openmldb.datasync.SyncPoint]");
    {
        let ed = &mut h.state_mut().tabs[0].detail.as_mut().unwrap().editor;
        ed.add_field = "ts".into();
        ed.add_value = "77".into();
    }
    h.step();
    click(&mut h, "Add");
    assert_eq!(current_json(&h, t)["syncPoint"]["ts"], "77");

    // JSON: only the changed field is rewritten; bad JSON is refused with its line.
    click(&mut h, "JSON");
    click(&mut h, "Edit JSON");
    let tab = &h.state().tabs[0];
    let old_bytes = tab.session.message(&tab.dump, 0).unwrap();
    let mut json: serde_json::Value = current_json(&h, t);
    json["token"] = "new-token".into();
    h.state_mut().tabs[0].detail.as_mut().unwrap().json_edit = Some("{\n \"tid\": \"x\"\n}".into());
    click(&mut h, "Apply JSON");
    h.get_by_label_contains("line 2");
    h.state_mut().tabs[0].detail.as_mut().unwrap().json_edit = Some(json.to_string());
    click(&mut h, "Apply JSON");
    let after = current_json(&h, t);
    assert_eq!(after["token"], "new-token");
    assert_eq!(after["tabletEndpoint"], before["tabletEndpoint"]);
    let tab = &h.state().tabs[0];
    let new_bytes = tab.session.message(&tab.dump, 0).unwrap();
    let (_, old_len, new_len) = codec::edit::changed_window(&old_bytes, &new_bytes).unwrap();
    // Only the token's length byte and text changed (the frame is a single message).
    let old_token = before["token"].as_str().unwrap().len();
    assert!(old_len <= old_token + 1 && new_len <= "new-token".len() + 1, "{old_len} {new_len}");
}
