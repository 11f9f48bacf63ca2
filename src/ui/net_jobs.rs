//! The app's handlers for the commands that reach servers: reading profiles.json, checking a
//! profile, polling a SyncTool and the dashboard's calls. Each starts a job; what a job finds
//! goes back to the panel that asked through [`super::command`].
//!
//! Must never: run in a panel, or wait in a frame.

use super::WalscopeApp;
use super::jobs::JobOwner;
use super::outcome::{JobError, JobOutput};
use crate::net::profile::{ConnectionProfile, ProfileStore};
use std::time::Duration;

/// The dashboard's id while there is one dashboard.
pub const TASKS_DASHBOARD: u64 = 0;

impl WalscopeApp {
    pub(super) fn load_profiles(&mut self) {
        self.connections.loading = true;
        self.jobs.spawn_blocking("reading connection profiles", JobOwner::Connections, |_| {
            Ok(JobOutput::Profiles(ProfileStore::user().load()?))
        });
    }

    pub(super) fn check_profile(&mut self, profile: ConnectionProfile) {
        let label = format!("checking {}", profile.name);
        self.jobs.spawn(label, JobOwner::Connections, move |_| async move {
            let started = std::time::Instant::now();
            let outcome = match tokio::time::timeout(Duration::from_secs(10), check(&profile)).await {
                Ok(Ok(what)) => Ok(format!("{what} in {} ms", started.elapsed().as_millis())),
                Ok(Err(e)) => Err(e),
                Err(_) => Err("no answer within 10 s; is the server up and the port right?".into()),
            };
            Ok(JobOutput::Check { profile: profile.name.clone(), outcome })
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

/// One harmless call; what the server said, in words.
async fn check(p: &ConnectionProfile) -> Result<String, String> {
    use crate::net::Transport;
    use crate::net::profile::TransportKind;
    let opts = crate::net::CallOptions { timeout: Some(Duration::from_secs(5)), ..Default::default() };
    match p.transport {
        TransportKind::Grpc => {
            let settings = p.grpc_settings()?;
            let t = crate::net::grpc::GrpcTransport::connect(&settings).await.map_err(|e| e.to_string())?;
            let opts = crate::net::CallOptions { metadata: settings.metadata(), ..opts };
            let m = crate::schema::SchemaSet::shared_builtin()
                .pool()
                .get_service_by_name("milvus.proto.milvus.MilvusService")
                .and_then(|s| s.methods().find(|m| m.name() == "GetVersion"))
                .ok_or("the built-in schemas lack MilvusService/GetVersion")?;
            let req = prost_reflect::DynamicMessage::new(m.input());
            let r = t.call_unary(&m, &req, &opts).await.map_err(|e| e.to_string())?;
            let version = r.message.get_field_by_name("version").and_then(|v| v.as_str().map(str::to_string));
            Ok(format!("Milvus {} answered GetVersion", version.unwrap_or_else(|| "(no version)".into())))
        }
        TransportKind::Brpc | TransportKind::Http => {
            let t: Box<dyn Transport> = if p.transport == TransportKind::Brpc {
                Box::new(crate::net::brpc::BrpcTransport::new(p.endpoint.clone()))
            } else {
                Box::new(crate::net::http_json::HttpJsonTransport::new(p.endpoint.clone()))
            };
            let m = crate::datasync::synctool_method("TaskStatus")?;
            let req = prost_reflect::DynamicMessage::new(m.input());
            match t.call_unary(&m, &req, &opts).await {
                Ok(r) => {
                    let n = r.message.get_field_by_name("task").and_then(|v| v.as_list().map(<[_]>::len));
                    Ok(format!("SyncTool answered TaskStatus: {} sub-task(s)", n.unwrap_or(0)))
                }
                // A brpc server without the SyncTool service (a DataCollector) still answered.
                Err(crate::net::NetError::Status { numeric: 1001 | 1002, message, .. }) => Ok(format!(
                    "brpc server answered, but it is not a SyncTool (a DataCollector?): {message}"
                )),
                Err(e) => Err(e.to_string()),
            }
        }
    }
}
