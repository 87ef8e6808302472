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
use wscbench_results::{LoadPath, Mode, Scenario};

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
        let estimate = runner::check_duration(
            rows.len(),
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
        })
    }

    /// Each row's label, `ID` or `ID@VARIANT`.
    pub fn labels(&self) -> Vec<String> {
        self.rows
            .iter()
            .map(|(s, v)| server_label(&s.id, v.as_ref().map(|v| v.name.as_str())))
            .collect()
    }

    /// The selected servers that some row runs: those to build.
    pub fn servers_to_build(&self) -> Vec<Server> {
        // One image per tag: a variant with a binary of its own has its own tag.
        let mut built: Vec<Server> = Vec::new();
        for server in &self.servers {
            for (row, _) in self.rows.iter().filter(|(row, _)| row.id == server.id) {
                if !built.iter().any(|b| b.tag == row.tag) {
                    built.push(row.clone());
                }
            }
        }
        built
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
        assert_eq!(request.servers_to_build().len(), 6);
    }

    #[test]
    fn debian_s_libwebsockets_is_a_row_with_its_own_image_beside_profile_a_zig() {
        let request = check(&[
            "--variant",
            "default",
            "--variant",
            "debian-lws",
            "--scenario",
            "saturation",
        ])
        .unwrap();
        assert!(
            request
                .labels()
                .contains(&"profile-a/zig@debian-lws".to_string())
        );
        // Its own binary, so its own image: seven to build.
        assert_eq!(request.servers_to_build().len(), 7);
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
