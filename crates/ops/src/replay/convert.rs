//! WAL bodies into public requests (reference `milvus-replay.md` §4): a WAL InsertRequest's
//! names and `fields_data` become a public Insert or Upsert (row ids, timestamps, segment,
//! shard and numeric ids dropped, hash keys left empty), cut into batches and with any rows the
//! plan leaves out removed; function outputs and, for new auto ids, the primary key column are
//! dropped; a partition-key collection gets no partition name.
//!
//! Must never: change a value it keeps, or send a column the new primary computes itself.

use super::schema_check::CollectionShape;
use crate::schema::SchemaSet;
use prost_reflect::{DynamicMessage, Kind, ReflectMessage, Value};

/// What to drop from the rows of one collection.
#[derive(Debug, Clone)]
pub struct Columns {
    /// Fields not sent: function outputs, and the primary key when new ids are wanted.
    pub drop: Vec<String>,
    /// Leave `partition_name` empty (partition-key collections).
    pub no_partition: bool,
}

impl Columns {
    pub fn for_target(target: &CollectionShape, new_auto_ids: bool) -> Columns {
        let mut drop: Vec<String> =
            target.fields.iter().filter(|f| f.function_output).map(|f| f.name.clone()).collect();
        if new_auto_ids && let Some(pk) = target.primary_key() {
            drop.push(pk.name.clone());
        }
        Columns { drop, no_partition: target.has_partition_key() }
    }
}

fn list_of(m: &DynamicMessage, f: &str) -> Vec<Value> {
    match m.get_field_by_name(f).as_deref() {
        Some(Value::List(l)) => l.clone(),
        _ => Vec::new(),
    }
}

fn pick<T: Clone>(items: &[T], per_row: usize, rows: &[usize]) -> Vec<T> {
    let mut out = Vec::with_capacity(rows.len().saturating_mul(per_row).min(items.len()));
    for &r in rows {
        if let Some(chunk) = items.get(r * per_row..(r + 1) * per_row) {
            out.extend_from_slice(chunk);
        }
    }
    out
}

/// The set member of a oneof-style message (the first non-default field other than `skip`).
fn set_member(m: &DynamicMessage, skip: &[&str]) -> Option<prost_reflect::FieldDescriptor> {
    m.descriptor()
        .fields()
        .find(|f| !skip.contains(&f.name()) && m.has_field(f) && f.containing_oneof().is_some())
}

/// Row `rows` of one FieldData column of `total` rows.
pub fn select_rows(field: &DynamicMessage, total: usize, rows: &[usize]) -> DynamicMessage {
    let mut out = field.clone();
    let valid: Vec<Value> = list_of(field, "valid_data");
    // Nullable columns may carry values for valid rows only: map row numbers to value slots.
    let slots = |len: usize| -> Vec<usize> {
        if len == total || valid.len() != total {
            return rows.to_vec();
        }
        let mut slot_of = Vec::with_capacity(total);
        let mut next = 0usize;
        for v in &valid {
            slot_of.push(next);
            if v.as_bool().unwrap_or(false) {
                next += 1;
            }
        }
        rows.iter()
            .filter(|r| valid.get(**r).and_then(|v| v.as_bool()).unwrap_or(false))
            .map(|r| slot_of[*r])
            .collect()
    };
    // Mutable access to an unset oneof member would set it, clearing its sibling: ask first.
    if field.has_field_by_name("scalars")
        && let Some(Value::Message(s)) = out.get_field_by_name_mut("scalars")
        && let Some(fd) = set_member(s, &["valid_data"])
        && let Value::Message(arr) = s.get_field_mut(&fd)
    {
        let data = list_of(arr, "data");
        let picked = pick(&data, 1, &slots(data.len()));
        arr.set_field_by_name("data", Value::List(picked));
    }
    if field.has_field_by_name("vectors")
        && let Some(Value::Message(v)) = out.get_field_by_name_mut("vectors")
    {
        let dim = v.get_field_by_name("dim").and_then(|d| d.as_i64()).unwrap_or(0).max(0) as usize;
        if let Some(fd) = set_member(v, &["dim", "valid_data"]) {
            let name = fd.name().to_string();
            match v.get_field_mut(&fd) {
                Value::Message(arr) if name == "float_vector" => {
                    let data = list_of(arr, "data");
                    let per = dim.max(1);
                    let picked = pick(&data, per, &slots(data.len() / per));
                    arr.set_field_by_name("data", Value::List(picked));
                }
                Value::Message(arr) => {
                    let key = if name == "sparse_float_vector" { "contents" } else { "data" };
                    let data = list_of(arr, key);
                    let picked = pick(&data, 1, &slots(data.len()));
                    arr.set_field_by_name(key, Value::List(picked));
                }
                Value::Bytes(b) => {
                    let per = match name.as_str() {
                        "binary_vector" => dim.div_ceil(8),
                        "float16_vector" | "bfloat16_vector" => dim * 2,
                        _ => dim,
                    }
                    .max(1);
                    let picked = pick(b.as_ref(), per, &slots(b.len() / per));
                    *b = bytes::Bytes::from(picked);
                }
                _ => {}
            }
        }
        if !list_of(v, "valid_data").is_empty() {
            let vd = list_of(v, "valid_data");
            v.set_field_by_name("valid_data", Value::List(pick(&vd, 1, rows)));
        }
    }
    if !valid.is_empty() {
        out.set_field_by_name("valid_data", Value::List(pick(&valid, 1, rows)));
    }
    out
}

/// A public Insert or Upsert (`call`) of `rows` of a WAL InsertRequest.
#[allow(clippy::too_many_arguments)]
pub fn rows_request(
    call: &str,
    wal: &DynamicMessage,
    db: &str,
    collection: &str,
    partition: &str,
    columns: &Columns,
    total: usize,
    rows: &[usize],
) -> Result<DynamicMessage, String> {
    let name = format!("milvus.proto.milvus.{call}Request");
    let desc = SchemaSet::shared_builtin().message(&name).map_err(|e| e.to_string())?;
    let mut req = DynamicMessage::new(desc.clone());
    req.set_field_by_name("db_name", Value::String(db.into()));
    req.set_field_by_name("collection_name", Value::String(collection.into()));
    if !columns.no_partition && !partition.is_empty() {
        req.set_field_by_name("partition_name", Value::String(partition.into()));
    }
    let all: Vec<usize> = (0..total).collect();
    let rows = if rows.len() == total { &all[..] } else { rows };
    let fields: Vec<Value> = list_of(wal, "fields_data")
        .iter()
        .filter_map(|v| v.as_message())
        .filter(|f| {
            let n = f
                .get_field_by_name("field_name")
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default();
            !columns.drop.contains(&n)
        })
        .map(|f| Value::Message(if rows.len() == total { f.clone() } else { select_rows(f, total, rows) }))
        .collect();
    let Some(fd) = desc.get_field_by_name("fields_data") else {
        return Err(format!("{name} has no fields_data"));
    };
    if !matches!(fd.kind(), Kind::Message(_)) {
        return Err(format!("{name}.fields_data is not a message list"));
    }
    req.set_field(&fd, Value::List(fields));
    req.set_field_by_name("num_rows", Value::U32(rows.len() as u32));
    Ok(req)
}

/// Rows per call for a body of `bytes` with `rows` rows: at most `batch`, and under `max_bytes`.
pub fn rows_per_call(batch: usize, rows: usize, bytes: usize, max_bytes: usize) -> usize {
    let per_row = bytes.div_ceil(rows.max(1)).max(1);
    batch.min(max_bytes / per_row).max(1)
}
