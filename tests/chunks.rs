//! Payloads split into chunks (`_ci`/`_ct`, upstream `chunk.go`) over a real stream: the demo
//! pair writes its WAL in chunks, `walscope salvage` dumps them, `inspect --stats` counts
//! logical messages and chunks apart, and a replay joins each whole group into the message it
//! is (the new primary ends as it would from the same WAL unsplit); a group cut short in the
//! dump is skipped with which chunks are missing.

use crate::common::rehearsal::{
    self, COLLECTIONS, apply_verified, expected_after_of, new_primary, salvage, state, walscope,
};
use std::path::{Path, PathBuf};
use walscope::sim::WalGenConfig;
use walscope::sim::milvus::pair::{MilvusPair, MilvusPairConfig};

/// Inserts carry 512 bytes a row: most are split.
const CHUNK: usize = 1500;

fn chunked() -> WalGenConfig {
    WalGenConfig { rehearsal: true, chunk_bytes: Some(CHUNK), ..Default::default() }
}

/// The demo pair writing chunks, salvaged (every pchannel) into `<dir>/salvage`.
async fn salvaged_chunked_pair() -> (MilvusPair, tempfile::TempDir, PathBuf) {
    let pair = MilvusPair::start(MilvusPairConfig { rehearsal: true, wal: chunked(), ..Default::default() })
        .await
        .expect("pair starts");
    let dir = tempfile::tempdir().expect("tempdir");
    let folder = dir.path().join("salvage");
    tokio::task::block_in_place(|| salvage(&pair, &folder));
    (pair, dir, folder)
}

fn dumps(folder: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(folder)
        .expect("folder")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "dump"))
        .collect();
    v.sort();
    v
}

fn stats(dump: &Path) -> serde_json::Value {
    let out = walscope(&["inspect", dump.to_str().expect("path"), "--stats", "--jsonl"]);
    assert!(out.status.success(), "{}", rehearsal::text(&out));
    serde_json::from_slice(&out.stdout).expect("stats JSON")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chunked_payloads_are_counted_apart_and_replay_as_whole_messages() {
    let (pair, _dir, folder) = salvaged_chunked_pair().await;

    let (mut chunk_frames, mut groups) = (0, 0);
    for d in dumps(&folder) {
        let s = stats(&d);
        let (frames, messages) = (s["frames"].as_u64().unwrap(), s["messages"].as_u64().unwrap());
        let (c, g) = (s["chunks"]["frames"].as_u64().unwrap(), s["chunks"]["groups"].as_u64().unwrap());
        assert_eq!(messages, frames - c + g, "{}: {s}", d.display());
        chunk_frames += c;
        groups += g;
        // `chunk=yes` keeps exactly the chunks: as many messages as groups.
        let only = walscope(&["inspect", d.to_str().unwrap(), "--stats", "--jsonl", "--filter", "chunk=yes"]);
        let only: serde_json::Value = serde_json::from_slice(&only.stdout).expect("stats JSON");
        assert_eq!((only["frames"].as_u64(), only["messages"].as_u64()), (Some(c), Some(g)), "{only}");
        // A listed chunk names itself in its row and carries no body of its own.
        let rows = walscope(&["inspect", d.to_str().unwrap(), "--jsonl", "--filter", "type=Insert"]);
        for line in String::from_utf8_lossy(&rows.stdout).lines() {
            let row: serde_json::Value = serde_json::from_str(line).expect("row");
            if let Some(c) = row.get("chunk") {
                assert!(row["summary"].as_str().unwrap().contains("[chunk "), "{row}");
                assert!(row.get("body").is_none(), "a chunk alone has no body: {row}");
                assert!(c["total"].as_u64().unwrap() >= 2, "{row}");
            } else if row["type"] == "Insert" && row.get("body_not_decoded").is_none() {
                assert!(row["body"]["num_rows"].is_string(), "{row}");
            }
        }
    }
    assert!(
        groups > 10 && chunk_frames >= 2 * groups,
        "the demo wrote chunks: {chunk_frames} in {groups} groups"
    );

    // The replay joins every whole group: the new primary ends as the unsplit WAL says.
    let np = new_primary(&pair).await;
    let before = state(&np).await;
    let new = pair.new_addr().to_string();
    let said = tokio::task::block_in_place(|| apply_verified(&folder, &new, &["--policy", "skip"]));
    let after = state(&np).await;
    let unsplit = WalGenConfig { chunk_bytes: None, ..chunked() };
    let want = expected_after_of(&before, &folder, unsplit);
    for c in COLLECTIONS {
        let got = after.get(c).map(|(k, _)| k.clone()).unwrap_or_default();
        assert_eq!(got, want.get(c).cloned().unwrap_or_default(), "collection {c} after the replay: {said}");
    }
}

/// Frames of a varint-delimited dump: (start of the length, end of the frame).
fn frames(bytes: &[u8]) -> Vec<(usize, usize)> {
    use walscope::dump::{Framing, framing::read_header};
    let (mut pos, mut out) = (0, Vec::new());
    while pos < bytes.len() {
        let end =
            pos + read_header(bytes, pos, Framing::VarintDelimited).expect("a frame header").total() as usize;
        out.push((pos, end));
        pos = end;
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_group_missing_a_chunk_is_skipped_with_which_chunks_are_missing() {
    let (pair, dir, folder) = salvaged_chunked_pair().await;
    // Chunk 2 of the last chunked Insert of one dump is cut out of a copy.
    let src = dumps(&folder).into_iter().next().expect("a dump");
    let bytes = std::fs::read(&src).expect("dump");
    let listed = walscope(&["inspect", src.to_str().unwrap(), "--jsonl"]);
    let rows: Vec<serde_json::Value> = String::from_utf8_lossy(&listed.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("row"))
        .filter(|r: &serde_json::Value| r.get("frame").is_some())
        .collect();
    let victim = rows
        .iter()
        .rev()
        .find(|r| r["chunk"]["index"] == 1 && r["type"] == "Insert" && r.get("txn").is_none())
        .expect("a second chunk of an Insert");
    let (n, tt) = (victim["frame"].as_u64().unwrap() as usize, victim["chunk"]["tt"].as_u64().unwrap());
    let total = victim["chunk"]["total"].as_u64().unwrap();
    let cut: Vec<u8> = frames(&bytes)
        .into_iter()
        .enumerate()
        .filter(|(i, _)| *i != n)
        .flat_map(|(_, (a, b))| bytes[a..b].to_vec())
        .collect();
    let lone = dir.path().join("cut").join(src.file_name().unwrap());
    std::fs::create_dir_all(lone.parent().unwrap()).unwrap();
    std::fs::write(&lone, &cut).unwrap();
    std::fs::copy(walscope::dump::manifest_path(&src), walscope::dump::manifest_path(&lone)).unwrap();

    let s = stats(&lone);
    let incomplete = s["chunks"]["incomplete"].as_array().expect("incomplete groups");
    assert!(
        incomplete.iter().any(|g| g["tt"] == tt && g["missing"] == serde_json::json!([1])),
        "the cut group is reported with index 1 missing: {s}"
    );
    let text = walscope(&["inspect", lone.to_str().unwrap(), "--stats"]);
    assert!(
        rehearsal::text(&text)
            .contains(&format!("incomplete at timetick {tt}: of {total} chunks, missing 2")),
        "{}",
        rehearsal::text(&text)
    );

    let new = pair.new_addr().to_string();
    let plan = walscope(&["replay", lone.to_str().unwrap(), "--new-primary", &new, "--json"]);
    assert!(plan.status.success(), "{}", rehearsal::text(&plan));
    let plan: serde_json::Value = serde_json::from_slice(&plan.stdout).expect("plan JSON");
    let skipped = plan["skipped"].as_array().expect("skipped");
    let it = skipped
        .iter()
        .find(|s| s["reason"] == "IncompleteChunks" && s["tt"] == tt)
        .unwrap_or_else(|| panic!("the cut group is skipped as IncompleteChunks: {skipped:?}"));
    let detail = it["detail"].as_str().unwrap_or_default();
    assert!(
        detail.contains(&format!("chunk 2 of {total} missing")) && detail.contains("the dump ends first"),
        "{detail}"
    );
    // Its other chunks are not planned as messages of their own.
    let units = plan.to_string();
    assert!(!units.contains("payload: "), "no partial body was read as a message");
}
