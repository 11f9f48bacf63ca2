//! A connection profile as the Connections panel edits it: every field as text or a choice,
//! turned back into a [`ConnectionProfile`] only when it is valid, with the reason at the field
//! otherwise. Secrets are never typed here: a profile names where its secret comes from (an
//! environment variable or an OS keyring entry).
//!
//! Must never: hold or write a secret, or accept a profile that would fail on first use for a
//! reason visible now (an empty endpoint, a port that is not a number, a CA file that is not
//! there, an address with a password in it, TLS, credentials or headers its transport cannot
//! carry: see [`crate::net::edges`]).

use crate::net::profile::{AuthSettings, ConnectionProfile, SecretRef, TlsSettings, TransportKind};
use std::path::PathBuf;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TlsChoice {
    #[default]
    Plaintext,
    System,
    CaFile,
    Insecure,
}

impl TlsChoice {
    pub const ALL: [TlsChoice; 4] =
        [TlsChoice::Plaintext, TlsChoice::System, TlsChoice::CaFile, TlsChoice::Insecure];
    pub fn label(self) -> &'static str {
        match self {
            TlsChoice::Plaintext => "plaintext (no TLS)",
            TlsChoice::System => "TLS, system roots",
            TlsChoice::CaFile => "TLS, this CA file",
            TlsChoice::Insecure => "TLS WITHOUT verification (insecure)",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AuthChoice {
    #[default]
    None,
    UserPassword,
    Token,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SecretChoice {
    #[default]
    Env,
    Keyring,
}

/// The panel's editable copy of a profile.
#[derive(Debug, Clone, PartialEq)]
pub struct ProfileForm {
    /// The saved profile this edits (None: a new one).
    pub original: Option<String>,
    pub name: String,
    pub transport: TransportKind,
    pub endpoint: String,
    pub tls: TlsChoice,
    pub ca_file: String,
    pub cert_file: String,
    pub key_file: String,
    pub auth: AuthChoice,
    pub user: String,
    pub secret: SecretChoice,
    /// The environment variable holding the password or token.
    pub secret_env: String,
    pub keyring_service: String,
    pub keyring_account: String,
    /// One `key: value` a line.
    pub headers: String,
    pub database: String,
    pub timeout_secs: String,
    /// Methods this profile asks a confirmation for, besides the built-in list (one a line).
    pub confirm_methods: String,
    /// Why the last save was refused, and at which field.
    pub error: Option<(&'static str, String)>,
}

impl Default for ProfileForm {
    fn default() -> Self {
        ProfileForm {
            original: None,
            name: String::new(),
            transport: TransportKind::Grpc,
            endpoint: String::new(),
            tls: TlsChoice::default(),
            ca_file: String::new(),
            cert_file: String::new(),
            key_file: String::new(),
            auth: AuthChoice::default(),
            user: String::new(),
            secret: SecretChoice::default(),
            secret_env: String::new(),
            keyring_service: String::new(),
            keyring_account: String::new(),
            headers: String::new(),
            database: String::new(),
            timeout_secs: String::new(),
            confirm_methods: String::new(),
            error: None,
        }
    }
}

impl ProfileForm {
    /// A form holding `p` (to edit it; `original` names it so a rename replaces it).
    pub fn from_profile(p: &ConnectionProfile) -> ProfileForm {
        let mut f = ProfileForm {
            original: Some(p.name.clone()),
            name: p.name.clone(),
            transport: p.transport,
            endpoint: p.endpoint.clone(),
            ..Default::default()
        };
        match &p.tls {
            TlsSettings::Plaintext => f.tls = TlsChoice::Plaintext,
            TlsSettings::System => f.tls = TlsChoice::System,
            TlsSettings::CaFile { ca_file } => {
                f.tls = TlsChoice::CaFile;
                f.ca_file = ca_file.display().to_string();
            }
            TlsSettings::Insecure => f.tls = TlsChoice::Insecure,
        }
        if let Some((c, k)) = &p.client_cert {
            f.cert_file = c.display().to_string();
            f.key_file = k.display().to_string();
        }
        let secret = match &p.auth {
            None => None,
            Some(AuthSettings::UserPassword { user, password }) => {
                f.auth = AuthChoice::UserPassword;
                f.user = user.clone();
                Some(password)
            }
            Some(AuthSettings::Token { token }) => {
                f.auth = AuthChoice::Token;
                Some(token)
            }
        };
        match secret {
            Some(SecretRef::Env { var }) => {
                f.secret = SecretChoice::Env;
                f.secret_env = var.clone();
            }
            Some(SecretRef::Keyring { service, account }) => {
                f.secret = SecretChoice::Keyring;
                f.keyring_service = service.clone();
                f.keyring_account = account.clone();
            }
            None => {}
        }
        f.headers = p.headers.iter().map(|(k, v)| format!("{k}: {v}")).collect::<Vec<_>>().join("\n");
        f.database = p.db_name.clone().unwrap_or_default();
        f.timeout_secs = p.timeout_secs.map(|t| t.to_string()).unwrap_or_default();
        f.confirm_methods = p.confirm_methods.join("\n");
        f
    }

    /// A copy of `p` under a new name, not yet saved.
    pub fn duplicate(p: &ConnectionProfile, taken: &[String]) -> ProfileForm {
        let mut f = Self::from_profile(p);
        f.original = None;
        let mut n = 2;
        f.name = loop {
            let candidate =
                format!("{}-copy{}", p.name, if n == 2 { String::new() } else { format!("-{n}") });
            if !taken.contains(&candidate) {
                break candidate;
            }
            n += 1;
        };
        f
    }

    /// The profile the form describes, or the first field that is wrong and why. `taken` are
    /// the names of the other profiles.
    pub fn to_profile(&self, taken: &[String]) -> Result<ConnectionProfile, (&'static str, String)> {
        let name = self.name.trim();
        if name.is_empty() {
            return Err(("name", "give the profile a name".into()));
        }
        if taken.iter().any(|t| t == name) && self.original.as_deref() != Some(name) {
            return Err(("name", format!("a profile named \"{name}\" exists already")));
        }
        let endpoint = self.endpoint.trim();
        check_endpoint(endpoint).map_err(|e| ("endpoint", e.to_string()))?;
        let tls = match self.tls {
            TlsChoice::Plaintext => TlsSettings::Plaintext,
            TlsChoice::System => TlsSettings::System,
            TlsChoice::Insecure => TlsSettings::Insecure,
            TlsChoice::CaFile => {
                let ca = self.ca_file.trim();
                if ca.is_empty() {
                    return Err(("CA file", "name the CA certificate file (PEM)".into()));
                }
                if !std::path::Path::new(ca).is_file() {
                    return Err(("CA file", format!("{ca} is not a file here")));
                }
                TlsSettings::CaFile { ca_file: PathBuf::from(ca) }
            }
        };
        let openmldb = self.transport != TransportKind::Grpc;
        if openmldb && tls != TlsSettings::Plaintext {
            return Err((
                "TLS",
                "brpc and HTTP/JSON to OpenMLDB are plaintext here (a call would go unencrypted); \
                 choose plaintext, or reach the server through a TLS tunnel"
                    .into(),
            ));
        }
        if openmldb && (!self.cert_file.trim().is_empty() || !self.key_file.trim().is_empty()) {
            return Err((
                "client certificate",
                "a client certificate is for mutual TLS, which brpc and HTTP/JSON do not do here: \
                 leave it empty"
                    .into(),
            ));
        }
        if openmldb && self.auth != AuthChoice::None {
            return Err((
                "auth",
                "SyncTool and DataCollector check no credentials, and brpc/HTTP here would send \
                 them unencrypted: choose no auth"
                    .into(),
            ));
        }
        if self.transport == TransportKind::Brpc
            && (!self.headers.trim().is_empty() || !self.database.trim().is_empty())
        {
            return Err((
                "headers",
                "baidu_std has no headers: leave headers and database empty, or choose HTTP/JSON, \
                 which sends them"
                    .into(),
            ));
        }
        let client_cert = match (self.cert_file.trim(), self.key_file.trim()) {
            ("", "") => None,
            ("", _) | (_, "") => {
                return Err((
                    "client certificate",
                    "mutual TLS needs both a certificate and a key file".into(),
                ));
            }
            (c, k) => {
                for f in [c, k] {
                    if !std::path::Path::new(f).is_file() {
                        return Err(("client certificate", format!("{f} is not a file here")));
                    }
                }
                Some((PathBuf::from(c), PathBuf::from(k)))
            }
        };
        let secret = || -> Result<SecretRef, (&'static str, String)> {
            match self.secret {
                SecretChoice::Env => {
                    let var = self.secret_env.trim();
                    if var.is_empty() || var.contains(['=', ' ']) {
                        return Err((
                            "secret",
                            "name the environment variable that holds the secret (not the secret itself)"
                                .into(),
                        ));
                    }
                    Ok(SecretRef::Env { var: var.into() })
                }
                SecretChoice::Keyring => {
                    let (s, a) = (self.keyring_service.trim(), self.keyring_account.trim());
                    if s.is_empty() || a.is_empty() {
                        return Err(("secret", "a keyring entry needs its service and account".into()));
                    }
                    Ok(SecretRef::Keyring { service: s.into(), account: a.into() })
                }
            }
        };
        let auth = match self.auth {
            AuthChoice::None => None,
            AuthChoice::UserPassword => {
                if self.user.trim().is_empty() {
                    return Err(("user", "type the user name".into()));
                }
                Some(AuthSettings::UserPassword { user: self.user.trim().into(), password: secret()? })
            }
            AuthChoice::Token => Some(AuthSettings::Token { token: secret()? }),
        };
        let mut headers = Vec::new();
        for (n, line) in self.headers.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            let Some((k, v)) = line.split_once(':') else {
                return Err(("headers", format!("line {}: write KEY: VALUE", n + 1)));
            };
            let k = k.trim().to_ascii_lowercase();
            if k == "authorization" {
                return Err((
                    "headers",
                    "credentials go under Auth (as a reference), not in a header".into(),
                ));
            }
            headers.push((k, v.trim().to_string()));
        }
        let timeout_secs = match self.timeout_secs.trim() {
            "" => None,
            t => match t.parse::<u64>() {
                Ok(s) if s > 0 => Some(s),
                _ => return Err(("timeout", "a whole number of seconds, 1 or more".into())),
            },
        };
        let db = self.database.trim();
        let profile = ConnectionProfile {
            name: name.into(),
            transport: self.transport,
            endpoint: endpoint.into(),
            tls,
            client_cert,
            auth,
            db_name: (!db.is_empty()).then(|| db.to_string()),
            headers,
            timeout_secs,
            confirm_methods: self
                .confirm_methods
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(str::to_string)
                .collect(),
        };
        // The rule every connection is held to (the fields above say it first, at the field).
        crate::net::edges::check_profile(&profile).map_err(|e| ("transport", e.to_string()))?;
        Ok(profile)
    }
}

/// Why an endpoint is not `host:port` (said at the field).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EndpointRefused {
    #[error("type the server's host:port")]
    Empty,
    #[error(
        "an address holds no user name or password (\"user:password@\"): write host:port, and choose the credentials under Auth (an environment variable or a keyring entry)"
    )]
    HoldsCredentials,
    #[error("\"{0}\" has no port: write host:port, e.g. 127.0.0.1:19530")]
    NoPort(String),
    #[error("the host is missing before the port")]
    NoHost,
    #[error("\"{0}\" is not a port number (1-65535)")]
    NotAPort(String),
}

/// `host:port`, with a port that is a number.
fn check_endpoint(endpoint: &str) -> Result<(), EndpointRefused> {
    if endpoint.is_empty() {
        return Err(EndpointRefused::Empty);
    }
    // First: the words below quote the endpoint, and this one may hold a password.
    crate::net::edges::check_endpoint(endpoint).map_err(|_| EndpointRefused::HoldsCredentials)?;
    let bare = endpoint.trim_start_matches("http://").trim_start_matches("https://");
    let Some((host, port)) = bare.rsplit_once(':') else {
        return Err(EndpointRefused::NoPort(endpoint.to_string()));
    };
    if host.is_empty() {
        return Err(EndpointRefused::NoHost);
    }
    match port.parse::<u16>() {
        Ok(p) if p > 0 => Ok(()),
        _ => Err(EndpointRefused::NotAPort(port.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_form_round_trips_and_refuses_what_would_fail() {
        let mut f = ProfileForm {
            name: "old-primary".into(),
            endpoint: "10.0.0.5:19530".into(),
            auth: AuthChoice::UserPassword,
            user: "root".into(),
            secret_env: "MILVUS_PW".into(),
            headers: "x-trace: 1".into(),
            database: "default".into(),
            timeout_secs: "30".into(),
            ..Default::default()
        };
        let p = f.to_profile(&[]).unwrap();
        assert_eq!(p.headers, [("x-trace".to_string(), "1".to_string())]);
        assert!(p.is_insecure(), "plaintext off loopback");
        let back = ProfileForm::from_profile(&p);
        assert_eq!(back.to_profile(&[]).unwrap(), p);
        assert_eq!(f.to_profile(&["old-primary".into()]).unwrap_err().0, "name");
        f.endpoint = "10.0.0.5".into();
        assert_eq!(f.to_profile(&[]).unwrap_err().0, "endpoint");
        f.endpoint = "10.0.0.5:99999".into();
        assert_eq!(f.to_profile(&[]).unwrap_err().0, "endpoint");
        f.endpoint = "10.0.0.5:19530".into();
        f.secret_env = "hunter2 =x".into();
        assert_eq!(f.to_profile(&[]).unwrap_err().0, "secret");
        f.secret_env = "MILVUS_PW".into();
        f.headers = "authorization: abc".into();
        assert_eq!(f.to_profile(&[]).unwrap_err().0, "headers");
        f.headers.clear();
        f.tls = TlsChoice::CaFile;
        f.ca_file = "/nonexistent/ca.pem".into();
        assert_eq!(f.to_profile(&[]).unwrap_err().0, "CA file");
        f.tls = TlsChoice::Plaintext;
        for ep in ["bob:hunter2@10.0.0.5:19530", "grpc://bob:hunter2@10.0.0.5:19530", "bob:hunter2@h"] {
            f.endpoint = ep.into();
            let (field, words) = f.to_profile(&[]).unwrap_err();
            assert_eq!(field, "endpoint", "{ep}");
            assert!(!words.contains("hunter2") && words.contains("Auth"), "{words}");
        }
        f.endpoint = "10.0.0.5:8848".into();
        // What brpc and HTTP/JSON cannot carry is refused at its field, never saved to be
        // dropped (or sent in plaintext) later.
        let ca = tempfile::NamedTempFile::new().unwrap();
        let openmldb = |transport, edit: &dyn Fn(&mut ProfileForm)| {
            let mut g = ProfileForm {
                name: "synctool".into(),
                transport,
                endpoint: "10.0.0.5:8848".into(),
                ..Default::default()
            };
            edit(&mut g);
            g.to_profile(&[]).map(|_| ()).map_err(|(field, _)| field)
        };
        for t in [TransportKind::Brpc, TransportKind::Http] {
            assert_eq!(openmldb(t, &|_| {}), Ok(()));
            for choice in [TlsChoice::System, TlsChoice::Insecure, TlsChoice::CaFile] {
                let ca = ca.path().display().to_string();
                assert_eq!(
                    openmldb(t, &|g| {
                        g.tls = choice;
                        g.ca_file = ca.clone();
                    }),
                    Err("TLS")
                );
            }
            let cert = ca.path().display().to_string();
            assert_eq!(
                openmldb(t, &|g| {
                    g.cert_file = cert.clone();
                    g.key_file = cert.clone();
                }),
                Err("client certificate")
            );
            let auth = |g: &mut ProfileForm| {
                g.auth = AuthChoice::UserPassword;
                g.user = "root".into();
                g.secret_env = "PW".into();
            };
            assert_eq!(openmldb(t, &auth), Err("auth"));
        }
        assert_eq!(openmldb(TransportKind::Brpc, &|g| g.headers = "x-trace: 1".into()), Err("headers"));
        assert_eq!(openmldb(TransportKind::Http, &|g| g.headers = "x-trace: 1".into()), Ok(()));
        let d = ProfileForm::duplicate(&p, &["old-primary-copy".into()]);
        assert_eq!(d.name, "old-primary-copy-3");
        assert_eq!(d.original, None);
    }
}
