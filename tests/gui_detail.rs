//! The detail view says everything it knows (issue #38, item 6): the wire view names the
//! fields the schema knows, and the JSON view of a WAL message shows its reading (header and
//! body decoded, as the tree shows them) first, the message as stored one click away.

use crate::common::gui::{harness, sample_copy, settle, step_until};
use eframe::egui;
use egui_kittest::kittest::{NodeT, Queryable};
use walscope::ui::WalscopeApp;

#[test]
fn wire_names_fields_and_json_shows_the_wal_reading() {
    let dir = tempfile::tempdir().unwrap();
    let copy = sample_copy(dir.path(), "milvus-100.dump", "wal.dump");
    let mut h = harness([1400.0, 1000.0], WalscopeApp::new());
    h.step();
    h.state_mut().open(copy);
    step_until(&mut h, "decoded rows", |h| h.query_by_label("Pulsar 100/2/-1").is_some());
    // Frame 4: an Insert of two rows.
    h.get_by_label("Pulsar 100/2/-1").click();
    step_until(&mut h, "the detail", |h| h.state().tabs[0].detail.as_ref().is_some_and(|d| d.index == 4));
    settle(&mut h);
    if h.query_by_label("Wire").is_none() {
        let labels: Vec<String> = h
            .query_all_by_role(egui::accesskit::Role::Button)
            .filter_map(|n| n.accesskit_node().label())
            .collect();
        panic!("no Wire tab; buttons: {labels:?}");
    }
    h.get_by_label("Wire").click();
    settle(&mut h);
    let d = h.state().tabs[0].detail.as_ref().unwrap();
    let named: Vec<&str> = d.wire.iter().filter(|n| n.known).map(|n| n.label.as_str()).collect();
    assert!(named.iter().any(|l| l.ends_with(" message")), "{named:?}");
    let label = named.iter().find(|l| l.ends_with(" message")).unwrap().to_string();
    h.get_by_label_contains(&label);

    h.get_by_label("JSON").click();
    settle(&mut h);
    h.get_by_label("WAL reading: header and body decoded");
    let shown = |h: &egui_kittest::Harness<'static, WalscopeApp>| {
        h.query_all_by_role(egui::accesskit::Role::MultilineTextInput)
            .filter_map(|n| n.value())
            .collect::<Vec<String>>()
            .join("\n")
    };
    let reading = shown(&h);
    assert!(reading.contains("\"num_rows\": \"2\"") && reading.contains("\"header\""), "{reading}");
    assert!(reading.contains("\"type\": \"Insert\""), "{reading}");
    h.get_by_label("Message as stored").click();
    settle(&mut h);
    let stored = shown(&h);
    assert!(stored.contains("\"payload\"") && !stored.contains("\"num_rows\""), "{stored}");
}
