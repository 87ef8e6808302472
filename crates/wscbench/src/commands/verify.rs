//! `wscbench verify`: run the protocol checks (or the hostile ones), and with
//! `--conformance` the RFC 6455 conformance cases, against a URL or against servers it
//! starts itself. Its command line is checked once, as a whole, into a [`VerifyRequest`] (as `run`'s is in
//! `run_request`): every refusal is raised there, before any build.

use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Args;
use wscbench_engine::catalog::Server;
use wscbench_engine::catalog::local::{self, LocalServer};
use wscbench_engine::net::tls::RunCert;
use wscbench_engine::verify::{self, CheckResult, Target, VerifyReport, conformance, hostile};
use wscbench_report::{Format, Report};
use wscbench_results::{CaseResult, ServerConformance, Transport};

use crate::args::{SelectArgs, one_of, transports_asked};
use crate::errors::{Doing, ExpectedError, UsageError};
use crate::exit::ExitCode;

/// `wscbench verify`'s command line as clap parses it: read once, by `VerifyRequest::check`.
#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// Verify a running server at this URL, e.g. ws://127.0.0.1:8080/ws
    #[arg(long, value_name = "URL", conflicts_with_all = ["servers", "profiles", "langs", "groups", "all"])]
    pub url: Option<String>,
    #[command(flatten)]
    pub select: SelectArgs,
    /// Verify every server that has a manifest
    #[arg(long)]
    pub all: bool,
    /// Run only this check (repeatable); see the check names in the output
    #[arg(long = "only", value_name = "CHECK")]
    pub only: Vec<String>,
    /// Run the hostile-client checks instead of the protocol checks: malformed floods, binary,
    /// oversize and fragmented frames, ping floods, slowloris, resets, clients that never read,
    /// a 2,000-connection flood; after each the server must serve two canary members within 1 s
    /// with its memory back within 64 MiB (127.0.0.1 only; about 1 min per server)
    #[arg(long)]
    pub hostile: bool,
    /// Also run the RFC 6455 conformance cases (Autobahn categories 1-7 on raw frames,
    /// through the chat protocol) over each transport, and print a server x category table
    /// of strict / non-strict / ignored; an ignored or failed case fails the verification
    #[arg(long)]
    pub conformance: bool,
    /// Use this binary instead of building the server (with exactly one --server)
    #[arg(long, value_name = "PATH", requires = "servers")]
    pub binary: Option<PathBuf>,
    /// Run the checks over each of these transports a server offers (comma list or
    /// repeated): ws, wss (a certificate made for the run, trusted by the checks' client),
    /// ws+deflate, wss+deflate (the server given --deflate; the checks' client offers
    /// permessage-deflate with no context takeover and requires it: a first check,
    /// deflate_negotiated, shows the server's answer and fails when it refuses). A
    /// transport a server does not offer is reported with its manifest's reason and
    /// skipped. --hostile runs over ws only [default: ws]
    #[arg(long = "transport", value_name = "LIST", value_delimiter = ',', value_parser = one_of(Transport::ALL, Transport::as_str), conflicts_with = "url")]
    pub transports: Vec<Transport>,
    /// Print machine-readable JSON instead of the check list
    #[arg(long)]
    pub json: bool,
    /// Pass the server's own log (stderr) through
    #[arg(long)]
    pub server_logs: bool,
}

/// What `verify` will do, as its command line asks and as checked.
struct VerifyRequest {
    /// A running server, or the servers to build and start.
    target: VerifyTarget,
    /// Only these checks (`--only`); every check when empty.
    only: Vec<String>,
    /// The hostile-client checks instead of the protocol checks (`--hostile`).
    hostile: bool,
    /// The RFC 6455 conformance cases too (`--conformance`).
    conformance: bool,
    /// The binary to start instead of building the one server (`--binary`).
    binary: Option<PathBuf>,
    /// JSON instead of the check list (`--json`).
    json: bool,
    /// Pass the server's own log through (`--server-logs`).
    server_logs: bool,
}

/// What `verify` checks.
enum VerifyTarget {
    /// The server already running at `--url`.
    Url(Target),
    /// The selected servers, each over every transport asked that it offers.
    Servers {
        servers: Vec<Server>,
        transports: Vec<Transport>,
    },
}

impl VerifyRequest {
    /// Checks `args` against the checks there are and the servers under `root`: the first
    /// refusal is the error.
    fn check(root: &Path, args: &VerifyArgs) -> Result<VerifyRequest, ExpectedError> {
        let known: Vec<&str> = if args.hostile {
            hostile::all_hostile_checks()
                .iter()
                .map(|c| c.name)
                .collect()
        } else {
            verify::all_checks()
                .iter()
                .map(|c| c.name)
                .chain([verify::SHUTDOWN_CHECK])
                .collect()
        };
        let cases: Vec<&str> = match args.conformance {
            true => conformance::all_cases().iter().map(|c| c.id).collect(),
            false => Vec::new(),
        };
        if let Some(unknown) = args
            .only
            .iter()
            .find(|o| !known.contains(&o.as_str()) && !cases.contains(&o.as_str()))
        {
            let cases = match args.conformance {
                true => format!("; the conformance cases are: {}", cases.join(", ")),
                false => String::new(),
            };
            return Err(UsageError::new(format!(
                "unknown check {unknown:?}; the checks are: {}{cases}",
                known.join(", ")
            ))
            .into());
        }
        let target = match &args.url {
            Some(url) => VerifyTarget::Url(
                Target::from_url(url).map_err(|e| UsageError::new(e.to_string()))?,
            ),
            None => {
                if args.select.is_empty() && !args.all {
                    return Err(UsageError::new(
                        "say what to verify: --url ws://127.0.0.1:PORT/ws, --server ID, --profile, --lang or --all",
                    )
                    .into());
                }
                let servers = super::select(root, &args.select)?;
                if args.binary.is_some() && servers.len() != 1 {
                    return Err(UsageError::new("--binary needs exactly one --server").into());
                }
                let transports = checked_transports(args)?;
                // A server named with --server must offer every transport asked, as in `run`.
                for server in servers
                    .iter()
                    .filter(|s| args.select.servers.contains(&s.id))
                {
                    server
                        .check_transports(&transports)
                        .doing(|| "checking --transport")?;
                }
                VerifyTarget::Servers {
                    servers,
                    transports,
                }
            }
        };
        Ok(VerifyRequest {
            target,
            only: args.only.clone(),
            hostile: args.hostile,
            conformance: args.conformance,
            binary: args.binary.clone(),
            json: args.json,
            server_logs: args.server_logs,
        })
    }
}

pub async fn run(root: &Path, args: VerifyArgs) -> Result<ExitCode, ExpectedError> {
    let request = VerifyRequest::check(root, &args)?;
    let mut outcome = Outcome::default();
    match &request.target {
        VerifyTarget::Url(target) => outcome.add(
            check(
                &target.ws_url.clone(),
                target,
                Transport::Ws,
                &request,
                None,
            )
            .await,
        ),
        VerifyTarget::Servers {
            servers,
            transports,
        } => verify_servers(servers, transports, &request, &mut outcome).await?,
    }
    if request.json {
        let json = match request.conformance {
            true => serde_json::to_string_pretty(&serde_json::json!({
                "checks": outcome.reports,
                "conformance": outcome.conformance,
            })),
            false => serde_json::to_string_pretty(&outcome.reports),
        };
        println!("{}", json.expect("reports always serialize"));
    } else if let Some(table) =
        wscbench_report::conformance::conformance_table(&outcome.conformance)
    {
        let report = Report {
            notes: Vec::new(),
            scorecards: Vec::new(),
            tables: vec![table],
        };
        print!("\n{}", Format::Terminal.render(&report));
    }
    let failed = outcome.reports.iter().filter(|r| !r.passed()).count()
        + outcome.conformance.iter().filter(|c| !c.passed()).count();
    Ok(ExitCode::from_failures(failed))
}

/// What verifying one server over one transport found: the checks' report (none when
/// `--only` named conformance cases alone) and, with `--conformance`, its conformance.
type Found = (Option<VerifyReport>, Option<ServerConformance>);

/// Everything verified, in order.
#[derive(Default)]
struct Outcome {
    reports: Vec<VerifyReport>,
    conformance: Vec<ServerConformance>,
}

impl Outcome {
    fn add(&mut self, (report, conformance): Found) {
        self.reports.extend(report);
        self.conformance.extend(conformance);
    }
}

/// Each server over each transport it offers; a transport it does not offer is named and
/// skipped.
async fn verify_servers(
    servers: &[Server],
    transports: &[Transport],
    args: &VerifyRequest,
    outcome: &mut Outcome,
) -> Result<(), ExpectedError> {
    let cert = match transports.iter().any(|t| t.is_tls()) {
        true => Some(RunCert::make().doing(|| "making the TLS certificate for wss")?),
        false => None,
    };
    for server in servers {
        for &transport in transports {
            if let Err(reason) = server.offers(transport) {
                if !args.json {
                    println!(
                        "verify {} over {transport}: not offered ({reason})",
                        server.id
                    );
                }
                continue;
            }
            outcome.add(verify_local(server, args, transport, cert.as_ref()).await?);
        }
    }
    Ok(())
}

/// `--transport` as asked (see [`transports_asked`]). The hostile checks write raw frames on
/// TCP: they run over ws only.
fn checked_transports(args: &VerifyArgs) -> Result<Vec<Transport>, ExpectedError> {
    let transports = transports_asked(&args.transports);
    if args.hostile && transports.iter().any(|t| !t.is_ws()) {
        return Err(UsageError::new(
            "--hostile runs over ws only (its checks write raw frames on TCP): drop --transport",
        )
        .into());
    }
    Ok(transports)
}

async fn verify_local(
    server: &Server,
    args: &VerifyRequest,
    transport: Transport,
    cert: Option<&RunCert>,
) -> Result<Found, ExpectedError> {
    let binary = match &args.binary {
        Some(path) => path.clone(),
        None => {
            if !args.json {
                eprintln!("building {} ...", server.id);
            }
            local::build(server)
                .await
                .doing(|| format!("building {}", server.id))?
                .binary
        }
    };
    let mut extra = Vec::new();
    let tls = cert.filter(|_| transport.is_tls());
    if let Some(cert) = tls {
        extra.extend(cert.host_args());
    }
    if transport.is_deflate() {
        extra.push("--deflate".to_string());
    }
    let process = super::start_local_with(
        server,
        &binary,
        &extra,
        tls.map(RunCert::client_config),
        args.server_logs,
    )
    .await?;
    let mut target = Target::loopback(process.port);
    if let Some(cert) = tls {
        target = target.with_tls(cert.client_config());
    }
    if transport.is_deflate() {
        target = target.with_deflate();
    }
    Ok(check(&server.id, &target, transport, args, Some(process)).await)
}

/// Runs what `args` asks against one server: the protocol checks (the shutdown check
/// last, on a server we started) or the hostile ones, then the conformance cases.
async fn check(
    id: &str,
    target: &Target,
    transport: Transport,
    args: &VerifyRequest,
    process: Option<LocalServer>,
) -> Found {
    let quiet = args.json;
    if !quiet {
        let label = match transport {
            Transport::Ws => id.to_string(),
            t => format!("{id} over {t}"),
        };
        match label == target.ws_url {
            true => println!("verify {label}"),
            false => println!("verify {label} {}", target.ws_url),
        }
    }
    let print = |c: &CheckResult| {
        if !quiet {
            print_check(c);
        }
    };
    // `--only` may name checks, conformance cases, or both: each part runs when named.
    let case_named = |o: &String| conformance::all_cases().iter().any(|c| c.id == o);
    let only_checks: Vec<String> = args
        .only
        .iter()
        .filter(|o| !case_named(o))
        .cloned()
        .collect();
    let only_cases: Vec<String> = args
        .only
        .iter()
        .filter(|o| case_named(o))
        .cloned()
        .collect();
    let run_checks = args.only.is_empty() || !only_checks.is_empty();
    let run_cases = args.conformance && (args.only.is_empty() || !only_cases.is_empty());
    let mut report = None;
    if run_checks && args.hostile {
        let pid = process.as_ref().and_then(|p| p.pid());
        report = Some(hostile::hostile(target, pid, &only_checks, print).await);
    } else if run_checks {
        report = Some(verify::verify(target, &only_checks, print).await);
    }
    let conformance = match run_cases {
        true => Some(run_conformance(id, target, transport, &only_cases, quiet).await),
        false => None,
    };
    if let Some(process) = process {
        let shutdown_named = only_checks.iter().any(|o| o == verify::SHUTDOWN_CHECK);
        match report.as_mut() {
            Some(report) if !args.hostile && (args.only.is_empty() || shutdown_named) => {
                let result = verify::verify_shutdown(process).await;
                if !quiet {
                    print_check(&result);
                }
                report.checks.push(result);
            }
            _ => {
                process.stop(Duration::from_secs(3)).await;
            }
        }
    }
    if let (false, Some(report)) = (quiet, &report) {
        let passed = report.checks.iter().filter(|c| c.passed).count();
        println!("{passed} passed, {} failed", report.checks.len() - passed);
    }
    (report, conformance)
}

async fn run_conformance(
    id: &str,
    target: &Target,
    transport: Transport,
    only: &[String],
    quiet: bool,
) -> ServerConformance {
    if !quiet {
        println!("  conformance (RFC 6455, Autobahn categories 1-7):");
    }
    let print = |c: &CaseResult| {
        if !quiet {
            println!(
                "  {:<10} {:<30} {} ({} ms)",
                c.verdict.as_str().to_uppercase(),
                c.id,
                c.evidence,
                c.duration_ms
            );
        }
    };
    let found = conformance::conformance(target, id, transport, only, print).await;
    if !quiet {
        let failing = found.failing().count();
        println!(
            "  {} cases: {} ignored, failed or not run",
            found.cases.len(),
            failing
        );
    }
    found
}

fn print_check(c: &CheckResult) {
    let mark = if c.passed { "PASS" } else { "FAIL" };
    println!(
        "  {mark} {:<20} {} ({} ms)",
        c.name, c.detail, c.duration_ms
    );
}
