//! `walscope sample`: realistic, deterministic content, and corruptions that the reader
//! survives with every intact frame reachable.

use std::collections::BTreeSet;
use walscope::dump::{DumpFile, OpenOptions, SyncPolicy};
use walscope::schema::SchemaSet;
use walscope::sim::sample::{Corruption, write_milvus_dump};
use walscope::sim::{WalGenConfig, WalGenerator};
use walscope::wal::{self, Encryption, WalBackend};

const T: &str = "milvus.proto.milvus.DumpMessagesResponse";

#[test]
fn generator_is_deterministic_and_realistic() {
    let set = SchemaSet::builtin();
    let pool = set.pool();
    let cfg = WalGenConfig { seed: 42, total: Some(300), ..Default::default() };
    let a: Vec<_> = WalGenerator::new(pool, cfg.clone()).take(300).collect();
    let b: Vec<_> = WalGenerator::new(pool, cfg).take(300).collect();
    assert!(a.iter().zip(&b).all(|(x, y)| x.response == y.response));
    let other: Vec<_> =
        WalGenerator::new(pool, WalGenConfig { seed: 43, ..Default::default() }).take(30).collect();
    assert!(a.iter().zip(&other).any(|(x, y)| x.response != y.response));

    let resp = set.message(T).unwrap();
    let mut types = BTreeSet::new();
    let mut backends = BTreeSet::new();
    let (mut encrypted, mut in_txn, mut open_txn) = (0, 0, None::<i64>);
    for m in &a {
        let d = walscope::codec::decode(&resp, &m.response).unwrap();
        let imm = d.message.get_field_by_name("message").unwrap().as_message().unwrap().clone();
        let w = wal::analyze(pool, &imm);
        assert!(w.problems.is_empty(), "{}: {:?}", w.summary(), w.problems);
        types.insert(w.type_name.clone());
        backends.insert(format!("{:?}", w.id.as_ref().unwrap().as_ref().unwrap().backend));
        let txn = w.txn.as_ref().and_then(|t| t.get_field_by_name("txn_id")).and_then(|v| v.as_i64());
        match w.type_name.as_str() {
            "BeginTxn" => open_txn = txn,
            "CommitTxn" => {
                assert_eq!(txn, open_txn, "commit closes the open transaction");
                open_txn = None;
            }
            "Insert" if txn.is_some() => {
                assert_eq!(txn, open_txn, "a body carries its transaction's _tx");
                in_txn += 1;
            }
            _ => {}
        }
        if matches!(w.encryption, Encryption::Encrypted { .. }) {
            encrypted += 1;
            assert!(w.body.is_none(), "an encrypted payload is not decoded");
            continue;
        }
        if w.type_name == "Insert" {
            let body = w.body.as_ref().unwrap().as_ref().unwrap();
            let json = walscope::codec::to_json(body, false);
            let rows = w.rows.unwrap() as usize;
            let v: serde_json::Value = serde_json::from_str(&json).unwrap();
            let fields = v["fieldsData"].as_array().unwrap();
            assert_eq!(fields[0]["type"], "Int64");
            assert_eq!(fields[0]["scalars"]["longData"]["data"].as_array().unwrap().len(), rows);
            assert_eq!(fields[1]["type"], "FloatVector");
            assert_eq!(fields[1]["vectors"]["dim"], "128");
            assert_eq!(fields[1]["vectors"]["floatVector"]["data"].as_array().unwrap().len(), rows * 128);
            assert_eq!(fields[2]["type"], "VarChar");
            assert_eq!(fields[2]["scalars"]["stringData"]["data"].as_array().unwrap().len(), rows);
        }
        if w.type_name == "Delete" {
            let body = w.body.as_ref().unwrap().as_ref().unwrap();
            assert!(walscope::codec::to_json(body, false).contains("\"primaryKeys\":{\"intId\""));
        }
    }
    for t in
        ["Insert", "Delete", "CreateCollection", "DropCollection", "BeginTxn", "CommitTxn", "ManualFlush"]
    {
        assert!(types.contains(t), "{t} missing from {types:?}");
    }
    assert_eq!(backends.len(), 4, "every WAL id style: {backends:?}");
    assert!(encrypted > 0 && in_txn > 0);
    // Small samples still show a transaction and an encrypted message.
    let small: Vec<_> =
        WalGenerator::new(pool, WalGenConfig { seed: 9, total: Some(20), ..Default::default() })
            .take(20)
            .collect();
    assert!(small.iter().any(|m| m.type_name == "BeginTxn"));
    let _ = WalBackend::Pulsar;
}

fn frames(path: &std::path::Path) -> (Vec<Vec<u8>>, Vec<walscope::dump::Problem>) {
    let set = SchemaSet::builtin();
    let d = DumpFile::open(
        path,
        OpenOptions { message_type: Some(set.message(T).unwrap()), ..Default::default() },
    )
    .unwrap();
    d.wait_indexed();
    let f = (0..d.frame_count()).map(|i| d.message_bytes(&d.frame(i).unwrap()).1.to_vec()).collect();
    (f, d.problems())
}

#[test]
fn every_corruption_opens_with_every_intact_frame() {
    let set = SchemaSet::builtin();
    let dir = tempfile::tempdir().unwrap();
    let clean = dir.path().join("clean.dump");
    write_milvus_dump(set.pool(), &clean, 120, 8, SyncPolicy::default(), None).unwrap();
    let (want, problems) = frames(&clean);
    assert_eq!(want.len(), 120);
    assert!(problems.is_empty());
    for how in [Corruption::Truncate, Corruption::Garbage, Corruption::HugeLength] {
        let p = dir.path().join(format!("{how:?}.dump"));
        let damage =
            write_milvus_dump(set.pool(), &p, 120, 8, SyncPolicy::default(), Some(how)).unwrap().unwrap();
        let (got, problems) = frames(&p);
        let expected = if how == Corruption::Truncate { &want[..119] } else { &want[..] };
        assert_eq!(got, expected, "{how:?}");
        assert_eq!(problems.len(), 1, "{how:?}: {problems:?}");
        assert_eq!(problems[0].offset, damage.offset, "{how:?}: {problems:?}");
        assert_eq!(problems[0].truncated, how == Corruption::Truncate);
    }
}
