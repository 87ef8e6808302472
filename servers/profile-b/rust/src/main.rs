//! wsc-rust, the profile-B Rust chat server of wscbench: tokio and
//! tokio-tungstenite used directly, with the HTTP upgrade done by hand in
//! `http`. It implements docs/protocol.md; the shape (protocol, limiter,
//! stats, hub, client) matches the other five servers.

mod client;
mod http;

use std::future::Future;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::signal::unix::{SignalKind, signal};
use tokio::time::{self, Instant};

use chat_core::stats::Stats;

use crate::client::Hub;

/// The image tag, reported as `server` in /stats.
pub const SERVER: &str = "wsc-rust";

/// How long shutdown waits for clients to answer their 1001 close frames;
/// the protocol wants the process gone within 2 s of the signal.
const SHUTDOWN_GRACE: Duration = Duration::from_millis(1500);

const USAGE: &str = "usage: wsc-rust [--host ADDR] [--port PORT] [--duration SECONDS]";

#[derive(Debug, PartialEq)]
struct Args {
    host: String,
    port: u16,
    /// Stop after this many seconds; 0 runs until signalled.
    duration_s: u64,
}

fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut parsed = Args {
        host: "0.0.0.0".to_owned(),
        port: 8080,
        duration_s: 0,
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
            _ => return Err(format!("unknown argument {flag}")),
        }
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
    let listener = TcpListener::bind((args.host.as_str(), args.port)).await?;
    eprintln!("{SERVER} listening on {}", listener.local_addr()?);
    let hub = Arc::new(Hub::new(Arc::new(Stats::new(SERVER))));
    let stop = stop_signal(args.duration_s)?;
    tokio::pin!(stop);
    loop {
        tokio::select! {
            () = &mut stop => break,
            accepted = listener.accept() => match accepted {
                Ok((tcp, _)) => {
                    tokio::spawn(http::handle(tcp, Arc::clone(&hub)));
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
                duration_s: 0
            })
        );
    }

    #[test]
    fn flags_with_separate_or_inline_values() {
        let expected = Args {
            host: "127.0.0.1".to_owned(),
            port: 9000,
            duration_s: 5,
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
}
