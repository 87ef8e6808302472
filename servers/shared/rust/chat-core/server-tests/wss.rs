// The server-as-a-process tests over wss that both Rust servers run: each server's
// tests/wss.rs defines `BINARY` (its own executable) and `include!`s this file, so the two
// run the same checks against their own binary. Not compiled on its own.
use std::net::TcpListener as StdListener;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use rustls::pki_types::ServerName;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::process::{Child, Command};
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;


/// A self-signed certificate for 127.0.0.1 valid for `valid_s` seconds from
/// an hour ago, written to `dir`; its paths and a client that trusts it.
fn certificate(dir: &Path, name: &str, valid_s: i64) -> (PathBuf, PathBuf, TlsConnector) {
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned()]).unwrap();
    let start = rcgen::date_time_ymd(2000, 1, 1);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let since_start = now - 946_684_800; // 2000-01-01 in Unix seconds
    params.not_before = start + Duration::from_secs((since_start - 3600) as u64);
    params.not_after = start + Duration::from_secs((since_start - 3600 + valid_s) as u64);
    let cert = params.self_signed(&key).unwrap();
    let (cert_path, key_path) = (
        dir.join(format!("{name}.crt")),
        dir.join(format!("{name}.key")),
    );
    std::fs::write(&cert_path, cert.pem()).unwrap();
    std::fs::write(&key_path, key.serialize_pem()).unwrap();
    let mut roots = rustls::RootCertStore::empty();
    roots.add(cert.der().clone()).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    (cert_path, key_path, TlsConnector::from(Arc::new(config)))
}

/// The server on a free port of 127.0.0.1 with `args`; its child and port.
fn start(args: &[&Path]) -> (Child, u16) {
    let port = StdListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut command = Command::new(BINARY);
    command.args(["--host", "127.0.0.1", "--port", &port.to_string()]);
    if let [cert, key] = args {
        command
            .arg("--tls-cert")
            .arg(cert)
            .arg("--tls-key")
            .arg(key);
    }
    let child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    (child, port)
}

async fn tls(connector: &TlsConnector, port: u16) -> std::io::Result<TlsStream<TcpStream>> {
    let tcp = TcpStream::connect(("127.0.0.1", port)).await?;
    connector
        .connect(ServerName::try_from("127.0.0.1").unwrap(), tcp)
        .await
}

/// `GET path` over TLS; the whole response.
async fn get(connector: &TlsConnector, port: u16, path: &str) -> std::io::Result<String> {
    let mut stream = tls(connector, port).await?;
    let request = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await?;
    let mut response = String::new();
    // rustls reports a peer that closes without close_notify as an error
    // after the bytes; what was read is the answer.
    let _ = stream.read_to_string(&mut response).await;
    Ok(response)
}

async fn wait_healthy(connector: &TlsConnector, port: u16) {
    for _ in 0..500 {
        if let Ok(response) = get(connector, port, "/health").await
            && response.ends_with("\r\n\r\nok")
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("no /health over TLS within 10 s");
}

type Ws = WebSocketStream<TlsStream<TcpStream>>;

async fn join(connector: &TlsConnector, port: u16, user: &str) -> Ws {
    let stream = tls(connector, port).await.unwrap();
    let url = format!("wss://127.0.0.1:{port}/ws");
    let (mut ws, _) = tokio_tungstenite::client_async(url, stream).await.unwrap();
    let join = format!(r#"{{"type":"join","room":"public","user":"{user}"}}"#);
    ws.send(Message::text(join)).await.unwrap();
    expect(&mut ws, "join", user).await;
    ws
}

/// The frame bytes of every message `expect` received: payload and a 2-byte
/// header, as the server writes messages under 126 bytes.
static RECEIVED_FRAME_BYTES: AtomicUsize = AtomicUsize::new(0);

async fn expect(ws: &mut Ws, kind: &str, user: &str) -> serde_json::Value {
    let next = tokio::time::timeout(Duration::from_secs(5), ws.next()).await;
    let Ok(Some(Ok(Message::Text(text)))) = next else {
        panic!("waiting for {kind} of {user}: {next:?}");
    };
    assert!(text.len() < 126, "{text}");
    RECEIVED_FRAME_BYTES.fetch_add(text.len() + 2, Relaxed);
    let message: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        (message["type"].as_str(), message["user"].as_str()),
        (Some(kind), Some(user)),
        "{message}"
    );
    message
}

#[tokio::test]
async fn serves_wss_only_with_its_certificate_and_counts_bytes_written() {
    let dir = tempfile::tempdir().unwrap();
    let (cert, key, connector) = certificate(dir.path(), "server", 86_400);
    let (_server, port) = start(&[&cert, &key]);
    wait_healthy(&connector, port).await;

    let mut alice = join(&connector, port, "alice").await;
    let mut bob = join(&connector, port, "bob").await;
    expect(&mut alice, "join", "bob").await;
    alice
        .send(Message::text(
            r#"{"type":"chat","room":"public","text":"over tls","ts":12.5}"#,
        ))
        .await
        .unwrap();
    let chat = expect(&mut bob, "chat", "alice").await;
    assert_eq!(chat["text"], "over tls");

    let stats = get(&connector, port, "/stats").await.unwrap();
    let body: serde_json::Value =
        serde_json::from_str(stats.split_once("\r\n\r\n").unwrap().1).unwrap();
    // Exactly the frames the clients received: no HTTP, no TLS overhead.
    assert_eq!(body["deliveries"], 1);
    assert_eq!(body["bytes_written"], RECEIVED_FRAME_BYTES.load(Relaxed));

    // Plain HTTP on the TLS port gets no answer.
    let mut plain = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    plain
        .write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(2), plain.read_to_end(&mut answer)).await;
    assert!(
        !String::from_utf8_lossy(&answer).contains("ok"),
        "plain http answered: {answer:?}"
    );
}

#[tokio::test]
async fn refuses_certificate_files_it_cannot_serve() {
    let dir = tempfile::tempdir().unwrap();
    let (cert, _, _) = certificate(dir.path(), "good", 86_400);
    let (_, other_key, _) = certificate(dir.path(), "other", 86_400);
    let (expired, expired_key, _) = certificate(dir.path(), "expired", 1_800);
    let missing = dir.path().join("missing.key");
    let garbage = dir.path().join("garbage.pem");
    std::fs::write(&garbage, "not pem").unwrap();
    for (name, cert, key, want) in [
        (
            "a key that is not the certificate's",
            &cert,
            &other_key,
            "with key",
        ),
        (
            "an expired certificate",
            &expired,
            &expired_key,
            "expired at",
        ),
        ("a missing key file", &cert, &missing, "missing.key"),
        (
            "a file with no certificate",
            &garbage,
            &other_key,
            "no certificate",
        ),
        ("a file with no key", &cert, &garbage, "TLS key"),
    ] {
        let (server, _) = start(&[cert, key]);
        let output = tokio::time::timeout(Duration::from_secs(10), server.wait_with_output())
            .await
            .unwrap()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            !output.status.success() && stderr.contains(want),
            "{name}: {:?}, {stderr}",
            output.status
        );
    }
}
