//! A baidu_std server for the demo servers: one task per connection, one task per call (so
//! answers can overtake each other, as brpc's do), and HTTP/1.1 + JSON on the same port, as
//! brpc-java serves it. Malformed packets close the connection.

use super::codec::{ResponseMeta, RpcMeta, encode_packet, take_packet};
use bytes::{Bytes, BytesMut};
use futures::future::BoxFuture;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

/// An RPC failure: brpc error code and text (e.g. 1002, "unknown method").
pub type RpcFailure = (i32, String);

/// A handled call: the response message and attachment, or a failure.
pub type RpcResult = BoxFuture<'static, Result<(Vec<u8>, Vec<u8>), RpcFailure>>;

/// What the server answers. Service and method names are passed as received.
pub trait BrpcService: Send + Sync + 'static {
    /// A baidu_std call: returns the response message and attachment.
    fn call(&self, service: String, method: String, message: Bytes, attachment: Bytes) -> RpcResult;

    /// An HTTP/JSON call to `/<service>/<method>`: returns the response JSON, or an HTTP status
    /// and text. `None` when this server does not speak HTTP.
    fn http_json(
        &self,
        _service: String,
        _method: String,
        _json: String,
    ) -> Option<BoxFuture<'static, Result<String, (u16, String)>>> {
        None
    }
}

pub struct BrpcServer {
    addr: SocketAddr,
    task: tokio::task::JoinHandle<()>,
    /// Connections accepted so far (a client that multiplexes keeps this at one).
    accepted: Arc<std::sync::atomic::AtomicU64>,
}

impl BrpcServer {
    /// Binds (port 0 picks a free port) and starts accepting.
    pub async fn bind(addr: SocketAddr, service: Arc<dyn BrpcService>) -> std::io::Result<BrpcServer> {
        let listener = TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let accepted = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let counter = accepted.clone();
        let task = tokio::spawn(async move {
            loop {
                match listener.accept().await {
                    Ok((stream, _)) => {
                        counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let _ = stream.set_nodelay(true);
                        tokio::spawn(serve_connection(stream, service.clone()));
                    }
                    // A failed accept (a peer that reset before we took it, too many open files)
                    // must not close the listener: pause briefly and keep serving.
                    Err(_) => tokio::time::sleep(std::time::Duration::from_millis(20)).await,
                }
            }
        });
        Ok(BrpcServer { addr, task, accepted })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// How many connections the server has accepted.
    pub fn connections_accepted(&self) -> u64 {
        self.accepted.load(std::sync::atomic::Ordering::Relaxed)
    }

    pub fn shutdown(&self) {
        self.task.abort();
    }
}

impl Drop for BrpcServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn serve_connection(mut stream: TcpStream, service: Arc<dyn BrpcService>) {
    let mut first = BytesMut::with_capacity(64 * 1024);
    while first.len() < 4 {
        match stream.read_buf(&mut first).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
    }
    if first.starts_with(b"POST") || first.starts_with(b"GET ") {
        super::super::http_json::serve(stream, first, service).await;
    } else {
        serve_baidu_std(stream, first, service).await;
    }
}

async fn serve_baidu_std(stream: TcpStream, mut buf: BytesMut, service: Arc<dyn BrpcService>) {
    let (mut rd, mut wr) = stream.into_split();
    let (tx, mut rx) = mpsc::channel::<Vec<u8>>(256);
    let writer = tokio::spawn(async move {
        while let Some(packet) = rx.recv().await {
            if wr.write_all(&packet).await.is_err() {
                break;
            }
        }
    });
    loop {
        match take_packet(&mut buf) {
            Ok(Some(p)) => {
                let id = p.meta.correlation_id;
                let Some(req) = p.meta.request else {
                    let _ =
                        tx.send(error_packet(id, 1003, "a request packet needs request meta".into())).await;
                    continue;
                };
                let (svc, tx) = (service.clone(), tx.clone());
                tokio::spawn(async move {
                    let reply = svc.call(req.service_name, req.method_name, p.message, p.attachment).await;
                    let packet = match reply {
                        Ok((msg, att)) => {
                            let meta = RpcMeta {
                                response: Some(ResponseMeta::default()),
                                correlation_id: id,
                                ..RpcMeta::default()
                            };
                            encode_packet(&meta, &msg, &att)
                        }
                        Err((code, text)) => error_packet(id, code, text),
                    };
                    let _ = tx.send(packet).await;
                });
                continue;
            }
            Ok(None) => {}
            // After a malformed packet nothing on this connection can be trusted.
            Err(_) => break,
        }
        match rd.read_buf(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
    }
    drop(tx);
    let _ = writer.await;
}

fn error_packet(id: i64, code: i32, text: String) -> Vec<u8> {
    let meta = RpcMeta {
        response: Some(ResponseMeta { error_code: code, error_text: text }),
        correlation_id: id,
        ..RpcMeta::default()
    };
    encode_packet(&meta, &[], &[])
}
