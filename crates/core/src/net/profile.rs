//! Connection profiles: name, transport, endpoint, TLS, auth, headers, timeout, kept in
//! `<config dir>/walscope/profiles.json` (`WALSCOPE_CONFIG_DIR` overrides the directory).
//!
//! Must never: write a secret to disk, or quote one back. A profile names where its secret comes
//! from (an environment variable or an OS keyring entry); the file format has no field a
//! password could go into, and a file that tries is refused by line, column and field, never by
//! its value ([`super::profile_errors`]).

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TransportKind {
    Grpc,
    Brpc,
    Http,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case", tag = "mode")]
pub enum TlsSettings {
    /// No TLS (marked insecure in the UI unless the endpoint is loopback).
    #[default]
    Plaintext,
    /// TLS verified against the system's roots.
    System,
    /// TLS verified against this CA file.
    CaFile { ca_file: PathBuf },
    /// TLS without verifying the server: always shown as insecure.
    Insecure,
}

/// Where a secret comes from. Never the secret itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "from", deny_unknown_fields)]
pub enum SecretRef {
    /// An environment variable, read when the connection is made.
    Env { var: String },
    /// The OS keyring (Linux kernel keyring, macOS Keychain, Windows Credential Manager).
    Keyring { service: String, account: String },
}

impl SecretRef {
    pub fn resolve(&self) -> Result<String, ProfileError> {
        match self {
            SecretRef::Env { var } => {
                std::env::var(var).map_err(|_| ProfileError::MissingSecret { var: var.clone() })
            }
            SecretRef::Keyring { service, account } => keyring::Entry::new(service, account)
                .and_then(|e| e.get_password())
                .map_err(|e| ProfileError::Keyring {
                    service: service.clone(),
                    account: account.clone(),
                    reason: e.to_string(),
                }),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", deny_unknown_fields)]
pub enum AuthSettings {
    /// Milvus: `authorization: base64(user:password)`.
    UserPassword { user: String, password: SecretRef },
    /// Milvus: `authorization: base64(token)`.
    Token { token: SecretRef },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConnectionProfile {
    pub name: String,
    pub transport: TransportKind,
    pub endpoint: String,
    #[serde(default)]
    pub tls: TlsSettings,
    /// Client certificate and key files for mutual TLS.
    #[serde(default)]
    pub client_cert: Option<(PathBuf, PathBuf)>,
    #[serde(default)]
    pub auth: Option<AuthSettings>,
    /// Milvus `dbname` header.
    #[serde(default)]
    pub db_name: Option<String>,
    #[serde(default)]
    pub headers: Vec<(String, String)>,
    #[serde(default)]
    pub timeout_secs: Option<u64>,
    /// Methods (`Name` or `pkg.Service/Name`) that ask a confirmation before they are sent,
    /// besides those walscope knows change a server (see `net::guard`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub confirm_methods: Vec<String>,
}

impl ConnectionProfile {
    /// A profile with only a name, a transport and an endpoint: plaintext, no credentials, no
    /// extra headers (the demo servers' profiles, a quick check of an address).
    pub fn plain(name: &str, transport: TransportKind, endpoint: String) -> ConnectionProfile {
        ConnectionProfile {
            name: name.into(),
            transport,
            endpoint,
            tls: TlsSettings::default(),
            client_cert: None,
            auth: None,
            db_name: None,
            headers: Vec::new(),
            timeout_secs: None,
            confirm_methods: Vec::new(),
        }
    }

    /// Per-call settings for calls over a transport made by [`super::connect()`]: the `dbname`
    /// header and the extra headers (metadata that goes with each call, so a history entry
    /// records it and a re-send repeats it), and the profile's timeout as the deadline. The
    /// credentials are not here: [`super::connect()`] reads the secret once and the gRPC
    /// transport attaches `authorization` itself, so no `CallOptions` ever holds a secret.
    pub fn call_options(&self) -> super::CallOptions {
        let mut metadata = Vec::new();
        if let Some(db) = &self.db_name {
            metadata.push(("dbname".to_string(), db.clone()));
        }
        metadata.extend(self.headers.iter().cloned());
        super::CallOptions {
            metadata,
            timeout: self.timeout_secs.map(std::time::Duration::from_secs),
            ..Default::default()
        }
    }

    /// The profile's TLS choice as the gRPC transport takes it.
    pub fn tls_mode(&self) -> super::grpc::TlsMode {
        use super::grpc::TlsMode;
        match &self.tls {
            TlsSettings::Plaintext => TlsMode::Plaintext,
            TlsSettings::System => TlsMode::SystemRoots,
            TlsSettings::CaFile { ca_file } => TlsMode::CaFile(ca_file.clone()),
            TlsSettings::Insecure => TlsMode::Insecure,
        }
    }

    /// The profile's credentials for gRPC, with the secret read now (only ask when they are
    /// going to be used: an unset variable is an error).
    pub fn grpc_auth(&self) -> Result<Option<super::grpc::Auth>, ProfileError> {
        use super::grpc::Auth;
        Ok(match &self.auth {
            None => None,
            Some(AuthSettings::UserPassword { user, password }) => {
                Some(Auth::UserPassword { user: user.clone(), password: password.resolve()? })
            }
            Some(AuthSettings::Token { token }) => Some(Auth::Token(token.resolve()?)),
        })
    }

    /// True when traffic can be read or spoofed: no verification, or plaintext off loopback.
    pub fn is_insecure(&self) -> bool {
        match self.tls {
            TlsSettings::Insecure => true,
            TlsSettings::Plaintext => !is_loopback(&self.endpoint),
            _ => false,
        }
    }

    /// The `authorization` header value, with the secret read now.
    pub fn authorization(&self) -> Result<Option<String>, ProfileError> {
        use base64::Engine;
        let b64 = |s: String| base64::engine::general_purpose::STANDARD.encode(s);
        Ok(match &self.auth {
            None => None,
            Some(AuthSettings::UserPassword { user, password }) => {
                Some(b64(format!("{user}:{}", password.resolve()?)))
            }
            Some(AuthSettings::Token { token }) => Some(b64(token.resolve()?)),
        })
    }
}

/// `127.0.0.1:…`, `localhost:…` or `[::1]:…`.
pub fn is_loopback(endpoint: &str) -> bool {
    let host = endpoint.trim_start_matches("http://").trim_start_matches("https://");
    let host = host.rsplit_once(':').map_or(host, |(h, _)| h);
    host == "localhost" || host == "[::1]" || host.starts_with("127.")
}

#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    #[error("the secret comes from environment variable {var}, which is not set; export it and retry")]
    MissingSecret { var: String },
    #[error(
        "the secret for service \"{service}\", account \"{account}\" is not in the OS keyring ({reason}); store it there, or name an environment variable instead (on Linux the keyring is the login session's kernel keyring: a process outside a login session, such as a service or a container, has none unless started under `keyctl session`)"
    )]
    Keyring { service: String, account: String, reason: String },
    #[error("{path}: {reason}")]
    File { path: PathBuf, reason: String },
    #[error("no connection profile named \"{0}\"; see the profiles file or create one")]
    NotFound(String),
}

/// walscope's configuration directory: `WALSCOPE_CONFIG_DIR` when set, else
/// `<platform config dir>/walscope` (profiles, the call history).
pub fn config_dir() -> PathBuf {
    std::env::var_os("WALSCOPE_CONFIG_DIR")
        .map(PathBuf::from)
        .or_else(|| dirs::config_dir().map(|d| d.join("walscope")))
        .unwrap_or_else(|| PathBuf::from(".walscope"))
}

/// The profiles file.
pub struct ProfileStore {
    path: PathBuf,
}

impl ProfileStore {
    /// The user's store (`WALSCOPE_CONFIG_DIR`, else the platform config directory).
    pub fn user() -> ProfileStore {
        ProfileStore { path: config_dir().join("profiles.json") }
    }

    pub fn at(path: &Path) -> ProfileStore {
        ProfileStore { path: path.to_path_buf() }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn load(&self) -> Result<Vec<ConnectionProfile>, ProfileError> {
        let err = |reason: String| ProfileError::File { path: self.path.clone(), reason };
        match std::fs::read_to_string(&self.path) {
            // Never serde's own words: they quote the value that did not fit.
            Ok(text) => {
                serde_json::from_str(&text).map_err(|e| err(super::profile_errors::describe(&text, &e)))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
            Err(e) => Err(err(e.to_string())),
        }
    }

    pub fn find(&self, name: &str) -> Result<ConnectionProfile, ProfileError> {
        self.load()?
            .into_iter()
            .find(|p| p.name == name)
            .ok_or_else(|| ProfileError::NotFound(name.to_string()))
    }

    /// Adds or replaces the profile with this name (atomic save, with a backup).
    pub fn upsert(&self, profile: ConnectionProfile) -> Result<(), ProfileError> {
        let mut all = self.load()?;
        all.retain(|p| p.name != profile.name);
        all.push(profile);
        all.sort_by(|a, b| a.name.cmp(&b.name));
        self.save(&all)
    }

    /// Saves `profile`, replacing the one named `old` (a rename) or of its own name, in one
    /// atomic write: the file never holds both or neither.
    pub fn replace(&self, old: Option<&str>, profile: ConnectionProfile) -> Result<(), ProfileError> {
        let mut all = self.load()?;
        all.retain(|p| p.name != profile.name && Some(p.name.as_str()) != old);
        all.push(profile);
        all.sort_by(|a, b| a.name.cmp(&b.name));
        self.save(&all)
    }

    pub fn remove(&self, name: &str) -> Result<bool, ProfileError> {
        let mut all = self.load()?;
        let before = all.len();
        all.retain(|p| p.name != name);
        if all.len() != before {
            self.save(&all)?;
        }
        Ok(all.len() != before)
    }

    fn save(&self, all: &[ConnectionProfile]) -> Result<(), ProfileError> {
        let err = |reason: String| ProfileError::File { path: self.path.clone(), reason };
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| err(e.to_string()))?;
        }
        let text = serde_json::to_vec_pretty(all).map_err(|e| err(e.to_string()))?;
        crate::atomic::atomic_write(&self.path, &text, true).map(|_| ()).map_err(|e| err(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile(name: &str) -> ConnectionProfile {
        ConnectionProfile {
            name: name.into(),
            transport: TransportKind::Grpc,
            endpoint: "milvus.example:19530".into(),
            tls: TlsSettings::Plaintext,
            client_cert: None,
            auth: Some(AuthSettings::UserPassword {
                user: "root".into(),
                password: SecretRef::Env { var: "WALSCOPE_TEST_PW_7".into() },
            }),
            db_name: Some("default".into()),
            headers: vec![("x-trace".into(), "1".into())],
            timeout_secs: Some(30),
            confirm_methods: Vec::new(),
        }
    }

    #[test]
    fn profiles_round_trip_without_secrets() {
        let dir = tempfile::tempdir().unwrap();
        let store = ProfileStore::at(&dir.path().join("p/profiles.json"));
        assert!(store.load().unwrap().is_empty());
        store.upsert(profile("old-primary")).unwrap();
        store.upsert(profile("new-primary")).unwrap();
        let text = std::fs::read_to_string(store.path()).unwrap();
        assert!(text.contains("WALSCOPE_TEST_PW_7") && !text.contains("hunter2"));
        assert_eq!(store.find("old-primary").unwrap(), profile("old-primary"));
        assert!(matches!(store.find("x"), Err(ProfileError::NotFound(_))));
        assert!(store.remove("new-primary").unwrap());
        assert_eq!(store.load().unwrap().len(), 1);
        // A file that tries to hold a secret is refused, not silently accepted.
        std::fs::write(
            store.path(),
            text.replace("\"from\": \"env\"", "\"from\": \"env\", \"value\": \"hunter2\""),
        )
        .unwrap();
        assert!(store.load().is_err());
    }

    #[test]
    fn authorization_and_insecurity() {
        let p = profile("x");
        let e = p.authorization().unwrap_err();
        assert!(e.to_string().contains("WALSCOPE_TEST_PW_7"), "{e}");
        assert!(p.is_insecure(), "plaintext to a remote host");
        let local = ConnectionProfile { endpoint: "127.0.0.1:19530".into(), auth: None, ..profile("l") };
        assert!(!local.is_insecure());
        assert_eq!(local.authorization().unwrap(), None);
        let insecure = ConnectionProfile { tls: TlsSettings::Insecure, ..local };
        assert!(insecure.is_insecure());
        let token = ConnectionProfile {
            auth: Some(AuthSettings::Token { token: SecretRef::Env { var: "PATH".into() } }),
            ..profile("t")
        };
        assert!(token.authorization().unwrap().is_some());
        // A keyring entry that does not exist is a clear error naming it (whatever the platform
        // store answers: "no entry", or that the store is unavailable in this sandbox).
        let kr = SecretRef::Keyring { service: "walscope-test-absent".into(), account: "nobody-7".into() };
        let e = kr.resolve().unwrap_err().to_string();
        assert!(
            e.contains("walscope-test-absent") && e.contains("nobody-7") && e.contains("OS keyring"),
            "{e}"
        );
        let json = serde_json::to_string(&kr).unwrap();
        assert_eq!(json, r#"{"from":"keyring","service":"walscope-test-absent","account":"nobody-7"}"#);
    }
}
