//! HTTP/1.1 + JSON, the fallback SyncTool (brpc-java) serves on its brpc port:
//! `POST /<service>/<method>` with `Content-Type: application/json` and a body (`{}` at least).
//! A deliberately small HTTP/1.1 client and server: one request per connection, bounded sizes.
//! Must never: read an unbounded header or body, send SendData rows (HTTP has no attachment),
//! or drop a header without a word: the call's metadata (`-H`, the database header) goes out as
//! HTTP headers, and one that HTTP/1.1 cannot carry (a name that is not a token, a value with a
//! line break, a header walscope sets itself) is refused, naming the header but never its value.
//!
//! HTTP/JSON cannot carry exact request bytes: a request given as bytes
//! ([`Transport::call_unary_bytes`]) is decoded with the method's input type and sent as JSON,
//! so unknown fields and the original encoding do not reach the server, and the reply's bytes
//! are the canonical encoding of the JSON answer, not bytes the server sent.

use super::brpc::server::BrpcService;
use super::{CallInfo, CallOptions, NetError, StreamReply, Transport, UnaryReply};
use bytes::{Bytes, BytesMut};
use futures::future::BoxFuture;
use prost_reflect::{DeserializeOptions, DynamicMessage, MethodDescriptor};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const MAX_HEAD: usize = 64 * 1024;
const MAX_BODY: usize = 64 * 1024 * 1024;

/// A parsed request or response head plus body.
struct Message {
    first_line: String,
    headers: Vec<(String, String)>,
    body: Bytes,
}

impl Message {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// Reads one HTTP message; `buf` may already hold its first bytes.
async fn read_message(stream: &mut TcpStream, mut buf: BytesMut, until_eof: bool) -> Result<Message, String> {
    let head_end = loop {
        // A head that arrived whole in one read is held to the limit too.
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            if i > MAX_HEAD {
                return Err(format!("HTTP head longer than {MAX_HEAD} bytes"));
            }
            break i;
        }
        if buf.len() > MAX_HEAD {
            return Err(format!("HTTP head longer than {MAX_HEAD} bytes"));
        }
        match stream.read_buf(&mut buf).await {
            Ok(0) => return Err("connection closed before the HTTP head ended".into()),
            Ok(_) => {}
            Err(e) => return Err(e.to_string()),
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let first_line = lines.next().unwrap_or_default().to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    let _ = buf.split_to(head_end + 4);
    let length = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .map(|(_, v)| v.parse::<usize>());
    let length = match length {
        Some(Ok(n)) if n <= MAX_BODY => Some(n),
        Some(Ok(n)) => return Err(format!("HTTP body of {n} bytes exceeds {MAX_BODY}")),
        Some(Err(_)) => return Err("bad Content-Length".into()),
        None if until_eof => None,
        None => Some(0),
    };
    loop {
        if length.is_some_and(|n| buf.len() >= n) {
            break;
        }
        if buf.len() > MAX_BODY {
            return Err(format!("HTTP body exceeds {MAX_BODY} bytes"));
        }
        match stream.read_buf(&mut buf).await {
            Ok(0) if length.is_none() => break,
            Ok(0) => return Err("connection closed inside the HTTP body".into()),
            Ok(_) => {}
            Err(e) => return Err(e.to_string()),
        }
    }
    let body = buf.split_to(length.unwrap_or(buf.len())).freeze();
    Ok(Message { first_line, headers, body })
}

/// Client side: one POST per call.
pub struct HttpJsonTransport {
    endpoint: String,
}

impl HttpJsonTransport {
    pub fn new(endpoint: impl Into<String>) -> HttpJsonTransport {
        HttpJsonTransport { endpoint: endpoint.into() }
    }

    async fn post(
        &self,
        path: &str,
        json: &str,
        headers: &[(String, String)],
        timeout: Duration,
    ) -> Result<Message, NetError> {
        super::edges::check_endpoint(&self.endpoint).map_err(NetError::Unsupported)?;
        let extra = header_lines(headers)?;
        let err = |reason: String| NetError::Connect { endpoint: self.endpoint.clone(), reason };
        let work = async {
            let mut s =
                TcpStream::connect(&self.endpoint).await.map_err(|e| err(super::brpc::connect_words(&e)))?;
            let req = format!(
                "POST {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n{extra}\r\n{json}",
                self.endpoint,
                json.len()
            );
            s.write_all(req.as_bytes()).await.map_err(|e| err(e.to_string()))?;
            read_message(&mut s, BytesMut::new(), true)
                .await
                .map_err(|reason| NetError::Protocol { endpoint: self.endpoint.clone(), reason })
        };
        tokio::time::timeout(timeout, work)
            .await
            .map_err(|_| NetError::Timeout { method: path.to_string(), after: timeout })?
    }
}

impl Transport for HttpJsonTransport {
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
            if !opts.attachment.is_empty() {
                return Err(NetError::Unsupported(
                    "HTTP/JSON carries no attachment: send rows over baidu_std (--transport brpc)".into(),
                ));
            }
            let started = Instant::now();
            let name = crate::datasync::calls::wire_method_name(method.name());
            let path = format!("/{}/{name}", method.parent_service().full_name());
            let json = crate::codec::to_json(request, false);
            let timeout = opts.timeout.unwrap_or(super::brpc::DEFAULT_TIMEOUT);
            let reply = self.post(&path, &json, &opts.metadata, timeout).await?;
            let status =
                reply.first_line.split_whitespace().nth(1).and_then(|c| c.parse::<i32>().ok()).unwrap_or(0);
            let text = String::from_utf8_lossy(&reply.body).into_owned();
            if status != 200 {
                return Err(NetError::Status {
                    method: path,
                    code: format!("HTTP {status}"),
                    numeric: status,
                    message: text.trim().to_string(),
                    hint: String::new(),
                });
            }
            let mut de = serde_json::Deserializer::from_str(&text);
            let message = DynamicMessage::deserialize_with_options(
                method.output(),
                &mut de,
                &DeserializeOptions::new().deny_unknown_fields(false),
            )
            .map_err(|e| NetError::Decode {
                method: path.clone(),
                type_name: method.output().full_name().to_string(),
                reason: e.to_string(),
            })?;
            let bytes = Bytes::from(crate::codec::encode(&message));
            let info = CallInfo { elapsed: started.elapsed(), headers: reply.headers, ..CallInfo::default() };
            Ok(UnaryReply { bytes, message, info })
        })
    }

    fn call_server_stream<'a>(
        &'a self,
        method: &'a MethodDescriptor,
        _request: &'a DynamicMessage,
        _opts: &'a CallOptions,
    ) -> BoxFuture<'a, Result<StreamReply, NetError>> {
        super::unary_only(method, "HTTP/JSON carries unary calls only")
    }

    /// Cannot: bytes given to [`Transport::call_unary_bytes`] are decoded and sent as JSON.
    fn sends_exact_bytes(&self) -> bool {
        false
    }
}

/// Headers walscope writes itself; one given again would make the request ambiguous.
const OWN_HEADERS: [&str; 5] = ["host", "content-type", "content-length", "connection", "transfer-encoding"];

/// The call's metadata as HTTP/1.1 header lines, each ending in CRLF; a header HTTP cannot
/// carry is refused by its name (never its value, which may be a credential).
fn header_lines(headers: &[(String, String)]) -> Result<String, NetError> {
    let mut out = String::new();
    for (k, v) in headers {
        if !super::edges::is_token(k) {
            return Err(NetError::Unsupported(
                "a header name is not valid in HTTP (letters, digits and !#$%&'*+-.^_`|~ only): \
                 check the -H flags and the profile's headers"
                    .into(),
            ));
        }
        if OWN_HEADERS.iter().any(|o| o.eq_ignore_ascii_case(k)) {
            return Err(NetError::Unsupported(format!(
                "header \"{k}\" is written by walscope itself for HTTP/JSON calls: drop it"
            )));
        }
        if v.bytes().any(|b| (b < 0x20 && b != b'\t') || b == 0x7f) {
            return Err(NetError::Unsupported(format!(
                "the value of header \"{k}\" holds a line break or a control character, which \
                 HTTP/1.1 cannot carry (the value is not shown)"
            )));
        }
        out.push_str(&format!("{k}: {}\r\n", v.trim()));
    }
    Ok(out)
}

/// Server side, for a brpc port that also speaks HTTP (called with the bytes already read).
pub(super) async fn serve(mut stream: TcpStream, first: BytesMut, service: Arc<dyn BrpcService>) {
    let (status, body) = match read_message(&mut stream, first, false).await {
        Err(e) => (400, e),
        Ok(req) => {
            let path = req.first_line.split_whitespace().nth(1).unwrap_or("/").to_string();
            let mut parts = path.trim_start_matches('/').splitn(2, '/');
            let (svc, method) =
                (parts.next().unwrap_or("").to_string(), parts.next().unwrap_or("").to_string());
            let ct = req.header("content-type").unwrap_or("");
            if !ct.starts_with("application/json") {
                (400, "Content-Type must be application/json".to_string())
            } else if req.body.is_empty() {
                (400, "a request body is required (send {} for no fields)".to_string())
            } else {
                match service.http_json(svc, method, String::from_utf8_lossy(&req.body).into_owned()) {
                    None => (404, "this server does not speak HTTP".to_string()),
                    Some(f) => match f.await {
                        Ok(json) => (200, json),
                        Err((code, text)) => (code, text),
                    },
                }
            }
        }
    };
    let reason = if status == 200 { "OK" } else { "Error" };
    let ct = if status == 200 { "application/json" } else { "text/plain" };
    let resp = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: {ct}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(resp.as_bytes()).await;
    let _ = stream.shutdown().await;
}
