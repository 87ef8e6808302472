//! `wscbench run`'s command line, checked once and as a whole (ripgrep's `LowArgs` →
//! `HiArgs`): what clap parsed ([`RunArgs`]) and the servers found become a [`RunRequest`],
//! or one [`UsageError`]. Every refusal of `run` is raised here, before the results folder,
//! any build or any engine; clap refuses single values that do not parse.
//!
//! A new flag adds its refusals to [`refusals`] (a combination of flags) or a step of
//! [`RunRequest::check`] (a check that needs the servers, the scenarios or the plan's size).

use std::collections::BTreeMap;
use std::fmt::Display;

use wscbench_engine::catalog::{self, Row, Server};
use wscbench_engine::sweep::Sweep;
use wscbench_engine::{runner, scenarios};
use wscbench_results::dimensions::server_label;
use wscbench_results::{LoadPath, Mode, NotOffered, Scenario, Transport};

use wscbench_engine::runner::rounds::{self, Adaptive};

use crate::cli::RunArgs;

/// The rounds' time budget in quick mode when `--budget` is not given.
const DEFAULT_BUDGET: std::time::Duration = std::time::Duration::from_secs(30 * 60);
/// How long each of the two calibration loops runs at the start of a round.
const CALIBRATION_EACH: std::time::Duration = std::time::Duration::from_secs(1);
use crate::errors::UsageError;

/// What a run will do, as its command line asks and as checked.
#[derive(Debug)]
pub struct RunRequest {
    /// The selected servers, each built once whatever its variants.
    pub servers: Vec<Server>,
    /// The scenarios, in run order.
    pub scenarios: Vec<Scenario>,
    /// Each server as itself or as one of its variants, in run order.
    pub rows: Vec<Row>,
    /// Selected servers that declare none of the variants asked for.
    pub left_out: Vec<String>,
    /// The sweep as given.
    pub sweep: Sweep,
    /// Its load points (none without a sweep).
    pub load_points: Vec<BTreeMap<String, f64>>,
    /// The rounds every point gets (`--runs`, by mode when not given).
    pub min_rounds: u32,
    /// How rounds are added for precision, within the budget.
    pub adaptive: Adaptive,
    /// The precision goal in percent, when rounds are added for it.
    pub precision_pct: Option<f64>,
    /// The transports, in order, each once (`--transport`; `ws` when not given).
    pub transports: Vec<Transport>,
    /// The (server, transport) points left out because the server does not offer the
    /// transport, with its manifest's reason: the report's "not offered" cells.
    pub not_offered: Vec<NotOffered>,
}

impl RunRequest {
    /// Checks `args` against the servers `known` (those with a manifest): the first refusal
    /// is the error.
    pub fn check(args: &RunArgs, known: &[Server]) -> Result<RunRequest, UsageError> {
        let scenarios: Vec<Scenario> = if args.scenarios.is_empty() {
            Scenario::DEFAULT.to_vec()
        } else {
            args.scenarios.clone()
        };
        if let Some((_, why)) = refusals(args, &scenarios)
            .into_iter()
            .find(|(refused, _)| *refused)
        {
            return Err(UsageError::new(why));
        }
        // The catalog, the sweep and the duration check fail only on what was asked for.
        let servers = args.select.selection().apply(known).map_err(usage)?;
        let (rows, left_out) = catalog::with_variants(&servers, &args.variants).map_err(usage)?;
        let transports = transports_of(args);
        let not_offered = check_transports(args, &servers, &transports)?;
        let sweep = Sweep::new(args.sweep.clone()).map_err(usage)?;
        sweep.check(&scenarios).map_err(usage)?;
        let load_points = if sweep.is_empty() {
            Vec::new()
        } else {
            sweep.points()
        };
        let quick = args.mode == Mode::Quick;
        let min_rounds = args.runs.unwrap_or(if quick { 3 } else { 1 });
        let max_rounds = args
            .max_rounds
            .unwrap_or(if quick { 10 } else { min_rounds });
        if max_rounds < min_rounds {
            return Err(UsageError::new(format!(
                "--max-rounds {max_rounds} is fewer than --runs {min_rounds}"
            )));
        }
        let budget = args.budget.or(quick.then_some(DEFAULT_BUDGET));
        // Points a server does not offer are not run: count only the offered ones.
        let row_transports = rows
            .iter()
            .map(|(s, _)| transports.iter().filter(|&&t| s.offers(t).is_ok()).count())
            .sum::<usize>();
        let estimate = runner::check_duration(
            row_transports,
            &scenarios,
            load_points.len(),
            min_rounds,
            args.mode,
            args.duration,
            args.max_duration,
        )
        .map_err(usage)?;
        if let Some(budget) = budget.filter(|b| estimate > *b) {
            return Err(UsageError::new(format!(
                "--budget {} is too small for {min_rounds} round(s) of this plan, which take about {} min; the smallest budget that works is {}m (or lower --runs, or narrow the plan)",
                humantime::format_duration(budget),
                estimate.as_secs().div_ceil(60),
                estimate.as_secs().div_ceil(60)
            )));
        }
        let adaptive = Adaptive {
            max_rounds,
            budget,
            seed: args.seed.unwrap_or_else(rounds::fresh_seed),
            calibrate_each: (!args.no_calibration).then_some(CALIBRATION_EACH),
        };
        Ok(RunRequest {
            servers,
            scenarios,
            rows,
            left_out,
            sweep,
            load_points,
            min_rounds,
            precision_pct: (max_rounds > min_rounds).then_some(args.precision),
            adaptive,
            transports,
            not_offered,
        })
    }

    /// Each row's label, `ID` or `ID@VARIANT`.
    pub fn labels(&self) -> Vec<String> {
        self.rows
            .iter()
            .map(|(s, v)| server_label(&s.id, v.as_ref().map(|v| v.name.as_str())))
            .collect()
    }

    /// Rows times the transports each offers: the points of one round per scenario and
    /// load point.
    pub fn row_transports(&self) -> usize {
        self.rows
            .iter()
            .map(|(s, _)| {
                self.transports
                    .iter()
                    .filter(|&&t| s.offers(t).is_ok())
                    .count()
            })
            .sum()
    }

    /// The selected servers that some row runs: those to build.
    pub fn servers_to_build(&self) -> Vec<Server> {
        self.servers
            .iter()
            .filter(|s| self.rows.iter().any(|(row, _)| row.id == s.id))
            .cloned()
            .collect()
    }
}

/// The flag combinations `run` refuses: (refused, the line that says what to change), one
/// per rule, in the order they are reported.
fn refusals(args: &RunArgs, scenarios: &[Scenario]) -> Vec<(bool, &'static str)> {
    let soak_length = args.duration.is_some();
    vec![
        (
            args.loadgen_engines.len() > 1 && args.loadgen == LoadPath::Js,
            "several --loadgen-engine need the native load path: only its histograms merge exactly (drop --loadgen js)",
        ),
        (
            soak_length && args.mode != Mode::Soak,
            "--duration sets how long a soak runs: add --mode soak",
        ),
        (
            soak_length && !scenarios.iter().any(|s| scenarios::has_soak_length(*s)),
            "--duration lengthens steady and churn only; none of them is selected",
        ),
        (
            scenarios.contains(&Scenario::Capacity) && args.loadgen != LoadPath::Native,
            "the capacity scenario needs the native load path (its per-step histograms come from k6/x/chat): drop --loadgen js",
        ),
    ]
}

/// `--transport` as given, each once, in order; `ws` when not given.
fn transports_of(args: &RunArgs) -> Vec<Transport> {
    let mut transports: Vec<Transport> = Vec::new();
    for &t in &args.transports {
        if !transports.contains(&t) {
            transports.push(t);
        }
    }
    if transports.is_empty() {
        transports.push(Transport::Ws);
    }
    transports
}

/// A server named with `--server` must offer every transport asked; servers selected by
/// profile, language or not at all leave a transport they do not offer out, as a "not
/// offered" cell, unless none of them offers it. The js load path speaks `ws` only.
fn check_transports(
    args: &RunArgs,
    servers: &[Server],
    transports: &[Transport],
) -> Result<Vec<NotOffered>, UsageError> {
    if args.loadgen == LoadPath::Js && transports.iter().any(|t| !t.is_ws()) {
        return Err(UsageError::new(
            "--transport other than ws needs the native load path (k6/x/chat speaks wss and permessage-deflate; k6/websockets does not): drop --loadgen js",
        ));
    }
    for server in servers
        .iter()
        .filter(|s| args.select.servers.contains(&s.id))
    {
        server.check_transports(transports).map_err(usage)?;
    }
    let mut not_offered = Vec::new();
    for &transport in transports {
        let refusals: Vec<NotOffered> = servers
            .iter()
            .filter_map(|s| {
                s.offers(transport).err().map(|reason| NotOffered {
                    server: s.id.clone(),
                    transport,
                    reason,
                })
            })
            .collect();
        if refusals.len() == servers.len() {
            let why: Vec<String> = refusals
                .iter()
                .map(|n| format!("{} does not offer {transport}: {}", n.server, n.reason))
                .collect();
            return Err(UsageError::new(why.join("; ")));
        }
        not_offered.extend(refusals);
    }
    Ok(not_offered)
}

fn usage(err: impl Display) -> UsageError {
    UsageError::new(err.to_string())
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::cli::{Cli, Command};

    fn check(flags: &[&str]) -> Result<RunRequest, UsageError> {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
        let known = crate::commands::discover(std::path::Path::new(root)).unwrap();
        let cli = Cli::try_parse_from(["wscbench", "run"].iter().chain(flags)).unwrap();
        let Command::Run(args) = cli.command else {
            panic!("not run")
        };
        RunRequest::check(&args, &known)
    }

    #[test]
    fn a_plain_run_is_every_server_under_the_default_scenarios() {
        let request = check(&[]).unwrap();
        assert_eq!(request.scenarios, Scenario::DEFAULT);
        assert_eq!(request.servers.len(), 6);
        assert_eq!(request.labels().len(), 6);
        assert!(request.load_points.is_empty() && request.left_out.is_empty());
    }

    #[test]
    fn variants_and_sweeps_shape_the_rows_and_points_and_each_server_is_built_once() {
        let request = check(&[
            "--server",
            "profile-b/go",
            "--server",
            "profile-b/zig",
            "--variant",
            "all",
            "--scenario",
            "steady",
            "--sweep",
            "clients=10,20",
        ])
        .unwrap();
        assert_eq!(request.load_points.len(), 2);
        assert!(
            request
                .labels()
                .contains(&"profile-b/go@gomaxprocs-1".to_string())
        );
        let built: Vec<String> = request
            .servers_to_build()
            .into_iter()
            .map(|s| s.id)
            .collect();
        assert_eq!(built, ["profile-b/go", "profile-b/zig"]);
    }

    #[test]
    fn transports_default_to_ws_and_repeat_once() {
        let request = check(&["--server", "profile-b/go"]).unwrap();
        assert_eq!(request.transports, [Transport::Ws]);
        assert!(request.not_offered.is_empty());
        let request = check(&[
            "--server",
            "profile-b/go",
            "--transport",
            "ws,ws",
            "--transport",
            "ws",
        ])
        .unwrap();
        assert_eq!(request.transports, [Transport::Ws]);
    }

    #[test]
    fn a_transport_other_than_ws_needs_the_native_load_path() {
        let err = check(&["--loadgen", "js", "--transport", "ws,wss"]).unwrap_err();
        assert!(err.message.contains("drop --loadgen js"), "{}", err.message);
    }

    #[test]
    fn a_transport_a_named_server_does_not_offer_is_refused_with_its_reason() {
        let known = crate::commands::discover(std::path::Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../.."
        )))
        .unwrap();
        // Whichever transport the first server does not offer (every server offers ws).
        let server = &known[0];
        let Some(&missing) = Transport::ALL.iter().find(|&&t| server.offers(t).is_err()) else {
            return; // it offers all four: nothing to refuse
        };
        let reason = server.offers(missing).unwrap_err();
        let err = check(&["--server", &server.id, "--transport", missing.as_str()]).unwrap_err();
        assert_eq!(
            err.message,
            format!("{} does not offer {missing}: {reason}", server.id)
        );
    }

    #[test]
    fn the_first_refused_combination_is_the_one_reported() {
        let err = check(&[
            "--loadgen",
            "js",
            "--scenario",
            "capacity",
            "--duration",
            "30m",
        ])
        .unwrap_err();
        assert_eq!(
            err.message,
            "--duration sets how long a soak runs: add --mode soak"
        );
    }
}
