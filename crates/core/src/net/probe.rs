//! The connection test: one harmless call per profile, and what answered. Milvus (gRPC) is
//! asked GetVersion and, separately, whether server reflection answers and with which
//! services; an OpenMLDB SyncTool (brpc or HTTP/JSON) is asked TaskStatus (it has no version
//! call), and a brpc server that answers "unknown service" (1001/1002, a DataCollector) is
//! recognised as such rather than called broken.
//!
//! Owns: [`ProbeReport`] and [`test_connection`]. Must never: call anything with an effect
//! (TaskStatus goes without `clear_all`, the DataCollector's only method is never called), or
//! take longer than its bound.

use super::failure::FailureKind;
use super::profile::{ConnectionProfile, TransportKind};
use super::reflection::{self, ReflectionError};
use super::{CallOptions, CallRequest, ConnectOptions, NetError, call_unary, find_method};
use prost_reflect::{DescriptorPool, DynamicMessage};
use std::time::{Duration, Instant};

/// The bound when the profile gives no timeout.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, Clone)]
pub struct ProbeReport {
    pub profile: String,
    pub endpoint: String,
    pub transport: TransportKind,
    /// Round trip of the first call that was answered (None when nothing answered).
    pub latency: Option<Duration>,
    /// Milvus: GetVersion's version.
    pub server_version: Option<String>,
    /// What answered, in words ("Milvus v2.6.20 (GetVersion)", "SyncTool: 3 sub-tasks", ...).
    pub answered: Option<String>,
    /// gRPC only: whether server reflection answers, and its services (reflection itself left
    /// out); the error in words when it does not.
    pub reflection: Option<Result<Vec<String>, String>>,
    /// Traffic can be read or spoofed (no TLS off loopback, or TLS without verification).
    pub insecure: bool,
    /// Why the test failed: its kind and the error's words.
    pub failure: Option<(FailureKind, String)>,
}

impl ProbeReport {
    fn new(p: &ConnectionProfile) -> ProbeReport {
        ProbeReport {
            profile: p.name.clone(),
            endpoint: p.endpoint.clone(),
            transport: p.transport,
            latency: None,
            server_version: None,
            answered: None,
            reflection: None,
            insecure: p.is_insecure(),
            failure: None,
        }
    }

    pub fn ok(&self) -> bool {
        self.failure.is_none()
    }

    /// One line: what answered and how fast, or what failed and what to do.
    pub fn summary(&self) -> String {
        match (&self.failure, &self.answered) {
            (Some((kind, words)), _) => format!("{kind}: {words}. {}", kind.words()),
            (None, answered) => {
                let mut s = answered.clone().unwrap_or_else(|| "the server answered".into());
                if let Some(l) = self.latency {
                    s.push_str(&format!(" in {} ms", l.as_millis()));
                }
                if self.insecure {
                    s.push_str(" (insecure: traffic can be read)");
                }
                s
            }
        }
    }

    fn fail(&mut self, e: &NetError) {
        self.failure = Some((e.kind(), e.words_without_hint()));
    }
}

/// Tests the profile within its timeout (or [`PROBE_TIMEOUT`]); `pool` provides the methods
/// called (the built-in schemas have them).
pub async fn test_connection(profile: &ConnectionProfile, pool: &DescriptorPool) -> ProbeReport {
    let within = profile.timeout_secs.map_or(PROBE_TIMEOUT, Duration::from_secs);
    test_connection_within(profile, pool, within).await
}

/// [`test_connection`] with an explicit bound for the whole test.
pub async fn test_connection_within(
    profile: &ConnectionProfile,
    pool: &DescriptorPool,
    within: Duration,
) -> ProbeReport {
    let deadline = Instant::now() + within;
    let mut report = ProbeReport::new(profile);
    let work = async {
        match profile.transport {
            TransportKind::Grpc => grpc(profile, pool, deadline, &mut report).await,
            TransportKind::Brpc | TransportKind::Http => synctool(profile, pool, deadline, &mut report).await,
        }
    };
    if tokio::time::timeout(within, work).await.is_err() {
        let e = NetError::Timeout {
            method: format!("the connection test of {}", profile.endpoint),
            after: within,
        };
        report.fail(&e);
    }
    report
}

fn left(deadline: Instant) -> Duration {
    deadline.saturating_duration_since(Instant::now()).max(Duration::from_millis(1))
}

fn options(profile: &ConnectionProfile, deadline: Instant) -> CallOptions {
    CallOptions { timeout: Some(left(deadline)), ..profile.call_options() }
}

async fn grpc(
    profile: &ConnectionProfile,
    pool: &DescriptorPool,
    deadline: Instant,
    report: &mut ProbeReport,
) {
    let connect = ConnectOptions { connect_timeout: left(deadline), ..ConnectOptions::default() };
    let t = match super::connect::connect_grpc(profile, &connect).await {
        Ok(t) => t,
        Err(e) => return report.fail(&e),
    };
    report.insecure |= t.is_insecure();
    if let Ok(m) = find_method(pool, "milvus.proto.milvus.MilvusService/GetVersion") {
        let req = CallRequest::Message(DynamicMessage::new(m.input()));
        match call_unary(&t, &m, &req, &options(profile, deadline)).await {
            Ok(out) => {
                report.latency = Some(out.elapsed);
                if let Some(words) = out.body_error() {
                    report.failure = Some((FailureKind::Server, words));
                }
                let v = out.message.get_field_by_name("version").and_then(|v| v.as_str().map(str::to_string));
                report.answered =
                    Some(format!("Milvus {} (GetVersion)", v.as_deref().unwrap_or("(no version given)")));
                report.server_version = v;
            }
            Err(e) if e.kind() == FailureKind::NotFound => {
                report.answered = Some("a gRPC server without MilvusService/GetVersion (not Milvus)".into());
            }
            Err(e) => {
                report.fail(&e);
                // Unreachable, or not gRPC: reflection would only say the same again.
                if matches!(
                    e.kind(),
                    FailureKind::Refused
                        | FailureKind::Tls
                        | FailureKind::WrongProtocol
                        | FailureKind::Timeout
                ) {
                    return;
                }
            }
        }
    }
    let started = Instant::now();
    let listed = tokio::time::timeout(left(deadline), reflection::list_services(&t)).await;
    report.reflection = Some(match listed {
        Ok(Ok(services)) => {
            report.latency.get_or_insert(started.elapsed());
            report
                .answered
                .get_or_insert_with(|| format!("a gRPC server with {} service(s)", services.len()));
            Ok(services)
        }
        Ok(Err(e @ ReflectionError::NotServed { .. })) => {
            report.latency.get_or_insert(started.elapsed());
            Err(format!("not served ({e})"))
        }
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err("no answer in time".into()),
    });
}

async fn synctool(
    profile: &ConnectionProfile,
    pool: &DescriptorPool,
    deadline: Instant,
    report: &mut ProbeReport,
) {
    let m = match find_method(pool, "openmldb.datasync.SyncTool/TaskStatus") {
        Ok(m) => m,
        Err(e) => return report.failure = Some((FailureKind::Other, e.to_string())),
    };
    let connect = ConnectOptions { connect_timeout: left(deadline), ..ConnectOptions::default() };
    let t = match super::connect_with(profile, &connect).await {
        Ok(t) => t,
        Err(e) => return report.fail(&e),
    };
    // No clear_all: an empty TaskStatusRequest only reads.
    let req = CallRequest::Message(DynamicMessage::new(m.input()));
    let started = Instant::now();
    match call_unary(t.as_ref(), &m, &req, &options(profile, deadline)).await {
        Ok(out) => {
            report.latency = Some(out.elapsed);
            if let Some(words) = out.body_error() {
                report.failure = Some((FailureKind::Server, words));
            }
            let n =
                out.message.get_field_by_name("task").and_then(|v| v.as_list().map(<[_]>::len)).unwrap_or(0);
            report.answered = Some(format!("SyncTool: {n} sub-task{}", if n == 1 { "" } else { "s" }));
        }
        // brpc's "unknown service/method": a brpc server, only not a SyncTool.
        Err(NetError::Status { numeric: 1001 | 1002, message, .. }) => {
            report.latency = Some(started.elapsed());
            report.answered = Some(format!(
                "a brpc server without the SyncTool service, such as a DataCollector ({message})"
            ));
        }
        Err(NetError::Status { numeric: 404, code, message, .. }) if code.starts_with("HTTP") => {
            report.latency = Some(started.elapsed());
            report.answered = Some(format!("an HTTP server without the SyncTool service ({message})"));
        }
        Err(e) => report.fail(&e),
    }
}
