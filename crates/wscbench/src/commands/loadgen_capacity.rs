//! `wscbench loadgen-capacity`: how many chats k6 itself receives per CPU-second on each load
//! path, against the blaster on another core — the load generator's own limit, measured.

use std::path::Path;

use clap::Args;
use wscbench_engine::engine::Engine;
use wscbench_engine::images;
use wscbench_engine::loadgen_capacity::{self, CapacitySpec, PathCapacity};
use wscbench_results::{LoadPath, Transport};

use crate::args::{one_of, parse_bytes};
use crate::errors::{Doing, ExpectedError};
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
                wscbench_engine::tls::RunCert::make()
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
