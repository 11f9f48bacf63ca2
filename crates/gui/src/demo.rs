//! `--demo`: the demo servers the window starts in-process on loopback (a Milvus, a failover
//! pair of an old and a new primary, a SyncTool and a DataCollector from `walscope-sim`), the
//! profiles that name them, and the faults the dashboard can be shown. Built with the `demo`
//! feature; without it, `--demo` says the build has no demo servers.
//!
//! Must never: save a demo profile, or start a server on anything but 127.0.0.1.

use crate::WalscopeApp;
use crate::panes::outcome::Notice;

/// The running demo servers, kept alive as long as the window.
#[derive(Default)]
#[cfg_attr(not(feature = "demo"), allow(dead_code))]
pub struct DemoServers {
    /// The demo Milvus failover pair, SyncTool and DataCollector.
    #[cfg(feature = "demo")]
    pub(crate) running: Option<crate::sim::demo::Demo>,
}

/// The old primary's cluster id in the demo failover pair.
#[cfg(feature = "demo")]
pub const OLD_CLUSTER_ID: &str = crate::sim::milvus::OLD_CLUSTER_ID;

#[cfg(feature = "demo")]
impl WalscopeApp {
    /// Starts the demo (the Milvus failover pair over gRPC, SyncTool and DataCollector over
    /// brpc: [`crate::sim::demo::Demo::start`]) on free loopback ports, watches the SyncTool and
    /// adds in-memory connection profiles for them (never saved).
    /// Called at start-up (binding loopback ports), never from a frame.
    pub fn start_demo(&mut self) {
        let Some(rt) = self.runtime() else { return };
        match rt.block_on(crate::sim::demo::Demo::start(Default::default())) {
            Ok(demo) => {
                self.connections.demo.extend(demo.profiles());
                self.tasks.profile = "demo-synctool".into();
                self.tasks.db = "demo_db".into();
                self.tasks.table = "orders".into();
                self.tasks.mode = 2;
                self.tasks.dest = "/tmp/walscope-demo/orders".into();
                self.watch_tasks(crate::panes::tasks::TASKS_DASHBOARD);
                self.show_tasks = true;
                self.demo.running = Some(demo);
            }
            Err(e) => self.notice = Some(Notice::error(e.to_string())),
        }
    }

    /// Whether `--demo` started the demo SyncTool (its faults can then be switched).
    pub fn has_demo(&self) -> bool {
        self.demo.running.is_some()
    }

    /// Switches a fault of the demo SyncTool's data (`--demo` only); the dashboard then shows
    /// the warning it causes.
    pub fn demo_fault(&mut self, f: crate::panes::command::DemoFault) {
        use crate::panes::command::DemoFault;
        let Some(d) = self.demo.running.as_ref().map(|demo| &demo.datasync) else { return };
        let Some(tid) = crate::sim::datasync::DatasyncDemo::tid_of("demo_db", "orders") else { return };
        match f {
            DemoFault::StallWithHeartbeat => d.stall(tid, 0, true),
            DemoFault::StallSilent => d.stall(tid, 1, false),
            DemoFault::Fail => d.fail(tid, 1),
            DemoFault::Heal => d.clear_faults(),
            DemoFault::RestartSyncTool => d.restart_synctool(),
        }
        self.notice = Some(Notice::info(format!("demo: {} on demo_db.orders", f.words())));
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
    pub fn demo_fault(&mut self, f: crate::panes::command::DemoFault) {
        self.notice =
            Some(Notice::error(format!("{}: this walscope was built without the demo servers", f.words())));
    }
}
