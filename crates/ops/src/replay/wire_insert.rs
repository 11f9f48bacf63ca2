//! A WAL `msg.InsertRequest` read and rewritten at the wire level: its names, row count and
//! `fields_data` entries as borrowed bytes, the primary key column's values, and the public
//! `milvus.InsertRequest`/`UpsertRequest` built by copying the kept `FieldData` entries byte for
//! byte. The WAL and the public request carry the very same `schema.FieldData` message, so a
//! whole-message replay needs no decode of its vectors at all.
//!
//! Must never: guess. Anything it cannot read (an unexpected wire type, a bad length) is `None`,
//! and the caller takes the typed path, which explains the fault.

use super::Pk;
use super::schema_check::FieldShape;
use crate::wire::scan::{Value, fields};
use crate::wire::varint::{read_varint, write_varint};

/// What a replay needs of one WAL InsertRequest, borrowed from its bytes.
#[derive(Debug, Clone)]
pub struct InsertFacts<'a> {
    pub db: String,
    pub collection: String,
    pub partition: String,
    pub num_rows: u64,
    /// Each `fields_data` entry (a `schema.FieldData`), as it is on the wire.
    pub fields: Vec<&'a [u8]>,
}

fn text(b: &[u8]) -> Option<String> {
    std::str::from_utf8(b).ok().map(str::to_string)
}

/// Reads a WAL InsertRequest (db_name 3, collection_name 4, partition_name 5, fields_data 13,
/// num_rows 14); `None` when any field is not as the schema says.
pub fn read(payload: &[u8]) -> Option<InsertFacts<'_>> {
    let mut f = InsertFacts {
        db: String::new(),
        collection: String::new(),
        partition: String::new(),
        num_rows: 0,
        fields: Vec::new(),
    };
    for item in fields(payload) {
        match item.ok()? {
            (3, Value::Len(b)) => f.db = text(b)?,
            (4, Value::Len(b)) => f.collection = text(b)?,
            (5, Value::Len(b)) => f.partition = text(b)?,
            (13, Value::Len(b)) => f.fields.push(b),
            (14, Value::Varint(n)) => f.num_rows = n,
            (3 | 4 | 5 | 13 | 14, _) => return None,
            _ => {}
        }
    }
    Some(f)
}

/// A FieldData's `field_name` (2).
pub fn field_name(field: &[u8]) -> Option<String> {
    for item in fields(field) {
        if let (2, Value::Len(b)) = item.ok()? {
            return text(b);
        }
    }
    Some(String::new())
}

fn sub(buf: &[u8], number: u32) -> Option<Option<&[u8]>> {
    for item in fields(buf) {
        match item.ok()? {
            (n, Value::Len(b)) if n == number => return Some(Some(b)),
            (n, _) if n == number => return None,
            _ => {}
        }
    }
    Some(None)
}

/// The Int64 (`scalars.long_data.data`, packed or not) or VarChar (`scalars.string_data.data`)
/// values of a FieldData; `None` when it holds neither or cannot be read.
pub fn keys(field: &[u8]) -> Option<Vec<Pk>> {
    let scalars = sub(field, 3)??;
    if let Some(long) = sub(scalars, 3)? {
        let mut out = Vec::new();
        for item in fields(long) {
            match item.ok()? {
                (1, Value::Varint(v)) => out.push(Pk::Int(v as i64)),
                (1, Value::Len(packed)) => {
                    let mut pos = 0;
                    while pos < packed.len() {
                        let (v, next) = read_varint(packed, pos, packed.len()).ok()?;
                        out.push(Pk::Int(v as i64));
                        pos = next;
                    }
                }
                (1, _) => return None,
                _ => {}
            }
        }
        return Some(out);
    }
    if let Some(strings) = sub(scalars, 6)? {
        let mut out = Vec::new();
        for item in fields(strings) {
            match item.ok()? {
                (1, Value::Len(b)) => out.push(Pk::Str(text(b)?)),
                (1, _) => return None,
                _ => {}
            }
        }
        return Some(out);
    }
    None
}

/// The columns the FieldData entries describe (name, type, dim, dynamic), `pk` marked.
pub fn columns(
    facts: &InsertFacts<'_>,
    pk: &str,
    type_name: impl Fn(i32) -> String,
) -> Option<Vec<FieldShape>> {
    let mut out = Vec::new();
    for f in &facts.fields {
        let (mut name, mut ty, mut dim, mut dynamic, mut nullable) =
            (String::new(), 0i32, None, false, false);
        for item in fields(f) {
            match item.ok()? {
                (1, Value::Varint(v)) => ty = v as i32,
                (2, Value::Len(b)) => name = text(b)?,
                (4, Value::Len(v)) => {
                    for it in fields(v) {
                        if let (1, Value::Varint(d)) = it.ok()? {
                            dim = Some((d as i64).to_string());
                        }
                    }
                }
                (6, Value::Varint(v)) => dynamic = v != 0,
                (7, _) => nullable = true,
                _ => {}
            }
        }
        out.push(FieldShape {
            primary_key: name == pk,
            data_type: type_name(ty),
            dim,
            max_length: None,
            nullable,
            auto_id: false,
            partition_key: false,
            function_output: false,
            dynamic,
            name,
        });
    }
    Some(out)
}

fn put_len(out: &mut Vec<u8>, number: u32, bytes: &[u8]) {
    write_varint(((number as u64) << 3) | 2, out);
    write_varint(bytes.len() as u64, out);
    out.extend_from_slice(bytes);
}

/// The public Insert/Upsert request for every row (db_name 2, collection_name 3,
/// partition_name 4, fields_data 5, num_rows 7), the FieldData entries named in `drop` left out.
pub fn public_request(
    facts: &InsertFacts<'_>,
    rows: u64,
    drop: &[String],
    no_partition: bool,
) -> Option<Vec<u8>> {
    let size: usize = facts.fields.iter().map(|f| f.len() + 6).sum::<usize>() + 64;
    let mut out = Vec::with_capacity(size + facts.collection.len() + facts.db.len());
    if !facts.db.is_empty() {
        put_len(&mut out, 2, facts.db.as_bytes());
    }
    put_len(&mut out, 3, facts.collection.as_bytes());
    if !no_partition && !facts.partition.is_empty() {
        put_len(&mut out, 4, facts.partition.as_bytes());
    }
    for f in &facts.fields {
        if !drop.is_empty() && drop.contains(&field_name(f)?) {
            continue;
        }
        put_len(&mut out, 5, f);
    }
    write_varint(7 << 3, &mut out);
    write_varint(u32::try_from(rows).ok()? as u64, &mut out);
    Some(out)
}
