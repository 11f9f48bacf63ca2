//! The demo Milvus's collections over 127.0.0.1 with walscope's own gRPC client: DDL, Insert,
//! Delete, Upsert, Query and count(*) as the proxy answers them (refusals in the reply's status),
//! and the rehearsal pair's new primary seeded with what it had at the promotion plus its own
//! writes (a schema difference in `audit`, conflicting keys in `orders`).

use crate::common;

use base64::Engine;
use prost_reflect::{DynamicMessage, SerializeOptions};
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use walscope::net::grpc::{GrpcSettings, GrpcTransport};
use walscope::net::{CallOptions, Transport};
use walscope::schema::SchemaSet;
use walscope::sim::milvus::pair::{MilvusPair, MilvusPairConfig};
use walscope::sim::milvus::{MilvusDemo, MilvusDemoConfig, OLD_CLUSTER_ID};
use walscope::sim::walgen::{AUDIT, DIM};
use walscope::sim::{WalGenConfig, WalGenerator};

struct Client {
    t: GrpcTransport,
    set: SchemaSet,
}

fn to_value(m: &DynamicMessage) -> Value {
    let opts = SerializeOptions::new().use_proto_field_name(true).stringify_64_bit_integers(false);
    m.serialize_with_options(serde_json::value::Serializer, &opts).expect("JSON")
}

impl Client {
    async fn to(addr: std::net::SocketAddr) -> Client {
        let t = GrpcTransport::connect(&GrpcSettings::new(addr.to_string())).await.expect("connect");
        Client { t, set: SchemaSet::builtin() }
    }

    async fn call(&self, method: &str, req: Value) -> Value {
        let svc = self.set.pool().get_service_by_name("milvus.proto.milvus.MilvusService").expect("service");
        let m = svc.methods().find(|m| m.name() == method).expect("method");
        let msg = DynamicMessage::deserialize(m.input(), req).expect("request JSON");
        let reply = self.t.call_unary(&m, &msg, &CallOptions::default()).await.expect("call");
        to_value(&reply.message)
    }

    /// The reason of a refusal (panics on success).
    async fn refused(&self, method: &str, req: Value) -> (i64, String) {
        let r = self.call(method, req).await;
        let status =
            if method.contains("Collection") && method != "HasCollection" && method != "DescribeCollection"
                || method == "CreatePartition"
            {
                r.clone()
            } else {
                r["status"].clone()
            };
        assert!(status.get("code").is_some(), "{method} was accepted: {r}");
        (status["code"].as_i64().unwrap_or(0), status["reason"].as_str().unwrap_or("").to_string())
    }

    async fn create(&self, name: &str, schema: Value, properties: Value) -> Value {
        let bytes = schema_bytes(&self.set, schema);
        self.call(
            "CreateCollection",
            json!({"collection_name": name, "schema": bytes, "properties": properties}),
        )
        .await
    }

    async fn count(&self, name: &str, expr: &str) -> i64 {
        let r = self
            .call("Query", json!({"collection_name": name, "expr": expr, "output_fields": ["count(*)"]}))
            .await;
        assert_eq!(r["fields_data"][0]["field_name"], "count(*)", "{r}");
        r["fields_data"][0]["scalars"]["long_data"]["data"][0].as_i64().unwrap_or_else(|| panic!("{r}"))
    }
}

fn schema_bytes(set: &SchemaSet, schema: Value) -> String {
    let d = set.message("milvus.proto.schema.CollectionSchema").expect("schema type");
    let m = DynamicMessage::deserialize(d, schema).expect("schema JSON");
    base64::engine::general_purpose::STANDARD.encode(walscope::codec::encode(&m))
}

/// id (Int64 key), embedding (FloatVector dim 4), title (VarChar 16), plus `extra` fields.
fn books(name: &str, auto_id: bool, extra: Vec<Value>) -> Value {
    let mut fields = vec![
        json!({"name": "id", "is_primary_key": true, "data_type": "Int64", "autoID": auto_id}),
        json!({"name": "embedding", "data_type": "FloatVector", "type_params": [{"key": "dim", "value": "4"}]}),
        json!({"name": "title", "data_type": "VarChar", "type_params": [{"key": "max_length", "value": "16"}]}),
    ];
    fields.extend(extra);
    json!({"name": name, "fields": fields})
}

fn rows(name: &str, pks: Option<&[i64]>, titles: &[&str], dim: usize) -> Value {
    let n = titles.len();
    let mut fields = vec![
        json!({"type": "FloatVector", "field_name": "embedding", "vectors": {"dim": dim, "float_vector": {"data": vec![0.5; n * dim]}}}),
        json!({"type": "VarChar", "field_name": "title", "scalars": {"string_data": {"data": titles}}}),
    ];
    if let Some(pks) = pks {
        fields
            .insert(0, json!({"type": "Int64", "field_name": "id", "scalars": {"long_data": {"data": pks}}}));
    }
    json!({"collection_name": name, "fields_data": fields, "num_rows": n})
}

fn column<'a>(r: &'a Value, name: &str) -> &'a Value {
    let cols = r["fields_data"].as_array().unwrap_or_else(|| panic!("{r}"));
    cols.iter().find(|c| c["field_name"] == name).unwrap_or_else(|| panic!("no {name} in {r}"))
}

async fn demo() -> MilvusDemo {
    MilvusDemo::start(MilvusDemoConfig::default()).await.expect("demo starts")
}

#[tokio::test]
async fn create_insert_query_delete_upsert_count() {
    let demo = demo().await;
    let c = Client::to(demo.addr()).await;
    assert_eq!(c.call("HasCollection", json!({"collection_name": "orders"})).await["value"], Value::Null);
    let props = json!([{"key": "note", "value": "demo"}]);
    assert_eq!(c.create("books", books("books", false, vec![]), props.clone()).await, json!({}));
    // Again with the same schema: accepted, as the root coordinator does.
    assert_eq!(c.create("books", books("books", false, vec![]), props.clone()).await, json!({}));
    assert_eq!(
        c.call("HasCollection", json!({"collection_name": "books"})).await,
        json!({"status": {}, "value": true})
    );

    let d = c.call("DescribeCollection", json!({"collection_name": "books"})).await;
    assert_eq!(d["collection_name"], "books", "{d}");
    assert_eq!(d["db_name"], "default", "{d}");
    assert_eq!(d["properties"], props, "{d}");
    assert!(
        d["collectionID"].as_i64().unwrap_or(0) > 0 && d["created_timestamp"].as_u64().unwrap_or(0) > 0,
        "{d}"
    );
    let ids: Vec<i64> =
        d["schema"]["fields"].as_array().unwrap().iter().map(|f| f["fieldID"].as_i64().unwrap()).collect();
    assert_eq!(ids, [100, 101, 102], "{d}");
    assert_eq!(d["schema"]["fields"][1]["type_params"][0], json!({"key": "dim", "value": "4"}), "{d}");

    let r = c.call("Insert", rows("books", Some(&[1, 2, 3]), &["a", "b", "c"], 4)).await;
    assert_eq!((r["insert_cnt"].as_i64(), &r["IDs"]["int_id"]["data"]), (Some(3), &json!([1, 2, 3])), "{r}");
    assert_eq!(r["succ_index"], json!([0, 1, 2]), "{r}");
    assert!(r["timestamp"].as_u64().unwrap_or(0) > 0, "{r}");
    // Insert does not de-duplicate keys.
    c.call("Insert", rows("books", Some(&[3]), &["c again"], 4)).await;
    assert_eq!(c.count("books", "").await, 4);
    assert_eq!(c.count("books", "id in [3]").await, 2);
    let q = c
        .call(
            "Query",
            json!({"collection_name": "books", "expr": "id in [3, 1]", "output_fields": ["title"]}),
        )
        .await;
    assert_eq!(q["primary_field_name"], "id", "{q}");
    assert_eq!(q["collection_name"], "books", "{q}");
    assert_eq!(column(&q, "id")["scalars"]["long_data"]["data"], json!([1, 3, 3]), "{q}");
    assert_eq!(column(&q, "title")["scalars"]["string_data"]["data"], json!(["a", "c", "c again"]), "{q}");

    let r = c.call("Delete", json!({"collection_name": "books", "expr": "id in [3]"})).await;
    assert_eq!(r["delete_cnt"], 1, "{r}");
    assert_eq!(c.count("books", "").await, 2);
    let r = c.call("Upsert", rows("books", Some(&[1]), &["a2"], 4)).await;
    assert_eq!(r["upsert_cnt"], 1, "{r}");
    let q = c
        .call("Query", json!({"collection_name": "books", "expr": "id == 1", "output_fields": ["title"]}))
        .await;
    assert_eq!(column(&q, "title")["scalars"]["string_data"]["data"], json!(["a2"]), "{q}");
    assert_eq!(c.count("books", "").await, 2);
    // A template-value delete, as replays send long key lists.
    let r = c
        .call(
            "Delete",
            json!({"collection_name": "books", "expr": "id in {keys}",
                "expr_template_values": {"keys": {"array_val": {"long_data": {"data": [1, 7]}}}}}),
        )
        .await;
    assert_eq!((&r["status"], &r["delete_cnt"]), (&json!({}), &json!(2)), "{r}");
    assert_eq!(c.count("books", "").await, 1);
    assert_eq!(c.count("books", "id == 2").await, 1);

    // Partitions.
    assert_eq!(
        c.call("CreatePartition", json!({"collection_name": "books", "partition_name": "p1"})).await,
        json!({})
    );
    let mut req = rows("books", Some(&[10]), &["in p1"], 4);
    req["partition_name"] = json!("p1");
    assert_eq!(c.call("Insert", req).await["insert_cnt"], 1);
    let q = c
        .call(
            "Query",
            json!({"collection_name": "books", "expr": "id in [10, 2]", "partition_names": ["p1"]}),
        )
        .await;
    assert_eq!(column(&q, "id")["scalars"]["long_data"]["data"], json!([10]), "{q}");

    assert_eq!(c.call("DropCollection", json!({"collection_name": "books"})).await, json!({}));
    assert_eq!(c.call("HasCollection", json!({"collection_name": "books"})).await["value"], Value::Null);
    demo.shutdown().await;
}

#[tokio::test]
async fn varchar_keys_and_auto_ids() {
    let demo = demo().await;
    let c = Client::to(demo.addr()).await;
    let schema = json!({"name": "tags", "fields": [
        {"name": "pk", "is_primary_key": true, "data_type": "VarChar", "type_params": [{"key": "max_length", "value": "8"}]},
        {"name": "v", "data_type": "FloatVector", "type_params": [{"key": "dim", "value": "2"}]},
        {"name": "n", "data_type": "Int32", "nullable": true}]});
    assert_eq!(c.create("tags", schema, json!([])).await, json!({}));
    let req = json!({"collection_name": "tags", "num_rows": 3, "fields_data": [
        {"type": "VarChar", "field_name": "pk", "scalars": {"string_data": {"data": ["a", "b", "it's"]}}},
        {"type": "FloatVector", "field_name": "v", "vectors": {"dim": 2, "float_vector": {"data": [1, 2, 3, 4, 5, 6]}}}]});
    let r = c.call("Insert", req).await;
    assert_eq!(r["IDs"]["str_id"]["data"], json!(["a", "b", "it's"]), "{r}");
    assert_eq!(c.count("tags", r#"pk in ["a", 'it\'s']"#).await, 2);
    let q = c
        .call("Query", json!({"collection_name": "tags", "expr": "pk == 'b'", "output_fields": ["*"]}))
        .await;
    assert_eq!(column(&q, "n")["valid_data"], json!([false]), "{q}");
    let r = c
        .call(
            "Delete",
            json!({"collection_name": "tags", "expr": "pk in {k}",
                "expr_template_values": {"k": {"array_val": {"string_data": {"data": ["a", "b"]}}}}}),
        )
        .await;
    assert_eq!((&r["delete_cnt"], &r["IDs"]), (&json!(2), &json!({})), "{r}");
    assert_eq!(c.count("tags", "").await, 1);

    // Auto id: keys are generated and unique; a key column is refused unless allowed.
    assert_eq!(c.create("auto", books("auto", true, vec![]), json!([])).await, json!({}));
    let a = c.call("Insert", rows("auto", None, &["x", "y"], 4)).await;
    let b = c.call("Insert", rows("auto", None, &["z"], 4)).await;
    let mut keys: Vec<i64> = a["IDs"]["int_id"]["data"]
        .as_array()
        .unwrap()
        .iter()
        .chain(b["IDs"]["int_id"]["data"].as_array().unwrap())
        .map(|v| v.as_i64().unwrap())
        .collect();
    keys.dedup();
    assert_eq!(keys.len(), 3, "{a} {b}");
    let (code, reason) = c.refused("Insert", rows("auto", Some(&[1]), &["x"], 4)).await;
    assert_eq!(code, 1100);
    assert!(reason.contains("can not assign primary field data when auto id enabled id"), "{reason}");
    // Upsert needs the key, also with auto id.
    assert!(c.refused("Upsert", rows("auto", None, &["x"], 4)).await.1.contains("must assign pk"));
    let props = json!([{"key": "allow_insert_auto_id", "value": "true"}]);
    assert_eq!(c.create("keep", books("keep", true, vec![]), props).await, json!({}));
    let r = c.call("Insert", rows("keep", Some(&[41, 42]), &["x", "y"], 4)).await;
    assert_eq!(r["IDs"]["int_id"]["data"], json!([41, 42]), "{r}");
    demo.shutdown().await;
}

#[tokio::test]
async fn refusals_are_statuses() {
    let demo = demo().await;
    let c = Client::to(demo.addr()).await;
    let (code, reason) = c.refused("DescribeCollection", json!({"collection_name": "nope"})).await;
    assert_eq!((code, reason.as_str()), (100, "collection not found[collection=nope]"));
    assert_eq!(c.refused("Insert", rows("nope", Some(&[1]), &["a"], 4)).await.0, 100);
    assert_eq!(c.refused("Query", json!({"collection_name": "nope", "expr": "id == 1"})).await.0, 100);
    assert!(
        c.create("x", books("y", false, vec![]), json!([])).await["reason"]
            .as_str()
            .unwrap()
            .contains("schema.Name=y")
    );

    let key = json!({"name": "shop", "data_type": "Int64", "is_partition_key": true});
    assert_eq!(c.create("pk", books("pk", false, vec![key]), json!([])).await, json!({}));
    let mut req = rows("pk", Some(&[1]), &["a"], 4);
    req["fields_data"]
        .as_array_mut()
        .unwrap()
        .push(json!({"type": "Int64", "field_name": "shop", "scalars": {"long_data": {"data": [7]}}}));
    assert_eq!(c.call("Insert", req.clone()).await["insert_cnt"], 1);
    req["partition_name"] = json!("_default");
    let (_, reason) = c.refused("Insert", req).await;
    assert!(
        reason.contains("not support manually specifying the partition names if partition key mode is used"),
        "{reason}"
    );
    assert!(
        c.refused("CreatePartition", json!({"collection_name": "pk", "partition_name": "p"}))
            .await
            .1
            .contains("partition key")
    );

    assert_eq!(c.create("b", books("b", false, vec![]), json!([])).await, json!({}));
    let (_, reason) = c.refused("Insert", rows("b", Some(&[1]), &["a"], 3)).await;
    assert_eq!(reason, "the dim (3) of field data(embedding) is not equal to schema dim (4)");
    let (_, reason) = c.refused("Insert", rows("b", Some(&[1]), &["much longer than 16"], 4)).await;
    assert!(reason.contains("exceeds max length"), "{reason}");
    let mut missing = rows("b", Some(&[1]), &["a"], 4);
    missing["fields_data"].as_array_mut().unwrap().remove(2);
    assert!(
        c.refused("Insert", missing).await.1.contains("fieldSchema(title) has no corresponding fieldData")
    );
    let mut short = rows("b", Some(&[1, 2]), &["a", "b"], 4);
    short["num_rows"] = json!(3);
    assert!(c.refused("Insert", short).await.1.contains("num_rows"));
    let mut part = rows("b", Some(&[1]), &["a"], 4);
    part["partition_name"] = json!("nope");
    assert_eq!(c.refused("Insert", part).await, (200, "partition not found[partition=nope]".into()));
    for bad in ["id > 3", "id in [1, 'a']", "title in ['a']", "nope == 1", "id in {missing}", "id == 'a'"] {
        let (code, reason) = c.refused("Delete", json!({"collection_name": "b", "expr": bad})).await;
        assert_eq!(code, 1100, "{bad}: {reason}");
        assert!(reason.starts_with(&format!("cannot parse expression: {bad}, error: ")), "{reason}");
        assert_eq!(c.refused("Query", json!({"collection_name": "b", "expr": bad})).await.0, 1100, "{bad}");
    }
    let (_, reason) = c
        .refused("Query", json!({"collection_name": "b", "expr": "id == 1", "output_fields": ["embedding"]}))
        .await;
    assert!(reason.contains("the demo keeps no vectors"), "{reason}");
    let (_, reason) = c.refused("Query", json!({"collection_name": "b", "expr": ""})).await;
    assert!(reason.contains("empty expression"), "{reason}");
    let opts = CallOptions { metadata: vec![("dbname".into(), "other".into())], ..Default::default() };
    let svc = c.set.pool().get_service_by_name("milvus.proto.milvus.MilvusService").unwrap();
    let m = svc.methods().find(|m| m.name() == "HasCollection").unwrap();
    let msg = DynamicMessage::deserialize(m.input(), json!({"collection_name": "b"})).unwrap();
    let r = to_value(&c.t.call_unary(&m, &msg, &opts).await.unwrap().message);
    assert_eq!(r["status"]["code"], 800, "{r}");
    demo.shutdown().await;
}

/// A WAL message as the seed reads it.
struct Msg {
    pchannel: String,
    tt: u64,
    kind: &'static str,
    txn: bool,
    encrypted: bool,
    body: Value,
}

fn wal_messages(cfg: WalGenConfig, n: usize) -> Vec<Msg> {
    let set = SchemaSet::builtin();
    let resp = set.message("milvus.proto.milvus.DumpMessagesResponse").unwrap();
    WalGenerator::new(set.pool(), cfg)
        .take(n)
        .map(|g| {
            let r = to_value(&DynamicMessage::decode(resp.clone(), g.response.as_slice()).unwrap());
            let props = &r["message"]["properties"];
            let payload = base64::engine::general_purpose::STANDARD
                .decode(r["message"]["payload"].as_str().unwrap_or(""))
                .unwrap();
            let body_type = match g.type_name {
                "Insert" => Some("milvus.proto.msg.InsertRequest"),
                "Delete" => Some("milvus.proto.msg.DeleteRequest"),
                "CreateCollection" => Some("milvus.proto.msg.CreateCollectionRequest"),
                _ => None,
            };
            let encrypted = props.get("_ch").is_some();
            let body = match body_type.filter(|_| !encrypted) {
                Some(t) => {
                    to_value(&DynamicMessage::decode(set.message(t).unwrap(), payload.as_slice()).unwrap())
                }
                None => Value::Null,
            };
            Msg {
                pchannel: g.pchannel,
                tt: g.timetick,
                kind: g.type_name,
                txn: props.get("_tx").is_some(),
                encrypted,
                body,
            }
        })
        .collect()
}

/// (insert or delete, collection, keys).
type Op = (&'static str, String, Vec<i64>);

fn keys(v: &Value) -> Vec<i64> {
    v.as_array().map(|a| a.iter().filter_map(Value::as_i64).collect()).unwrap_or_default()
}

/// The rehearsal WAL's upsert transactions: Insert of existing keys, then a Delete of the same
/// keys at the same timetick, on the transaction's vchannel.
#[test]
fn rehearsal_wal_has_upserts_and_a_late_audit() {
    let cfg = WalGenConfig { rehearsal: true, ..Default::default() };
    let all = wal_messages(cfg, 700);
    let (mut txns, mut upserts) = (0, 0);
    for (i, m) in all.iter().enumerate() {
        if m.kind != "BeginTxn" {
            continue;
        }
        txns += 1;
        let on: Vec<&Msg> = all[i + 1..]
            .iter()
            .filter(|x| x.pchannel == m.pchannel)
            .take_while(|x| x.kind != "CommitTxn")
            .collect();
        assert!(on.iter().all(|x| x.txn), "bodies carry _tx");
        if on.iter().any(|x| x.kind == "Delete") {
            upserts += 1;
            assert_eq!(on.len(), 2);
            assert_eq!((on[0].kind, on[1].kind), ("Insert", "Delete"));
            assert_eq!(on[0].tt, on[1].tt);
            let ins = keys(&on[0].body["fields_data"][0]["scalars"]["long_data"]["data"]);
            assert_eq!(ins, keys(&on[1].body["primary_keys"]["int_id"]["data"]));
            assert!((1..=3).contains(&ins.len()));
            assert_eq!(txns % 2, 0, "every second transaction is an upsert");
        }
    }
    assert!(upserts >= 2, "{txns} transactions, {upserts} upserts");
    let first_audit =
        all.iter().position(|m| m.body["collection_name"] == AUDIT.1 || m.body["collectionName"] == AUDIT.1);
    let create = all.iter().position(|m| m.kind == "CreateCollection" && m.body["collectionName"] == AUDIT.1);
    assert!(create.is_some() && first_audit == create, "audit is created before it is written");
    // Without rehearsal there is no audit.
    assert!(wal_messages(WalGenConfig::default(), 700).iter().all(|m| m.body["collectionName"] != AUDIT.1));
}

/// The new primary of a rehearsal pair: the WAL up to each checkpoint (computed here from the
/// generator and GetReplicateInfo), audit with its own schema and rows, conflicting keys.
#[tokio::test]
async fn rehearsal_new_primary_is_seeded() {
    let pair = MilvusPair::start(MilvusPairConfig { rehearsal: true, ..Default::default() }).await.unwrap();
    let c = Client::to(pair.new_addr()).await;
    let mut checkpoint: HashMap<String, u64> = HashMap::new();
    for p in MilvusPair::pchannels() {
        let r = c
            .call("GetReplicateInfo", json!({"source_cluster_id": OLD_CLUSTER_ID, "target_pchannel": p}))
            .await;
        checkpoint.insert(
            p.clone(),
            r["salvage_checkpoint"]["time_tick"].as_u64().unwrap_or_else(|| panic!("{r}")),
        );
    }
    let all = wal_messages(WalGenConfig { rehearsal: true, ..Default::default() }, 900);
    // Expected rows per collection: applied in _tt order, a transaction at its commit, deletes first.
    let mut units: Vec<(u64, Vec<Op>)> = Vec::new();
    let mut open: HashMap<&str, Vec<Op>> = HashMap::new();
    for m in all.iter().filter(|m| m.tt <= checkpoint[&m.pchannel]) {
        let op = match m.kind {
            "Insert" if !m.encrypted => Some((
                "insert",
                m.body["collection_name"].as_str().unwrap().to_string(),
                keys(&m.body["fields_data"][0]["scalars"]["long_data"]["data"]),
            )),
            "Delete" => Some((
                "delete",
                m.body["collection_name"].as_str().unwrap().to_string(),
                keys(&m.body["primary_keys"]["int_id"]["data"]),
            )),
            _ => None,
        };
        match m.kind {
            "BeginTxn" => {
                open.insert(&m.pchannel, Vec::new());
            }
            "CommitTxn" => {
                let mut ops = open.remove(m.pchannel.as_str()).unwrap_or_default();
                ops.sort_by_key(|o| o.0 != "delete");
                units.push((m.tt, ops));
            }
            _ if m.txn => open.get_mut(m.pchannel.as_str()).unwrap().extend(op),
            _ => units.extend(op.map(|o| (m.tt, vec![o]))),
        }
    }
    units.sort_by_key(|u| u.0);
    let mut expect: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    for (_, ops) in units {
        for (kind, coll, ks) in ops {
            let rows = expect.entry(coll).or_default();
            if kind == "delete" {
                rows.retain(|k| !ks.contains(k));
            } else {
                rows.extend(ks);
            }
        }
    }
    let own = pair.new.own_writes();
    let conflicts: Vec<i64> = own.iter().filter(|w| w.in_salvage).map(|w| w.pk).collect();
    assert_eq!(conflicts.len(), 2, "{own:?}");
    assert!(own.iter().all(|w| w.in_salvage == (w.collection == "orders" && w.pk < 900_000)), "{own:?}");
    for name in ["orders", "users", "events"] {
        let mut want = expect.get(name).cloned().unwrap_or_default();
        if name == "orders" {
            want.extend(own.iter().filter(|w| w.collection == "orders").map(|w| w.pk));
        }
        assert!(!want.is_empty(), "{name}");
        assert_eq!(c.count(name, "").await, want.len() as i64, "{name}");
        let q = c.call("Query", json!({"collection_name": name, "expr": format!("id in {want:?}"), "output_fields": ["title"]})).await;
        let mut got = keys(&column(&q, "id")["scalars"]["long_data"]["data"]);
        got.sort();
        want.sort();
        assert_eq!(got, want, "{name}");
    }
    // The conflicting keys are inserted by the old primary's WAL after the checkpoint.
    for k in &conflicts {
        let later = all.iter().any(|m| {
            m.kind == "Insert"
                && m.body["collection_name"] == "orders"
                && m.tt > checkpoint[&m.pchannel]
                && keys(&m.body["fields_data"][0]["scalars"]["long_data"]["data"]).contains(k)
        });
        assert!(later, "key {k}");
        assert!(!expect["orders"].contains(k), "key {k} was already replicated");
        let q = c.call("Query", json!({"collection_name": "orders", "expr": format!("id == {k}"), "output_fields": ["title"]})).await;
        assert_eq!(
            column(&q, "title")["scalars"]["string_data"]["data"],
            json!([format!("own write #{k}")]),
            "{q}"
        );
    }
    // audit: created by the new primary after its checkpoint (the WAL's CreateCollection of it
    // comes after the checkpoint on its pchannel), title 128 where the WAL says 256.
    let create = all
        .iter()
        .find(|m| m.kind == "CreateCollection" && m.body["collectionName"] == AUDIT.1)
        .expect("audit in the WAL");
    assert!(create.tt > checkpoint[&create.pchannel]);
    assert_eq!(create.body["collection_schema"]["fields"][2]["type_params"][0]["value"], "256");
    let d = c.call("DescribeCollection", json!({"collection_name": "audit"})).await;
    let title = &d["schema"]["fields"][2];
    assert_eq!(
        (title["name"].as_str(), &title["type_params"][0]),
        (Some("title"), &json!({"key": "max_length", "value": "128"})),
        "{d}"
    );
    assert_eq!(d["schema"]["fields"][1]["type_params"][0]["value"], DIM.to_string());
    assert_eq!(c.count("audit", "").await, 2);
    // The old primary keeps no collections of its own.
    let old = Client::to(pair.old_addr()).await;
    assert_eq!(old.call("HasCollection", json!({"collection_name": "orders"})).await["value"], Value::Null);
    pair.shutdown().await;
}

/// Random requests of every collection rpc (random schemas, columns, expressions) and bytes that
/// are no request at all: statuses or INVALID_ARGUMENT, never a panic; the server keeps serving.
#[tokio::test]
async fn random_requests_never_break_the_server() {
    let demo = demo().await;
    let c = Client::to(demo.addr()).await;
    assert_eq!(c.create("books", books("books", false, vec![]), json!([])).await, json!({}));
    c.call("Insert", rows("books", Some(&[1, 2]), &["a", "b"], 4)).await;
    let svc = c.set.pool().get_service_by_name("milvus.proto.milvus.MilvusService").unwrap();
    let schema = c.set.message("milvus.proto.schema.CollectionSchema").unwrap();
    let mut rng = common::Rng(7);
    let rpcs = [
        "CreateCollection",
        "DropCollection",
        "HasCollection",
        "DescribeCollection",
        "CreatePartition",
        "Insert",
        "Delete",
        "Upsert",
        "Query",
    ];
    for i in 0..600 {
        let m = svc.methods().find(|m| m.name() == rpcs[i % rpcs.len()]).unwrap();
        let mut req = common::random_message(&m.input(), &mut rng, 0).unwrap();
        if rng.chance(70) && m.name() != "DropCollection" {
            req.set_field_by_name("collection_name", prost_reflect::Value::String("books".into()));
            req.clear_field_by_name("db_name");
        }
        if m.name() == "CreateCollection" && rng.chance(50) {
            let s = common::random_message(&schema, &mut rng, 0).unwrap();
            req.set_field_by_name("schema", prost_reflect::Value::Bytes(walscope::codec::encode(&s).into()));
        }
        if m.name() == "Delete" || m.name() == "Query" {
            let exprs = [
                "id in [1, 2]",
                "id == 'x'",
                "id in {k}",
                "",
                "title == 'a'",
                "id in [",
                "id == 9223372036854775807",
            ];
            let e = exprs[rng.below(exprs.len() as u64) as usize];
            req.set_field_by_name("expr", prost_reflect::Value::String(e.into()));
        }
        if let Err(e) = c.t.call_unary(&m, &req, &CallOptions::default()).await {
            panic!("{} #{i}: {e}", m.name());
        }
    }
    // Bytes that are not the request message.
    let mut grpc = tonic::client::Grpc::new(c.t.channel());
    for method in ["Insert", "Upsert", "Query", "CreateCollection"] {
        grpc.ready().await.unwrap();
        let path = http::uri::PathAndQuery::from_maybe_shared(format!(
            "/milvus.proto.milvus.MilvusService/{method}"
        ))
        .unwrap();
        let bad = bytes::Bytes::from_static(&[0x2a, 0xff, 0xff, 0xff]);
        let r = grpc.unary(tonic::Request::new(bad), path, walscope::net::grpc::RawCodec).await;
        assert_eq!(r.err().map(|s| s.code()), Some(tonic::Code::InvalidArgument), "{method}");
    }
    assert_eq!(c.count("books", "").await, c.count("books", "").await);
    assert_eq!(c.call("HasCollection", json!({"collection_name": "books"})).await["value"], true);
    demo.shutdown().await;
}
