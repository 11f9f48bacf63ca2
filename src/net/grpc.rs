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
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::metadata::{AsciiMetadataKey, AsciiMetadataValue, KeyAndValueRef, MetadataMap};
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint, Identity};
use tonic::{Code, Status};

/// Milvus's default message limit (`proxy.grpc.serverMaxSendSize`); tonic's own is 4 MiB.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 512 << 20;
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
    channel: Channel,
    metadata: Vec<(String, String)>,
    max_message_bytes: usize,
    insecure: bool,
}

impl GrpcTransport {
    /// Connects now, so a wrong address, port or TLS setting is reported here, not on the
    /// first call.
    pub async fn connect(settings: &GrpcSettings) -> Result<GrpcTransport, NetError> {
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
            .tcp_nodelay(true);
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
        let channel = channel.map_err(|e| {
            let reason = error_chain(&e);
            let hint = connect_hint(&reason, &settings.tls);
            fail(format!("{reason}{hint}"))
        })?;
        Ok(GrpcTransport {
            endpoint: settings.endpoint.clone(),
            channel,
            metadata: settings.metadata(),
            max_message_bytes: settings.max_message_bytes,
            insecure: settings.tls == TlsMode::Insecure,
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
        req: &DynamicMessage,
        opts: &CallOptions,
    ) -> Result<(tonic::Request<Bytes>, http::uri::PathAndQuery), NetError> {
        let mut request = tonic::Request::new(Bytes::from(crate::codec::encode(req)));
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
            let started = Instant::now();
            let (mut req, path) = self.request(method, request, opts)?;
            if let Some(t) = opts.timeout {
                req.set_timeout(t);
            }
            let call = async {
                let mut client = self.ready(method).await?;
                client.unary(req, path, RawCodec).await.map_err(|s| status_error(method, &s))
            };
            let reply = match opts.timeout {
                Some(t) => tokio::time::timeout(t, call).await.map_err(|_| deadline(method, t))??,
                None => call.await?,
            };
            let (meta, bytes, _) = reply.into_parts();
            let message = super::decode_reply(method, &bytes)?;
            let info =
                CallInfo { headers: metadata_pairs(&meta), elapsed: started.elapsed(), ..Default::default() };
            Ok(UnaryReply { bytes, message, info })
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
            let (req, path) = self.request(method, request, opts)?;
            let method_owned = method.clone();
            // The timeout covers the first message only: a dump may rightly run for hours.
            let open = async {
                let mut client = self.ready(method).await?;
                let response = client
                    .server_streaming(req, path, RawCodec)
                    .await
                    .map_err(|s| status_error(method, &s))?;
                let headers = metadata_pairs(response.metadata());
                let mut stream = response.into_inner();
                let first = stream.message().await.map_err(|s| status_error(method, &s))?;
                Ok::<_, NetError>((headers, first, stream))
            };
            let (headers, first, stream) = match opts.timeout {
                Some(t) => tokio::time::timeout(t, open).await.map_err(|_| deadline(method, t))??,
                None => open.await?,
            };
            let rest = stream.map(move |r| r.map_err(|s| status_error(&method_owned, &s)));
            let messages = match first {
                Some(m) => futures::stream::once(async move { Ok(m) }).chain(rest).boxed(),
                None => futures::stream::empty().boxed(),
            };
            Ok(StreamReply { messages, headers })
        }
        .boxed()
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

/// The error and all its causes on one line: tonic's top-level text alone says nothing.
pub fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = s.source();
    }
    out
}

fn connect_hint(reason: &str, tls: &TlsMode) -> String {
    let r = reason.to_ascii_lowercase();
    let hint = if r.contains("refused") {
        "nothing listens there: check host and port (Milvus's default is 19530) and that the server runs"
    } else if r.contains("certificate") || r.contains("unknownissuer") || r.contains("invalid peer") {
        "the server's certificate is not trusted: pass its CA with --cacert FILE, or --insecure to skip verification"
    } else if *tls != TlsMode::Plaintext
        && (r.contains("corrupt") || r.contains("invalidcontenttype") || r.contains("record"))
    {
        "the server does not seem to speak TLS: try --plaintext"
    } else if *tls == TlsMode::Plaintext && (r.contains("closed") || r.contains("frame") || r.contains("h2"))
    {
        "the server may require TLS: try --cacert FILE or --insecure"
    } else if r.contains("timed out") || r.contains("elapsed") {
        "no answer in time: check the address, firewalls, and whether the host is up"
    } else {
        return String::new();
    };
    format!(" (hint: {hint})")
}

/// The canonical upper-case name of a gRPC code, as grpcurl and the Go client print it.
pub fn code_name(code: Code) -> &'static str {
    match code {
        Code::Ok => "OK",
        Code::Cancelled => "CANCELLED",
        Code::Unknown => "UNKNOWN",
        Code::InvalidArgument => "INVALID_ARGUMENT",
        Code::DeadlineExceeded => "DEADLINE_EXCEEDED",
        Code::NotFound => "NOT_FOUND",
        Code::AlreadyExists => "ALREADY_EXISTS",
        Code::PermissionDenied => "PERMISSION_DENIED",
        Code::ResourceExhausted => "RESOURCE_EXHAUSTED",
        Code::FailedPrecondition => "FAILED_PRECONDITION",
        Code::Aborted => "ABORTED",
        Code::OutOfRange => "OUT_OF_RANGE",
        Code::Unimplemented => "UNIMPLEMENTED",
        Code::Internal => "INTERNAL",
        Code::Unavailable => "UNAVAILABLE",
        Code::DataLoss => "DATA_LOSS",
        Code::Unauthenticated => "UNAUTHENTICATED",
    }
}

/// A gRPC status as a [`NetError`], with a hint for the codes an operator can act on.
pub fn status_error(method: &MethodDescriptor, status: &Status) -> NetError {
    let name = method.name();
    let hint = match status.code() {
        Code::DeadlineExceeded if name == "GetReplicateInfo" => {
            " (hint: Milvus 2.6.9 to 2.6.18 can hang in GetReplicateInfo until the deadline \
             (milvus#50344, fixed in 2.6.19); upgrade the new primary or read the checkpoint elsewhere)"
        }
        Code::DeadlineExceeded => " (hint: raise --timeout, or check that the server is not overloaded)",
        Code::Unauthenticated => {
            " (hint: the server requires credentials: --user U --password-env VAR, or a token)"
        }
        Code::PermissionDenied => " (hint: the user lacks the privilege for this call)",
        Code::Unimplemented if name == "DumpMessages" || name == "GetReplicateInfo" => {
            " (hint: the server predates this RPC; DumpMessages and salvage checkpoints need Milvus 2.6.14+)"
        }
        Code::Unimplemented => {
            " (hint: the server does not offer this method; check service and method names)"
        }
        Code::ResourceExhausted if status.message().contains("message length") => {
            " (hint: a message exceeds the size limit; raise --max-message-size)"
        }
        Code::Unavailable => {
            " (hint: the server is unreachable or restarting; check address and TLS settings)"
        }
        _ => "",
    };
    NetError::Status {
        method: method.full_name().to_string(),
        code: code_name(status.code()).to_string(),
        numeric: status.code() as i32,
        message: status.message().to_string(),
        hint: hint.to_string(),
    }
}
