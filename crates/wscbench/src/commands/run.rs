//! `wscbench run`: build, then every server × scenario through the engine's runner, with
//! live progress, Ctrl-C handling, and the comparison tables at the end.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::json;
use tokio::sync::watch;
use wscbench_engine::catalog::{Mode, SCENARIOS, scenario_seconds};
use wscbench_engine::engine::Engine;
use wscbench_engine::runner::{self, Limits, Plan, PlannedServer, Progress, VerifyLevel};
use wscbench_report::Report;
use wscbench_results::{Conditions, Outcome};

use crate::cli::RunArgs;

/// Time a run spends outside its scenario (start, health, verification, stop, write): for the ETA.
const OVERHEAD_ESTIMATE: Duration = Duration::from_secs(5);

pub async fn run(root: &Path, args: RunArgs) -> Result<i32> {
    let servers = args.select.selection().apply(&super::discover(root)?)?;
    let scenarios: Vec<String> = if args.scenarios.is_empty() {
        SCENARIOS.map(String::from).to_vec()
    } else {
        args.scenarios.clone()
    };
    let mode: Mode = args.mode.parse().map_err(anyhow::Error::msg)?;
    let verify = match args.verify.as_str() {
        "full" => VerifyLevel::Full,
        "off" => VerifyLevel::Off,
        _ => VerifyLevel::Quick,
    };
    let engine = super::connect().await?;
    let info = engine
        .info()
        .await
        .context("asking the engine for its version")?;
    let k6_image = super::build_k6_image(&engine, args.rebuild).await?;
    let images = super::build_images(&engine, &servers, args.rebuild).await?;

    let run_id = runner::new_run_id();
    let results_root = if args.results.is_relative() {
        root.join(&args.results)
    } else {
        args.results.clone()
    };
    let results_dir = results_root.join(&run_id);
    std::fs::create_dir_all(&results_dir)
        .with_context(|| format!("creating {}", results_dir.display()))?;
    let plan = Plan {
        run_id: run_id.clone(),
        servers: servers
            .into_iter()
            .zip(images)
            .map(|(server, image)| PlannedServer { server, image })
            .collect(),
        scenarios,
        mode,
        limits: Limits {
            cpus: args.cpus,
            memory_bytes: args.memory,
            cpuset_server: args.cpuset_server.clone(),
            cpuset_loadgen: args.cpuset_loadgen.clone(),
        },
        verify,
        scenarios_dir: std::path::absolute(root.join("scenarios"))?,
        results_dir: results_dir.clone(),
        k6_image: k6_image.tag.clone(),
        conditions: Conditions {
            server_cpus: args.cpus,
            server_memory_bytes: args.memory,
            cpuset_server: args.cpuset_server.clone(),
            cpuset_loadgen: args.cpuset_loadgen.clone(),
            machine_cores: if info.cpus > 0 {
                info.cpus
            } else {
                std::thread::available_parallelism().map_or(1, |n| n.get() as u32)
            },
            kernel: info.kernel.clone(),
            docker_version: info.version.clone(),
            docker_api_version: info.api_version.clone(),
            k6_version: k6_image.version.clone().unwrap_or_default(),
            loadgen_memory_bytes: None,
            variant_args: Vec::new(),
            variant_env: Vec::new(),
        },
    };
    let metadata = |status: &str| {
        json!({
            "run_id": run_id,
            "status": status,
            "command": std::env::args().collect::<Vec<_>>().join(" "),
            "mode": plan.mode.as_str(),
            "servers": plan.servers.iter().map(|p| p.server.id.as_str()).collect::<Vec<_>>(),
            "scenarios": plan.scenarios,
            "written_at": humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        })
    };
    let metadata_path = results_dir.join("run.json");
    std::fs::write(
        &metadata_path,
        serde_json::to_string_pretty(&metadata("running"))?,
    )?;
    eprintln!(
        "run {run_id}: {} server(s) × {} scenario(s), {} mode, about {} min; results in {}",
        plan.servers.len(),
        plan.scenarios.len(),
        plan.mode.as_str(),
        (plan.scenario_time() + OVERHEAD_ESTIMATE * plan.len() as u32)
            .as_secs()
            .div_ceil(60),
        results_dir.display()
    );

    let (cancel_tx, cancel_rx) = watch::channel(false);
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            let _ = cancel_tx.send(true);
        }
    });

    let mut display = Display::new(&plan);
    let outcome = runner::execute(&engine, &plan, cancel_rx.clone(), &mut |p| {
        display.update(p)
    })
    .await;
    display.finish();
    // Whatever happened, no container of this run stays behind.
    let leftover = engine.remove_run(&run_id).await.unwrap_or(0);
    let results = outcome?;
    let interrupted =
        *cancel_rx.borrow() || results.iter().any(|r| r.outcome == Outcome::Interrupted);
    std::fs::write(
        &metadata_path,
        serde_json::to_string_pretty(&metadata(if interrupted {
            "interrupted"
        } else {
            "completed"
        }))?,
    )?;
    if leftover > 0 {
        eprintln!("removed {leftover} leftover container(s) of run {run_id}");
    }
    if !results.is_empty() {
        print!("{}", args.format.render(&Report::from_results(&results)));
    }
    let failed = results
        .iter()
        .filter(|r| !matches!(r.outcome, Outcome::Ok | Outcome::Interrupted))
        .count();
    eprintln!(
        "{} result(s) written to {}{}",
        results.len(),
        results_dir.display(),
        if failed > 0 {
            format!("; {failed} run(s) failed (see the footnotes)")
        } else {
            String::new()
        }
    );
    if interrupted {
        eprintln!("interrupted: the results above were kept; run {run_id} is marked interrupted");
        return Ok(130);
    }
    Ok(0)
}

/// The live progress line (or plain lines when stderr is not a terminal).
struct Display {
    bar: ProgressBar,
    started: Instant,
    remaining_after_current: Duration,
    plan_runs: Vec<Duration>,
    current: String,
}

impl Display {
    fn new(plan: &Plan) -> Self {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr_with_hz(4));
        bar.set_style(
            ProgressStyle::with_template("{spinner} {prefix} {wide_msg}").expect("valid template"),
        );
        bar.enable_steady_tick(Duration::from_millis(250));
        let plan_runs = plan
            .servers
            .iter()
            .flat_map(|_| {
                plan.scenarios.iter().map(|s| {
                    Duration::from_secs(scenario_seconds(s, plan.mode)) + OVERHEAD_ESTIMATE
                })
            })
            .collect();
        Self {
            bar,
            started: Instant::now(),
            remaining_after_current: Duration::ZERO,
            plan_runs,
            current: String::new(),
        }
    }

    fn say(&self, line: String) {
        if self.bar.is_hidden() {
            eprintln!("{line}");
        } else {
            self.bar.println(line);
        }
    }

    fn update(&mut self, progress: Progress<'_>) {
        match progress {
            Progress::Starting {
                index,
                total,
                server,
                scenario,
                expected,
            } => {
                self.remaining_after_current = self.plan_runs.iter().skip(index).sum();
                self.current = format!("[{index}/{total}] {server} × {scenario}");
                self.bar.set_prefix(self.current.clone());
                self.bar.set_message(format!(
                    "starting · {} s of load · elapsed {}",
                    expected.as_secs(),
                    clock(self.started.elapsed())
                ));
                if self.bar.is_hidden() {
                    eprintln!("{} ...", self.current);
                }
            }
            Progress::Phase(phase) => self.bar.set_message(format!(
                "{phase} · elapsed {}",
                clock(self.started.elapsed())
            )),
            Progress::Tick {
                elapsed,
                expected,
                sample,
                deliveries_per_s,
            } => {
                let left = expected.saturating_sub(elapsed)
                    + OVERHEAD_ESTIMATE / 2
                    + self.remaining_after_current;
                self.bar.set_message(format!(
                    "{}/{} s · {} conns · {} deliveries/s · server {:.0}% {:.1} MiB · k6 {:.0}% · elapsed {} · left ~{}",
                    elapsed.as_secs(),
                    expected.as_secs(),
                    sample.connections.map_or("?".into(), |c| c.to_string()),
                    deliveries_per_s.map_or("?".into(), |r| format!("{r:.0}")),
                    sample.server_cpu_percent,
                    sample.server_mem_bytes as f64 / 1048576.0,
                    sample.loadgen_cpu_percent,
                    clock(self.started.elapsed()),
                    clock(left),
                ));
            }
            Progress::Finished { result, path } => {
                let summary = if result.outcome == Outcome::Ok {
                    format!(
                        "ok · {:.0} msg/s · {:.0} deliveries/s · server peak {:.0}% {:.1} MiB · k6 peak {:.0}%{} · overhead {:.1} s",
                        result.derived.throughput_msgs_per_s,
                        result.derived.deliveries_per_s,
                        result.derived.server.peak_cpu_percent,
                        result.derived.server.peak_mem_bytes as f64 / 1048576.0,
                        result.derived.loadgen.peak_cpu_percent,
                        if result.loadgen_bound {
                            " · load-generator bound"
                        } else {
                            ""
                        },
                        result.overhead_ms as f64 / 1000.0,
                    )
                } else {
                    format!(
                        "{}: {}",
                        result.outcome.as_str(),
                        result.outcome_detail.clone().unwrap_or_default()
                    )
                };
                self.say(format!("{} {summary} → {}", self.current, path.display()));
            }
        }
    }

    fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

fn clock(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, s % 3600 / 60)
    } else {
        format!("{}m{:02}s", s / 60, s % 60)
    }
}
