//! The whole demo, started one way for `walscope demo` and the app's `--demo`: a Milvus failover
//! pair as a rehearsal ([`MilvusPair`]: the old primary holds the tail to salvage, the new one,
//! force-promoted, is *the* demo Milvus and the target of a replay), and an OpenMLDB SyncTool
//! with its DataCollector ([`DatasyncDemo`]), each on its loopback address; with the profiles
//! that name them.
//!
//! Must never: listen beyond the addresses given, or leave a server running when another
//! failed to start (a demo starts whole or not at all).

use crate::collector::CollectorConfig;
use crate::datasync::DatasyncDemo;
use crate::milvus::DemoError;
use crate::milvus::pair::{MilvusPair, MilvusPairConfig};
use crate::net::profile::{ConnectionProfile, TransportKind};
use std::net::SocketAddr;
use std::time::Duration;

/// Where the demo's servers listen (port 0: any free port).
#[derive(Debug, Clone)]
pub struct DemoConfig {
    /// The demo Milvus: the new primary of the failover pair.
    pub milvus: SocketAddr,
    /// The old primary of the failover pair.
    pub old_milvus: SocketAddr,
    /// The SyncTool (brpc and HTTP/JSON).
    pub synctool: SocketAddr,
    /// The DataCollector (brpc).
    pub collector: SocketAddr,
    /// How often the SyncTool checks its sub-tasks.
    pub check_period: Duration,
    /// Payloads longer than this are written to the pair's WALs as chunks, as upstream splits
    /// payloads too large for its WAL backend ([`crate::WalGenConfig::chunk_bytes`]). None: off.
    pub chunk_bytes: Option<usize>,
}

impl Default for DemoConfig {
    fn default() -> Self {
        let any = SocketAddr::from(([127, 0, 0, 1], 0));
        DemoConfig {
            milvus: any,
            old_milvus: any,
            synctool: any,
            collector: any,
            check_period: Duration::from_secs(10),
            chunk_bytes: None,
        }
    }
}

/// Which part of the demo could not start.
#[derive(Debug, thiserror::Error)]
pub enum DemoStartError {
    #[error("cannot start the demo Milvus pair: {0}")]
    Milvus(#[source] DemoError),
    #[error("cannot start the demo SyncTool/DataCollector: {0}")]
    Datasync(#[source] std::io::Error),
}

/// The running demo; dropping it stops every server.
pub struct Demo {
    pub pair: MilvusPair,
    pub datasync: DatasyncDemo,
}

impl Demo {
    /// Starts the failover pair, then the SyncTool and its DataCollector, on the current tokio
    /// runtime.
    pub async fn start(config: DemoConfig) -> Result<Demo, DemoStartError> {
        // A whole force-failover rehearsal: the new primary holds what was replicated and writes
        // of its own, the old one the tail to salvage and replay.
        let pair = MilvusPair::start(MilvusPairConfig {
            new_addr: config.milvus,
            old_addr: config.old_milvus,
            rehearsal: true,
            // Each cluster's pchannels named after its id, as upstream names them.
            distinct_pchannels: true,
            wal: crate::WalGenConfig { chunk_bytes: config.chunk_bytes, ..Default::default() },
            ..Default::default()
        })
        .await
        .map_err(DemoStartError::Milvus)?;
        let datasync = DatasyncDemo::start(
            config.synctool,
            config.collector,
            config.check_period,
            CollectorConfig::default(),
        )
        .await
        .map_err(DemoStartError::Datasync)?;
        Ok(Demo { pair, datasync })
    }

    /// The demo Milvus (the pair's new primary).
    pub fn milvus_addr(&self) -> SocketAddr {
        self.pair.new_addr()
    }

    pub fn old_milvus_addr(&self) -> SocketAddr {
        self.pair.old_addr()
    }

    pub fn synctool_addr(&self) -> SocketAddr {
        self.datasync.synctool.addr()
    }

    pub fn collector_addr(&self) -> SocketAddr {
        self.datasync.collector.addr()
    }

    /// The profiles that name the demo's servers: `demo-milvus`, `demo-old-primary`,
    /// `demo-new-primary` (the demo Milvus again, under the name a salvage or a replay
    /// expects), `demo-synctool` and `demo-collector`.
    pub fn profiles(&self) -> Vec<ConnectionProfile> {
        let profile =
            |name: &str, kind, addr: SocketAddr| ConnectionProfile::plain(name, kind, addr.to_string());
        vec![
            profile("demo-milvus", TransportKind::Grpc, self.milvus_addr()),
            profile("demo-old-primary", TransportKind::Grpc, self.old_milvus_addr()),
            profile("demo-new-primary", TransportKind::Grpc, self.milvus_addr()),
            profile("demo-synctool", TransportKind::Brpc, self.synctool_addr()),
            profile("demo-collector", TransportKind::Brpc, self.collector_addr()),
        ]
    }

    /// What `walscope demo` prints: every server and its address, the cluster ids a salvage
    /// needs, and the tables to sync.
    pub fn banner(&self) -> String {
        use crate::milvus::{NEW_CLUSTER_ID, OLD_CLUSTER_ID};
        format!(
            "demo Milvus (gRPC)           {}\n  old cluster id for salvage: {OLD_CLUSTER_ID}\n\
             failover old primary (gRPC)  {}\n  cluster {OLD_CLUSTER_ID}; the new primary is the Milvus above, cluster {NEW_CLUSTER_ID}, force-promoted from it\n\
             demo SyncTool (brpc + HTTP)  {}\ndemo DataCollector (brpc)    {}\n\
             tables to sync: demo_db.orders, demo_db.users, demo_db.clicks (demo_db.cache is memory storage)\n",
            self.milvus_addr(),
            self.old_milvus_addr(),
            self.synctool_addr(),
            self.collector_addr()
        )
    }
}
