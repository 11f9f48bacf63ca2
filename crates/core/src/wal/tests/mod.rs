//! Whole-message tests: a sample of every message type, and the messages that must not break
//! the reader (encrypted, legacy, unknown type, malformed properties).

mod every_type;
mod special;

use crate::codec;
use crate::schema::SchemaSet;
use crate::wal::{MessageIdParts, WalBackend, encode_message_id};
use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
pub use prost_reflect::ReflectMessage;
use prost_reflect::{DescriptorPool, DynamicMessage, MapKey, Value};
use std::collections::HashMap;

/// A Milvus timetick for 2025-11-30 00:12:01.123 UTC, logical 7.
pub const TT: u64 = (1_764_461_521_123 << 18) | 7;
pub const TT_TEXT: &str = "2025-11-30 00:12:01.123";
pub const VC: &str = "by-dev-rootcoord-dml_0_4491v0";

pub fn pool() -> DescriptorPool {
    SchemaSet::builtin().pool().clone()
}

pub fn new_msg(pool: &DescriptorPool, name: &str) -> DynamicMessage {
    match pool.get_message_by_name(name) {
        Some(d) => DynamicMessage::new(d),
        None => panic!("schema lacks {name}"),
    }
}

pub fn b64(msg: &DynamicMessage) -> String {
    BASE64.encode(codec::encode(msg))
}

/// An ImmutableMessage with a RocksMQ id, the given properties and payload.
pub fn immutable(pool: &DescriptorPool, props: &[(&str, String)], payload: Vec<u8>) -> DynamicMessage {
    let mut id = new_msg(pool, "milvus.proto.common.MessageID");
    id.set_field_by_name("id", Value::String(encode_message_id(&MessageIdParts::Sequential(1007))));
    id.set_field_by_name("WAL_name", Value::EnumNumber(WalBackend::RocksMq.number()));
    let mut m = new_msg(pool, "milvus.proto.common.ImmutableMessage");
    m.set_field_by_name("id", Value::Message(id));
    m.set_field_by_name("payload", Value::Bytes(payload.into()));
    let map: HashMap<MapKey, Value> =
        props.iter().map(|(k, v)| (MapKey::String(k.to_string()), Value::String(v.clone()))).collect();
    m.set_field_by_name("properties", Value::Map(map));
    m
}

/// The usual properties of a streaming-era message of type `t`, version `v`.
pub fn base_props(t: i32, v: u32) -> Vec<(&'static str, String)> {
    vec![("_t", t.to_string()), ("_v", v.to_string()), ("_tt", crate::wal::to_base36(TT)), ("_vc", VC.into())]
}
