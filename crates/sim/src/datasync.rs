//! The OpenMLDB demo pair: a SyncTool and a DataCollector on loopback, wired to each other, so
//! the sync-task commands and panels work with no cluster around.
//!
//! Fault switches on the running pair, for tests and the app's demo: stall a sub-task with
//! heartbeats (lastUpdateTime moves, count and sync point do not) or without (a RUNNING one is
//! reassigned again and again; one set before its first batch stays INIT), fail one (its
//! reassignment is refused, so SyncTool marks it FAILED), and restart SyncTool (every count back
//! to 0, every sub-task RUNNING). Must never: listen beyond the addresses given.

use super::collector::{CollectorConfig, DataCollectorSim, SubTaskFault};
use super::synctool::{SyncToolConfig, SyncToolSim};
pub use super::synctool_state::{DEMO_TABLES, DemoTable};
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

    /// The demo table `db.name`'s tid (its sub-tasks are its partitions 0..n).
    pub fn tid_of(db: &str, name: &str) -> Option<u32> {
        DEMO_TABLES.iter().find(|t| t.db == db && t.name == name).map(|t| t.tid)
    }

    /// Stops data for one sub-task. With `heartbeat`, its collector still sends zero-row
    /// batches (lastUpdateTime moves; count and sync point stand still); without, it sends
    /// nothing: a sub-task that has had no data yet stays INIT (SyncTool never checks INIT), a
    /// RUNNING one is reassigned after 2 × check_period, again and again.
    pub fn stall(&self, tid: u32, pid: u32, heartbeat: bool) {
        let fault = if heartbeat { SubTaskFault::Heartbeat } else { SubTaskFault::Silent };
        self.collector.set_fault(tid, pid, Some(fault));
    }

    /// Makes one sub-task fail the real way: its collector goes quiet and refuses the
    /// reassignment, so after 2 × check_period SyncTool marks it FAILED (never retried).
    pub fn fail(&self, tid: u32, pid: u32) {
        self.collector.set_fault(tid, pid, Some(SubTaskFault::RefuseReassign));
    }

    /// Lets a stalled or failing sub-task's collector work normally again (a FAILED sub-task
    /// stays FAILED until SyncTool restarts or the task is re-created, as in OpenMLDB).
    pub fn heal(&self, tid: u32, pid: u32) {
        self.collector.set_fault(tid, pid, None);
    }

    pub fn clear_faults(&self) {
        self.collector.clear_faults();
    }

    /// As if SyncTool restarted: counts back to 0, every sub-task recovered as RUNNING.
    pub fn restart_synctool(&self) {
        self.synctool.restart();
    }
}
