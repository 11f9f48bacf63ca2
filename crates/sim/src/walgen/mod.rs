//! A synthetic Milvus WAL, message by message, as `DumpMessages` would return it: several
//! collections and vchannels across four pchannels (one per WAL backend, so every message-id
//! style appears), Inserts with real `fields_data` (int64 key, 128-dim float vector, varchar),
//! Deletes by primary key, Create/Drop Collection, ManualFlush, transactions (BeginTxn, bodies
//! carrying `_tx`, CommitTxn) and encrypted payloads (`_ch`).

mod bodies;
mod book;
pub mod newer;
use crate::codec;
use crate::rng::SimRng;
use crate::wal::{MessageIdParts, WalBackend, encode_message_id, to_base36};
use base64::Engine;
use prost_reflect::{DescriptorPool, DynamicMessage, MessageDescriptor, Value};
use serde_json::json;

/// 2026-11-30 00:12:00.000 UTC, where every synthetic WAL starts.
pub const START_MS: u64 = 1_795_997_520_000;
pub const DIM: usize = 128;
/// With [`WalGenConfig::rehearsal`], the step that creates the `audit` collection.
pub const AUDIT_STEP: u64 = 150;
/// The rehearsal's fourth collection (id, name): created late, on pchannels 3 and 0.
pub const AUDIT: (i64, &str) = (5002, "audit");

#[derive(Debug, Clone)]
pub struct WalGenConfig {
    pub seed: u64,
    /// Rows per Insert, inclusive range (each row carries a 128-dim vector: 512 bytes).
    pub rows: (u64, u64),
    /// When known, the last messages drop a collection, as a real cluster's history might.
    pub total: Option<u64>,
    /// A force-failover rehearsal: a fourth collection `audit` is created at step
    /// [`AUDIT_STEP`] (after the demo's salvage checkpoints) and never written before, and every
    /// second transaction is an upsert (BeginTxn, Insert of existing keys, Delete of the same
    /// keys at the Insert's timetick, CommitTxn). Off: the stream is byte for byte what it was.
    pub rehearsal: bool,
    /// Also what DumpMessages never sends ([`book`]): TimeTick, CreateSegment, Flush
    /// and rolled-back transactions, in place of some ManualFlushes. Off: the stream is byte
    /// for byte what it was.
    pub bookkeeping: bool,
    /// At this step the `events` collection is dropped and created again, its keys starting
    /// over at 1 (a history that re-creates a collection). None: never.
    pub recreate_events_at: Option<u64>,
    /// The database of the rehearsal's `audit` collection (every other is in `default`).
    pub audit_database: &'static str,
    /// A payload longer than this many bytes is written as chunks, the way upstream Milvus
    /// splits a payload its WAL backend cannot take (`chunk.go`: every property copied, `_ci`
    /// and `_ct` added, one WAL record and message id per chunk). None: the stream is byte for
    /// byte what it was.
    pub chunk_bytes: Option<usize>,
    /// Also upstream master's newer types ([`newer`]): row-level security, snapshots,
    /// BatchUpdateManifest, RefreshExternalCollection, in place of some ManualFlushes. Off: the
    /// stream is byte for byte what it was.
    pub newer_types: bool,
}

/// The collection [`WalGenConfig::recreate_events_at`] re-creates.
pub const EVENTS: usize = 2;

impl Default for WalGenConfig {
    fn default() -> Self {
        WalGenConfig {
            seed: 1,
            rows: (1, 8),
            total: None,
            rehearsal: false,
            bookkeeping: false,
            recreate_events_at: None,
            audit_database: "default",
            chunk_bytes: None,
            newer_types: false,
        }
    }
}

/// One generated message and what a salvage writer needs to know about it.
#[derive(Debug, Clone)]
pub struct GeneratedMessage {
    /// A `milvus.proto.milvus.DumpMessagesResponse` carrying the message.
    pub response: Vec<u8>,
    pub message_id: String,
    pub backend: WalBackend,
    pub last_confirmed_id: String,
    pub timetick: u64,
    pub pchannel: String,
    pub vchannel: String,
    pub type_name: &'static str,
    /// The chunks after this one, when the payload was split ([`WalGenConfig::chunk_bytes`]):
    /// they follow it in the WAL.
    pub more_chunks: Vec<GeneratedMessage>,
}

pub(super) struct Collection {
    pub(super) id: i64,
    pub(super) name: &'static str,
    pub(super) vchannels: Vec<(usize, String)>,
    pub(super) partition: i64,
    pub(super) next_pk: i64,
    pub(super) db: &'static str,
}

impl Collection {
    /// The `i`th collection: vchannels on pchannels `i` and `i + 1` (mod 4).
    fn new(i: usize, id: i64, name: &'static str) -> Collection {
        let vchannels = (0..2)
            .map(|j| {
                let p = (i + j) % PCHANNELS.len();
                (p, format!("{}_{id}v{j}", PCHANNELS[p].0))
            })
            .collect();
        Collection { id, name, vchannels, partition: id * 10 + 1, next_pk: 1, db: "default" }
    }
}

const PCHANNELS: [(&str, WalBackend); 4] = [
    ("by-dev-rootcoord-dml_0", WalBackend::RocksMq),
    ("by-dev-rootcoord-dml_1", WalBackend::Pulsar),
    ("by-dev-rootcoord-dml_2", WalBackend::Kafka),
    ("by-dev-rootcoord-dml_3", WalBackend::Woodpecker),
];

pub(super) struct Types {
    response: MessageDescriptor,
    immutable: MessageDescriptor,
    pub(super) insert: MessageDescriptor,
    pub(super) float_array: MessageDescriptor,
}

pub struct WalGenerator {
    pub(super) cfg: WalGenConfig,
    pub(super) rng: SimRng,
    pool: DescriptorPool,
    pub(super) types: Types,
    pub(super) collections: Vec<Collection>,
    counters: [u64; 4],
    now_ms: u64,
    logical: u64,
    step: u64,
    pub(super) next_txn: i64,
    /// Transactions planned so far (rehearsal: every second one is an upsert).
    txns: u64,
    /// Messages decided ahead (the rest of a transaction).
    queue: std::collections::VecDeque<GeneratedMessage>,
    /// How many of [`newer::NEWER_TYPES`] were written.
    newer: u64,
}

pub(super) fn b64(b: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(b)
}

fn desc(pool: &DescriptorPool, name: &str) -> MessageDescriptor {
    match pool.get_message_by_name(name) {
        Some(d) => d,
        None => panic!("built-in schema lacks {name} (build defect)"),
    }
}

/// Our own JSON for a built-in type; failure is a defect in this file, caught by its tests.
pub(super) fn build(d: &MessageDescriptor, v: serde_json::Value) -> DynamicMessage {
    match DynamicMessage::deserialize(d.clone(), v) {
        Ok(m) => m,
        Err(e) => panic!("generator JSON for {} is wrong: {e}", d.full_name()),
    }
}

impl WalGenerator {
    pub fn new(pool: &DescriptorPool, cfg: WalGenConfig) -> WalGenerator {
        let types = Types {
            response: desc(pool, "milvus.proto.milvus.DumpMessagesResponse"),
            immutable: desc(pool, "milvus.proto.common.ImmutableMessage"),
            insert: desc(pool, "milvus.proto.msg.InsertRequest"),
            float_array: desc(pool, "milvus.proto.schema.FloatArray"),
        };
        let mut collections = Vec::new();
        for (i, (id, name)) in
            [(4491i64, "orders"), (4492, "users"), (5001, "events")].into_iter().enumerate()
        {
            collections.push(Collection::new(i, id, name));
        }
        WalGenerator {
            rng: SimRng::new(cfg.seed),
            cfg,
            pool: pool.clone(),
            types,
            collections,
            counters: [0; 4],
            now_ms: START_MS,
            logical: 0,
            step: 0,
            next_txn: 77,
            txns: 0,
            queue: Default::default(),
            newer: 0,
        }
    }

    pub(super) fn tick(&mut self) -> u64 {
        self.now_ms += self.rng.range(0, 3);
        self.logical = (self.logical + 1) % (1 << crate::time::LOGICAL_BITS);
        crate::time::millis_to_timetick(self.now_ms) | self.logical
    }

    fn next_id(&mut self, p: usize) -> (String, WalBackend) {
        let n = self.counters[p];
        self.counters[p] += 1;
        let backend = PCHANNELS[p].1;
        let parts = match backend {
            WalBackend::Pulsar => MessageIdParts::Pulsar {
                ledger: 100 + n / 1000,
                entry: n % 1000,
                partition: -1,
                batch_index: -1,
            },
            WalBackend::Woodpecker => {
                MessageIdParts::Woodpecker { segment: (n / 500) as i64, entry: (n % 500) as i64 }
            }
            _ => MessageIdParts::Sequential(1000 + n as i64),
        };
        (encode_message_id(&parts), backend)
    }

    /// Wraps a message into a DumpMessagesResponse.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn emit(
        &mut self,
        p: usize,
        vchannel: &str,
        type_name: &'static str,
        version: u32,
        header: &DynamicMessage,
        payload: Vec<u8>,
        extra: &[(&str, String)],
        tt: u64,
    ) -> GeneratedMessage {
        let Some(t) = self
            .pool
            .get_enum_by_name("milvus.proto.messages.MessageType")
            .and_then(|e| e.get_value_by_name(type_name).map(|v| v.number()))
        else {
            panic!("MessageType has no {type_name} (build defect)");
        };
        let (id, backend) = self.next_id(p);
        let mut props = serde_json::Map::new();
        props.insert("_t".into(), json!(t.to_string()));
        props.insert("_v".into(), json!(version.to_string()));
        props.insert("_tt".into(), json!(to_base36(tt)));
        props.insert("_vc".into(), json!(vchannel));
        props.insert("_h".into(), json!(b64(&codec::encode(header))));
        let mut last_confirmed = id.clone();
        for (k, v) in extra {
            if *k == "_lc" {
                last_confirmed = v.clone();
            }
            props.insert((*k).into(), json!(v));
        }
        if !props.contains_key("_lc") {
            props.insert("_lcs".into(), json!(""));
        }
        let chunks: Vec<&[u8]> = match self.cfg.chunk_bytes {
            Some(n) if n > 0 && payload.len() > n => payload.chunks(n).collect(),
            _ => vec![&payload[..]],
        };
        let total = chunks.len();
        let mut out: Vec<GeneratedMessage> = Vec::with_capacity(total);
        for (i, part) in chunks.into_iter().enumerate() {
            // Each chunk is a WAL record of its own; chunk 0's id names the message.
            let (id, backend) = if i == 0 { (id.clone(), backend) } else { self.next_id(p) };
            let mut props = props.clone();
            if total > 1 {
                props.insert("_ci".into(), json!(i.to_string()));
                props.insert("_ct".into(), json!(total.to_string()));
            }
            let response = self.response(&id, backend, part, props);
            out.push(GeneratedMessage {
                response,
                message_id: id,
                backend,
                last_confirmed_id: last_confirmed.clone(),
                timetick: tt,
                pchannel: PCHANNELS[p].0.to_string(),
                vchannel: vchannel.to_string(),
                type_name,
                more_chunks: Vec::new(),
            });
        }
        let mut first = out.remove(0);
        first.more_chunks = out;
        first
    }

    /// A DumpMessagesResponse carrying one WAL record.
    fn response(
        &self,
        id: &str,
        backend: WalBackend,
        payload: &[u8],
        props: serde_json::Map<String, serde_json::Value>,
    ) -> Vec<u8> {
        let wal_name = match backend {
            WalBackend::RocksMq => "RocksMQ",
            WalBackend::Pulsar => "Pulsar",
            WalBackend::Kafka => "Kafka",
            WalBackend::Woodpecker => "WoodPecker",
            _ => "Unknown",
        };
        let immutable = build(
            &self.types.immutable,
            json!({"id": {"id": id, "WAL_name": wal_name}, "payload": b64(payload), "properties": props}),
        );
        let mut response = DynamicMessage::new(self.types.response.clone());
        response.set_field_by_name("message", Value::Message(immutable));
        codec::encode(&response)
    }

    pub(super) fn header(&self, name: &str, v: serde_json::Value) -> DynamicMessage {
        build(&desc(&self.pool, &format!("milvus.proto.messages.{name}")), v)
    }

    pub(super) fn body(&self, name: &str, v: serde_json::Value) -> Vec<u8> {
        codec::encode(&build(&desc(&self.pool, name), v))
    }
}

impl WalGenerator {
    /// Decides what comes next. The first messages create every collection; a transaction and
    /// an encrypted Insert come early so even a 20-message sample has both.
    fn plan(&mut self) -> Vec<GeneratedMessage> {
        let step = self.step;
        self.step += 1;
        let n = self.collections.len() as u64;
        if step < n {
            return vec![self.create_collection(step as usize)];
        }
        if self.cfg.rehearsal && step == AUDIT_STEP {
            let audit = Collection { db: self.cfg.audit_database, ..Collection::new(3, AUDIT.0, AUDIT.1) };
            self.collections.push(audit);
            return vec![self.create_collection(3)];
        }
        if self.cfg.recreate_events_at == Some(step) && EVENTS < self.collections.len() {
            let dropped = self.drop_collection(EVENTS);
            self.collections[EVENTS].next_pk = 1;
            return vec![dropped, self.create_collection(EVENTS)];
        }
        let c = self.rng.range(0, n - 1) as usize;
        if let Some(total) = self.cfg.total
            && total > 12
            && self.emitted() + 1 == total
        {
            return vec![self.drop_collection(self.collections.len() - 1)];
        }
        match step {
            5 => return self.any_transaction(c, 2),
            9 => return vec![self.insert(c, None, true)],
            _ => {}
        }
        let roll = self.rng.range(0, 99);
        match roll {
            0..=69 => vec![self.insert(c, None, false)],
            70..=84 => vec![self.delete(c)],
            85..=88 => {
                let n = self.rng.range(1, 3) as usize;
                self.any_transaction(c, n)
            }
            89..=90 => vec![self.insert(c, None, true)],
            91..=92 if self.cfg.bookkeeping => vec![self.time_tick(c)],
            93 if self.cfg.bookkeeping => vec![self.segment_message(c, "CreateSegment")],
            94 if self.cfg.bookkeeping => vec![self.segment_message(c, "Flush")],
            95 if self.cfg.bookkeeping => self.rolled_back_transaction(c),
            96..=99 if self.cfg.newer_types => vec![self.newer_type(c)],
            _ => vec![self.manual_flush(c)],
        }
    }

    /// A transaction of `n` Inserts; in a rehearsal every second one is an upsert instead
    /// (when the collection has rows to re-use).
    fn any_transaction(&mut self, c: usize, n: usize) -> Vec<GeneratedMessage> {
        self.txns += 1;
        if self.cfg.rehearsal && self.txns.is_multiple_of(2) && self.collections[c].next_pk > 1 {
            return self.upsert_transaction(c);
        }
        self.transaction(c, n)
    }

    fn emitted(&self) -> u64 {
        self.counters.iter().sum::<u64>() - self.queue.len() as u64
    }
}

impl Iterator for WalGenerator {
    type Item = GeneratedMessage;

    fn next(&mut self) -> Option<GeneratedMessage> {
        if self.queue.is_empty() {
            let planned = self.plan();
            self.queue.extend(planned);
        }
        let mut m = self.queue.pop_front()?;
        // A split message's chunks come next, before anything planned after it.
        for c in std::mem::take(&mut m.more_chunks).into_iter().rev() {
            self.queue.push_front(c);
        }
        Some(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn digest(cfg: WalGenConfig, n: usize) -> u64 {
        let set = crate::schema::SchemaSet::builtin();
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for m in WalGenerator::new(set.pool(), cfg).take(n) {
            for b in m.response.iter().chain(m.message_id.as_bytes()).chain(m.pchannel.as_bytes()) {
                h = (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
            }
        }
        h
    }

    /// Without `rehearsal` the stream is what it always was (samples, README outputs and many
    /// tests depend on its bytes).
    #[test]
    fn default_stream_is_unchanged() {
        let got = [
            digest(WalGenConfig::default(), 600),
            digest(WalGenConfig { seed: 11, rows: (1, 1), total: None, ..Default::default() }, 600),
            digest(WalGenConfig { seed: 3, total: Some(40), ..Default::default() }, 40),
        ];
        assert_eq!(got, [14790218862936835917, 9297668806841346924, 12515337515317545358]);
    }
}
