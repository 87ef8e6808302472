//! `wscbench loadgen-capacity`: how many chats k6 itself receives per CPU-second on each load
//! path, against the blaster on another core — the load generator's own limit, measured.

use std::path::Path;

use clap::Args;
use wscbench_engine::catalog::images;
use wscbench_engine::docker::Engine;
use wscbench_engine::load::loadgen_capacity::{self, CapacitySpec, PathCapacity, Saved, SavedPath};
use wscbench_engine::load::scenarios::{self, LoadCurveShape};
use wscbench_engine::load::sweep::{run_points_at, taken};
use wscbench_engine::runner::Plan;
use wscbench_results::{CurveSteps, LoadParam, LoadPath, Mode, Scenario, Transport};

use crate::args::{one_of, parse_bytes};
use crate::errors::{Doing, ExpectedError, UsageError};
use crate::exit::ExitCode;

/// `wscbench loadgen-capacity`'s command line.
#[derive(Debug, Args)]
pub struct LoadgenCapacityArgs {
    /// Connections k6 holds
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..=5000))]
    pub clients: u32,
    /// Seconds k6 receives on each path
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=600))]
    pub seconds: u32,
    /// How k6 reaches the blaster: wss (TLS with a certificate made for the measurement),
    /// ws+deflate or wss+deflate (compressed frames) measure the native path only, which
    /// alone speaks them; the figure is what a point of that transport is judged against
    #[arg(long, default_value = "ws", value_name = "TRANSPORT", value_parser = one_of(Transport::ALL, Transport::as_str))]
    pub transport: Transport,
    /// The blaster's total frames/s against the native path (0 = as fast as it can)
    #[arg(long, default_value_t = 0.0)]
    pub native_rate: f64,
    /// The blaster's total frames/s against the js path (0 = as fast as it can); bounded by
    /// default because k6's js path queues what it cannot handle without bound
    #[arg(long, default_value_t = 40_000.0)]
    pub js_rate: f64,
    /// Cores for the blaster
    #[arg(long, default_value = "1", value_name = "CPUS")]
    pub cpuset_blaster: String,
    /// Cores for k6
    #[arg(long, default_value = "0", value_name = "CPUS")]
    pub cpuset_loadgen: String,
    /// Memory limit of the k6 container
    #[arg(long, default_value = "4g", value_parser = parse_bytes)]
    pub loadgen_memory: u64,
    /// Print JSON instead of the table
    #[arg(long)]
    pub json: bool,
}

pub async fn run(root: &Path, args: LoadgenCapacityArgs) -> Result<ExitCode, ExpectedError> {
    let engine = super::connect().await?;
    let k6_image = super::build_k6_image(&engine, false)
        .await
        .doing(|| "building the k6 image")?;
    let blaster = images::build_blaster_image(&engine, &super::cached_tool("blaster"), false)
        .await
        .doing(|| "building the blaster image")?;
    let run_id = format!("capacity-{}", wscbench_engine::runner::new_run_id());
    let out_dir = std::env::temp_dir().join(format!("wscbench-{run_id}"));
    let spec = CapacitySpec {
        run_id: run_id.clone(),
        k6_image: k6_image.tag.clone(),
        blaster_image: blaster.tag.clone(),
        scenarios_dir: std::path::absolute(root.join("scenarios"))
            .doing(|| "finding the scenarios folder")?,
        out_dir: out_dir.clone(),
        clients: args.clients,
        seconds: args.seconds,
        native_rate_per_s: args.native_rate,
        js_rate_per_s: args.js_rate,
        cpuset_blaster: args.cpuset_blaster.clone(),
        cpuset_loadgen: args.cpuset_loadgen.clone(),
        loadgen_memory_bytes: args.loadgen_memory,
        transport: args.transport,
        tls: match args.transport.is_tls() {
            true => Some(std::sync::Arc::new(
                wscbench_engine::net::tls::RunCert::make()
                    .doing(|| "making the TLS certificate for wss")?,
            )),
            false => None,
        },
    };
    // k6/websockets speaks neither the run's TLS nor permessage-deflate: native only then.
    let paths: &[LoadPath] = if args.transport.is_ws() {
        &[LoadPath::Native, LoadPath::Js]
    } else {
        &[LoadPath::Native]
    };
    let mut measured: Vec<PathCapacity> = Vec::new();
    for &path in paths {
        eprintln!(
            "{path} over {}: {} clients for {} s, k6 on core {}, blaster on core {}{} ...",
            args.transport,
            args.clients,
            args.seconds,
            args.cpuset_loadgen,
            args.cpuset_blaster,
            match if path == LoadPath::Js {
                args.js_rate
            } else {
                args.native_rate
            } {
                0.0 => " (unbounded)".to_string(),
                r => format!(" at {r:.0} frames/s"),
            }
        );
        let result = loadgen_capacity::measure(&engine, &spec, path).await;
        let _ = engine.remove_run(&run_id).await;
        measured.push(result.doing(|| format!("measuring the {path} load path"))?);
    }
    let _ = std::fs::remove_dir_all(&out_dir);
    save(&measured, &run_id);
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&measured).expect("measurements always serialize")
        );
    } else {
        print!("{}", render(&measured));
    }
    Ok(ExitCode::Ok)
}

/// Keeps the measurements in the cache for `run` ([`refuse_unreachable`]); a cache that
/// cannot be written costs only that check, so it is said and the command goes on.
fn save(measured: &[PathCapacity], run_id: &str) {
    let path = super::cache_dir().join(loadgen_capacity::SAVED_FILE);
    let mut saved = read_saved(&path).unwrap_or_default();
    let at = run_id.trim_start_matches("capacity-");
    for m in measured {
        saved.keep(m.clone(), at);
    }
    let text = serde_json::to_string_pretty(&saved).expect("measurements always serialize");
    match wscbench_engine::runner::write_atomically(&path, &text) {
        Ok(()) => eprintln!(
            "kept in {} for `run` to check its loads against",
            path.display()
        ),
        Err(e) => eprintln!("warning: not kept for `run`: {e}"),
    }
}

fn read_saved(path: &Path) -> Option<Saved> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

/// What k6 was measured to receive here (`wscbench loadgen-capacity`, kept in the cache);
/// `None` before any measurement.
pub fn read_cached() -> Option<Saved> {
    read_saved(&super::cache_dir().join(loadgen_capacity::SAVED_FILE))
}

/// This host's cores.
pub fn host_cores() -> f64 {
    std::thread::available_parallelism().map_or(1, |n| n.get()) as f64
}

/// The most deliveries per second k6 can receive in `plan` here, as `saved` says: the lowest
/// over its transports, with all `cores` of every load engine; with the measurement. `None`
/// without one.
fn ceiling_of<'s>(
    plan: &Plan,
    saved: Option<&'s Saved>,
    cores: f64,
) -> Option<(f64, &'s SavedPath)> {
    let engines = plan.loadgens.len().max(1) as f64;
    saved.and_then(|s| {
        plan.transports()
            .iter()
            .filter_map(|&t| s.ceiling(plan.load_path, t, cores * engines))
            .min_by(|a, b| a.0.total_cmp(&b.0))
    })
}

/// The load curve's steps: placed geometrically up to what k6 was measured to receive here
/// (`saved`, with this host's `cores`), `plan.load_points` rebuilt with them, so a fast
/// host's curve reaches its knee and no step asks more than k6 can give. The mode's own
/// steps stay when `--sweep deliveries=` gives the steps, in smoke mode, without a
/// measurement, or where a placed step would break a shape's rule. What the run records
/// (`run.json`'s `curve_steps`); `None` without the curve.
pub fn place_curve_steps(plan: &mut Plan, saved: Option<&Saved>, cores: f64) -> Option<CurveSteps> {
    if !plan.scenarios.contains(&Scenario::LoadCurve) {
        return None;
    }
    let given = plan.sweep.as_map().contains_key(&LoadParam::Deliveries);
    let placed = ceiling_of(plan, saved, cores)
        .filter(|_| !given && plan.mode != Mode::Smoke)
        .and_then(|(ceiling, measured)| {
            let shape = LoadCurveShape::of(plan.mode);
            let steps = shape.placed_steps(ceiling);
            let points = run_points_at(&plan.sweep, &plan.scenarios, &steps);
            let fits = points.iter().all(|p| {
                scenarios::check_point(
                    Scenario::LoadCurve,
                    plan.mode,
                    &taken(Scenario::LoadCurve, p),
                )
                .is_ok()
            });
            (steps != shape.steps && fits).then(|| {
                plan.load_points = points;
                (ceiling, measured.measured_at.clone())
            })
        });
    Some(CurveSteps {
        deliveries_per_s: curve_levels(plan),
        loadgen_ceiling_per_s: placed.as_ref().map(|(c, _)| *c),
        loadgen_measured_at: placed.map(|(_, at)| at),
    })
}

/// The load curve's steps in `plan`'s load points (its own, placed or swept), in order.
fn curve_levels(plan: &Plan) -> Vec<f64> {
    let mut steps: Vec<f64> = Vec::new();
    for point in &plan.load_points {
        if let Some(&d) = point.get(&LoadParam::Deliveries)
            && !steps.contains(&d)
        {
            steps.push(d);
        }
    }
    steps
}

/// Refuses a load curve with a step above what k6 was measured to receive (`saved`) even
/// with every one of this host's `cores` on every load engine: k6, not the server, would be
/// measured there. Without a measurement nothing is refused (the verdict still marks a step
/// k6 limited).
pub fn refuse_unreachable(
    plan: &Plan,
    saved: Option<&Saved>,
    cores: f64,
) -> Result<(), UsageError> {
    if !plan.scenarios.contains(&Scenario::LoadCurve) {
        return Ok(());
    }
    let Some((ceiling, measured)) = ceiling_of(plan, saved, cores) else {
        return Ok(());
    };
    let too_high = loadgen_capacity::unreachable(&curve_levels(plan), ceiling);
    let engines = plan.loadgens.len().max(1);
    if too_high.is_empty() {
        return Ok(());
    }
    let levels: Vec<String> = too_high.iter().map(|l| format!("{l:.0}")).collect();
    Err(UsageError::new(format!(
        "load-curve steps of {} deliveries/s are more than k6 can receive here: it received {:.0} chats per CPU-second on the {} path over {} (wscbench loadgen-capacity, {}), at most {ceiling:.0}/s with all {} core(s) of {} load engine(s); ask for lower steps with --sweep deliveries=..., or add load engines with --loadgen-engine",
        levels.join(", "),
        measured.capacity.received_per_cpu_s,
        measured.capacity.load_path,
        measured.capacity.transport,
        measured.measured_at,
        cores,
        engines,
    )))
}

fn render(measured: &[PathCapacity]) -> String {
    let mut out = String::from(
        "| Load path | Transport | Clients | Sender frames/s | Received | Received/s | k6 CPU-s (getrusage) | k6 CPU-s (docker) | Received per k6 CPU-second | k6 peak memory |\n\
         | :-- | :-- | --: | --: | --: | --: | --: | --: | --: | --: |\n",
    );
    for m in measured {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {:.0} | {:.2} | {:.2} | **{:.0}** | {:.1} MiB |\n",
            m.load_path,
            m.transport,
            m.clients,
            m.sender_frames_per_s
                .map_or("?".into(), |r| format!("{r:.0}")),
            m.received,
            m.received_per_s,
            m.loadgen_cpu_s,
            m.loadgen_cpu_docker_s,
            m.received_per_cpu_s,
            m.loadgen_peak_mem_bytes as f64 / 1048576.0,
        ));
    }
    if let [native, js] = measured
        && js.received_per_cpu_s > 0.0
    {
        out.push_str(&format!(
            "\nnative receives {:.1}× as many chats per CPU-second as js\n",
            native.received_per_cpu_s / js.received_per_cpu_s
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::cli::{Cli, Command};

    /// The plan of `wscbench run FLAGS`, checked against the project's servers with no
    /// measurement of k6 (as run_request's tests do: a test module's imports stay out of the
    /// no-circles rule only while it is private).
    fn check(flags: &[&str]) -> Result<Plan, UsageError> {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
        let known = crate::commands::run_request::Known {
            servers: crate::commands::discover(std::path::Path::new(root)).unwrap(),
            loadgen_capacity: None,
            cores: 2.0,
        };
        let cli = Cli::try_parse_from(["wscbench", "run"].iter().chain(flags)).unwrap();
        let Command::Run(args) = cli.command else {
            panic!("not run")
        };
        crate::commands::run_request::check(&args, &known).map(|request| request.plan)
    }

    /// k6 measured to receive `per_cpu_s` chats per CPU-second on the native path over ws.
    fn saved(per_cpu_s: f64) -> Saved {
        let mut saved = Saved::default();
        saved.keep(
            PathCapacity {
                load_path: LoadPath::Native,
                transport: Transport::Ws,
                clients: 50,
                sender_rate_limit_per_s: 0.0,
                sender_frames_per_s: None,
                received: 1,
                received_per_s: 1.0,
                loadgen_cpu_s: 1.0,
                loadgen_cpu_docker_s: 1.0,
                received_per_cpu_s: per_cpu_s,
                loadgen_peak_mem_bytes: 1,
            },
            "20261128-060000",
        );
        saved
    }

    #[test]
    fn the_curves_steps_come_from_the_cached_loadgen_capacity_and_are_recorded() {
        let mut plan = check(&["--scenario", "load-curve"]).unwrap();
        // 600k chats per CPU-second on two cores: 1.2M/s.
        let steps = place_curve_steps(&mut plan, Some(&saved(600_000.0)), 2.0).unwrap();
        assert_eq!(
            steps,
            CurveSteps {
                deliveries_per_s: vec![50_000.0, 140_000.0, 420_000.0, 1_200_000.0],
                loadgen_ceiling_per_s: Some(1_200_000.0),
                loadgen_measured_at: Some("20261128-060000".into()),
            }
        );
        assert_eq!(curve_levels(&plan), steps.deliveries_per_s);
        // Every placed step is within what k6 receives: nothing is refused.
        assert!(refuse_unreachable(&plan, Some(&saved(600_000.0)), 2.0).is_ok());
    }

    #[test]
    fn given_steps_a_smoke_run_or_no_measurement_keep_the_curves_steps() {
        let own = LoadCurveShape::of(Mode::Quick).steps;
        let mut plan = check(&["--scenario", "load-curve"]).unwrap();
        let steps = place_curve_steps(&mut plan, None, 2.0).unwrap();
        assert_eq!(
            (steps.deliveries_per_s, steps.loadgen_ceiling_per_s),
            (own, None)
        );
        let mut plan = check(&[
            "--scenario",
            "load-curve",
            "--sweep",
            "deliveries=60000,90000",
        ])
        .unwrap();
        let steps = place_curve_steps(&mut plan, Some(&saved(600_000.0)), 2.0).unwrap();
        assert_eq!(steps.deliveries_per_s, [60_000.0, 90_000.0]);
        let mut plan = check(&["--scenario", "load-curve", "--mode", "smoke"]).unwrap();
        let steps = place_curve_steps(&mut plan, Some(&saved(600_000.0)), 2.0).unwrap();
        assert_eq!(
            steps.deliveries_per_s,
            LoadCurveShape::of(Mode::Smoke).steps
        );
        let mut plan = check(&["--scenario", "steady"]).unwrap();
        assert_eq!(
            place_curve_steps(&mut plan, Some(&saved(600_000.0)), 2.0),
            None
        );
    }
}
