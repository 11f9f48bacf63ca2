//! `walscope demo`, and the connection flags every server command shares ([`ConnArgs`]: laid
//! over a saved profile or over a bare address, then connected through
//! [`crate::net::connect()`]). `salvage`, `call` and `history` live in `salvage_cmd`,
//! `call_cmd` and `history_cmd`.
//!
//! Must never: print a password or token, or stop serving because whoever reads the banner went
//! away.

use crate::net::ConnectOptions;
use crate::net::grpc::{Auth, GrpcSettings, TlsMode};
use crate::net::profile::{
    AuthSettings, ConnectionProfile, ProfileError, ProfileStore, SecretRef, TlsSettings,
    TransportKind as ProfileTransport,
};
use anyhow::{Context, Result, anyhow, bail};
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TransportKind {
    /// gRPC over HTTP/2 (Milvus).
    Grpc,
    /// brpc baidu_std over TCP (OpenMLDB SyncTool and DataCollector).
    Brpc,
    /// HTTP/1.1 + JSON (SyncTool's fallback).
    Http,
}

/// How to reach a server: TLS, credentials, headers, deadline. TLS and credentials are gRPC's only
/// (with brpc or HTTP/JSON they are refused, never dropped); headers go over gRPC and HTTP/JSON,
/// and brpc refuses them.
#[derive(Args, Debug, Clone, Default)]
pub struct ConnArgs {
    /// No TLS (the default unless --cacert, --tls or --insecure).
    #[arg(long, conflicts_with_all = ["cacert", "insecure", "tls"])]
    pub plaintext: bool,
    /// TLS verified against the system's root certificates (gRPC only).
    #[arg(long, conflicts_with_all = ["cacert", "insecure"])]
    pub tls: bool,
    /// TLS verified against this CA certificate (PEM) (gRPC only).
    #[arg(long, value_name = "FILE", conflicts_with = "insecure")]
    pub cacert: Option<PathBuf>,
    /// TLS WITHOUT verifying the server's certificate (encrypted, not authenticated; gRPC only).
    #[arg(long)]
    pub insecure: bool,
    /// Client certificate (PEM) for mutual TLS; needs --key.
    #[arg(long, value_name = "FILE", requires = "key")]
    pub cert: Option<PathBuf>,
    /// Client private key (PEM) for mutual TLS.
    #[arg(long, value_name = "FILE", requires = "cert")]
    pub key: Option<PathBuf>,
    /// Milvus user; the password comes from --password-env.
    #[arg(long, value_name = "U", requires = "password_env")]
    pub user: Option<String>,
    /// Name of the environment variable holding the password.
    #[arg(long, value_name = "VAR")]
    pub password_env: Option<String>,
    /// Name of the environment variable holding an API key / token.
    #[arg(long, value_name = "VAR", conflicts_with = "user")]
    pub token_env: Option<String>,
    /// Database name (header `dbname`).
    #[arg(long, value_name = "DB")]
    pub db: Option<String>,
    /// Extra header KEY:VALUE (repeatable): gRPC metadata, or an HTTP header over HTTP/JSON;
    /// brpc has no headers and refuses it.
    #[arg(short = 'H', long = "header", value_name = "KEY:VALUE")]
    pub headers: Vec<String>,
    /// Deadline in seconds (for a stream: for its first message); default: the profile's
    /// timeout, else 30.
    #[arg(long, value_name = "S")]
    pub timeout: Option<f64>,
    /// Largest message accepted, in MiB.
    #[arg(long = "max-message-size", value_name = "MIB", default_value_t = 512)]
    pub max_message_mib: usize,
}

impl ConnArgs {
    pub fn settings(&self, endpoint: &str) -> Result<GrpcSettings> {
        let mut s = GrpcSettings::new(endpoint);
        s.tls = if self.insecure {
            TlsMode::Insecure
        } else if let Some(ca) = &self.cacert {
            TlsMode::CaFile(ca.clone())
        } else if self.tls {
            TlsMode::SystemRoots
        } else {
            TlsMode::Plaintext
        };
        if let (Some(c), Some(k)) = (&self.cert, &self.key) {
            s.client_cert = Some((c.clone(), k.clone()));
        }
        let env =
            |var: &str| std::env::var(var).with_context(|| format!("environment variable {var} is not set"));
        s.auth = match (&self.user, &self.password_env, &self.token_env) {
            (Some(user), Some(var), _) => {
                Some(Auth::UserPassword { user: user.clone(), password: env(var)? })
            }
            (None, Some(_), _) => bail!("--password-env needs --user"),
            (_, _, Some(var)) => Some(Auth::Token(env(var)?)),
            _ => None,
        };
        s.db_name = self.db.clone();
        s.headers = self.header_pairs()?;
        s.max_message_bytes = self.max_message_mib.max(1) << 20;
        Ok(s)
    }

    pub fn timeout(&self) -> Result<Duration> {
        Ok(self.timeout_flag()?.unwrap_or(DEFAULT_TIMEOUT))
    }

    /// `--timeout` when given.
    pub fn timeout_flag(&self) -> Result<Option<Duration>> {
        self.timeout
            .map(|t| {
                Duration::try_from_secs_f64(t)
                    .map_err(|_| anyhow!("--timeout must be a positive number of seconds"))
            })
            .transpose()
    }

    /// The flags laid over a profile (they win where given): TLS, client certificate,
    /// credentials (by variable name; the secret is read at connect), database, headers.
    pub fn overlay(&self, mut p: ConnectionProfile) -> Result<ConnectionProfile> {
        if self.insecure {
            p.tls = TlsSettings::Insecure;
        } else if let Some(ca) = &self.cacert {
            p.tls = TlsSettings::CaFile { ca_file: ca.clone() };
        } else if self.tls {
            p.tls = TlsSettings::System;
        } else if self.plaintext {
            p.tls = TlsSettings::Plaintext;
        }
        if let (Some(c), Some(k)) = (&self.cert, &self.key) {
            p.client_cert = Some((c.clone(), k.clone()));
        }
        match (&self.user, &self.password_env, &self.token_env) {
            (Some(user), Some(var), _) => {
                p.auth = Some(AuthSettings::UserPassword {
                    user: user.clone(),
                    password: SecretRef::Env { var: var.clone() },
                });
            }
            (None, Some(_), _) => bail!("--password-env needs --user"),
            (_, _, Some(var)) => {
                p.auth = Some(AuthSettings::Token { token: SecretRef::Env { var: var.clone() } })
            }
            _ => {}
        }
        if let Some(db) = &self.db {
            p.db_name = Some(db.clone());
        }
        p.headers.extend(self.header_pairs()?);
        Ok(p)
    }

    /// `-H KEY:VALUE` flags as pairs. A flag without a colon is refused by its position, never
    /// quoted: `-H 'authorization Bearer SECRET'` holds a credential.
    pub fn header_pairs(&self) -> Result<Vec<(String, String)>> {
        let n = self.headers.len();
        self.headers
            .iter()
            .enumerate()
            .map(|(i, h)| {
                let Some((k, v)) = h.split_once(':') else {
                    let which =
                        if n == 1 { String::new() } else { format!(" (the {} of {n})", ordinal(i + 1)) };
                    bail!(
                        "a -H header{which} has no colon: write -H 'KEY: VALUE', e.g. -H 'x-trace: 1' \
                         (the header is not shown: it may hold a credential)"
                    );
                };
                Ok((k.trim().to_string(), v.trim().to_string()))
            })
            .collect()
    }

    pub fn connect_options(&self) -> ConnectOptions {
        ConnectOptions {
            max_message_bytes: self.max_message_mib.max(1) << 20,
            connect_timeout: Duration::from_secs(10),
            ..ConnectOptions::default()
        }
    }
}

fn ordinal(n: usize) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// The deadline when neither `--timeout` nor the profile gives one.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// Where a command goes: a saved profile (when `endpoint` names one), else the address with
/// `transport`; the connection flags laid over it.
pub struct Target {
    pub profile: ConnectionProfile,
    /// True when `profile` is a saved one (its name goes into the history).
    pub saved: bool,
}

impl Target {
    pub fn resolve(endpoint: &str, transport: TransportKind, conn: &ConnArgs) -> Result<Target> {
        let saved = if endpoint.contains(':') {
            None
        } else {
            match ProfileStore::user().find(endpoint) {
                Ok(p) => Some(p),
                Err(ProfileError::NotFound(_)) => None,
                Err(e) => return Err(e.into()),
            }
        };
        let (profile, saved) = match saved {
            Some(p) => (p, true),
            None => {
                // Not a profile's name (which may hold an "@"): an address, which never holds
                // credentials; refused before it is echoed, connected to or recorded.
                crate::net::edges::check_endpoint(endpoint).map_err(|words| anyhow!(words))?;
                (ConnectionProfile::plain(endpoint, transport.profile_kind(), endpoint.to_string()), false)
            }
        };
        let profile = conn.overlay(profile)?;
        // What the transport cannot carry is refused now, in the flags' words, before a schema
        // is loaded or a socket opened.
        crate::net::edges::check_profile(&profile)?;
        Ok(Target { profile, saved })
    }

    /// The saved profile's name, if any.
    pub fn profile_name(&self) -> Option<&str> {
        self.saved.then_some(self.profile.name.as_str())
    }
}

impl TransportKind {
    pub fn profile_kind(self) -> ProfileTransport {
        match self {
            TransportKind::Grpc => ProfileTransport::Grpc,
            TransportKind::Brpc => ProfileTransport::Brpc,
            TransportKind::Http => ProfileTransport::Http,
        }
    }

    pub fn from_profile_kind(k: ProfileTransport) -> TransportKind {
        match k {
            ProfileTransport::Grpc => TransportKind::Grpc,
            ProfileTransport::Brpc => TransportKind::Brpc,
            ProfileTransport::Http => TransportKind::Http,
        }
    }
}

pub(super) fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread().enable_all().build().context("cannot start the async runtime")
}

#[cfg(feature = "demo")]
/// `demo`: the demo Milvus failover pair (the new primary on `milvus_port`, the old one on
/// `old_milvus_port`), SyncTool and DataCollector in the foreground until Ctrl-C.
pub fn demo(
    milvus_port: u16,
    old_milvus_port: Option<u16>,
    synctool_port: u16,
    collector_port: u16,
    chunk_bytes: Option<usize>,
) -> Result<()> {
    let local = |port: u16| std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let old_milvus_port = old_milvus_port.unwrap_or_else(|| match milvus_port {
        0 | u16::MAX => 0,
        p if std::net::TcpListener::bind(local(p + 1)).is_ok() => p + 1,
        _ => 0,
    });
    runtime()?.block_on(async {
        let config = crate::sim::demo::DemoConfig {
            milvus: local(milvus_port),
            old_milvus: local(old_milvus_port),
            synctool: local(synctool_port),
            collector: local(collector_port),
            chunk_bytes,
            ..Default::default()
        };
        let demo = crate::sim::demo::Demo::start(config).await.map_err(|e| {
            let flags = match e {
                crate::sim::demo::DemoStartError::Milvus(_) => "--milvus-port/--old-milvus-port",
                crate::sim::demo::DemoStartError::Datasync(_) => "--synctool-port/--collector-port",
            };
            anyhow!("{e} (port in use? choose others with {flags})")
        })?;
        // The servers must outlive whoever reads this banner: a closed stdout (`| head -1`, a
        // test that read the address it needed) is not a reason to stop serving.
        let banner = demo.banner();
        let mut out = std::io::stdout();
        use std::io::Write;
        let _ = out.write_all(banner.as_bytes()).and_then(|()| out.flush());
        std::future::pending::<()>().await;
        Ok(())
    })
}
