//! The app's handlers for the dashboard's commands and reading profiles.json: polling a
//! SyncTool and the dashboard's calls. Each starts a job; what a job finds
//! goes back to the panel that asked through [`super::command`].
//!
//! Must never: run in a panel, or wait in a frame.

use super::WalscopeApp;
use super::jobs::JobOwner;
use super::outcome::{JobError, JobOutput};
use std::time::Duration;

/// The dashboard's id while there is one dashboard.
pub const TASKS_DASHBOARD: u64 = 0;

impl WalscopeApp {
    pub(super) fn load_profiles(&mut self) {
        self.connections.loading = true;
        let store = self.profile_store();
        self.jobs.spawn_blocking("reading connection profiles", JobOwner::Connections, move |_| {
            Ok(JobOutput::Profiles(store.load()?))
        });
    }

    pub(super) fn watch_tasks(&mut self) {
        let Some(rt) = self.runtime() else { return };
        let endpoint = self.tasks.endpoint.trim().to_string();
        let transport = tasks_transport(&self.tasks);
        let poller = crate::jobs::task_poll::TaskPoller::spawn(&rt, transport, Duration::from_secs(2), 30);
        let board = poller.subscribe();
        let owner = JobOwner::Tasks(TASKS_DASHBOARD);
        self.jobs.cancel_owner(&owner);
        let probe = Box::new(move || {
            let b = board.borrow();
            let text = format!("watching {endpoint}: poll {}", b.polls);
            (super::jobs::JobProgress { fraction: None, text }, board.has_changed().is_err())
        });
        let stop = poller.canceller();
        self.jobs.watch("sync-task poller", owner, Duration::from_millis(500), probe, Box::new(stop));
        self.tasks.poller = Some(poller);
    }

    pub(super) fn task_call(&mut self, method: &'static str, request: serde_json::Value) {
        let t = tasks_transport(&self.tasks);
        self.jobs.spawn(method, JobOwner::Tasks(TASKS_DASHBOARD), move |_| async move {
            let m = crate::datasync::synctool_method(method).map_err(JobError::Other)?;
            let req = crate::codec::from_json(&m.input(), &request.to_string())
                .map_err(|e| JobError::Other(e.to_string()))?;
            let opts =
                crate::net::CallOptions { timeout: Some(Duration::from_secs(10)), ..Default::default() };
            let r = t.call_unary(&m, &req, &opts).await?;
            crate::datasync::general_result(&r.message)
                .map(|()| JobOutput::Done(format!("{method}: done")))
                .map_err(|(code, msg)| JobError::Other(format!("{method} failed: code {code}: {msg}")))
        });
    }
}

/// The dashboard's SyncTool.
fn tasks_transport(st: &super::panels::tasks::TasksState) -> std::sync::Arc<dyn crate::net::Transport> {
    let endpoint = st.endpoint.trim().to_string();
    if st.http {
        std::sync::Arc::new(crate::net::http_json::HttpJsonTransport::new(endpoint))
    } else {
        std::sync::Arc::new(crate::net::brpc::BrpcTransport::new(endpoint))
    }
}
