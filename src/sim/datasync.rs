//! The OpenMLDB demo pair: a SyncTool and a DataCollector on loopback, wired to each other, so
//! the sync-task commands and panels work with no cluster around.

use super::collector::{CollectorConfig, DataCollectorSim};
use super::synctool::{SyncToolConfig, SyncToolSim};
use std::net::SocketAddr;
use std::time::Duration;

pub struct DatasyncDemo {
    pub collector: DataCollectorSim,
    pub synctool: SyncToolSim,
}

impl DatasyncDemo {
    /// Starts the DataCollector, then the SyncTool that assigns work to it. Port 0 picks free
    /// ports; `addr()` on each tells which.
    pub async fn start(
        synctool: SocketAddr,
        collector: SocketAddr,
        check_period: Duration,
        collector_cfg: CollectorConfig,
    ) -> std::io::Result<DatasyncDemo> {
        let collector = DataCollectorSim::start(collector, collector_cfg).await?;
        let cfg = SyncToolConfig { check_period, collector: collector.addr().to_string() };
        let synctool = SyncToolSim::start(synctool, cfg).await?;
        Ok(DatasyncDemo { collector, synctool })
    }
}
