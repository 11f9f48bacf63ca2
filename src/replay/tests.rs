//! Unit tests of the replay rules that need no server: upsert folding, row selection, key
//! expressions, the journal's reading of a cut line.

use super::Pk;
use super::convert::select_rows;
use super::journal::{Entry, Journal};
use super::plan::{Policy, simulate};
use super::target::pk_in;
use super::units::{FrameAt, Op};
use crate::schema::SchemaSet;
use prost_reflect::{DynamicMessage, Value};
use std::collections::{HashMap, HashSet};

fn field(json: serde_json::Value) -> DynamicMessage {
    let d = SchemaSet::shared_builtin().message("milvus.proto.schema.FieldData").expect("FieldData");
    DynamicMessage::deserialize(d, json).expect("valid FieldData")
}

fn floats(m: &DynamicMessage) -> Vec<f32> {
    let v = m.get_field_by_name("vectors").and_then(|v| v.as_message().cloned()).expect("vectors");
    let fv = v.get_field_by_name("float_vector").and_then(|v| v.as_message().cloned()).expect("float_vector");
    match fv.get_field_by_name("data").as_deref() {
        Some(Value::List(l)) => l.iter().filter_map(|x| x.as_f32()).collect(),
        _ => vec![],
    }
}

#[test]
fn rows_are_selected_in_every_column_kind() {
    let v = field(serde_json::json!({"type": "FloatVector", "field_name": "v",
        "vectors": {"dim": "2", "float_vector": {"data": [0.0, 0.5, 1.0, 1.5, 2.0, 2.5]}}}));
    assert_eq!(floats(&select_rows(&v, 3, &[0, 2])), vec![0.0, 0.5, 2.0, 2.5]);
    let s = field(serde_json::json!({"type": "VarChar", "field_name": "t",
        "scalars": {"string_data": {"data": ["a", "b", "c"]}}}));
    let picked = select_rows(&s, 3, &[1]);
    let keys = super::units::insert_keys_of_field(&picked);
    assert_eq!(keys, vec![Pk::Str("b".into())]);
    let b = field(serde_json::json!({"type": "BinaryVector", "field_name": "b",
        "vectors": {"dim": "16", "binary_vector": "AAECAwQF"}}));
    let picked = select_rows(&b, 3, &[2]);
    let bytes = picked
        .get_field_by_name("vectors")
        .and_then(|v| v.as_message().cloned())
        .and_then(|v| v.get_field_by_name("binary_vector").and_then(|b| b.as_bytes().cloned()))
        .expect("bytes");
    assert_eq!(bytes.as_ref(), &[4u8, 5]);
}

#[test]
fn long_key_lists_become_template_values() {
    let (e, v) = pk_in("id", &[Pk::Int(1), Pk::Int(2)]);
    assert_eq!(e, "id in [1, 2]");
    assert_eq!(v, serde_json::json!({}));
    let (e, _) = pk_in("name", &[Pk::Str("a\"b".into())]);
    assert_eq!(e, r#"name in ["a\"b"]"#);
    let many: Vec<Pk> = (0..100).map(Pk::Int).collect();
    let (e, v) = pk_in("id", &many);
    assert_eq!(e, "id in {keys}");
    assert_eq!(v["keys"]["array_val"]["long_data"]["data"].as_array().map(|a| a.len()), Some(100));
}

fn at() -> FrameAt {
    FrameAt { dump: 0, offset: 0, len: 0 }
}

#[test]
fn the_simulation_follows_milvus_and_the_policy() {
    let insert = |k: &[i64]| Op::Insert {
        db: "default".into(),
        collection: "c".into(),
        partition: String::new(),
        at: at(),
        rows: k.len() as u64,
        keys: k.iter().map(|v| Pk::Int(*v)).collect(),
    };
    let delete = |k: &[i64]| Op::Delete {
        db: "default".into(),
        collection: "c".into(),
        partition: String::new(),
        keys: k.iter().map(|v| Pk::Int(*v)).collect(),
    };
    let conflicts: HashSet<Pk> = [Pk::Int(7)].into();
    let mut counts: HashMap<Pk, u64> = [(Pk::Int(7), 1)].into();
    simulate(&mut counts, &insert(&[1, 7]), Policy::Skip, &conflicts);
    simulate(&mut counts, &insert(&[1]), Policy::Skip, &conflicts);
    simulate(&mut counts, &delete(&[7]), Policy::Skip, &conflicts);
    // Insert never de-duplicates; a conflicting key keeps the new primary's row under skip.
    assert_eq!(counts[&Pk::Int(1)], 2);
    assert_eq!(counts[&Pk::Int(7)], 1);
    let mut counts: HashMap<Pk, u64> = [(Pk::Int(7), 1)].into();
    simulate(&mut counts, &insert(&[7]), Policy::Upsert, &conflicts);
    assert_eq!(counts[&Pk::Int(7)], 1);
    simulate(&mut counts, &delete(&[7]), Policy::Upsert, &conflicts);
    assert_eq!(counts[&Pk::Int(7)], 0);
}

#[test]
fn a_cut_last_journal_line_is_ignored_and_a_bad_middle_line_is_an_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let line = |e: &Entry| serde_json::to_string(e).expect("json");
    let head = Entry::Header { journal: 1, plan: "p".into(), endpoint: "e".into(), at: "t".into() };
    let start = Entry::Start { unit: "u1".into(), at: "t".into() };
    let done = Entry::Done { unit: "u1".into(), calls: 1, rows: 2, at: "t".into() };
    let text = format!("{}\n{}\n{}\n{{\"event\":\"sta", line(&head), line(&start), line(&done));
    std::fs::write(Journal::path_in(dir.path()), &text).expect("write");
    let st = Journal::read(dir.path()).expect("read");
    assert!(st.done.contains("u1") && st.uncertain.is_empty());
    assert_eq!(st.plan.as_deref(), Some("p"));
    let text = format!("{}\nnot json\n{}\n", line(&head), line(&done));
    std::fs::write(Journal::path_in(dir.path()), &text).expect("write");
    let e = Journal::read(dir.path()).expect_err("a bad line in the middle");
    assert!(e.to_string().contains("line 2"), "{e}");
}
