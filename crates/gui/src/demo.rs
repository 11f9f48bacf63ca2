//! `--demo`: the demo servers the window starts in-process on loopback (a Milvus, a failover
//! pair of an old and a new primary, a SyncTool and a DataCollector from `walscope-sim`), the
//! profiles that name them, and the faults the dashboard can be shown. Built with the `demo`
//! feature; without it, `--demo` says the build has no demo servers.
//!
//! Must never: save a demo profile, or start a server on anything but 127.0.0.1.

use crate::WalscopeApp;
use crate::outcome::Notice;

/// The running demo servers, kept alive as long as the window.
#[derive(Default)]
#[cfg_attr(not(feature = "demo"), allow(dead_code))]
pub struct DemoServers {
    #[cfg(feature = "demo")]
    pub(crate) datasync: Option<crate::sim::datasync::DatasyncDemo>,
    /// The demo Milvus.
    #[cfg(feature = "demo")]
    pub(crate) milvus: Option<crate::sim::milvus::MilvusDemo>,
    /// The demo's old and new primary after a forced failover (for the salvage pane).
    #[cfg(feature = "demo")]
    pub(crate) pair: Option<crate::sim::milvus_pair::MilvusPair>,
}

/// The old primary's cluster id in the demo failover pair.
#[cfg(feature = "demo")]
pub const OLD_CLUSTER_ID: &str = crate::sim::milvus::OLD_CLUSTER_ID;

#[cfg(feature = "demo")]
impl WalscopeApp {
    /// Starts the demo Milvus (gRPC; also an old and a new primary after a forced failover),
    /// SyncTool and DataCollector (brpc) on free loopback ports,
    /// watches the SyncTool and adds in-memory connection profiles for all three (never saved).
    /// Called at start-up (binding loopback ports), never from a frame.
    pub fn start_demo(&mut self) {
        let Some(rt) = self.runtime() else { return };
        let any = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
        let profile = crate::net::profile::ConnectionProfile::plain;
        use crate::net::profile::TransportKind;
        match rt.block_on(crate::sim::milvus::MilvusDemo::start(crate::sim::milvus::MilvusDemoConfig {
            addr: any,
            ..Default::default()
        })) {
            Ok(m) => {
                self.connections.demo.push(profile("demo-milvus", TransportKind::Grpc, m.addr().to_string()));
                self.demo.milvus = Some(m);
            }
            Err(e) => self.notice = Some(Notice::error(format!("cannot start the demo Milvus: {e}"))),
        }
        // A force-failover rehearsal, so salvage and replay both run on the demo.
        let rehearsal = crate::sim::milvus_pair::MilvusPairConfig { rehearsal: true, ..Default::default() };
        match rt.block_on(crate::sim::milvus_pair::MilvusPair::start(rehearsal)) {
            Ok(pair) => {
                self.connections.demo.push(profile(
                    "demo-old-primary",
                    TransportKind::Grpc,
                    pair.old_addr().to_string(),
                ));
                self.connections.demo.push(profile(
                    "demo-new-primary",
                    TransportKind::Grpc,
                    pair.new_addr().to_string(),
                ));
                self.demo.pair = Some(pair);
            }
            Err(e) => self.notice = Some(Notice::error(format!("cannot start the demo failover pair: {e}"))),
        }
        let started = rt.block_on(crate::sim::datasync::DatasyncDemo::start(
            any,
            any,
            std::time::Duration::from_secs(10),
            crate::sim::collector::CollectorConfig::default(),
        ));
        match started {
            Ok(d) => {
                self.connections.demo.push(profile(
                    "demo-synctool",
                    TransportKind::Brpc,
                    d.synctool.addr().to_string(),
                ));
                self.tasks.profile = "demo-synctool".into();
                self.tasks.db = "demo_db".into();
                self.tasks.table = "orders".into();
                self.tasks.mode = 2;
                self.tasks.dest = "/tmp/walscope-demo/orders".into();
                self.watch_tasks(crate::net_jobs::TASKS_DASHBOARD);
                self.show_tasks = true;
                self.connections.demo.push(profile(
                    "demo-collector",
                    TransportKind::Brpc,
                    d.collector.addr().to_string(),
                ));
                self.demo.datasync = Some(d);
            }
            Err(e) => self.notice = Some(Notice::error(format!("cannot start the demo servers: {e}"))),
        }
    }

    /// Whether `--demo` started the demo SyncTool (its faults can then be switched).
    pub fn has_demo(&self) -> bool {
        self.demo.datasync.is_some()
    }

    /// Switches a fault of the demo SyncTool's data (`--demo` only); the dashboard then shows
    /// the warning it causes.
    pub fn demo_fault(&mut self, f: crate::command::DemoFault) {
        use crate::command::DemoFault;
        let Some(d) = &self.demo.datasync else { return };
        let Some(tid) = crate::sim::datasync::DatasyncDemo::tid_of("demo_db", "orders") else { return };
        match f {
            DemoFault::StallWithHeartbeat => d.stall(tid, 0, true),
            DemoFault::StallSilent => d.stall(tid, 1, false),
            DemoFault::Fail => d.fail(tid, 1),
            DemoFault::Heal => d.clear_faults(),
            DemoFault::RestartSyncTool => d.restart_synctool(),
        }
        self.notice = Some(Notice::info(format!("demo: {f:?} on demo_db.orders")));
    }
}

#[cfg(not(feature = "demo"))]
impl WalscopeApp {
    /// This build has no demo servers (the `demo` feature): says so.
    pub fn start_demo(&mut self) {
        self.notice = Some(Notice::error(
            "this walscope was built without the demo servers (cargo feature `demo`)".to_string(),
        ));
    }

    /// Never: this build has no demo servers.
    pub fn has_demo(&self) -> bool {
        false
    }

    /// Nothing to switch: this build has no demo servers.
    pub fn demo_fault(&mut self, f: crate::command::DemoFault) {
        self.notice = Some(Notice::error(format!("{f:?}: this walscope was built without the demo servers")));
    }
}
