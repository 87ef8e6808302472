//! The run's TLS certificate: made per run with rcgen for `127.0.0.1` and `localhost`,
//! written to a private temporary folder (never under `results/`, removed when the run
//! ends), mounted read-only into the server and k6 containers, and checked before use: a
//! certificate that has expired, is not yet valid, does not name 127.0.0.1 or does not
//! match its key is refused with a message that says which. [`Stream`] is a connection
//! in cleartext or over TLS that trusts such a certificate, for `/health`, `/stats` and the
//! verifier.

use std::net::{IpAddr, Ipv4Addr};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::ServerCertVerifier;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::sign::CertifiedKey;

/// The client side of TLS, for callers that do not depend on rustls themselves.
pub type ClientConfig = rustls::ClientConfig;

/// Where the certificate folder is mounted in a container.
pub const CONTAINER_DIR: &str = "/tls";
/// The certificate's file name, in the folder and in the container.
pub const CERT_FILE: &str = "cert.pem";
/// The key's file name.
pub const KEY_FILE: &str = "key.pem";

/// How long a made certificate is valid: longer than any run (`--max-duration` is hours).
const VALID_DAYS: i64 = 7;

/// Why a certificate cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// Making or writing the certificate failed.
    #[error("making the run's TLS certificate: {0}")]
    Make(String),
    /// A certificate or key file could not be read.
    #[error("{}: {detail}", path.display())]
    Read { path: PathBuf, detail: String },
    /// The certificate and key do not belong together.
    #[error("{} and {} do not belong together: {detail}", cert.display(), key.display())]
    Mismatched {
        cert: PathBuf,
        key: PathBuf,
        detail: String,
    },
    /// The certificate is expired, not yet valid, or does not name 127.0.0.1.
    #[error("{} is not valid for 127.0.0.1 now: {detail}", cert.display())]
    Invalid { cert: PathBuf, detail: String },
}

impl TlsError {
    /// A bad certificate given by the user is their usage; failing to make one is ours.
    pub fn class(&self) -> crate::ErrorClass {
        match self {
            Self::Make(_) => crate::ErrorClass::Failure,
            _ => crate::ErrorClass::Usage,
        }
    }
}

/// A certificate and key for the run's servers, and a client configuration that trusts
/// exactly that certificate.
#[derive(Debug)]
pub struct RunCert {
    /// The folder holding `cert.pem` and `key.pem`; removed when this is dropped (absent
    /// for files the user gave).
    _made: Option<tempfile::TempDir>,
    dir: PathBuf,
    client: Arc<rustls::ClientConfig>,
}

impl RunCert {
    /// Makes a self-signed certificate for `127.0.0.1` and `localhost` into a fresh private
    /// folder under the system's temporary directory, and checks it.
    pub fn make() -> Result<RunCert, TlsError> {
        let make = |e: &dyn std::fmt::Display| TlsError::Make(e.to_string());
        let mut params =
            rcgen::CertificateParams::new(vec!["localhost".to_string()]).map_err(|e| make(&e))?;
        params
            .subject_alt_names
            .push(rcgen::SanType::IpAddress(IpAddr::V4(Ipv4Addr::LOCALHOST)));
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "wscbench run");
        let now = rcgen::date_time_ymd(1970, 1, 1)
            + std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_err(|e| make(&e))?;
        params.not_before = now - std::time::Duration::from_secs(3600);
        params.not_after = now + std::time::Duration::from_secs(VALID_DAYS as u64 * 86_400);
        let key = rcgen::KeyPair::generate().map_err(|e| make(&e))?;
        let cert = params.self_signed(&key).map_err(|e| make(&e))?;
        let folder = tempfile::Builder::new()
            .prefix("wscbench-tls-")
            .tempdir()
            .map_err(|e| make(&e))?;
        write_private(folder.path(), cert.pem(), key.serialize_pem()).map_err(|e| make(&e))?;
        let dir = folder.path().to_owned();
        let mut run_cert = RunCert::from_dir(&dir)?;
        run_cert._made = Some(folder);
        Ok(run_cert)
    }

    /// Uses `cert.pem` and `key.pem` in `dir`, after checking them.
    pub fn from_dir(dir: &Path) -> Result<RunCert, TlsError> {
        let client = check(&dir.join(CERT_FILE), &dir.join(KEY_FILE))?;
        Ok(RunCert {
            _made: None,
            dir: dir.to_owned(),
            client,
        })
    }

    /// The certificate's path on the host.
    pub fn cert_path(&self) -> PathBuf {
        self.dir.join(CERT_FILE)
    }

    /// The bind mount that shows the folder read-only at [`CONTAINER_DIR`].
    pub fn bind(&self) -> String {
        format!("{}:{CONTAINER_DIR}:ro", self.dir.display())
    }

    /// The server's arguments: `--tls-cert /tls/cert.pem --tls-key /tls/key.pem`.
    pub fn server_args(&self) -> Vec<String> {
        vec![
            "--tls-cert".into(),
            format!("{CONTAINER_DIR}/{CERT_FILE}"),
            "--tls-key".into(),
            format!("{CONTAINER_DIR}/{KEY_FILE}"),
        ]
    }

    /// The server's arguments for a process on this host: the files where they are.
    pub fn host_args(&self) -> Vec<String> {
        vec![
            "--tls-cert".into(),
            self.dir.join(CERT_FILE).display().to_string(),
            "--tls-key".into(),
            self.dir.join(KEY_FILE).display().to_string(),
        ]
    }

    /// A client configuration that trusts this certificate only.
    pub fn client_config(&self) -> Arc<rustls::ClientConfig> {
        self.client.clone()
    }

    /// The certificate's public-key pin as chromium's `--ignore-certificate-errors-spki-list`
    /// takes it: base64 of the SHA-256 of its SubjectPublicKeyInfo. Read from the key, which
    /// [`check`] proved belongs to the certificate.
    pub fn spki_sha256(&self) -> Result<String, TlsError> {
        use rcgen::PublicKeyData;
        use sha2::Digest;
        let path = self.dir.join(KEY_FILE);
        let read = |e: &dyn std::fmt::Display| TlsError::Read {
            path: path.clone(),
            detail: e.to_string(),
        };
        let pem = std::fs::read_to_string(&path).map_err(|e| read(&e))?;
        let key = rcgen::KeyPair::from_pem(&pem).map_err(|e| read(&e))?;
        Ok(base64(&sha2::Sha256::digest(key.subject_public_key_info())))
    }
}

/// Standard base64 with padding (RFC 4648 section 4).
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | (u32::from(b) << (16 - 8 * i)));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Writes the two files: the folder can be entered but not listed by others (the
/// containers run as `nobody`), and the files can be read.
fn write_private(dir: &Path, cert: String, key: String) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(dir.join(CERT_FILE), cert)?;
    std::fs::write(dir.join(KEY_FILE), key)?;
    for file in [CERT_FILE, KEY_FILE] {
        std::fs::set_permissions(dir.join(file), std::fs::Permissions::from_mode(0o644))?;
    }
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o711))
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Reads and checks a certificate and its key: they belong together, and the certificate
/// is valid now for 127.0.0.1 when trusted as itself. Returns a client configuration that
/// trusts it.
pub fn check(cert_path: &Path, key_path: &Path) -> Result<Arc<rustls::ClientConfig>, TlsError> {
    let read = |path: &Path, e: &dyn std::fmt::Display| TlsError::Read {
        path: path.to_owned(),
        detail: e.to_string(),
    };
    let cert = CertificateDer::from_pem_file(cert_path).map_err(|e| read(cert_path, &e))?;
    let key = PrivateKeyDer::from_pem_file(key_path).map_err(|e| read(key_path, &e))?;
    let provider = provider();
    CertifiedKey::from_der(vec![cert.clone()], key, &provider).map_err(|e| {
        TlsError::Mismatched {
            cert: cert_path.to_owned(),
            key: key_path.to_owned(),
            detail: e.to_string(),
        }
    })?;
    let invalid = |e: &dyn std::fmt::Display| TlsError::Invalid {
        cert: cert_path.to_owned(),
        detail: e.to_string(),
    };
    let mut roots = rustls::RootCertStore::empty();
    roots.add(cert.clone()).map_err(|e| invalid(&e))?;
    let roots = Arc::new(roots);
    let verifier = WebPkiServerVerifier::builder_with_provider(roots.clone(), provider.clone())
        .build()
        .map_err(|e| invalid(&e))?;
    let loopback = ServerName::IpAddress(IpAddr::V4(Ipv4Addr::LOCALHOST).into());
    verifier
        .verify_server_cert(&cert, &[], &loopback, &[], UnixTime::now())
        .map_err(|e| invalid(&e))?;
    let client = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| invalid(&e))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(client))
}

/// A client connection in cleartext or over TLS.
#[derive(Debug)]
pub enum Stream {
    /// Cleartext.
    Plain(tokio::net::TcpStream),
    /// TLS.
    Tls(Box<tokio_rustls::client::TlsStream<tokio::net::TcpStream>>),
}

impl Stream {
    /// `tcp` as is without `tls`, or after a TLS handshake for 127.0.0.1 trusting `tls`.
    pub async fn over(
        tcp: tokio::net::TcpStream,
        tls: Option<&Arc<rustls::ClientConfig>>,
    ) -> std::io::Result<Stream> {
        let Some(config) = tls else {
            return Ok(Stream::Plain(tcp));
        };
        let name = ServerName::IpAddress(tcp.peer_addr()?.ip().into());
        let connector = tokio_rustls::TlsConnector::from(config.clone());
        Ok(Stream::Tls(Box::new(connector.connect(name, tcp).await?)))
    }

    /// The TLS version and cipher suite negotiated (`None` in cleartext).
    pub fn negotiated(&self) -> Option<(String, String)> {
        let Stream::Tls(tls) = self else {
            return None;
        };
        let (_, connection) = tls.get_ref();
        let version = connection
            .protocol_version()?
            .as_str()?
            .replace("TLSv1_", "TLS 1.");
        let suite = connection
            .negotiated_cipher_suite()?
            .suite()
            .as_str()?
            .to_string();
        Some((version, suite))
    }
}

/// Calls the same poll method on whichever stream it is.
macro_rules! both {
    ($self:ident . $method:ident ( $($arg:expr),* )) => {
        match $self.get_mut() {
            Stream::Plain(s) => std::pin::Pin::new(s).$method($($arg),*),
            Stream::Tls(s) => std::pin::Pin::new(s.as_mut()).$method($($arg),*),
        }
    };
}

impl tokio::io::AsyncRead for Stream {
    fn poll_read(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        both!(self.poll_read(cx, buf))
    }
}

impl tokio::io::AsyncWrite for Stream {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        both!(self.poll_write(cx, buf))
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        both!(self.poll_flush(cx))
    }

    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        both!(self.poll_shutdown(cx))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_made_certificate_is_valid_for_loopback_and_lives_outside_results() {
        let cert = RunCert::make().unwrap();
        let dir = cert.cert_path().parent().unwrap().to_owned();
        assert!(dir.starts_with(std::env::temp_dir()));
        assert!(check(&dir.join(CERT_FILE), &dir.join(KEY_FILE)).is_ok());
        assert_eq!(cert.server_args()[1], "/tls/cert.pem");
        assert!(cert.bind().ends_with(":/tls:ro"));
        drop(cert);
        assert!(
            !dir.exists(),
            "the run's certificate folder outlived the run"
        );
    }

    #[test]
    fn base64_encodes_the_rfc_4648_test_vectors() {
        let cases = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ];
        for (plain, encoded) in cases {
            assert_eq!(base64(plain.as_bytes()), encoded, "{plain:?}");
        }
    }

    #[test]
    fn the_spki_pin_hashes_the_public_key_the_certificate_carries() {
        use rcgen::PublicKeyData;
        use sha2::Digest;
        let cert = RunCert::make().unwrap();
        let der = CertificateDer::from_pem_file(cert.cert_path()).unwrap();
        let pem = std::fs::read_to_string(cert.cert_path().with_file_name(KEY_FILE)).unwrap();
        let spki = rcgen::KeyPair::from_pem(&pem)
            .unwrap()
            .subject_public_key_info();
        // The SubjectPublicKeyInfo is a field of the certificate, byte for byte.
        assert!(der.windows(spki.len()).any(|w| w == spki.as_slice()));
        assert_eq!(
            cert.spki_sha256().unwrap(),
            base64(&sha2::Sha256::digest(&spki))
        );
        assert_ne!(
            cert.spki_sha256().unwrap(),
            RunCert::make().unwrap().spki_sha256().unwrap()
        );
    }

    #[test]
    fn a_key_of_another_certificate_is_refused_as_mismatched() {
        let one = RunCert::make().unwrap();
        let two = RunCert::make().unwrap();
        let key = two.cert_path().with_file_name(KEY_FILE);
        let err = check(&one.cert_path(), &key).unwrap_err();
        assert!(matches!(err, TlsError::Mismatched { .. }), "{err}");
        assert_eq!(err.class(), crate::ErrorClass::Usage);
    }

    #[test]
    fn an_expired_certificate_is_refused_as_not_valid_now() {
        let mut params = rcgen::CertificateParams::new(vec!["localhost".to_string()]).unwrap();
        params
            .subject_alt_names
            .push(rcgen::SanType::IpAddress(IpAddr::V4(Ipv4Addr::LOCALHOST)));
        params.not_before = rcgen::date_time_ymd(2020, 1, 1);
        params.not_after = rcgen::date_time_ymd(2020, 2, 1);
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = params.self_signed(&key).unwrap();
        let dir = tempfile::tempdir().unwrap();
        write_private(dir.path(), cert.pem(), key.serialize_pem()).unwrap();
        let err = RunCert::from_dir(dir.path()).unwrap_err();
        assert!(matches!(err, TlsError::Invalid { .. }), "{err}");
        assert!(
            err.to_string().contains("not valid for 127.0.0.1 now"),
            "{err}"
        );
    }

    #[test]
    fn a_file_that_is_not_pem_is_refused_with_its_path() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(CERT_FILE), "junk").unwrap();
        std::fs::write(dir.path().join(KEY_FILE), "junk").unwrap();
        let err = RunCert::from_dir(dir.path()).unwrap_err();
        assert!(err.to_string().contains(CERT_FILE), "{err}");
    }
}
