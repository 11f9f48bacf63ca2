//! The salvage to replay: the dumps of a salvage folder (its `salvage.json`) or dump files named
//! one by one, each memory-mapped with the checkpoint its manifest records, read frame by frame
//! into [`SourceMessage`]s: the properties the replay rules need, and the body only for the
//! types that are replayed.
//!
//! A dump cut short while it is mapped reads as zeros past its new end instead of killing the
//! process (see [`crate::dump::mapping`]); every read that feeds a plan or a send is checked
//! after it, so those zeros are an error in words, never a message.
//!
//! Must never: read a dump into memory, or stop at a damaged frame without saying where it is.

use super::ReplayError;
use crate::dump::chunks::frame_chunk;
use crate::dump::framing::{HeaderFault, read_header};
use crate::dump::{Framing, Manifest, manifest_path};
use crate::salvage::{FolderManifest, SalvageRecord};
use crate::schema::SchemaSet;
use crate::wal::chunk::{Grouper, Pushed};
use crate::wal::{Encryption, analyze, analyze_row};
use prost_reflect::{DynamicMessage, MapKey, MessageDescriptor, Value};
use std::path::{Path, PathBuf};

mod chunks;
use chunks::{Place, joined_payload};

const RESPONSE_TYPE: &str = crate::salvage::RESPONSE_TYPE;

/// One dump of the salvage.
pub struct Dump {
    pub path: PathBuf,
    pub pchannel: String,
    /// The salvage checkpoint's timetick: frames at or below it are on the new primary.
    pub checkpoint_tt: Option<u64>,
    map: Option<crate::dump::mapping::Mapping>,
    len: usize,
}

impl Dump {
    fn open(path: &Path, pchannel: Option<String>) -> Result<Dump, ReplayError> {
        let err = |reason: String| ReplayError::File { path: path.display().to_string(), reason };
        let manifest = Manifest::load(&manifest_path(path)).ok();
        let record = manifest.as_ref().and_then(SalvageRecord::of);
        let checkpoint = record.as_ref().and_then(|r| r.checkpoint.clone());
        let pchannel = pchannel
            .or_else(|| checkpoint.as_ref().map(|c| c.pchannel.clone()))
            .or_else(|| path.file_stem().map(|s| s.to_string_lossy().to_string()))
            .unwrap_or_default();
        let file = std::fs::File::open(path).map_err(|e| err(e.to_string()))?;
        let len = file.metadata().map_err(|e| err(e.to_string()))?.len() as usize;
        // A dump being appended to only grows and we read up to `len`; one cut short is absorbed.
        let map = if len == 0 {
            None
        } else {
            Some(crate::dump::mapping::Mapping::map(file).map_err(|e| err(e.to_string()))?)
        };
        Ok(Dump {
            path: path.to_path_buf(),
            pchannel,
            checkpoint_tt: checkpoint.map(|c| c.time_tick),
            map,
            len,
        })
    }

    fn bytes(&self) -> &[u8] {
        self.map.as_ref().map_or(&[], |m| &m.bytes()[..self.len])
    }

    /// An error when the dump was cut short since it was opened: call it after reading, and
    /// what was read before it passes was the file's own.
    fn check(&self) -> Result<(), ReplayError> {
        match self.map.as_ref().map(|m| m.check()) {
            Some(Err(s)) => Err(ReplayError::File {
                path: self.path.display().to_string(),
                reason: format!(
                    "{s} while it was read: nothing past byte {} is used. Open it again once whatever changed it has finished",
                    s.now
                ),
            }),
            _ => Ok(()),
        }
    }

    /// The frame body at `offset` (as [`SourceMessage::offset`] names it).
    pub fn frame(&self, offset: u64, len: u32) -> Result<&[u8], ReplayError> {
        let (a, b) = (offset as usize, offset as usize + len as usize);
        self.bytes().get(a..b).ok_or_else(|| ReplayError::File {
            path: self.path.display().to_string(),
            reason: format!(
                "bytes {a}..{b} are past the end ({}): the dump changed since the plan",
                self.len
            ),
        })
    }
}

/// Every dump of one salvage.
pub struct Salvage {
    pub dumps: Vec<Dump>,
    /// Where the journal and the saved plan live.
    pub dir: PathBuf,
    response: MessageDescriptor,
}

/// What the replay rules need of one WAL message.
#[derive(Debug, Clone)]
pub struct SourceMessage {
    pub dump: usize,
    pub frame: u64,
    /// Offset and length of the frame body (a DumpMessagesResponse) in the dump.
    pub offset: u64,
    pub len: u32,
    pub message_id: String,
    /// The id as its WAL backend writes it (`RocksMQ 1007`, `Pulsar 100/7/-1`).
    pub message_id_display: String,
    pub tt: u64,
    pub type_name: String,
    pub type_number: i32,
    pub txn_id: Option<i64>,
    pub encrypted: bool,
    pub unreplicable: bool,
    pub broadcast_id: Option<u64>,
    /// The typed body, for the types a replay sends (Insert, Delete, DDL); None otherwise.
    pub body: Option<DynamicMessage>,
    /// Why the body could not be read, when it could not.
    pub body_error: Option<String>,
    /// An Insert's payload, read at the wire level instead of decoded (see `wire_insert`).
    pub payload: Option<bytes::Bytes>,
    /// The collection named by the body, when it was read.
    pub collection: Option<String>,
    /// The database named by the body (`default` when it names none), when it was read.
    pub db: Option<String>,
    /// How many chunks the message was joined from (1: it was not split). `frame`, `offset`
    /// and `len` are then chunk 0's, from which [`Salvage::payload_at`] finds the rest.
    pub chunks: u32,
    /// Why a chunked message cannot be read (its group is not whole in the dump, or is broken).
    pub chunk_problem: Option<String>,
}

/// Types whose body the replay reads.
fn wants_body(t: &str) -> bool {
    matches!(
        t,
        "Insert" | "Delete" | "CreateCollection" | "DropCollection" | "CreatePartition" | "DropPartition"
    )
}

impl Salvage {
    /// A salvage folder (with `salvage.json`), or one or more dump files.
    pub fn open(inputs: &[PathBuf]) -> Result<Salvage, ReplayError> {
        let set = SchemaSet::shared_builtin();
        let response = set.message(RESPONSE_TYPE).map_err(|e| ReplayError::Plan(e.to_string()))?;
        let mut dumps = Vec::new();
        let mut dir = None;
        for input in inputs {
            if input.is_dir() {
                let m = FolderManifest::load(input).map_err(|e| ReplayError::File {
                    path: input.display().to_string(),
                    reason: e.to_string(),
                })?;
                for e in &m.pchannels {
                    let Some(file) = &e.file else { continue };
                    let path = input.join(file);
                    if path.exists() {
                        dumps.push(Dump::open(&path, Some(e.pchannel.clone()))?);
                    }
                }
                dir.get_or_insert_with(|| input.clone());
            } else {
                dumps.push(Dump::open(input, None)?);
                dir.get_or_insert_with(|| {
                    input.parent().map_or_else(|| PathBuf::from("."), Path::to_path_buf)
                });
            }
        }
        if dumps.is_empty() {
            return Err(ReplayError::Plan("no dump to replay: give a salvage folder or dump files".into()));
        }
        let dir = dir.unwrap_or_else(|| PathBuf::from("."));
        Ok(Salvage { dumps, dir, response })
    }

    /// Every frame of dump `d` in order, read into a [`SourceMessage`]. A frame that is not a
    /// DumpMessagesResponse ends the dump with an error naming its offset; a cut tail (a dump
    /// still being written) ends it quietly at the last complete frame.
    pub fn for_each(&self, d: usize, mut f: impl FnMut(SourceMessage)) -> Result<(), ReplayError> {
        let dump = &self.dumps[d];
        let buf = dump.bytes();
        let set = SchemaSet::shared_builtin();
        let (mut pos, mut frame) = (0usize, 0u64);
        let bad = |frame: u64, offset: usize, reason: String| ReplayError::Frame {
            path: dump.path.display().to_string(),
            frame,
            offset: offset as u64,
            reason,
        };
        // Chunks are held (as places in the dump) until their group is whole, then read as the
        // one message they are; a group left unfinished is a message that cannot be read.
        let mut chunks: Grouper<Place> = Grouper::default();
        while pos < buf.len() {
            let header = match read_header(buf, pos, Framing::VarintDelimited) {
                Ok(h) => h,
                Err(HeaderFault::Truncated { .. }) => break,
                Err(HeaderFault::Invalid(why)) => return Err(bad(frame, pos, why)),
            };
            let start = pos + header.header_len as usize;
            let end = pos + header.total() as usize;
            let place = Place { frame, start, end };
            let body = &buf[start..end];
            let fc = frame_chunk(body, true);
            let (mark, barrier, payload) = match &fc {
                Some(c) => (c.mark.clone(), c.type_number.filter(|t| *t == 1).and(c.timetick), c.payload),
                None => (None, None, &[][..]),
            };
            match chunks.push(place, mark, barrier, payload) {
                Pushed::Plain => {
                    let message = self.read(body, set.pool()).map_err(|e| bad(frame, pos, e))?;
                    f(place.source(d, message));
                }
                Pushed::Held | Pushed::Duplicate { .. } => {}
                Pushed::Complete(g) => {
                    let message = self.joined(buf, &g.members, set.pool()).map_err(|e| bad(frame, pos, e))?;
                    f(g.members[0].source(d, message));
                }
                Pushed::Broken { members, reason, .. } => {
                    let first = members.first().copied().unwrap_or(place);
                    f(self.unjoinable(buf, first, d, format!("broken chunk group: {reason}"), set.pool())?);
                }
                Pushed::Malformed { reason } => {
                    f(self.unjoinable(buf, place, d, format!("chunk markers: {reason}"), set.pool())?);
                }
            }
            for ended in chunks.take_ended() {
                self.incomplete(buf, d, &ended, "a TimeTick passed it", &mut f, set.pool())?;
            }
            pos = end;
            frame += 1;
        }
        for left in chunks.finish() {
            self.incomplete(buf, d, &left, "the dump ends first", &mut f, set.pool())?;
        }
        dump.check()
    }

    /// The ImmutableMessage of a frame body, analyzed.
    fn read(&self, body: &[u8], pool: &prost_reflect::DescriptorPool) -> Result<SourceMessage, String> {
        self.read_immutable(self.immutable(body)?, pool)
    }

    /// The ImmutableMessage a frame body (a DumpMessagesResponse) carries.
    fn immutable(&self, body: &[u8]) -> Result<DynamicMessage, String> {
        let frame = DynamicMessage::decode(self.response.clone(), body)
            .map_err(|e| format!("not a DumpMessagesResponse: {e}"))?;
        frame
            .get_field_by_name("message")
            .and_then(|v| v.as_message().cloned())
            .ok_or_else(|| "the frame carries no message".to_string())
    }

    /// One ImmutableMessage, analyzed.
    fn read_immutable(
        &self,
        m: DynamicMessage,
        pool: &prost_reflect::DescriptorPool,
    ) -> Result<SourceMessage, String> {
        let props = match m.get_field_by_name("properties").as_deref() {
            Some(Value::Map(map)) => map.clone(),
            _ => Default::default(),
        };
        // An Insert's rows are read from its wire bytes (a full decode of its vectors is the
        // slow part of a replay); anything unusual takes the typed path below.
        let row = analyze_row(pool, &m);
        let mut payload = None;
        let mut collection = None;
        let mut db = None;
        let w = if row.type_name == "Insert" && !row.is_encrypted() && row.problems.is_empty() {
            let bytes = m.get_field_by_name("payload").and_then(|v| v.as_bytes().cloned());
            if let Some(facts) = bytes.as_deref().and_then(super::wire_insert::read) {
                collection = Some(facts.collection.clone());
                db = Some(super::database_name(&facts.db));
                payload = bytes;
                row
            } else {
                analyze(pool, &m)
            }
        } else if wants_body(&row.type_name) && !row.is_encrypted() {
            analyze(pool, &m)
        } else {
            row
        };
        let Some(tt) = w.timetick else { return Err("the message has no readable _tt".into()) };
        let type_number = w.type_number.unwrap_or(0);
        let (body, body_error) = if payload.is_some() {
            (None, None)
        } else if wants_body(&w.type_name) && !w.is_encrypted() {
            match w.body {
                Some(Ok(b)) => (Some(b), None),
                Some(Err(e)) => (None, Some(e)),
                None => (None, Some("no body".into())),
            }
        } else {
            (None, None)
        };
        let u64_of = |m: &DynamicMessage, f: &str| m.get_field_by_name(f).and_then(|v| v.as_u64());
        Ok(SourceMessage {
            dump: 0,
            frame: 0,
            offset: 0,
            len: 0,
            message_id: w
                .id
                .as_ref()
                .and_then(|r| r.as_ref().ok())
                .map(|r| r.raw.clone())
                .unwrap_or_default(),
            message_id_display: w
                .id
                .as_ref()
                .and_then(|r| r.as_ref().ok())
                .map(|r| r.display.clone())
                .unwrap_or_default(),
            tt,
            type_name: w.type_name.clone(),
            type_number,
            txn_id: w.txn.as_ref().and_then(|t| t.get_field_by_name("txn_id").and_then(|v| v.as_i64())),
            encrypted: matches!(w.encryption, Encryption::Encrypted { .. }),
            unreplicable: props.contains_key(&MapKey::String("_ur".into())),
            broadcast_id: w.broadcast.as_ref().and_then(|b| u64_of(b, "broadcast_id")),
            collection: collection
                .or_else(|| body.as_ref().map(super::units::collection_of).filter(|c| !c.is_empty())),
            db: db.or_else(|| body.as_ref().map(super::units::database_of_body)),
            body,
            body_error,
            payload,
            chunks: 1,
            chunk_problem: None,
        })
    }

    /// The payload of the message in a frame, read at the wire level (DumpMessagesResponse
    /// `message` 2, ImmutableMessage `payload` 2).
    pub fn payload_at(&self, d: usize, offset: u64, len: u32) -> Result<bytes::Bytes, ReplayError> {
        use crate::wire::scan::first_len;
        let dump = self.dump(d)?;
        let frame = dump.frame(offset, len)?;
        if let Some(members) = self.group_at(d, offset, len)? {
            let payload = joined_payload(dump.bytes(), &members).map_err(|reason| ReplayError::Frame {
                path: dump.path.display().to_string(),
                frame: 0,
                offset,
                reason,
            })?;
            dump.check()?;
            return Ok(payload.into());
        }
        let payload = first_len(frame, 2).and_then(|m| first_len(m, 2)).map(bytes::Bytes::copy_from_slice);
        // Checked after the copy: what is sent is the file's own.
        dump.check()?;
        payload.ok_or_else(|| ReplayError::Frame {
            path: dump.path.display().to_string(),
            frame: 0,
            offset,
            reason: "the frame carries no message payload".into(),
        })
    }

    fn dump(&self, d: usize) -> Result<&Dump, ReplayError> {
        self.dumps.get(d).ok_or_else(|| {
            ReplayError::Plan(format!("the plan names dump {d}, which is not among the inputs"))
        })
    }

    /// The body of the message in a frame, for sending (as planned).
    pub fn body_at(&self, d: usize, offset: u64, len: u32) -> Result<DynamicMessage, ReplayError> {
        let dump = self.dump(d)?;
        let set = SchemaSet::shared_builtin();
        let read = match self.group_at(d, offset, len)? {
            Some(members) => self.joined(dump.bytes(), &members, set.pool()),
            None => self.read(dump.frame(offset, len)?, set.pool()),
        };
        let m = read.map_err(|reason| ReplayError::Frame {
            path: dump.path.display().to_string(),
            frame: 0,
            offset,
            reason,
        })?;
        // Checked after the read: what is sent is the file's own.
        dump.check()?;
        if let (None, Some(payload)) = (&m.body, &m.payload) {
            let d = set
                .message("milvus.proto.msg.InsertRequest")
                .map_err(|e| ReplayError::Plan(e.to_string()))?;
            return DynamicMessage::decode(d, payload.as_ref()).map_err(|e| ReplayError::Frame {
                path: dump.path.display().to_string(),
                frame: 0,
                offset,
                reason: format!("the InsertRequest does not decode: {e}"),
            });
        }
        m.body.ok_or_else(|| ReplayError::Frame {
            path: dump.path.display().to_string(),
            frame: 0,
            offset,
            reason: m.body_error.unwrap_or_else(|| "no body".into()),
        })
    }
}

impl Salvage {
    /// The schema of every CreateCollection in the dumps (replicated or not: the schema the data
    /// was written with), by collection name; a later one wins. Reads only those frames' bodies.
    pub fn created_schemas(
        &self,
        db: &str,
    ) -> Result<std::collections::HashMap<String, DynamicMessage>, ReplayError> {
        let set = SchemaSet::shared_builtin();
        let create = set
            .pool()
            .get_enum_by_name("milvus.proto.messages.MessageType")
            .and_then(|e| e.get_value_by_name("CreateCollection").map(|v| v.number().to_string()))
            .unwrap_or_default();
        let mut out = std::collections::HashMap::new();
        for dump in &self.dumps {
            let buf = dump.bytes();
            let mut pos = 0usize;
            while pos < buf.len() {
                let Ok(h) = read_header(buf, pos, Framing::VarintDelimited) else { break };
                let body = &buf[pos + h.header_len as usize..pos + h.total() as usize];
                pos += h.total() as usize;
                let Ok(frame) = DynamicMessage::decode(self.response.clone(), body) else { continue };
                let Some(m) = frame.get_field_by_name("message").and_then(|v| v.as_message().cloned()) else {
                    continue;
                };
                let is_create = matches!(m.get_field_by_name("properties").as_deref(),
                    Some(Value::Map(p)) if p.get(&MapKey::String("_t".into())).and_then(|v| v.as_str()) == Some(create.as_str()));
                if !is_create {
                    continue;
                }
                let w = analyze(set.pool(), &m);
                let Some(Ok(b)) = w.body else { continue };
                let schema = b
                    .get_field_by_name("collection_schema")
                    .and_then(|v| v.as_message().cloned())
                    .or_else(|| {
                        let bytes = b.get_field_by_name("schema").and_then(|v| v.as_bytes().cloned())?;
                        let d = set.message("milvus.proto.schema.CollectionSchema").ok()?;
                        DynamicMessage::decode(d, bytes.as_ref()).ok()
                    });
                let name = b
                    .get_field_by_name("collectionName")
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default();
                if super::units::database_of_body(&b) != db {
                    continue;
                }
                if let Some(s) = schema {
                    out.insert(name, s);
                }
            }
            dump.check()?;
        }
        Ok(out)
    }
}
