//! A demo Milvus on 127.0.0.1: `milvus.proto.milvus.MilvusService` with Connect, GetVersion,
//! CheckHealth, GetReplicateConfiguration, GetReplicateInfo and DumpMessages over the synthetic
//! WAL, and the collection rpcs (CreateCollection ... Query, [`dml`]) over real
//! in-memory collections ([`store`], seeded by [`StoreSeed`]), served by tonic without generated code (a service that routes by path and sends
//! pre-encoded bytes). Every other method answers UNIMPLEMENTED naming the method.
//!
//! Connect answers as the proxy does, so SDKs that register on connect (pymilvus's
//! `MilvusClient` calls only Connect, and fails on UNIMPLEMENTED) can use the demo: success
//! status, a `server_info` with the version as build tags, and a session `identifier`
//! ([`SESSION_IDENTIFIER`], stable). Only the database `default` exists: a `dbname` header
//! naming another gets the proxy's "database not found" status.
//!
//! Alone (the default config) it plays both roles of a salvage: the new primary `by-dev` (it
//! knows a salvage checkpoint for the old cluster `by-dev-old` on each of its pchannels) and the
//! old primary (it dumps its WAL). [`pair`] starts two, an old and a new primary
//! with their own cluster ids and a force-failover replicate configuration, over the same WAL.
//! A wrong source cluster id gets an empty checkpoint, as on the real server; a `target_pchannel`
//! that is not one of this cluster's gets no answer until the caller gives up, as upstream
//! retries it until the deadline ([`State::retry_until_deadline`]).
//!
//! Fault switches ([`Faults`], also changed on a running server with [`MilvusDemo::set_faults`])
//! drop, stall or fail calls, make the server one that predates the salvage API (UNIMPLEMENTED,
//! an old version), one whose DumpMessages needs the Global privilege
//! `PrivilegeUpdateReplicateConfiguration` (PERMISSION_DENIED worded as upstream's interceptor), or one before 2.6.20 that sends each transaction as one opaque `Txn`
//! frame with an empty body. Auth, TLS and reflection are optional.
//! Must never: listen on anything but the address it was given (tests use 127.0.0.1:0), or
//! panic on a request.

pub mod config;
pub mod demo_wal;
mod dml;
pub mod expr;
pub mod pair;
mod replicate;
mod rows;
mod schema_check;
mod seed;
mod service;
pub mod store;

use crate::schema::SchemaSet;
use bytes::Bytes;
pub use config::{Faults, MilvusDemoConfig, OwnWrite, StoreSeed};
use demo_wal::{DemoWal, DumpCursor, DumpRequest, Step, opaque_txn};
use dml::DmlTypes;
use futures::stream::BoxStream;
use futures::{FutureExt, StreamExt};
use prost_reflect::{DescriptorPool, DynamicMessage, MessageDescriptor};
use serde_json::json;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::RwLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use store::Store;
use tonic::transport::server::TcpIncoming;
use tonic::transport::{Identity, Server, ServerTlsConfig};
use tonic::{Request, Response, Status};

/// The cluster the demo holds salvage checkpoints for (the old primary's id).
pub const OLD_CLUSTER_ID: &str = "by-dev-old";
/// The demo's own cluster id (the new primary's).
pub const NEW_CLUSTER_ID: &str = "by-dev";
/// The `identifier` every Connect gets. The proxy hands out a fresh TSO timestamp per
/// connection; the demo gives the hybrid timestamp at the start of its synthetic WAL, so the
/// value is nonzero, TSO-shaped and the same on every run.
pub const SESSION_IDENTIFIER: i64 = crate::time::millis_to_timetick(crate::walgen::START_MS) as i64;
/// The privilege upstream requires of DumpMessages (and CreateReplicateStream).
pub const DUMP_PRIVILEGE: &str = "PrivilegeUpdateReplicateConfiguration";
/// The only database the demo has (Milvus's default one).
const DEFAULT_DB: &str = "default";
pub(super) const SERVICE: &str = "milvus.proto.milvus.MilvusService";

#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    #[error("demo server cannot listen on {addr}: {source}")]
    Bind { addr: SocketAddr, source: std::io::Error },
    #[error("demo server setup: {0}")]
    Setup(String),
}

/// A running demo; dropping it stops the server too.
pub struct MilvusDemo {
    addr: SocketAddr,
    state: Arc<State>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl MilvusDemo {
    /// Binds and starts serving on the current tokio runtime.
    pub async fn start(config: MilvusDemoConfig) -> Result<MilvusDemo, DemoError> {
        let listener = tokio::net::TcpListener::bind(config.addr)
            .await
            .map_err(|source| DemoError::Bind { addr: config.addr, source })?;
        let addr = listener.local_addr().map_err(|source| DemoError::Bind { addr: config.addr, source })?;
        let schemas = SchemaSet::builtin();
        let state = Arc::new(State::new(schemas.pool(), &config, addr)?);
        let mut builder = Server::builder();
        if let Some((cert, key)) = &config.tls {
            let mut tls = ServerTlsConfig::new().identity(Identity::from_pem(cert, key));
            if let Some(ca) = &config.client_ca {
                tls = tls.client_ca_root(tonic::transport::Certificate::from_pem(ca));
            }
            builder = builder.tls_config(tls).map_err(|e| DemoError::Setup(format!("TLS: {e}")))?;
        }
        let (v1, v1alpha) = if config.reflection {
            let set = config.reflection_schemas.as_deref().unwrap_or(crate::schema::builtin_descriptor_set());
            let v1 = tonic_reflection::server::Builder::configure()
                .register_encoded_file_descriptor_set(set)
                .build_v1()
                .map_err(|e| DemoError::Setup(format!("reflection: {e}")))?;
            let v1alpha = tonic_reflection::server::Builder::configure()
                .register_encoded_file_descriptor_set(set)
                .build_v1alpha()
                .map_err(|e| DemoError::Setup(format!("reflection: {e}")))?;
            ((!config.reflection_v1alpha_only).then_some(v1), Some(v1alpha))
        } else {
            (None, None)
        };
        let router = builder
            .add_service(service::MilvusService { state: state.clone() })
            .add_optional_service(v1)
            .add_optional_service(v1alpha);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let incoming = TcpIncoming::from(listener).with_nodelay(Some(true));
        let task = tokio::spawn(async move {
            // An error here means the listener failed after start; there is nobody to tell.
            let _ = router.serve_with_incoming_shutdown(incoming, stopped.map(|_| ())).await;
        });
        Ok(MilvusDemo { addr, state, stop: Some(stop), task: Some(task) })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The cluster id this server answers for.
    pub fn cluster_id(&self) -> &str {
        &self.state.config.cluster_id
    }

    /// The rows this server wrote itself after its promotion ([`StoreSeed::NewPrimary`] with
    /// `own_writes`; empty otherwise), with the keys a replay of the salvage conflicts on.
    pub fn own_writes(&self) -> Vec<OwnWrite> {
        self.state.own_writes.clone()
    }

    /// This cluster's pchannels (see [`MilvusDemoConfig::pchannels_named_by_cluster`]).
    pub fn pchannels(&self) -> Vec<String> {
        self.state.config.own_pchannels()
    }

    /// The fault switches now in force.
    pub fn faults(&self) -> Faults {
        self.state.faults.read().map(|f| f.clone()).unwrap_or_default()
    }

    /// Changes the fault switches of the running server (calls already running keep theirs).
    /// New fault switches; a `drop_after` applies again to the next stream.
    pub fn set_faults(&self, faults: Faults) {
        if let Ok(mut f) = self.state.faults.write() {
            *f = faults;
        }
        self.state.dropped_once.store(false, Ordering::SeqCst);
    }

    /// Stops accepting, ends open streams, and waits for the server task.
    /// Stops as a crashing or restarting server does: open streams end with UNAVAILABLE
    /// (where [`MilvusDemo::shutdown`] lets them finish), then the port is closed.
    pub async fn kill(self) {
        self.state.killed.store(true, Ordering::Relaxed);
        self.shutdown().await;
    }

    pub async fn shutdown(mut self) {
        self.state.stopping.store(true, Ordering::Relaxed);
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.task.take() {
            let _ = t.await;
        }
    }
}

impl Drop for MilvusDemo {
    fn drop(&mut self) {
        self.state.stopping.store(true, Ordering::Relaxed);
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
    }
}

struct Types {
    connect_req: MessageDescriptor,
    connect: MessageDescriptor,
    health: MessageDescriptor,
    version: MessageDescriptor,
    config: MessageDescriptor,
    info_req: MessageDescriptor,
    info: MessageDescriptor,
    dump_req: MessageDescriptor,
    dump_resp: MessageDescriptor,
}

pub(super) struct State {
    config: MilvusDemoConfig,
    faults: RwLock<Faults>,
    addr: SocketAddr,
    wal: Arc<DemoWal>,
    types: Types,
    /// The collections (Create/Describe/Insert/Delete/Upsert/Query...).
    store: Store,
    dml: DmlTypes,
    own_writes: Vec<OwnWrite>,
    dropped_once: AtomicBool,
    /// Set by [`MilvusDemo::kill`]: open streams end at once with UNAVAILABLE.
    killed: Arc<AtomicBool>,
    /// Set when the server stops: calls that wait for the caller to give up end.
    stopping: AtomicBool,
}

fn desc(pool: &DescriptorPool, name: &str) -> Result<MessageDescriptor, DemoError> {
    pool.get_message_by_name(name).ok_or_else(|| DemoError::Setup(format!("built-in schema lacks {name}")))
}

impl State {
    fn new(pool: &DescriptorPool, config: &MilvusDemoConfig, addr: SocketAddr) -> Result<State, DemoError> {
        let wal = Arc::new(DemoWal::new(pool, config.wal.clone()).cycling(config.wal_cycle));
        let dml = DmlTypes::new(pool).map_err(DemoError::Setup)?;
        let store = Store::new(SESSION_IDENTIFIER as u64);
        let own_writes = seed::seed(&store, &dml, pool, &wal, config);
        Ok(State {
            store,
            dml,
            own_writes,
            types: Types {
                connect_req: desc(pool, "milvus.proto.milvus.ConnectRequest")?,
                connect: desc(pool, "milvus.proto.milvus.ConnectResponse")?,
                health: desc(pool, "milvus.proto.milvus.CheckHealthResponse")?,
                version: desc(pool, "milvus.proto.milvus.GetVersionResponse")?,
                config: desc(pool, "milvus.proto.milvus.GetReplicateConfigurationResponse")?,
                info_req: desc(pool, "milvus.proto.milvus.GetReplicateInfoRequest")?,
                info: desc(pool, "milvus.proto.milvus.GetReplicateInfoResponse")?,
                dump_req: desc(pool, "milvus.proto.milvus.DumpMessagesRequest")?,
                dump_resp: desc(pool, "milvus.proto.milvus.DumpMessagesResponse")?,
            },
            faults: RwLock::new(config.faults.clone()),
            wal,
            config: config.clone(),
            addr,
            dropped_once: AtomicBool::new(false),
            killed: Arc::default(),
            stopping: AtomicBool::new(false),
        })
    }

    fn faults(&self) -> Faults {
        self.faults.read().map(|f| f.clone()).unwrap_or_default()
    }

    fn check(&self, method: &str, req: &Request<Bytes>, unary: bool) -> Result<(), Status> {
        let faults = self.faults();
        if let Some((m, code, msg)) = &faults.fail
            && m == method
        {
            return Err(Status::new(*code, msg.clone()));
        }
        if faults.no_salvage_api && (method == "GetReplicateInfo" || method == "DumpMessages") {
            // What grpc-go answers for a method the server was not built with.
            return Err(Status::unimplemented(format!("unknown method {method} for service {SERVICE}")));
        }
        if let (true, Some(admin)) = (method == "DumpMessages", &faults.dump_privilege) {
            // Upstream since #52608: streams are authenticated, then DumpMessages needs the
            // Global PrivilegeUpdateReplicateConfiguration (privilege_interceptor.go,
            // streamMethodPrivileges), worded as every privilege refusal is.
            match req.metadata().get("authorization").and_then(|v| v.to_str().ok()) {
                None => return Err(Status::unauthenticated("missing authorization in header")),
                Some(sent) if sent != admin.header_value() => {
                    let user = user_of(sent).unwrap_or_else(|| "apikey user".into());
                    let db =
                        req.metadata().get("dbname").and_then(|v| v.to_str().ok()).filter(|d| !d.is_empty());
                    return Err(Status::permission_denied(format!(
                        "{DUMP_PRIVILEGE}: permission deny to {user} in the `{}` database",
                        db.unwrap_or(DEFAULT_DB)
                    )));
                }
                Some(_) => {}
            }
        }
        if let (true, Some(auth)) = (unary, &self.config.auth) {
            match req.metadata().get("authorization").and_then(|v| v.to_str().ok()) {
                None => return Err(Status::unauthenticated("missing authorization in header")),
                Some(v) if v != auth.header_value() => {
                    return Err(Status::unauthenticated(
                        "auth check failure, please check username and password are correct",
                    ));
                }
                Some(_) => {}
            }
        }
        Ok(())
    }

    fn encode(d: &MessageDescriptor, v: serde_json::Value) -> Result<Bytes, Status> {
        DynamicMessage::deserialize(d.clone(), v)
            .map(|m| Bytes::from(crate::codec::encode(&m)))
            .map_err(|e| Status::internal(format!("demo reply for {}: {e}", d.full_name())))
    }

    fn decode(d: &MessageDescriptor, b: &[u8]) -> Result<DynamicMessage, Status> {
        DynamicMessage::decode(d.clone(), b)
            .map_err(|e| Status::invalid_argument(format!("request is not a valid {}: {e}", d.full_name())))
    }

    pub(super) async fn unary(
        self: Arc<Self>,
        method: String,
        req: Request<Bytes>,
    ) -> Result<Response<Bytes>, Status> {
        self.check(&method, &req, true)?;
        if let Some((m, bytes)) = &self.faults().garbage_reply
            && *m == method
        {
            return Ok(Response::new(Bytes::from(bytes.clone())));
        }
        let db = req.metadata().get("dbname").and_then(|v| v.to_str().ok()).map(str::to_string);
        let body = req.into_inner();
        let reply = match method.as_str() {
            "Connect" => {
                Self::decode(&self.types.connect_req, &body)?;
                Self::encode(&self.types.connect, self.connect_reply(db.as_deref()))?
            }
            "CheckHealth" => Self::encode(
                &self.types.health,
                json!({"status": {}, "isHealthy": true, "reasons": [], "quota_states": []}),
            )?,
            "GetVersion" => {
                let version = self.faults().version.unwrap_or_else(|| self.config.version.clone());
                Self::encode(&self.types.version, json!({"status": {}, "version": version}))?
            }
            "GetReplicateConfiguration" => Self::encode(&self.types.config, self.replicate_configuration())?,
            "GetReplicateInfo" => {
                if let Some(d) = self.config.faults.replicate_info_delay {
                    tokio::time::sleep(d).await;
                }
                let req = Self::decode(&self.types.info_req, &body)?;
                let text = |n: &str| {
                    req.get_field_by_name(n).and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
                };
                let reply = self
                    .clone()
                    .salvage_checkpoint(&text("source_cluster_id"), &text("target_pchannel"))
                    .await?;
                Self::encode(&self.types.info, reply)?
            }
            other => match dml::dispatch(&self.store, &self.dml, other, db.as_deref(), &body) {
                Some(reply) => reply?,
                None => return Err(Status::unimplemented(format!("unknown method {SERVICE}/{other}"))),
            },
        };
        Ok(Response::new(reply))
    }

    /// The proxy's Connect: the database (the `dbname` header, else `default`) must exist;
    /// then success, the server info and the session identifier.
    fn connect_reply(&self, db: Option<&str>) -> serde_json::Value {
        let db = db.filter(|d| !d.is_empty()).unwrap_or(DEFAULT_DB);
        if db != DEFAULT_DB {
            // merr.ErrDatabaseNotFound: code 800, legacy error_code UnexpectedError.
            let reason = format!("database not found[database={db}]");
            return json!({"status": {
                "error_code": "UnexpectedError", "code": 800, "reason": reason, "detail": reason
            }});
        }
        json!({
            "status": {},
            "server_info": {
                "build_tags": self.config.version,
                "deploy_mode": "STANDALONE",
                "reserved": {}
            },
            "identifier": SESSION_IDENTIFIER.to_string()
        })
    }

    pub(super) fn dump(
        self: Arc<Self>,
        req: Request<Bytes>,
    ) -> Result<BoxStream<'static, Result<Bytes, Status>>, Status> {
        self.check("DumpMessages", &req, false)?;
        let msg = Self::decode(&self.types.dump_req, req.get_ref())?;
        let u64_of = |n: &str| msg.get_field_by_name(n).and_then(|v| v.as_u64()).unwrap_or(0);
        let pchannel = msg
            .get_field_by_name("pchannel")
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        // A server before 2.6.20 does not know field 5: it always starts after the id.
        let include =
            msg.get_field_by_name("include_start_message").and_then(|v| v.as_bool()).unwrap_or(false)
                && !self.faults().ignore_inclusive_start;
        let start = msg.get_field_by_name("start_message_id").and_then(|v| {
            let m = v.as_message()?.clone();
            let id = m.get_field_by_name("id")?.as_str()?.to_string();
            let wal = m.get_field_by_name("WAL_name").and_then(|w| w.as_enum_number()).unwrap_or(0);
            Some((id, wal))
        });
        // The WAL knows its pchannels by the generator's names.
        let generated = self.config.generated_pchannel(&pchannel);
        if !pchannel.is_empty() && generated.is_none() {
            return Err(Status::not_found(format!("pchannel {pchannel} not found on this cluster")));
        }
        let request = DumpRequest::parse(
            generated.unwrap_or_default(),
            start.as_ref().map(|(id, w)| (id.as_str(), *w)),
            u64_of("start_timetick"),
            u64_of("end_timetick"),
            include,
        )
        .map_err(|(code, m)| Status::new(code, m))?;
        let faults = self.faults();
        let drop_after = match faults.drop_after {
            Some(n) if !self.dropped_once.swap(true, Ordering::SeqCst) => Some(n),
            _ => None,
        };
        let stall_after =
            faults.stall_after.filter(|_| faults.stall_only.as_ref().is_none_or(|p| *p == pchannel));
        let opaque = faults.opaque_txn.then(|| self.types.dump_resp.clone());
        let (tx, rx) = tokio::sync::mpsc::channel::<Result<Bytes, Status>>(256);
        let mut cursor = DumpCursor::new(self.wal.clone(), request);
        let killed = self.killed.clone();
        // Generation is CPU work: a thread of its own keeps the runtime's workers free.
        std::thread::spawn(move || {
            let mut sent = 0u64;
            while let Some(step) = cursor.step() {
                let Step::Send(group) = step else { break };
                let group = match &opaque {
                    Some(desc) => opaque_txn(desc, group),
                    None => group,
                };
                for e in group {
                    if killed.load(Ordering::Relaxed) {
                        let _ = tx.blocking_send(Err(Status::unavailable("demo: the server is going down")));
                        return;
                    }
                    if drop_after == Some(sent) {
                        let _ = tx.blocking_send(Err(Status::unavailable(format!(
                            "demo fault: stream dropped after {sent} messages"
                        ))));
                        return;
                    }
                    if stall_after == Some(sent) {
                        while !tx.is_closed() {
                            std::thread::sleep(Duration::from_millis(20));
                        }
                        return;
                    }
                    if tx.blocking_send(Ok(e.response)).is_err() {
                        return; // the client went away
                    }
                    sent += 1;
                }
            }
        });
        Ok(tokio_stream::wrappers::ReceiverStream::new(rx).boxed())
    }
}

/// The user named by an `authorization` value (base64 of `user:password`), for messages.
fn user_of(header: &str) -> Option<String> {
    use base64::Engine;
    let raw = base64::engine::general_purpose::STANDARD.decode(header).ok()?;
    let text = String::from_utf8(raw).ok()?;
    // An API key (no "user:") is named as upstream names it.
    Some(text.split_once(':').map_or("apikey user".to_string(), |(u, _)| u.to_string()))
}
