//! The call-stream job against the demo Milvus on 127.0.0.1: a bounded DumpMessages stream
//! written to a dump byte for byte as the server sent it (checked against the same stream taken
//! directly), its manifest naming the source, only a bounded ring in memory; an endless stream
//! cancelled into a valid, incomplete dump.

use bytes::Bytes;
use std::time::Duration;
use walscope::dump::framing::write_frame;
use walscope::dump::{DumpFile, Framing, Manifest, OpenOptions, SyncPolicy, manifest_path};
use walscope::jobs::call_stream::{self, CallStreamSpec, CallStreamState, RingLimits};
use walscope::net::profile::{ConnectionProfile, TransportKind};
use walscope::net::{
    CallOptions, CallRequest, StreamEnd, call_server_stream, call_unary, connect, find_method,
};
use walscope::schema::SchemaSet;
use walscope::sim::WalGenConfig;
use walscope::sim::milvus::{MilvusDemo, MilvusDemoConfig, OLD_CLUSTER_ID};

/// A DumpMessages request from the demo's checkpoint on `pchannel`; `ticks` of synthetic time
/// long (0: endless).
async fn dump_request(t: &dyn walscope::net::Transport, pchannel: &str, ticks: u64) -> serde_json::Value {
    let set = SchemaSet::shared_builtin();
    let info = find_method(set.pool(), "MilvusService/GetReplicateInfo").unwrap();
    let ask = walscope::codec::from_json(
        &info.input(),
        &format!(r#"{{"source_cluster_id": "{OLD_CLUSTER_ID}", "target_pchannel": "{pchannel}"}}"#),
    )
    .unwrap();
    let out = call_unary(t, &info, &CallRequest::Message(ask), &CallOptions::default()).await.unwrap();
    let v: serde_json::Value = serde_json::from_str(&walscope::codec::to_json(&out.message, false)).unwrap();
    let ckpt = &v["salvageCheckpoint"];
    let tt: u64 = ckpt["timeTick"].as_str().unwrap().parse().unwrap();
    let end = if ticks == 0 { 0 } else { tt + (ticks << 18) };
    serde_json::json!({"pchannel": pchannel, "start_message_id": ckpt["messageId"], "end_timetick": end.to_string()})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_lands_in_a_dump_exactly_and_memory_stays_bounded() {
    let demo = MilvusDemo::start(MilvusDemoConfig {
        wal: WalGenConfig { seed: 5, rows: (1, 3), total: None, ..Default::default() },
        ..Default::default()
    })
    .await
    .unwrap();
    let set = SchemaSet::shared_builtin();
    let t = connect(&ConnectionProfile::plain("demo", TransportKind::Grpc, demo.addr().to_string()))
        .await
        .unwrap();
    let m = find_method(set.pool(), "MilvusService/DumpMessages").unwrap();
    let json = dump_request(t.as_ref(), "by-dev-rootcoord-dml_1", 400).await;
    let request = CallRequest::Message(walscope::codec::from_json(&m.input(), &json.to_string()).unwrap());

    let mut direct: Vec<Bytes> = Vec::new();
    let cancel = tokio_util::sync::CancellationToken::new();
    let s = call_server_stream(t.as_ref(), &m, &request, &CallOptions::default(), &cancel, |b| {
        direct.push(b);
        Ok(())
    })
    .await;
    assert!(matches!(s.end, StreamEnd::Completed) && direct.len() > 50, "{:?} {}", s.end, direct.len());

    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("stream.dump");
    let mut spec =
        CallStreamSpec::new(t.clone(), m.clone(), request.clone(), CallOptions::default(), out.clone());
    spec.ring = RingLimits { messages: 8, bytes: 1 << 20 };
    spec.sync = SyncPolicy { every_frames: 16, every: Duration::from_millis(50) };
    let handle = call_stream::spawn(spec);
    let (progress, ring) = (handle.progress.clone(), handle.ring.clone());
    let outcome = handle.wait().await.unwrap();
    assert!(matches!(outcome.summary.end, StreamEnd::Completed));
    assert_eq!(outcome.summary.count, direct.len() as u64);
    let mut expected = Vec::new();
    for b in &direct {
        write_frame(Framing::VarintDelimited, b, &mut expected);
    }
    assert_eq!(std::fs::read(&out).unwrap(), expected, "the dump holds exactly the bytes the server sent");
    let p = progress.borrow().clone();
    assert_eq!((p.count, p.state), (direct.len() as u64, CallStreamState::Done));

    let manifest = Manifest::load(&manifest_path(&out)).unwrap();
    assert!(manifest.complete);
    assert_eq!(manifest.frames, direct.len() as u64);
    assert_eq!(manifest.message_type, "milvus.proto.milvus.DumpMessagesResponse");
    assert_eq!(manifest.method.as_deref(), Some("milvus.proto.milvus.MilvusService.DumpMessages"));
    assert_eq!(manifest.source_endpoint.as_deref(), Some(demo.addr().to_string().as_str()));
    assert_eq!(manifest.request["pchannel"], "by-dev-rootcoord-dml_1");
    use base64::Engine;
    let sent = base64::engine::general_purpose::STANDARD.decode(manifest.request_base64.unwrap()).unwrap();
    assert_eq!(sent, request.to_bytes().to_vec());

    // Only the ring's bound stayed in memory: the newest 8.
    let kept = ring.snapshot();
    assert_eq!(kept.len(), 8);
    assert_eq!(kept.iter().map(|(_, b)| b.clone()).collect::<Vec<_>>(), direct[direct.len() - 8..].to_vec());
    assert_eq!(kept[7].0, direct.len() as u64 - 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_stream_leaves_a_valid_incomplete_dump() {
    let demo = MilvusDemo::start(MilvusDemoConfig::default()).await.unwrap();
    let set = SchemaSet::shared_builtin();
    let t = connect(&ConnectionProfile::plain("demo", TransportKind::Grpc, demo.addr().to_string()))
        .await
        .unwrap();
    let m = find_method(set.pool(), "MilvusService/DumpMessages").unwrap();
    let json = dump_request(t.as_ref(), "by-dev-rootcoord-dml_0", 0).await;
    let request = CallRequest::Message(walscope::codec::from_json(&m.input(), &json.to_string()).unwrap());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("endless.dump");
    let (tap, mut tapped) = tokio::sync::mpsc::channel(4);
    let mut spec = CallStreamSpec::new(t, m, request, CallOptions::default(), out.clone());
    spec.tap = Some(tap);
    let handle = call_stream::spawn(spec);
    // A slow reader holds the stream back; after 300 messages, cancel.
    let mut seen = 0;
    while let Some(_b) = tapped.recv().await {
        seen += 1;
        if seen == 300 {
            handle.cancel.cancel();
        }
    }
    let outcome = handle.wait().await.unwrap();
    assert!(matches!(outcome.summary.end, StreamEnd::Cancelled), "{:?}", outcome.summary.end);
    assert!(!outcome.manifest.complete);
    assert!(outcome.manifest.frames >= 300 && outcome.manifest.frames <= 310, "{}", outcome.manifest.frames);
    let d = DumpFile::open(&out, OpenOptions::default()).unwrap();
    d.wait_indexed();
    assert_eq!(d.frame_count() as u64, outcome.manifest.frames);
    assert_eq!(std::fs::metadata(&out).unwrap().len(), outcome.manifest.bytes);
}
