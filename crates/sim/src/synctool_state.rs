//! The demo SyncTool's bookkeeping, kept synchronous so every rule is a plain function call.
//! Also the demo cluster's tables ([`DEMO_TABLES`]).

use super::rng::SimRng;
use crate::codec;
use crate::schema::SchemaSet;
use bytes::Bytes;
use prost_reflect::{DynamicMessage, Value};
use serde_json::json;
use std::collections::BTreeMap;
use std::time::Duration;

/// A table the demo cluster knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DemoTable {
    pub db: &'static str,
    pub name: &'static str,
    pub tid: u32,
    pub partitions: u32,
    pub storage: &'static str,
}

/// The demo cluster's tables (only SSD and HDD tables can be synced).
pub const DEMO_TABLES: [DemoTable; 4] = [
    DemoTable { db: "demo_db", name: "orders", tid: 2, partitions: 2, storage: "SSD" },
    DemoTable { db: "demo_db", name: "users", tid: 3, partitions: 1, storage: "HDD" },
    DemoTable { db: "demo_db", name: "clicks", tid: 5, partitions: 4, storage: "SSD" },
    DemoTable { db: "demo_db", name: "cache", tid: 4, partitions: 1, storage: "memory" },
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Init,
    Running,
    Success,
    Failed,
    Reassigning,
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Status::Init => "INIT",
            Status::Running => "RUNNING",
            Status::Success => "SUCCESS",
            Status::Failed => "FAILED",
            Status::Reassigning => "REASSIGNING",
        }
    }
}

struct SubTask {
    mode: i32,
    start_ts: Option<u64>,
    sync_point: DynamicMessage,
    token: String,
    dest: String,
    count: u64,
    status: Status,
    last_update_ms: u64,
}

pub(super) enum Reply {
    Done(DynamicMessage),
    /// CreateSyncTask accepted locally; each AddSyncTaskRequest must reach the collector.
    Create {
        response: DynamicMessage,
        pushes: Vec<DynamicMessage>,
    },
}

pub struct SyncToolState {
    pub collector: String,
    pub self_endpoint: String,
    tasks: BTreeMap<(u32, u32), SubTask>,
    rng: SimRng,
}

fn build(name: &str, v: serde_json::Value) -> DynamicMessage {
    let set = SchemaSet::shared_builtin();
    match set.message(name).map(|d| codec::from_json(&d, &v.to_string())) {
        Ok(Ok(m)) => m,
        other => panic!("demo SyncTool builds an invalid {name}: {:?}", other.err()),
    }
}

pub(super) fn general(code: i32, msg: &str) -> DynamicMessage {
    if msg.is_empty() {
        build("openmldb.datasync.GeneralResponse", json!({"code": code}))
    } else {
        build("openmldb.datasync.GeneralResponse", json!({"code": code, "msg": msg}))
    }
}

fn text(m: &DynamicMessage, f: &str) -> String {
    m.get_field_by_name(f).and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
}

fn num(m: &DynamicMessage, f: &str) -> Option<u64> {
    if !m.has_field_by_name(f) {
        return None;
    }
    m.get_field_by_name(f)
        .and_then(|v| v.as_u64().or(v.as_u32().map(u64::from)).or(v.as_enum_number().map(|n| n as u64)))
}

impl SyncToolState {
    pub fn new(collector: String) -> SyncToolState {
        SyncToolState {
            collector,
            self_endpoint: String::new(),
            tasks: BTreeMap::new(),
            rng: SimRng::new(0x5ca1),
        }
    }

    fn token(&mut self) -> String {
        let h: String = (0..32).map(|_| format!("{:x}", self.rng.range(0, 15))).collect();
        format!("{}-{}-{}-{}-{}", &h[..8], &h[8..12], &h[12..16], &h[16..20], &h[20..])
    }

    fn progress(&self, tid: u32, pid: u32, t: &SubTask) -> DynamicMessage {
        let mut m = build(
            "openmldb.datasync.AddSyncTaskRequest",
            json!({"tid": tid, "pid": pid, "mode": t.mode, "tablet_endpoint": "127.0.0.1:10921",
                   "des_endpoint": self.self_endpoint, "token": t.token, "dest": t.dest}),
        );
        m.set_field_by_name("sync_point", Value::Message(t.sync_point.clone()));
        if let Some(ts) = t.start_ts {
            m.set_field_by_name("start_ts", Value::U64(ts));
        }
        m
    }

    pub(super) fn handle(&mut self, method: &str, req: &DynamicMessage, attachment: Option<&Bytes>) -> Reply {
        match method {
            "CreateSyncTask" => self.create(req),
            "DeleteSyncTask" => Reply::Done(self.delete(req)),
            "TaskStatus" => Reply::Done(self.status(req)),
            _ => Reply::Done(self.send_data(req, attachment)),
        }
    }

    fn table(db: &str, name: &str) -> Option<&'static DemoTable> {
        DEMO_TABLES.iter().find(|t| t.db == db && t.name == name)
    }

    fn create(&mut self, req: &DynamicMessage) -> Reply {
        let (db, name) = (text(req, "db"), text(req, "name"));
        let Some(mode) = num(req, "mode") else { return Reply::Done(general(-1, "mode is required")) };
        let Some(table) = Self::table(&db, &name) else {
            return Reply::Done(general(-1, &format!("table {db}.{name} not found")));
        };
        if table.storage != "SSD" && table.storage != "HDD" {
            return Reply::Done(general(-1, "only SSD and HDD are supported"));
        }
        if self.tasks.keys().any(|(tid, _)| *tid == table.tid) {
            return Reply::Done(general(-1, "sync task already exists(creating or created)"));
        }
        let mut pushes = Vec::new();
        for pid in 0..table.partitions {
            let t = SubTask {
                mode: mode as i32,
                start_ts: num(req, "start_ts"),
                sync_point: build("openmldb.datasync.SyncPoint", json!({"type": "kSNAPSHOT"})),
                token: self.token(),
                dest: text(req, "dest"),
                count: 0,
                status: Status::Init,
                last_update_ms: crate::time::now_ms(),
            };
            pushes.push(self.progress(table.tid, pid, &t));
            self.tasks.insert((table.tid, pid), t);
        }
        Reply::Create { response: general(0, ""), pushes }
    }

    /// Undo a create whose AddSyncTask failed.
    pub(super) fn abandon(&mut self, req: &DynamicMessage) {
        let tid = num(req, "tid").unwrap_or(0) as u32;
        self.tasks.retain(|(t, _), _| *t != tid);
    }

    fn delete(&mut self, req: &DynamicMessage) -> DynamicMessage {
        let (db, name) = (text(req, "db"), text(req, "name"));
        let Some(table) = Self::table(&db, &name) else {
            return general(-1, &format!("table {db}.{name} not found"));
        };
        let before = self.tasks.len();
        self.tasks.retain(|(t, _), _| *t != table.tid);
        if self.tasks.len() == before {
            return general(-1, &format!("no sync task for {db}.{name}"));
        }
        general(0, "")
    }

    fn status(&mut self, req: &DynamicMessage) -> DynamicMessage {
        if req.get_field_by_name("clear_all").and_then(|v| v.as_bool()) == Some(true) {
            self.tasks.clear();
        }
        let mut tasks = Vec::new();
        let mut info = Vec::new();
        for ((tid, pid), t) in &self.tasks {
            let mut task = build(
                "openmldb.datasync.Task",
                json!({"data_collector": self.collector, "count": t.count.to_string(), "status": t.status.name()}),
            );
            task.set_field_by_name("progress", Value::Message(self.progress(*tid, *pid, t)));
            tasks.push(Value::Message(task));
            info.push(Value::String(format!(
                "lastUpdateTime={};progressPath=/tmp/sync_task_progress/{tid}/{pid}.progress",
                t.last_update_ms
            )));
        }
        let mut r = build("openmldb.datasync.TaskStatusResponse", json!({"response": {"code": 0}}));
        r.set_field_by_name("task", Value::List(tasks));
        r.set_field_by_name("readableInfo", Value::List(info));
        r
    }

    fn send_data(&mut self, req: &DynamicMessage, attachment: Option<&Bytes>) -> DynamicMessage {
        let reply = |code: i32, msg: &str, delete: bool| {
            let mut r = build("openmldb.datasync.SendDataResponse", json!({"delete_task": delete}));
            r.set_field_by_name("response", Value::Message(general(code, msg)));
            r
        };
        let key = (num(req, "tid").unwrap_or(0) as u32, num(req, "pid").unwrap_or(0) as u32);
        let count = num(req, "count").unwrap_or(0);
        let Some(t) = self.tasks.get_mut(&key) else { return reply(-1, "can't find sync task", true) };
        if t.status == Status::Reassigning {
            return reply(-1, "sync task is reassigning, try later", false);
        }
        if text(req, "token") != t.token {
            return reply(-1, "token mismatch", false);
        }
        let start = req.get_field_by_name("start_point").and_then(|v| v.as_message().map(codec::encode));
        if start.as_deref() != Some(&codec::encode(&t.sync_point)[..]) {
            return reply(-1, "start point mismatch", false);
        }
        if count > 0 && attachment.is_none_or(|a| a.is_empty()) {
            return reply(-1, "attachment data is null", false);
        }
        if let Some(next) = req.get_field_by_name("next_point").and_then(|v| v.as_message().cloned()) {
            t.sync_point = next;
        }
        t.count += count;
        t.last_update_ms = crate::time::now_ms();
        let finished = req.get_field_by_name("finished").and_then(|v| v.as_bool()) == Some(true);
        t.status = if finished && t.mode == 0 { Status::Success } else { Status::Running };
        // When every partition of a mode-0 task is done, the whole task goes away.
        let tid = key.0;
        if self.tasks.iter().filter(|((t, _), _)| *t == tid).all(|(_, s)| s.status == Status::Success) {
            self.tasks.retain(|(t, _), _| *t != tid);
        }
        reply(0, "", false)
    }

    /// RUNNING sub-tasks silent for longer than `limit` become REASSIGNING with a new token;
    /// returns the AddSyncTask requests to push.
    pub(super) fn expire(&mut self, limit: Duration) -> Vec<DynamicMessage> {
        let now = crate::time::now_ms();
        let stale: Vec<(u32, u32)> = self
            .tasks
            .iter()
            .filter(|(_, t)| {
                t.status == Status::Running && now.saturating_sub(t.last_update_ms) > limit.as_millis() as u64
            })
            .map(|(k, _)| *k)
            .collect();
        let mut out = Vec::new();
        for k in stale {
            let token = self.token();
            if let Some(t) = self.tasks.get_mut(&k) {
                t.status = Status::Reassigning;
                t.token = token;
            }
            if let Some(t) = self.tasks.get(&k) {
                out.push(self.progress(k.0, k.1, t));
            }
        }
        out
    }

    /// What a SyncTool restart does to its sub-tasks: each is recovered from its progress file
    /// as RUNNING (INIT, FAILED and REASSIGNING ones too), with its token and sync point, and
    /// `count`, which only lived in memory, starts again from 0.
    pub fn restart(&mut self) {
        let now = crate::time::now_ms();
        for t in self.tasks.values_mut() {
            t.count = 0;
            t.status = Status::Running;
            t.last_update_ms = now;
        }
    }

    /// The outcome of a reassignment: RUNNING again, or FAILED for good (never retried).
    pub(super) fn reassigned(&mut self, req: &DynamicMessage, ok: bool) {
        let key = (num(req, "tid").unwrap_or(0) as u32, num(req, "pid").unwrap_or(0) as u32);
        if let Some(t) = self.tasks.get_mut(&key) {
            t.status = if ok { Status::Running } else { Status::Failed };
            t.last_update_ms = crate::time::now_ms();
        }
    }
}
