//! A demo OpenMLDB DataCollector (brpc): takes AddSyncTask, then pushes SendData batches to the
//! SyncTool named in the task, with rows in the attachment, the token it was given and a sync
//! point that moves from the snapshot into the binlog. Drops a sub-task when SyncTool asks
//! (`delete_task`) or when a mode-0 task has sent its last batch.
//!
//! Fault switches per sub-task ([`SubTaskFault`], set on the running collector): send only
//! zero-row heartbeats (SyncTool's lastUpdateTime moves, count and sync point do not), send
//! nothing (a sub-task that never got data stays INIT; a RUNNING one is reassigned again and
//! again), or send nothing and refuse the reassignment's AddSyncTask (SyncTool marks it FAILED).

use super::rng::SimRng;
use crate::codec;
use crate::net::brpc::BrpcTransport;
use crate::net::brpc::server::{BrpcServer, BrpcService, RpcResult};
use crate::schema::SchemaSet;
use bytes::Bytes;
use prost_reflect::{DynamicMessage, Value};
use serde_json::json;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Debug, Clone)]
pub struct CollectorConfig {
    /// Time between SendData batches of one sub-task.
    pub batch_interval: Duration,
    /// Batches after which a mode-0 (kFull) sub-task reports `finished`.
    pub full_mode_batches: u64,
}

impl Default for CollectorConfig {
    fn default() -> Self {
        CollectorConfig { batch_interval: Duration::from_millis(500), full_mode_batches: 6 }
    }
}

struct Task {
    request: DynamicMessage,
    sync_point: DynamicMessage,
    batches: u64,
    generation: u64,
}

#[derive(Default)]
struct State {
    tasks: HashMap<(u32, u32), Task>,
    generation: u64,
}

/// What a sub-task's collector does wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubTaskFault {
    /// Zero-row SendData batches only: a heartbeat, no data.
    Heartbeat,
    /// No SendData at all.
    Silent,
    /// No SendData, and AddSyncTask for it (a reassignment) refused.
    RefuseReassign,
}

/// Fault switches by (tid, pid), shared with every pump.
pub type FaultMap = Arc<Mutex<HashMap<(u32, u32), SubTaskFault>>>;

pub struct DataCollectorSim {
    server: BrpcServer,
    state: Arc<Mutex<State>>,
    /// While set, no SendData goes out (to let SyncTool see a stalled sub-task).
    pub paused: Arc<AtomicBool>,
    /// Per sub-task faults (see [`SubTaskFault`]).
    pub faults: FaultMap,
}

impl DataCollectorSim {
    pub async fn start(addr: SocketAddr, cfg: CollectorConfig) -> std::io::Result<DataCollectorSim> {
        let state: Arc<Mutex<State>> = Arc::default();
        let paused = Arc::new(AtomicBool::new(false));
        let faults: FaultMap = Arc::default();
        let handler =
            Arc::new(Handler { state: state.clone(), paused: paused.clone(), faults: faults.clone(), cfg });
        let server = BrpcServer::bind(addr, handler).await?;
        Ok(DataCollectorSim { server, state, paused, faults })
    }

    /// Sets (or with None clears) the fault of one sub-task.
    pub fn set_fault(&self, tid: u32, pid: u32, fault: Option<SubTaskFault>) {
        if let Ok(mut f) = self.faults.lock() {
            match fault {
                Some(x) => f.insert((tid, pid), x),
                None => f.remove(&(tid, pid)),
            };
        }
    }

    pub fn clear_faults(&self) {
        if let Ok(mut f) = self.faults.lock() {
            f.clear();
        }
    }

    pub fn addr(&self) -> SocketAddr {
        self.server.addr()
    }

    /// Sub-tasks this collector is working on.
    pub fn task_count(&self) -> usize {
        self.state.lock().map(|s| s.tasks.len()).unwrap_or(0)
    }
}

struct Handler {
    state: Arc<Mutex<State>>,
    paused: Arc<AtomicBool>,
    faults: FaultMap,
    cfg: CollectorConfig,
}

fn fault_of(faults: &FaultMap, key: (u32, u32)) -> Option<SubTaskFault> {
    faults.lock().ok().and_then(|f| f.get(&key).copied())
}

fn field_u32(m: &DynamicMessage, f: &str) -> u32 {
    m.get_field_by_name(f).and_then(|v| v.as_u32()).unwrap_or(0)
}

impl BrpcService for Handler {
    fn call(&self, service: String, method: String, message: Bytes, _attachment: Bytes) -> RpcResult {
        let (state, paused, cfg) = (self.state.clone(), self.paused.clone(), self.cfg.clone());
        let faults = self.faults.clone();
        Box::pin(async move {
            // C++ brpc accepts the full name or, for jprotobuf clients, the bare one.
            if service != "openmldb.datasync.DataCollector" && service != "DataCollector" {
                return Err((1001, format!("Fail to find service={service}")));
            }
            if method != "AddSyncTask" {
                return Err((1002, format!("Fail to find method={method}")));
            }
            let set = SchemaSet::shared_builtin();
            let desc =
                set.message("openmldb.datasync.AddSyncTaskRequest").map_err(|e| (2001, e.to_string()))?;
            let req = codec::decode(&desc, &message).map_err(|e| (1003, e.to_string()))?.message;
            let key = (field_u32(&req, "tid"), field_u32(&req, "pid"));
            if fault_of(&faults, key) == Some(SubTaskFault::RefuseReassign) {
                let msg = format!("demo fault: no tablet for tid {} pid {} on this host", key.0, key.1);
                return Ok((codec::encode(&general(-1, &msg)), Vec::new()));
            }
            let sync_point = req.get_field_by_name("sync_point").and_then(|v| v.as_message().cloned());
            let Some(sync_point) = sync_point else {
                return Ok((codec::encode(&general(-1, "sync_point is required")), Vec::new()));
            };
            let generation = {
                let mut s = state.lock().map_err(|_| (2001, "state poisoned".to_string()))?;
                s.generation += 1;
                let generation = s.generation;
                s.tasks.insert(key, Task { request: req, sync_point, batches: 0, generation });
                generation
            };
            tokio::spawn(pump(state, Switches { paused, faults }, cfg, key, generation));
            Ok((codec::encode(&general(0, "")), Vec::new()))
        })
    }
}

fn general(code: i32, msg: &str) -> DynamicMessage {
    let set = SchemaSet::shared_builtin();
    match set
        .message("openmldb.datasync.GeneralResponse")
        .map(|d| codec::from_json(&d, &json!({"code": code, "msg": msg}).to_string()))
    {
        Ok(Ok(m)) => m,
        _ => panic!("GeneralResponse is in the built-in schemas (build defect)"),
    }
}

/// The next sync point: two snapshot batches, then the binlog.
fn advance(current: &DynamicMessage, batches: u64, rows: u64) -> DynamicMessage {
    let set = SchemaSet::shared_builtin();
    let Ok(desc) = set.message("openmldb.datasync.SyncPoint") else { return current.clone() };
    let offset = current.get_field_by_name("offset").and_then(|v| v.as_u64()).unwrap_or(1000);
    let j = if batches < 2 {
        json!({"type": "kSNAPSHOT", "pk": format!("key{}", (batches + 1) * 100), "ts": (1_795_997_520_000u64 + batches).to_string()})
    } else {
        json!({"type": "kBINLOG", "offset": (offset + rows).to_string()})
    };
    codec::from_json(&desc, &j.to_string()).unwrap_or_else(|_| current.clone())
}

/// What a pump checks before each batch.
struct Switches {
    paused: Arc<AtomicBool>,
    faults: FaultMap,
}

async fn pump(
    state: Arc<Mutex<State>>,
    switches: Switches,
    cfg: CollectorConfig,
    key: (u32, u32),
    generation: u64,
) {
    let mut rng = SimRng::new(u64::from(key.0) << 32 | u64::from(key.1));
    let mut transport: Option<(String, BrpcTransport)> = None;
    let Some(send_desc) = SchemaSet::shared_builtin().message("openmldb.datasync.SendDataRequest").ok()
    else {
        return;
    };
    let Some(resp_desc) = SchemaSet::shared_builtin().message("openmldb.datasync.SendDataResponse").ok()
    else {
        return;
    };
    loop {
        tokio::time::sleep(cfg.batch_interval).await;
        let fault = fault_of(&switches.faults, key);
        if switches.paused.load(Ordering::Relaxed)
            || matches!(fault, Some(SubTaskFault::Silent | SubTaskFault::RefuseReassign))
        {
            continue;
        }
        let heartbeat = fault == Some(SubTaskFault::Heartbeat);
        let Some((req, start, batches)) = state.lock().ok().and_then(|s| {
            s.tasks
                .get(&key)
                .filter(|t| t.generation == generation)
                .map(|t| (t.request.clone(), t.sync_point.clone(), t.batches))
        }) else {
            return;
        };
        let rows = if heartbeat { 0 } else { rng.range(5, 50) };
        let next = if heartbeat { start.clone() } else { advance(&start, batches, rows) };
        let mode = req.get_field_by_name("mode").and_then(|v| v.as_enum_number()).unwrap_or(0);
        let finished = !heartbeat && mode == 0 && batches + 1 >= cfg.full_mode_batches;
        let mut send = DynamicMessage::new(send_desc.clone());
        send.set_field_by_name("tid", Value::U32(key.0));
        send.set_field_by_name("pid", Value::U32(key.1));
        send.set_field_by_name("start_point", Value::Message(start));
        send.set_field_by_name("next_point", Value::Message(next.clone()));
        send.set_field_by_name("count", Value::U64(rows));
        send.set_field_by_name("finished", Value::Bool(finished));
        if let Some(t) = req.get_field_by_name("token") {
            send.set_field_by_name("token", t.into_owned());
        }
        let dest = req
            .get_field_by_name("des_endpoint")
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        if transport.as_ref().is_none_or(|(d, _)| *d != dest) {
            transport = Some((dest.clone(), BrpcTransport::new(dest.clone())));
        }
        let Some((_, t)) = transport.as_ref() else { return };
        let rows_bytes = rng.bytes(rows as usize * 16);
        let reply = t
            .call_raw(
                "openmldb.datasync.SyncTool",
                "SendData",
                &codec::encode(&send),
                &rows_bytes,
                Some(Duration::from_secs(5)),
            )
            .await;
        let Ok(p) = reply else { continue };
        let Ok(r) = codec::decode(&resp_desc, &p.message).map(|d| d.message) else { continue };
        let code = r
            .get_field_by_name("response")
            .and_then(|v| v.as_message().and_then(|m| m.get_field_by_name("code")).and_then(|c| c.as_i32()))
            .unwrap_or(-1);
        let delete = r.get_field_by_name("delete_task").and_then(|v| v.as_bool()) == Some(true);
        let Ok(mut s) = state.lock() else { return };
        if delete || (code == 0 && finished) {
            if s.tasks.get(&key).is_some_and(|t| t.generation == generation) {
                s.tasks.remove(&key);
            }
            return;
        }
        if code == 0
            && !heartbeat
            && let Some(task) = s.tasks.get_mut(&key).filter(|t| t.generation == generation)
        {
            task.sync_point = next;
            task.batches += 1;
        }
    }
}
