//! wsc-rust, the profile-B Rust chat server of wscbench: tokio and
//! tokio-tungstenite used directly, with the HTTP upgrade done by hand in
//! `http`. It implements docs/protocol.md; the shape (protocol, limiter,
//! stats, hub, client) matches the other five servers.

mod client;
mod http;

use std::future::Future;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, SystemTime};

use tokio::net::TcpListener;
use tokio::signal::unix::{SignalKind, signal};
use tokio::time::{self, Instant, timeout};
use tokio_rustls::TlsAcceptor;

use chat_core::stats::Stats;

use crate::client::Hub;

/// The image tag, reported as `server` in /stats.
pub const SERVER: &str = "wsc-rust";

/// How long shutdown waits for clients to answer their 1001 close frames;
/// the protocol wants the process gone within 2 s of the signal.
const SHUTDOWN_GRACE: Duration = Duration::from_millis(1500);

/// How long a client may take over its TLS handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

const USAGE: &str = "usage: wsc-rust [--host ADDR] [--port PORT] [--duration SECONDS] \
                     [--tls-cert FILE --tls-key FILE]";

/// Why `--deflate` is refused: what the server's manifest says in `[not_offered]`.
const NO_DEFLATE: &str = "--deflate: not offered, tungstenite has no permessage-deflate \
                          (snapview/tungstenite-rs issue #2, open)";

#[derive(Debug, PartialEq)]
struct Args {
    host: String,
    port: u16,
    /// Stop after this many seconds; 0 runs until signalled.
    duration_s: u64,
    /// PEM certificate and key: with both, the server serves TLS only.
    tls_cert: Option<PathBuf>,
    tls_key: Option<PathBuf>,
}

fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut parsed = Args {
        host: "0.0.0.0".to_owned(),
        port: 8080,
        duration_s: 0,
        tls_cert: None,
        tls_key: None,
    };
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) => (flag.to_owned(), Some(value.to_owned())),
            None => (arg, None),
        };
        let mut value = || {
            inline
                .clone()
                .or_else(|| args.next())
                .ok_or(format!("{flag} needs a value"))
        };
        match flag.as_str() {
            "--host" => parsed.host = value()?,
            "--port" => parsed.port = value()?.parse().map_err(|e| format!("--port: {e}"))?,
            "--duration" => {
                parsed.duration_s = value()?.parse().map_err(|e| format!("--duration: {e}"))?
            }
            "--tls-cert" => parsed.tls_cert = Some(value()?.into()),
            "--tls-key" => parsed.tls_key = Some(value()?.into()),
            "--deflate" => return Err(NO_DEFLATE.to_owned()),
            _ => return Err(format!("unknown argument {flag}")),
        }
    }
    if parsed.tls_cert.is_some() != parsed.tls_key.is_some() {
        return Err("--tls-cert and --tls-key go together".to_owned());
    }
    Ok(parsed)
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = match parse_args(std::env::args().skip(1)) {
        Ok(args) => args,
        Err(message) => {
            eprintln!("{SERVER}: {message}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("{SERVER}: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> std::io::Result<()> {
    // A certificate the server cannot serve stops it before it binds.
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => Some(TlsAcceptor::from(
            chat_core::tls::server_config(cert, key, SystemTime::now())
                .map_err(std::io::Error::other)?,
        )),
        _ => None,
    };
    let listener = TcpListener::bind((args.host.as_str(), args.port)).await?;
    let scheme = if tls.is_some() { "TLS" } else { "TCP" };
    eprintln!(
        "{SERVER} listening on {} ({scheme})",
        listener.local_addr()?
    );
    let hub = Arc::new(Hub::new(Arc::new(Stats::new(SERVER))));
    let stop = stop_signal(args.duration_s)?;
    tokio::pin!(stop);
    loop {
        tokio::select! {
            () = &mut stop => break,
            accepted = listener.accept() => match accepted {
                Ok((tcp, _)) => {
                    // Chat messages are small and latency is what the benchmark measures.
                    let _ = tcp.set_nodelay(true);
                    let hub = Arc::clone(&hub);
                    match tls.clone() {
                        None => tokio::spawn(http::handle(tcp, hub)),
                        Some(tls) => tokio::spawn(async move {
                            // A failed or stalled handshake ends the connection.
                            if let Ok(Ok(stream)) = timeout(HANDSHAKE_TIMEOUT, tls.accept(tcp)).await {
                                http::handle(stream, hub).await;
                            }
                        }),
                    };
                }
                Err(error) => {
                    // Out of file descriptors, say: wait instead of spinning.
                    eprintln!("{SERVER}: accept: {error}");
                    time::sleep(Duration::from_millis(10)).await;
                }
            },
        }
    }

    drop(listener);
    hub.close_all();
    let deadline = Instant::now() + SHUTDOWN_GRACE;
    while hub.stats.connections_current.load(Relaxed) > 0 && Instant::now() < deadline {
        time::sleep(Duration::from_millis(10)).await;
    }
    println!("{}", hub.stats.to_json());
    Ok(())
}

/// Resolves on SIGTERM, SIGINT or after `duration_s` (if not 0). The handlers
/// are installed before this returns: as PID 1 there is no default action.
fn stop_signal(duration_s: u64) -> std::io::Result<impl Future<Output = ()>> {
    let mut terminate = signal(SignalKind::terminate())?;
    let mut interrupt = signal(SignalKind::interrupt())?;
    Ok(async move {
        let elapsed = async {
            match duration_s {
                0 => std::future::pending().await,
                seconds => time::sleep(Duration::from_secs(seconds)).await,
            }
        };
        tokio::select! {
            _ = terminate.recv() => eprintln!("{SERVER}: SIGTERM, shutting down"),
            _ = interrupt.recv() => eprintln!("{SERVER}: SIGINT, shutting down"),
            () = elapsed => eprintln!("{SERVER}: --duration {duration_s} s elapsed, shutting down"),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Args, String> {
        parse_args(args.iter().map(|arg| arg.to_string()))
    }

    #[test]
    fn defaults() {
        assert_eq!(
            parse(&[]),
            Ok(Args {
                host: "0.0.0.0".to_owned(),
                port: 8080,
                duration_s: 0,
                tls_cert: None,
                tls_key: None,
            })
        );
    }

    #[test]
    fn flags_with_separate_or_inline_values() {
        let expected = Args {
            host: "127.0.0.1".to_owned(),
            port: 9000,
            duration_s: 5,
            tls_cert: None,
            tls_key: None,
        };
        assert_eq!(
            parse(&["--host", "127.0.0.1", "--port", "9000", "--duration", "5"]),
            Ok(expected)
        );
        assert_eq!(parse(&["--port=9001"]).map(|args| args.port), Ok(9001));
    }

    #[test]
    fn rejects_bad_arguments() {
        assert!(parse(&["--port"]).is_err());
        assert!(parse(&["--port", "http"]).is_err());
        assert!(parse(&["--verbose"]).is_err());
    }

    #[test]
    fn takes_a_certificate_with_its_key_and_refuses_deflate() {
        let args = parse(&["--tls-cert", "c.pem", "--tls-key=k.pem"]).unwrap();
        assert_eq!(args.tls_cert, Some(PathBuf::from("c.pem")));
        assert_eq!(args.tls_key, Some(PathBuf::from("k.pem")));
        assert!(parse(&["--tls-cert", "c.pem"]).is_err());
        assert_eq!(parse(&["--deflate"]), Err(NO_DEFLATE.to_owned()));
    }
}
