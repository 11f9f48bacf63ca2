//! `walscope replay` over loopback on a force-failover rehearsal (the demo pair): the plan
//! (counts, skips by reason, the schema difference explained, the conflicts), apply and verify
//! (the new primary's rows equal an independent model: nothing lost, nothing duplicated, the
//! upsert transactions kept, deletes applied, the new primary's own rows kept), a second apply
//! that sends nothing, a kill in the middle of an apply and a resume to the same final state.

use crate::common;

use common::rehearsal::{self, COLLECTIONS, pair, salvage, state, walscope};
use std::collections::HashMap;
use std::time::{Duration, Instant};
use walscope::replay::Pk;

fn plan_json(dir: &std::path::Path, new: &str) -> serde_json::Value {
    let out = walscope(&["replay", dir.to_str().expect("path"), "--new-primary", new, "--json"]);
    assert!(out.status.success(), "plan failed: {}", rehearsal::text(&out));
    serde_json::from_slice(&out.stdout).expect("the plan is JSON")
}

fn rows_of(state: &rehearsal::State) -> std::collections::BTreeMap<String, HashMap<Pk, u64>> {
    state.iter().map(|(c, (k, _))| (c.clone(), k.clone())).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_apply_verify_and_apply_again() {
    let pair = pair().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let folder = dir.path().join("salvage");
    let d = folder.clone();
    let p = (pair.new_addr(), pair.old_addr());
    let _ = p;
    tokio::task::block_in_place(|| salvage(&pair, &d));
    let new = pair.new_addr().to_string();
    let np = rehearsal::new_primary(&pair).await;
    let before = state(&np).await;

    // The plan: nothing sent, every collection, skips by reason, the difference, the conflicts.
    let plan = tokio::task::block_in_place(|| plan_json(&folder, &new));
    assert_eq!(state(&np).await, before, "planning changed the new primary");
    let collections = plan["collections"].as_object().expect("collections");
    for c in COLLECTIONS {
        assert!(collections.contains_key(c), "no plan for {c}: {:?}", collections.keys());
    }
    let reasons: Vec<&str> =
        plan["skipped"].as_array().expect("skipped").iter().filter_map(|s| s["reason"].as_str()).collect();
    assert!(reasons.contains(&"Replicated"), "the lagging checkpoint's messages are skipped: {reasons:?}");
    assert!(reasons.contains(&"ManualFlush") || reasons.contains(&"Encrypted"), "{reasons:?}");
    let audit = &plan["collections"]["audit"];
    let diffs: Vec<&str> = audit["differences"]
        .as_array()
        .expect("differences")
        .iter()
        .filter_map(|d| d["what"].as_str())
        .collect();
    assert!(
        diffs
            .iter()
            .any(|d| d.contains("title") && d.contains("max_length 256 in the dump, 128 on the new primary")),
        "{diffs:?}"
    );
    let own: Vec<Pk> = pair.new.own_writes().iter().filter(|w| w.in_salvage).map(|w| Pk::Int(w.pk)).collect();
    assert_eq!(own.len(), 2, "the rehearsal's new primary wrote two keys the salvage also inserts");
    let conflicts: Vec<Pk> =
        serde_json::from_value(plan["collections"]["orders"]["conflicts"].clone()).expect("keys");
    assert_eq!(conflicts, own, "the conflict check finds exactly the new primary's own writes");
    let upserts: u64 = collections.values().map(|c| c["upserts"].as_u64().unwrap_or(0)).sum();
    assert!(upserts > 0, "the rehearsal's upsert transactions are planned as Upserts");
    let replaced = collections
        .values()
        .flat_map(|c| c["notes"].as_array().cloned().unwrap_or_default())
        .any(|n| n.as_str().is_some_and(|n| n.contains("upserted key(s) are on the new primary now")));
    assert!(replaced, "the plan says which rows its Upserts replace");

    // A schema given by the operator is what the check compares: a wrong dim is explained and
    // stops the apply.
    let schema = dir.path().join("events.json");
    std::fs::write(
        &schema,
        serde_json::json!({"name": "events", "fields": [
            {"name": "id", "is_primary_key": true, "data_type": "Int64"},
            {"name": "embedding", "data_type": "FloatVector", "type_params": [{"key": "dim", "value": "64"}]},
            {"name": "title", "data_type": "VarChar", "type_params": [{"key": "max_length", "value": "256"}]}
        ]})
        .to_string(),
    )
    .expect("write");
    let spec = format!("events={}", schema.display());
    let out = tokio::task::block_in_place(|| {
        walscope(&["replay", folder.to_str().expect("path"), "--new-primary", &new, "--schema", &spec])
    });
    let said = rehearsal::text(&out);
    assert!(!out.status.success(), "a blocking difference fails the plan: {said}");
    assert!(said.contains("schema checked against the schema given (--schema)"), "{said}");
    assert!(said.contains("field embedding: dim 64 in the dump, 128 on the new primary: vectors are refused [stops the apply]"), "{said}");
    assert!(said.contains("schema checked against the columns of its Inserts (no CreateCollection in the dump): no difference"), "{said}");

    // Apply: the new primary ends as the model says, the verification agrees.
    tokio::task::block_in_place(|| rehearsal::apply_verified(&folder, &new, &[]));
    let after = state(&np).await;
    let expected = rehearsal::expected_after(&before, &folder);
    for c in COLLECTIONS {
        let got: HashMap<Pk, u64> = after.get(c).map(|(k, _)| k.clone()).unwrap_or_default();
        let want = expected.get(c).cloned().unwrap_or_default();
        let wrong = rehearsal::differences(&want, &got);
        assert!(wrong.is_empty(), "{c}: (key, expected rows, found rows) differ: {wrong:?}");
        let total: u64 = got.values().sum();
        assert_eq!(
            after.get(c).map(|(_, n)| *n),
            Some(total),
            "{c}: count(*) holds rows outside the rehearsal's keys"
        );
        assert!(got.values().all(|n| *n == 1), "{c}: a key has duplicated rows");
    }
    // The new primary's own rows survived (policy skip).
    for w in pair.new.own_writes() {
        assert_eq!(
            after.get(&w.collection).and_then(|(k, _)| k.get(&Pk::Int(w.pk))),
            Some(&1),
            "own write {w:?} lost"
        );
    }

    // Again: the journal says everything is applied; nothing is sent.
    let out = tokio::task::block_in_place(|| {
        walscope(&["replay", folder.to_str().expect("path"), "--new-primary", &new, "--apply", "--yes"])
    });
    let said = rehearsal::text(&out);
    assert!(out.status.success(), "second apply failed: {said}");
    assert!(said.contains("nothing to send"), "{said}");
    assert!(said.contains("applied 0 unit(s)"), "{said}");
    assert_eq!(rows_of(&state(&np).await), rows_of(&after), "a second apply changed the new primary");
    pair.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_apply_resumes_to_the_same_final_state() {
    let pair = pair().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let folder = dir.path().join("salvage");
    tokio::task::block_in_place(|| salvage(&pair, &folder));
    let new = pair.new_addr().to_string();
    let np = rehearsal::new_primary(&pair).await;
    let before = state(&np).await;
    let expected = rehearsal::expected_after(&before, &folder);

    // One row per call, 40 calls a second: slow enough to be killed in the middle of a unit.
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_walscope"))
        .args([
            "replay",
            folder.to_str().expect("path"),
            "--new-primary",
            &new,
            "--apply",
            "--yes",
            "--rate",
            "40",
            "--batch",
            "1",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("starts");
    let journal = folder.join("replay.journal");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let text = std::fs::read_to_string(&journal).unwrap_or_default();
        let done = text.lines().filter(|l| l.contains("\"done\"")).count();
        let mid_unit = text.lines().last().is_some_and(|l| l.contains("\"start\""));
        if done >= 3 && mid_unit {
            break;
        }
        assert!(Instant::now() < deadline, "the apply never reached its fourth unit: {text}");
        assert!(child.try_wait().expect("wait").is_none(), "the apply ended before it could be killed");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    child.kill().expect("SIGKILL");
    let _ = child.wait();
    let out = tokio::task::block_in_place(|| {
        walscope(&["replay", folder.to_str().expect("path"), "--new-primary", &new, "--resume", "--yes"])
    });
    let said = rehearsal::text(&out);
    assert!(out.status.success(), "resume failed: {said}");
    assert!(said.contains("interrupted mid-unit"), "the plan says a unit was cut: {said}");
    assert!(said.contains("verification: OK"), "{said}");
    let after = state(&np).await;
    for c in COLLECTIONS {
        let got: HashMap<Pk, u64> = after.get(c).map(|(k, _)| k.clone()).unwrap_or_default();
        assert_eq!(
            got,
            expected.get(c).cloned().unwrap_or_default(),
            "{c}: the resumed replay differs from the model"
        );
    }
    pair.shutdown().await;
}

/// A dump cut inside a transaction (a salvage stopped mid-transaction): the transaction is
/// dropped and reported, nothing of it is planned; and a salvage from a server before 2.6.20,
/// whose transactions are single `_t=999` frames, is reported as data missing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn incomplete_transactions_and_opaque_txn_frames_are_reported() {
    let pair = pair().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let folder = dir.path().join("salvage");
    tokio::task::block_in_place(|| salvage(&pair, &folder));
    // Cut one dump just before its last CommitTxn frame.
    let dumps = walscope::replay::Salvage::open(std::slice::from_ref(&folder)).expect("open");
    let mut cut = None;
    for (d, dump) in dumps.dumps.iter().enumerate() {
        let mut header_start = 0u64;
        dumps
            .for_each(d, |m| {
                if m.type_name == "CommitTxn" {
                    cut = Some((dump.path.clone(), header_start, m.txn_id));
                }
                header_start = m.offset + m.len as u64;
            })
            .expect("read");
        if cut.is_some() {
            break;
        }
    }
    drop(dumps);
    let (path, at, txn) = cut.expect("the rehearsal's dumps hold a transaction");
    let file = std::fs::OpenOptions::new().write(true).open(&path).expect("open dump");
    file.set_len(at).expect("cut");
    let plan = tokio::task::block_in_place(|| plan_json(&folder, &pair.new_addr().to_string()));
    let txn = txn.expect("txn id");
    let dropped: Vec<&serde_json::Value> = plan["skipped"]
        .as_array()
        .expect("skipped")
        .iter()
        .filter(|s| s["reason"] == "IncompleteTxn")
        .collect();
    assert!(!dropped.is_empty(), "the cut transaction is reported");
    assert!(
        dropped.iter().all(|s| s["detail"].as_str() == Some(&format!("transaction {txn}"))),
        "{dropped:?}"
    );
    assert!(dropped.iter().any(|s| s["type_name"] == "BeginTxn"), "{dropped:?}");
    let planned_txns: Vec<i64> =
        plan["units"].as_array().expect("units").iter().filter_map(|u| u["txn"].as_i64()).collect();
    assert!(!planned_txns.contains(&txn), "the incomplete transaction is not planned");
    let words = rehearsal::text(&tokio::task::block_in_place(|| {
        walscope(&["replay", folder.to_str().expect("path"), "--new-primary", &pair.new_addr().to_string()])
    }));
    assert!(words.contains("transaction without CommitTxn at the end of the dump: dropped"), "{words}");

    // A dump that starts inside a transaction (its BeginTxn before the first frame): the
    // transaction is neither applied in pieces nor silently dropped.
    let dumps = walscope::replay::Salvage::open(std::slice::from_ref(&folder)).expect("open");
    let mut frames: Vec<(String, Option<i64>, Vec<u8>)> = Vec::new();
    for d in 0..dumps.dumps.len() {
        let mut header_start = 0u64;
        let path = dumps.dumps[d].path.clone();
        let bytes = std::fs::read(&path).expect("dump");
        let mut these = Vec::new();
        dumps
            .for_each(d, |m| {
                let end = m.offset + m.len as u64;
                these.push((
                    m.type_name.clone(),
                    m.txn_id,
                    bytes[header_start as usize..end as usize].to_vec(),
                ));
                header_start = end;
            })
            .expect("read");
        if these.iter().any(|(t, _, _)| t == "BeginTxn")
            && these.iter().filter(|(t, _, _)| t == "CommitTxn").count() > 1
        {
            frames = these;
            break;
        }
    }
    drop(dumps);
    let committed = |i: usize| {
        frames[i].0 == "BeginTxn"
            && frames[i + 1..].iter().any(|(t, id, _)| t == "CommitTxn" && *id == frames[i].1)
    };
    let begin = (0..frames.len()).find(|i| committed(*i)).expect("a transaction committed in the dump");
    let txn = frames[begin].1.expect("its id");
    let cut = dir.path().join("mid-transaction.dump");
    std::fs::write(&cut, frames[begin + 1..].iter().flat_map(|(_, _, b)| b.clone()).collect::<Vec<u8>>())
        .expect("write");
    let out = tokio::task::block_in_place(|| {
        walscope(&["replay", cut.to_str().expect("path"), "--new-primary", &pair.new_addr().to_string()])
    });
    let words = rehearsal::text(&out);
    assert!(!out.status.success(), "a transaction begun before the dump stops the apply: {words}");
    assert!(
        words.contains(&format!("PROBLEM: transaction {txn}: its BeginTxn is before the dump's first frame")),
        "{words}"
    );
    pair.shutdown().await;

    // A server before the fix: every transaction one empty `_t=999` frame.
    let old = walscope::sim::milvus::pair::MilvusPair::start(walscope::sim::milvus::pair::MilvusPairConfig {
        rehearsal: true,
        wal: rehearsal::wal(),
        old_faults: walscope::sim::milvus::Faults::before_txn_fix(),
        ..Default::default()
    })
    .await
    .expect("pair");
    let folder = dir.path().join("old-server");
    tokio::task::block_in_place(|| salvage(&old, &folder));
    let out = tokio::task::block_in_place(|| {
        walscope(&["replay", folder.to_str().expect("path"), "--new-primary", &old.new_addr().to_string()])
    });
    let words = rehearsal::text(&out);
    assert!(words.contains("OpaqueTxn: Txn (999) frame with an empty body: DATA MISSING"), "{words}");
    old.shutdown().await;
}

/// An auto-id collection on the new primary refuses Inserts that carry keys: the plan says so
/// and stops; with new ids the rows go in without their keys, and the counts verify.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_id_collections_are_explained_and_new_ids_replay() {
    let pair = pair().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let folder = dir.path().join("salvage");
    tokio::task::block_in_place(|| salvage(&pair, &folder));
    let np = rehearsal::new_primary(&pair).await;
    rehearsal::make_users_auto_id(&np).await;
    let new = pair.new_addr().to_string();
    let path = folder.to_str().expect("path");
    let out = tokio::task::block_in_place(|| walscope(&["replay", path, "--new-primary", &new]));
    let said = rehearsal::text(&out);
    assert!(!out.status.success(), "{said}");
    assert!(
        said.contains("PROBLEM: collection users has auto id and refuses Inserts that carry keys"),
        "{said}"
    );
    let out = tokio::task::block_in_place(|| {
        walscope(&["replay", path, "--new-primary", &new, "--auto-id", "new", "--apply", "--yes"])
    });
    let said = rehearsal::text(&out);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("note: auto id: the new primary generates new keys"), "{said}");
    assert!(said.contains("verification: OK"), "{said}");
    let rows = np.count("users").await.expect("count");
    assert!(rows > 0, "the users rows went in with new keys");
    pair.shutdown().await;
}

/// The plan records each collection's schema update time (DescribeCollection's
/// `update_timestamp`); a field added on the new primary after the plan makes apply refuse in
/// words with nothing sent, and a fresh plan then applies.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apply_refuses_when_a_schema_changed_since_the_plan() {
    use walscope::net::grpc::GrpcSettings;
    use walscope::replay::apply::{ApplyOptions, ReplaySpec, plan, spawn_apply};
    let pair = pair().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let folder = dir.path().join("salvage");
    let d = folder.clone();
    tokio::task::block_in_place(|| salvage(&pair, &d));
    let np = rehearsal::new_primary(&pair).await;
    let spec = ReplaySpec {
        inputs: vec![folder.clone()],
        settings: GrpcSettings::new(pair.new_addr().to_string()),
        timeout: Duration::from_secs(30),
        options: Default::default(),
    };
    let planned = plan(&spec).await.expect("plan");
    let recorded =
        planned.plan.collections["audit"].schema_updated.expect("the plan records audit's update time");
    assert!(recorded > 0, "the demo reports an update time");

    // A plan saved by an earlier walscope (no update times) still loads, and says what it lacks.
    let old = tempfile::tempdir().expect("tempdir");
    walscope::replay::SavedPlan::save(old.path(), &planned.plan).expect("save");
    let path = walscope::replay::SavedPlan::path_in(old.path(), &planned.plan.db);
    let mut json: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    for c in json["collections"].as_object_mut().unwrap().values_mut() {
        c.as_object_mut().unwrap().remove("schema_updated");
    }
    std::fs::write(&path, serde_json::to_vec(&json).unwrap()).unwrap();
    let loaded =
        walscope::replay::SavedPlan::load(old.path(), &planned.plan.db).expect("loads").expect("a plan");
    assert!(
        loaded.warnings.iter().any(|w| w.contains("records no schema update time of")
            && w.contains("audit")
            && w.contains("could not be checked")),
        "{:?}",
        loaded.warnings
    );

    let before = state(&np).await;
    rehearsal::add_nullable_field(&np, "audit", "reviewed_at").await;
    let opts = ApplyOptions { verify: false, ..Default::default() };
    let err = spawn_apply(&planned, spec.settings.clone(), spec.timeout, opts.clone())
        .wait()
        .await
        .expect_err("apply refuses");
    let words = err.to_string();
    assert!(
        words.contains("collection audit's schema changed on the new primary since the plan (update time ")
            && words.ends_with("): plan again"),
        "{words}"
    );
    assert_eq!(state(&np).await, before, "the refused apply sent something");

    // Planned again (after the change), the apply goes through.
    let planned = plan(&spec).await.expect("plan again");
    assert!(planned.plan.collections["audit"].schema_updated.expect("recorded") > recorded);
    spawn_apply(&planned, spec.settings.clone(), spec.timeout, opts).wait().await.expect("apply");
    assert_ne!(state(&np).await, before, "the apply sent the replay");
}
