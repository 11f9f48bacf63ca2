//! A collection's shape as a replay needs it — from the new primary's DescribeCollection or the
//! dump's CreateCollection — and the differences between the two, each explained with what it
//! means for the replay (reference §5).
//!
//! Must never: call a difference harmless that makes the new primary refuse rows.

use prost_reflect::{DynamicMessage, ReflectMessage, Value};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldShape {
    pub name: String,
    pub data_type: String,
    pub dim: Option<String>,
    pub max_length: Option<String>,
    pub nullable: bool,
    pub primary_key: bool,
    pub auto_id: bool,
    pub partition_key: bool,
    pub function_output: bool,
    pub dynamic: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CollectionShape {
    pub name: String,
    pub fields: Vec<FieldShape>,
    pub functions: Vec<String>,
    pub dynamic_field: bool,
    /// Collection property `allow_insert_auto_id` is true.
    pub allow_insert_auto_id: bool,
}

fn text(m: &DynamicMessage, f: &str) -> String {
    m.get_field_by_name(f).and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
}

fn flag(m: &DynamicMessage, f: &str) -> bool {
    m.get_field_by_name(f).and_then(|v| v.as_bool()).unwrap_or(false)
}

fn list(m: &DynamicMessage, f: &str) -> Vec<DynamicMessage> {
    match m.get_field_by_name(f).as_deref() {
        Some(Value::List(l)) => l.iter().filter_map(|v| v.as_message().cloned()).collect(),
        _ => Vec::new(),
    }
}

fn kv(m: &DynamicMessage, f: &str, key: &str) -> Option<String> {
    list(m, f).iter().find(|p| text(p, "key") == key).map(|p| text(p, "value"))
}

fn enum_name(m: &DynamicMessage, f: &str) -> String {
    let Some(fd) = m.descriptor().get_field_by_name(f) else { return String::new() };
    let n = m.get_field_by_name(f).and_then(|v| v.as_enum_number()).unwrap_or(0);
    match fd.kind() {
        prost_reflect::Kind::Enum(e) => e.get_value(n).map_or(n.to_string(), |v| v.name().to_string()),
        _ => n.to_string(),
    }
}

impl CollectionShape {
    /// From a `schema.CollectionSchema`; `properties` are the collection's (DescribeCollection
    /// has them beside the schema).
    pub fn of_schema(schema: &DynamicMessage, properties: Option<&DynamicMessage>) -> CollectionShape {
        let fields = list(schema, "fields")
            .iter()
            .map(|f| FieldShape {
                name: text(f, "name"),
                data_type: enum_name(f, "data_type"),
                dim: kv(f, "type_params", "dim"),
                max_length: kv(f, "type_params", "max_length"),
                nullable: flag(f, "nullable"),
                primary_key: flag(f, "is_primary_key"),
                auto_id: flag(f, "autoID") || (flag(f, "is_primary_key") && flag(schema, "autoID")),
                partition_key: flag(f, "is_partition_key"),
                function_output: flag(f, "is_function_output"),
                dynamic: flag(f, "is_dynamic"),
            })
            .collect();
        let allowed = |m: &DynamicMessage| {
            kv(m, "properties", "allow_insert_auto_id").is_some_and(|v| v.eq_ignore_ascii_case("true"))
        };
        CollectionShape {
            name: text(schema, "name"),
            fields,
            functions: list(schema, "functions").iter().map(|f| text(f, "name")).collect(),
            dynamic_field: flag(schema, "enable_dynamic_field"),
            allow_insert_auto_id: allowed(schema) || properties.is_some_and(allowed),
        }
    }

    pub fn primary_key(&self) -> Option<&FieldShape> {
        self.fields.iter().find(|f| f.primary_key)
    }

    pub fn has_partition_key(&self) -> bool {
        self.fields.iter().any(|f| f.partition_key)
    }

    pub fn field(&self, name: &str) -> Option<&FieldShape> {
        self.fields.iter().find(|f| f.name == name)
    }
}

/// The columns a WAL InsertRequest's `fields_data` carries (name, type, dim), `pk` marked.
pub fn columns_of(insert: &DynamicMessage, pk: &str) -> Vec<FieldShape> {
    list(insert, "fields_data")
        .iter()
        .map(|f| {
            let name = text(f, "field_name");
            let dim = f
                .get_field_by_name("vectors")
                .filter(|_| f.has_field_by_name("vectors"))
                .and_then(|v| {
                    v.as_message().and_then(|v| v.get_field_by_name("dim").and_then(|d| d.as_i64()))
                })
                .map(|d| d.to_string());
            FieldShape {
                primary_key: name == pk,
                data_type: enum_name(f, "type"),
                dim,
                max_length: None,
                nullable: !list(f, "valid_data").is_empty(),
                auto_id: false,
                partition_key: false,
                function_output: false,
                dynamic: flag(f, "is_dynamic"),
                name,
            }
        })
        .collect()
}

/// Compares the columns the dump's Inserts carry with the new primary's schema: the check
/// when the dump has no CreateCollection (names, types, dims only).
pub fn compare_columns(
    collection: &str,
    columns: &[FieldShape],
    target: &CollectionShape,
) -> Vec<SchemaDifference> {
    let mut out = Vec::new();
    let mut say = |what: String, blocking: bool| {
        out.push(SchemaDifference { collection: collection.to_string(), what, blocking })
    };
    for f in columns.iter().filter(|f| f.dynamic) {
        if !target.dynamic_field {
            say(
                format!(
                    "the Inserts carry dynamic field {}; the new primary has no dynamic field: rows are refused",
                    f.name
                ),
                true,
            );
        }
    }
    let fixed: Vec<FieldShape> = columns.iter().filter(|f| !f.dynamic).cloned().collect();
    common_fields(&fixed, target, "the Inserts", |f| f.dim.is_some(), &mut say);
    out
}

/// What both checks compare: every field of `fields` (from `source`) on the new primary with
/// its type and dim (`dim_known`: whether the source says a dim), and the new primary's fields
/// a row must carry.
fn common_fields(
    fields: &[FieldShape],
    target: &CollectionShape,
    source: &str,
    dim_known: impl Fn(&FieldShape) -> bool,
    say: &mut impl FnMut(String, bool),
) {
    for f in fields {
        let Some(t) = target.field(&f.name) else {
            say(
                format!(
                    "field {}: in {source}, not on the new primary: Inserts carrying it are refused",
                    f.name
                ),
                true,
            );
            continue;
        };
        if f.data_type != t.data_type {
            let what = format!(
                "type {} in {source}, {} on the new primary: rows are refused",
                f.data_type, t.data_type
            );
            say(format!("field {}: {what}", f.name), true);
        }
        if dim_known(f) && f.dim != t.dim {
            let what = format!(
                "dim {} in {source}, {} on the new primary: vectors are refused",
                show(&f.dim),
                show(&t.dim)
            );
            say(format!("field {}: {what}", f.name), true);
        }
    }
    for t in &target.fields {
        let carried = fields.iter().any(|f| f.name == t.name);
        if !carried && !t.nullable && !t.function_output && !t.auto_id && !t.dynamic {
            say(
                format!(
                    "field {}: on the new primary only and not nullable: every replayed Insert is refused",
                    t.name
                ),
                true,
            );
        }
    }
}

/// One difference between the dump's schema and the new primary's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SchemaDifference {
    pub collection: String,
    pub what: String,
    /// True when rows will be refused or land wrong: the apply stops until it is resolved.
    pub blocking: bool,
}

/// Compares what the dump was written with (`dump`) against the new primary (`target`).
pub fn compare(dump: &CollectionShape, target: &CollectionShape) -> Vec<SchemaDifference> {
    let c = &target.name;
    let mut out = Vec::new();
    let mut say =
        |what: String, blocking: bool| out.push(SchemaDifference { collection: c.clone(), what, blocking });
    common_fields(&dump.fields, target, "the dump", |_| true, &mut say);
    for f in &dump.fields {
        let Some(t) = target.field(&f.name) else { continue };
        if f.max_length != t.max_length {
            let shorter = matches!((f.max_length.as_deref().and_then(|v| v.parse::<u64>().ok()), t.max_length.as_deref().and_then(|v| v.parse::<u64>().ok())), (Some(a), Some(b)) if b < a);
            let what = format!(
                "field {}: max_length {} in the dump, {} on the new primary",
                f.name,
                show(&f.max_length),
                show(&t.max_length)
            );
            say(
                if shorter {
                    format!("{what}: values longer than {} are refused", show(&t.max_length))
                } else {
                    what
                },
                false,
            );
        }
        if f.nullable != t.nullable {
            say(
                format!(
                    "field {}: nullable {} in the dump, {} on the new primary{}",
                    f.name,
                    f.nullable,
                    t.nullable,
                    if f.nullable { ": rows with nulls are refused" } else { "" }
                ),
                f.nullable,
            );
        }
        if f.primary_key != t.primary_key {
            say(
                format!(
                    "field {}: primary key in {} only: deletes and the conflict check would use the wrong key",
                    f.name,
                    if f.primary_key { "the dump" } else { "the new primary" }
                ),
                true,
            );
        }
        if f.auto_id != t.auto_id {
            say(
                format!(
                    "field {}: auto id {} in the dump, {} on the new primary",
                    f.name, f.auto_id, t.auto_id
                ),
                false,
            );
        }
        if f.partition_key != t.partition_key {
            say(
                format!(
                    "field {}: partition key {} in the dump, {} on the new primary: rows land in other partitions",
                    f.name, f.partition_key, t.partition_key
                ),
                false,
            );
        }
    }
    if dump.functions != target.functions {
        say(
            format!(
                "functions {:?} in the dump, {:?} on the new primary (function outputs are never sent)",
                dump.functions, target.functions
            ),
            false,
        );
    }
    if dump.dynamic_field != target.dynamic_field {
        say(
            format!(
                "dynamic field {} in the dump, {} on the new primary{}",
                dump.dynamic_field,
                target.dynamic_field,
                if dump.dynamic_field { ": rows with dynamic keys are refused" } else { "" }
            ),
            dump.dynamic_field,
        );
    }
    out
}

fn show(v: &Option<String>) -> &str {
    v.as_deref().unwrap_or("(none)")
}
