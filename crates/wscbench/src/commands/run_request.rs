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

use wscbench_engine::runner::External;
use wscbench_engine::runner::rounds::{self, Adaptive};
use wscbench_engine::verify::Target;
use wscbench_results::UsageSource;

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
    /// The server given by `--url`, the plan's only row; `servers` and `rows` are then empty.
    pub external: Option<External>,
    /// The transports, in order, each once (`--transport`; `ws` when not given).
    pub transports: Vec<Transport>,
    /// The (server, transport) points left out because the server does not offer the
    /// transport, with its manifest's reason: the report's "not offered" cells.
    pub not_offered: Vec<NotOffered>,
}

/// The longest `--name`.
const NAME_MAX: usize = 40;

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
        let external = external(args)?;
        let (servers, rows, left_out) = match external {
            Some(_) => (Vec::new(), Vec::new(), Vec::new()),
            None => {
                let servers = args.select.selection().apply(known).map_err(usage)?;
                let (rows, left_out) =
                    catalog::with_variants(&servers, &args.variants).map_err(usage)?;
                (servers, rows, left_out)
            }
        };
        let transports = transports_of(args);
        let not_offered = match external {
            Some(_) => external_transports(&transports)?,
            None => check_transports(args, &servers, &transports)?,
        };
        let sweep = Sweep::new(args.sweep.clone()).map_err(usage)?;
        sweep.check(&scenarios, args.mode).map_err(usage)?;
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
        // A step the machine cannot serve is refused before anything is built or started.
        if scenarios.contains(&Scenario::IdleCapacity) && args.server_address.is_none() {
            let loadgens = args.loadgen_engines.len().max(1) as u32;
            wscbench_engine::host_limits::for_idle_capacity(args.mode, loadgens).map_err(|e| {
                UsageError::new(format!(
                    "idle-capacity in {} mode cannot run on this machine: {e}",
                    args.mode
                ))
            })?;
        }
        let budget = args.budget.or(quick.then_some(DEFAULT_BUDGET));
        // Points a server does not offer are not run: count only the offered ones.
        let row_transports = rows
            .iter()
            .map(|(s, _)| transports.iter().filter(|&&t| s.offers(t).is_ok()).count())
            .sum::<usize>();
        let estimate = runner::check_duration(
            row_transports + usize::from(external.is_some()),
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
            external,
            transports,
            not_offered,
        })
    }

    /// Each row's label, `ID` or `ID@VARIANT`; `external/NAME` for a server by URL.
    pub fn labels(&self) -> Vec<String> {
        self.rows
            .iter()
            .map(|(s, v)| server_label(&s.id, v.as_ref().map(|v| v.name.as_str())))
            .chain(
                self.external
                    .iter()
                    .map(|e| format!("{}/{}", runner::EXTERNAL_PROFILE, e.name)),
            )
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
            .sum::<usize>()
            + usize::from(self.external.is_some())
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
        (
            scenarios
                .iter()
                .any(|s| matches!(s, Scenario::Fanout | Scenario::SlowConsumers))
                && args.loadgen != LoadPath::Native,
            "the fanout and slow-consumers scenarios need the native load path (their rooms and slow readers are k6/x/chat's): drop --loadgen js",
        ),
    ]
}

/// The server of `--url`, checked: a `ws://` URL, a safe name, and a `--pid` that names a
/// running process. (clap has already refused `--url` beside server selection, variants or
/// limits, `--name` without it, and `--pid` with `--container`.)
fn external(args: &RunArgs) -> Result<Option<External>, UsageError> {
    let Some(url) = &args.url else {
        return Ok(None);
    };
    Target::from_url(url).map_err(usage)?;
    let name = args.name.clone().unwrap_or_default();
    if !is_safe_name(&name) {
        return Err(UsageError::new(format!(
            "--name {name:?} cannot name a server: use lower-case letters, digits, '-', '_' and '.', starting with a letter or digit, at most {NAME_MAX} (e.g. local-go)"
        )));
    }
    let usage_source = match (args.pid, &args.container) {
        (Some(pid), _) => {
            let reading = wscbench_engine::process::read(pid)
                .map_err(|e| UsageError::new(format!("--pid {pid}: {e}")))?;
            if !reading.alive() {
                return Err(UsageError::new(format!(
                    "--pid {pid}: the process has exited"
                )));
            }
            UsageSource::Process { pid }
        }
        (None, Some(container)) => UsageSource::Container {
            container: container.clone(),
        },
        (None, None) => UsageSource::Absent,
    };
    Ok(Some(External {
        name,
        url: url.clone(),
        usage: usage_source,
    }))
}

/// A name that is safe in a path, a container name and a table: `[a-z0-9][a-z0-9._-]*`.
fn is_safe_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "-_.".contains(c))
        && name.len() <= NAME_MAX
}

/// A server by URL is reached over `ws://` only (docs/external.md): any other transport is
/// the caller's usage.
fn external_transports(transports: &[Transport]) -> Result<Vec<NotOffered>, UsageError> {
    match transports.iter().find(|t| !t.is_ws()) {
        Some(t) => Err(UsageError::new(format!(
            "--transport {t} with --url: a server by URL is reached over ws:// only"
        ))),
        None => Ok(Vec::new()),
    }
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

    /// What clap itself says of a command line, when it refuses it.
    fn clap_refusal(flags: &[&str]) -> Option<String> {
        Cli::try_parse_from(["wscbench", "run"].iter().chain(flags))
            .err()
            .map(|e| e.to_string())
    }

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
    fn a_fanout_room_size_sweep_plans_one_point_per_size_and_the_room_scenarios_need_the_native_path()
     {
        let request = check(&[
            "--server",
            "profile-b/go",
            "--scenario",
            "fanout",
            "--sweep",
            "room-size=2,10,100,1000",
        ])
        .unwrap();
        assert_eq!(request.scenarios, [Scenario::Fanout]);
        let sizes: Vec<f64> = request.load_points.iter().map(|p| p["room-size"]).collect();
        assert_eq!(sizes, [2.0, 10.0, 100.0, 1000.0]);
        // Smoke mode's 100 clients make no room of 1,000.
        let err = check(&[
            "--mode",
            "smoke",
            "--scenario",
            "fanout",
            "--sweep",
            "room-size=2,1000",
        ])
        .unwrap_err();
        assert!(
            err.to_string()
                .contains("fanout in smoke mode has 100 clients"),
            "{err}"
        );
        let err = check(&["--loadgen", "js", "--scenario", "slow-consumers"]).unwrap_err();
        assert!(
            err.to_string().contains("need the native load path"),
            "{err}"
        );
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

    #[test]
    fn a_url_with_a_name_is_one_external_row_with_its_usage_absent() {
        let request = check(&["--url", "ws://127.0.0.1:9/ws", "--name", "local-go"]).unwrap();
        assert_eq!(request.labels(), ["external/local-go"]);
        assert_eq!(request.row_transports(), 1);
        let external = request.external.unwrap();
        assert_eq!(external.name, "local-go");
        assert_eq!(external.usage, UsageSource::Absent);
        assert!(request.rows.is_empty() && request.servers.is_empty());
    }

    #[test]
    fn a_url_needs_a_name_and_refuses_server_selection_variants_and_limits() {
        let url = ["--url", "ws://127.0.0.1:9/ws"];
        let refused = |extra: &[&str]| {
            let flags: Vec<&str> = url.iter().chain(extra).copied().collect();
            clap_refusal(&flags).unwrap_or_else(|| panic!("{extra:?} was accepted"))
        };
        assert!(refused(&[]).contains("--name"), "{}", refused(&[]));
        for extra in [
            &["--name", "x", "--server", "profile-b/go"][..],
            &["--name", "x", "--profile", "b"],
            &["--name", "x", "--lang", "go"],
            &["--name", "x", "--variant", "all"],
            &["--name", "x", "--cpus", "1"],
            &["--name", "x", "--memory", "1g"],
            &["--name", "x", "--pause-server", "1s/5s"],
            &["--name", "x", "--pid", "1", "--container", "c"],
        ] {
            assert!(refused(extra).contains("cannot be used with"), "{extra:?}");
        }
        for without_url in [["--name", "x"], ["--pid", "1"], ["--container", "c"]] {
            assert!(clap_refusal(&without_url).is_some(), "{without_url:?}");
        }
    }

    #[test]
    fn refuses_a_name_that_is_not_safe_in_a_path() {
        for name in ["../up", "Local", "a b", "", "-x", &"x".repeat(41)] {
            // `--name=VALUE`, so that clap takes `-x` as the value it is.
            let flag = format!("--name={name}");
            let err = check(&["--url", "ws://127.0.0.1:9/ws", &flag]).unwrap_err();
            assert!(
                err.message.contains("cannot name a server"),
                "{name}: {err}"
            );
        }
        assert!(check(&["--url", "ws://127.0.0.1:9/ws", "--name", "node_ws.2"]).is_ok());
    }

    #[test]
    fn refuses_a_url_that_is_not_ws_and_a_pid_of_no_process() {
        let err = check(&["--url", "http://127.0.0.1:9/ws", "--name", "x"]).unwrap_err();
        assert!(err.message.contains("is not a ws:// URL"), "{err}");
        // Past the largest pid Linux gives (4,194,304): never a process.
        let err = check(&[
            "--url",
            "ws://127.0.0.1:9/ws",
            "--name",
            "x",
            "--pid",
            "9999999",
        ])
        .unwrap_err();
        assert!(
            err.message.starts_with("--pid 9999999: process 9999999"),
            "{err}"
        );
    }

    #[test]
    fn a_pid_that_runs_is_watched_and_a_container_is_read_through_the_engine() {
        let own = std::process::id().to_string();
        let request = check(&["--url", "ws://127.0.0.1:9/ws", "--name", "x", "--pid", &own]);
        assert_eq!(
            request.unwrap().external.unwrap().usage,
            UsageSource::Process {
                pid: std::process::id()
            }
        );
        let request = check(&[
            "--url",
            "ws://127.0.0.1:9/ws",
            "--name",
            "x",
            "--container",
            "c",
        ]);
        assert_eq!(
            request.unwrap().external.unwrap().usage,
            UsageSource::Container {
                container: "c".into()
            }
        );
    }
}
