//! The replay rules (reference `milvus-replay.md` §3): per pchannel, messages become units — a
//! plain message, or a whole transaction buffered to its CommitTxn and judged by the commit's
//! timetick — and every message that is not replayed becomes a [`Skipped`] with its reason.
//! Units of every pchannel are then merged by `_tt`; a DDL seen on several pchannels is kept once.
//!
//! Must never: split a transaction, keep an incomplete one, or drop a message without a reason.

use super::Pk;
use super::source::{Salvage, SourceMessage};
use prost_reflect::{DynamicMessage, Value};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};

/// Where a body is in the salvage (read again when the call is sent).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FrameAt {
    pub dump: usize,
    pub offset: u64,
    pub len: u32,
}

/// One public-API call of the replay (before batching).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "call")]
pub enum Op {
    CreateCollection {
        db: String,
        collection: String,
        at: FrameAt,
    },
    DropCollection {
        db: String,
        collection: String,
    },
    CreatePartition {
        db: String,
        collection: String,
        partition: String,
    },
    Insert {
        db: String,
        collection: String,
        partition: String,
        at: FrameAt,
        rows: u64,
        keys: Vec<Pk>,
    },
    Delete {
        db: String,
        collection: String,
        partition: String,
        keys: Vec<Pk>,
    },
    /// An Insert and a Delete of the same keys in one transaction: Milvus's own upsert.
    Upsert {
        db: String,
        collection: String,
        partition: String,
        at: FrameAt,
        rows: u64,
        keys: Vec<Pk>,
    },
}

impl Op {
    pub fn collection(&self) -> &str {
        match self {
            Op::CreateCollection { collection, .. }
            | Op::DropCollection { collection, .. }
            | Op::CreatePartition { collection, .. }
            | Op::Insert { collection, .. }
            | Op::Delete { collection, .. }
            | Op::Upsert { collection, .. } => collection,
        }
    }

    pub fn db(&self) -> &str {
        match self {
            Op::CreateCollection { db, .. }
            | Op::DropCollection { db, .. }
            | Op::CreatePartition { db, .. }
            | Op::Insert { db, .. }
            | Op::Delete { db, .. }
            | Op::Upsert { db, .. } => db,
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Op::CreateCollection { .. } => "CreateCollection",
            Op::DropCollection { .. } => "DropCollection",
            Op::CreatePartition { .. } => "CreatePartition",
            Op::Insert { .. } => "Insert",
            Op::Delete { .. } => "Delete",
            Op::Upsert { .. } => "Upsert",
        }
    }
}

/// What is applied as one: one message, or one transaction. `key` names it in the journal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Unit {
    pub key: String,
    /// The (commit) message's id as its WAL backend writes it.
    pub message: String,
    pub pchannel: String,
    pub tt: u64,
    pub txn: Option<i64>,
    pub ops: Vec<Op>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum SkipReason {
    /// `_tt` at or below the pchannel's checkpoint: the new primary has it.
    Replicated,
    /// `_t=999` from a server before the fix: the transaction's data is not in the dump.
    OpaqueTxn,
    Encrypted,
    /// `_ur`: a DDL whose replay is not deterministic.
    Unreplicable,
    ReplicateConfig,
    /// TimeTick, Flush, CreateSegment: the server's own bookkeeping.
    SelfControlled,
    RolledBack,
    ManualFlush,
    /// Import/CommitImport: files in the old primary's object storage.
    Import,
    /// A delete carrying only a predicate plan: no keys to build `pk in [...]` from.
    PredicateDelete,
    /// No CommitTxn before the end of the dump.
    IncompleteTxn,
    /// A broadcast DDL already taken from another pchannel.
    DuplicateBroadcast,
    /// CreateCollection / CreatePartition of something the new primary has.
    AlreadyExists,
    /// A type walscope does not replay (DDL such as CreateIndex, RBAC, databases).
    NotReplayed,
    /// The body could not be read.
    Unreadable,
    /// In another database than the one this replay goes to.
    OtherDatabase,
    /// A payload split into chunks (`_ci`/`_ct`) whose group is not whole in the dump, or
    /// cannot be trusted: its body cannot be read.
    IncompleteChunks,
}

impl SkipReason {
    pub fn describe(self) -> &'static str {
        match self {
            SkipReason::Replicated => "at or below the checkpoint: already on the new primary",
            SkipReason::OpaqueTxn => {
                "Txn (999) frame with an empty body: DATA MISSING, dump again from a fixed server (2.6.20+)"
            }
            SkipReason::Encrypted => "encrypted payload (_ch): cannot be read",
            SkipReason::Unreplicable => "marked unreplicable (_ur)",
            SkipReason::ReplicateConfig => "AlterReplicateConfig: cluster configuration, never replayed",
            SkipReason::SelfControlled => "self-controlled (TimeTick, Flush, CreateSegment)",
            SkipReason::RolledBack => "part of a rolled-back transaction",
            SkipReason::ManualFlush => "ManualFlush: the new primary flushes on its own",
            SkipReason::Import => {
                "Import refers to files in the old primary's object storage: re-import by hand"
            }
            SkipReason::PredicateDelete => {
                "delete by predicate plan without keys: cannot be replayed as pk in [...]"
            }
            SkipReason::IncompleteTxn => "transaction without CommitTxn at the end of the dump: dropped",
            SkipReason::DuplicateBroadcast => "broadcast DDL already taken from another pchannel",
            SkipReason::AlreadyExists => "the new primary already has it",
            SkipReason::NotReplayed => "not replayed by walscope: apply it by hand",
            SkipReason::Unreadable => "body unreadable",
            SkipReason::IncompleteChunks => {
                "chunked payload whose chunks are not all in the dump: its body cannot be read, dump a wider window"
            }
            SkipReason::OtherDatabase => {
                "in another database than the plan's: plan it into that database (--db NAME, or a profile of that database)"
            }
        }
    }
}

/// One message that is not sent, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    pub pchannel: String,
    pub message_id: String,
    pub tt: u64,
    pub type_name: String,
    pub reason: SkipReason,
    /// Collection, when known.
    pub collection: Option<String>,
    pub detail: Option<String>,
}

/// The name of the primary key field of a collection, when known.
pub type PkOf<'a> = dyn FnMut(&str) -> Option<String> + 'a;

fn text(m: &DynamicMessage, f: &str) -> String {
    m.get_field_by_name(f).and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
}

/// The keys in whichever of two array members (`long`: a LongArray, `string`: a StringArray)
/// of `m` is set.
fn keys_in(m: &DynamicMessage, long: &str, string: &str) -> Vec<Pk> {
    let data = |f: &str| -> Vec<Value> {
        let arr = m.get_field_by_name(f).and_then(|v| v.as_message().cloned());
        match arr.as_ref().and_then(|a| a.get_field_by_name("data")).as_deref() {
            Some(Value::List(l)) => l.clone(),
            _ => Vec::new(),
        }
    };
    if m.has_field_by_name(long) {
        return data(long).iter().filter_map(|v| v.as_i64()).map(Pk::Int).collect();
    }
    if m.has_field_by_name(string) {
        return data(string).iter().filter_map(|v| v.as_str().map(|s| Pk::Str(s.to_string()))).collect();
    }
    Vec::new()
}

/// The keys of an IDs message.
pub fn ids_keys(ids: &DynamicMessage) -> Vec<Pk> {
    keys_in(ids, "int_id", "str_id")
}

/// The keys in column `pk` of a WAL InsertRequest's `fields_data`.
pub fn insert_keys(body: &DynamicMessage, pk: &str) -> Option<Vec<Pk>> {
    let Some(Value::List(fields)) = body.get_field_by_name("fields_data").as_deref().cloned() else {
        return None;
    };
    let field = fields.iter().filter_map(|v| v.as_message()).find(|f| text(f, "field_name") == pk)?.clone();
    let keys = insert_keys_of_field(&field);
    let present = field.get_field_by_name("scalars").and_then(|s| {
        s.as_message().map(|s| s.has_field_by_name("long_data") || s.has_field_by_name("string_data"))
    });
    present.unwrap_or(false).then_some(keys)
}

/// The Int64 or VarChar values of one FieldData column.
pub fn insert_keys_of_field(field: &DynamicMessage) -> Vec<Pk> {
    match field.get_field_by_name("scalars").and_then(|v| v.as_message().cloned()) {
        Some(scalars) => keys_in(&scalars, "long_data", "string_data"),
        None => Vec::new(),
    }
}

/// DataType numbers to names, as the built-in schema has them.
fn data_type_names() -> std::collections::HashMap<i32, String> {
    crate::schema::SchemaSet::shared_builtin()
        .pool()
        .get_enum_by_name("milvus.proto.schema.DataType")
        .map(|e| e.values().map(|v| (v.number(), v.name().to_string())).collect())
        .unwrap_or_default()
}

/// The result of reading a salvage.
#[derive(Debug, Default)]
pub struct Units {
    pub units: Vec<Unit>,
    pub skipped: Vec<Skipped>,
    /// Problems that stop an apply (an Insert whose keys cannot be found, ...).
    pub problems: Vec<String>,
    /// Frames read per dump.
    pub frames: Vec<u64>,
    /// Per collection, the columns of its first replayed Insert (what the rows carry, for the
    /// schema check when the dump has no CreateCollection).
    pub insert_fields: std::collections::HashMap<String, Vec<super::schema_check::FieldShape>>,
}

struct Walk<'s, 'p> {
    pchannel: String,
    /// The database the replay goes to: messages of any other are skipped, never redirected.
    db: &'p str,
    checkpoint: Option<u64>,
    pk_of: &'p mut PkOf<'s>,
    out: Units,
    seq: Vec<(u64, usize, usize)>,
    open: BTreeMap<i64, Vec<SourceMessage>>,
    /// Transactions with a body in another database: that database and collection.
    foreign_txns: std::collections::HashMap<i64, (String, Option<String>)>,
}

impl Walk<'_, '_> {
    fn skip(&mut self, m: &SourceMessage, reason: SkipReason, detail: Option<String>) {
        let collection =
            m.body.as_ref().map(collection_of).or_else(|| m.collection.clone()).filter(|c| !c.is_empty());
        self.out.skipped.push(Skipped {
            pchannel: self.pchannel.clone(),
            message_id: m.message_id_display.clone(),
            tt: m.tt,
            type_name: m.type_name.clone(),
            reason,
            collection,
            detail,
        });
    }

    /// The database of `m` when it is not the replay's: nothing else of `m` is looked at then
    /// (its collection is another database's, not this one's).
    fn other_database(&self, m: &SourceMessage) -> Option<String> {
        m.db.clone().filter(|d| d != self.db)
    }

    /// The call a message of the replay's database becomes, or why it is skipped.
    fn op(&mut self, m: &SourceMessage) -> Result<Option<Op>, (SkipReason, Option<String>)> {
        if let Some(why) = &m.chunk_problem {
            return Err((SkipReason::IncompleteChunks, Some(why.clone())));
        }
        if m.encrypted {
            return Err((SkipReason::Encrypted, None));
        }
        if m.unreplicable {
            return Err((SkipReason::Unreplicable, None));
        }
        let t = m.type_name.as_str();
        match t {
            "TimeTick" | "Flush" | "CreateSegment" => return Err((SkipReason::SelfControlled, None)),
            "AlterReplicateConfig" => return Err((SkipReason::ReplicateConfig, None)),
            "ManualFlush" => return Err((SkipReason::ManualFlush, None)),
            "Import" | "CommitImport" => return Err((SkipReason::Import, None)),
            _ => {}
        }
        if m.type_number == 999 || t == "Txn" {
            return Err((SkipReason::OpaqueTxn, None));
        }
        if let Some(payload) = &m.payload {
            return self.wire_insert(m, payload).map(Some);
        }
        let Some(body) = &m.body else {
            return match &m.body_error {
                Some(e) => Err((SkipReason::Unreadable, Some(e.clone()))),
                None => Err((SkipReason::NotReplayed, None)),
            };
        };
        let db = database_of_body(body);
        let collection = collection_of(body);
        let at = FrameAt { dump: m.dump, offset: m.offset, len: m.len };
        Ok(Some(match t {
            "Insert" => {
                let pk = self.primary_key(&collection)?;
                let Some(keys) = insert_keys(body, &pk) else {
                    return Err((
                        SkipReason::Unreadable,
                        Some(format!("no column {pk} (the primary key) in fields_data")),
                    ));
                };
                let rows = body
                    .get_field_by_name("num_rows")
                    .and_then(|v| v.as_u64())
                    .filter(|n| *n > 0)
                    .unwrap_or(keys.len() as u64);
                Op::Insert { db, collection, partition: text(body, "partition_name"), at, rows, keys }
            }
            "Delete" => {
                let mut keys = body
                    .get_field_by_name("primary_keys")
                    .and_then(|v| v.as_message().map(ids_keys))
                    .unwrap_or_default();
                if keys.is_empty()
                    && let Some(Value::List(l)) = body.get_field_by_name("int64_primary_keys").as_deref()
                {
                    keys = l.iter().filter_map(|v| v.as_i64()).map(Pk::Int).collect();
                }
                if keys.is_empty() {
                    return Err((SkipReason::PredicateDelete, Some(format!("collection {collection}"))));
                }
                Op::Delete { db, collection, partition: String::new(), keys }
            }
            "CreateCollection" => Op::CreateCollection { db, collection, at },
            "DropCollection" => Op::DropCollection { db, collection },
            "CreatePartition" => {
                Op::CreatePartition { db, collection, partition: text(body, "partition_name") }
            }
            _ => return Err((SkipReason::NotReplayed, None)),
        }))
    }

    /// The primary key field of `collection`; unknown is a problem that stops the apply.
    fn primary_key(&mut self, collection: &str) -> Result<String, (SkipReason, Option<String>)> {
        if let Some(pk) = (self.pk_of)(collection) {
            return Ok(pk);
        }
        let why = format!(
            "collection {collection}: its primary key is unknown (not on the new primary, no CreateCollection in the dump)"
        );
        if !self.out.problems.contains(&why) {
            self.out.problems.push(why.clone());
        }
        Err((SkipReason::Unreadable, Some(why)))
    }

    /// An Insert read at the wire level.
    fn wire_insert(&mut self, m: &SourceMessage, payload: &[u8]) -> Result<Op, (SkipReason, Option<String>)> {
        use super::wire_insert as wi;
        let unreadable = |why: &str| (SkipReason::Unreadable, Some(why.to_string()));
        let facts = wi::read(payload).ok_or_else(|| unreadable("the InsertRequest cannot be read"))?;
        let collection = facts.collection.clone();
        let pk = self.primary_key(&collection)?;
        let column = facts.fields.iter().find(|f| wi::field_name(f).as_deref() == Some(pk.as_str()));
        let keys = column.and_then(|f| wi::keys(f)).ok_or_else(|| {
            unreadable(&format!("no readable column {pk} (the primary key) in fields_data"))
        })?;
        if !self.out.insert_fields.contains_key(&collection) {
            let names = data_type_names();
            if let Some(cols) =
                wi::columns(&facts, &pk, |n| names.get(&n).cloned().unwrap_or_else(|| n.to_string()))
            {
                self.out.insert_fields.insert(collection.clone(), cols);
            }
        }
        let rows = if facts.num_rows > 0 { facts.num_rows } else { keys.len() as u64 };
        let db = super::database_name(&facts.db);
        let at = FrameAt { dump: m.dump, offset: m.offset, len: m.len };
        Ok(Op::Insert { db, collection, partition: facts.partition.clone(), at, rows, keys })
    }

    fn push_unit(&mut self, key: String, message: String, tt: u64, txn: Option<i64>, ops: Vec<Op>) {
        if ops.is_empty() {
            return;
        }
        let i = self.out.units.len();
        self.out.units.push(Unit { key, message, pchannel: self.pchannel.clone(), tt, txn, ops });
        self.seq.push((tt, 0, i));
    }

    fn message(&mut self, m: SourceMessage) {
        if let Some(db) = self.other_database(&m) {
            // Another database's, whatever else it is (replicated, in a transaction, ...):
            // judged by a plan into that database, never by this one.
            if let Some(id) = m.txn_id {
                self.foreign_txns.insert(id, (db.clone(), m.collection.clone()));
            }
            self.skip(&m, SkipReason::OtherDatabase, Some(other_database(&db)));
            return;
        }
        let replicated = self.checkpoint.is_some_and(|c| m.tt <= c);
        match m.type_name.as_str() {
            "BeginTxn" => {
                if let Some(id) = m.txn_id {
                    self.open.insert(id, vec![m]);
                } else {
                    self.skip(&m, SkipReason::Unreadable, Some("BeginTxn without a readable _tx".into()));
                }
                return;
            }
            "CommitTxn" | "RollbackTxn" => {
                let Some(id) = m.txn_id else {
                    self.skip(&m, SkipReason::Unreadable, Some("no readable _tx".into()));
                    return;
                };
                let mut group = self.open.remove(&id).unwrap_or_default();
                let commit = m.type_name == "CommitTxn";
                let tt = m.tt;
                group.push(m);
                self.transaction(id, group, commit, tt);
                return;
            }
            _ => {}
        }
        // A whole transaction in one opaque frame (servers before 2.6.20), `_tx` and all.
        if m.type_number == 999 || m.type_name == "Txn" {
            let reason = if replicated { SkipReason::Replicated } else { SkipReason::OpaqueTxn };
            self.skip(&m, reason, None);
            return;
        }
        if let Some(id) = m.txn_id {
            // A body whose BeginTxn came before the dump's first frame still belongs to its
            // transaction: kept with it, never applied alone.
            self.open.entry(id).or_default().push(m);
            return;
        }
        if replicated {
            self.skip(&m, SkipReason::Replicated, None);
            return;
        }
        match self.op(&m) {
            Ok(Some(op)) => {
                let key = format!("{}/{}", self.pchannel, m.message_id);
                self.push_unit(key, m.message_id_display.clone(), m.tt, None, vec![op]);
            }
            Ok(None) => {}
            Err((reason, detail)) => self.skip(&m, reason, detail),
        }
    }

    /// A whole transaction, judged by its commit (reference §3): deletes first, then inserts;
    /// an Insert and a Delete of the same keys become one Upsert.
    fn transaction(&mut self, id: i64, group: Vec<SourceMessage>, commit: bool, tt: u64) {
        let bodies = group
            .iter()
            .filter(|m| !matches!(m.type_name.as_str(), "BeginTxn" | "CommitTxn" | "RollbackTxn"));
        if bodies.count() == 0
            && let Some((db, collection)) = self.foreign_txns.get(&id).cloned()
        {
            // A transaction of another database (its bodies were skipped as such).
            for m in &group {
                self.skip(m, SkipReason::OtherDatabase, Some(other_database(&db)));
                if let Some(s) = self.out.skipped.last_mut() {
                    s.collection = collection.clone();
                }
            }
            return;
        }
        let replicated = self.checkpoint.is_some_and(|c| tt <= c);
        let begun = group.first().is_some_and(|m| m.type_name == "BeginTxn");
        if commit && !replicated && !begun {
            let why = format!(
                "transaction {id}: its BeginTxn is before the dump's first frame, so it may be incomplete: dump again from an earlier position"
            );
            for m in &group {
                self.skip(m, SkipReason::IncompleteTxn, Some(why.clone()));
            }
            if !self.out.problems.contains(&why) {
                self.out.problems.push(why);
            }
            return;
        }
        if !commit || replicated {
            let reason = if replicated { SkipReason::Replicated } else { SkipReason::RolledBack };
            for m in &group {
                self.skip(m, reason, Some(format!("transaction {id}")));
            }
            return;
        }
        let mut ops = Vec::new();
        for m in &group {
            if matches!(m.type_name.as_str(), "BeginTxn" | "CommitTxn") {
                continue;
            }
            match self.op(m) {
                Ok(Some(op)) => ops.push(op),
                Ok(None) => {}
                Err((reason, detail)) => self.skip(m, reason, detail.or(Some(format!("transaction {id}")))),
            }
        }
        let ops = fuse_upserts(ops);
        let commit_id = group.last().map(|m| m.message_id.clone()).unwrap_or_default();
        let key = format!("{}/txn{id}@{commit_id}", self.pchannel);
        let shown = group.last().map(|m| m.message_id_display.clone()).unwrap_or_default();
        self.push_unit(key, shown, tt, Some(id), ops);
    }
}

/// The database a WAL body names (`db_name`; `default` when none).
pub fn database_of_body(body: &DynamicMessage) -> String {
    super::database_name(&text(body, "db_name"))
}

/// The detail of an [`SkipReason::OtherDatabase`] skip, and its reading.
fn other_database(db: &str) -> String {
    format!("database {db}")
}

pub fn database_of(skipped: &Skipped) -> Option<&str> {
    (skipped.reason == SkipReason::OtherDatabase)
        .then(|| skipped.detail.as_deref().and_then(|d| d.strip_prefix("database ")))
        .flatten()
}

pub fn collection_of(body: &DynamicMessage) -> String {
    let c = text(body, "collection_name");
    if c.is_empty() { text(body, "collectionName") } else { c }
}

/// Deletes before inserts; a delete whose keys an insert of the same collection re-writes is
/// folded into that insert, which becomes an Upsert.
fn fuse_upserts(ops: Vec<Op>) -> Vec<Op> {
    let (mut deletes, mut rest): (Vec<Op>, Vec<Op>) =
        ops.into_iter().partition(|o| matches!(o, Op::Delete { .. }));
    for op in &mut rest {
        let Op::Insert { db, collection, partition, at, rows, keys } = op else { continue };
        let written: HashSet<&Pk> = keys.iter().collect();
        let mut folded = false;
        for d in &mut deletes {
            if let Op::Delete { collection: dc, keys: dk, .. } = d
                && dc == collection
                && dk.iter().any(|k| written.contains(k))
            {
                dk.retain(|k| !written.contains(k));
                folded = true;
            }
        }
        if folded {
            *op = Op::Upsert {
                db: db.clone(),
                collection: collection.clone(),
                partition: partition.clone(),
                at: *at,
                rows: *rows,
                keys: keys.clone(),
            };
        }
    }
    deletes.retain(|d| !matches!(d, Op::Delete { keys, .. } if keys.is_empty()));
    deletes.extend(rest);
    deletes
}

/// Reads every dump, applies the rules, merges by `_tt`, keeps each DDL once. Only messages of
/// database `db` become units; the others are skipped with their database named.
pub fn read_units(salvage: &Salvage, db: &str, pk_of: &mut PkOf<'_>) -> Result<Units, super::ReplayError> {
    let mut all = Units::default();
    let mut order: Vec<(u64, usize, usize)> = Vec::new();
    let mut per_dump: Vec<Vec<Unit>> = Vec::new();
    for (d, dump) in salvage.dumps.iter().enumerate() {
        let mut walk = Walk {
            pchannel: dump.pchannel.clone(),
            db,
            checkpoint: dump.checkpoint_tt,
            pk_of: &mut *pk_of,
            out: Units::default(),
            seq: Vec::new(),
            open: BTreeMap::new(),
            foreign_txns: Default::default(),
        };
        let mut frames = 0u64;
        salvage.for_each(d, |m| {
            frames += 1;
            walk.message(m);
        })?;
        for (id, group) in std::mem::take(&mut walk.open) {
            for m in &group {
                walk.skip(m, SkipReason::IncompleteTxn, Some(format!("transaction {id}")));
            }
        }
        order.extend(walk.seq.iter().map(|(tt, _, i)| (*tt, d, *i)));
        all.skipped.append(&mut walk.out.skipped);
        for p in walk.out.problems.drain(..) {
            if !all.problems.contains(&p) {
                all.problems.push(p);
            }
        }
        all.frames.push(frames);
        for (c, f) in walk.out.insert_fields.drain() {
            all.insert_fields.entry(c).or_insert(f);
        }
        per_dump.push(walk.out.units);
    }
    order.sort();
    let mut seen_ddl: HashSet<(String, String)> = HashSet::new();
    for (_, d, i) in order {
        let mut unit = per_dump[d][i].clone();
        if let [op @ (Op::CreateCollection { .. } | Op::DropCollection { .. } | Op::CreatePartition { .. })] =
            unit.ops.as_slice()
        {
            // Keyed by name (a broadcast DDL has one per pchannel); the database is the replay's.
            let id = (op.name().to_string(), format!("{}/{}", op.collection(), partition_of(op)));
            if !seen_ddl.insert(id) {
                all.skipped.push(Skipped {
                    pchannel: unit.pchannel.clone(),
                    message_id: unit.message.clone(),
                    tt: unit.tt,
                    type_name: op.name().to_string(),
                    reason: SkipReason::DuplicateBroadcast,
                    collection: Some(op.collection().to_string()),
                    detail: None,
                });
                continue;
            }
            // A DropCollection ends what came before: a later CreateCollection is new again,
            // and a drop after that re-creation is a new drop.
            match op {
                Op::DropCollection { collection, .. } => {
                    seen_ddl.retain(|(_, c)| !c.starts_with(&format!("{collection}/")));
                    seen_ddl.insert(("DropCollection".into(), format!("{collection}/")));
                }
                Op::CreateCollection { collection, .. } => {
                    seen_ddl.remove(&("DropCollection".to_string(), format!("{collection}/")));
                }
                _ => {}
            }
        }
        unit.ops.shrink_to_fit();
        all.units.push(unit);
    }
    Ok(all)
}

fn partition_of(op: &Op) -> &str {
    match op {
        Op::CreatePartition { partition, .. } => partition,
        _ => "",
    }
}
