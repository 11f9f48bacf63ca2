//! Columns to rows for the demo Milvus: `fields_data` (`schema.FieldData`) read straight from
//! the wire, so a large Insert's vectors are hashed where they lie instead of becoming a list
//! of decoded floats; then the proxy's checks against the collection's schema (every needed
//! field present with `num_rows` values, vector dims, VarChar lengths, nullability, auto id)
//! and the rows the store keeps.
//!
//! Must never: panic on request bytes, or keep a vector (one digest per row is all).

use super::store::{Cell, Collection, Field, Key, Refusal, Row, dt};
use crate::wire::scan::{Value as W, fields};
use prost_reflect::{DynamicMessage, MessageDescriptor, Value};

/// One `FieldData` as sent.
#[derive(Debug)]
pub struct Column {
    pub name: String,
    pub data_type: i32,
    pub dynamic: bool,
    pub data: Data,
    pub valid: Vec<bool>,
}

impl Column {
    /// How many values it has.
    pub fn rows(&self) -> usize {
        self.data.len()
    }
}

#[derive(Debug)]
pub enum Data {
    Cells(Vec<Cell>),
    /// Per row, a digest of its vector; `dim` as the column says.
    Vectors {
        dim: i64,
        digests: Vec<u64>,
    },
}

impl Data {
    fn len(&self) -> usize {
        match self {
            Data::Cells(c) => c.len(),
            Data::Vectors { digests, .. } => digests.len(),
        }
    }
}

/// How the rows are checked.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Mode {
    Insert,
    /// The key is required, also on an auto-id collection.
    Upsert,
    /// A WAL Insert the new primary received before the promotion: keys as written.
    Replicated,
}

fn fnv(h: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(h, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3))
}
const FNV0: u64 = 0xcbf2_9ce4_8422_2325;

fn malformed(what: &str) -> Refusal {
    Refusal::invalid(format!("malformed {what} in fields_data"))
}

/// Reads one `schema.FieldData`; `scalar` is the `schema.ScalarField` descriptor.
pub fn column(bytes: &[u8], scalar: &MessageDescriptor) -> Result<Column, Refusal> {
    let mut col = Column {
        name: String::new(),
        data_type: 0,
        dynamic: false,
        data: Data::Cells(Vec::new()),
        valid: Vec::new(),
    };
    for f in fields(bytes) {
        match f.map_err(|()| malformed("FieldData"))? {
            (1, W::Varint(v)) => col.data_type = v as i32,
            (2, W::Len(b)) => {
                col.name = String::from_utf8(b.to_vec()).map_err(|_| malformed("field_name"))?
            }
            (3, W::Len(b)) => {
                let m = DynamicMessage::decode(scalar.clone(), b).map_err(|_| malformed("scalars"))?;
                col.data = Data::Cells(cells(&m)?);
            }
            (4, W::Len(b)) => col.data = vectors(b)?,
            (6, W::Varint(v)) => col.dynamic = v != 0,
            (7, W::Varint(v)) => col.valid.push(v != 0),
            (7, W::Len(b)) => col.valid.extend(b.iter().map(|x| *x != 0)),
            (8, _) => return Err(Refusal::unsupported("the demo does not support struct array fields")),
            _ => {}
        }
    }
    Ok(col)
}

fn cells(m: &DynamicMessage) -> Result<Vec<Cell>, Refusal> {
    let Some(set) = m.fields().map(|(fd, _)| fd).find(|fd| fd.containing_oneof().is_some()) else {
        return Ok(Vec::new());
    };
    let data = m.get_field(&set);
    let Some(Value::List(list)) =
        data.as_message().and_then(|a| a.get_field_by_name("data")).map(|v| v.into_owned())
    else {
        return Ok(Vec::new());
    };
    list.iter()
        .map(|v| match v {
            Value::Bool(b) => Ok(Cell::Bool(*b)),
            Value::I32(i) => Ok(Cell::Int(i64::from(*i))),
            Value::I64(i) => Ok(Cell::Int(*i)),
            Value::F32(x) => Ok(Cell::Float(f64::from(*x))),
            Value::F64(x) => Ok(Cell::Float(*x)),
            Value::String(s) => Ok(Cell::Str(s.clone())),
            Value::Bytes(b) => Ok(Cell::Bytes(b.to_vec())),
            _ => Err(Refusal::unsupported(format!("the demo does not support scalar data {}", set.name()))),
        })
        .collect()
}

/// A `schema.VectorField`: per row a digest, and the dim it states.
fn vectors(bytes: &[u8]) -> Result<Data, Refusal> {
    let mut dim = 0i64;
    let mut raw: Vec<u8> = Vec::new();
    let mut per_row_of_dim: Option<fn(i64) -> i64> = None;
    let mut sparse: Option<Vec<u64>> = None;
    for f in fields(bytes) {
        match f.map_err(|()| malformed("vectors"))? {
            (1, W::Varint(v)) => dim = v as i64,
            (2, W::Len(b)) => {
                per_row_of_dim = Some(|d| d.saturating_mul(4));
                for x in fields(b) {
                    match x.map_err(|()| malformed("float_vector"))? {
                        (1, W::Len(packed)) => raw.extend_from_slice(packed),
                        (1, W::Fixed32(v)) => raw.extend_from_slice(&v.to_le_bytes()),
                        _ => {}
                    }
                }
            }
            (3, W::Len(b)) => {
                per_row_of_dim = Some(|d| d / 8);
                raw.extend_from_slice(b);
            }
            (4 | 5, W::Len(b)) => {
                per_row_of_dim = Some(|d| d.saturating_mul(2));
                raw.extend_from_slice(b);
            }
            (7, W::Len(b)) => {
                per_row_of_dim = Some(|d| d);
                raw.extend_from_slice(b);
            }
            (6, W::Len(b)) => {
                let mut rows = Vec::new();
                for x in fields(b) {
                    match x.map_err(|()| malformed("sparse_float_vector"))? {
                        (1, W::Len(row)) => rows.push(fnv(FNV0, row)),
                        (2, W::Varint(v)) => dim = v as i64,
                        _ => {}
                    }
                }
                sparse = Some(rows);
            }
            (8, _) => return Err(Refusal::unsupported("the demo does not support vector arrays")),
            _ => {}
        }
    }
    if let Some(digests) = sparse {
        return Ok(Data::Vectors { dim, digests });
    }
    let per_row = per_row_of_dim.map_or(0, |f| f(dim));
    if per_row <= 0 {
        return if raw.is_empty() && per_row_of_dim.is_none() {
            Ok(Data::Vectors { dim, digests: Vec::new() })
        } else {
            Err(Refusal::invalid(format!("invalid dim {dim} of vector field data")))
        };
    }
    let per_row = per_row as usize;
    if !raw.len().is_multiple_of(per_row) {
        return Err(Refusal::invalid(format!(
            "the length ({}) of vector data should divide the dim ({dim})",
            raw.len()
        )));
    }
    Ok(Data::Vectors { dim, digests: raw.chunks(per_row).map(|r| fnv(FNV0, r)).collect() })
}

fn type_matches(f: &Field, sent: i32) -> bool {
    sent == f.data_type || (f.data_type == dt::VARCHAR && sent == dt::STRING)
}

/// The proxy's checks of columns against the collection; the rows, and whether their keys were
/// generated (auto id: `next_auto`, `next_auto + 1`, ...). Nothing sized by `num_rows` is
/// allocated before every column sent is known to have that many values.
pub fn rows(
    c: &Collection,
    cols: Vec<Column>,
    num_rows: usize,
    partition: u32,
    mode: Mode,
    next_auto: i64,
) -> Result<(Vec<Row>, bool), Refusal> {
    let pk = c.pk().ok_or_else(|| Refusal::invalid("the collection has no primary key"))?.clone();
    if num_rows == 0 {
        return Err(Refusal::invalid("num_rows should be greater than 0"));
    }
    let mut by_field: Vec<Option<Column>> = c.fields.iter().map(|_| None).collect();
    for col in cols {
        if col.dynamic || col.name == "$meta" {
            if !c.enable_dynamic_field {
                return Err(Refusal::invalid("the dynamic field is not enabled on this collection"));
            }
            continue; // the demo keeps no dynamic fields
        }
        let Some(i) = c.fields.iter().position(|f| f.name == col.name) else {
            return Err(Refusal::invalid(format!(
                "the field ({}) is not in the collection schema",
                col.name
            )));
        };
        let f = &c.fields[i];
        if by_field[i].is_some() {
            return Err(Refusal::invalid(format!("duplicated field name {} in fields_data", f.name)));
        }
        if f.function_output && mode != Mode::Replicated {
            return Err(Refusal::invalid(format!(
                "attempt to insert function output field {}: function output fields are filled by the server",
                f.name
            )));
        }
        if f.is_pk && f.auto_id && mode == Mode::Insert && c.property("allow_insert_auto_id") != Some("true")
        {
            return Err(Refusal::invalid(format!(
                "can not assign primary field data when auto id enabled {}",
                f.name
            )));
        }
        if !type_matches(f, col.data_type) {
            return Err(Refusal::invalid(format!(
                "the data type ({}) of field data ({}) is not the schema's ({})",
                col.data_type, f.name, f.data_type
            )));
        }
        by_field[i] = Some(col);
    }
    if by_field.iter().all(Option::is_none) {
        return Err(Refusal::invalid("fields_data is empty"));
    }
    for (f, col) in c.fields.iter().zip(&by_field) {
        let Some(col) = col else { continue };
        let n = if col.valid.is_empty() || f.is_vector() { col.data.len() } else { col.valid.len() };
        if n != num_rows {
            return Err(Refusal::invalid(format!(
                "the num_rows ({n}) of field ({}) is not equal to passed num_rows ({num_rows})",
                f.name
            )));
        }
    }
    let mut stored: Vec<Vec<Cell>> = Vec::new();
    let mut digests = vec![FNV0; num_rows];
    let mut generated = false;
    let mut keys: Option<Vec<Key>> = None;
    for (f, col) in c.fields.iter().zip(by_field) {
        let Some(col) = col else {
            if f.is_pk && f.auto_id && mode != Mode::Upsert {
                let ids = (0..num_rows as i64).map(|i| next_auto.saturating_add(i));
                generated = true;
                keys = Some(match f.data_type {
                    dt::VARCHAR => ids.map(|i| Key::Str(i.to_string())).collect(),
                    _ => ids.map(Key::Int).collect(),
                });
                continue;
            }
            if f.is_pk {
                let verb = if mode == Mode::Upsert { "upsert" } else { "insert" };
                return Err(Refusal::invalid(format!(
                    "must assign pk when {verb}, primary field: {}",
                    f.name
                )));
            }
            if f.nullable || f.function_output {
                if f.is_stored() {
                    stored.push(vec![Cell::Null; num_rows]);
                }
                continue;
            }
            return Err(Refusal::invalid(format!(
                "fieldSchema({}) has no corresponding fieldData pass in",
                f.name
            )));
        };
        let values = expand(f, col, num_rows)?;
        match values {
            Data::Vectors { dim, digests: d } => {
                if f.data_type != dt::SPARSE_FLOAT_VECTOR && Some(dim) != f.dim {
                    return Err(Refusal::invalid(format!(
                        "the dim ({dim}) of field data({}) is not equal to schema dim ({})",
                        f.name,
                        f.dim.unwrap_or(0)
                    )));
                }
                for (acc, x) in digests.iter_mut().zip(d) {
                    *acc = acc.rotate_left(7) ^ x;
                }
            }
            Data::Cells(cells) => {
                check_cells(f, &cells)?;
                if f.is_pk {
                    keys = Some(cells.into_iter().map(|x| key_of(f, x)).collect::<Result<_, _>>()?);
                } else {
                    stored.push(cells);
                }
            }
        }
    }
    let keys = keys.ok_or_else(|| Refusal::invalid(format!("must assign pk, primary field: {}", pk.name)))?;
    let mut columns: Vec<std::vec::IntoIter<Cell>> = stored.into_iter().map(Vec::into_iter).collect();
    let rows = keys
        .into_iter()
        .zip(digests)
        .map(|(pk, vectors)| Row {
            pk,
            cells: columns.iter_mut().map(|c| c.next().unwrap_or(Cell::Null)).collect(),
            vectors,
            partition,
        })
        .collect();
    Ok((rows, generated))
}

/// The column's values, one per row (nulls filled in from `valid_data`).
fn expand(f: &Field, col: Column, num_rows: usize) -> Result<Data, Refusal> {
    let name = &f.name;
    let n = col.data.len();
    if col.valid.is_empty() || f.is_vector() {
        if n != num_rows {
            return Err(Refusal::invalid(format!(
                "the num_rows ({n}) of field ({name}) is not equal to passed num_rows ({num_rows})"
            )));
        }
        return Ok(col.data);
    }
    if col.valid.len() != num_rows {
        return Err(Refusal::invalid(format!(
            "the length of valid_data of field ({name}) is not equal to passed num_rows ({num_rows})"
        )));
    }
    if !f.nullable && col.valid.iter().any(|v| !v) {
        return Err(Refusal::invalid(format!(
            "the field ({name}) is not nullable, but valid_data has nulls"
        )));
    }
    let Data::Cells(cells) = col.data else { return Err(malformed("valid_data")) };
    let valid_count = col.valid.iter().filter(|v| **v).count();
    if n == num_rows {
        let out = cells.into_iter().zip(&col.valid).map(|(c, v)| if *v { c } else { Cell::Null }).collect();
        return Ok(Data::Cells(out));
    }
    if n != valid_count {
        return Err(Refusal::invalid(format!(
            "the num_rows ({n}) of field ({name}) is not equal to passed num_rows ({num_rows})"
        )));
    }
    let mut it = cells.into_iter();
    Ok(Data::Cells(
        col.valid.iter().map(|v| if *v { it.next().unwrap_or(Cell::Null) } else { Cell::Null }).collect(),
    ))
}

fn check_cells(f: &Field, cells: &[Cell]) -> Result<(), Refusal> {
    if let (Some(max), true) = (f.max_length, f.data_type == dt::VARCHAR) {
        for (i, c) in cells.iter().enumerate() {
            if let Cell::Str(s) = c
                && s.len() > max
            {
                return Err(Refusal::invalid(format!(
                    "length of varchar field {} exceeds max length, row number: {i}, length: {}, max length: {max}",
                    f.name,
                    s.len()
                )));
            }
        }
    }
    Ok(())
}

fn key_of(f: &Field, c: Cell) -> Result<Key, Refusal> {
    match c {
        Cell::Int(i) if f.data_type == dt::INT64 => Ok(Key::Int(i)),
        Cell::Str(s) if f.data_type == dt::VARCHAR => Ok(Key::Str(s)),
        _ => Err(Refusal::invalid(format!("invalid primary key data of field {}", f.name))),
    }
}
