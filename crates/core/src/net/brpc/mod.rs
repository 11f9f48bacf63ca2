//! brpc's baidu_std protocol over TCP: the client transport (many calls in flight on one
//! connection, matched by correlation id) and a small server used by the demo servers.
//!
//! Must never: wait forever (every call has a deadline, every read a size limit), hand a
//! response to the wrong caller, drop a header without a word (baidu_std has none: a call with
//! metadata is refused), or send `DelelteSyncTask` (the released proto's typo, which
//! SyncTool rejects): both spellings go out as `DeleteSyncTask`.

pub mod codec;
pub mod server;

use super::{CallInfo, CallOptions, NetError, StreamReply, Transport, UnaryReply, decode_reply};
use bytes::BytesMut;
use codec::{Packet, RequestMeta, RpcMeta, describe_error, encode_packet, take_packet};
use futures::future::BoxFuture;
use prost_reflect::{DynamicMessage, MethodDescriptor};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::net::tcp::OwnedWriteHalf;
use tokio::sync::oneshot;

const UNARY_ONLY: &str = "baidu_std here carries unary calls only (datasync has no streaming methods)";

/// Default deadline when the caller gives none.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(20);

/// The words for a connection to an OpenMLDB server (brpc or HTTP/JSON) that failed, with the
/// hint gRPC gives for the same failure.
pub(crate) fn connect_words(e: &std::io::Error) -> String {
    if e.kind() == std::io::ErrorKind::ConnectionRefused {
        format!(
            "{e} (hint: nothing listens there: check host and port (SyncTool's default is 8848, a \
             DataCollector listens on its --endpoint, 8888 in the sample) and that the server runs)"
        )
    } else {
        e.to_string()
    }
}

type Waiters = Mutex<HashMap<i64, oneshot::Sender<Result<Packet, NetError>>>>;

struct Connection {
    writer: tokio::sync::Mutex<OwnedWriteHalf>,
    waiters: Arc<Waiters>,
    dead: Arc<AtomicBool>,
    /// Why the reader stopped, for calls that register after it drained the waiters.
    failure: Arc<Mutex<Option<NetError>>>,
    reader: tokio::task::JoinHandle<()>,
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

pub struct BrpcTransport {
    endpoint: String,
    conn: tokio::sync::Mutex<Option<Arc<Connection>>>,
    next_id: AtomicI64,
    pub connect_timeout: Duration,
}

impl BrpcTransport {
    pub fn new(endpoint: impl Into<String>) -> BrpcTransport {
        BrpcTransport {
            endpoint: endpoint.into(),
            conn: tokio::sync::Mutex::new(None),
            next_id: AtomicI64::new(1),
            connect_timeout: Duration::from_secs(5),
        }
    }

    async fn connection(&self) -> Result<Arc<Connection>, NetError> {
        let mut slot = self.conn.lock().await;
        if let Some(c) = slot.as_ref().filter(|c| !c.dead.load(Ordering::Acquire)) {
            return Ok(c.clone());
        }
        super::edges::check_endpoint(&self.endpoint).map_err(NetError::Unsupported)?;
        let err = |reason: String| NetError::Connect { endpoint: self.endpoint.clone(), reason };
        let stream = tokio::time::timeout(self.connect_timeout, TcpStream::connect(&self.endpoint))
            .await
            .map_err(|_| {
                err(format!(
                    "no answer within {:?}; is the server up and the port right?",
                    self.connect_timeout
                ))
            })?
            .map_err(|e| err(connect_words(&e)))?;
        let _ = stream.set_nodelay(true);
        let (mut rd, wr) = stream.into_split();
        let waiters: Arc<Waiters> = Arc::default();
        let dead = Arc::new(AtomicBool::new(false));
        let failure: Arc<Mutex<Option<NetError>>> = Arc::default();
        let (w, d, f, endpoint) = (waiters.clone(), dead.clone(), failure.clone(), self.endpoint.clone());
        let reader = tokio::spawn(async move {
            let mut buf = BytesMut::with_capacity(64 * 1024);
            let failure = loop {
                match take_packet(&mut buf) {
                    Ok(Some(p)) => {
                        let waiter = w.lock().ok().and_then(|mut m| m.remove(&p.meta.correlation_id));
                        if let Some(tx) = waiter {
                            let _ = tx.send(Ok(p));
                        }
                        continue;
                    }
                    Ok(None) => {}
                    Err(e) => break NetError::Protocol { endpoint: endpoint.clone(), reason: e.to_string() },
                }
                match rd.read_buf(&mut buf).await {
                    Ok(0) => {
                        break NetError::Connect {
                            endpoint: endpoint.clone(),
                            reason: "the server closed the connection".into(),
                        };
                    }
                    Ok(_) => {}
                    Err(e) => break NetError::Connect { endpoint: endpoint.clone(), reason: e.to_string() },
                }
            };
            // Record why, then mark dead, then drain: a call that registers after the drain
            // sees `dead` and reads the failure (the server may speak first, before any call).
            if let Ok(mut slot) = f.lock() {
                *slot = Some(failure.clone());
            }
            d.store(true, Ordering::Release);
            let pending: Vec<_> = w.lock().map(|mut m| m.drain().collect()).unwrap_or_default();
            for (_, tx) in pending {
                let _ = tx.send(Err(failure.clone()));
            }
        });
        let c = Arc::new(Connection { writer: tokio::sync::Mutex::new(wr), waiters, dead, failure, reader });
        *slot = Some(c.clone());
        Ok(c)
    }

    /// One call with raw bytes in and out. Returns the response packet.
    pub async fn call_raw(
        &self,
        service: &str,
        method: &str,
        message: &[u8],
        attachment: &[u8],
        timeout: Option<Duration>,
    ) -> Result<Packet, NetError> {
        let full = format!("{service}/{method}");
        let timeout = timeout.unwrap_or(DEFAULT_TIMEOUT);
        let conn = self.connection().await?;
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let meta = RpcMeta {
            request: Some(RequestMeta {
                service_name: service.to_string(),
                method_name: crate::datasync::calls::wire_method_name(method).to_string(),
                log_id: Some(id),
                timeout_ms: i32::try_from(timeout.as_millis()).ok(),
            }),
            correlation_id: id,
            ..RpcMeta::default()
        };
        let (tx, rx) = oneshot::channel();
        if let Ok(mut m) = conn.waiters.lock() {
            m.insert(id, tx);
        }
        if conn.dead.load(Ordering::Acquire) {
            if let Ok(mut m) = conn.waiters.lock() {
                m.remove(&id);
            }
            let why = conn.failure.lock().ok().and_then(|f| f.clone());
            return Err(why.unwrap_or_else(|| NetError::Connect {
                endpoint: self.endpoint.clone(),
                reason: "the connection ended".into(),
            }));
        }
        let packet = encode_packet(&meta, message, attachment);
        let sent = async {
            let mut w = conn.writer.lock().await;
            w.write_all(&packet).await
        };
        if let Err(e) = tokio::time::timeout(timeout, sent)
            .await
            .unwrap_or_else(|_| Err(std::io::ErrorKind::TimedOut.into()))
        {
            conn.dead.store(true, Ordering::Release);
            return Err(NetError::Connect {
                endpoint: self.endpoint.clone(),
                reason: format!("sending {full}: {e}"),
            });
        }
        let reply = match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(r)) => r?,
            Ok(Err(_)) => {
                return Err(NetError::Connect {
                    endpoint: self.endpoint.clone(),
                    reason: "the connection ended".into(),
                });
            }
            Err(_) => {
                if let Ok(mut m) = conn.waiters.lock() {
                    m.remove(&id);
                }
                return Err(NetError::Timeout { method: full, after: timeout });
            }
        };
        if let Some(r) = reply.meta.response.as_ref().filter(|r| r.error_code != 0) {
            let (code, hint) = describe_error(r.error_code);
            return Err(NetError::Status {
                method: full,
                code: code.to_string(),
                numeric: r.error_code,
                message: r.error_text.clone(),
                hint: if hint.is_empty() { String::new() } else { format!(" ({hint})") },
            });
        }
        Ok(reply)
    }
}

impl Transport for BrpcTransport {
    fn endpoint(&self) -> &str {
        &self.endpoint
    }

    fn call_unary<'a>(
        &'a self,
        method: &'a MethodDescriptor,
        request: &'a DynamicMessage,
        opts: &'a CallOptions,
    ) -> BoxFuture<'a, Result<UnaryReply, NetError>> {
        Box::pin(async move {
            let body = bytes::Bytes::from(crate::codec::encode(request));
            self.call_unary_bytes(method, &body, opts).await
        })
    }

    /// The body goes out exactly as given.
    fn call_unary_bytes<'a>(
        &'a self,
        method: &'a MethodDescriptor,
        body: &'a bytes::Bytes,
        opts: &'a CallOptions,
    ) -> BoxFuture<'a, Result<UnaryReply, NetError>> {
        Box::pin(async move {
            if !opts.metadata.is_empty() {
                let names = super::edges::header_names(&opts.metadata);
                return Err(NetError::Unsupported(format!(
                    "{}: {}",
                    method.full_name(),
                    super::edges::no_headers_words(&names)
                )));
            }
            let started = Instant::now();
            let service = method.parent_service().full_name().to_string();
            let p = self.call_raw(&service, method.name(), body, &opts.attachment, opts.timeout).await?;
            let message = decode_reply(method, &p.message)?;
            let info = CallInfo {
                elapsed: started.elapsed(),
                attachment: p.attachment.clone(),
                ..CallInfo::default()
            };
            Ok(UnaryReply { bytes: p.message, message, info })
        })
    }

    fn call_server_stream<'a>(
        &'a self,
        method: &'a MethodDescriptor,
        _request: &'a DynamicMessage,
        _opts: &'a CallOptions,
    ) -> BoxFuture<'a, Result<StreamReply, NetError>> {
        super::unary_only(method, UNARY_ONLY)
    }

    fn call_server_stream_bytes<'a>(
        &'a self,
        method: &'a MethodDescriptor,
        _request: &'a bytes::Bytes,
        _opts: &'a CallOptions,
    ) -> BoxFuture<'a, Result<StreamReply, NetError>> {
        super::unary_only(method, UNARY_ONLY)
    }
}
