//! The replay job: plans a salvage's replay (reading the dumps, asking the new primary), or
//! applies a plan — units in order, each under the journal (`start`, its calls, `done`), calls
//! cut into batches and paced by a rate — then verifies what the new primary holds. Progress
//! through a `watch`, cancel through a token, between calls; the journal stays consistent.
//!
//! A unit the journal shows started but not done (the process stopped during it) is reconciled
//! before it is sent again: Deletes and Upserts are idempotent and are resent; for Inserts, the
//! keys that already landed are read back and left out; DDL is checked first (the sending of a
//! unit is [`super::send`]). The apply runs behind the one job handle ([`crate::jobs::handle`]).
//! Must never: send a unit the journal records as done, or record one done before every call
//! of it was acknowledged.

use super::journal::{Journal, JournalState, SavedPlan};
use super::plan::{Plan, PlanOptions};
use super::send::Sender;
use super::simulate::{self, Until};
use super::target::NewPrimary;
use super::units::Op;
use super::{Pk, ReplayError, Salvage, build_plan};
use crate::net::grpc::GrpcSettings;
use serde::Serialize;
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
    let db = super::target::database(&spec.settings);
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

/// A running apply (see [`crate::jobs::handle`]).
pub type ApplyHandle = crate::jobs::handle::JobHandle<ApplyProgress, ApplyOutcome, ReplayError>;

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

/// Refuses, before anything is sent, when a collection's schema changed on the new primary
/// since the plan: its `update_timestamp` (DescribeCollection) differs from the one the plan
/// recorded. The plan's checks (columns, keys, auto id) were made against the old schema.
async fn schemas_unchanged(plan: &Plan, target: &NewPrimary) -> Result<(), ReplayError> {
    for (name, c) in &plan.collections {
        // 0: the server did not report an update time when planned; nothing to compare.
        let Some(planned) = c.schema_updated.filter(|t| *t != 0) else { continue };
        let now = target.describe(name).await?.map(|(_, t)| t.updated);
        match now {
            Some(now) if now == planned => {}
            Some(now) => {
                return Err(ReplayError::Plan(format!(
                    "collection {name}'s schema changed on the new primary since the plan (update time {} → {}): plan again",
                    crate::time::format_timetick(planned),
                    crate::time::format_timetick(now)
                )));
            }
            None => {
                return Err(ReplayError::Plan(format!(
                    "collection {name} was dropped on the new primary since the plan: plan again"
                )));
            }
        }
    }
    Ok(())
}

/// One write of the journal, run on the blocking pool.
type JournalWrite = Box<dyn FnOnce(&mut Journal) -> Result<(), ReplayError> + Send>;

pub(super) fn blocking_err(e: tokio::task::JoinError) -> ReplayError {
    ReplayError::Plan(e.to_string())
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
    let state = tokio::task::spawn_blocking(move || -> Result<_, ReplayError> {
        let state = Journal::read(&d, &p.db)?;
        if let Some(fp) = &state.plan
            && fp != &p.fingerprint
        {
            return Err(ReplayError::Plan(format!(
                "{} belongs to another plan ({fp}): move it away to start a new replay",
                Journal::path_in(&d, &p.db).display()
            )));
        }
        Ok(state)
    })
    .await
    .map_err(blocking_err)??;
    let target = NewPrimary::connect(settings, timeout).await?;
    // Before the journal is written, so a refusal leaves nothing to resume. A resumed apply
    // skips it: the replay's own DDL may have changed the times since the plan.
    if state.plan.is_none() {
        schemas_unchanged(&plan, &target).await?;
    }
    let (p, d, fresh) = (plan.clone(), dir.clone(), state.plan.is_none());
    let journal = tokio::task::spawn_blocking(move || -> Result<_, ReplayError> {
        if fresh {
            SavedPlan::save(&d, &p)?;
        }
        Journal::open(&d, &p)
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
