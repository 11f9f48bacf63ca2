//! The checks a new collection schema passes on the real proxy and root coordinator (names,
//! one Int64/VarChar primary key, dims, VarChar max_length, partition key, supported types), and
//! the field ids they assign (100, 101, ... in order).
//!
//! Must never: panic on a schema, or accept one the demo could not store rows for.

use super::store::{Field, Refusal, dt, flag, messages, number, pairs, text};
use prost_reflect::{DynamicMessage, Value};

/// The proxy's and root coordinator's checks of a new schema; the schema with field ids.
pub(super) fn checked_schema(
    name: &str,
    mut schema: DynamicMessage,
) -> Result<(DynamicMessage, Vec<Field>, bool), Refusal> {
    if name.is_empty() {
        return Err(Refusal::invalid("collection name should not be empty"));
    }
    let schema_name = text(&schema, "name");
    if schema_name != name {
        return Err(Refusal::invalid(format!("collection name = {name}, schema.Name={schema_name}")));
    }
    let outputs: Vec<String> = messages(&schema, "functions")
        .iter()
        .flat_map(|f| match f.get_field_by_name("output_field_names").as_deref() {
            Some(Value::List(l)) => l.iter().filter_map(|v| v.as_str().map(str::to_string)).collect(),
            _ => Vec::new(),
        })
        .collect();
    let schema_auto = flag(&schema, "autoID");
    let mut raw = messages(&schema, "fields");
    let mut fields = Vec::new();
    for (i, f) in raw.iter_mut().enumerate() {
        let params = pairs(f, "type_params");
        let param = |k: &str| params.iter().find(|(pk, _)| pk == k).map(|(_, v)| v.clone());
        let field = Field {
            id: 100 + i as i64,
            name: text(f, "name"),
            data_type: number(f, "data_type") as i32,
            is_pk: flag(f, "is_primary_key"),
            auto_id: flag(f, "autoID") || (schema_auto && flag(f, "is_primary_key")),
            dim: param("dim").map(|d| d.trim().parse::<i64>()).transpose().ok().flatten(),
            max_length: param("max_length").map(|d| d.trim().parse::<usize>()).transpose().ok().flatten(),
            nullable: flag(f, "nullable"),
            partition_key: flag(f, "is_partition_key"),
            function_output: flag(f, "is_function_output") || outputs.contains(&text(f, "name")),
        };
        check_field(&field, &param)?;
        if fields.iter().any(|o: &Field| o.name == field.name) {
            return Err(Refusal::invalid(format!("duplicated field name {}", field.name)));
        }
        f.set_field_by_name("fieldID", Value::I64(field.id));
        if field.auto_id {
            f.set_field_by_name("autoID", Value::Bool(true));
        }
        fields.push(field);
    }
    match fields.iter().filter(|f| f.is_pk).count() {
        0 => return Err(Refusal::invalid("primary key is not specified")),
        1 => {}
        _ => return Err(Refusal::invalid("there are more than one primary key")),
    }
    if fields.iter().filter(|f| f.partition_key).count() > 1 {
        return Err(Refusal::invalid("there are more than one partition key"));
    }
    schema.set_field_by_name("fields", Value::List(raw.into_iter().map(Value::Message).collect()));
    let dynamic = flag(&schema, "enable_dynamic_field");
    Ok((schema, fields, dynamic))
}

fn check_field(f: &Field, param: &dyn Fn(&str) -> Option<String>) -> Result<(), Refusal> {
    if f.name.is_empty() {
        return Err(Refusal::invalid("field name should not be empty"));
    }
    if !dt::SUPPORTED.contains(&f.data_type) {
        return Err(Refusal::unsupported(format!(
            "the demo does not support the data type {} of field {}",
            f.data_type, f.name
        )));
    }
    if f.is_pk && f.data_type != dt::INT64 && f.data_type != dt::VARCHAR {
        return Err(Refusal::invalid("the data type of primary key should be Int64 or VarChar"));
    }
    if f.is_pk && f.nullable {
        return Err(Refusal::invalid(format!("primary field {} not support nullable", f.name)));
    }
    if f.partition_key && (f.is_pk || (f.data_type != dt::INT64 && f.data_type != dt::VARCHAR)) {
        return Err(Refusal::invalid("the data type of partition key should be Int64 or VarChar"));
    }
    if f.is_vector() && f.data_type != dt::SPARSE_FLOAT_VECTOR && f.dim.is_none_or(|d| d <= 0) {
        return Err(match param("dim") {
            None => Refusal::invalid(format!("dimension is not defined in field type params of {}", f.name)),
            Some(d) => Refusal::invalid(format!("invalid dimension: {d} of field {}", f.name)),
        });
    }
    if f.data_type == dt::VARCHAR && f.max_length.is_none_or(|m| m == 0) {
        return Err(Refusal::invalid(format!(
            "type param(max_length) should be specified for the field({})",
            f.name
        )));
    }
    Ok(())
}
