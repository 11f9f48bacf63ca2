//! A force-failover rehearsal on the demo pair, shared by the replay tests: the pair, a salvage
//! of every pchannel into a folder (the CLI, as an operator runs it), the new primary's rows per
//! key, and an independent model of what a replay must leave there — written from the
//! generator's messages, not from the dumps or the replay's own code.

#![allow(dead_code)]

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;
use walscope::net::grpc::GrpcSettings;
use walscope::replay::{NewPrimary, Pk};
use walscope::salvage::FolderManifest;
use walscope::schema::SchemaSet;
use walscope::sim::milvus::pair::{MilvusPair, MilvusPairConfig};
use walscope::sim::walgen::START_MS;
use walscope::sim::{WalGenConfig, WalGenerator};

pub const COLLECTIONS: [&str; 4] = ["orders", "users", "events", "audit"];

/// Where every salvage of the rehearsal stops: about 400 messages into the WAL.
pub fn end_timetick() -> u64 {
    (START_MS + 600) << 18
}

pub fn wal() -> WalGenConfig {
    WalGenConfig { rehearsal: true, ..Default::default() }
}

pub async fn pair() -> MilvusPair {
    MilvusPair::start(MilvusPairConfig { rehearsal: true, wal: wal(), ..Default::default() })
        .await
        .expect("pair starts")
}

pub fn walscope(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_walscope"))
        .args(args)
        .env("WALSCOPE_CONFIG_DIR", std::env::temp_dir().join("walscope-replay-tests-config"))
        .output()
        .expect("walscope runs")
}

pub fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// `walscope salvage --all-pchannels --keep-replicated` of the pair into `dir`: the dumps also
/// hold what the new primary already has (the checkpoint lags), which the replay must skip.
pub fn salvage(pair: &MilvusPair, dir: &Path) {
    let end = end_timetick().to_string();
    let (new, old) = (pair.new_addr().to_string(), pair.old_addr().to_string());
    let out = walscope(&[
        "salvage",
        "--new-primary",
        &new,
        "--old-primary",
        &old,
        "--source-cluster-id",
        "by-dev-old",
        "--all-pchannels",
        "--out-dir",
        dir.to_str().expect("utf-8 path"),
        "--end-timetick",
        &end,
        "--keep-replicated",
    ]);
    assert!(out.status.success(), "salvage failed: {}", text(&out));
}

pub async fn new_primary(pair: &MilvusPair) -> NewPrimary {
    NewPrimary::connect(&GrpcSettings::new(pair.new_addr().to_string()), Duration::from_secs(10))
        .await
        .expect("connects")
}

/// Every key the rehearsal can touch (the WAL's keys, the new primary's own).
pub fn all_keys() -> Vec<Pk> {
    (1..=400).chain(900_001..=900_010).map(Pk::Int).collect()
}

/// Rows per key of every collection, and each collection's count(*).
pub type State = BTreeMap<String, (HashMap<Pk, u64>, u64)>;

pub async fn state(np: &NewPrimary) -> State {
    let mut out = BTreeMap::new();
    for c in COLLECTIONS {
        if np.describe(c).await.expect("describe").is_none() {
            continue;
        }
        let keys = np.key_counts(c, "id", &all_keys()).await.expect("query keys");
        let count = np.count(c).await.expect("count");
        out.insert(c.to_string(), (keys, count));
    }
    out
}

/// One unit of the old primary's WAL: a message or a whole transaction.
pub struct Unit {
    pub pchannel: String,
    pub judge: u64,
    /// (collection, op, keys): op is "insert", "delete", "create" or "upsert".
    pub ops: Vec<(String, &'static str, Vec<Pk>)>,
    pub txn: bool,
}

/// The old primary's WAL up to the salvage's end, as units, read from the generator.
pub fn wal_units() -> Vec<Unit> {
    wal_units_of(wal())
}

/// [`wal_units`] of a rehearsal WAL generated with `cfg`.
pub fn wal_units_of(cfg: WalGenConfig) -> Vec<Unit> {
    let set = SchemaSet::builtin();
    let pool = set.pool();
    let resp = set.message("milvus.proto.milvus.DumpMessagesResponse").expect("type");
    let end = end_timetick();
    let mut units = Vec::new();
    let mut open: Option<Unit> = None;
    for m in WalGenerator::new(pool, cfg) {
        let frame =
            prost_reflect::DynamicMessage::decode(resp.clone(), m.response.as_slice()).expect("frame");
        let im = frame.get_field_by_name("message").and_then(|v| v.as_message().cloned()).expect("message");
        let w = walscope::wal::analyze(pool, &im);
        let body = w.body.clone().and_then(|b| b.ok());
        let name = |b: &prost_reflect::DynamicMessage| {
            let c = b
                .get_field_by_name("collection_name")
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default();
            if c.is_empty() {
                b.get_field_by_name("collectionName")
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default()
            } else {
                c
            }
        };
        let op = match (m.type_name, &body) {
            _ if w.is_encrypted() => None,
            ("Insert", Some(b)) => {
                Some((name(b), "insert", walscope::replay::units::insert_keys(b, "id").unwrap_or_default()))
            }
            ("Delete", Some(b)) => Some((
                name(b),
                "delete",
                b.get_field_by_name("primary_keys")
                    .and_then(|v| v.as_message().map(walscope::replay::units::ids_keys))
                    .unwrap_or_default(),
            )),
            ("CreateCollection", Some(b)) => Some((name(b), "create", vec![])),
            ("DropCollection", Some(b)) => Some((name(b), "drop", vec![])),
            _ => None,
        };
        match m.type_name {
            "BeginTxn" => {
                open = Some(Unit { pchannel: m.pchannel.clone(), judge: 0, ops: vec![], txn: true });
                continue;
            }
            "CommitTxn" => {
                let Some(mut u) = open.take() else { continue };
                u.judge = m.timetick;
                if u.judge > end {
                    break;
                }
                // Milvus writes an upsert as Insert + Delete of the same keys: one upsert.
                let deletes: Vec<_> = u.ops.iter().filter(|o| o.1 == "delete").cloned().collect();
                if !deletes.is_empty() {
                    u.ops = u
                        .ops
                        .iter()
                        .filter(|o| o.1 == "insert")
                        .map(|o| (o.0.clone(), "upsert", o.2.clone()))
                        .collect();
                }
                units.push(u);
                continue;
            }
            _ => {}
        }
        if let Some(u) = open.as_mut() {
            u.ops.extend(op);
            continue;
        }
        if m.timetick > end {
            break;
        }
        units.push(Unit {
            pchannel: m.pchannel.clone(),
            judge: m.timetick,
            ops: op.into_iter().collect(),
            txn: false,
        });
    }
    units
}

/// The checkpoint timetick of every pchannel of a salvage folder.
pub fn checkpoints(dir: &Path) -> HashMap<String, u64> {
    let m = FolderManifest::load(dir).expect("salvage.json");
    m.pchannels
        .iter()
        .filter_map(|e| e.checkpoint.as_ref().map(|c| (e.pchannel.clone(), c.time_tick)))
        .collect()
}

/// What the new primary must hold after a replay with policy skip: its rows before (`before`),
/// then the WAL units above each pchannel's checkpoint, where keys it already had when a plain
/// Insert of them comes keep its rows (neither that Insert nor a later Delete of them is sent).
pub fn expected_after(before: &State, dir: &Path) -> BTreeMap<String, HashMap<Pk, u64>> {
    expected_after_of(before, dir, wal())
}

/// [`expected_after`] for a rehearsal WAL generated with `cfg`. A DropCollection empties the
/// collection: Inserts after it meet none of the rows it had.
pub fn expected_after_of(
    before: &State,
    dir: &Path,
    cfg: WalGenConfig,
) -> BTreeMap<String, HashMap<Pk, u64>> {
    let ckpt = checkpoints(dir);
    let tail: Vec<Unit> = wal_units_of(cfg)
        .into_iter()
        .filter(|u| ckpt.get(&u.pchannel).is_some_and(|c| u.judge > *c))
        .collect();
    let mut out: BTreeMap<String, HashMap<Pk, u64>> =
        before.iter().map(|(c, (k, _))| (c.clone(), k.clone())).collect();
    let mut conflicts: HashMap<String, Vec<Pk>> = HashMap::new();
    let mut dropped: std::collections::HashSet<String> = Default::default();
    for u in &tail {
        for (c, op, keys) in &u.ops {
            if *op == "drop" {
                dropped.insert(c.clone());
            }
            if *op == "insert" && !dropped.contains(c) {
                let existing = before.get(c).map(|(k, _)| k.clone()).unwrap_or_default();
                conflicts
                    .entry(c.clone())
                    .or_default()
                    .extend(keys.iter().filter(|k| existing.contains_key(*k)).cloned());
            }
        }
    }
    for u in &tail {
        let mut ops = u.ops.clone();
        // Inside a transaction deletes come first.
        ops.sort_by_key(|o| if o.1 == "delete" { 0 } else { 1 });
        for (c, op, keys) in ops {
            if op == "drop" {
                out.entry(c.clone()).or_default().clear();
                conflicts.remove(&c);
                continue;
            }
            let skip = conflicts.get(&c).cloned().unwrap_or_default();
            let rows = out.entry(c.clone()).or_default();
            for k in keys {
                let conflict = skip.contains(&k);
                match op {
                    "insert" if !conflict => *rows.entry(k).or_insert(0) += 1,
                    "delete" if !conflict => {
                        rows.insert(k, 0);
                    }
                    "upsert" => {
                        rows.insert(k, 1);
                    }
                    _ => {}
                }
            }
        }
    }
    for rows in out.values_mut() {
        rows.retain(|_, n| *n > 0);
    }
    out
}

/// `walscope replay FOLDER --new-primary NEW --apply --yes` plus `extra`: it must succeed and
/// verify. Returns what it said.
pub fn apply_verified(folder: &Path, new: &str, extra: &[&str]) -> String {
    let path = folder.to_str().expect("utf-8 path");
    let mut args = vec!["replay", path, "--new-primary", new, "--apply", "--yes"];
    args.extend_from_slice(extra);
    let out = walscope(&args);
    let said = text(&out);
    assert!(out.status.success(), "apply failed: {said}");
    assert!(said.contains("verification: OK"), "{said}");
    said
}

/// DropCollection of `name` in `default` on the new primary.
pub async fn drop_collection(np: &NewPrimary, name: &str) {
    np.apply("DropCollection", name, serde_json::json!({"db_name": "default", "collection_name": name}))
        .await
        .expect("drop");
}

/// Replaces the new primary's `users` by an empty auto-id collection of the same fields (its
/// Inserts then refuse keys unless the replay takes new ids).
pub async fn make_users_auto_id(np: &NewPrimary) {
    use base64::Engine;
    np.apply(
        "DropCollection",
        "users",
        serde_json::json!({"db_name": "default", "collection_name": "users"}),
    )
    .await
    .expect("drop");
    let set = SchemaSet::builtin();
    let schema = prost_reflect::DynamicMessage::deserialize(
        set.message("milvus.proto.schema.CollectionSchema").expect("type"),
        serde_json::json!({"name": "users", "fields": [
            {"name": "id", "is_primary_key": true, "autoID": true, "data_type": "Int64"},
            {"name": "embedding", "data_type": "FloatVector", "type_params": [{"key": "dim", "value": "128"}]},
            {"name": "title", "data_type": "VarChar", "type_params": [{"key": "max_length", "value": "256"}]}
        ]}),
    )
    .expect("schema");
    let schema = base64::engine::general_purpose::STANDARD.encode(walscope::codec::encode(&schema));
    np.apply(
        "CreateCollection",
        "users",
        serde_json::json!({"db_name": "default", "collection_name": "users", "schema": schema}),
    )
    .await
    .expect("create");
}

/// (key, expected rows, found rows) wherever the new primary differs from the model.
pub fn differences(want: &HashMap<Pk, u64>, got: &HashMap<Pk, u64>) -> Vec<(Pk, Option<u64>, Option<u64>)> {
    let mut wrong: Vec<_> = want
        .keys()
        .chain(got.keys())
        .filter(|k| want.get(*k) != got.get(*k))
        .map(|k| (k.clone(), want.get(k).copied(), got.get(k).copied()))
        .collect();
    wrong.sort();
    wrong.dedup();
    wrong
}

/// AddCollectionField of a nullable Int64 `field` to `collection` on the new primary: a schema
/// change, as an operator's DDL on the promoted cluster would be.
pub async fn add_nullable_field(np: &NewPrimary, collection: &str, field: &str) {
    use base64::Engine;
    let set = SchemaSet::builtin();
    let schema = prost_reflect::DynamicMessage::deserialize(
        set.message("milvus.proto.schema.FieldSchema").expect("type"),
        serde_json::json!({"name": field, "data_type": "Int64", "nullable": true}),
    )
    .expect("field schema");
    let schema = base64::engine::general_purpose::STANDARD.encode(walscope::codec::encode(&schema));
    np.apply(
        "AddCollectionField",
        collection,
        serde_json::json!({"db_name": "default", "collection_name": collection, "schema": schema}),
    )
    .await
    .expect("add field");
}
