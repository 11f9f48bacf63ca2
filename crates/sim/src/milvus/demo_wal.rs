//! The demo server's WAL: per pchannel, the synthetic messages of [`WalGenerator`] filtered to
//! that pchannel, generated lazily as readers ask for them and kept for later readers; and the
//! DumpMessages rules (reference §1.2, §4) applied to it.
//!
//! Each pchannel has its own generator (discarding the other pchannels' messages), so only the
//! pchannels someone reads cost memory. Must never: panic on a request (every bad field becomes
//! a status), or send a self-controlled type (TimeTick, CreateSegment, Flush) or RollbackTxn.

use crate::wal::{MessageIdParts, WalBackend, is_dumped_type, render_message_id};
use crate::{GeneratedMessage, WalGenConfig, WalGenerator};
use bytes::Bytes;
use prost_reflect::DescriptorPool;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The four pchannels of the synthetic cluster and their WAL backends.
pub const PCHANNELS: [(&str, WalBackend); 4] = [
    ("by-dev-rootcoord-dml_0", WalBackend::RocksMq),
    ("by-dev-rootcoord-dml_1", WalBackend::Pulsar),
    ("by-dev-rootcoord-dml_2", WalBackend::Kafka),
    ("by-dev-rootcoord-dml_3", WalBackend::Woodpecker),
];

/// One WAL message as the server keeps it.
#[derive(Debug, Clone)]
pub struct Entry {
    pub response: Bytes,
    pub message_id: String,
    pub last_confirmed_id: String,
    pub timetick: u64,
    pub type_name: &'static str,
    pub type_number: i32,
    key: (i64, i64, i64),
}

/// Position order of ids within one pchannel.
pub fn order_key(parts: &MessageIdParts) -> (i64, i64, i64) {
    match parts {
        MessageIdParts::Sequential(v) => (*v, 0, 0),
        MessageIdParts::Pulsar { ledger, entry, batch_index, .. } => {
            (*ledger as i64, *entry as i64, i64::from(*batch_index))
        }
        MessageIdParts::Woodpecker { segment, entry } => (*segment, *entry, 0),
    }
}

fn type_number(pool: &DescriptorPool, name: &str) -> i32 {
    pool.get_enum_by_name("milvus.proto.messages.MessageType")
        .and_then(|e| e.get_value_by_name(name).map(|v| v.number()))
        .unwrap_or(0)
}

struct ChannelWal {
    generator: WalGenerator,
    entries: Vec<Entry>,
}

/// Every pchannel's WAL, shared by all streams of one server.
pub struct DemoWal {
    pool: DescriptorPool,
    config: WalGenConfig,
    channels: HashMap<String, Arc<Mutex<Option<ChannelWal>>>>,
    /// See [`super::MilvusDemoConfig::wal_cycle`].
    cycle: Option<usize>,
}

impl DemoWal {
    pub fn new(pool: &DescriptorPool, config: WalGenConfig) -> DemoWal {
        let channels = PCHANNELS.iter().map(|(p, _)| (p.to_string(), Arc::new(Mutex::new(None)))).collect();
        DemoWal { pool: pool.clone(), config, channels, cycle: None }
    }

    /// A WAL that repeats its first `n` messages per pchannel (soak runs).
    pub fn cycling(mut self, n: Option<usize>) -> DemoWal {
        self.cycle = n.filter(|n| *n > 0);
        self
    }

    pub fn backend(pchannel: &str) -> Option<WalBackend> {
        PCHANNELS.iter().find(|(p, _)| *p == pchannel).map(|(_, b)| *b)
    }

    /// Entry `index` of `pchannel`, generating up to it. None for an unknown pchannel.
    pub fn entry(&self, pchannel: &str, index: usize) -> Option<Entry> {
        let index = self.cycle.map_or(index, |n| index % n);
        let slot = self.channels.get(pchannel)?;
        let mut guard = slot.lock().unwrap_or_else(|p| p.into_inner());
        let wal = guard.get_or_insert_with(|| ChannelWal {
            generator: WalGenerator::new(&self.pool, self.config.clone()),
            entries: Vec::new(),
        });
        while wal.entries.len() <= index {
            let m: GeneratedMessage = wal.generator.next()?;
            if m.pchannel != pchannel {
                continue;
            }
            let key = render_message_id(m.backend, &m.message_id).map(|r| order_key(&r.parts)).ok()?;
            wal.entries.push(Entry {
                type_number: type_number(&self.pool, m.type_name),
                response: Bytes::from(m.response),
                message_id: m.message_id,
                last_confirmed_id: m.last_confirmed_id,
                timetick: m.timetick,
                type_name: m.type_name,
                key,
            });
        }
        wal.entries.get(index).cloned()
    }
}

/// A salvage checkpoint the new primary hands out for one pchannel of the old one.
#[derive(Debug, Clone, PartialEq)]
pub struct Checkpoint {
    /// The entry of the last replicated message.
    pub index: usize,
    /// Its last-confirmed id (lagging by `lag` entries): where a dump starts.
    pub message_id: String,
    /// Its timetick: the new primary has every message with `_tt` ≤ this.
    pub time_tick: u64,
}

impl DemoWal {
    /// The checkpoint of `pchannel`: the first plain message (its own last-confirmed id, not a
    /// transaction's begin or commit) at or after entry `start`, with the id of the entry `lag`
    /// before it. None for an unknown pchannel or when nothing qualifies nearby.
    pub fn salvage_checkpoint(&self, pchannel: &str, start: usize, lag: usize) -> Option<Checkpoint> {
        let (index, e) = (start..start + 10_000)
            .filter_map(|i| self.entry(pchannel, i).map(|e| (i, e)))
            .find(|(_, e)| {
                e.last_confirmed_id == e.message_id && e.type_name != "BeginTxn" && e.type_name != "CommitTxn"
            })?;
        let message_id = self
            .entry(pchannel, index.saturating_sub(lag))
            .map_or(e.last_confirmed_id.clone(), |b| b.last_confirmed_id);
        Some(Checkpoint { index, message_id, time_tick: e.timetick })
    }
}

/// A validated DumpMessagesRequest.
#[derive(Debug, Clone)]
pub struct DumpRequest {
    pub pchannel: String,
    pub start_key: (i64, i64, i64),
    pub include_start: bool,
    pub start_timetick: u64,
    pub end_timetick: u64,
}

impl DumpRequest {
    /// Checks a request as the real proxy does; the error is the status message.
    pub fn parse(
        pchannel: &str,
        start_id: Option<(&str, i32)>,
        start_timetick: u64,
        end_timetick: u64,
        include_start: bool,
    ) -> Result<DumpRequest, (tonic::Code, String)> {
        use tonic::Code::{InvalidArgument, NotFound};
        if pchannel.is_empty() {
            return Err((InvalidArgument, "missing parameter: pchannel".into()));
        }
        let Some(own) = DemoWal::backend(pchannel) else {
            return Err((NotFound, format!("pchannel {pchannel} not found on this cluster")));
        };
        let Some((id, wal)) = start_id.filter(|(id, _)| !id.is_empty()) else {
            return Err((InvalidArgument, "missing parameter: start_message_id".into()));
        };
        // Upstream's order: the window before the id's validity.
        if start_timetick != 0 && end_timetick != 0 && end_timetick < start_timetick {
            return Err((InvalidArgument, "end_timetick is before start_timetick".into()));
        }
        // WAL_name Unknown means "this server's WAL", as on the real proxy.
        let backend = if wal == 0 { own } else { WalBackend::from_number(wal) };
        if backend != own {
            return Err((
                InvalidArgument,
                format!("invalid start_message_id: WAL {} does not match {}", backend.name(), own.name()),
            ));
        }
        let parts = render_message_id(backend, id)
            .map_err(|e| (InvalidArgument, format!("invalid start_message_id: {e}")))?;
        Ok(DumpRequest {
            pchannel: pchannel.to_string(),
            start_key: order_key(&parts.parts),
            include_start,
            start_timetick,
            end_timetick,
        })
    }
}

/// What to send next.
pub enum Step {
    Send(Vec<Entry>),
    /// The end timetick was passed: the stream ends with OK.
    End,
}

/// Walks one pchannel for one DumpMessages call.
pub struct DumpCursor {
    wal: Arc<DemoWal>,
    req: DumpRequest,
    next: usize,
    positioned: bool,
}

impl DumpCursor {
    pub fn new(wal: Arc<DemoWal>, req: DumpRequest) -> DumpCursor {
        DumpCursor { wal, req, next: 0, positioned: false }
    }

    fn at(&self, i: usize) -> Option<Entry> {
        self.wal.entry(&self.req.pchannel, i)
    }

    /// The next message or transaction (begin, bodies, commit) that passes every filter. The
    /// timetick window is judged per transaction, by its commit (reference §4).
    pub fn step(&mut self) -> Option<Step> {
        if !self.positioned {
            loop {
                let e = self.at(self.next)?;
                let after = if self.req.include_start {
                    e.key >= self.req.start_key
                } else {
                    e.key > self.req.start_key
                };
                if after {
                    break;
                }
                self.next += 1;
            }
            self.positioned = true;
        }
        loop {
            let first = self.at(self.next)?;
            let mut group = vec![first];
            if group[0].type_name == "BeginTxn" {
                loop {
                    let e = self.at(self.next + group.len())?;
                    let done = e.type_name == "CommitTxn" || e.type_name == "RollbackTxn";
                    group.push(e);
                    if done {
                        break;
                    }
                }
            }
            self.next += group.len();
            // A rolled-back transaction never reaches a reader of the WAL.
            if group.last().is_some_and(|e| e.type_name == "RollbackTxn") {
                continue;
            }
            let judge = group.last().map_or(0, |e| e.timetick);
            // A cycling WAL's timeticks repeat: no window can be judged on them.
            let windowed = self.wal.cycle.is_none();
            if windowed && self.req.end_timetick != 0 && judge > self.req.end_timetick {
                return Some(Step::End);
            }
            if windowed && judge < self.req.start_timetick {
                continue;
            }
            group.retain(|e| is_dumped_type(e.type_number) && e.type_name != "RollbackTxn");
            if !group.is_empty() {
                return Some(Step::Send(group));
            }
        }
    }
}

/// A transaction as servers before 2.6.20 dump it: one `Txn` (999) frame at the commit's id and
/// timetick, with an empty body and header. Anything else passes unchanged.
pub fn opaque_txn(response: &prost_reflect::MessageDescriptor, group: Vec<Entry>) -> Vec<Entry> {
    let is_txn = group.first().is_some_and(|e| e.type_name == "BeginTxn");
    let Some(commit) = group.last().filter(|_| is_txn).cloned() else { return group };
    let Ok(mut frame) = prost_reflect::DynamicMessage::decode(response.clone(), commit.response.as_ref())
    else {
        return group;
    };
    let Some(prost_reflect::Value::Message(m)) = frame.get_field_by_name_mut("message") else { return group };
    m.set_field_by_name("payload", prost_reflect::Value::Bytes(Bytes::new()));
    if let Some(prost_reflect::Value::Map(props)) = m.get_field_by_name_mut("properties") {
        let key = |k: &str| prost_reflect::MapKey::String(k.into());
        props.insert(key("_t"), prost_reflect::Value::String("999".into()));
        props.insert(key("_h"), prost_reflect::Value::String(String::new()));
    }
    let mut e = commit;
    e.response = Bytes::from(crate::codec::encode(&frame));
    e.type_name = "Txn";
    e.type_number = 999;
    vec![e]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::SchemaSet;

    /// A timetick window that cuts through a transaction takes it whole or not at all, judged by
    /// its commit: a start inside it keeps it (with its BeginTxn below the start), an end inside
    /// it leaves it out.
    #[test]
    fn the_window_is_judged_per_transaction_by_its_commit() {
        let set = SchemaSet::builtin();
        let wal =
            Arc::new(DemoWal::new(set.pool(), WalGenConfig { seed: 1, rows: (1, 1), ..Default::default() }));
        let (p, _) = PCHANNELS[0];
        let entries: Vec<Entry> = (0..400).filter_map(|i| wal.entry(p, i)).collect();
        let begin = entries.iter().position(|e| e.type_name == "BeginTxn").expect("a transaction");
        let commit =
            begin + entries[begin..].iter().position(|e| e.type_name == "CommitTxn").expect("its commit");
        let (b, c) = (entries[begin].timetick, entries[commit].timetick);
        assert!(c > b + 1, "the transaction spans timeticks");
        let first = entries[0].message_id.clone();
        let run = |start: u64, end: u64| -> Vec<String> {
            let req = DumpRequest::parse(p, Some((&first, 0)), start, end, true).expect("request");
            let mut cursor = DumpCursor::new(wal.clone(), req);
            let mut ids = Vec::new();
            while let Some(Step::Send(group)) = cursor.step() {
                ids.extend(group.into_iter().map(|e| e.message_id));
                if ids.len() > 300 {
                    break;
                }
            }
            ids
        };
        let txn: Vec<String> = entries[begin..=commit].iter().map(|e| e.message_id.clone()).collect();
        // A start between its BeginTxn and its CommitTxn: the whole transaction comes first.
        let from_inside = run(b + 1, 0);
        assert_eq!(from_inside[..txn.len()], txn[..], "the transaction whole, its BeginTxn included");
        // An end between them: the stream stops before the transaction.
        let to_inside = run(0, c - 1);
        assert!(!to_inside.iter().any(|id| txn.contains(id)), "no part of the transaction");
        assert_eq!(to_inside.last(), Some(&entries[begin - 1].message_id), "everything before it");
    }
}
