//! The command line: the commands' own arguments assembled into one clap command, buildable
//! from any argument list so tests can drive it, and the dispatch to each command. Each
//! command owns its arguments (`commands::run_request::RunArgs`, ...), the ones several share
//! live in `args.rs`; nothing imports this file but `main.rs`.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::commands::{
    self, build::BuildArgs, calibrate::CalibrateArgs, clean::CleanArgs, compare::CompareArgs,
    idle_memory::IdleMemoryArgs, list::ListArgs, loadgen_capacity::LoadgenCapacityArgs,
    merge_native::MergeNativeArgs, report::ReportArgs, run_request::RunArgs, verify::VerifyArgs,
};
use crate::errors::{Doing, ExpectedError, UsageError};
use crate::exit::ExitCode;

/// Compare WebSocket public-chat server stacks fairly.
///
/// wscbench verifies that every server speaks the same chat protocol, builds each into a
/// FROM-scratch Docker image, runs it under identical limits while k6 drives it through each
/// load shape asked for (run --scenario lists them), samples docker stats, and stores every
/// run as JSON in results/.
#[derive(Debug, Parser)]
#[command(
    name = "wscbench",
    version,
    propagate_version = true,
    max_term_width = 100,
    after_help = crate::exit::ExitCode::help_section()
)]
pub struct Cli {
    /// The project directory holding servers/ and scenarios/ [default: found upwards from the current directory]
    #[arg(long, global = true, env = "WSCBENCH_ROOT", value_name = "DIR")]
    pub root: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List the servers found through their server.toml manifests.
    List(ListArgs),
    /// Prove that a server speaks the chat protocol (docs/protocol.md), check by named check.
    ///
    /// With --url, checks a server that is already running. With --server/--profile/--lang/--all,
    /// builds each selected server from its manifest, runs it as a local process on a free
    /// loopback port, checks it (including its SIGTERM shutdown), and stops it.
    /// With --hostile, attacks it instead (see --hostile). Exits 1 if any check fails.
    Verify(VerifyArgs),
    /// Measure a server's resident memory with N idle joined clients, and after they leave.
    IdleMemory(IdleMemoryArgs),
    /// Build the FROM-scratch images of the selected servers and of k6 (run does this itself).
    ///
    /// Each server is built with its manifest's build command on the host, packed into an image
    /// tagged with the manifest's tag and labelled with a hash of its sources. An image whose
    /// sources have not changed is reused, so a second build takes seconds. Every toolchain
    /// the selected servers need is checked first, before the engine is asked.
    Build(BuildArgs),
    /// Benchmark: for each selected server × scenario, start the server under identical limits,
    /// verify it, drive it with k6, sample docker stats, and write results/<run-id>/...json.
    ///
    /// The first Ctrl-C stops and removes every container of the run, keeps the results already
    /// written, marks the run interrupted, and exits 130.
    Run(Box<RunArgs>),
    /// Render the comparison tables from stored results alone (no Docker needed).
    ///
    /// One table never mixes modes, load paths or server limits: by default the report shows
    /// those of the most recent run (--mode and --run choose) and names what it left out.
    /// Repetitions of a point (run --runs N) print as mean ± σ; a best value is named only
    /// when its 95 % interval clears the runner-up's. With --history, one metric of one
    /// server × scenario across every stored run instead.
    Report(ReportArgs),
    /// Measure the load generator's own limit: chats k6 receives per CPU-second on each load
    /// path (native and js), from the blaster on another core.
    ///
    /// The blaster (scenarios/k6-chat/cmd/blaster) sends prepared chat frames to every client;
    /// k6 runs scenarios/loadgen-capacity.js pinned to one core. The figure divides the chats
    /// received by the CPU time of the k6 process, so the sender need not saturate k6.
    LoadgenCapacity(LoadgenCapacityArgs),
    /// Compare two runs point by point: means, change, ratio ± uncertainty, and a verdict
    /// from Welch's t-test (both sides n ≥ 2) or "n=1: no test".
    ///
    /// Conditions that differ between A and B are listed first. Exits 1 with
    /// --fail-on-regression PCT when a headline metric got significantly worse by more than PCT %.
    Compare(CompareArgs),
    /// Merge the native reports (native.json) of k6 instances that split one run elsewhere,
    /// e.g. k6-operator's runners, and print the totals as JSON.
    ///
    /// Counters add; latency percentiles come from the histograms merged bucket by bucket,
    /// never from averaged percentiles; chats received from another instance are timed apart
    /// (their latency includes the clock offset between hosts). See docs/distributed.md.
    MergeNative(MergeNativeArgs),
    /// Check the Docker engine, its API version, the toolchains and k6.
    Doctor,
    /// Measure the machine-speed index that every round of a run records: a CPU-bound loop
    /// (SHA-256) and a syscall-bound one (64-byte round trips over loopback TCP), against
    /// this project's reference machine (100). Run it on a quiet machine.
    Calibrate(CalibrateArgs),
    /// Remove every container and image labelled by wscbench.
    Clean(CleanArgs),
}

/// Parses `args` and runs the command; returns the process exit code.
pub fn run<I, T>(args: I) -> Result<ExitCode, ExpectedError>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = Cli::parse_from(args);
    let root = project_root(cli.root.clone())?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .doing(|| "starting the async runtime")?;
    runtime.block_on(async move {
        match cli.command {
            Command::List(args) => commands::list::run(&root, args),
            Command::Verify(args) => commands::verify::run(&root, args).await,
            Command::IdleMemory(args) => commands::idle_memory::run(&root, args).await,
            Command::Build(args) => commands::build::run(&root, args).await,
            Command::Run(args) => commands::run::run(&root, *args).await,
            Command::Report(args) => commands::report::run(&root, args),
            Command::LoadgenCapacity(args) => commands::loadgen_capacity::run(&root, args).await,
            Command::Compare(args) => commands::compare::run(&root, args),
            Command::MergeNative(args) => commands::merge_native::run(args),
            Command::Calibrate(args) => commands::calibrate::run(args.times, args.seconds),
            Command::Doctor => commands::doctor::run(&root).await,
            Command::Clean(args) => commands::clean::run(args).await,
        }
    })
}

/// The directory holding `servers/`: the one given, or the nearest one upwards from here.
fn project_root(given: Option<PathBuf>) -> Result<PathBuf, ExpectedError> {
    if let Some(dir) = given {
        if !dir.join("servers").is_dir() {
            return Err(
                UsageError::new(format!("{} has no servers/ directory", dir.display())).into(),
            );
        }
        return Ok(dir);
    }
    let here = std::env::current_dir().doing(|| "reading the current directory")?;
    here.ancestors()
        .find(|dir| dir.join("servers").is_dir() && dir.join("scenarios").is_dir())
        .map(PathBuf::from)
        .ok_or_else(|| {
            UsageError::new(format!("no wscbench project (a directory with servers/ and scenarios/) at or above {}; pass --root", here.display())).into()
        })
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;
    use wscbench_results::{Language, LoadParam, LoadPath, Mode, Scenario};

    use super::*;
    use crate::commands::report::ReportFormat;

    #[test]
    fn the_command_line_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn load_engines_are_given_as_docker_host_is() {
        let cli = Cli::try_parse_from([
            "wscbench",
            "run",
            "--loadgen-engine",
            "unix:///run/wscbench-2.sock",
            "--loadgen-engine",
            "tcp://10.0.0.2:2375",
            "--server-address",
            "10.0.0.1",
        ])
        .unwrap();
        let Command::Run(args) = cli.command else {
            panic!("not run")
        };
        assert_eq!(
            args.loadgen_engines,
            ["unix:///run/wscbench-2.sock", "tcp://10.0.0.2:2375"]
        );
        assert_eq!(args.server_address.as_deref(), Some("10.0.0.1"));
        for bad in [
            "/run/docker.sock",
            "tcp://host",
            "ssh://host",
            "unix://relative.sock",
        ] {
            let err =
                Cli::try_parse_from(["wscbench", "run", "--loadgen-engine", bad]).unwrap_err();
            assert!(
                err.to_string().contains("not an engine address"),
                "{bad}: {err}"
            );
        }
    }

    #[test]
    fn run_defaults_to_quick_mode_two_cpus_and_512_mib() {
        let cli = Cli::try_parse_from(["wscbench", "run", "--profile", "b"]).unwrap();
        let Command::Run(args) = cli.command else {
            panic!("not run")
        };
        assert_eq!(
            (args.mode, args.loadgen, args.runs, args.cpus, args.memory),
            (Mode::Quick, LoadPath::Native, None, 2.0, 512 << 20)
        );
        assert_eq!(args.select.profiles, ["b"]);
        assert!(args.scenarios.is_empty());
    }

    #[test]
    fn run_refuses_unknown_scenarios_modes_and_cpu_counts() {
        assert!(Cli::try_parse_from(["wscbench", "run", "--scenario", "storm"]).is_err());
        assert!(Cli::try_parse_from(["wscbench", "run", "--mode", "forever"]).is_err());
        assert!(Cli::try_parse_from(["wscbench", "run", "--cpus", "0"]).is_err());
        assert!(Cli::try_parse_from(["wscbench", "run", "--format", "pdf"]).is_err());
        assert!(Cli::try_parse_from(["wscbench", "run", "--loadgen", "wrk"]).is_err());
        assert!(Cli::try_parse_from(["wscbench", "run", "--runs", "0"]).is_err());
        let cli = Cli::try_parse_from([
            "wscbench",
            "run",
            "--scenario",
            "saturation",
            "--lang",
            "zig",
        ])
        .unwrap();
        let Command::Run(args) = cli.command else {
            panic!("not run")
        };
        assert_eq!(
            (args.scenarios, args.select.langs),
            (vec![Scenario::Saturation], vec![Language::Zig])
        );
    }

    #[test]
    fn soak_durations_and_latency_targets_parse_with_their_units() {
        let cli = Cli::try_parse_from([
            "wscbench",
            "run",
            "--mode",
            "soak",
            "--duration",
            "30m",
            "--slo-p95-ms",
            "20",
        ])
        .unwrap();
        let Command::Run(run) = cli.command else {
            panic!("not run")
        };
        assert_eq!((run.duration, run.slo_p95_ms), (Some(1800), 20.0));
        let soak = |d: &str| run_args(&["--mode", "soak", "--duration", d]);
        assert_eq!(soak("1h").unwrap().duration, Some(3600));
        assert!(soak("5s").unwrap_err().to_string().contains("10s to 24h"));
        assert!(soak("soon").is_err());
        assert!(Cli::try_parse_from(["wscbench", "run", "--slo-p95-ms", "0"]).is_err());
        let cli = Cli::try_parse_from(["wscbench", "run"]).unwrap();
        let Command::Run(run) = cli.command else {
            panic!("not run")
        };
        assert_eq!((run.duration, run.slo_p95_ms), (None, 50.0));
    }

    #[test]
    fn report_takes_html_and_an_output_file() {
        let cli = Cli::try_parse_from([
            "wscbench",
            "report",
            "results/",
            "--format",
            "html",
            "-o",
            "page.html",
        ])
        .unwrap();
        let Command::Report(args) = cli.command else {
            panic!("not report")
        };
        assert_eq!(args.format, ReportFormat::Html);
        assert_eq!(args.output, Some(PathBuf::from("page.html")));
        let err = Cli::try_parse_from(["wscbench", "report", "--format", "pdf"]).unwrap_err();
        assert!(err.to_string().contains("html"), "{err}");
    }

    #[test]
    fn verify_takes_a_url_or_a_selection_but_not_both() {
        assert!(
            Cli::try_parse_from(["wscbench", "verify", "--url", "ws://127.0.0.1:1/ws"]).is_ok()
        );
        assert!(
            Cli::try_parse_from([
                "wscbench",
                "verify",
                "--server",
                "profile-b/go",
                "--server",
                "profile-a/go"
            ])
            .is_ok()
        );
        assert!(
            Cli::try_parse_from([
                "wscbench",
                "verify",
                "--url",
                "ws://h:1/ws",
                "--server",
                "profile-b/go"
            ])
            .is_err()
        );
        assert!(Cli::try_parse_from(["wscbench", "verify", "--lang", "cobol"]).is_err());
    }

    fn run_args(extra: &[&str]) -> Result<RunArgs, clap::Error> {
        let args = ["wscbench", "run"].iter().chain(extra);
        Cli::try_parse_from(args).map(|cli| match cli.command {
            Command::Run(args) => *args,
            _ => panic!("not run"),
        })
    }

    #[test]
    fn run_takes_variants_sweeps_and_a_duration_bound() {
        let args = run_args(&[
            "--variant",
            "gomaxprocs-1",
            "--variant",
            "all",
            "--sweep",
            "clients=100,200",
            "--sweep",
            "rate=1,2.5",
            "--max-duration",
            "4h",
        ])
        .unwrap();
        assert_eq!(args.variants, ["gomaxprocs-1", "all"]);
        assert_eq!(
            args.sweep
                .iter()
                .map(|k| (k.key, k.values.clone()))
                .collect::<Vec<_>>(),
            [
                (LoadParam::Clients, vec![100.0, 200.0]),
                (LoadParam::Rate, vec![1.0, 2.5])
            ]
        );
        assert_eq!(args.max_duration, std::time::Duration::from_secs(4 * 3600));
        let plain = run_args(&[]).unwrap();
        assert!(plain.variants.is_empty() && plain.sweep.is_empty());
        assert_eq!(plain.max_duration, std::time::Duration::from_secs(2 * 3600));
    }

    #[test]
    fn run_refuses_bad_sweeps_and_durations_with_one_clear_line() {
        for (flags, says) in [
            (["--sweep", "clients"], "expected KEY=V1,V2"),
            (
                ["--sweep", "speed=1"],
                "unknown load parameter; the parameters are clients, rate",
            ),
            (
                ["--sweep", "clients=100,lots"],
                "\"lots\" is not a positive whole number",
            ),
            (
                ["--sweep", "clients=-5"],
                "\"-5\" is not a positive whole number",
            ),
            (["--sweep", "rate=0"], "\"0\" is not a positive number"),
            (
                ["--max-duration", "forever"],
                "not a duration such as 90m or 4h",
            ),
            (["--max-duration", "0s"], "not a duration"),
        ] {
            let err = run_args(&flags).unwrap_err();
            assert_eq!(
                err.kind(),
                clap::error::ErrorKind::ValueValidation,
                "{flags:?}"
            );
            assert!(err.to_string().contains(says), "{flags:?}: {err}");
        }
    }
}
