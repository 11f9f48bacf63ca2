//! `walscope replay` over loopback on rehearsals whose history the plain one lacks: a collection
//! dropped and created again after the checkpoint (its keys start over: none of them may be
//! taken for the new primary's rows), a collection in another database (never checked or
//! written in the plan's database), and an apply into an auto-id collection killed in the
//! middle of an Insert whose keys the new primary chose (resumed without a duplicate row).

use crate::common;

use common::rehearsal::{self, salvage, state, walscope};
use std::collections::HashMap;
use std::time::{Duration, Instant};
use walscope::replay::Pk;
use walscope::sim::WalGenConfig;
use walscope::sim::milvus::pair::{MilvusPair, MilvusPairConfig};
use walscope::sim::walgen::AUDIT_STEP;

/// A rehearsal pair of `wal`'s history, salvaged into a folder as an operator would.
struct Salvaged {
    pair: MilvusPair,
    _dir: tempfile::TempDir,
    folder: std::path::PathBuf,
    new: String,
    np: walscope::replay::NewPrimary,
}

async fn salvaged(wal: WalGenConfig) -> Salvaged {
    let pair = MilvusPair::start(MilvusPairConfig { rehearsal: true, wal, ..Default::default() })
        .await
        .expect("pair starts");
    let dir = tempfile::tempdir().expect("tempdir");
    let folder = dir.path().join("salvage");
    tokio::task::block_in_place(|| salvage(&pair, &folder));
    let new = pair.new_addr().to_string();
    let np = rehearsal::new_primary(&pair).await;
    Salvaged { pair, _dir: dir, folder, new, np }
}

fn plan_json(dir: &std::path::Path, new: &str) -> serde_json::Value {
    let out = walscope(&["replay", dir.to_str().expect("path"), "--new-primary", new, "--json"]);
    assert!(out.status.success(), "plan failed: {}", rehearsal::text(&out));
    serde_json::from_slice(&out.stdout).expect("the plan is JSON")
}

fn strings(v: &serde_json::Value) -> Vec<String> {
    v.as_array()
        .map(|a| a.iter().filter_map(|s| s.as_str().map(str::to_string)).collect())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_collection_the_dump_drops_and_creates_again_is_replaced_not_merged() {
    let wal = WalGenConfig { recreate_events_at: Some(AUDIT_STEP + 30), ..rehearsal::wal() };
    let Salvaged { pair, _dir, folder, new, np } = salvaged(wal.clone()).await;
    let before = state(&np).await;
    assert!(before.get("events").is_some_and(|(k, _)| !k.is_empty()), "the new primary holds events rows");

    let plan = tokio::task::block_in_place(|| plan_json(&folder, &new));
    let warnings = strings(&plan["warnings"]);
    assert!(
        warnings
            .iter()
            .any(|w| w.starts_with("collection events: the dump drops it, so the replay drops it")),
        "{warnings:?}"
    );
    // The CreateCollection after the drop is sent, not skipped as already there.
    let creates = plan["units"]
        .as_array()
        .expect("units")
        .iter()
        .flat_map(|u| u["ops"].as_array().cloned().unwrap_or_default())
        .filter(|o| o["call"] == "CreateCollection" && o["collection"] == "events")
        .count();
    assert_eq!(creates, 1, "the re-creation of events is planned");
    // Keys the dump inserts after the drop start over at 1: only keys inserted before it and
    // held by the new primary are conflicts.
    let ckpt = rehearsal::checkpoints(&folder);
    let mut before_drop: std::collections::HashSet<Pk> = Default::default();
    for u in rehearsal::wal_units_of(wal.clone()) {
        if ckpt.get(&u.pchannel).is_none_or(|c| u.judge <= *c) {
            continue;
        }
        if u.ops.iter().any(|(c, op, _)| c == "events" && *op == "drop") {
            break;
        }
        for (c, op, keys) in &u.ops {
            if c == "events" && *op == "insert" {
                before_drop.extend(keys.iter().cloned());
            }
        }
    }
    let held = &before["events"].0;
    let want: std::collections::BTreeSet<Pk> =
        before_drop.iter().filter(|k| held.contains_key(*k)).cloned().collect();
    let conflicts: Vec<Pk> =
        serde_json::from_value(plan["collections"]["events"]["conflicts"].clone()).expect("keys");
    let got: std::collections::BTreeSet<Pk> = conflicts.iter().cloned().collect();
    assert_eq!(got, want, "conflicts: exactly the new primary's keys the dump inserts before the drop");
    let model = rehearsal::expected_after_of(&before, &folder, wal);

    tokio::task::block_in_place(|| rehearsal::apply_verified(&folder, &new, &[]));
    let after = state(&np).await;
    for (c, want) in &model {
        let got: HashMap<Pk, u64> = after.get(c).map(|(k, _)| k.clone()).unwrap_or_default();
        let wrong = rehearsal::differences(want, &got);
        assert!(wrong.is_empty(), "{c}: (key, expected rows, found rows) differ: {wrong:?}");
    }
    // Only what the replay wrote since the drop is in events.
    let events = &after["events"];
    assert_eq!(events.1, events.0.values().sum::<u64>(), "events holds rows from before the drop");
    pair.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn messages_of_another_database_are_skipped_and_named() {
    let wal = WalGenConfig { audit_database: "archive", ..rehearsal::wal() };
    let Salvaged { pair, _dir, folder, new, np } = salvaged(wal.clone()).await;
    // The new primary's `default` has no `audit`: a replay that took the dump's `archive.audit`
    // for it would create it, or stop for want of its primary key.
    rehearsal::drop_collection(&np, "audit").await;
    let before = state(&np).await;

    let plan = tokio::task::block_in_place(|| plan_json(&folder, &new));
    let skipped: Vec<&serde_json::Value> = plan["skipped"]
        .as_array()
        .expect("skipped")
        .iter()
        .filter(|s| s["reason"] == "OtherDatabase")
        .collect();
    assert!(!skipped.is_empty(), "the audit messages are skipped");
    assert!(
        skipped.iter().all(|s| s["collection"] == "audit" && s["detail"] == "database archive"),
        "{skipped:?}"
    );
    let planned_audit = plan["units"]
        .as_array()
        .expect("units")
        .iter()
        .flat_map(|u| u["ops"].as_array().cloned().unwrap_or_default());
    assert_eq!(
        planned_audit.filter(|o| o["collection"] == "audit").count(),
        0,
        "nothing goes to default.audit"
    );
    let audit = &plan["collections"]["audit"];
    assert!(audit.is_null(), "the plan neither checks nor counts default.audit: {audit}");
    let warnings = strings(&plan["warnings"]);
    let named = format!(
        "{} message(s) of database archive (audit) are not in this plan, which goes to database default: plan them with --db archive",
        skipped.len()
    );
    assert!(warnings.contains(&named), "{warnings:?}");
    let out = tokio::task::block_in_place(|| {
        walscope(&["replay", folder.to_str().expect("path"), "--new-primary", &new])
    });
    let said = rehearsal::text(&out);
    assert!(
        said.contains("in another database than the plan's: plan it into that database (--db NAME"),
        "{said}"
    );

    tokio::task::block_in_place(|| rehearsal::apply_verified(&folder, &new, &[]));
    let after = state(&np).await;
    assert!(np.describe("audit").await.expect("describe").is_none(), "default.audit was created");
    assert!(!after.contains_key("audit"));
    let model = rehearsal::expected_after_of(&before, &folder, wal);
    for c in ["orders", "users", "events"] {
        let got: HashMap<Pk, u64> = after.get(c).map(|(k, _)| k.clone()).unwrap_or_default();
        let wrong = rehearsal::differences(&model[c], &got);
        assert!(wrong.is_empty(), "{c}: (key, expected rows, found rows) differ: {wrong:?}");
    }

    // A replay into the other database is planned on its own: it never reads default's journal.
    let out = tokio::task::block_in_place(|| {
        walscope(&["replay", folder.to_str().expect("path"), "--new-primary", &new, "--db", "archive"])
    });
    let said = rehearsal::text(&out);
    // The demo has only `default`: the plan into `archive` asks there and says what is wrong.
    assert!(!out.status.success(), "{said}");
    assert!(said.contains("database not found[database=archive]"), "{said}");
    assert!(!said.contains("database archive (audit) are not in this plan"), "{said}");
    assert!(folder.join("replay.journal").exists());
    assert!(!folder.join("replay.archive.journal").exists(), "planning wrote a journal");
    pair.shutdown().await;
}

/// `users` made auto id on the new primary, the replay with new ids, one row per call: killed
/// once rows of a users Insert have landed and before the unit is done, then resumed. The new
/// keys cannot be read back, so the resume counts rows; the count verifies exactly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_apply_killed_inside_a_new_ids_insert_resumes_without_duplicates() {
    let Salvaged { pair, _dir, folder, new, np } = salvaged(rehearsal::wal()).await;
    rehearsal::make_users_auto_id(&np).await;
    let path = folder.to_str().expect("path");
    let plan = tokio::task::block_in_place(|| {
        let out = walscope(&["replay", path, "--new-primary", &new, "--auto-id", "new", "--json"]);
        assert!(out.status.success(), "plan failed: {}", rehearsal::text(&out));
        serde_json::from_slice::<serde_json::Value>(&out.stdout).expect("JSON")
    });
    // Units that insert several rows into users.
    let wide: Vec<String> = plan["units"]
        .as_array()
        .expect("units")
        .iter()
        .filter(|u| {
            u["ops"].as_array().is_some_and(|ops| {
                ops.iter().any(|o| {
                    o["call"] == "Insert" && o["collection"] == "users" && o["rows"].as_u64() > Some(2)
                })
            })
        })
        .filter_map(|u| u["key"].as_str().map(str::to_string))
        .collect();
    assert!(!wide.is_empty(), "the rehearsal inserts several rows at once into users");

    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_walscope"))
        .args(["replay", path, "--new-primary", &new, "--auto-id", "new", "--apply", "--yes"])
        .args(["--rate", "40", "--batch", "1"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("starts");
    let journal = folder.join("replay.journal");
    let deadline = Instant::now() + Duration::from_secs(90);
    let mut started_at: Option<(String, u64)> = None;
    loop {
        let text = std::fs::read_to_string(&journal).unwrap_or_default();
        let last = text.lines().last().unwrap_or_default().to_string();
        let current = wide.iter().find(|k| last.contains("\"start\"") && last.contains(&format!("\"{k}\"")));
        match (current, &started_at) {
            (Some(k), Some((s, n))) if s == k => {
                if np.count("users").await.expect("count") > *n {
                    break;
                }
            }
            (Some(k), _) => started_at = Some((k.clone(), np.count("users").await.expect("count"))),
            (None, _) => started_at = None,
        }
        assert!(Instant::now() < deadline, "the apply never landed part of a users Insert: {text}");
        assert!(child.try_wait().expect("wait").is_none(), "the apply ended before it could be killed");
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    child.kill().expect("SIGKILL");
    let _ = child.wait();
    let text = std::fs::read_to_string(&journal).expect("journal");
    let (unit, _) = started_at.expect("the unit it was killed in");
    let last = text.lines().last().unwrap_or_default();
    assert!(
        last.contains("\"start\"") && last.contains(&format!("\"{unit}\"")),
        "killed inside the users Insert {unit}: {text}"
    );

    let out = tokio::task::block_in_place(|| {
        walscope(&["replay", path, "--new-primary", &new, "--resume", "--yes"])
    });
    let said = rehearsal::text(&out);
    assert!(out.status.success(), "resume failed: {said}");
    assert!(said.contains("interrupted mid-unit"), "{said}");
    assert!(said.contains("verification: OK"), "the count is exact: no row twice, none missing: {said}");
    pair.shutdown().await;
}
