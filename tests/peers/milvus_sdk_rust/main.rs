//! walscope's test peer: what the official Milvus Rust SDK (`milvus-sdk-rust`, pinned in
//! Cargo.toml.in) reads from a Milvus, printed as JSON lines for tests/sdk_peer.rs to compare
//! with walscope's own reading. Built at test time outside walscope's workspace; never part of
//! walscope. Talks only to the URI it is given; writes only to stdout.
//!
//!     walscope-sdk-peer dump URI PCHANNEL MESSAGE_ID WAL_NAME START_TIMETICK END_TIMETICK
//!         `ClientV2::dump_messages` from that position, as an operator would call it (the
//!         SDK's defaults: `include_start_message` false). One line per message:
//!         {"id":..,"wal_name":..,"properties":{..},"payload":"<base64>"}, then {"end":N}.
//!     walscope-sdk-peer replicate-info URI SOURCE_CLUSTER_ID PCHANNEL
//!         `ClientV2::get_replicate_info`, one line: {"ok":{checkpoint, salvage_checkpoint}}
//!         or {"error":"<the SDK's error, as it displays it>"}.
//!
//! Exit status 0 when the call was made (its own failure is reported in the JSON), 2 on bad
//! arguments, 1 when the client cannot connect.

use base64::Engine as _;
use milvus::v2::prelude::*;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// A `common.WALName` value's name in the proto.
fn wal_name(name: &str) -> Option<WalName> {
    Some(match name {
        "RocksMQ" => WalName::RocksMq,
        "Pulsar" => WalName::Pulsar,
        "Kafka" => WalName::Kafka,
        "WoodPecker" => WalName::WoodPecker,
        "Test" => WalName::Test,
        _ => return None,
    })
}

/// The `common.WALName` value's name in the proto (the SDK's enum has other spellings).
fn wal_text(w: WalName) -> &'static str {
    match w {
        WalName::RocksMq => "RocksMQ",
        WalName::Pulsar => "Pulsar",
        WalName::Kafka => "Kafka",
        WalName::WoodPecker => "WoodPecker",
        WalName::Test => "Test",
        _ => "Unknown",
    }
}

fn checkpoint(c: &ReplicateCheckpoint) -> Value {
    json!({
        "cluster_id": c.get_cluster_id(),
        "pchannel": c.get_physical_channel(),
        "message_id": c.get_message_id().get_id(),
        "wal_name": wal_text(c.get_message_id().get_wal_name()),
        "time_tick": c.get_time_tick(),
    })
}

async fn client(uri: &str) -> ClientV2 {
    let config = ConnectConfig::new().uri(uri);
    match ClientV2::new(&config).await {
        Ok(c) => c,
        Err(e) => {
            eprintln!("cannot connect to {uri}: {e}");
            std::process::exit(1);
        }
    }
}

fn usage() -> ! {
    eprintln!(
        "usage: walscope-sdk-peer dump URI PCHANNEL MESSAGE_ID WAL_NAME START_TIMETICK END_TIMETICK\n\
         \x20      walscope-sdk-peer replicate-info URI SOURCE_CLUSTER_ID PCHANNEL"
    );
    std::process::exit(2)
}

async fn dump(args: &[String]) {
    let [uri, pchannel, id, wal, start, end] = args else { usage() };
    let (Some(wal), Ok(start), Ok(end)) = (wal_name(wal), start.parse(), end.parse()) else { usage() };
    let client = client(uri).await;
    let request = DumpMessagesRequest::builder()
        .physical_channel(pchannel.as_str())
        .start_message_id(ReplicateMessageId::new().id(id.as_str()).wal_name(wal))
        .start_time_tick(start)
        .end_time_tick(end)
        .build();
    let request = match request {
        Ok(r) => r,
        Err(e) => {
            println!("{}", json!({ "error": e.to_string() }));
            return;
        }
    };
    let mut count = 0u64;
    let result = client
        .dump_messages(request, |m| {
            // Sorted, so the line does not depend on the HashMap's order.
            let properties: BTreeMap<_, _> = m.get_properties().iter().collect();
            let line = json!({
                "id": m.get_message_id().get_id(),
                "wal_name": wal_text(m.get_message_id().get_wal_name()),
                "properties": properties,
                "payload": base64::engine::general_purpose::STANDARD.encode(m.get_payload()),
            });
            println!("{line}");
            count += 1;
            Ok(())
        })
        .await;
    match result {
        Ok(()) => println!("{}", json!({ "end": count })),
        Err(e) => println!("{}", json!({ "error": e.to_string(), "after": count })),
    }
}

async fn replicate_info(args: &[String]) {
    let [uri, cluster, pchannel] = args else { usage() };
    let client = client(uri).await;
    let request = GetReplicateInfoRequest::builder()
        .source_cluster_id(cluster.as_str())
        .target_physical_channel(pchannel.as_str())
        .build();
    let result = match request {
        Ok(r) => client.get_replicate_info(r).await,
        Err(e) => Err(e),
    };
    let line = match result {
        Ok(r) => json!({ "ok": {
            "checkpoint": checkpoint(r.checkpoint()),
            "salvage_checkpoint": r.salvage_checkpoint().map(checkpoint),
        }}),
        Err(e) => json!({ "error": e.to_string() }),
    };
    println!("{line}");
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("dump") => dump(&args[1..]).await,
        Some("replicate-info") => replicate_info(&args[1..]).await,
        _ => usage(),
    }
}
