//! TLS for the two Rust servers (`--tls-cert`, `--tls-key`): the rustls
//! server configuration read from PEM files, with the checks that refuse a
//! certificate the server should not serve (a key that is not its own, a
//! certificate out of its validity period, files without PEM). rustls runs
//! on the `ring` provider. Each server accepts with its own stack's rustls
//! acceptor (tokio-rustls, axum-server). The servers' tests/wss.rs test it
//! with certificates they make (this crate, outside their workspaces, can
//! have no dev-dependencies of its own).

use std::path::Path;
use std::sync::Arc;
use std::time::SystemTime;

use rustls::ServerConfig;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// Reads the certificate chain at `cert` and its key at `key` into a server
/// configuration offering HTTP/1.1 by ALPN. `now` is the time the
/// certificate must be valid at. The error says which file is wrong and why.
pub fn server_config(
    cert: &Path,
    key: &Path,
    now: SystemTime,
) -> Result<Arc<ServerConfig>, String> {
    let certs = CertificateDer::pem_file_iter(cert)
        .and_then(Iterator::collect::<Result<Vec<_>, _>>)
        .map_err(|error| format!("TLS certificate {}: {error}", cert.display()))?;
    let Some(leaf) = certs.first() else {
        return Err(format!(
            "TLS certificate {}: no certificate in the file",
            cert.display()
        ));
    };
    check_validity(leaf, now)
        .map_err(|error| format!("TLS certificate {}: {error}", cert.display()))?;
    let private_key = PrivateKeyDer::from_pem_file(key)
        .map_err(|error| format!("TLS key {}: {error}", key.display()))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|error| format!("TLS: {error}"))?
        .with_no_client_auth()
        .with_single_cert(certs, private_key)
        .map_err(|error| {
            format!(
                "TLS certificate {} with key {}: {error}",
                cert.display(),
                key.display()
            )
        })?;
    // WebSocket upgrades are HTTP/1.1 requests.
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// Refuses a certificate that has expired or is not yet valid at `now`.
fn check_validity(leaf: &CertificateDer<'_>, now: SystemTime) -> Result<(), String> {
    let (_, parsed) =
        x509_parser::parse_x509_certificate(leaf).map_err(|error| error.to_string())?;
    let now = now
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |since| {
            i64::try_from(since.as_secs()).unwrap_or(i64::MAX)
        });
    let validity = parsed.validity();
    if now > validity.not_after.timestamp() {
        return Err(format!("expired at {}", validity.not_after));
    }
    if now < validity.not_before.timestamp() {
        return Err(format!("not valid before {}", validity.not_before));
    }
    Ok(())
}
