//! What a force-promoted new primary holds when it starts ([`StoreSeed::NewPrimary`]): every WAL
//! message of every pchannel with `_tt` ≤ that pchannel's salvage checkpoint `time_tick` (the
//! same checkpoint GetReplicateInfo hands out), applied in `_tt` order as the replication did:
//! CreateCollection creates from the body's `collection_schema`, Insert inserts, Delete deletes
//! by key, a transaction applies at its commit with its Deletes before its Inserts (an upsert);
//! everything else is ignored, and so are encrypted (`_ch`) Inserts, whose rows the demo cannot
//! read. With `own_writes`, then the writes it took after the promotion ([`OwnWrite`]): the
//! collection `audit` created with `title` max_length 128 (the WAL says 256) and 2 rows of its
//! own, and in `orders` one Insert of 2 keys the old primary's WAL inserts after the checkpoint
//! (the conflicts a replay must find) and 2 fresh keys (900001, 900002).
//!
//! Must never: read anything but the demo's own WAL, or panic (a WAL message it cannot read is
//! skipped).

use super::config::MilvusDemoConfig;
use super::demo_wal::{DemoWal, Entry, PCHANNELS};
use super::dml::DmlTypes;
use super::rows::{Mode, column, rows};
use super::store::{Cell, Key, Row, Store, messages, text};
use crate::wire::scan::{Value as W, fields};
use prost_reflect::{DescriptorPool, DynamicMessage, MapKey, MessageDescriptor, Value};

/// What the store holds when the server starts.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum StoreSeed {
    /// No collections.
    #[default]
    Empty,
    /// The new primary at its promotion (see the module doc); `own_writes`: plus its writes
    /// since then.
    NewPrimary { own_writes: bool },
}

/// A row the new primary wrote itself after the promotion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnWrite {
    pub collection: String,
    pub pk: i64,
    /// The old primary's WAL inserts this key after the checkpoint: a replay conflicts here.
    pub in_salvage: bool,
}

/// The fresh keys of the own writes (in `orders` and in `audit`).
pub const OWN_KEYS: [i64; 2] = [900_001, 900_002];

struct Types {
    response: MessageDescriptor,
    create: MessageDescriptor,
    delete: MessageDescriptor,
}

enum Op {
    Create(String, DynamicMessage),
    Insert(Vec<u8>),
    Delete(String, Vec<Key>),
}

/// One message's envelope: type, properties, payload.
struct Message {
    type_name: &'static str,
    props: Vec<(String, String)>,
    payload: Vec<u8>,
}

impl Message {
    fn prop(&self, k: &str) -> Option<&str> {
        self.props.iter().find(|(pk, _)| pk == k).map(|(_, v)| v.as_str())
    }
}

fn open(t: &Types, e: &Entry) -> Option<Message> {
    let r = DynamicMessage::decode(t.response.clone(), e.response.as_ref()).ok()?;
    let m = r.get_field_by_name("message")?.as_message()?.clone();
    let payload =
        m.get_field_by_name("payload").and_then(|v| v.as_bytes().map(|b| b.to_vec())).unwrap_or_default();
    let props = match m.get_field_by_name("properties").as_deref() {
        Some(Value::Map(map)) => map
            .iter()
            .filter_map(|(k, v)| match k {
                MapKey::String(k) => Some((k.clone(), v.as_str()?.to_string())),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    Some(Message { type_name: e.type_name, props, payload })
}

/// Joins chunks (upstream `chunk.go`) into the message they are, as the new primary's own WAL
/// reader did before it applied anything: a chunk gives nothing until its group is whole.
#[derive(Default)]
struct Joiner {
    grouper: crate::wal::chunk::Grouper<usize>,
    held: std::collections::HashMap<usize, Message>,
    next: usize,
}

impl Joiner {
    fn join(&mut self, m: Message) -> Option<Message> {
        use crate::wal::chunk::{Pushed, mark_of};
        let key = self.next;
        self.next += 1;
        let mark = mark_of(|k| m.prop(k));
        let pushed = self.grouper.push(key, mark, None, &m.payload);
        match pushed {
            Pushed::Plain => return Some(m),
            Pushed::Held => {}
            Pushed::Duplicate { dropped } => {
                self.held.remove(&dropped);
            }
            Pushed::Complete(g) => {
                self.held.insert(key, m);
                let mut parts = g.members.iter().filter_map(|k| self.held.remove(k));
                let mut whole = parts.next()?;
                for p in parts {
                    whole.payload.extend_from_slice(&p.payload);
                }
                whole.props.retain(|(k, _)| k != "_ci" && k != "_ct");
                return Some(whole);
            }
            Pushed::Broken { members, .. } => {
                for k in members {
                    self.held.remove(&k);
                }
                return None;
            }
            Pushed::Malformed { .. } => return None,
        }
        self.held.insert(key, m);
        None
    }
}

fn op(t: &Types, m: &Message) -> Option<Op> {
    if m.prop("_ch").is_some() {
        return None;
    }
    match m.type_name {
        "CreateCollection" => {
            let req = DynamicMessage::decode(t.create.clone(), m.payload.as_slice()).ok()?;
            let schema = req.get_field_by_name("collection_schema")?.as_message()?.clone();
            Some(Op::Create(text(&req, "collectionName"), schema))
        }
        "Insert" => Some(Op::Insert(m.payload.clone())),
        "Delete" => {
            let req = DynamicMessage::decode(t.delete.clone(), m.payload.as_slice()).ok()?;
            let ids = req.get_field_by_name("primary_keys")?.as_message()?.clone();
            let list = |n: &str| {
                ids.get_field_by_name(n)?
                    .as_message()?
                    .get_field_by_name("data")?
                    .as_list()
                    .map(<[Value]>::to_vec)
            };
            // The id list that is set (an unset oneof member reads as an empty default).
            let set = ids.fields().next().map(|(f, _)| f.name().to_string())?;
            let l = list(&set)?;
            let keys = match set.as_str() {
                "str_id" => l.iter().filter_map(|v| v.as_str().map(|s| Key::Str(s.to_string()))).collect(),
                _ => l.iter().filter_map(Value::as_i64).map(Key::Int).collect(),
            };
            Some(Op::Delete(text(&req, "collection_name"), keys))
        }
        _ => None,
    }
}

/// A WAL Insert body (`msg.InsertRequest`): its collection and columns, applied as replicated.
fn apply_insert(store: &Store, dml: &DmlTypes, body: &[u8]) -> Option<Vec<Key>> {
    let (mut name, mut cols) = (String::new(), Vec::new());
    for f in fields(body) {
        match f.ok()? {
            (4, W::Len(b)) => name = String::from_utf8(b.to_vec()).ok()?,
            (13, W::Len(b)) => cols.push(column(b, dml.scalar()).ok()?),
            _ => {}
        }
    }
    store
        .with_mut(&name, |c, _| {
            let n = cols.iter().map(|c| c.rows()).max().unwrap_or(0);
            let (new, _) = rows(c, cols, n, 0, Mode::Replicated, c.next_auto)?;
            let keys = new.iter().map(|r| r.pk.clone()).collect();
            c.push(new);
            Ok(keys)
        })
        .ok()
}

fn apply(store: &Store, dml: &DmlTypes, op: Op, tt: u64) {
    store.advance(tt);
    match op {
        Op::Create(name, schema) => {
            let _ = store.create(&name, schema, Vec::new(), 0, Some(tt));
        }
        Op::Insert(body) => {
            let _ = apply_insert(store, dml, &body);
        }
        Op::Delete(name, keys) => {
            let _ = store.with_mut(&name, |c, _| Ok(c.remove(&keys, None)));
        }
    }
}

/// Applies the seed; what the server wrote itself.
pub fn seed(
    store: &Store,
    dml: &DmlTypes,
    pool: &DescriptorPool,
    wal: &DemoWal,
    config: &MilvusDemoConfig,
) -> Vec<OwnWrite> {
    let StoreSeed::NewPrimary { own_writes } = config.store else { return Vec::new() };
    let get = |n: &str| pool.get_message_by_name(n);
    let (Some(response), Some(create), Some(delete)) = (
        get("milvus.proto.milvus.DumpMessagesResponse"),
        get("milvus.proto.msg.CreateCollectionRequest"),
        get("milvus.proto.msg.DeleteRequest"),
    ) else {
        return Vec::new();
    };
    let t = Types { response, create, delete };
    // (tt, pchannel, position) → the ops of one message or one whole transaction.
    let mut units: Vec<((u64, usize, usize), Vec<Op>)> = Vec::new();
    let mut after: Vec<(u64, i64)> = Vec::new();
    for (p, (pchannel, _)) in PCHANNELS.iter().enumerate() {
        let Some(cp) = wal.salvage_checkpoint(pchannel, config.checkpoint_index, config.checkpoint_lag)
        else {
            continue;
        };
        let mut txn: Option<(Vec<Op>, Vec<Op>)> = None;
        let mut joiner = Joiner::default();
        for i in 0..cp.index + 400 {
            let Some(e) = wal.entry(pchannel, i) else { break };
            let Some(m) = open(&t, &e).and_then(|m| joiner.join(m)) else { continue };
            if e.timetick > cp.time_tick {
                // Past the checkpoint: only the conflict candidates are of interest.
                if own_writes && m.type_name == "Insert" && m.prop("_tx").is_none() && m.prop("_ch").is_none()
                {
                    after.extend(orders_keys(&m.payload).into_iter().map(|k| (e.timetick, k)));
                }
                if !own_writes || after.len() >= 2 {
                    break;
                }
                continue;
            }
            match (m.type_name, &mut txn) {
                ("BeginTxn", _) => txn = Some((Vec::new(), Vec::new())),
                // A rolled-back transaction leaves nothing behind.
                ("RollbackTxn", _) => txn = None,
                ("CommitTxn", Some(_)) => {
                    if let Some((deletes, inserts)) = txn.take() {
                        units.push(((e.timetick, p, i), deletes.into_iter().chain(inserts).collect()));
                    }
                }
                (_, Some((deletes, inserts))) => match op(&t, &m) {
                    Some(o @ Op::Delete(..)) => deletes.push(o),
                    Some(o) => inserts.push(o),
                    None => {}
                },
                (_, None) => units.extend(op(&t, &m).map(|o| ((e.timetick, p, i), vec![o]))),
            }
        }
    }
    units.sort_by_key(|(k, _)| *k);
    for ((tt, _, _), ops) in units {
        for o in ops {
            apply(store, dml, o, tt);
        }
    }
    if !own_writes {
        return Vec::new();
    }
    after.sort();
    let mut conflicts: Vec<i64> = Vec::new();
    for (_, k) in after {
        // A key an upsert before some checkpoint already brought is not a conflict.
        let absent = store.with("orders", |c| c.rows_with(&[Key::Int(k)]).is_empty()).unwrap_or(false);
        if absent && !conflicts.contains(&k) && conflicts.len() < 2 {
            conflicts.push(k);
        }
    }
    write_own(store, conflicts)
}

/// The `orders` keys of a WAL Insert body.
fn orders_keys(body: &[u8]) -> Vec<i64> {
    let mut orders = false;
    let mut keys = Vec::new();
    for f in fields(body).flatten() {
        match f {
            (4, W::Len(b)) => orders = b == b"orders",
            (13, W::Len(col)) => {
                let is_id = fields(col).flatten().any(|f| f == (2, W::Len(b"id")));
                if !is_id {
                    continue;
                }
                for (n, v) in fields(col).flatten() {
                    let (3, W::Len(scalars)) = (n, v) else { continue };
                    for (n, v) in fields(scalars).flatten() {
                        let (3, W::Len(long)) = (n, v) else { continue };
                        for (_, v) in fields(long).flatten() {
                            match v {
                                W::Len(packed) => keys.extend(varints(packed)),
                                W::Varint(x) => keys.push(x as i64),
                                _ => {}
                            }
                        }
                    }
                }
            }
            _ => {}
        }
    }
    if orders { keys } else { Vec::new() }
}

fn varints(mut b: &[u8]) -> Vec<i64> {
    let mut out = Vec::new();
    while !b.is_empty() {
        let Ok((v, next)) = crate::wire::varint::read_varint(b, 0, b.len()) else { break };
        out.push(v as i64);
        b = &b[next..];
    }
    out
}

/// Rows of the WAL's shape (id, a vector, a title) written by the new primary itself.
fn own_rows(store: &Store, collection: &str, keys: &[i64]) -> Option<()> {
    store
        .with_mut(collection, |c, _| {
            let rows: Vec<Row> = keys
                .iter()
                .map(|k| Row {
                    pk: Key::Int(*k),
                    cells: c
                        .fields
                        .iter()
                        .filter(|f| f.is_stored())
                        .map(|f| {
                            if f.name == "title" { Cell::Str(format!("own write #{k}")) } else { Cell::Null }
                        })
                        .collect(),
                    vectors: *k as u64,
                    partition: 0,
                })
                .collect();
            c.push(rows);
            Ok(())
        })
        .ok()
}

fn write_own(store: &Store, conflicts: Vec<i64>) -> Vec<OwnWrite> {
    let mut out = Vec::new();
    // `audit`: the WAL's schema, but title max_length 128.
    if let Ok(mut schema) = store.with("orders", |c| c.schema.clone()) {
        schema.set_field_by_name("name", Value::String("audit".into()));
        let fields: Vec<Value> = messages(&schema, "fields")
            .into_iter()
            .map(|mut f| {
                if text(&f, "name") == "title" {
                    let mut kv = messages(&f, "type_params");
                    for p in kv.iter_mut().filter(|p| text(p, "key") == "max_length") {
                        p.set_field_by_name("value", Value::String("128".into()));
                    }
                    f.set_field_by_name(
                        "type_params",
                        Value::List(kv.into_iter().map(Value::Message).collect()),
                    );
                }
                Value::Message(f)
            })
            .collect();
        schema.set_field_by_name("fields", Value::List(fields));
        if store.create("audit", schema, Vec::new(), 0, None).is_ok()
            && own_rows(store, "audit", &OWN_KEYS).is_some()
        {
            out.extend(OWN_KEYS.iter().map(|k| OwnWrite {
                collection: "audit".into(),
                pk: *k,
                in_salvage: false,
            }));
        }
    }
    let keys: Vec<i64> = conflicts.iter().chain(&OWN_KEYS).copied().collect();
    if own_rows(store, "orders", &keys).is_some() {
        out.extend(keys.iter().map(|k| OwnWrite {
            collection: "orders".into(),
            pk: *k,
            in_salvage: conflicts.contains(k),
        }));
    }
    out
}
