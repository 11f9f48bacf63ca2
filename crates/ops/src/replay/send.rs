//! Sending one unit of a replay's plan to the new primary: its calls cut into batches by rows
//! and by request size and paced by a rate, Inserts and Upserts built from the dump's frames
//! (read again from the file, byte for byte where the wire allows), rows the plan leaves out
//! removed, and a unit an earlier run was interrupted in reconciled first (Deletes and
//! Upserts are resent; for Inserts the keys that already landed are read back and left out;
//! DDL is checked before it is sent). [`super::apply`] runs the units in order under the journal.
//!
//! Must never: send a row the plan leaves out, or send an Insert twice for a key that landed.

use super::apply::{ApplyOptions, ApplyProgress, blocking_err};
use super::convert::{Columns, rows_per_call, rows_request};
use super::plan::{Plan, Policy};
use super::simulate::{self, Until};
use super::target::{NewPrimary, QUERY_CHUNK, pk_in};
use super::units::Op;
use super::{Pk, ReplayError, Salvage};
use serde_json::json;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::watch;

pub(super) struct Sender<'a> {
    pub(super) target: NewPrimary,
    pub(super) salvage: Arc<Salvage>,
    pub(super) plan: &'a Plan,
    pub(super) options: &'a ApplyOptions,
    pub(super) conflicts: HashMap<String, HashSet<Pk>>,
    /// Per collection, the first unit that drops it: the conflicts end there.
    pub(super) first_drop: HashMap<String, usize>,
    /// Rows per call of the units an earlier run was interrupted in, as its journal says.
    pub(super) interrupted_batch: HashMap<String, usize>,
    pub(super) last_call: Option<Instant>,
    pub(super) progress: &'a watch::Sender<ApplyProgress>,
    pub(super) started: Instant,
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

    async fn body(&self, at: super::units::FrameAt) -> Result<prost_reflect::DynamicMessage, ReplayError> {
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
                Ok(super::wire_insert::read(&payload)
                    .and_then(|f| super::wire_insert::public_request(&f, rows, &drop, no_partition)))
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

    pub(super) async fn op(
        &mut self,
        until: Until,
        uncertain: bool,
        op: &Op,
    ) -> Result<(u64, u64), ReplayError> {
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
