//! `wscbench calibrate`: the machine-speed index alone, as each round of a run measures it,
//! so two hosts (or one host at two times) can be compared before a run.

use clap::Args;
use wscbench_engine::load::calibrate;

use crate::errors::{Doing, ExpectedError};
use crate::exit::ExitCode;

/// `wscbench calibrate`'s command line.
#[derive(Debug, Args)]
pub struct CalibrateArgs {
    /// How many calibrations, one after the other
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub times: u32,
    /// Seconds each of the two loops runs
    #[arg(long, default_value_t = 1.0)]
    pub seconds: f64,
}

/// Measures `times` calibrations of `seconds` per loop and prints each, then the CPU model.
pub fn run(times: u32, seconds: f64) -> Result<ExitCode, ExpectedError> {
    let (model, mhz) = calibrate::cpu_model();
    println!(
        "cpu: {} ({})",
        model.as_deref().unwrap_or("unknown model"),
        mhz.map_or("frequency unknown".into(), |m| format!("{m:.0} MHz"))
    );
    for i in 1..=times {
        let speed = calibrate::measure(std::time::Duration::from_secs_f64(seconds))
            .doing(|| "measuring loopback round trips")?;
        println!(
            "{i}: index {:.1} · CPU {:.3} M SHA-256 blocks/s · loopback {:.1} k round trips/s",
            speed.index,
            speed.cpu_blocks_per_s / 1e6,
            speed.loopback_roundtrips_per_s / 1e3
        );
    }
    Ok(ExitCode::Ok)
}
