//! Unit tests of the replay rules that need no server: upsert folding, row selection, key
//! expressions, the journal's reading of a cut line.

use super::Pk;
use super::convert::select_rows;
use super::journal::{Entry, Journal};
use super::plan::Policy;
use super::simulate::simulate;
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
    let start = Entry::Start { unit: "u1".into(), at: "t".into(), batch: None };
    let done = Entry::Done { unit: "u1".into(), calls: 1, rows: 2, at: "t".into() };
    let text = format!("{}\n{}\n{}\n{{\"event\":\"sta", line(&head), line(&start), line(&done));
    std::fs::write(Journal::path_in(dir.path(), "default"), &text).expect("write");
    let st = Journal::read(dir.path(), "default").expect("read");
    assert!(st.done.contains("u1") && st.uncertain.is_empty());
    assert_eq!(st.plan.as_deref(), Some("p"));
    let text = format!("{}\nnot json\n{}\n", line(&head), line(&done));
    std::fs::write(Journal::path_in(dir.path(), "default"), &text).expect("write");
    let e = Journal::read(dir.path(), "default").expect_err("a bad line in the middle");
    assert!(e.to_string().contains("line 2"), "{e}");
}

#[test]
fn the_wire_level_request_equals_the_typed_one() {
    use crate::sim::{WalGenConfig, WalGenerator};
    let set = SchemaSet::shared_builtin();
    let resp = set.message("milvus.proto.milvus.DumpMessagesResponse").expect("type");
    let public = set.message("milvus.proto.milvus.InsertRequest").expect("type");
    let wal = set.message("milvus.proto.msg.InsertRequest").expect("type");
    let mut checked = 0;
    for m in WalGenerator::new(set.pool(), WalGenConfig::default()).take(200) {
        if m.type_name != "Insert" {
            continue;
        }
        let frame = DynamicMessage::decode(resp.clone(), m.response.as_slice()).expect("frame");
        let im = frame.get_field_by_name("message").and_then(|v| v.as_message().cloned()).expect("message");
        let payload = im.get_field_by_name("payload").and_then(|v| v.as_bytes().cloned()).expect("payload");
        let Ok(body) = DynamicMessage::decode(wal.clone(), payload.as_ref()) else { continue }; // encrypted
        let Some(facts) = super::wire_insert::read(&payload) else { continue };
        for (drop, no_partition) in [(vec![], false), (vec!["title".to_string()], true)] {
            let bytes = super::wire_insert::public_request(&facts, facts.num_rows, &drop, no_partition)
                .expect("request");
            let fast = DynamicMessage::decode(public.clone(), bytes.as_slice()).expect("decodes");
            let columns = super::convert::Columns { drop: drop.clone(), no_partition };
            let rows = facts.num_rows as usize;
            let all: Vec<usize> = (0..rows).collect();
            let db = facts.db.clone();
            let typed = super::convert::rows_request(
                "Insert",
                &body,
                &db,
                &facts.collection,
                &facts.partition,
                &columns,
                rows,
                &all,
            )
            .expect("typed");
            assert_eq!(fast, typed, "the wire-level request differs from the typed one");
        }
        let pk = facts
            .fields
            .iter()
            .find(|f| super::wire_insert::field_name(f).as_deref() == Some("id"))
            .expect("id column");
        assert_eq!(super::wire_insert::keys(pk), super::units::insert_keys(&body, "id"));
        checked += 1;
    }
    assert!(checked > 50, "{checked}");
}

#[test]
fn each_database_has_its_own_journal_and_plan_files() {
    use super::journal::SavedPlan;
    let dir = std::path::Path::new("/salvage");
    assert_eq!(Journal::path_in(dir, "default"), dir.join("replay.journal"));
    assert_eq!(Journal::path_in(dir, ""), dir.join("replay.journal"));
    assert_eq!(Journal::path_in(dir, "prod"), dir.join("replay.prod.journal"));
    assert_eq!(Journal::path_in(dir, "../x y"), dir.join("replay.___x_y.journal"));
    assert_eq!(SavedPlan::path_in(dir, "default"), dir.join("replay-plan.json"));
    assert_eq!(SavedPlan::path_in(dir, "prod"), dir.join("replay-plan.prod.json"));
}
