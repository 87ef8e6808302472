//! A server's process around its stack, the same in both: the command line,
//! the listener, serving until the stop signal, and the shutdown
//! docs/protocol.md asks for (stop accepting, close every client with 1001,
//! print the final stats as the last line of stdout, exit 0 within 2 s).
//! Each server's `main` hands [`main`] how its stack serves a bound listener.

use std::future::Future;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, SystemTime};

use tokio::net::TcpListener;
use tokio::time::{self, Instant};

use crate::cli::{Args, parse_args, stop_signal};
use crate::hub::Hub;
use crate::stats::Stats;

/// How long shutdown waits for clients to answer their 1001 close frames;
/// the protocol wants the process gone within 2 s of the signal.
const SHUTDOWN_GRACE: Duration = Duration::from_millis(1500);

/// Runs the server `server` (its image tag, reported as `server` in /stats):
/// its arguments parsed (a usage error exits 2 with `usage`; `--deflate` is
/// refused with `no_deflate`), then `serve` given the bound listener, the
/// TLS configuration of `--tls-cert`/`--tls-key` if any, and the hub, until
/// the stop signal. Any error before or while serving exits 1.
pub async fn main<T, F, Fut>(
    server: &'static str,
    usage: &str,
    no_deflate: &str,
    serve: F,
) -> ExitCode
where
    T: From<String> + Clone,
    F: FnOnce(TcpListener, Option<Arc<rustls::ServerConfig>>, Arc<Hub<T>>) -> Fut,
    Fut: Future<Output = std::io::Result<()>>,
{
    let args = match parse_args(std::env::args().skip(1), no_deflate) {
        Ok(args) => args,
        Err(message) => {
            eprintln!("{server}: {message}\n{usage}");
            return ExitCode::from(2);
        }
    };
    match run(server, args, serve).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("{server}: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn run<T, F, Fut>(server: &'static str, args: Args, serve: F) -> std::io::Result<()>
where
    T: From<String> + Clone,
    F: FnOnce(TcpListener, Option<Arc<rustls::ServerConfig>>, Arc<Hub<T>>) -> Fut,
    Fut: Future<Output = std::io::Result<()>>,
{
    // A certificate the server cannot serve stops it before it binds.
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => Some(
            crate::tls::server_config(cert, key, SystemTime::now())
                .map_err(std::io::Error::other)?,
        ),
        _ => None,
    };
    let listener = TcpListener::bind((args.host.as_str(), args.port)).await?;
    let scheme = if tls.is_some() { "TLS" } else { "TCP" };
    eprintln!(
        "{server} listening on {} ({scheme})",
        listener.local_addr()?
    );
    let hub = Arc::new(Hub::new(Arc::new(Stats::new(server))));
    let stop = stop_signal(server, args.duration_s)?;

    // Dropping the serving future closes the listener; the hub closes the
    // WebSockets, which live in tasks of their own.
    tokio::select! {
        served = serve(listener, tls, Arc::clone(&hub)) => served?,
        () = stop => {}
    }

    hub.close_all();
    let deadline = Instant::now() + SHUTDOWN_GRACE;
    while hub.stats.connections_current.load(Relaxed) > 0 && Instant::now() < deadline {
        time::sleep(Duration::from_millis(10)).await;
    }
    println!("{}", hub.stats.to_json());
    Ok(())
}
