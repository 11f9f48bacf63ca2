//! The replay job: plans a salvage's replay (reading the dumps, asking the new primary), or
//! applies a plan — units in order, each under the journal (`start`, its calls, `done`), calls
//! cut into batches and paced by a rate — then verifies what the new primary holds. Progress
//! through a `watch`, cancel through a token, between calls; the journal stays consistent.
//!
//! A unit the journal shows started but not done (the process stopped during it) is reconciled
//! before it is sent again: Deletes and Upserts are idempotent and are resent; for Inserts, the
//! keys that already landed are read back and left out; DDL is checked first.
//! Must never: send a unit the journal records as done, or record one done before every call
//! of it was acknowledged.

use crate::net::grpc::GrpcSettings;
use crate::replay::convert::{Columns, rows_per_call, rows_request};
use crate::replay::journal::{Journal, JournalState, SavedPlan};
use crate::replay::plan::{Plan, PlanOptions, Policy};
use crate::replay::simulate::{self, Until};
use crate::replay::target::{NewPrimary, QUERY_CHUNK, pk_in};
use crate::replay::units::Op;
use crate::replay::{Pk, ReplayError, Salvage, build_plan};
use serde::Serialize;
use serde_json::json;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// Where to replay from and to.
#[derive(Debug, Clone)]
pub struct ReplaySpec {
    /// A salvage folder, or dump files.
    pub inputs: Vec<PathBuf>,
    pub settings: GrpcSettings,
    pub timeout: Duration,
    pub options: PlanOptions,
}

/// A plan, and the journal it continues (if any).
pub struct Planned {
    pub salvage: Arc<Salvage>,
    pub plan: Arc<Plan>,
    pub journal: JournalState,
    /// The plan was loaded from its saved file (`replay-plan.json`, or `replay-plan.<db>.json`)
    /// because the journal holds applied units.
    pub resumed: bool,
}

impl Planned {
    pub fn units_left(&self) -> usize {
        self.plan.units.iter().filter(|u| !self.journal.done.contains(&u.key)).count()
    }
}

/// Plans a replay (sends nothing). When a journal of an earlier apply exists, its saved plan is
/// the plan: conflicts computed now would count the replay's own writes.
pub async fn plan(spec: &ReplaySpec) -> Result<Planned, ReplayError> {
    let inputs = spec.inputs.clone();
    let salvage = Arc::new(
        tokio::task::spawn_blocking(move || Salvage::open(&inputs))
            .await
            .map_err(|e| ReplayError::Plan(e.to_string()))??,
    );
    let dir = salvage.dir.clone();
    let db = crate::replay::target::database(&spec.settings);
    let d = db.clone();
    let journal = tokio::task::spawn_blocking(move || Journal::read(&dir, &d))
        .await
        .map_err(|e| ReplayError::Plan(e.to_string()))??;
    if journal.plan.is_some() {
        let (dir, d) = (salvage.dir.clone(), db.clone());
        let saved = tokio::task::spawn_blocking(move || SavedPlan::load(&dir, &d))
            .await
            .map_err(|e| ReplayError::Plan(e.to_string()))??;
        match saved {
            Some(p) if Some(&p.fingerprint) == journal.plan.as_ref() => {
                same_salvage(&p, &salvage, &spec.settings.endpoint)?;
                if p.db != db {
                    // Written by a walscope before the per-database files: its journal is
                    // another database's than the one asked for.
                    return Err(ReplayError::Plan(format!(
                        "{} belongs to a replay into database {}, not {db}: resume it with --db {} (or rename it and {} to the names of database {})",
                        Journal::path_in(&salvage.dir, &db).display(),
                        p.db,
                        p.db,
                        SavedPlan::path_in(&salvage.dir, &db).display(),
                        p.db
                    )));
                }
                return Ok(Planned { salvage, plan: Arc::new(p), journal, resumed: true });
            }
            _ => {
                return Err(ReplayError::Plan(format!(
                    "{} belongs to a replay whose plan ({}) is missing or different: move the journal away to plan a new replay",
                    Journal::path_in(&salvage.dir, &db).display(),
                    journal.plan.unwrap_or_default()
                )));
            }
        }
    }
    legacy_journal(&salvage.dir, &db).await?;
    let target = Arc::new(NewPrimary::connect(&spec.settings, spec.timeout).await?);
    let plan = build_plan(salvage.clone(), target, spec.options.clone()).await?;
    Ok(Planned { salvage, plan: Arc::new(plan), journal, resumed: false })
}

/// A walscope before the per-database files wrote `replay.journal` whatever the database: a
/// replay into another database than `default` then finds its journal there, not under its
/// own name, and must not start over beside it.
async fn legacy_journal(dir: &std::path::Path, db: &str) -> Result<(), ReplayError> {
    if db == "default" {
        return Ok(());
    }
    let d = dir.to_path_buf();
    let saved = tokio::task::spawn_blocking(move || SavedPlan::load(&d, "default"))
        .await
        .map_err(|e| ReplayError::Plan(e.to_string()))?;
    match saved {
        Ok(Some(p)) if p.db == db => Err(ReplayError::Plan(format!(
            "{} and {} belong to a replay into database {db} by an earlier walscope: rename them to {} and {} to resume it",
            Journal::path_in(dir, "default").display(),
            SavedPlan::path_in(dir, "default").display(),
            Journal::path_in(dir, db).display(),
            SavedPlan::path_in(dir, db).display()
        ))),
        _ => Ok(()),
    }
}

/// A saved plan points at frames by dump and offset: it only fits the very dumps it was made
/// from (same files, same pchannels, in the same order, none shorter), and the new primary it
/// was checked against.
fn same_salvage(plan: &Plan, salvage: &Salvage, endpoint: &str) -> Result<(), ReplayError> {
    let now: Vec<(String, String)> =
        salvage.dumps.iter().map(|d| (d.path.display().to_string(), d.pchannel.clone())).collect();
    let then: Vec<(String, String)> = plan.dumps.iter().map(|(p, c, _, _)| (p.clone(), c.clone())).collect();
    if now != then {
        return Err(ReplayError::Plan(format!(
            "the journal's plan was made from other dumps ({}) than these ({}): resume with the same inputs, or move the journal ({}) away to plan anew",
            then.iter().map(|(p, _)| p.as_str()).collect::<Vec<_>>().join(", "),
            now.iter().map(|(p, _)| p.as_str()).collect::<Vec<_>>().join(", "),
            Journal::path_in(&salvage.dir, &plan.db).display()
        )));
    }
    if plan.endpoint != endpoint {
        return Err(ReplayError::Plan(format!(
            "the journal's replay goes to {}, not {endpoint}: resume it against the same new primary",
            plan.endpoint
        )));
    }
    Ok(())
}

#[derive(Debug, Clone)]
pub struct ApplyOptions {
    /// Calls per second at most; 0: as fast as the server answers.
    pub rate: f64,
    /// Rows per Insert/Upsert call at most.
    pub batch_rows: usize,
    /// Bytes per call at most (estimated from the body's size).
    pub max_request_bytes: usize,
    /// Verify when every unit is applied.
    pub verify: bool,
}

impl Default for ApplyOptions {
    fn default() -> Self {
        ApplyOptions { rate: 0.0, batch_rows: 1000, max_request_bytes: 32 << 20, verify: true }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum ApplyState {
    Applying,
    Verifying,
    Done,
    Cancelled,
    Failed(String),
}

#[derive(Debug, Clone, Serialize)]
pub struct ApplyProgress {
    pub state: ApplyState,
    pub units_total: usize,
    /// Units the journal already had when this run started.
    pub units_already: usize,
    pub units_done: usize,
    pub calls: u64,
    pub rows: u64,
    pub rows_total: u64,
    pub elapsed: Duration,
    pub current: Option<String>,
}

impl ApplyProgress {
    pub fn rows_per_s(&self) -> f64 {
        let s = self.elapsed.as_secs_f64();
        if s > 0.0 { self.rows as f64 / s } else { 0.0 }
    }

    pub fn eta(&self) -> Option<Duration> {
        let left = self.units_total.saturating_sub(self.units_done + self.units_already);
        let done = self.units_done.max(1) as f64;
        (self.units_done > 0)
            .then(|| Duration::from_secs_f64(self.elapsed.as_secs_f64() / done * left as f64))
    }
}

/// One collection's verification.
#[derive(Debug, Clone, Serialize)]
pub struct CollectionCheck {
    pub collection: String,
    pub expected: Option<u64>,
    pub actual: Option<u64>,
    pub sampled: usize,
    /// (key, expected rows, rows found)
    pub wrong: Vec<(Pk, u64, u64)>,
    pub error: Option<String>,
}

impl CollectionCheck {
    pub fn ok(&self) -> bool {
        self.error.is_none() && self.wrong.is_empty() && self.expected == self.actual
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Verification {
    pub collections: Vec<CollectionCheck>,
}

impl Verification {
    pub fn ok(&self) -> bool {
        self.collections.iter().all(CollectionCheck::ok)
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct ApplyOutcome {
    pub units_sent: usize,
    pub units_already: usize,
    pub calls: u64,
    pub rows: u64,
    pub verification: Option<Verification>,
}

/// A running apply (see [`super::handle`]).
pub type ApplyHandle = super::handle::JobHandle<ApplyProgress, ApplyOutcome, ReplayError>;

/// Starts applying `planned` on the current runtime.
pub fn spawn_apply(
    planned: &Planned,
    settings: GrpcSettings,
    timeout: Duration,
    options: ApplyOptions,
) -> ApplyHandle {
    let plan = planned.plan.clone();
    let rows_total = plan
        .units
        .iter()
        .flat_map(|u| &u.ops)
        .map(|o| match o {
            Op::Insert { rows, .. } | Op::Upsert { rows, .. } => *rows,
            _ => 0,
        })
        .sum();
    let initial = ApplyProgress {
        state: ApplyState::Applying,
        units_total: plan.units.len(),
        units_already: 0,
        units_done: 0,
        calls: 0,
        rows: 0,
        rows_total,
        elapsed: Duration::ZERO,
        current: None,
    };
    let salvage = planned.salvage.clone();
    ApplyHandle::spawn(initial, move |tx, token| async move {
        let result = run_apply(salvage, plan, &settings, timeout, &options, &tx, &token).await;
        tx.send_modify(|p| {
            p.state = match &result {
                Ok(_) => ApplyState::Done,
                Err(ReplayError::Cancelled) => ApplyState::Cancelled,
                Err(e) => ApplyState::Failed(e.to_string()),
            }
        });
        result
    })
}

/// One write of the journal, run on the blocking pool.
type JournalWrite = Box<dyn FnOnce(&mut Journal) -> Result<(), ReplayError> + Send>;

fn blocking_err(e: tokio::task::JoinError) -> ReplayError {
    ReplayError::Plan(e.to_string())
}

struct Sender<'a> {
    target: NewPrimary,
    salvage: Arc<Salvage>,
    plan: &'a Plan,
    options: &'a ApplyOptions,
    conflicts: HashMap<String, HashSet<Pk>>,
    /// Per collection, the first unit that drops it: the conflicts end there.
    first_drop: HashMap<String, usize>,
    /// Rows per call of the units an earlier run was interrupted in, as its journal says.
    interrupted_batch: HashMap<String, usize>,
    last_call: Option<Instant>,
    progress: &'a watch::Sender<ApplyProgress>,
    started: Instant,
}

impl Sender<'_> {
    async fn pace(&mut self) {
        if self.options.rate > 0.0 {
            let gap = Duration::from_secs_f64(1.0 / self.options.rate);
            if let Some(last) = self.last_call {
                let next = last + gap;
                if next > Instant::now() {
                    tokio::time::sleep_until(next.into()).await;
                }
            }
        }
        self.last_call = Some(Instant::now());
    }

    fn counted(&self, calls: u64, rows: u64) {
        let elapsed = self.started.elapsed();
        self.progress.send_modify(|p| {
            p.calls += calls;
            p.rows += rows;
            p.elapsed = elapsed;
        });
    }

    /// The keys of `collection` the new primary held at planning time and the plan found
    /// conflicting, as of unit `unit` (none once the replay dropped the collection).
    fn conflicts_at(&self, unit: usize, collection: &str) -> &HashSet<Pk> {
        static NONE: std::sync::OnceLock<HashSet<Pk>> = std::sync::OnceLock::new();
        let none = NONE.get_or_init(HashSet::new);
        match self.first_drop.get(collection) {
            Some(d) if *d < unit => none,
            _ => self.conflicts.get(collection).unwrap_or(none),
        }
    }

    /// What the plan says `collection` holds just before op `until`.
    fn simulated(&self, collection: &str, until: Until) -> (simulate::Simulation, HashMap<Pk, u64>) {
        let c = self.plan.collections.get(collection);
        let present: HashMap<Pk, u64> =
            c.map(|c| c.present_before.iter().cloned().collect()).unwrap_or_default();
        let none = HashSet::new();
        let conflicts = self.conflicts.get(collection).unwrap_or(&none);
        let new_ids = c.is_some_and(|c| c.new_ids);
        (simulate::run(self.plan, collection, until, &present, conflicts, new_ids), present)
    }

    fn columns(&self, collection: &str) -> Columns {
        let c = self.plan.collections.get(collection);
        Columns {
            drop: c.map(|c| c.drop_columns.clone()).unwrap_or_default(),
            no_partition: c.is_some_and(|c| c.no_partition),
        }
    }

    async fn body(
        &self,
        at: crate::replay::units::FrameAt,
    ) -> Result<prost_reflect::DynamicMessage, ReplayError> {
        let s = self.salvage.clone();
        tokio::task::spawn_blocking(move || s.body_at(at.dump, at.offset, at.len))
            .await
            .map_err(blocking_err)?
    }

    /// Whether reading the kept keys back cannot say which rows landed: a key the plan expects
    /// to have rows already, or one given twice (a server's query shows one row per key).
    fn keys_ambiguous(sim: &simulate::Simulation, keys: &[Pk], keep: &[usize]) -> bool {
        let mut seen = HashSet::new();
        keep.iter().any(|i| sim.counts.get(&keys[*i]).is_some_and(|n| *n > 0) || !seen.insert(&keys[*i]))
    }

    /// Keys of `keys` that already landed beyond what the plan expects (`expected`, the
    /// simulation up to this Insert).
    async fn landed(
        &self,
        expected: &simulate::Simulation,
        collection: &str,
        keys: &[Pk],
    ) -> Result<HashMap<Pk, u64>, ReplayError> {
        let c = self.plan.collections.get(collection);
        let Some(pk) = c.and_then(|c| c.primary_key.clone()) else { return Ok(HashMap::new()) };
        let found = self.target.key_counts(collection, &pk, keys).await?;
        Ok(found
            .into_iter()
            .filter_map(|(k, n)| {
                let extra = n.saturating_sub(expected.counts.get(&k).copied().unwrap_or(0));
                (extra > 0).then_some((k, extra))
            })
            .collect())
    }

    /// How many of an interrupted Insert's calls landed, when its keys cannot tell (the new
    /// primary chose them, or a key has rows already or twice in the Insert, which a real
    /// server's query merges into one): the collection's count now against the plan's just
    /// before the Insert. Calls land whole and in order, so that is a whole number of this Insert's
    /// first calls; anything else means other writes moved the count, and the apply stops
    /// rather than guess.
    async fn landed_calls(
        &self,
        until: Until,
        (sim, present): &(simulate::Simulation, HashMap<Pk, u64>),
        collection: &str,
        calls: &[usize],
    ) -> Result<usize, ReplayError> {
        let c = self.plan.collections.get(collection);
        let unit_key = &self.plan.units[until.unit].key;
        let expected = sim.rows(c.and_then(|c| c.count_before).unwrap_or(0), present);
        let now = self.target.count(collection).await?;
        let total: u64 = calls.iter().map(|n| *n as u64).sum();
        let later_writes = self.plan.units[until.unit]
            .ops
            .iter()
            .skip(until.op + 1)
            .any(|o| o.collection() == collection && matches!(o, Op::Insert { .. } | Op::Upsert { .. }));
        if now >= expected + total && later_writes {
            // More than this Insert: it landed whole, and a later call of the unit explains
            // the rest (checked when that call comes).
            return Ok(calls.len());
        }
        let mut landed = 0u64;
        for (i, n) in std::iter::once(0).chain(calls.iter().copied()).enumerate() {
            landed += n as u64;
            if expected + landed == now {
                return Ok(i);
            }
        }
        Err(ReplayError::Plan(format!(
            "unit {unit_key} was interrupted during an Insert into {collection} whose rows its keys cannot tell apart: the collection holds {now} row(s), and the plan expects {expected} before this Insert plus a whole number of its {} call(s) of {} row(s): other writes changed the count since the plan, so walscope cannot tell which of this Insert's rows landed and sends nothing more. Find out what {collection} holds and finish it by hand (a new plan would count this replay's own rows as the new primary's)",
            calls.len(),
            calls.iter().map(|n| n.to_string()).collect::<Vec<_>>().join("/")
        )))
    }

    async fn rows(&mut self, until: Until, uncertain: bool, op: &Op) -> Result<(u64, u64), ReplayError> {
        let (db, collection, partition, at, keys, upsert) = match op {
            Op::Insert { db, collection, partition, at, keys, .. } => {
                (db, collection, partition, *at, keys, false)
            }
            Op::Upsert { db, collection, partition, at, keys, .. } => {
                (db, collection, partition, *at, keys, true)
            }
            _ => return Ok((0, 0)),
        };
        let conflicts = self.conflicts_at(until.unit, collection);
        let policy = self.plan.options.policy;
        let mut keep: Vec<usize> = (0..keys.len())
            .filter(|i| upsert || policy != Policy::Skip || !conflicts.contains(&keys[*i]))
            .collect();
        let as_upsert = upsert || (policy == Policy::Upsert && keys.iter().any(|k| conflicts.contains(k)));
        let per_call = rows_per_call(
            self.options.batch_rows,
            keys.len(),
            at.len as usize,
            self.options.max_request_bytes,
        );
        let new_ids = self.plan.collections.get(collection).is_some_and(|c| c.new_ids);
        // What the collection should hold just before this Insert, simulated once.
        let before = (uncertain && !as_upsert).then(|| self.simulated(collection, until));
        if let Some(before) = &before
            && (new_ids || Self::keys_ambiguous(&before.0, keys, &keep))
        {
            let unit_key = &self.plan.units[until.unit].key;
            let then = self.interrupted_batch.get(unit_key).copied().unwrap_or(self.options.batch_rows);
            let per_call_then =
                rows_per_call(then, keys.len(), at.len as usize, self.options.max_request_bytes);
            let calls: Vec<usize> = keep.chunks(per_call_then).map(<[usize]>::len).collect();
            let sent = self.landed_calls(until, before, collection, &calls).await?;
            keep.drain(..calls[..sent].iter().sum::<usize>());
        } else if let Some((expected, _)) = &before {
            let mut landed = self.landed(expected, collection, keys).await?;
            keep.retain(|i| match landed.get_mut(&keys[*i]) {
                Some(n) if *n > 0 => {
                    *n -= 1;
                    false
                }
                _ => true,
            });
        }
        if keep.is_empty() {
            return Ok((0, 0));
        }
        let mut columns = self.columns(collection);
        if as_upsert {
            // Milvus requires the key of an Upsert, auto id or not.
            let pk = self.plan.collections.get(collection).and_then(|c| c.primary_key.clone());
            columns.drop.retain(|c| Some(c) != pk.as_ref());
        }
        let call = if as_upsert { "Upsert" } else { "Insert" };
        // Every row in one call: the request is the WAL's FieldData bytes, copied. Reading the
        // frame and building requests is CPU work: it runs off the runtime's workers.
        if keep.len() == keys.len() && per_call >= keys.len() {
            let s = self.salvage.clone();
            let (rows, drop, no_partition) = (keys.len() as u64, columns.drop.clone(), columns.no_partition);
            let request = tokio::task::spawn_blocking(move || -> Result<Option<Vec<u8>>, ReplayError> {
                let payload = s.payload_at(at.dump, at.offset, at.len)?;
                Ok(crate::replay::wire_insert::read(&payload)
                    .and_then(|f| crate::replay::wire_insert::public_request(&f, rows, &drop, no_partition)))
            })
            .await
            .map_err(blocking_err)??;
            if let Some(request) = request {
                self.pace().await;
                self.target.apply_bytes(call, collection, bytes::Bytes::from(request)).await?;
                self.counted(1, keep.len() as u64);
                return Ok((1, keep.len() as u64));
            }
        }
        let s = self.salvage.clone();
        let (db, name, partition, total) = (db.clone(), collection.clone(), partition.clone(), keys.len());
        let chunks: Vec<Vec<usize>> = keep.chunks(per_call).map(<[usize]>::to_vec).collect();
        let requests = tokio::task::spawn_blocking(move || -> Result<Vec<_>, ReplayError> {
            let body = s.body_at(at.dump, at.offset, at.len)?;
            chunks
                .iter()
                .map(|chunk| {
                    rows_request(call, &body, &db, &name, &partition, &columns, total, chunk)
                        .map(|req| (chunk.len() as u64, req))
                        .map_err(ReplayError::Plan)
                })
                .collect()
        })
        .await
        .map_err(blocking_err)??;
        let (mut calls, mut rows) = (0, 0);
        for (n, req) in requests {
            self.pace().await;
            self.target.apply_message(call, collection, &req).await?;
            calls += 1;
            rows += n;
            self.counted(1, n);
        }
        Ok((calls, rows))
    }

    async fn op(&mut self, until: Until, uncertain: bool, op: &Op) -> Result<(u64, u64), ReplayError> {
        match op {
            Op::Insert { .. } | Op::Upsert { .. } => self.rows(until, uncertain, op).await,
            Op::Delete { db, collection, partition, keys } => {
                let conflicts = self.conflicts_at(until.unit, collection);
                let skip = self.plan.options.policy == Policy::Skip;
                let keys: Vec<Pk> =
                    keys.iter().filter(|k| !(skip && conflicts.contains(*k))).cloned().collect();
                let Some(pk) = self.plan.collections.get(collection).and_then(|c| c.primary_key.clone())
                else {
                    return Err(ReplayError::Plan(format!(
                        "collection {collection}: no primary key known for Delete"
                    )));
                };
                let mut calls = 0;
                for chunk in keys.chunks(QUERY_CHUNK) {
                    let (expr, values) = pk_in(&pk, chunk);
                    self.pace().await;
                    self.target
                        .apply(
                            "Delete",
                            collection,
                            json!({"db_name": db, "collection_name": collection, "partition_name": partition,
                                "expr": expr, "expr_template_values": values}),
                        )
                        .await?;
                    calls += 1;
                    self.counted(1, 0);
                }
                Ok((calls, 0))
            }
            Op::CreateCollection { db, collection, at } => {
                if uncertain && self.target.describe(collection).await?.is_some() {
                    return Ok((0, 0));
                }
                let body = self.body(*at).await?;
                let schema = body
                    .get_field_by_name("collection_schema")
                    .and_then(|v| v.as_message().map(crate::codec::encode))
                    .or_else(|| {
                        body.get_field_by_name("schema").and_then(|v| v.as_bytes().map(|b| b.to_vec()))
                    })
                    .ok_or_else(|| {
                        ReplayError::Plan(format!("CreateCollection of {collection} carries no schema"))
                    })?;
                let shards = match body.get_field_by_name("virtualChannelNames").as_deref() {
                    Some(prost_reflect::Value::List(l)) => l.len().max(1),
                    _ => 1,
                };
                use base64::Engine;
                let schema = base64::engine::general_purpose::STANDARD.encode(schema);
                self.pace().await;
                self.target
                    .apply(
                        "CreateCollection",
                        collection,
                        json!({"db_name": db, "collection_name": collection, "schema": schema, "shards_num": shards}),
                    )
                    .await?;
                self.counted(1, 0);
                Ok((1, 0))
            }
            Op::DropCollection { db, collection } => {
                if uncertain && self.target.describe(collection).await?.is_none() {
                    return Ok((0, 0));
                }
                self.pace().await;
                self.target
                    .apply(
                        "DropCollection",
                        collection,
                        json!({"db_name": db, "collection_name": collection}),
                    )
                    .await?;
                self.counted(1, 0);
                Ok((1, 0))
            }
            Op::CreatePartition { db, collection, partition } => {
                self.pace().await;
                let r = self
                    .target
                    .apply(
                        "CreatePartition",
                        collection,
                        json!({"db_name": db, "collection_name": collection, "partition_name": partition}),
                    )
                    .await;
                match r {
                    Err(ReplayError::Refused { reason, .. }) if uncertain && reason.contains("exist") => {}
                    other => other?,
                }
                self.counted(1, 0);
                Ok((1, 0))
            }
        }
    }
}

async fn run_apply(
    salvage: Arc<Salvage>,
    plan: Arc<Plan>,
    settings: &GrpcSettings,
    timeout: Duration,
    options: &ApplyOptions,
    progress: &watch::Sender<ApplyProgress>,
    cancel: &CancellationToken,
) -> Result<ApplyOutcome, ReplayError> {
    if !plan.can_apply() {
        return Err(ReplayError::Plan(format!("the plan cannot be applied: {}", plan.problems.join("; "))));
    }
    let dir = salvage.dir.clone();
    let (p, d) = (plan.clone(), dir.clone());
    let (state, journal) = tokio::task::spawn_blocking(move || -> Result<_, ReplayError> {
        let state = Journal::read(&d, &p.db)?;
        if let Some(fp) = &state.plan
            && fp != &p.fingerprint
        {
            return Err(ReplayError::Plan(format!(
                "{} belongs to another plan ({fp}): move it away to start a new replay",
                Journal::path_in(&d, &p.db).display()
            )));
        }
        if state.plan.is_none() {
            SavedPlan::save(&d, &p)?;
        }
        Ok((state, Journal::open(&d, &p)?))
    })
    .await
    .map_err(blocking_err)??;
    let journal = Arc::new(Mutex::new(journal));
    let write = |f: JournalWrite| {
        let j = journal.clone();
        async move {
            tokio::task::spawn_blocking(move || {
                let mut j = j.lock().unwrap_or_else(|p| p.into_inner());
                f(&mut j)
            })
            .await
            .map_err(blocking_err)?
        }
    };
    let target = NewPrimary::connect(settings, timeout).await?;
    let mut sender = Sender {
        target,
        salvage,
        plan: &plan,
        options,
        conflicts: plan
            .collections
            .iter()
            .map(|(n, c)| (n.clone(), c.conflicts.iter().cloned().collect()))
            .collect(),
        first_drop: plan
            .collections
            .keys()
            .filter_map(|n| simulate::first_drop(&plan, n).map(|d| (n.clone(), d)))
            .collect(),
        interrupted_batch: state.batch.clone(),
        last_call: None,
        progress,
        started: Instant::now(),
    };
    let already = plan.units.iter().filter(|u| state.done.contains(&u.key)).count();
    progress.send_modify(|p| p.units_already = already);
    let (mut sent, mut calls, mut rows) = (0usize, 0u64, 0u64);
    for (i, unit) in plan.units.iter().enumerate() {
        if state.done.contains(&unit.key) {
            continue;
        }
        if cancel.is_cancelled() {
            return Err(ReplayError::Cancelled);
        }
        let uncertain = state.uncertain.contains(&unit.key);
        progress.send_modify(|p| p.current = Some(unit.key.clone()));
        let key = unit.key.clone();
        let batch = options.batch_rows;
        write(Box::new(move |j| j.start(&key, batch))).await?;
        let (mut c, mut r) = (0, 0);
        for (o, op) in unit.ops.iter().enumerate() {
            let (oc, or) = sender.op(Until { unit: i, op: o }, uncertain, op).await?;
            c += oc;
            r += or;
        }
        let key = unit.key.clone();
        write(Box::new(move |j| j.done(&key, c, r))).await?;
        sent += 1;
        calls += c;
        rows += r;
        progress.send_modify(|p| p.units_done += 1);
    }
    let verification = if options.verify {
        progress.send_modify(|p| {
            p.state = ApplyState::Verifying;
            p.current = None;
        });
        Some(verify_with(&plan, &sender.target).await)
    } else {
        None
    };
    Ok(ApplyOutcome { units_sent: sent, units_already: already, calls, rows, verification })
}

/// Verifies a plan against the new primary: each collection's row count, and its sample keys.
pub async fn verify(
    plan: &Plan,
    settings: &GrpcSettings,
    timeout: Duration,
) -> Result<Verification, ReplayError> {
    let target = NewPrimary::connect(settings, timeout).await?;
    Ok(verify_with(plan, &target).await)
}

async fn verify_with(plan: &Plan, target: &NewPrimary) -> Verification {
    let mut out = Vec::new();
    for (name, c) in &plan.collections {
        let mut check = CollectionCheck {
            collection: name.clone(),
            expected: c.expected_after,
            actual: None,
            sampled: c.sample.len(),
            wrong: Vec::new(),
            error: None,
        };
        let exists = match target.describe(name).await {
            Ok(d) => d.is_some(),
            Err(e) => {
                check.error = Some(e.to_string());
                out.push(check);
                continue;
            }
        };
        if !exists {
            check.actual = Some(0);
            if c.expected_after.unwrap_or(0) != 0 {
                check.error = Some("the collection is not on the new primary".into());
            }
            out.push(check);
            continue;
        }
        match target.count(name).await {
            Ok(n) => check.actual = Some(n),
            Err(e) => check.error = Some(e.to_string()),
        }
        if let Some(pk) = &c.primary_key {
            let keys: Vec<Pk> = c.sample.iter().map(|(k, _)| k.clone()).collect();
            match target.key_counts(name, pk, &keys).await {
                Ok(found) => {
                    for (k, want) in &c.sample {
                        let got = found.get(k).copied().unwrap_or(0);
                        // A server's query may merge rows of one key: judge presence.
                        if (got > 0) != (*want > 0) {
                            check.wrong.push((k.clone(), *want, got));
                        }
                    }
                }
                Err(e) => check.error = Some(e.to_string()),
            }
        }
        out.push(check);
    }
    Verification { collections: out }
}
