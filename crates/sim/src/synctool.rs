//! A demo OpenMLDB SyncTool (brpc baidu_std and HTTP/JSON on one port) that follows the real
//! rules: mode required, SSD/HDD tables only, one task per table, a sub-task per partition with
//! a fresh token, AddSyncTask pushed to the DataCollector, the status lifecycle INIT → RUNNING →
//! SUCCESS / FAILED / REASSIGNING, SendData token and start-point checks, DeleteSyncTask,
//! `clear_all`, and `DelelteSyncTask` rejected as brpc-java rejects it (error 2001).

use super::synctool_state::{Reply, SyncToolState};
use crate::codec;
use crate::net::brpc::server::{BrpcServer, BrpcService, RpcFailure, RpcResult};
use crate::net::brpc::{BrpcTransport, DEFAULT_TIMEOUT};
use crate::schema::SchemaSet;
use bytes::Bytes;
use futures::future::BoxFuture;
use prost_reflect::DynamicMessage;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub const SERVICE: &str = "openmldb.datasync.SyncTool";

#[derive(Debug, Clone)]
pub struct SyncToolConfig {
    /// How often the background check runs (the real default is 10 s); a RUNNING sub-task
    /// without data for twice this long is reassigned.
    pub check_period: Duration,
    /// The DataCollector that AddSyncTask goes to.
    pub collector: String,
}

pub struct SyncToolSim {
    server: BrpcServer,
    state: Arc<Mutex<SyncToolState>>,
    checker: tokio::task::JoinHandle<()>,
}

impl SyncToolSim {
    pub async fn start(addr: SocketAddr, cfg: SyncToolConfig) -> std::io::Result<SyncToolSim> {
        let state = Arc::new(Mutex::new(SyncToolState::new(cfg.collector.clone())));
        let handler = Arc::new(Handler { state: state.clone() });
        let server = BrpcServer::bind(addr, handler).await?;
        if let Ok(mut s) = state.lock() {
            s.self_endpoint = server.addr().to_string();
        }
        let st = state.clone();
        let checker = tokio::spawn(async move {
            loop {
                tokio::time::sleep(cfg.check_period).await;
                let due = st.lock().map(|mut s| s.expire(cfg.check_period * 2)).unwrap_or_default();
                for request in due {
                    let ok = add_sync_task(&cfg.collector, &request).await.is_ok();
                    if let Ok(mut s) = st.lock() {
                        s.reassigned(&request, ok);
                    }
                }
            }
        });
        Ok(SyncToolSim { server, state, checker })
    }

    /// How many connections the SyncTool has accepted (brpc and HTTP).
    pub fn connections_accepted(&self) -> u64 {
        self.server.connections_accepted()
    }

    pub fn addr(&self) -> SocketAddr {
        self.server.addr()
    }

    /// As if the SyncTool process restarted: every sub-task recovered as RUNNING from its
    /// progress file, every `count` back to 0 (it lives in memory only).
    pub fn restart(&self) {
        if let Ok(mut s) = self.state.lock() {
            s.restart();
        }
    }
}

impl Drop for SyncToolSim {
    fn drop(&mut self) {
        self.checker.abort();
    }
}

/// SyncTool → DataCollector: AddSyncTask, with the short service name SyncTool really sends.
pub(super) async fn add_sync_task(collector: &str, request: &DynamicMessage) -> Result<(), String> {
    let t = BrpcTransport::new(collector.to_string());
    let p = t
        .call_raw("DataCollector", "AddSyncTask", &codec::encode(request), &[], Some(Duration::from_secs(5)))
        .await
        .map_err(|e| e.to_string())?;
    let set = SchemaSet::shared_builtin();
    let desc = set.message("openmldb.datasync.GeneralResponse").map_err(|e| e.to_string())?;
    let r = codec::decode(&desc, &p.message).map_err(|e| e.to_string())?.message;
    match r.get_field_by_name("code").and_then(|v| v.as_i32()) {
        Some(0) | None => Ok(()),
        Some(c) => Err(format!("AddSyncTask answered code {c}")),
    }
}

struct Handler {
    state: Arc<Mutex<SyncToolState>>,
}

/// brpc-java matches `lowercase(service).lowercase(method)`; the short name is not accepted.
fn route(service: &str, method: &str) -> Result<&'static str, RpcFailure> {
    let known = ["CreateSyncTask", "DeleteSyncTask", "TaskStatus", "SendData"];
    if service.eq_ignore_ascii_case(SERVICE)
        && let Some(m) = known.iter().find(|m| m.eq_ignore_ascii_case(method))
    {
        return Ok(m);
    }
    Err((2001, format!("Fail to find service={service}, method={method}")))
}

impl Handler {
    /// Runs one call on decoded input; `attachment` is None over HTTP.
    async fn dispatch(
        state: Arc<Mutex<SyncToolState>>,
        method: &'static str,
        request: DynamicMessage,
        attachment: Option<Bytes>,
    ) -> DynamicMessage {
        let reply = match state.lock() {
            Ok(mut s) => s.handle(method, &request, attachment.as_ref()),
            Err(_) => Reply::Done(super::synctool_state::general(-1, "internal state poisoned")),
        };
        match reply {
            Reply::Done(m) => m,
            Reply::Create { response, pushes } => {
                for req in &pushes {
                    if let Err(e) = add_sync_task(&collector_of(&state), req).await {
                        let table = request
                            .get_field_by_name("name")
                            .and_then(|v| v.as_str().map(str::to_string))
                            .unwrap_or_default();
                        if let Ok(mut s) = state.lock() {
                            s.abandon(req);
                        }
                        return super::synctool_state::general(
                            -1,
                            &format!("create sync task for {table} failed: AddSyncTask: {e}"),
                        );
                    }
                }
                response
            }
        }
    }
}

fn collector_of(state: &Arc<Mutex<SyncToolState>>) -> String {
    state.lock().map(|s| s.collector.clone()).unwrap_or_default()
}

fn input_type(method: &str) -> &'static str {
    match method {
        "CreateSyncTask" => "openmldb.datasync.CreateSyncTaskRequest",
        "DeleteSyncTask" => "openmldb.datasync.DeleteSyncTaskRequest",
        "TaskStatus" => "openmldb.datasync.TaskStatusRequest",
        _ => "openmldb.datasync.SendDataRequest",
    }
}

impl BrpcService for Handler {
    fn call(&self, service: String, method: String, message: Bytes, attachment: Bytes) -> RpcResult {
        let state = self.state.clone();
        Box::pin(async move {
            let m = route(&service, &method)?;
            let set = SchemaSet::shared_builtin();
            let desc = set.message(input_type(m)).map_err(|e| (2001, e.to_string()))?;
            let req =
                codec::decode(&desc, &message).map_err(|e| (1003, format!("bad {m} request: {e}")))?.message;
            let reply =
                tokio::time::timeout(DEFAULT_TIMEOUT, Handler::dispatch(state, m, req, Some(attachment)))
                    .await
                    .map_err(|_| (1008, "timed out".to_string()))?;
            Ok((codec::encode(&reply), Vec::new()))
        })
    }

    fn http_json(
        &self,
        service: String,
        method: String,
        json: String,
    ) -> Option<BoxFuture<'static, Result<String, (u16, String)>>> {
        let state = self.state.clone();
        Some(Box::pin(async move {
            let m = route(&service, &method).map_err(|(_, t)| (404, t))?;
            let set = SchemaSet::shared_builtin();
            let desc = set.message(input_type(m)).map_err(|e| (500, e.to_string()))?;
            let req = codec::from_json(&desc, &json).map_err(|e| (400, e.to_string()))?;
            let reply = Handler::dispatch(state, m, req, None).await;
            Ok(codec::to_json(&reply, false))
        }))
    }
}
