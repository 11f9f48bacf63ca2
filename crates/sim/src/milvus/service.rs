//! The demo Milvus's tonic plumbing without generated code: a tower service that routes by the
//! request path, DumpMessages as a server stream and every other method as a unary call into
//! [`super`]'s state, with raw (pre-encoded) bytes both ways.
//!
//! Must never: decode or judge a request itself (the state does), or panic.

use super::{SERVICE, State};
use crate::net::grpc::RawCodec;
use bytes::Bytes;
use futures::FutureExt;
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};
use tonic::body::Body;
use tonic::server::NamedService;
use tonic::{Request, Response, Status};

#[derive(Clone)]
pub(super) struct MilvusService {
    pub(super) state: Arc<State>,
}

impl NamedService for MilvusService {
    const NAME: &'static str = SERVICE;
}

struct Unary(Arc<State>, String);
impl tonic::server::UnaryService<Bytes> for Unary {
    type Response = Bytes;
    type Future = BoxFuture<'static, Result<Response<Bytes>, Status>>;
    fn call(&mut self, req: Request<Bytes>) -> Self::Future {
        self.0.clone().unary(self.1.clone(), req).boxed()
    }
}

struct Dump(Arc<State>);
impl tonic::server::ServerStreamingService<Bytes> for Dump {
    type Response = Bytes;
    type ResponseStream = BoxStream<'static, Result<Bytes, Status>>;
    type Future = BoxFuture<'static, Result<Response<Self::ResponseStream>, Status>>;
    fn call(&mut self, req: Request<Bytes>) -> Self::Future {
        let state = self.0.clone();
        async move { state.dump(req).map(Response::new) }.boxed()
    }
}

impl<B> tower::Service<http::Request<B>> for MilvusService
where
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>> + Send + 'static,
{
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Self::Response, Infallible>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        let state = self.state.clone();
        let method = req.uri().path().strip_prefix(&format!("/{SERVICE}/")).unwrap_or("").to_string();
        async move {
            let mut grpc = tonic::server::Grpc::new(RawCodec)
                .apply_max_message_size_config(Some(512 << 20), Some(512 << 20));
            let response = match method.as_str() {
                "DumpMessages" => grpc.server_streaming(Dump(state), req).await,
                _ => grpc.unary(Unary(state, method), req).await,
            };
            Ok(response)
        }
        .boxed()
    }
}
