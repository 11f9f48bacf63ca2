//! The demo Milvus's collection rpcs over [`super::store`]: CreateCollection,
//! DropCollection, HasCollection, DescribeCollection, AddCollectionField, CreatePartition, Insert,
//! Delete, Upsert and Query, answered as the proxy answers them: a refusal is the reply's `status` (code, legacy
//! error_code, reason), never a gRPC error; only bytes that are not the request message are
//! INVALID_ARGUMENT.
//!
//! Must never: panic on a request, or hand out vectors (the store has none; asking for one is a
//! refusal that says so).

use super::expr::{Operand, parse};
use super::rows::{Mode, column, rows};
use super::store::{Cell, Collection, DEFAULT_DB, Key, Refusal, Row, Store, dt, flag, number, pairs, text};
use crate::wire::scan::{Value as W, fields};
use crate::wire::varint::write_varint;
use bytes::Bytes;
use prost_reflect::{DescriptorPool, DynamicMessage, MessageDescriptor, Value};
use serde_json::{Value as J, json};
use tonic::Status;

/// The descriptors the rpcs decode and encode with.
pub struct DmlTypes {
    schema: MessageDescriptor,
    field: MessageDescriptor,
    scalar: MessageDescriptor,
    status: MessageDescriptor,
    bool_resp: MessageDescriptor,
    describe_resp: MessageDescriptor,
    mutation: MessageDescriptor,
    query_resp: MessageDescriptor,
    requests: Vec<(&'static str, MessageDescriptor)>,
}

const RPCS: [&str; 10] = [
    "CreateCollection",
    "DropCollection",
    "HasCollection",
    "DescribeCollection",
    "AddCollectionField",
    "CreatePartition",
    "Insert",
    "Delete",
    "Upsert",
    "Query",
];

impl DmlTypes {
    pub fn new(pool: &DescriptorPool) -> Result<DmlTypes, String> {
        let get = |n: &str| pool.get_message_by_name(n).ok_or_else(|| format!("built-in schema lacks {n}"));
        let svc = pool
            .get_service_by_name("milvus.proto.milvus.MilvusService")
            .ok_or("built-in schema lacks MilvusService")?;
        let mut requests = Vec::new();
        for rpc in RPCS {
            let m = svc
                .methods()
                .find(|m| m.name() == rpc)
                .ok_or_else(|| format!("MilvusService lacks {rpc}"))?;
            requests.push((rpc, m.input()));
        }
        Ok(DmlTypes {
            schema: get("milvus.proto.schema.CollectionSchema")?,
            field: get("milvus.proto.schema.FieldSchema")?,
            scalar: get("milvus.proto.schema.ScalarField")?,
            status: get("milvus.proto.common.Status")?,
            bool_resp: get("milvus.proto.milvus.BoolResponse")?,
            describe_resp: get("milvus.proto.milvus.DescribeCollectionResponse")?,
            mutation: get("milvus.proto.milvus.MutationResult")?,
            query_resp: get("milvus.proto.milvus.QueryResults")?,
            requests,
        })
    }

    pub fn scalar(&self) -> &MessageDescriptor {
        &self.scalar
    }
}

fn encode(d: &MessageDescriptor, v: J) -> Result<Bytes, Status> {
    DynamicMessage::deserialize(d.clone(), v)
        .map(|m| Bytes::from(crate::codec::encode(&m)))
        .map_err(|e| Status::internal(format!("demo reply for {}: {e}", d.full_name())))
}

/// Serves `method` if it is a collection rpc (None: not one of them). `db` is the `dbname`
/// header.
pub fn dispatch(
    store: &Store,
    t: &DmlTypes,
    method: &str,
    db: Option<&str>,
    body: &[u8],
) -> Option<Result<Bytes, Status>> {
    let (_, input) = t.requests.iter().find(|(m, _)| *m == method)?;
    Some(serve(store, t, method, input, db, body))
}

fn serve(
    store: &Store,
    t: &DmlTypes,
    method: &str,
    input: &MessageDescriptor,
    db: Option<&str>,
    body: &[u8],
) -> Result<Bytes, Status> {
    let bad =
        |e: String| Status::invalid_argument(format!("request is not a valid {}: {e}", input.full_name()));
    // Insert and Upsert: fields_data (5) is read from the wire, the rest decoded.
    let (req, columns) = if method == "Insert" || method == "Upsert" {
        let (rest, cols) = split_fields_data(body).map_err(|()| bad("bad wire bytes".into()))?;
        (DynamicMessage::decode(input.clone(), rest.as_slice()).map_err(|e| bad(e.to_string()))?, cols)
    } else {
        (DynamicMessage::decode(input.clone(), body).map_err(|e| bad(e.to_string()))?, Vec::new())
    };
    let reply = |d: &MessageDescriptor, r: Result<J, Refusal>| match r {
        Ok(v) => encode(d, v),
        Err(refusal) => {
            encode(d, if d == &t.status { refusal.status() } else { json!({"status": refusal.status()}) })
        }
    };
    let name = text(&req, "collection_name");
    let database = Some(text(&req, "db_name")).filter(|d| !d.is_empty()).or(db.map(str::to_string));
    if let Some(d) = database.filter(|d| !d.is_empty() && d != DEFAULT_DB) {
        let d_out = if matches!(
            method,
            "CreateCollection" | "DropCollection" | "CreatePartition" | "AddCollectionField"
        ) {
            &t.status
        } else {
            reply_type(t, method)
        };
        return reply(d_out, Err(Refusal::no_database(&d)));
    }
    match method {
        "CreateCollection" => reply(&t.status, create(store, t, &name, &req).map(|()| json!({}))),
        "DropCollection" => {
            store.drop_collection(&name);
            reply(&t.status, Ok(json!({})))
        }
        "HasCollection" => reply(&t.bool_resp, Ok(json!({"status": {}, "value": store.has(&name)}))),
        "AddCollectionField" => {
            let raw = req.get_field_by_name("schema").and_then(|v| v.as_bytes().cloned()).unwrap_or_default();
            let added = DynamicMessage::decode(t.field.clone(), raw.as_ref())
                .map_err(|e| Refusal::invalid(format!("failed to unmarshal the field schema: {e}")))
                .and_then(|f| store.add_field(&name, f));
            reply(&t.status, added.map(|()| json!({})))
        }
        "CreatePartition" => {
            reply(&t.status, store.create_partition(&name, &text(&req, "partition_name")).map(|()| json!({})))
        }
        "DescribeCollection" => {
            let name = match (name.is_empty(), number(&req, "collectionID")) {
                (true, id) if id != 0 => store.name_of(id).unwrap_or_else(|| id.to_string()),
                _ => name,
            };
            match store.with(&name, |c| (describe(c), c.schema.clone())) {
                Ok((v, schema)) => {
                    let mut m = DynamicMessage::deserialize(t.describe_resp.clone(), v)
                        .map_err(|e| Status::internal(format!("demo reply: {e}")))?;
                    m.set_field_by_name("schema", Value::Message(schema));
                    Ok(Bytes::from(crate::codec::encode(&m)))
                }
                Err(r) => reply(&t.describe_resp, Err(r)),
            }
        }
        "Insert" | "Upsert" => reply(&t.mutation, write(store, t, method, &name, &req, columns)),
        "Delete" => reply(&t.mutation, delete(store, &name, &req)),
        "Query" => reply(&t.query_resp, query(store, &name, &req)),
        _ => Err(Status::unimplemented(method.to_string())),
    }
}

fn reply_type<'a>(t: &'a DmlTypes, method: &str) -> &'a MessageDescriptor {
    match method {
        "HasCollection" => &t.bool_resp,
        "DescribeCollection" => &t.describe_resp,
        "Query" => &t.query_resp,
        _ => &t.mutation,
    }
}

/// The request without its `fields_data` (field 5), and each FieldData's bytes.
fn split_fields_data(body: &[u8]) -> Result<(Vec<u8>, Vec<&[u8]>), ()> {
    let (mut rest, mut cols) = (Vec::new(), Vec::new());
    for f in fields(body) {
        let (n, v) = f?;
        if n == 5 {
            let W::Len(b) = v else { return Err(()) };
            cols.push(b);
            continue;
        }
        let wire = match v {
            W::Varint(_) => 0,
            W::Fixed64(_) => 1,
            W::Len(_) => 2,
            W::Fixed32(_) => 5,
        };
        write_varint(u64::from(n) << 3 | wire, &mut rest);
        match v {
            W::Varint(x) => write_varint(x, &mut rest),
            W::Fixed64(x) => rest.extend_from_slice(&x.to_le_bytes()),
            W::Fixed32(x) => rest.extend_from_slice(&x.to_le_bytes()),
            W::Len(b) => {
                write_varint(b.len() as u64, &mut rest);
                rest.extend_from_slice(b);
            }
        }
    }
    Ok((rest, cols))
}

fn create(store: &Store, t: &DmlTypes, name: &str, req: &DynamicMessage) -> Result<(), Refusal> {
    let raw = req.get_field_by_name("schema").and_then(|v| v.as_bytes().cloned()).unwrap_or_default();
    let schema = DynamicMessage::decode(t.schema.clone(), raw.as_ref())
        .map_err(|e| Refusal::invalid(format!("failed to unmarshal the collection schema: {e}")))?;
    store.create(name, schema, pairs(req, "properties"), number(req, "consistency_level") as i32, None)
}

fn describe(c: &Collection) -> J {
    let vchannels: Vec<String> = (0..1).map(|i| format!("by-dev-rootcoord-dml_{i}_{}v{i}", c.id)).collect();
    let props: Vec<J> = c.properties.iter().map(|(k, v)| json!({"key": k, "value": v})).collect();
    json!({
        "status": {}, "collectionID": c.id.to_string(), "collection_name": c.name, "db_name": DEFAULT_DB,
        "db_id": "1", "virtual_channel_names": vchannels, "physical_channel_names": ["by-dev-rootcoord-dml_0"],
        "created_timestamp": c.created.to_string(), "created_utc_timestamp": (c.created >> 18).to_string(),
        // As the proxy fills them: the collection's last update time, and the same number as text.
        "update_timestamp": c.updated.to_string(), "update_timestamp_str": c.updated.to_string(),
        "shards_num": 1, "consistency_level": c.consistency_level, "properties": props,
        "num_partitions": c.partitions.len().to_string()
    })
}

fn ids_json(keys: &[Key]) -> J {
    if keys.iter().any(|k| matches!(k, Key::Str(_))) {
        let v: Vec<String> = keys
            .iter()
            .map(|k| match k {
                Key::Str(s) => s.clone(),
                Key::Int(i) => i.to_string(),
            })
            .collect();
        json!({"str_id": {"data": v}})
    } else {
        let v: Vec<String> = keys
            .iter()
            .map(|k| match k {
                Key::Int(i) => i.to_string(),
                Key::Str(s) => s.clone(),
            })
            .collect();
        json!({"int_id": {"data": v}})
    }
}

fn write(
    store: &Store,
    t: &DmlTypes,
    method: &str,
    name: &str,
    req: &DynamicMessage,
    cols: Vec<&[u8]>,
) -> Result<J, Refusal> {
    let mode = if method == "Upsert" { Mode::Upsert } else { Mode::Insert };
    if mode == Mode::Upsert && flag(req, "partial_update") {
        return Err(Refusal::unsupported("the demo does not support partial_update"));
    }
    let columns = cols.into_iter().map(|b| column(b, &t.scalar)).collect::<Result<Vec<_>, _>>()?;
    let num_rows = number(req, "num_rows") as usize;
    let partition_name = text(req, "partition_name");
    store.with_mut(name, |c, ts| {
        let partition = partition_of(c, &partition_name)?;
        let (new, generated) = rows(c, columns, num_rows, partition, mode, c.next_auto)?;
        if generated {
            c.next_auto = c.next_auto.saturating_add(new.len() as i64);
        }
        let keys: Vec<Key> = new.iter().map(|r| r.pk.clone()).collect();
        if mode == Mode::Upsert {
            c.remove(&keys, None);
        }
        c.push(new);
        let n = keys.len();
        let count = if mode == Mode::Upsert { "upsert_cnt" } else { "insert_cnt" };
        let mut reply = json!({"status": {}, "IDs": ids_json(&keys), "succ_index": (0..n as u32).collect::<Vec<_>>(),
            "timestamp": ts.to_string()});
        reply[count] = json!(n.to_string());
        Ok(reply)
    })
}

fn partition_of(c: &Collection, name: &str) -> Result<u32, Refusal> {
    if name.is_empty() {
        return Ok(0);
    }
    if c.has_partition_key() {
        return Err(Refusal::invalid(
            "not support manually specifying the partition names if partition key mode is used",
        ));
    }
    c.partition_index(name).ok_or_else(|| Refusal::no_partition(name))
}

/// The keys an expression names, checked against the collection's primary key.
fn keys_of(c: &Collection, expr: &str, req: &DynamicMessage) -> Result<Vec<Key>, Refusal> {
    let invalid = |why: String| Refusal::invalid(format!("cannot parse expression: {expr}, error: {why}"));
    let e = parse(expr).map_err(invalid)?;
    let pk = c.pk().ok_or_else(|| invalid("no primary key".into()))?;
    if e.field != pk.name {
        return Err(match c.field(&e.field) {
            None => invalid(format!("field {} not exist", e.field)),
            Some(_) => invalid(format!("the demo filters by the primary key ({}) only", pk.name)),
        });
    }
    let operand = match e.operand {
        Operand::Template(n) => template(req, &n).ok_or_else(|| {
            invalid(format!("the value of expression template variable name {{{n}}} is not found"))
        })?,
        o => o,
    };
    match (operand, pk.data_type) {
        (Operand::Ints(v), dt::INT64) => Ok(v.into_iter().map(Key::Int).collect()),
        (Operand::Strs(v), dt::VARCHAR) => Ok(v.into_iter().map(Key::Str).collect()),
        (Operand::Ints(v), _) if v.is_empty() => Ok(Vec::new()),
        _ => Err(invalid(format!("the values do not match the type of the primary key {}", pk.name))),
    }
}

/// `expr_template_values[name]` as literal keys.
fn template(req: &DynamicMessage, name: &str) -> Option<Operand> {
    let map = req.get_field_by_name("expr_template_values")?;
    let v = map.as_map()?.get(&prost_reflect::MapKey::String(name.to_string()))?.as_message()?.clone();
    let (fd, val) = v.fields().next()?;
    let list = |m: &DynamicMessage, n: &str| -> Option<Vec<Value>> {
        m.get_field_by_name(n)?.as_message()?.get_field_by_name("data")?.as_list().map(<[Value]>::to_vec)
    };
    match (fd.name(), val) {
        ("int64_val", Value::I64(i)) => Some(Operand::Ints(vec![*i])),
        ("string_val", Value::String(s)) => Some(Operand::Strs(vec![s.clone()])),
        ("array_val", Value::Message(a)) => {
            let (set, _) = a.fields().next()?;
            let items = list(a, set.name())?;
            match set.name() {
                "long_data" => Some(Operand::Ints(items.iter().filter_map(Value::as_i64).collect())),
                "string_data" => {
                    Some(Operand::Strs(items.iter().filter_map(|s| s.as_str().map(str::to_string)).collect()))
                }
                _ => None,
            }
        }
        _ => None,
    }
}

fn delete(store: &Store, name: &str, req: &DynamicMessage) -> Result<J, Refusal> {
    let expr = text(req, "expr");
    let partition = text(req, "partition_name");
    store.with_mut(name, |c, ts| {
        let keys = keys_of(c, &expr, req)?;
        let p = if partition.is_empty() { None } else { Some(partition_of(c, &partition)?) };
        c.remove(&keys, p);
        // As the proxy counts a delete by keys: the keys it was given. It sends no keys back
        // (pymilvus would return those instead of the count).
        Ok(json!({"status": {}, "IDs": {}, "delete_cnt": keys.len().to_string(), "timestamp": ts.to_string()}))
    })
}

fn query(store: &Store, name: &str, req: &DynamicMessage) -> Result<J, Refusal> {
    let expr = text(req, "expr");
    let output: Vec<String> = match req.get_field_by_name("output_fields").as_deref() {
        Some(Value::List(l)) => l.iter().filter_map(|v| v.as_str().map(str::to_string)).collect(),
        _ => Vec::new(),
    };
    let params = pairs(req, "query_params");
    let param = |k: &str| params.iter().find(|(pk, _)| pk == k).and_then(|(_, v)| v.parse::<usize>().ok());
    let (limit, offset) = (param("limit"), param("offset").unwrap_or(0));
    let partitions: Vec<String> = match req.get_field_by_name("partition_names").as_deref() {
        Some(Value::List(l)) => l.iter().filter_map(|v| v.as_str().map(str::to_string)).collect(),
        _ => Vec::new(),
    };
    store.with(name, |c| {
        let parts = partitions.iter().map(|p| c.partition_index(p).ok_or_else(|| Refusal::no_partition(p))).collect::<Result<Vec<u32>, _>>()?;
        let count = output.iter().any(|o| o.eq_ignore_ascii_case("count(*)"));
        if count && output.len() > 1 {
            return Err(Refusal::invalid("count entities with other output fields is not allowed"));
        }
        if expr.trim().is_empty() && !count && limit.is_none() {
            return Err(Refusal::invalid("empty expression should be used with limit"));
        }
        let keyed = if expr.trim().is_empty() { None } else { Some(keys_of(c, &expr, req)?) };
        let matching: Vec<&Row> = match &keyed {
            Some(keys) => c.rows_with(keys),
            None => c.rows().collect(),
        };
        let mut hits: Vec<&Row> =
            matching.into_iter().filter(|r| parts.is_empty() || parts.contains(&r.partition)).collect();
        if count {
            return Ok(json!({"status": {}, "collection_name": c.name, "output_fields": ["count(*)"],
                "primary_field_name": c.pk().map(|f| f.name.clone()).unwrap_or_default(),
                "fields_data": [{"type": "Int64", "field_name": "count(*)", "scalars": {"long_data": {"data": [hits.len().to_string()]}}}]}));
        }
        hits = hits.into_iter().skip(offset).take(limit.unwrap_or(usize::MAX)).collect();
        query_reply(c, &output, &hits)
    })?
}

fn query_reply(c: &Collection, output: &[String], hits: &[&Row]) -> Result<J, Refusal> {
    let pk = c.pk().map(|f| f.name.clone()).unwrap_or_default();
    let mut names: Vec<String> = Vec::new();
    for o in output {
        if o == "*" {
            names.extend(c.fields.iter().filter(|f| !f.is_vector()).map(|f| f.name.clone()));
            continue;
        }
        let f = c.field(o).ok_or_else(|| Refusal::invalid(format!("field {o} not exist")))?;
        if f.is_vector() {
            return Err(Refusal::unsupported(format!(
                "the demo keeps no vectors: field {o} cannot be an output field"
            )));
        }
        names.push(o.clone());
    }
    if !names.contains(&pk) {
        names.insert(0, pk.clone());
    }
    let mut seen = Vec::new();
    names.retain(|n| {
        if seen.contains(n) {
            false
        } else {
            seen.push(n.clone());
            true
        }
    });
    let mut columns = Vec::new();
    for n in &names {
        let Some(f) = c.field(n) else { continue };
        let values: Vec<Cell> = hits
            .iter()
            .map(|r| {
                if f.is_pk {
                    match &r.pk {
                        Key::Int(i) => Cell::Int(*i),
                        Key::Str(s) => Cell::Str(s.clone()),
                    }
                } else {
                    c.slot(n).and_then(|s| r.cells.get(s).cloned()).unwrap_or(Cell::Null)
                }
            })
            .collect();
        columns.push(field_data(f.name.as_str(), f.id, f.data_type, f.nullable, &values));
    }
    Ok(json!({"status": {}, "collection_name": c.name, "output_fields": names, "primary_field_name": pk,
        "fields_data": columns}))
}

fn field_data(name: &str, id: i64, data_type: i32, nullable: bool, values: &[Cell]) -> J {
    let (key, data): (&str, Vec<J>) = match data_type {
        dt::BOOL => ("bool_data", values.iter().map(|v| json!(matches!(v, Cell::Bool(true)))).collect()),
        dt::INT8 | dt::INT16 | dt::INT32 => {
            ("int_data", values.iter().map(|v| json!(if let Cell::Int(i) = v { *i } else { 0 })).collect())
        }
        dt::INT64 => (
            "long_data",
            values
                .iter()
                .map(|v| json!(if let Cell::Int(i) = v { i.to_string() } else { "0".into() }))
                .collect(),
        ),
        dt::FLOAT => (
            "float_data",
            values.iter().map(|v| json!(if let Cell::Float(x) = v { *x } else { 0.0 })).collect(),
        ),
        dt::DOUBLE => (
            "double_data",
            values.iter().map(|v| json!(if let Cell::Float(x) = v { *x } else { 0.0 })).collect(),
        ),
        dt::JSON => (
            "json_data",
            values
                .iter()
                .map(|v| json!(if let Cell::Bytes(b) = v { crate::walgen::b64(b) } else { String::new() }))
                .collect(),
        ),
        _ => (
            "string_data",
            values
                .iter()
                .map(|v| json!(if let Cell::Str(s) = v { s.clone() } else { String::new() }))
                .collect(),
        ),
    };
    let mut out = json!({"type": data_type, "field_name": name, "field_id": id.to_string(), "scalars": {key: {"data": data}}});
    if nullable {
        out["valid_data"] = json!(values.iter().map(|v| !matches!(v, Cell::Null)).collect::<Vec<_>>());
    }
    out
}
