//! Salvage throughput on loopback: messages/s and MB/s of a salvage (GetReplicateInfo +
//! DumpMessages into a dump file) of ~1 KiB and ~64 KiB messages from the demo server, beside
//! the rate at which the same server streams to a client that discards everything. The demo
//! keeps what it generated, so after a warm-up both read the same cached WAL; the ratio shows
//! what the salvage path (placing each frame, framing, writes, syncs) costs. A third
//! baseline is the disk: the same bytes written and fsynced, since a salvage's file must be
//! durable and cannot be made so faster than that.

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use futures::StreamExt;
use prost_reflect::DynamicMessage;
use std::time::{Duration, Instant};
use walscope::dump::SyncPolicy;
use walscope::jobs::salvage::{self, SalvageSpec};
use walscope::net::grpc::{GrpcSettings, GrpcTransport};
use walscope::net::{CallOptions, Transport};
use walscope::schema::SchemaSet;
use walscope::sim::milvus::{MilvusDemo, MilvusDemoConfig, OLD_CLUSTER_ID};
use walscope::sim::{WalGenConfig, WalGenerator};

const PCHANNEL: &str = "by-dev-rootcoord-dml_1";

struct Case {
    name: &'static str,
    rows: u64,
    messages: usize,
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let set = SchemaSet::builtin();
    for case in
        // About 1 KiB (2 rows) and 64 KiB (170 rows) per message, ~200 MB each: long enough that
        // the rate is the stream's, not the set-up's (two connections, the checkpoint, the file).
        [
            Case { name: "1KiB", rows: 2, messages: 200_000 },
            Case { name: "64KiB", rows: 170, messages: 3_000 },
        ]
    {
        let wal = WalGenConfig { seed: 5, rows: (case.rows, case.rows), total: None, ..Default::default() };
        // The end timetick that bounds the dump to about `messages` messages.
        let msgs: Vec<_> = WalGenerator::new(set.pool(), wal.clone())
            .filter(|m| m.pchannel == PCHANNEL)
            .take(case.messages + 10)
            .collect();
        let end = msgs[case.messages + 5].timetick;
        let demo = rt.block_on(MilvusDemo::start(MilvusDemoConfig { wal, ..Default::default() })).unwrap();
        let addr = demo.addr().to_string();
        let dir = tempfile::tempdir().unwrap();
        let svc = set.pool().get_service_by_name("milvus.proto.milvus.MilvusService").unwrap();
        let dump = svc.methods().find(|m| m.name() == "DumpMessages").unwrap();
        let first = &msgs[0];
        let request = DynamicMessage::deserialize(
            dump.input(),
            serde_json::json!({"pchannel": PCHANNEL, "start_message_id": {"id": first.message_id, "WAL_name": "Pulsar"},
                "include_start_message": true, "end_timetick": end.to_string()}),
        )
        .unwrap();
        let raw = || {
            rt.block_on(async {
                let t = GrpcTransport::connect(&GrpcSettings::new(&addr)).await.unwrap();
                let mut s = t.call_server_stream(&dump, &request, &CallOptions::default()).await.unwrap();
                let (mut n, mut bytes) = (0u64, 0u64);
                while let Some(m) = s.messages.next().await {
                    n += 1;
                    bytes += m.unwrap().len() as u64;
                }
                (n, bytes)
            })
        };
        let out = dir.path().join("bench.dump");
        // A salvage writes a new file; the last run's is removed untimed (truncating 200 MB of
        // a file still being written back costs the filesystem ~0.15 s, which is not the
        // salvage's).
        let remove_last = || {
            let _ = std::fs::remove_file(&out);
            let _ = std::fs::remove_file(walscope::dump::manifest_path(&out));
        };
        let salvage = || {
            let spec = SalvageSpec {
                new_primary: GrpcSettings::new(&addr),
                old_primary: GrpcSettings::new(&addr),
                source_cluster_id: OLD_CLUSTER_ID.into(),
                pchannel: PCHANNEL.into(),
                out: out.clone(),
                end_timetick: end,
                resume: false,
                max_retries: 0,
                timeout: Duration::from_secs(60),
                sync: SyncPolicy { every_frames: 1000, every: Duration::from_millis(500) },
            };
            rt.block_on(async { salvage::spawn(spec).wait().await.unwrap() })
        };
        raw(); // warm-up: the demo generates and caches the WAL
        let timed = |f: &dyn Fn() -> (u64, u64)| {
            let t = Instant::now();
            let (n, b) = f();
            let s = t.elapsed().as_secs_f64();
            (n as f64 / s, b as f64 / s / 1e6, n)
        };
        let (raw_mps, raw_mbs, n) = timed(&raw);
        // The disk's own limit: the same number of bytes written in 1 MiB writes and fsynced,
        // to the same directory (a salvage cannot be faster than its file can be made durable).
        let raw_bytes = (raw_mbs * 1e6 / raw_mps * n as f64) as usize;
        let disk_mbs = {
            let path = dir.path().join("disk-baseline");
            let chunk = vec![0x5au8; 1 << 20];
            let t = Instant::now();
            let mut f = std::fs::File::create(&path).unwrap();
            let mut left = raw_bytes;
            while left > 0 {
                let k = left.min(chunk.len());
                std::io::Write::write_all(&mut f, &chunk[..k]).unwrap();
                left -= k;
            }
            f.sync_data().unwrap();
            let mbs = raw_bytes as f64 / t.elapsed().as_secs_f64() / 1e6;
            std::fs::remove_file(&path).unwrap();
            mbs
        };
        remove_last();
        let (sal_mps, sal_mbs, _) = timed(&|| {
            let o = salvage();
            (o.manifest.frames, o.manifest.bytes)
        });
        println!(
            "{}: {n} msgs, {:.0} B average | raw stream {raw_mps:.0} msg/s {raw_mbs:.1} MB/s | disk, write + fsync {disk_mbs:.1} MB/s | salvage {sal_mps:.0} msg/s {sal_mbs:.1} MB/s | salvage/raw {:.2} | salvage/min(raw, disk) {:.2}",
            case.name,
            raw_mbs * 1e6 / raw_mps,
            sal_mps / raw_mps,
            sal_mbs / raw_mbs.min(disk_mbs)
        );
        let mut group = c.benchmark_group(format!("salvage_{}", case.name));
        group.sample_size(10).measurement_time(Duration::from_secs(8)).throughput(Throughput::Elements(n));
        group.bench_function("raw_stream_discard", |b| b.iter(raw));
        group.bench_function("salvage_to_file", |b| {
            b.iter_batched(remove_last, |()| salvage(), BatchSize::PerIteration)
        });
        group.finish();
        rt.block_on(demo.shutdown());
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
