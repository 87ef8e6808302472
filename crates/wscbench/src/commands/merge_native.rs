//! `wscbench merge-native`: the native reports of k6 instances that split one run outside
//! wscbench (k6-operator's runners) merged as a split `wscbench run` merges them.

use std::path::PathBuf;

use clap::Args;
use wscbench_engine::load::native::{self, NativeReport};

use crate::errors::{Doing, ExpectedError};
use crate::exit::ExitCode;

/// `wscbench merge-native`'s command line.
#[derive(Debug, Args)]
pub struct MergeNativeArgs {
    /// The native reports, one per k6 instance
    #[arg(required = true, value_name = "NATIVE_JSON")]
    pub files: Vec<PathBuf>,
}

pub fn run(args: MergeNativeArgs) -> Result<ExitCode, ExpectedError> {
    let reports = args
        .files
        .iter()
        .map(|path| {
            let text =
                std::fs::read_to_string(path).doing(|| format!("reading {}", path.display()))?;
            NativeReport::from_json(&text).doing(|| path.display().to_string())
        })
        .collect::<Result<Vec<_>, _>>()?;
    let merged = native::merge(&reports).doing(|| "merging the native reports")?;
    let (k6, errors) = merged.k6_metrics(0.0);
    let c = &merged.counters;
    let out = serde_json::json!({
        "instances": reports.iter().zip(&args.files).map(|(r, path)| serde_json::json!({
            "file": path.display().to_string(),
            "instance": r.instance,
            "instance_id": r.instance_id,
            "chat_sent": r.counters.chat_sent,
            "chat_received": r.counters.chat_received,
            "process_cpu_s": r.process_cpu_ns as f64 / 1e9,
        })).collect::<Vec<_>>(),
        "sessions": c.sessions,
        "sessions_closed": c.sessions_closed,
        "chat_sent": c.chat_sent,
        "chat_received": c.chat_received,
        "msgs_sent": c.msgs_sent,
        "msgs_received": c.msgs_received,
        "malformed": c.malformed,
        "errors": errors,
        "process_cpu_s": merged.process_cpu_ns as f64 / 1e9,
        "latency": k6.latency,
        "cross_instance_latency": merged.cross_latency_ms(),
    });
    println!(
        "{}",
        serde_json::to_string_pretty(&out).expect("a JSON value always serializes")
    );
    Ok(ExitCode::Ok)
}
