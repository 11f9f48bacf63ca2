//! gRPC through tonic, with no generated code: requests are encoded from `DynamicMessage`s and
//! every response message comes back as the exact bytes the server sent ([`RawCodec`]), so a
//! dump keeps them unchanged and the unary path decodes them with [`super::decode_reply`].
//!
//! Owns: connection settings (TLS modes, client certificates, message-size limit, keepalive,
//! Milvus auth and database headers) and the translation of connection failures, deadlines and
//! gRPC statuses into [`NetError`]s that say what to do. Must never: retry a call (the caller
//! decides what is safe to repeat), or hide that verification was skipped.

use super::{CallInfo, CallOptions, NetError, StreamReply, Transport, UnaryReply};
use base64::Engine;
use bytes::{Buf, BufMut, Bytes};
use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};
use hyper_util::rt::TokioIo;
use prost_reflect::{DynamicMessage, MethodDescriptor};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tonic::Status;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::metadata::{AsciiMetadataKey, AsciiMetadataValue, KeyAndValueRef, MetadataMap};
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint, Identity};

pub use super::grpc_errors::{code_name, error_chain, status_error};
use super::grpc_errors::{
    connect_failed, diagnose, facts, is_local_timeout, is_local_transport_failure, silent, tls_words,
};

/// Milvus's default message limit (`proxy.grpc.serverMaxSendSize`); tonic's own is 4 MiB.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 512 << 20;
/// The HTTP/2 `SETTINGS_MAX_FRAME_SIZE` this client advertises (see [`GrpcTransport::connect`]).
pub const CLIENT_MAX_FRAME_BYTES: u32 = 1 << 20;
/// Milvus refuses clients that ping more often than this.
pub const MIN_KEEPALIVE: Duration = Duration::from_secs(5);

/// Passes messages through as bytes both ways: the client sends pre-encoded requests and gets
/// each response's exact bytes; the demo server sends pre-encoded responses.
#[derive(Debug, Clone, Copy, Default)]
pub struct RawCodec;

#[derive(Debug, Clone, Copy, Default)]
pub struct RawEncoder;
#[derive(Debug, Clone, Copy, Default)]
pub struct RawDecoder;

impl Codec for RawCodec {
    type Encode = Bytes;
    type Decode = Bytes;
    type Encoder = RawEncoder;
    type Decoder = RawDecoder;
    fn encoder(&mut self) -> RawEncoder {
        RawEncoder
    }
    fn decoder(&mut self) -> RawDecoder {
        RawDecoder
    }
}

impl Encoder for RawEncoder {
    type Item = Bytes;
    type Error = Status;
    fn encode(&mut self, item: Bytes, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        dst.put_slice(&item);
        Ok(())
    }
}

impl Decoder for RawDecoder {
    type Item = Bytes;
    type Error = Status;
    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Bytes>, Status> {
        Ok(Some(src.copy_to_bytes(src.remaining())))
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum TlsMode {
    #[default]
    Plaintext,
    /// TLS verified against the operating system's roots.
    SystemRoots,
    /// TLS verified against this CA (PEM).
    CaFile(PathBuf),
    /// TLS without verifying the server: encrypted but not authenticated.
    Insecure,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Auth {
    UserPassword { user: String, password: String },
    Token(String),
}

impl Auth {
    /// The `authorization` header value Milvus expects: base64 with no scheme prefix.
    pub fn header_value(&self) -> String {
        let raw = match self {
            Auth::UserPassword { user, password } => format!("{user}:{password}"),
            Auth::Token(t) => t.clone(),
        };
        base64::engine::general_purpose::STANDARD.encode(raw)
    }
}

#[derive(Debug, Clone)]
pub struct GrpcSettings {
    /// `host:port`, or a URL; `https://` alone does not switch TLS on (see `tls`).
    pub endpoint: String,
    pub tls: TlsMode,
    /// PEM certificate and key for mutual TLS.
    pub client_cert: Option<(PathBuf, PathBuf)>,
    pub max_message_bytes: usize,
    /// HTTP/2 keepalive interval; raised to [`MIN_KEEPALIVE`] if shorter.
    pub keepalive: Option<Duration>,
    pub connect_timeout: Duration,
    pub auth: Option<Auth>,
    pub db_name: Option<String>,
    pub headers: Vec<(String, String)>,
}

impl GrpcSettings {
    pub fn new(endpoint: impl Into<String>) -> Self {
        GrpcSettings {
            endpoint: endpoint.into(),
            tls: TlsMode::Plaintext,
            client_cert: None,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            keepalive: None,
            connect_timeout: Duration::from_secs(10),
            auth: None,
            db_name: None,
            headers: Vec::new(),
        }
    }

    /// Every header sent on each call: auth, database, extras.
    pub fn metadata(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        if let Some(a) = &self.auth {
            out.push(("authorization".to_string(), a.header_value()));
        }
        if let Some(db) = &self.db_name {
            out.push(("dbname".to_string(), db.clone()));
        }
        out.extend(self.headers.iter().cloned());
        out
    }
}

/// `host:port` without scheme or path.
fn authority(endpoint: &str) -> &str {
    let rest = endpoint.split_once("://").map_or(endpoint, |(_, r)| r);
    rest.split('/').next().unwrap_or(rest)
}

pub struct GrpcTransport {
    endpoint: String,
    /// `host:port`, for looking at what answers when a connection breaks.
    host_port: String,
    tls: TlsMode,
    connect_timeout: Duration,
    channel: Channel,
    metadata: Vec<(String, String)>,
    max_message_bytes: usize,
    insecure: bool,
    /// For naming a TLS failure (whether one was offered; the same one again when a refusal
    /// must be heard out, see [`super::tls_failure::refusal_after_handshake`]).
    client_cert: Option<(PathBuf, PathBuf)>,
}

impl GrpcTransport {
    /// Connects now, so a wrong address, port or TLS setting is reported here, not on the
    /// first call.
    pub async fn connect(settings: &GrpcSettings) -> Result<GrpcTransport, NetError> {
        super::edges::check_endpoint(&settings.endpoint).map_err(NetError::Unsupported)?;
        let host_port = authority(&settings.endpoint).to_string();
        let fail = |reason: String| NetError::Connect { endpoint: settings.endpoint.clone(), reason };
        let scheme = if settings.tls == TlsMode::Plaintext || settings.tls == TlsMode::Insecure {
            "http" // Insecure TLS is done by our connector; tonic sees a ready stream.
        } else {
            "https"
        };
        let mut endpoint = Endpoint::from_shared(format!("{scheme}://{host_port}"))
            .map_err(|e| fail(format!("not a valid address \"{host_port}\": {e}")))?
            .connect_timeout(settings.connect_timeout)
            .tcp_nodelay(true)
            // HTTP/2's default, 16 KiB, cuts a 64 KiB message into five DATA frames, each its own
            // pass through h2, hyper and tonic at both ends. Servers that honour a larger frame
            // (hyper's, so the demo's) then stream 1.3-1.9x faster to a discarding client
            // (`cargo bench --bench salvage`); grpc-go caps its own frames at 16 KiB and is
            // unaffected.
            .max_frame_size(CLIENT_MAX_FRAME_BYTES);
        if let Some(k) = settings.keepalive {
            endpoint = endpoint.http2_keep_alive_interval(k.max(MIN_KEEPALIVE)).keep_alive_while_idle(true);
        }
        let identity = match &settings.client_cert {
            Some((c, k)) => {
                let cert =
                    std::fs::read(c).map_err(|e| fail(format!("client certificate {}: {e}", c.display())))?;
                let key = std::fs::read(k).map_err(|e| fail(format!("client key {}: {e}", k.display())))?;
                Some(Identity::from_pem(cert, key))
            }
            None => None,
        };
        let tls = match &settings.tls {
            TlsMode::Plaintext | TlsMode::Insecure => None,
            TlsMode::SystemRoots => Some(ClientTlsConfig::new().with_native_roots()),
            TlsMode::CaFile(p) => {
                let pem = std::fs::read(p).map_err(|e| fail(format!("CA file {}: {e}", p.display())))?;
                Some(ClientTlsConfig::new().ca_certificate(Certificate::from_pem(pem)))
            }
        };
        if let Some(mut tls) = tls {
            if let Some(id) = identity {
                tls = tls.identity(id);
            }
            endpoint = endpoint.tls_config(tls).map_err(|e| fail(error_chain(&e)))?;
        }
        let channel = if settings.tls == TlsMode::Insecure {
            let cert = settings.client_cert.as_ref().map(|(c, k)| (c.as_path(), k.as_path()));
            let config = Arc::new(super::tls::insecure_client_config(cert).map_err(fail)?);
            let connector = tower::service_fn(move |uri: http::Uri| {
                let config = config.clone();
                async move {
                    let host = uri.host().unwrap_or("localhost").trim_matches(['[', ']']).to_string();
                    let port = uri.port_u16().unwrap_or(443);
                    let tcp = tokio::net::TcpStream::connect((host.as_str(), port)).await?;
                    tcp.set_nodelay(true)?;
                    let name = rustls::pki_types::ServerName::try_from(host)
                        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
                    let tls = tokio_rustls::TlsConnector::from(config).connect(name, tcp).await?;
                    Ok::<_, std::io::Error>(TokioIo::new(tls))
                }
            });
            endpoint.connect_with_connector(connector).await
        } else {
            endpoint.connect().await
        };
        let channel = match channel {
            Ok(c) => c,
            Err(e) => {
                return Err(connect_failed(
                    &settings.endpoint,
                    &host_port,
                    &settings.tls,
                    settings.client_cert.is_some(),
                    settings.connect_timeout,
                    facts(&e),
                )
                .await);
            }
        };
        Ok(GrpcTransport {
            endpoint: settings.endpoint.clone(),
            host_port,
            tls: settings.tls.clone(),
            connect_timeout: settings.connect_timeout,
            channel,
            metadata: settings.metadata(),
            max_message_bytes: settings.max_message_bytes,
            insecure: settings.tls == TlsMode::Insecure,
            client_cert: settings.client_cert.clone(),
        })
    }

    /// The connection, for typed clients (reflection).
    pub fn channel(&self) -> Channel {
        self.channel.clone()
    }

    /// Headers sent on every call (auth, database, extras).
    pub fn headers(&self) -> &[(String, String)] {
        &self.metadata
    }

    /// True when the server's certificate was not verified; show this to the user.
    pub fn is_insecure(&self) -> bool {
        self.insecure
    }

    fn client(&self) -> tonic::client::Grpc<Channel> {
        tonic::client::Grpc::new(self.channel.clone())
            .max_decoding_message_size(self.max_message_bytes)
            .max_encoding_message_size(self.max_message_bytes)
    }

    fn request(
        &self,
        method: &MethodDescriptor,
        body: Bytes,
        opts: &CallOptions,
    ) -> Result<(tonic::Request<Bytes>, http::uri::PathAndQuery), NetError> {
        let mut request = tonic::Request::new(body);
        for (k, v) in self.metadata.iter().chain(opts.metadata.iter()) {
            let key = AsciiMetadataKey::from_bytes(k.to_ascii_lowercase().as_bytes()).map_err(|_| {
                NetError::Unsupported(format!("header name \"{k}\" is not a valid gRPC metadata key"))
            })?;
            let value = AsciiMetadataValue::try_from(v.as_str()).map_err(|_| {
                NetError::Unsupported(format!("value of header \"{k}\" must be printable ASCII"))
            })?;
            request.metadata_mut().append(key, value);
        }
        let path = format!("/{}/{}", method.parent_service().full_name(), method.name());
        let path = http::uri::PathAndQuery::try_from(path.as_str())
            .map_err(|e| NetError::Unsupported(format!("method path {path}: {e}")))?;
        Ok((request, path))
    }

    /// The error for a failed call: a status the server sent as it is; a connection that broke
    /// under the call explained by what answers on the port (TLS wanted, not gRPC at all).
    /// `timeout` is the call's deadline (tonic's own "Timeout expired" says only that).
    async fn call_failed(
        &self,
        method: &MethodDescriptor,
        status: Status,
        timeout: Option<Duration>,
    ) -> NetError {
        // A handshake refused under the call (mutual TLS: TLS 1.3 sends the server's verdict
        // after the client's part is done) is a TLS failure, whatever the status code says.
        let mut found = facts(&status).0;
        if found.is_none() && self.tls != TlsMode::Plaintext && is_local_transport_failure(&status) {
            found = self.refusal().await;
        }
        if let Some(found) = found {
            let words =
                tls_words(found, &self.host_port, self.client_cert.is_some(), self.connect_timeout).await;
            return NetError::Connect { endpoint: self.endpoint.clone(), reason: words };
        }
        if is_local_timeout(&status) {
            return self.deadline_failed(method, timeout.unwrap_or(self.connect_timeout)).await;
        }
        if is_local_transport_failure(&status)
            && let Some(d) = diagnose(&self.endpoint, &self.host_port, &self.tls, self.connect_timeout).await
        {
            return d;
        }
        status_error(method, &status)
    }

    /// A TLS connection that broke under a call without a reason: what the server says after a
    /// fresh handshake (a refused client certificate), if anything.
    async fn refusal(&self) -> Option<rustls::Error> {
        let (host, port) = self.host_port.rsplit_once(':')?;
        let port = port.parse::<u16>().ok()?;
        let cert = self.client_cert.as_ref().map(|(c, k)| (c.as_path(), k.as_path()));
        super::tls_failure::refusal_after_handshake(
            host.trim_matches(['[', ']']),
            port,
            cert,
            self.connect_timeout,
        )
        .await
    }

    /// No answer within `after`: a port that says nothing even to the HTTP/2 greeting is
    /// named as such; a gRPC server that is only slow gets the deadline's words.
    async fn deadline_failed(&self, method: &MethodDescriptor, after: Duration) -> NetError {
        if self.tls == TlsMode::Plaintext
            && let Some(e) = silent(&self.endpoint, &self.host_port, after).await
        {
            return e;
        }
        deadline(method, after)
    }

    async fn ready(&self, method: &MethodDescriptor) -> Result<tonic::client::Grpc<Channel>, NetError> {
        let mut client = self.client();
        client.ready().await.map_err(|e| NetError::Connect {
            endpoint: self.endpoint.clone(),
            reason: format!("{} (calling {})", error_chain(&e), method.full_name()),
        })?;
        Ok(client)
    }
}

fn deadline(method: &MethodDescriptor, after: Duration) -> NetError {
    status_error(method, &Status::deadline_exceeded(format!("no answer within {after:?}")))
}

impl Transport for GrpcTransport {
    fn endpoint(&self) -> &str {
        &self.endpoint
    }

    fn call_unary<'a>(
        &'a self,
        method: &'a MethodDescriptor,
        request: &'a DynamicMessage,
        opts: &'a CallOptions,
    ) -> BoxFuture<'a, Result<UnaryReply, NetError>> {
        async move {
            let body = Bytes::from(crate::codec::encode(request));
            self.call_unary_bytes(method, &body, opts).await
        }
        .boxed()
    }

    fn call_server_stream<'a>(
        &'a self,
        method: &'a MethodDescriptor,
        request: &'a DynamicMessage,
        opts: &'a CallOptions,
    ) -> BoxFuture<'a, Result<StreamReply, NetError>> {
        async move {
            let body = Bytes::from(crate::codec::encode(request));
            self.call_server_stream_bytes(method, &body, opts).await
        }
        .boxed()
    }

    fn call_unary_bytes<'a>(
        &'a self,
        method: &'a MethodDescriptor,
        request: &'a Bytes,
        opts: &'a CallOptions,
    ) -> BoxFuture<'a, Result<UnaryReply, NetError>> {
        async move {
            let started = Instant::now();
            let (mut req, path) = self.request(method, request.clone(), opts)?;
            if let Some(t) = opts.timeout {
                req.set_timeout(t);
            }
            // Asked as a one-message stream: on the wire a unary call is exactly that, and tonic's
            // own unary call merges the trailers into the headers, which a transcript keeps apart.
            let call = async {
                let mut client = self.ready(method).await?;
                let response = match client.server_streaming(req, path, RawCodec).await {
                    Ok(r) => r,
                    Err(s) => return Err(self.call_failed(method, s, opts.timeout).await),
                };
                let headers = metadata_pairs(response.metadata());
                let mut body = response.into_inner();
                let bytes = match body.message().await {
                    Ok(Some(b)) => b,
                    Ok(None) => {
                        let none = Status::internal("the server ended the call without a response message");
                        return Err(self.call_failed(method, none, opts.timeout).await);
                    }
                    Err(s) => return Err(self.call_failed(method, s, opts.timeout).await),
                };
                let trailers = match body.trailers().await {
                    Ok(t) => t.as_ref().map(metadata_pairs).unwrap_or_default(),
                    Err(s) => return Err(self.call_failed(method, s, opts.timeout).await),
                };
                Ok((headers, bytes, trailers))
            };
            let (headers, bytes, trailers) = match opts.timeout {
                Some(t) => match tokio::time::timeout(t, call).await {
                    Ok(r) => r?,
                    Err(_) => return Err(self.deadline_failed(method, t).await),
                },
                None => call.await?,
            };
            let message = super::decode_reply(method, &bytes)?;
            let info = CallInfo { headers, trailers, elapsed: started.elapsed(), ..Default::default() };
            Ok(UnaryReply { bytes, message, info })
        }
        .boxed()
    }

    fn call_server_stream_bytes<'a>(
        &'a self,
        method: &'a MethodDescriptor,
        request: &'a Bytes,
        opts: &'a CallOptions,
    ) -> BoxFuture<'a, Result<StreamReply, NetError>> {
        async move {
            let (req, path) = self.request(method, request.clone(), opts)?;
            let method_owned = method.clone();
            // The timeout covers the first message only: a dump may rightly run for hours.
            let open = async {
                let mut client = self.ready(method).await?;
                let response = match client.server_streaming(req, path, RawCodec).await {
                    Ok(r) => r,
                    Err(s) => return Err(self.call_failed(method, s, opts.timeout).await),
                };
                let headers = metadata_pairs(response.metadata());
                let mut stream = response.into_inner();
                let first = stream.message().await.map_err(|s| status_error(method, &s))?;
                Ok::<_, NetError>((headers, first, stream))
            };
            let (headers, first, mut stream) = match opts.timeout {
                Some(t) => match tokio::time::timeout(t, open).await {
                    Ok(r) => r?,
                    Err(_) => return Err(self.deadline_failed(method, t).await),
                },
                None => open.await?,
            };
            let trailers = super::TrailerSlot::default();
            let messages = match first {
                Some(m) => {
                    let rest = rest_of_stream(stream, method_owned, trailers.clone());
                    futures::stream::once(async move { Ok(m) }).chain(rest).boxed()
                }
                None => {
                    keep_trailers(&trailers, stream.trailers().await.ok().flatten().as_ref());
                    futures::stream::empty().boxed()
                }
            };
            Ok(StreamReply { messages, headers, trailers })
        }
        .boxed()
    }

    fn as_grpc(&self) -> Option<&GrpcTransport> {
        Some(self)
    }
}

/// The messages after the first; when the stream ends its trailers go to `slot` (a failed
/// stream's are its status's metadata).
fn rest_of_stream(
    stream: tonic::Streaming<Bytes>,
    method: MethodDescriptor,
    slot: super::TrailerSlot,
) -> impl futures::Stream<Item = Result<Bytes, NetError>> {
    futures::stream::unfold(Some(stream), move |state| {
        let (method, slot) = (method.clone(), slot.clone());
        async move {
            let mut stream = state?;
            match stream.message().await {
                Ok(Some(m)) => Some((Ok(m), Some(stream))),
                Ok(None) => {
                    keep_trailers(&slot, stream.trailers().await.ok().flatten().as_ref());
                    None
                }
                Err(s) => {
                    keep_trailers(&slot, Some(s.metadata()));
                    Some((Err(status_error(&method, &s)), None))
                }
            }
        }
    })
}

fn keep_trailers(slot: &super::TrailerSlot, meta: Option<&MetadataMap>) {
    if let (Some(meta), Ok(mut held)) = (meta, slot.lock()) {
        *held = Some(metadata_pairs(meta));
    }
}

fn metadata_pairs(meta: &MetadataMap) -> Vec<(String, String)> {
    meta.iter()
        .map(|kv| match kv {
            KeyAndValueRef::Ascii(k, v) => (k.as_str().to_string(), v.to_str().unwrap_or("").to_string()),
            KeyAndValueRef::Binary(k, v) => {
                let b = v.to_bytes().map(|b| base64::engine::general_purpose::STANDARD.encode(b));
                (k.as_str().to_string(), b.unwrap_or_default())
            }
        })
        .collect()
}
