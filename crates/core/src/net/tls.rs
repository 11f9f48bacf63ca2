//! TLS for the gRPC client when tonic's own TLS cannot do what the user asked: skipping server
//! certificate verification (`--insecure`). A rustls connector hands tonic an already-encrypted
//! stream that negotiated `h2` by ALPN.
//!
//! Must never: be used unless the user asked for skip-verification (every caller reports the
//! connection as insecure), or accept a handshake that does not prove possession of the
//! certificate's key (signatures are still checked; only the chain and the name are not).

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, verify_tls12_signature, verify_tls13_signature};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, SignatureScheme};
use std::path::Path;
use std::sync::Arc;

/// Accepts any server certificate; still checks handshake signatures.
#[derive(Debug)]
struct SkipVerification(Arc<CryptoProvider>);

impl ServerCertVerifier for SkipVerification {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// A client config that skips verification, optionally presenting a client certificate.
pub fn insecure_client_config(client_cert: Option<(&Path, &Path)>) -> Result<ClientConfig, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS setup: {e}"))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(SkipVerification(provider)));
    let mut config = match client_cert {
        None => builder.with_no_client_auth(),
        Some((cert, key)) => {
            let certs = CertificateDer::pem_file_iter(cert)
                .and_then(|i| i.collect::<Result<Vec<_>, _>>())
                .map_err(|e| format!("client certificate {}: {e}", cert.display()))?;
            let key = PrivateKeyDer::from_pem_file(key)
                .map_err(|e| format!("client key {}: {e}", key.display()))?;
            builder.with_client_auth_cert(certs, key).map_err(|e| format!("client certificate: {e}"))?
        }
    };
    config.alpn_protocols = vec![b"h2".to_vec()];
    Ok(config)
}
