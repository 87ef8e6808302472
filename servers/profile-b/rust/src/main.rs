//! wsc-rust, the profile-B Rust chat server of wscbench: tokio and
//! tokio-tungstenite used directly, with the HTTP upgrade done by hand in
//! `http`. It implements docs/protocol.md; the shape (protocol, limiter,
//! stats, hub, client) matches the other five servers.

mod client;
mod http;

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, SystemTime};

use tokio::net::TcpListener;
use tokio::time::{self, Instant, timeout};
use tokio_rustls::TlsAcceptor;

use chat_core::cli::{Args, parse_args, stop_signal};
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

#[tokio::main]
async fn main() -> ExitCode {
    let args = match parse_args(std::env::args().skip(1), NO_DEFLATE) {
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
    let stop = stop_signal(SERVER, args.duration_s)?;
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
