//! What a salvage of the demo's old WAL must hold, shared by the salvage tests: the demo's
//! settings, the expected bytes of an uninterrupted salvage, and the job's spec.

use std::path::Path;
use std::time::Duration;
use walscope::dump::framing::write_frame;
use walscope::dump::{Framing, SyncPolicy};
use walscope::net::grpc::GrpcSettings;
use walscope::salvage::job::SalvageSpec;
use walscope::schema::SchemaSet;
use walscope::sim::milvus::{Faults, MilvusDemo, MilvusDemoConfig, OLD_CLUSTER_ID};
use walscope::sim::{GeneratedMessage, WalGenConfig, WalGenerator};

pub const PCHANNEL: &str = "by-dev-rootcoord-dml_1";
pub const CHECKPOINT_INDEX: usize = 5;

/// The salvage fixtures' WAL: small messages.
pub fn wal() -> WalGenConfig {
    super::walgen::small_wal(11)
}

fn plain(m: &GeneratedMessage) -> bool {
    m.last_confirmed_id == m.message_id && m.type_name != "BeginTxn" && m.type_name != "CommitTxn"
}

/// The messages of a window of about `n` after the demo's checkpoint on [`PCHANNEL`] of the
/// WAL `wal` generates, ending on a whole transaction.
pub fn window_of(wal: WalGenConfig, n: usize) -> Vec<GeneratedMessage> {
    let set = SchemaSet::builtin();
    let all: Vec<GeneratedMessage> =
        WalGenerator::new(set.pool(), wal).filter(|m| m.pchannel == PCHANNEL).take(n + 200).collect();
    let ckpt = (CHECKPOINT_INDEX..).find(|&i| plain(&all[i])).expect("checkpoint");
    let after = &all[ckpt + 1..];
    let last =
        (n - 1..after.len()).find(|&i| plain(&after[i]) || after[i].type_name == "CommitTxn").expect("end");
    after[..=last].to_vec()
}

/// What a salvage of about `n` messages must hold, and the end timetick that bounds it: the
/// messages after the demo's checkpoint, ending on a whole transaction. Also the count.
pub fn expected(n: usize) -> (Vec<u8>, u64, usize) {
    let window = window_of(wal(), n);
    let mut bytes = Vec::new();
    for m in &window {
        write_frame(Framing::VarintDelimited, &m.response, &mut bytes);
    }
    (bytes, window.last().map_or(0, |m| m.timetick), window.len())
}

pub fn spec(addr: &str, out: &Path, end: u64, resume: bool, retries: u32) -> SalvageSpec {
    SalvageSpec {
        new_primary: GrpcSettings::new(addr),
        old_primary: GrpcSettings::new(addr),
        source_cluster_id: OLD_CLUSTER_ID.into(),
        pchannel: PCHANNEL.into(),
        out: out.to_path_buf(),
        end_timetick: end,
        resume,
        max_retries: retries,
        timeout: Duration::from_secs(30),
        sync: SyncPolicy { every_frames: 1000, every: Duration::from_secs(5) },
    }
}

pub async fn demo(faults: Faults) -> MilvusDemo {
    demo_at("127.0.0.1:0", faults).await
}

pub async fn demo_at(addr: &str, faults: Faults) -> MilvusDemo {
    let config = MilvusDemoConfig {
        addr: addr.parse().expect("address"),
        wal: wal(),
        checkpoint_index: CHECKPOINT_INDEX,
        faults,
        ..Default::default()
    };
    MilvusDemo::start(config).await.expect("demo starts")
}

/// A finished salvage of every pchannel of the pair into `folder`, through the library (the
/// reference the GUI tests compare with, or the folder they start from).
pub fn salvage_pair(
    pair: &walscope::sim::milvus::pair::MilvusPair,
    rt: &tokio::runtime::Runtime,
    folder: &Path,
    end: u64,
) {
    use walscope::net::profile::{ConnectionProfile, TransportKind};
    let p = |name: &str, addr: std::net::SocketAddr| {
        ConnectionProfile::plain(name, TransportKind::Grpc, addr.to_string())
    };
    let mut spec = walscope::salvage::set::SalvageSetSpec::new(
        p("new", pair.new_addr()),
        p("old", pair.old_addr()),
        OLD_CLUSTER_ID,
        walscope::sim::milvus::pair::MilvusPair::pchannels(),
        folder,
    );
    spec.end_timetick = Some(end);
    rt.block_on(async {
        let run = walscope::salvage::set::start(spec).await.expect("salvage starts");
        let (_, results) = run.wait().await;
        for (p, r) in results {
            r.unwrap_or_else(|e| panic!("{p}: {e}"));
        }
    });
}
