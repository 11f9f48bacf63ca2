//! The new primary, through the public Milvus API on one gRPC connection: DescribeCollection,
//! Query (`pk in [...]` and `count(*)`), and the calls a replay sends (CreateCollection,
//! DropCollection, CreatePartition, Insert, Delete, Upsert). Error statuses in replies are
//! errors here, in words.
//!
//! Must never: retry a call that changes the server (the journal decides what is sent again).

use super::schema_check::CollectionShape;
use super::{Pk, ReplayError};
use crate::net::grpc::{GrpcSettings, GrpcTransport};
use crate::net::{CallOptions, NetError, Transport};
use crate::schema::SchemaSet;
use prost_reflect::{DynamicMessage, MethodDescriptor, ReflectMessage, Value};
use serde_json::json;
use std::collections::HashMap;
use std::time::Duration;

/// A collection's times as DescribeCollection gives them: hybrid timestamps (TSO), 0 when the
/// server leaves one out (`update_timestamp` is newer than some servers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Times {
    pub created: u64,
    /// The last change of the collection's schema or meta (upstream's proxy fills it from the
    /// collection's meta, `update_timestamp_str` is the same number as text).
    pub updated: u64,
}

/// Keys per `pk in [...]` query.
pub const QUERY_CHUNK: usize = 1000;
/// Above this many keys an expression carries them as a template value.
pub const TEMPLATE_ABOVE: usize = 64;

pub struct NewPrimary {
    transport: GrpcTransport,
    timeout: Duration,
    db: String,
}

fn method(name: &str) -> Result<MethodDescriptor, ReplayError> {
    SchemaSet::shared_builtin()
        .pool()
        .get_service_by_name("milvus.proto.milvus.MilvusService")
        .and_then(|s| s.methods().find(|m| m.name() == name))
        .ok_or_else(|| ReplayError::Plan(format!("the built-in schemas lack MilvusService/{name}")))
}

fn status_of(reply: &DynamicMessage) -> (i64, String) {
    let s = if reply.descriptor().full_name() == "milvus.proto.common.Status" {
        Some(reply.clone())
    } else {
        reply.get_field_by_name("status").and_then(|v| v.as_message().cloned())
    };
    let Some(s) = s else { return (0, String::new()) };
    let code = s.get_field_by_name("code").and_then(|v| v.as_i32()).unwrap_or(0) as i64;
    let legacy = s.get_field_by_name("error_code").and_then(|v| v.as_enum_number()).unwrap_or(0) as i64;
    let reason =
        s.get_field_by_name("reason").and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
    (if code != 0 { code } else { legacy }, reason)
}

/// An expression selecting `keys` of field `pk`, with its template values when long.
pub fn pk_in(pk: &str, keys: &[Pk]) -> (String, serde_json::Value) {
    if keys.len() > TEMPLATE_ABOVE {
        let array = match keys.first() {
            Some(Pk::Str(_)) => {
                json!({"string_data": {"data": keys.iter().map(|k| match k { Pk::Str(s) => s.clone(), Pk::Int(i) => i.to_string() }).collect::<Vec<_>>()}})
            }
            _ => {
                json!({"long_data": {"data": keys.iter().map(|k| match k { Pk::Int(i) => i.to_string(), Pk::Str(s) => s.clone() }).collect::<Vec<_>>()}})
            }
        };
        return (format!("{pk} in {{keys}}"), json!({"keys": {"array_val": array}}));
    }
    let list: Vec<String> = keys
        .iter()
        .map(|k| match k {
            Pk::Int(i) => i.to_string(),
            Pk::Str(s) => serde_json::to_string(s).unwrap_or_default(),
        })
        .collect();
    (format!("{pk} in [{}]", list.join(", ")), json!({}))
}

impl NewPrimary {
    pub async fn connect(settings: &GrpcSettings, timeout: Duration) -> Result<NewPrimary, ReplayError> {
        let db = database(settings);
        Ok(NewPrimary { transport: GrpcTransport::connect(settings).await?, timeout, db })
    }

    pub fn endpoint(&self) -> &str {
        self.transport.endpoint()
    }

    /// The database every check and call of the replay goes to.
    pub fn db(&self) -> &str {
        &self.db
    }

    async fn unary(&self, name: &str, req: serde_json::Value) -> Result<DynamicMessage, ReplayError> {
        let m = method(name)?;
        let request = DynamicMessage::deserialize(m.input(), req).map_err(|e| NetError::Request {
            method: m.full_name().to_string(),
            type_name: m.input().full_name().to_string(),
            reason: e.to_string(),
        })?;
        self.send(&m, &request).await
    }

    async fn send(
        &self,
        m: &MethodDescriptor,
        request: &DynamicMessage,
    ) -> Result<DynamicMessage, ReplayError> {
        let opts = CallOptions { timeout: Some(self.timeout), ..Default::default() };
        Ok(self.transport.call_unary(m, request, &opts).await?.message)
    }

    fn refused(call: &str, collection: &str, reply: &DynamicMessage) -> Result<(), ReplayError> {
        match status_of(reply) {
            (0, _) => Ok(()),
            (code, reason) => Err(ReplayError::Refused {
                call: call.into(),
                collection: collection.into(),
                reason: format!("code {code}: {reason}"),
            }),
        }
    }

    /// The collection as the new primary has it; None when it has no such collection.
    pub async fn describe(&self, collection: &str) -> Result<Option<(CollectionShape, Times)>, ReplayError> {
        let reply = self
            .unary("DescribeCollection", json!({"db_name": self.db, "collection_name": collection}))
            .await?;
        let (code, reason) = status_of(&reply);
        if code == 100
            || code == 4
            || reason.contains("collection not found")
            || reason.contains("can't find collection")
        {
            return Ok(None);
        }
        Self::refused("DescribeCollection", collection, &reply)?;
        let Some(schema) = reply.get_field_by_name("schema").and_then(|v| v.as_message().cloned()) else {
            return Ok(None);
        };
        let time = |f: &str| reply.get_field_by_name(f).and_then(|v| v.as_u64()).unwrap_or(0);
        let times = Times { created: time("created_timestamp"), updated: time("update_timestamp") };
        Ok(Some((CollectionShape::of_schema(&schema, Some(&reply)), times)))
    }

    /// How many rows the new primary holds of each key (Insert does not de-duplicate: a count
    /// above one is a duplicated row). Keys it lacks are absent from the map.
    pub async fn key_counts(
        &self,
        collection: &str,
        pk: &str,
        keys: &[Pk],
    ) -> Result<HashMap<Pk, u64>, ReplayError> {
        let mut out = HashMap::new();
        for chunk in keys.chunks(QUERY_CHUNK) {
            let (expr, values) = pk_in(pk, chunk);
            let reply = self
                .unary(
                    "Query",
                    json!({"db_name": self.db, "collection_name": collection, "expr": expr,
                        "expr_template_values": values, "output_fields": [pk],
                        "consistency_level": "Strong"}),
                )
                .await?;
            Self::refused("Query", collection, &reply)?;
            for k in column(&reply, pk) {
                *out.entry(k).or_insert(0) += 1;
            }
        }
        Ok(out)
    }

    /// `count(*)` of a collection.
    pub async fn count(&self, collection: &str) -> Result<u64, ReplayError> {
        let reply = self
            .unary(
                "Query",
                json!({"db_name": self.db, "collection_name": collection, "expr": "",
                    "output_fields": ["count(*)"], "consistency_level": "Strong"}),
            )
            .await?;
        Self::refused("Query", collection, &reply)?;
        Ok(column(&reply, "count(*)")
            .first()
            .and_then(|k| match k {
                Pk::Int(i) => Some(*i as u64),
                _ => None,
            })
            .unwrap_or(0))
    }

    /// Sends a prepared request (`call` names the method); an error status is an error.
    pub async fn apply(
        &self,
        call: &str,
        collection: &str,
        request: serde_json::Value,
    ) -> Result<(), ReplayError> {
        let reply = self.unary(call, request).await?;
        Self::refused(call, collection, &reply)
    }

    /// Sends a request already encoded (the wire-level Insert/Upsert).
    pub async fn apply_bytes(
        &self,
        call: &str,
        collection: &str,
        request: bytes::Bytes,
    ) -> Result<(), ReplayError> {
        let m = method(call)?;
        let opts = CallOptions { timeout: Some(self.timeout), ..Default::default() };
        let reply = self.transport.call_unary_bytes(&m, &request, &opts).await?.message;
        Self::refused(call, collection, &reply)
    }

    /// Sends a prepared typed request.
    pub async fn apply_message(
        &self,
        call: &str,
        collection: &str,
        request: &DynamicMessage,
    ) -> Result<(), ReplayError> {
        let reply = self.send(&method(call)?, request).await?;
        Self::refused(call, collection, &reply)
    }
}

/// The values of column `name` of a QueryResults, as keys.
fn column(reply: &DynamicMessage, name: &str) -> Vec<Pk> {
    let Some(Value::List(fields)) = reply.get_field_by_name("fields_data").as_deref().cloned() else {
        return Vec::new();
    };
    let Some(field) = fields.iter().filter_map(|v| v.as_message()).find(|f| {
        f.get_field_by_name("field_name").and_then(|v| v.as_str().map(|s| s == name)).unwrap_or(false)
    }) else {
        return Vec::new();
    };
    super::units::insert_keys_of_field(field)
}

/// The database a replay with these settings goes to: the profile's or `--db`, else `default`.
pub fn database(settings: &GrpcSettings) -> String {
    super::database_name(settings.db_name.as_deref().unwrap_or(""))
}
