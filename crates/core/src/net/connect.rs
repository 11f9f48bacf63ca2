//! From a connection profile to a transport: the one place that turns a [`ConnectionProfile`]
//! into a gRPC, brpc or HTTP/JSON [`Transport`], and into gRPC settings ([`grpc_settings`], for
//! the jobs that hold a [`GrpcTransport`] of their own). The CLI, the jobs and the app all come
//! through here, so a profile means the same thing everywhere.
//!
//! Owns: reading the profile's secret (once, at connect), TLS and client certificates, the
//! message-size limit and the connect timeout. Must never: put a secret anywhere but the
//! connection itself (never into [`super::CallOptions`], so never into a history entry), reach
//! an address other than the profile's endpoint, or connect with a setting the transport cannot
//! carry (TLS, credentials or headers on brpc, an address with user info): those are refused
//! first ([`super::edges::check_profile`]).

use super::brpc::BrpcTransport;
use super::grpc::{GrpcSettings, GrpcTransport};
use super::http_json::HttpJsonTransport;
use super::profile::{ConnectionProfile, TransportKind};
use super::{NetError, Transport};
use std::sync::Arc;
use std::time::Duration;

/// What a profile does not say about a connection.
#[derive(Debug, Clone, Copy)]
pub struct ConnectOptions {
    /// gRPC: the largest message accepted or sent.
    pub max_message_bytes: usize,
    /// How long to wait for the connection (gRPC: TCP + TLS + HTTP/2; brpc: TCP).
    pub connect_timeout: Duration,
    /// gRPC: where the profile's `dbname` and extra headers go.
    pub metadata: ProfileMetadata,
}

/// Where a profile's `dbname` and extra headers go on a gRPC connection.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ProfileMetadata {
    /// With each call, from [`ConnectionProfile::call_options`] (the CLI's `call`, the
    /// composer: a history entry records them and a re-send repeats them).
    #[default]
    EachCall,
    /// On the connection, so every call over it carries them: for the calls made without the
    /// profile at hand (a salvage's and a replay's Milvus calls, schema reflection).
    Connection,
}

impl Default for ConnectOptions {
    fn default() -> Self {
        ConnectOptions {
            max_message_bytes: super::grpc::DEFAULT_MAX_MESSAGE_BYTES,
            connect_timeout: Duration::from_secs(5),
            metadata: ProfileMetadata::EachCall,
        }
    }
}

/// Connects as the profile says, with default [`ConnectOptions`]. gRPC connects now (a wrong
/// address or TLS setting fails here); brpc connects on the first call; HTTP/JSON opens one
/// connection per call. Use [`ConnectionProfile::call_options`] for the calls.
pub async fn connect(profile: &ConnectionProfile) -> Result<Arc<dyn Transport>, NetError> {
    connect_with(profile, &ConnectOptions::default()).await
}

/// [`connect()`] with explicit options.
pub async fn connect_with(
    profile: &ConnectionProfile,
    options: &ConnectOptions,
) -> Result<Arc<dyn Transport>, NetError> {
    super::edges::check_profile(profile)?;
    Ok(match profile.transport {
        TransportKind::Grpc => Arc::new(connect_grpc(profile, options).await?),
        TransportKind::Brpc => {
            let mut t = BrpcTransport::new(profile.endpoint.clone());
            t.connect_timeout = options.connect_timeout;
            Arc::new(t)
        }
        TransportKind::Http => Arc::new(HttpJsonTransport::new(profile.endpoint.clone())),
    })
}

/// The gRPC transport of a profile (whatever its `transport` says): TLS, client certificate,
/// credentials. The `dbname` and extra headers are not attached to the connection; they come
/// with each call from [`ConnectionProfile::call_options`].
pub async fn connect_grpc(
    profile: &ConnectionProfile,
    options: &ConnectOptions,
) -> Result<GrpcTransport, NetError> {
    GrpcTransport::connect(&grpc_settings(profile, options)?).await
}

/// The gRPC settings of a profile, the one way: its endpoint (refused with user info in it), TLS,
/// client certificate, credentials with the secret read now, the options' message-size limit
/// and connect timeout, and, when the options say so, its `dbname` and extra headers.
pub fn grpc_settings(
    profile: &ConnectionProfile,
    options: &ConnectOptions,
) -> Result<GrpcSettings, NetError> {
    super::edges::check_endpoint(&profile.endpoint).map_err(NetError::Unsupported)?;
    let mut s = GrpcSettings::new(profile.endpoint.clone());
    s.tls = profile.tls_mode();
    s.client_cert = profile.client_cert.clone();
    s.auth = profile
        .grpc_auth()
        .map_err(|e| NetError::Profile { profile: profile.name.clone(), reason: e.to_string() })?;
    s.max_message_bytes = options.max_message_bytes;
    s.connect_timeout = options.connect_timeout;
    if options.metadata == ProfileMetadata::Connection {
        s.db_name = profile.db_name.clone();
        s.headers = profile.headers.clone();
    }
    Ok(s)
}
