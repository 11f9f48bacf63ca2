//! One sample of every message type of reference §3.3/§3.4: header from `_h`, body from the
//! payload, each decoded to the type the table names.

use super::*;
use crate::wal::{analyze, analyze_bytes, header_body_types, is_dumped_type, message_type_name};

/// Reference §3.3 (number, name) and §3.4 (`_v`), copied by hand so the schema is checked too.
const TYPES: &[(i32, &str, u32)] = &[
    (1, "TimeTick", 1),
    (2, "Insert", 1),
    (3, "Delete", 1),
    (4, "Flush", 2),
    (5, "CreateCollection", 1),
    (6, "DropCollection", 1),
    (7, "CreatePartition", 1),
    (8, "DropPartition", 1),
    (9, "ManualFlush", 2),
    (10, "CreateSegment", 2),
    (11, "Import", 1),
    (12, "SchemaChange", 2),
    (13, "AlterCollection", 2),
    (14, "AlterLoadConfig", 2),
    (15, "DropLoadConfig", 2),
    (16, "CreateDatabase", 2),
    (17, "AlterDatabase", 2),
    (18, "DropDatabase", 2),
    (19, "AlterAlias", 2),
    (20, "DropAlias", 2),
    (21, "RestoreRBAC", 2),
    (22, "AlterUser", 2),
    (23, "DropUser", 2),
    (24, "AlterRole", 2),
    (25, "DropRole", 2),
    (26, "AlterUserRole", 2),
    (27, "DropUserRole", 2),
    (28, "AlterPrivilege", 2),
    (29, "DropPrivilege", 2),
    (30, "AlterPrivilegeGroup", 2),
    (31, "DropPrivilegeGroup", 2),
    (32, "AlterResourceGroup", 2),
    (33, "DropResourceGroup", 2),
    (34, "CreateIndex", 2),
    (35, "AlterIndex", 2),
    (36, "DropIndex", 2),
    (37, "FlushAll", 2),
    (38, "TruncateCollection", 2),
    (39, "RestoreSnapshot", 2),
    (40, "CreateSnapshot", 2),
    (41, "DropSnapshot", 2),
    (42, "BatchUpdateManifest", 2),
    (43, "RefreshExternalCollection", 2),
    (44, "DropSnapshotsByCollection", 2),
    (45, "CommitImport", 2),
    (46, "RollbackImport", 2),
    (47, "AlterRLSMetadata", 2),
    (48, "DropRLSMetadata", 2),
    (700, "AlterWAL", 2),
    (800, "AlterReplicateConfig", 2),
    (900, "BeginTxn", 2),
    (901, "CommitTxn", 2),
    (902, "RollbackTxn", 2),
    (999, "Txn", 2),
];

/// §3.4's version-1 bodies.
fn v1_body(name: &str) -> Option<&'static str> {
    Some(match name {
        "TimeTick" => "milvus.proto.msg.TimeTickMsg",
        "Insert" => "milvus.proto.msg.InsertRequest",
        "Delete" => "milvus.proto.msg.DeleteRequest",
        "CreateCollection" => "milvus.proto.msg.CreateCollectionRequest",
        "DropCollection" => "milvus.proto.msg.DropCollectionRequest",
        "CreatePartition" => "milvus.proto.msg.CreatePartitionRequest",
        "DropPartition" => "milvus.proto.msg.DropPartitionRequest",
        "Import" => "milvus.proto.msg.ImportMsg",
        _ => return None,
    })
}

/// Sets the collection id and a name where the message has such fields, so samples carry data.
/// Returns whether a collection id was set.
fn fill(msg: &mut DynamicMessage) -> bool {
    let mut has_collection = false;
    for name in ["collection_id", "collectionID"] {
        if msg.descriptor().get_field_by_name(name).is_some() {
            msg.set_field_by_name(name, Value::I64(4491));
            has_collection = true;
        }
    }
    for name in ["db_name", "collection_name", "collectionName", "index_name", "user_name"] {
        if msg.descriptor().get_field_by_name(name).is_some() {
            msg.set_field_by_name(name, Value::String("default".into()));
        }
    }
    has_collection
}

#[test]
fn every_message_type_decodes_to_its_header_and_body() {
    let pool = pool();
    let enum_values = pool
        .get_enum_by_name("milvus.proto.messages.MessageType")
        .map(|e| e.values().filter(|v| v.number() != 0).count())
        .unwrap_or(0);
    assert_eq!(enum_values, TYPES.len(), "the schema's MessageType differs from reference §3.3");
    for &(t, name, v) in TYPES {
        assert_eq!(message_type_name(&pool, t).as_deref(), Some(name));
        let header_name = format!("milvus.proto.messages.{name}MessageHeader");
        let body_name =
            v1_body(name).map_or_else(|| format!("milvus.proto.messages.{name}MessageBody"), String::from);
        assert_eq!(v == 1, v1_body(name).is_some(), "{name}");
        let (h, b) = header_body_types(&pool, t, v);
        assert_eq!(h.map(|d| d.full_name().to_string()), Some(header_name.clone()), "{name}");
        assert_eq!(b.map(|d| d.full_name().to_string()), Some(body_name.clone()), "{name}");

        let mut header = new_msg(&pool, &header_name);
        let mut body = new_msg(&pool, &body_name);
        let mut has_collection = fill(&mut header);
        has_collection |= fill(&mut body);
        if name == "Txn" {
            let mut inner = new_msg(&pool, "milvus.proto.messages.Message");
            inner.set_field_by_name("payload", Value::Bytes(vec![8, 1].into()));
            body.set_field_by_name("messages", Value::List(vec![Value::Message(inner)]));
        }
        let mut props = base_props(t, v);
        props.push(("_h", b64(&header)));
        let m = immutable(&pool, &props, codec::encode(&body));
        let w = analyze(&pool, &m);

        assert_eq!(w.type_number, Some(t));
        assert_eq!(w.type_name, name);
        assert_eq!(w.version, Some(v));
        assert!(!w.legacy);
        assert!(w.problems.is_empty(), "{name}: {:?}", w.problems);
        let got_header = w.header.as_ref().and_then(|h| h.as_ref().ok()).map(|h| h.descriptor());
        assert_eq!(got_header.map(|d| d.full_name().to_string()), Some(header_name), "{name}");
        assert_eq!(w.header.as_ref().and_then(|h| h.as_ref().ok()), Some(&header));
        let got_body = w.body.as_ref().and_then(|b| b.as_ref().ok()).map(|b| b.descriptor());
        assert_eq!(got_body.map(|d| d.full_name().to_string()), Some(body_name), "{name}");
        assert_eq!(w.body.as_ref().and_then(|b| b.as_ref().ok()), Some(&body));
        assert_eq!(w.collection_id, has_collection.then_some(4491), "{name}");
        assert_eq!(w.timetick, Some(TT));
        assert_eq!(w.vchannel.as_deref(), Some(VC));
        assert_eq!(
            w.id.as_ref().and_then(|i| i.as_ref().ok()).map(|i| i.display.as_str()),
            Some("RocksMQ 1007")
        );

        let coll = if has_collection { " coll=4491" } else { "" };
        assert_eq!(w.summary(), format!("{name}{coll} vchannel={VC} tt={TT_TEXT}"), "{name}");
        assert_eq!(
            is_dumped_type(t),
            !matches!(name, "TimeTick" | "CreateSegment" | "Flush" | "RollbackTxn")
        );

        // The same message through the byte entry point.
        let again = analyze_bytes(&pool, &codec::encode(&m)).map(|w| w.summary());
        assert_eq!(again, Ok(w.summary()));
    }
}

fn partition(pool: &DescriptorPool, rows: u64) -> Value {
    let mut p = new_msg(pool, "milvus.proto.messages.PartitionSegmentAssignment");
    p.set_field_by_name("partition_id", Value::I64(9));
    p.set_field_by_name("rows", Value::U64(rows));
    Value::Message(p)
}

#[test]
fn insert_delete_ddl_and_txn_summaries() {
    let pool = pool();
    let mut h = new_msg(&pool, "milvus.proto.messages.InsertMessageHeader");
    h.set_field_by_name("collection_id", Value::I64(4491));
    h.set_field_by_name("partitions", Value::List(vec![partition(&pool, 600), partition(&pool, 400)]));
    let mut body = new_msg(&pool, "milvus.proto.msg.InsertRequest");
    body.set_field_by_name("collectionID", Value::I64(4491));
    body.set_field_by_name("num_rows", Value::U64(1000));
    let mut props = base_props(2, 1);
    props.push(("_h", b64(&h)));
    let w = analyze(&pool, &immutable(&pool, &props, codec::encode(&body)));
    assert_eq!(w.rows, Some(1000));
    assert_eq!(w.summary(), format!("Insert coll=4491 rows=1000 vchannel={VC} tt={TT_TEXT}"));

    // Header without counts: collection and rows come from the body.
    let mut props = base_props(2, 1);
    props.push(("_h", String::new()));
    let mut body = new_msg(&pool, "milvus.proto.msg.InsertRequest");
    body.set_field_by_name("collectionID", Value::I64(77));
    body.set_field_by_name("num_rows", Value::U64(5));
    let w = analyze(&pool, &immutable(&pool, &props, codec::encode(&body)));
    assert_eq!((w.collection_id, w.rows), (Some(77), Some(5)));

    let mut h = new_msg(&pool, "milvus.proto.messages.DeleteMessageHeader");
    h.set_field_by_name("collection_id", Value::I64(4491));
    h.set_field_by_name("rows", Value::U64(3));
    let mut props = base_props(3, 1);
    props.push(("_h", b64(&h)));
    let w = analyze(&pool, &immutable(&pool, &props, Vec::new()));
    assert_eq!(w.summary(), format!("Delete coll=4491 rows=3 vchannel={VC} tt={TT_TEXT}"));
    // Delete body only: DeleteRequest.num_rows is an int64.
    let mut body = new_msg(&pool, "milvus.proto.msg.DeleteRequest");
    body.set_field_by_name("collectionID", Value::I64(4491));
    body.set_field_by_name("num_rows", Value::I64(8));
    let w = analyze(&pool, &immutable(&pool, &base_props(3, 1), codec::encode(&body)));
    assert_eq!(w.summary(), format!("Delete coll=4491 rows=8 vchannel={VC} tt={TT_TEXT}"));

    let mut h = new_msg(&pool, "milvus.proto.messages.CreateCollectionMessageHeader");
    h.set_field_by_name("collection_id", Value::I64(4491));
    let mut props = base_props(5, 1);
    props.push(("_h", b64(&h)));
    let w = analyze(&pool, &immutable(&pool, &props, Vec::new()));
    assert_eq!(w.summary(), format!("CreateCollection coll=4491 vchannel={VC} tt={TT_TEXT}"));

    let mut tx = new_msg(&pool, "milvus.proto.messages.TxnContext");
    tx.set_field_by_name("txn_id", Value::I64(77));
    tx.set_field_by_name("keepalive_milliseconds", Value::I64(30_000));
    let mut h = new_msg(&pool, "milvus.proto.messages.BeginTxnMessageHeader");
    h.set_field_by_name("keepalive_milliseconds", Value::I64(30_000));
    let mut props = base_props(900, 2);
    props.push(("_h", b64(&h)));
    props.push(("_tx", b64(&tx)));
    let w = analyze(&pool, &immutable(&pool, &props, Vec::new()));
    assert_eq!(w.txn.as_ref(), Some(&tx));
    assert_eq!(w.summary(), format!("BeginTxn txn=77 vchannel={VC} tt={TT_TEXT}"));

    // A Txn (999) body lists its messages.
    let mut body = new_msg(&pool, "milvus.proto.messages.TxnMessageBody");
    let inner = Value::Message(new_msg(&pool, "milvus.proto.messages.Message"));
    body.set_field_by_name("messages", Value::List(vec![inner.clone(), inner]));
    let w = analyze(&pool, &immutable(&pool, &base_props(999, 2), codec::encode(&body)));
    assert!(w.flags.iter().any(|f| f == "Txn body holds 2 messages"), "{:?}", w.flags);
}
