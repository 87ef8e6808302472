//! The servers' command line and how they stop: the same in both, since
//! neither depends on the WebSocket stack (docs/protocol.md, "Command line").

use std::future::Future;
use std::path::PathBuf;
use std::time::Duration;

use tokio::signal::unix::{SignalKind, signal};
use tokio::time;

/// The arguments both servers take.
#[derive(Debug, PartialEq)]
pub struct Args {
    pub host: String,
    pub port: u16,
    /// Stop after this many seconds; 0 runs until signalled.
    pub duration_s: u64,
    /// PEM certificate and key: with both, the server serves TLS only.
    pub tls_cert: Option<PathBuf>,
    pub tls_key: Option<PathBuf>,
}

/// Parses the arguments after the program's name. `--deflate` is refused
/// with `no_deflate`, the server's reason for not offering it.
pub fn parse_args(
    mut args: impl Iterator<Item = String>,
    no_deflate: &str,
) -> Result<Args, String> {
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
            "--deflate" => return Err(no_deflate.to_owned()),
            _ => return Err(format!("unknown argument {flag}")),
        }
    }
    if parsed.tls_cert.is_some() != parsed.tls_key.is_some() {
        return Err("--tls-cert and --tls-key go together".to_owned());
    }
    Ok(parsed)
}

/// Resolves on SIGTERM, SIGINT or after `duration_s` (if not 0), saying which
/// on stderr as `server`. The handlers are installed before this returns: as
/// PID 1 there is no default action.
pub fn stop_signal(
    server: &'static str,
    duration_s: u64,
) -> std::io::Result<impl Future<Output = ()>> {
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
            _ = terminate.recv() => eprintln!("{server}: SIGTERM, shutting down"),
            _ = interrupt.recv() => eprintln!("{server}: SIGINT, shutting down"),
            () = elapsed => eprintln!("{server}: --duration {duration_s} s elapsed, shutting down"),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const NO_DEFLATE: &str = "--deflate: not offered";

    fn parse(args: &[&str]) -> Result<Args, String> {
        parse_args(args.iter().map(|arg| arg.to_string()), NO_DEFLATE)
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
