//! Schemas by gRPC server reflection: `grpc.reflection.v1`, falling back to `v1alpha`. Lists
//! the services, fetches the file defining each, then walks `dependency` and asks for every
//! file the pool lacks by name (servers answer a symbol with its file only, not its imports).
//!
//! Must never: half-load a schema (files join the [`SchemaSet`] all at once), or stay silent
//! about a dependency the server could not provide. Milvus itself serves no reflection
//! (reference §7); this is for other servers and the demo.

use super::grpc::GrpcTransport;
use crate::schema::{Origin, SchemaError, SchemaSet};
use prost::Message;
use prost_types::FileDescriptorProto;
use std::collections::{HashMap, VecDeque};
use tonic::metadata::{AsciiMetadataKey, AsciiMetadataValue};
use tonic_reflection::pb::{v1, v1alpha};

#[derive(Debug, thiserror::Error)]
pub enum ReflectionError {
    #[error(
        "{endpoint} does not serve gRPC reflection (v1 nor v1alpha): load schemas with --proto or \
         --descriptor-set instead (Milvus never serves reflection; the built-in schemas cover it)"
    )]
    NotServed { endpoint: String },
    #[error("{endpoint}: reflection failed: {reason}")]
    Failed { endpoint: String, reason: String },
    #[error("{endpoint}: reflection cannot provide {file}, imported by {needed_by}: {reason}")]
    MissingDependency { endpoint: String, file: String, needed_by: String, reason: String },
    #[error(transparent)]
    Schema(#[from] SchemaError),
}

enum Ask {
    List,
    Symbol(String),
    File(String),
}

enum Answer {
    Services(Vec<String>),
    Files(Vec<Vec<u8>>),
    Error(String),
}

/// One reflection stream, whichever version the server speaks; questions go one at a time.
enum Session {
    V1(
        tokio::sync::mpsc::Sender<v1::ServerReflectionRequest>,
        tonic::Streaming<v1::ServerReflectionResponse>,
    ),
    V1Alpha(
        tokio::sync::mpsc::Sender<v1alpha::ServerReflectionRequest>,
        tonic::Streaming<v1alpha::ServerReflectionResponse>,
    ),
}

fn with_headers<T>(t: &GrpcTransport, body: T) -> tonic::Request<T> {
    let mut req = tonic::Request::new(body);
    for (k, v) in t.headers() {
        if let (Ok(k), Ok(v)) =
            (AsciiMetadataKey::from_bytes(k.as_bytes()), AsciiMetadataValue::try_from(v.as_str()))
        {
            req.metadata_mut().append(k, v);
        }
    }
    req
}

macro_rules! answer {
    ($pb:ident, $resp:expr) => {
        match $resp.message_response {
            Some($pb::server_reflection_response::MessageResponse::ListServicesResponse(l)) => {
                Answer::Services(l.service.into_iter().map(|s| s.name).collect())
            }
            Some($pb::server_reflection_response::MessageResponse::FileDescriptorResponse(f)) => {
                Answer::Files(f.file_descriptor_proto)
            }
            Some($pb::server_reflection_response::MessageResponse::ErrorResponse(e)) => {
                Answer::Error(e.error_message)
            }
            _ => Answer::Error("unexpected reply".into()),
        }
    };
}

macro_rules! request {
    ($pb:ident, $ask:expr) => {{
        use $pb::server_reflection_request::MessageRequest as M;
        let message_request = match $ask {
            Ask::List => M::ListServices(String::new()),
            Ask::Symbol(s) => M::FileContainingSymbol(s),
            Ask::File(f) => M::FileByFilename(f),
        };
        $pb::ServerReflectionRequest { host: String::new(), message_request: Some(message_request) }
    }};
}

impl Session {
    async fn open(t: &GrpcTransport) -> Result<Session, ReflectionError> {
        let failed = |s: tonic::Status| ReflectionError::Failed {
            endpoint: t.endpoint_text(),
            reason: s.message().to_string(),
        };
        let (tx, rx) = tokio::sync::mpsc::channel(4);
        let mut client = v1::server_reflection_client::ServerReflectionClient::new(t.channel());
        let stream = tokio_stream::wrappers::ReceiverStream::new(rx);
        match client.server_reflection_info(with_headers(t, stream)).await {
            Ok(r) => return Ok(Session::V1(tx, r.into_inner())),
            Err(s) if s.code() != tonic::Code::Unimplemented => return Err(failed(s)),
            Err(_) => {}
        }
        let (tx, rx) = tokio::sync::mpsc::channel(4);
        let mut client = v1alpha::server_reflection_client::ServerReflectionClient::new(t.channel());
        let stream = tokio_stream::wrappers::ReceiverStream::new(rx);
        match client.server_reflection_info(with_headers(t, stream)).await {
            Ok(r) => Ok(Session::V1Alpha(tx, r.into_inner())),
            Err(s) if s.code() == tonic::Code::Unimplemented => {
                Err(ReflectionError::NotServed { endpoint: t.endpoint_text() })
            }
            Err(s) => Err(failed(s)),
        }
    }

    async fn ask(&mut self, ask: Ask) -> Result<Answer, String> {
        let closed = || "the server closed the reflection stream".to_string();
        match self {
            Session::V1(tx, rx) => {
                tx.send(request!(v1, ask)).await.map_err(|_| closed())?;
                let r = rx.message().await.map_err(|s| s.message().to_string())?.ok_or_else(closed)?;
                Ok(answer!(v1, r))
            }
            Session::V1Alpha(tx, rx) => {
                tx.send(request!(v1alpha, ask)).await.map_err(|_| closed())?;
                let r = rx.message().await.map_err(|s| s.message().to_string())?.ok_or_else(closed)?;
                Ok(answer!(v1alpha, r))
            }
        }
    }
}

impl GrpcTransport {
    fn endpoint_text(&self) -> String {
        use super::Transport;
        self.endpoint().to_string()
    }
}

/// The services the server lists by reflection (reflection itself left out), without loading
/// any schema: does reflection answer, and with what.
pub async fn list_services(t: &GrpcTransport) -> Result<Vec<String>, ReflectionError> {
    let endpoint = t.endpoint_text();
    let failed = |reason: String| ReflectionError::Failed { endpoint: endpoint.clone(), reason };
    let mut session = Session::open(t).await?;
    match session.ask(Ask::List).await.map_err(failed)? {
        Answer::Services(s) => Ok(s.into_iter().filter(|s| !s.starts_with("grpc.reflection.")).collect()),
        Answer::Error(e) => Err(failed(format!("list services: {e}"))),
        Answer::Files(_) => Err(failed("list services: unexpected reply".into())),
    }
}

/// Loads every service the server lists (except reflection itself) into `set`; returns the
/// service names.
pub async fn load(t: &GrpcTransport, set: &mut SchemaSet) -> Result<Vec<String>, ReflectionError> {
    let endpoint = t.endpoint_text();
    let failed = |reason: String| ReflectionError::Failed { endpoint: endpoint.clone(), reason };
    let mut session = Session::open(t).await?;
    let services = match session.ask(Ask::List).await.map_err(failed)? {
        Answer::Services(s) => s,
        Answer::Error(e) => return Err(failed(format!("list services: {e}"))),
        Answer::Files(_) => return Err(failed("list services: unexpected reply".into())),
    };
    let services: Vec<String> = services.into_iter().filter(|s| !s.starts_with("grpc.reflection.")).collect();
    let mut files: HashMap<String, FileDescriptorProto> = HashMap::new();
    let mut queue: VecDeque<(String, String)> = VecDeque::new();
    let take = |bytes: Vec<Vec<u8>>,
                files: &mut HashMap<String, FileDescriptorProto>,
                queue: &mut VecDeque<(String, String)>| {
        for b in bytes {
            let f = FileDescriptorProto::decode(b.as_slice())
                .map_err(|e| format!("bad FileDescriptorProto: {e}"))?;
            for dep in &f.dependency {
                queue.push_back((dep.clone(), f.name().to_string()));
            }
            files.insert(f.name().to_string(), f);
        }
        Ok::<_, String>(())
    };
    for s in &services {
        match session.ask(Ask::Symbol(s.clone())).await.map_err(failed)? {
            Answer::Files(b) => take(b, &mut files, &mut queue).map_err(failed)?,
            Answer::Error(e) => return Err(failed(format!("file containing {s}: {e}"))),
            Answer::Services(_) => return Err(failed(format!("file containing {s}: unexpected reply"))),
        }
    }
    while let Some((dep, needed_by)) = queue.pop_front() {
        if files.contains_key(&dep) || set.origin_of_file(&dep).is_some() {
            continue;
        }
        let missing = |reason: String| ReflectionError::MissingDependency {
            endpoint: endpoint.clone(),
            file: dep.clone(),
            needed_by: needed_by.clone(),
            reason,
        };
        match session.ask(Ask::File(dep.clone())).await.map_err(missing)? {
            Answer::Files(b) if !b.is_empty() => take(b, &mut files, &mut queue).map_err(missing)?,
            Answer::Error(e) => return Err(missing(e)),
            _ => return Err(missing("no file in the reply".into())),
        }
    }
    set.add_files(files.into_values().collect(), Origin::Reflection(endpoint.clone()))?;
    Ok(services)
}
