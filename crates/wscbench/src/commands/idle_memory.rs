//! `wscbench idle-memory`: resident memory of a local server with N idle joined clients.

use std::path::Path;
use std::time::Duration;

use clap::Args;
use wscbench_engine::catalog::local;
use wscbench_engine::load::idle_memory;

use crate::args::SelectArgs;
use crate::errors::{Doing, ExpectedError};
use crate::exit::ExitCode;

/// `wscbench idle-memory`'s command line.
#[derive(Debug, Args)]
pub struct IdleMemoryArgs {
    /// The server to measure, e.g. profile-b/rust
    #[arg(long = "server", value_name = "ID", required = true)]
    pub servers: Vec<String>,
    /// Idle joined clients to hold
    #[arg(long, default_value_t = 1000)]
    pub clients: usize,
    /// Print JSON
    #[arg(long)]
    pub json: bool,
}

pub async fn run(root: &Path, args: IdleMemoryArgs) -> Result<ExitCode, ExpectedError> {
    let select = SelectArgs {
        servers: args.servers.clone(),
        ..Default::default()
    };
    let servers = super::select(root, &select)?;
    let mut readings = Vec::new();
    for server in &servers {
        eprintln!("building {} ...", server.id);
        let built = local::build(server)
            .await
            .doing(|| format!("building {}", server.id))?;
        let process = super::start_local(server, &built.binary, false).await?;
        let reading = idle_memory::measure(&process, args.clients, |p| {
            eprintln!("  {}: {p}", server.id)
        })
        .await
        .doing(|| format!("measuring {}", server.id))?;
        process.stop(Duration::from_secs(3)).await;
        if !args.json {
            println!(
                "{}: {:.1} MiB before, {:.1} MiB with {} idle joined clients ({:.1} KiB each), {:.1} MiB after they left",
                server.id,
                mib(reading.before_bytes),
                mib(reading.joined_bytes),
                reading.clients,
                (reading.joined_bytes.saturating_sub(reading.before_bytes)) as f64
                    / 1024.0
                    / reading.clients.max(1) as f64,
                mib(reading.after_bytes),
            );
        }
        readings.push((server.id.clone(), reading));
    }
    if args.json {
        let json: Vec<_> = readings
            .iter()
            .map(|(id, r)| serde_json::json!({"server": id, "rss": r}))
            .collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&json).expect("a JSON value always serializes")
        );
    }
    Ok(ExitCode::Ok)
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}
