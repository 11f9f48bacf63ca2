//! Replay throughput: REPLAY_ROWS (default 1,000,000) rows of Inserts with 128-dim vectors, in
//! WAL Insert messages of 1,000 rows, replayed by `replay::apply` (plan, then apply with the
//! journal) into a demo new primary, against the demo's own Insert rate for the same batches
//! sent directly (converted beforehand, only the calls timed) in the same run. Prints rows per
//! second of both and their ratio.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};
use walscope::dump::Framing;
use walscope::dump::framing::write_frame;
use walscope::net::grpc::GrpcSettings;
use walscope::replay::apply::{self as replay, ApplyOptions, ReplaySpec};
use walscope::replay::convert::{Columns, rows_request};
use walscope::replay::plan::PlanOptions;
use walscope::replay::{NewPrimary, Salvage};
use walscope::schema::SchemaSet;
use walscope::sim::milvus::{MilvusDemo, MilvusDemoConfig};
use walscope::sim::{WalGenConfig, WalGenerator};

const ROWS_PER_MESSAGE: u64 = 1000;

/// CreateCollection messages and plain Inserts of the generator, until `rows` rows.
fn write_dump(path: &Path, rows: u64) -> u64 {
    let set = SchemaSet::builtin();
    let wal = WalGenConfig { seed: 5, rows: (ROWS_PER_MESSAGE, ROWS_PER_MESSAGE), ..Default::default() };
    let (mut bytes, mut total) = (Vec::new(), 0u64);
    let file = std::fs::File::create(path).expect("dump file");
    let mut out = std::io::BufWriter::new(file);
    for m in WalGenerator::new(set.pool(), wal) {
        let plain_insert = m.type_name == "Insert" && m.last_confirmed_id == m.message_id;
        if m.type_name != "CreateCollection" && !plain_insert {
            continue;
        }
        // Encrypted inserts are skipped by a replay; keep the count to what is sent.
        if plain_insert && is_encrypted(&set, &m.response) {
            continue;
        }
        bytes.clear();
        write_frame(Framing::VarintDelimited, &m.response, &mut bytes);
        std::io::Write::write_all(&mut out, &bytes).expect("write");
        if plain_insert {
            total += ROWS_PER_MESSAGE;
            if total >= rows {
                break;
            }
        }
    }
    std::io::Write::flush(&mut out).expect("flush");
    total
}

fn is_encrypted(set: &SchemaSet, response: &[u8]) -> bool {
    let d = set.message("milvus.proto.milvus.DumpMessagesResponse").expect("type");
    let f = prost_reflect::DynamicMessage::decode(d, response).expect("frame");
    let m = f.get_field_by_name("message").and_then(|v| v.as_message().cloned()).expect("message");
    matches!(m.get_field_by_name("properties").as_deref(),
        Some(prost_reflect::Value::Map(p)) if p.contains_key(&prost_reflect::MapKey::String("_ch".into())))
}

fn main() {
    let rows: u64 = std::env::var("REPLAY_ROWS").ok().and_then(|v| v.parse().ok()).unwrap_or(1_000_000);
    let rt =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    let dir = tempfile::tempdir().expect("temp dir");
    let dump = dir.path().join("bench.dump");
    let t = Instant::now();
    let total = write_dump(&dump, rows);
    eprintln!("generated {total} rows in {:.1} s", t.elapsed().as_secs_f64());
    rt.block_on(async {
        let timeout = Duration::from_secs(60);
        // Direct: the same batches as public Inserts, converted first, only the calls timed.
        let direct = MilvusDemo::start(MilvusDemoConfig::default()).await.expect("demo");
        let settings = GrpcSettings::new(direct.addr().to_string());
        let spec = ReplaySpec { inputs: vec![dump.clone()], settings: settings.clone(), timeout, options: PlanOptions::default() };
        let salvage = Arc::new(Salvage::open(std::slice::from_ref(&dump)).expect("open"));
        let np = NewPrimary::connect(&settings, timeout).await.expect("connect");
        let planned = replay::plan(&spec).await.expect("plan");
        let mut sent_rows = 0u64;
        let mut calls_time = Duration::ZERO;
        for u in &planned.plan.units {
            for op in &u.ops {
                match op {
                    walscope::replay::Op::CreateCollection { db, collection, at } => {
                        use base64::Engine;
                        let body = salvage.body_at(at.dump, at.offset, at.len).expect("body");
                        let schema = body.get_field_by_name("collection_schema").and_then(|v| v.as_message().map(walscope::codec::encode)).expect("schema");
                        let schema = base64::engine::general_purpose::STANDARD.encode(schema);
                        let req = serde_json::json!({"db_name": db, "collection_name": collection, "schema": schema, "shards_num": 2});
                        np.apply("CreateCollection", collection, req).await.expect("create");
                    }
                    walscope::replay::Op::Insert { db, collection, partition, at, keys, .. } => {
                        let body = salvage.body_at(at.dump, at.offset, at.len).expect("body");
                        let all: Vec<usize> = (0..keys.len()).collect();
                        let cols = Columns { drop: vec![], no_partition: false };
                        let req = rows_request("Insert", &body, db, collection, partition, &cols, keys.len(), &all).expect("request");
                        let t = Instant::now();
                        np.apply_message("Insert", collection, &req).await.expect("insert");
                        calls_time += t.elapsed();
                        sent_rows += keys.len() as u64;
                    }
                    _ => {}
                }
            }
        }
        let direct_rate = sent_rows as f64 / calls_time.as_secs_f64();
        direct.shutdown().await;

        // The replay: plan and apply into a fresh demo, journal and all.
        let target = MilvusDemo::start(MilvusDemoConfig::default()).await.expect("demo");
        let settings = GrpcSettings::new(target.addr().to_string());
        let spec = ReplaySpec { inputs: vec![dump.clone()], settings: settings.clone(), timeout, options: PlanOptions::default() };
        let t = Instant::now();
        let planned = replay::plan(&spec).await.expect("plan");
        let plan_s = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let outcome = replay::spawn_apply(&planned, settings, timeout, ApplyOptions { verify: false, ..Default::default() })
            .wait()
            .await
            .expect("apply");
        let apply_s = t.elapsed().as_secs_f64();
        let replay_rate = outcome.rows as f64 / apply_s;
        println!("replay bench: {total} rows of 128-dim vectors in {ROWS_PER_MESSAGE}-row batches");
        println!("  direct Insert (calls only): {direct_rate:.0} rows/s");
        println!("  walscope replay apply:     {replay_rate:.0} rows/s ({} calls, {apply_s:.1} s; plan {plan_s:.1} s)", outcome.calls);
        println!("  ratio replay/direct: {:.2}", replay_rate / direct_rate);
        target.shutdown().await;
    });
}
