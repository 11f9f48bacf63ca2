//! The plan (the dry run): what a replay would send, per collection and per call, every frame
//! it skips and why, the schema check against the new primary, the conflict check (which of
//! the dump's Insert keys the new primary already has) under the operator's policy, and what
//! the new primary should hold afterwards (row counts, a sample of keys) for verification.
//!
//! Must never: change the new primary (planning calls only DescribeCollection and Query).

use super::schema_check::{CollectionShape, SchemaDifference, compare};
use super::simulate::Until;
use super::source::Salvage;
use super::target::{NewPrimary, Times};
use super::units::{Op, SkipReason, Skipped, Unit, read_units};
use super::{Pk, ReplayError};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

/// What to do with an Insert key the new primary already has (written since the promotion, or
/// a re-insert).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum, Default)]
#[serde(rename_all = "lowercase")]
pub enum Policy {
    /// Keep the new primary's row: the dump's inserts and deletes of that key are not sent.
    #[default]
    Skip,
    /// The dump's row wins: those Inserts are sent as Upserts.
    Upsert,
    /// Apply nothing while there are conflicts.
    Stop,
}

/// Auto-id collections whose salvaged Inserts carry the keys the old primary generated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum, Default)]
#[serde(rename_all = "lowercase")]
pub enum AutoIdChoice {
    /// Keep the old keys (needs `allow_insert_auto_id=true`; later Deletes then match).
    #[default]
    Keep,
    /// Let the new primary generate keys (later Deletes of those rows cannot match: skipped).
    New,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PlanOptions {
    pub policy: Policy,
    pub auto_id: AutoIdChoice,
    /// Keys read back per collection in the verification.
    pub sample: usize,
    /// Schemas the operator gives (collection → an encoded `schema.CollectionSchema`): the
    /// schema the data was written with, in place of the dump's CreateCollection.
    #[serde(default)]
    pub schemas: BTreeMap<String, Vec<u8>>,
}

impl Default for PlanOptions {
    fn default() -> Self {
        PlanOptions {
            policy: Policy::Skip,
            auto_id: AutoIdChoice::Keep,
            sample: 20,
            schemas: BTreeMap::new(),
        }
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CollectionPlan {
    pub name: String,
    pub primary_key: Option<String>,
    pub on_new_primary: bool,
    /// Where the dump-side schema came from: "CreateCollection in the dump", or none.
    pub dump_schema: Option<String>,
    pub inserts: u64,
    pub insert_rows: u64,
    pub deletes: u64,
    pub delete_keys: u64,
    pub upserts: u64,
    pub upsert_rows: u64,
    pub ddl: Vec<String>,
    pub skipped: BTreeMap<String, u64>,
    /// Insert keys the new primary already has.
    pub conflicts: Vec<Pk>,
    pub differences: Vec<SchemaDifference>,
    /// Columns not sent, and whether the partition name is left empty.
    pub drop_columns: Vec<String>,
    pub no_partition: bool,
    /// Auto id with new keys: the new primary chooses the keys of replayed Inserts.
    #[serde(default)]
    pub new_ids: bool,
    /// The new primary's `update_timestamp` of the collection when planned (DescribeCollection):
    /// apply refuses if it has changed since. None: not on the new primary, or a plan written
    /// before walscope recorded it (apply then says the check was not possible).
    #[serde(default)]
    pub schema_updated: Option<u64>,
    pub notes: Vec<String>,
    pub count_before: Option<u64>,
    pub expected_after: Option<u64>,
    /// Rows per key the new primary holds before the replay (keys the dump touches, present only).
    pub present_before: Vec<(Pk, u64)>,
    /// Keys with the rows each should have after the replay.
    pub sample: Vec<(Pk, u64)>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Plan {
    pub endpoint: String,
    pub db: String,
    pub created_at: String,
    pub options: PlanOptions,
    pub dumps: Vec<(String, String, Option<u64>, u64)>,
    pub units: Vec<Unit>,
    pub skipped: Vec<Skipped>,
    pub collections: BTreeMap<String, CollectionPlan>,
    /// What stops an apply until resolved.
    pub problems: Vec<String>,
    pub warnings: Vec<String>,
    pub fingerprint: String,
}

impl Plan {
    pub fn calls(&self) -> usize {
        self.units.iter().map(|u| u.ops.len()).sum()
    }

    pub fn can_apply(&self) -> bool {
        self.problems.is_empty()
    }

    pub fn skipped_by_reason(&self) -> BTreeMap<SkipReason, u64> {
        let mut m = BTreeMap::new();
        for s in &self.skipped {
            *m.entry(s.reason).or_insert(0) += 1;
        }
        m
    }
}

fn fingerprint(units: &[Unit]) -> String {
    let mut h: u64 = 0xcbf29ce484222325;
    for u in units {
        for b in u.key.bytes().chain([0u8]) {
            h = (h ^ b as u64).wrapping_mul(0x100000001b3);
        }
    }
    format!("{h:016x}-{}", units.len())
}

/// Reads the salvage, checks it against the new primary, and plans the replay. Sends nothing.
pub async fn build_plan(
    salvage: Arc<Salvage>,
    target: Arc<NewPrimary>,
    options: PlanOptions,
) -> Result<Plan, ReplayError> {
    let s = salvage.clone();
    let db = target.db().to_string();
    let d = db.clone();
    let mut dump_schemas = tokio::task::spawn_blocking(move || s.created_schemas(&d))
        .await
        .map_err(|e| ReplayError::Plan(e.to_string()))??;
    let mut given = HashSet::new();
    let schema_type = crate::schema::SchemaSet::shared_builtin()
        .message("milvus.proto.schema.CollectionSchema")
        .map_err(|e| ReplayError::Plan(e.to_string()))?;
    for (name, bytes) in &options.schemas {
        let schema =
            prost_reflect::DynamicMessage::decode(schema_type.clone(), bytes.as_slice()).map_err(|e| {
                ReplayError::Plan(format!("the schema given for {name} is not a CollectionSchema: {e}"))
            })?;
        dump_schemas.insert(name.clone(), schema);
        given.insert(name.clone());
    }
    let handle = tokio::runtime::Handle::current();
    let (s, t, schemas) = (salvage.clone(), target.clone(), dump_schemas.clone());
    let (units, shapes) = tokio::task::spawn_blocking(move || {
        let mut shapes: HashMap<String, Option<(CollectionShape, Times)>> = HashMap::new();
        let mut failure: Option<ReplayError> = None;
        let mut pk_of = |c: &str| -> Option<String> {
            if !shapes.contains_key(c) {
                match handle.block_on(t.describe(c)) {
                    Ok(found) => {
                        shapes.insert(c.to_string(), found);
                    }
                    Err(e) => {
                        failure.get_or_insert(e);
                        shapes.insert(c.to_string(), None);
                    }
                }
            }
            let target = shapes
                .get(c)
                .and_then(|s| s.as_ref())
                .and_then(|(s, _)| s.primary_key().map(|f| f.name.clone()));
            target.or_else(|| {
                schemas
                    .get(c)
                    .and_then(|s| CollectionShape::of_schema(s, None).primary_key().map(|f| f.name.clone()))
            })
        };
        let units = read_units(&s, &db, &mut pk_of);
        match failure {
            Some(e) => Err(e),
            None => units.map(|u| (u, shapes)),
        }
    })
    .await
    .map_err(|e| ReplayError::Plan(e.to_string()))??;

    let mut plan = Plan {
        endpoint: target.endpoint().to_string(),
        db: target.db().to_string(),
        created_at: crate::time::now_rfc3339(),
        options: options.clone(),
        dumps: salvage
            .dumps
            .iter()
            .zip(&units.frames)
            .map(|(d, f)| (d.path.display().to_string(), d.pchannel.clone(), d.checkpoint_tt, *f))
            .collect(),
        fingerprint: fingerprint(&units.units),
        units: units.units,
        skipped: units.skipped,
        collections: BTreeMap::new(),
        problems: units.problems,
        warnings: Vec::new(),
    };
    for d in &salvage.dumps {
        if d.checkpoint_tt.is_none() {
            plan.warnings.push(format!(
                "{}: its manifest records no salvage checkpoint, so nothing in it is known to be on the new primary: every message is replayed",
                d.path.display()
            ));
        }
    }
    let mut names: Vec<String> =
        plan.units.iter().flat_map(|u| u.ops.iter().map(|o| o.collection().to_string())).collect();
    names.extend(
        plan.skipped
            .iter()
            .filter(|s| s.reason != SkipReason::OtherDatabase)
            .filter_map(|s| s.collection.clone()),
    );
    other_databases(&mut plan);
    names.sort();
    names.dedup();
    for name in names {
        let described = match shapes.get(&name) {
            Some(s) => s.clone(),
            None => target.describe(&name).await?,
        };
        let updated = described.as_ref().map(|(_, t)| t.updated);
        let shape = described.map(|(s, _)| s);
        let columns = units.insert_fields.get(&name).cloned();
        let mut c =
            check_collection(&mut plan, &name, shape, dump_schemas.get(&name), columns, &target).await?;
        if given.contains(&name) {
            c.dump_schema = Some("the schema given (--schema)".into());
        }
        c.schema_updated = updated;
        plan.collections.insert(name, c);
    }
    if options.policy == Policy::Stop {
        let n: usize = plan.collections.values().map(|c| c.conflicts.len()).sum();
        if n > 0 {
            plan.problems.push(format!(
                "{n} Insert key(s) already exist on the new primary and the policy is stop: choose skip (keep the new primary's rows) or upsert (overwrite them)"
            ));
        }
    }
    Ok(plan)
}

/// One warning per database the salvage writes to besides the plan's: those messages are
/// skipped (a plan checks and writes one database), and the warning says how to replay them.
fn other_databases(plan: &mut Plan) {
    let mut by_db: BTreeMap<String, (u64, std::collections::BTreeSet<String>)> = BTreeMap::new();
    for s in &plan.skipped {
        let Some(db) = super::units::database_of(s) else { continue };
        let e = by_db.entry(db.to_string()).or_default();
        e.0 += 1;
        e.1.extend(s.collection.clone());
    }
    for (db, (n, collections)) in by_db {
        let names: Vec<String> = collections.into_iter().collect();
        plan.warnings.push(format!(
            "{n} message(s) of database {db} ({}) are not in this plan, which goes to database {}: plan them with --db {db}",
            names.join(", "),
            plan.db
        ));
    }
}

/// Counts, schema check, auto id, conflicts and expectations of one collection.
async fn check_collection(
    plan: &mut Plan,
    name: &str,
    target_shape: Option<CollectionShape>,
    dump_schema: Option<&prost_reflect::DynamicMessage>,
    columns: Option<Vec<super::schema_check::FieldShape>>,
    target: &NewPrimary,
) -> Result<CollectionPlan, ReplayError> {
    let mut c = CollectionPlan {
        name: name.to_string(),
        on_new_primary: target_shape.is_some(),
        ..Default::default()
    };
    let dump_shape = dump_schema.map(|s| CollectionShape::of_schema(s, None));
    c.dump_schema = dump_shape.as_ref().map(|_| "CreateCollection in the dump".to_string());
    let creates = plan
        .units
        .iter()
        .flat_map(|u| &u.ops)
        .any(|o| matches!(o, Op::CreateCollection { collection, .. } if collection == name));
    // A CreateCollection of a collection that exists at that point of the replay (the new
    // primary has it, and no replayed DropCollection came before) is skipped, and its schema
    // compared.
    let mut exists = target_shape.is_some();
    let mut moved = Vec::new();
    for u in &mut plan.units {
        u.ops.retain(|o| match o {
            Op::DropCollection { collection, .. } if collection == name => {
                exists = false;
                true
            }
            Op::CreateCollection { collection, .. } if collection == name => {
                let skip = exists;
                exists = true;
                if skip {
                    moved.push((u.pchannel.clone(), u.message.clone(), u.tt));
                }
                !skip
            }
            _ => true,
        });
    }
    plan.units.retain(|u| !u.ops.is_empty());
    for (pchannel, message_id, tt) in moved {
        plan.skipped.push(Skipped {
            pchannel,
            message_id,
            tt,
            type_name: "CreateCollection".into(),
            reason: SkipReason::AlreadyExists,
            collection: Some(name.to_string()),
            detail: Some("the new primary has this collection: its schema is compared instead".into()),
        });
    }
    // A replay whose first write to the collection is a DropCollection replaces it: what the
    // new primary holds (rows and schema) goes, and the dump's CreateCollection makes it anew.
    let drops_first = plan
        .units
        .iter()
        .flat_map(|u| &u.ops)
        .filter(|o| o.collection() == name && !matches!(o, Op::CreatePartition { .. }))
        .find(|o| !matches!(o, Op::CreateCollection { .. }))
        .is_some_and(|o| matches!(o, Op::DropCollection { .. }));
    let replaced = drops_first && target_shape.is_some();
    let shape =
        if replaced && creates { dump_shape.clone() } else { target_shape.clone().or(dump_shape.clone()) };
    if replaced {
        c.notes.push(
            "the dump drops it before writing to it: the replay drops it on the new primary and creates it again from the dump".into(),
        );
    }
    if target_shape.is_some() && super::simulate::first_drop(plan, name).is_some() {
        plan.warnings.push(format!(
            "collection {name}: the dump drops it, so the replay drops it on the new primary with every row it holds then, its own writes since the promotion included"
        ));
    }
    match (&target_shape, &dump_shape) {
        _ if replaced && creates => {}
        (Some(t), Some(d)) => c.differences = compare(d, t),
        (Some(t), None) => {
            if let Some(cols) = &columns {
                c.differences = super::schema_check::compare_columns(name, cols, t);
                c.dump_schema = Some("the columns of its Inserts (no CreateCollection in the dump)".into());
            }
        }
        (None, Some(_)) if creates => {
            c.notes.push(
                "not on the new primary: the replay creates it from the dump's CreateCollection".into(),
            );
            plan.warnings.push(format!(
                "collection {name} is created by the replay: a Milvus server queries it (the verification, a resume's check) only once it has an index and is loaded; create them when the replay has made it, then --verify"
            ));
        }
        (None, _) if !creates => {
            let needed = plan.units.iter().flat_map(|u| &u.ops).any(|o| o.collection() == name);
            if needed {
                plan.problems.push(format!(
                    "collection {name} is not on the new primary and the dump does not create it: create it there first (with the old primary's schema)"
                ));
            }
        }
        _ => {}
    }
    for d in c.differences.iter().filter(|d| d.blocking) {
        plan.problems.push(format!("collection {name}: {}", d.what));
    }
    let Some(shape) = shape else {
        // Neither on the new primary nor created by the replay: nothing goes there.
        c.count_before = Some(0);
        c.expected_after = Some(0);
        return Ok(c);
    };
    let pk = shape.primary_key().map(|f| f.name.clone());
    c.primary_key = pk.clone();
    let auto_id = shape.primary_key().is_some_and(|f| f.auto_id);
    let new_ids = auto_id && !shape.allow_insert_auto_id && plan.options.auto_id == AutoIdChoice::New;
    let columns = super::convert::Columns::for_target(&shape, new_ids);
    c.drop_columns = columns.drop.clone();
    c.no_partition = columns.no_partition;
    c.new_ids = new_ids;
    if columns.no_partition {
        c.notes.push(
            "partition-key collection: partition names are left empty (the proxy routes by key)".into(),
        );
    }
    if auto_id {
        if shape.allow_insert_auto_id {
            c.notes.push("auto id: the old keys are kept (allow_insert_auto_id is on)".into());
        } else if plan.options.auto_id == AutoIdChoice::Keep {
            plan.problems.push(format!(
                "collection {name} has auto id and refuses Inserts that carry keys: set its property allow_insert_auto_id=true to keep the old keys (later Deletes then match), or choose new ids (--auto-id new)"
            ));
        } else {
            c.notes.push("auto id: the new primary generates new keys; Deletes in the dump of replayed rows cannot match and are not sent".into());
            let upserts = plan
                .units
                .iter()
                .flat_map(|u| &u.ops)
                .any(|o| matches!(o, Op::Upsert { collection, .. } if collection == name));
            if upserts {
                plan.warnings.push(format!(
                    "collection {name}: Upserts keep their keys (Milvus requires them): an Upsert of a row this replay inserted under a new key writes a second row"
                ));
            }
        }
    }
    // Counts per call kind, and the keys the replay touches. Only Inserts before a replayed
    // DropCollection can meet the new primary's rows.
    let mut touched: Vec<Pk> = Vec::new();
    let mut inserted: HashSet<Pk> = HashSet::new();
    let mut inserted_before_drop: HashSet<Pk> = HashSet::new();
    let mut dropped = false;
    for op in plan.units.iter().flat_map(|u| &u.ops).filter(|o| o.collection() == name) {
        match op {
            Op::Insert { rows, keys, .. } => {
                c.inserts += 1;
                c.insert_rows += rows;
                touched.extend(keys.iter().cloned());
                inserted.extend(keys.iter().cloned());
                if !dropped {
                    inserted_before_drop.extend(keys.iter().cloned());
                }
            }
            Op::DropCollection { .. } => {
                dropped = true;
                c.ddl.push(op.name().to_string());
            }
            Op::Delete { keys, .. } => {
                c.deletes += 1;
                c.delete_keys += keys.len() as u64;
                touched.extend(keys.iter().cloned());
            }
            Op::Upsert { rows, keys, .. } => {
                c.upserts += 1;
                c.upsert_rows += rows;
                touched.extend(keys.iter().cloned());
            }
            other => c.ddl.push(other.name().to_string()),
        }
    }
    if new_ids {
        let before = touched.len();
        for u in &mut plan.units {
            for op in &mut u.ops {
                if let Op::Delete { collection, keys, .. } = op
                    && collection == name
                {
                    keys.retain(|k| !inserted.contains(k));
                }
            }
            u.ops.retain(|o| !matches!(o, Op::Delete { keys, .. } if keys.is_empty()));
        }
        plan.units.retain(|u| !u.ops.is_empty());
        touched.retain(|k| !inserted.contains(k));
        if before != touched.len() {
            plan.warnings.push(format!(
                "collection {name}: with new ids, Deletes of replayed rows cannot match: not sent"
            ));
        }
    }
    for s in plan.skipped.iter().filter(|s| s.collection.as_deref() == Some(name)) {
        *c.skipped.entry(format!("{:?}", s.reason)).or_insert(0) += 1;
    }
    touched.sort();
    touched.dedup();
    let (Some(pk), true) = (pk, c.on_new_primary) else {
        c.count_before = Some(0);
        c.expected_after = Some(expected(plan, name, &HashMap::new(), &HashSet::new(), &mut c, 0, new_ids));
        return Ok(c);
    };
    let present = target.key_counts(name, &pk, &touched).await?;
    if !new_ids {
        let mut conflicts: Vec<Pk> =
            inserted_before_drop.iter().filter(|k| present.contains_key(*k)).cloned().collect();
        conflicts.sort();
        c.conflicts = conflicts;
    }
    // An Upsert replaces the row by design; say how many rows it replaces that the new primary
    // has now (some may be its own writes since the promotion).
    let upserted: HashSet<&Pk> = plan
        .units
        .iter()
        .flat_map(|u| &u.ops)
        .filter_map(|o| match o {
            Op::Upsert { collection, keys, .. } if collection == name => Some(keys),
            _ => None,
        })
        .flatten()
        .collect();
    let replaced = upserted.iter().filter(|k| present.contains_key(**k)).count();
    if replaced > 0 {
        c.notes.push(format!(
            "{replaced} upserted key(s) are on the new primary now: the dump's rows replace them, whatever the policy (an Upsert replaces by design)"
        ));
    }
    let before = target.count(name).await?;
    c.count_before = Some(before);
    let conflicts: HashSet<Pk> = c.conflicts.iter().cloned().collect();
    c.expected_after = Some(expected(plan, name, &present, &conflicts, &mut c, before, new_ids));
    if new_ids {
        // The rows get keys the new primary chooses: the old keys cannot be read back.
        c.sample.clear();
    }
    let mut pb: Vec<(Pk, u64)> = present.into_iter().collect();
    pb.sort();
    c.present_before = pb;
    Ok(c)
}

/// Simulates the plan on the keys it touches: the expected row count afterwards, and a sample.
fn expected(
    plan: &Plan,
    name: &str,
    present: &HashMap<Pk, u64>,
    conflicts: &HashSet<Pk>,
    c: &mut CollectionPlan,
    before: u64,
    new_ids: bool,
) -> u64 {
    let sim = super::simulate::run(plan, name, Until::end(plan), present, conflicts, new_ids);
    let counts = &sim.counts;
    let mut keys: Vec<(&Pk, &u64)> = counts.iter().collect();
    keys.sort();
    let n = plan.options.sample.max(2);
    let (mut yes, mut no): (Vec<_>, Vec<_>) = keys.into_iter().partition(|(_, v)| **v > 0);
    let step = |len: usize, want: usize| (len / want.max(1)).max(1);
    let sy = step(yes.len(), n / 2);
    let sn = step(no.len(), n / 2);
    yes = yes.into_iter().step_by(sy).take(n / 2).collect();
    no = no.into_iter().step_by(sn).take(n / 2).collect();
    c.sample = yes.into_iter().chain(no).map(|(k, v)| (k.clone(), *v)).collect();
    sim.rows(before, present)
}
