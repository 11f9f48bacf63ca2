//! The demo Milvus's collections, in memory: per database (only `default` exists), by name, each
//! with its id, its `CollectionSchema` (field ids assigned 100, 101, ... as the root coordinator
//! does), properties, partitions (`_default` always) and rows. A row keeps its primary key and
//! its scalar values; vectors are checked (dim × rows) but kept only as one 64-bit digest per
//! row, so a million 128-dim rows cost about a hundred bytes each, not half a kilobyte.
//!
//! The rules are the real server's where the demo has the feature: Insert does not
//! de-duplicate keys (two inserts of pk 5 are two rows), an identical CreateCollection or
//! CreatePartition is accepted again (a different one is refused), DropCollection of an
//! unknown name succeeds. Where a real server would do more (vectors, indexes, search, partition
//! key bucketing into `_default_N`), the demo says so in the status instead of pretending.
//! The rpcs live in [`super::dml`], the schema checks in [`super::schema_check`], the
//! expressions in [`super::expr`].
//!
//! Must never: panic on request data (every defect is a [`Refusal`]), or keep vectors.

use prost_reflect::{DynamicMessage, Value};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, MutexGuard};

/// A primary key.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Key {
    Int(i64),
    Str(String),
}

/// One scalar value of a row.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Bytes(Vec<u8>),
}

/// `schema.DataType` numbers the demo handles.
pub mod dt {
    pub const BOOL: i32 = 1;
    pub const INT8: i32 = 2;
    pub const INT16: i32 = 3;
    pub const INT32: i32 = 4;
    pub const INT64: i32 = 5;
    pub const FLOAT: i32 = 10;
    pub const DOUBLE: i32 = 11;
    pub const STRING: i32 = 20;
    pub const VARCHAR: i32 = 21;
    pub const JSON: i32 = 23;
    pub const BINARY_VECTOR: i32 = 100;
    pub const FLOAT_VECTOR: i32 = 101;
    pub const FLOAT16_VECTOR: i32 = 102;
    pub const BFLOAT16_VECTOR: i32 = 103;
    pub const SPARSE_FLOAT_VECTOR: i32 = 104;
    pub const INT8_VECTOR: i32 = 105;
    pub const SUPPORTED: [i32; 16] = [
        BOOL,
        INT8,
        INT16,
        INT32,
        INT64,
        FLOAT,
        DOUBLE,
        STRING,
        VARCHAR,
        JSON,
        BINARY_VECTOR,
        FLOAT_VECTOR,
        FLOAT16_VECTOR,
        BFLOAT16_VECTOR,
        SPARSE_FLOAT_VECTOR,
        INT8_VECTOR,
    ];
}

/// A field of a collection's schema, as the demo checks data against it.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    pub id: i64,
    pub name: String,
    pub data_type: i32,
    pub is_pk: bool,
    pub auto_id: bool,
    pub dim: Option<i64>,
    pub max_length: Option<usize>,
    pub nullable: bool,
    pub partition_key: bool,
    pub function_output: bool,
}

impl Field {
    pub fn is_vector(&self) -> bool {
        (100..200).contains(&self.data_type)
    }
    /// Kept per row (neither the key nor a vector).
    pub fn is_stored(&self) -> bool {
        !self.is_pk && !self.is_vector()
    }
}

/// A row: its key, its stored scalar fields (in schema order), a digest of its vectors.
#[derive(Debug, Clone)]
pub struct Row {
    pub pk: Key,
    pub cells: Box<[Cell]>,
    pub vectors: u64,
    pub partition: u32,
}

/// A Milvus error status: `code` (merr), the legacy `error_code` name, the reason.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    pub code: i32,
    pub error_code: &'static str,
    pub reason: String,
}

impl Refusal {
    /// merr.ErrParameterInvalid.
    pub fn invalid(reason: impl Into<String>) -> Refusal {
        Refusal { code: 1100, error_code: "IllegalArgument", reason: reason.into() }
    }
    /// merr.ErrCollectionNotFound.
    pub fn no_collection(name: &str) -> Refusal {
        Refusal {
            code: 100,
            error_code: "CollectionNotExists",
            reason: format!("collection not found[collection={name}]"),
        }
    }
    /// merr.ErrPartitionNotFound.
    pub fn no_partition(name: &str) -> Refusal {
        Refusal {
            code: 200,
            error_code: "UnexpectedError",
            reason: format!("partition not found[partition={name}]"),
        }
    }
    /// merr.ErrDatabaseNotFound.
    pub fn no_database(name: &str) -> Refusal {
        Refusal {
            code: 800,
            error_code: "UnexpectedError",
            reason: format!("database not found[database={name}]"),
        }
    }
    /// What the demo does not do (a real server would).
    pub fn unsupported(reason: impl Into<String>) -> Refusal {
        Refusal { code: 65535, error_code: "UnexpectedError", reason: reason.into() }
    }
    pub fn status(&self) -> serde_json::Value {
        serde_json::json!({"error_code": self.error_code, "code": self.code, "reason": self.reason,
            "detail": self.reason})
    }
}

pub struct Collection {
    pub id: i64,
    pub name: String,
    /// The schema as DescribeCollection returns it (field ids assigned).
    pub schema: DynamicMessage,
    pub fields: Vec<Field>,
    pub enable_dynamic_field: bool,
    pub properties: Vec<(String, String)>,
    pub consistency_level: i32,
    pub partitions: Vec<String>,
    pub created: u64,
    /// The last schema change (creation, AddCollectionField): DescribeCollection's
    /// `update_timestamp`, a hybrid timestamp like `created`.
    pub updated: u64,
    /// The next generated key (auto id).
    pub next_auto: i64,
    rows: Vec<Option<Row>>,
    by_key: HashMap<Key, Vec<usize>>,
    live: usize,
}

impl Collection {
    pub fn pk(&self) -> Option<&Field> {
        self.fields.iter().find(|f| f.is_pk)
    }
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }
    /// The slot of a stored field in [`Row::cells`].
    pub fn slot(&self, name: &str) -> Option<usize> {
        self.fields.iter().filter(|f| f.is_stored()).position(|f| f.name == name)
    }
    pub fn property(&self, key: &str) -> Option<&str> {
        self.properties.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }
    pub fn has_partition_key(&self) -> bool {
        self.fields.iter().any(|f| f.partition_key)
    }
    pub fn partition_index(&self, name: &str) -> Option<u32> {
        self.partitions.iter().position(|p| p == name).map(|i| i as u32)
    }
    pub fn row_count(&self) -> usize {
        self.live
    }

    /// Every live row, in insertion order.
    pub fn rows(&self) -> impl Iterator<Item = &Row> {
        self.rows.iter().flatten()
    }

    /// The live rows with these keys, in insertion order.
    pub fn rows_with(&self, keys: &[Key]) -> Vec<&Row> {
        let mut at: Vec<usize> = keys.iter().filter_map(|k| self.by_key.get(k)).flatten().copied().collect();
        at.sort_unstable();
        at.dedup();
        at.into_iter().filter_map(|i| self.rows.get(i).and_then(Option::as_ref)).collect()
    }

    /// Appends rows; keys are not de-duplicated (as Milvus).
    pub fn push(&mut self, rows: Vec<Row>) {
        for row in rows {
            self.by_key.entry(row.pk.clone()).or_default().push(self.rows.len());
            self.rows.push(Some(row));
            self.live += 1;
        }
    }

    /// Removes every row with one of these keys (in `partition` only, when given); how many.
    pub fn remove(&mut self, keys: &[Key], partition: Option<u32>) -> usize {
        let mut removed = 0;
        for k in keys {
            let Some(at) = self.by_key.get_mut(k) else { continue };
            at.retain(|&i| {
                let hit = self.rows[i].as_ref().is_some_and(|r| partition.is_none_or(|p| r.partition == p));
                if hit {
                    self.rows[i] = None;
                    removed += 1;
                }
                !hit
            });
            if at.is_empty() {
                self.by_key.remove(k);
            }
        }
        self.live -= removed;
        if self.rows.len() > 1024 && self.live < self.rows.len() / 2 {
            self.compact();
        }
        removed
    }

    fn compact(&mut self) {
        let rows: Vec<Row> = std::mem::take(&mut self.rows).into_iter().flatten().collect();
        self.by_key.clear();
        self.live = 0;
        self.push(rows);
    }
}

#[derive(Default)]
struct Inner {
    collections: BTreeMap<String, Collection>,
    next_id: i64,
    clock: u64,
}

/// Every collection of the demo's database `default`.
pub struct Store {
    inner: Mutex<Inner>,
}

/// The only database.
pub const DEFAULT_DB: &str = "default";

impl Store {
    /// An empty store whose hybrid clock starts after `clock`.
    pub fn new(clock: u64) -> Store {
        Store { inner: Mutex::new(Inner { next_id: 460_000_000_000_000_000, clock, ..Default::default() }) }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `f` on the collection `name`.
    pub fn with<T>(&self, name: &str, f: impl FnOnce(&Collection) -> T) -> Result<T, Refusal> {
        self.lock().collections.get(name).map(f).ok_or_else(|| Refusal::no_collection(name))
    }

    /// Runs `f` on the collection `name`, mutably, with the next timestamp.
    pub fn with_mut<T>(
        &self,
        name: &str,
        f: impl FnOnce(&mut Collection, u64) -> Result<T, Refusal>,
    ) -> Result<T, Refusal> {
        let mut g = self.lock();
        g.clock += 1;
        let ts = g.clock;
        let c = g.collections.get_mut(name).ok_or_else(|| Refusal::no_collection(name))?;
        f(c, ts)
    }

    /// Moves the clock to at least `ts` (the seed's WAL timeticks).
    pub fn advance(&self, ts: u64) {
        let mut g = self.lock();
        g.clock = g.clock.max(ts);
    }

    pub fn names(&self) -> Vec<String> {
        self.lock().collections.keys().cloned().collect()
    }

    /// CreateCollection; `at` is the creation timestamp (None: now).
    pub fn create(
        &self,
        name: &str,
        schema: DynamicMessage,
        properties: Vec<(String, String)>,
        consistency_level: i32,
        at: Option<u64>,
    ) -> Result<(), Refusal> {
        let (schema, fields, dynamic) = super::schema_check::checked_schema(name, schema)?;
        let mut g = self.lock();
        if let Some(old) = g.collections.get(name) {
            // The root coordinator accepts an identical request again.
            if old.fields == fields && old.properties == properties && old.enable_dynamic_field == dynamic {
                return Ok(());
            }
            return Err(Refusal::invalid(format!(
                "create duplicate collection with different parameters, collection: {name}"
            )));
        }
        g.clock += 1;
        let created = at.unwrap_or(g.clock);
        g.next_id += 1;
        let id = g.next_id;
        g.collections.insert(
            name.to_string(),
            Collection {
                id,
                name: name.to_string(),
                schema,
                fields,
                enable_dynamic_field: dynamic,
                properties,
                consistency_level,
                partitions: vec!["_default".into()],
                created,
                updated: created,
                next_auto: 461_000_000_000_000_000 + (id % 1_000_000) * 1_000_000_000_000,
                rows: Vec::new(),
                by_key: HashMap::new(),
                live: 0,
            },
        );
        Ok(())
    }

    /// AddCollectionField: `field` (a schema.FieldSchema) joins the schema with the next field id;
    /// rows already stored read it as null. Upstream refuses a field that is neither nullable
    /// nor has a default (old rows would have no value), and so does the demo.
    pub fn add_field(&self, name: &str, field: DynamicMessage) -> Result<(), Refusal> {
        let field_name = text(&field, "name");
        if !flag(&field, "nullable") && !field.has_field_by_name("default_value") {
            return Err(Refusal::invalid(format!(
                "added field must be nullable or have a default value, field name = {field_name}"
            )));
        }
        let mut g = self.lock();
        let ts = g.clock + 1;
        let c = g.collections.get_mut(name).ok_or_else(|| Refusal::no_collection(name))?;
        if c.field(&field_name).is_some() {
            return Err(Refusal::invalid(format!("duplicate field name: {field_name}")));
        }
        let mut schema = c.schema.clone();
        if let Some(Value::List(list)) = schema.get_field_by_name_mut("fields") {
            list.push(Value::Message(field));
        }
        let (schema, fields, _) = super::schema_check::checked_schema(name, schema)?;
        let added = fields.len().saturating_sub(c.fields.len());
        for row in c.rows.iter_mut().flatten() {
            let mut cells = std::mem::take(&mut row.cells).into_vec();
            cells.extend((0..added).map(|_| Cell::Null));
            row.cells = cells.into_boxed_slice();
        }
        c.schema = schema;
        c.fields = fields;
        c.updated = ts;
        g.clock = ts;
        Ok(())
    }

    /// DropCollection: unknown names succeed, as on the real server.
    pub fn drop_collection(&self, name: &str) {
        self.lock().collections.remove(name);
    }

    pub fn has(&self, name: &str) -> bool {
        self.lock().collections.contains_key(name)
    }

    /// The name of the collection with this id.
    pub fn name_of(&self, id: i64) -> Option<String> {
        self.lock().collections.values().find(|c| c.id == id).map(|c| c.name.clone())
    }

    pub fn create_partition(&self, collection: &str, partition: &str) -> Result<(), Refusal> {
        self.with_mut(collection, |c, _| {
            if c.has_partition_key() {
                return Err(Refusal::invalid("disable create partition if partition key mode is used"));
            }
            if partition.is_empty() {
                return Err(Refusal::invalid("partition name should not be empty"));
            }
            if c.partition_index(partition).is_none() {
                c.partitions.push(partition.to_string());
            }
            Ok(())
        })
    }
}

// Field access on decoded messages, defaulting as proto3 does.
pub(super) fn text(m: &DynamicMessage, n: &str) -> String {
    m.get_field_by_name(n).and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
}
pub(super) fn flag(m: &DynamicMessage, n: &str) -> bool {
    m.get_field_by_name(n).and_then(|v| v.as_bool()).unwrap_or(false)
}
pub(super) fn number(m: &DynamicMessage, n: &str) -> i64 {
    match m.get_field_by_name(n).as_deref() {
        Some(Value::I64(v)) => *v,
        Some(Value::I32(v)) => i64::from(*v),
        Some(Value::U32(v)) => i64::from(*v),
        Some(Value::U64(v)) => *v as i64,
        Some(Value::EnumNumber(v)) => i64::from(*v),
        _ => 0,
    }
}
pub(super) fn messages(m: &DynamicMessage, n: &str) -> Vec<DynamicMessage> {
    match m.get_field_by_name(n).as_deref() {
        Some(Value::List(l)) => l.iter().filter_map(|v| v.as_message().cloned()).collect(),
        _ => Vec::new(),
    }
}
pub(super) fn pairs(m: &DynamicMessage, n: &str) -> Vec<(String, String)> {
    messages(m, n).iter().map(|kv| (text(kv, "key"), text(kv, "value"))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A row is its key, its scalars and one digest: a million 128-dim rows must not cost the
    /// half gigabyte their vectors would.
    #[test]
    fn rows_are_small_and_keys_repeat() {
        assert!(std::mem::size_of::<Row>() <= 64, "{}", std::mem::size_of::<Row>());
        assert!(std::mem::size_of::<Cell>() <= 32);
        let set = crate::schema::SchemaSet::builtin();
        let d = set.message("milvus.proto.schema.CollectionSchema").expect("schema type");
        let schema = DynamicMessage::deserialize(
            d,
            serde_json::json!({"name": "c", "fields": [{"name": "id", "is_primary_key": true, "data_type": "Int64"}]}),
        )
        .expect("schema");
        let store = Store::new(0);
        store.create("c", schema, Vec::new(), 0, None).expect("created");
        let row = |k| Row { pk: Key::Int(k), cells: Box::new([]), vectors: 0, partition: 0 };
        let removed = store
            .with_mut("c", |c, _| {
                c.push((0..3000).map(|i| row(i % 1000)).collect());
                assert_eq!(c.row_count(), 3000);
                assert_eq!(c.rows_with(&[Key::Int(5)]).len(), 3);
                Ok(c.remove(&(0..600).map(Key::Int).collect::<Vec<_>>(), None))
            })
            .expect("collection");
        assert_eq!(removed, 1800);
        // Compacted on the way (fewer than half live): the index still finds every key.
        store
            .with("c", |c| {
                assert_eq!(c.row_count(), 1200);
                assert_eq!(c.rows_with(&[Key::Int(700), Key::Int(5)]).len(), 3);
            })
            .expect("collection");
    }
}
