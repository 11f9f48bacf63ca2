//! `walscope salvage` and `walscope demo`, and the connection flags every server command
//! shares ([`ConnArgs`]: laid over a saved profile or over a bare address, then connected
//! through [`crate::net::connect()`]). `call` and `history` live in `call_cmd` and
//! `history_cmd`.
//!
//! Must never: print a password or token, or leave a dump whose manifest is ahead of its bytes
//! (the salvage job guarantees that; Ctrl-C keeps everything up to the last sync).

use crate::jobs::salvage::{self, SalvageSpec, SalvageState};
use crate::net::ConnectOptions;
use crate::net::grpc::{Auth, GrpcSettings, TlsMode};
use crate::net::profile::{
    AuthSettings, ConnectionProfile, ProfileError, ProfileStore, SecretRef, TlsSettings,
    TransportKind as ProfileTransport,
};
use crate::sim::milvus::{MilvusDemo, MilvusDemoConfig};
use anyhow::{Context, Result, anyhow, bail};
use clap::{Args, ValueEnum};
use std::io::Write;
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

/// How to reach a server: TLS, credentials, headers, deadline.
#[derive(Args, Debug, Clone, Default)]
pub struct ConnArgs {
    /// No TLS (the default unless --cacert, --tls or --insecure).
    #[arg(long, conflicts_with_all = ["cacert", "insecure", "tls"])]
    pub plaintext: bool,
    /// TLS verified against the system's root certificates.
    #[arg(long, conflicts_with_all = ["cacert", "insecure"])]
    pub tls: bool,
    /// TLS verified against this CA certificate (PEM).
    #[arg(long, value_name = "FILE", conflicts_with = "insecure")]
    pub cacert: Option<PathBuf>,
    /// TLS WITHOUT verifying the server's certificate (encrypted, not authenticated).
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
    /// Extra header KEY:VALUE (repeatable).
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
        for h in &self.headers {
            let (k, v) = h.split_once(':').ok_or_else(|| anyhow!("header \"{h}\" must be KEY:VALUE"))?;
            s.headers.push((k.trim().to_string(), v.trim().to_string()));
        }
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

    /// `-H KEY:VALUE` flags as pairs.
    pub fn header_pairs(&self) -> Result<Vec<(String, String)>> {
        self.headers
            .iter()
            .map(|h| {
                let (k, v) = h.split_once(':').ok_or_else(|| anyhow!("header \"{h}\" must be KEY:VALUE"))?;
                Ok((k.trim().to_string(), v.trim().to_string()))
            })
            .collect()
    }

    pub fn connect_options(&self) -> ConnectOptions {
        ConnectOptions {
            max_message_bytes: self.max_message_mib.max(1) << 20,
            connect_timeout: Duration::from_secs(10),
        }
    }
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
                (ConnectionProfile::plain(endpoint, transport.profile_kind(), endpoint.to_string()), false)
            }
        };
        Ok(Target { profile: conn.overlay(profile)?, saved })
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

#[derive(Args, Debug, Clone)]
pub struct SalvageArgs {
    /// The promoted cluster, which holds the salvage checkpoint.
    #[arg(long, value_name = "ENDPOINT")]
    pub new_primary: String,
    /// The failed cluster, whose WAL is dumped.
    #[arg(long, value_name = "ENDPOINT")]
    pub old_primary: String,
    /// Cluster id of the old primary (its msgChannel.chanNamePrefix.cluster, e.g. by-dev).
    #[arg(long, value_name = "ID")]
    pub source_cluster_id: String,
    /// A pchannel of the new primary, e.g. by-dev-rootcoord-dml_0.
    #[arg(long, value_name = "NAME")]
    pub pchannel: String,
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Stop after this timetick (default: run until Ctrl-C).
    #[arg(long, value_name = "T", default_value_t = 0)]
    pub end_timetick: u64,
    /// Continue FILE from its manifest.
    #[arg(long)]
    pub resume: bool,
    /// Reconnects after a dropped stream.
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub retries: u32,
}

/// `salvage`: runs the job with a progress line on stderr.
pub fn salvage(args: &SalvageArgs, conn: &ConnArgs) -> Result<()> {
    let spec = SalvageSpec {
        new_primary: conn.settings(&args.new_primary)?,
        old_primary: conn.settings(&args.old_primary)?,
        source_cluster_id: args.source_cluster_id.clone(),
        pchannel: args.pchannel.clone(),
        out: args.out.clone(),
        end_timetick: args.end_timetick,
        resume: args.resume,
        max_retries: args.retries,
        timeout: conn.timeout()?,
        sync: crate::dump::SyncPolicy::default(),
    };
    runtime()?.block_on(async {
        let mut handle = salvage::spawn(spec);
        let mut progress = handle.progress.clone();
        let printer = tokio::spawn(async move {
            while progress.changed().await.is_ok() {
                let p = progress.borrow_and_update().clone();
                let state = match &p.state {
                    SalvageState::Reconnecting { attempt, reason } => {
                        format!("reconnecting ({attempt}): {reason}")
                    }
                    s => format!("{s:?}").to_lowercase(),
                };
                eprint!(
                    "\r{} frames, {:.1} MiB, {:.0} msg/s, tt {}, {}   ",
                    p.frames,
                    p.bytes as f64 / (1 << 20) as f64,
                    p.rate_per_s,
                    crate::wal::format_timetick(p.last_timetick),
                    state
                );
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        });
        let result = (&mut handle.task).await;
        printer.abort();
        eprintln!();
        let outcome = result.map_err(|e| anyhow!("salvage task: {e}"))??;
        eprintln!(
            "wrote {} frames ({} in this run) to {}{}",
            outcome.manifest.frames,
            outcome.written,
            args.out.display(),
            if outcome.manifest.complete { "; complete" } else { "; resumable with --resume" }
        );
        Ok(())
    })
}

/// `demo`: the demo Milvus, SyncTool and DataCollector in the foreground until Ctrl-C.
pub fn demo(milvus_port: u16, synctool_port: u16, collector_port: u16) -> Result<()> {
    runtime()?.block_on(async {
        let local = |port: u16| std::net::SocketAddr::from(([127, 0, 0, 1], port));
        let config = MilvusDemoConfig { addr: local(milvus_port), ..Default::default() };
        let server = MilvusDemo::start(config).await?;
        let datasync = crate::sim::datasync::DatasyncDemo::start(
            local(synctool_port),
            local(collector_port),
            Duration::from_secs(10),
            crate::sim::collector::CollectorConfig::default(),
        )
        .await
        .context("cannot start the demo SyncTool/DataCollector (port in use? choose others with --synctool-port/--collector-port)")?;
        // The servers must outlive whoever reads this banner: a closed stdout (`| head -1`, a
        // test that read the address it needed) is not a reason to stop serving.
        let banner = format!(
            "demo Milvus (gRPC)           {}\n  old cluster id for salvage: {}\n\
             demo SyncTool (brpc + HTTP)  {}\ndemo DataCollector (brpc)    {}\n\
             tables to sync: demo_db.orders, demo_db.users, demo_db.clicks (demo_db.cache is memory storage)\n",
            server.addr(),
            crate::sim::milvus::OLD_CLUSTER_ID,
            datasync.synctool.addr(),
            datasync.collector.addr()
        );
        let mut out = std::io::stdout();
        let _ = out.write_all(banner.as_bytes()).and_then(|()| out.flush());
        std::future::pending::<()>().await;
        Ok(())
    })
}
