//! The machine-speed index: a short fixed calibration run once per round with no container
//! running — a CPU-bound loop and a syscall-bound one (small writes and reads over loopback,
//! as a per-frame server and its clients make) — and the CPU model the machine reports.
//! Hosts of one kind differ by up to 2× in exactly these; the index says by how much.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};
use wscbench_results::MachineSpeed;

/// SHA-256 blocks per second, both cores together, on the reference machine: an "AMD EPYC"
/// host of this project's kind (2 cores, 2596 MHz) on 2026-11-26, quiet (`wscbench
/// calibrate`: 21.3–21.5 M in four calibrations), so that its index is about 100.
pub const REFERENCE_CPU_BLOCKS_PER_S: f64 = 21_400_000.0;
/// Loopback round trips per second, both cores together, on the same machine (210–217 k).
pub const REFERENCE_LOOPBACK_ROUNDTRIPS_PER_S: f64 = 214_000.0;

/// The bytes of one request and of one reply: a small chat frame.
const FRAME_BYTES: usize = 64;

/// Measures the machine for `each` per loop (two loops, one after the other), each loop on
/// one thread per core at once and summed: the whole machine's capacity, so that a process
/// hogging one core shows even though the calibration could move to the other. Blocking:
/// call it from a blocking thread.
pub fn measure(each: Duration) -> std::io::Result<MachineSpeed> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let cpu_blocks_per_s = on_every_core(cores, move || Ok(cpu_blocks_per_s(each)))?;
    let loopback_roundtrips_per_s = on_every_core(cores, move || loopback_roundtrips_per_s(each))?;
    Ok(speed(cpu_blocks_per_s, loopback_roundtrips_per_s))
}

/// `loop_` on `cores` threads at once, their rates summed.
fn on_every_core(
    cores: usize,
    loop_: impl Fn() -> std::io::Result<f64> + Send + Copy + 'static,
) -> std::io::Result<f64> {
    let threads: Vec<_> = (0..cores).map(|_| std::thread::spawn(loop_)).collect();
    let mut total = 0.0;
    for thread in threads {
        total += thread
            .join()
            .map_err(|_| std::io::Error::other("a calibration thread panicked"))??;
    }
    Ok(total)
}

/// The index of two measurements: their geometric mean against the reference, × 100.
pub fn speed(cpu_blocks_per_s: f64, loopback_roundtrips_per_s: f64) -> MachineSpeed {
    let index = 100.0
        * ((cpu_blocks_per_s / REFERENCE_CPU_BLOCKS_PER_S)
            * (loopback_roundtrips_per_s / REFERENCE_LOOPBACK_ROUNDTRIPS_PER_S))
            .sqrt();
    MachineSpeed {
        cpu_blocks_per_s,
        loopback_roundtrips_per_s,
        index,
    }
}

/// SHA-256 over 64-byte blocks, one thread, for `each`.
fn cpu_blocks_per_s(each: Duration) -> f64 {
    let started = Instant::now();
    let mut block = [0u8; 64];
    let mut blocks = 0u64;
    while started.elapsed() < each {
        for _ in 0..1_000 {
            let digest = Sha256::digest(block);
            block[..32].copy_from_slice(&digest);
            blocks += 1;
        }
    }
    std::hint::black_box(block);
    blocks as f64 / started.elapsed().as_secs_f64()
}

/// 64-byte request/reply round trips over one loopback TCP connection, both ends served by
/// this thread, for `each`: four syscalls and two trips through the TCP stack per round trip,
/// and no thread wake-up, so the figure is the kernel's cost and not the scheduler's.
fn loopback_roundtrips_per_s(each: Duration) -> std::io::Result<f64> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let mut client = TcpStream::connect(listener.local_addr()?)?;
    let (mut peer, _) = listener.accept()?;
    for end in [&client, &peer] {
        end.set_nodelay(true)?;
        end.set_read_timeout(Some(Duration::from_secs(2)))?;
    }
    let mut frame = [7u8; FRAME_BYTES];
    let started = Instant::now();
    let mut trips = 0u64;
    while started.elapsed() < each {
        for _ in 0..100 {
            client.write_all(&frame)?;
            peer.read_exact(&mut frame)?;
            peer.write_all(&frame)?;
            client.read_exact(&mut frame)?;
            trips += 1;
        }
    }
    Ok(trips as f64 / started.elapsed().as_secs_f64())
}

/// The CPU model and the first core's frequency in MHz, from `/proc/cpuinfo`, if readable.
pub fn cpu_model() -> (Option<String>, Option<f64>) {
    std::fs::read_to_string("/proc/cpuinfo").map_or((None, None), |text| parse_cpuinfo(&text))
}

fn parse_cpuinfo(text: &str) -> (Option<String>, Option<f64>) {
    let field = |name: &str| {
        text.lines()
            .filter_map(|line| line.split_once(':'))
            .find(|(key, _)| key.trim() == name)
            .map(|(_, value)| value.trim().to_string())
    };
    (
        field("model name").filter(|m| !m.is_empty()),
        field("cpu MHz").and_then(|mhz| mhz.parse().ok()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_machine_has_index_100_and_half_its_speed_in_both_has_50() {
        let reference = speed(
            REFERENCE_CPU_BLOCKS_PER_S,
            REFERENCE_LOOPBACK_ROUNDTRIPS_PER_S,
        );
        assert!((reference.index - 100.0).abs() < 1e-9);
        let half = speed(
            REFERENCE_CPU_BLOCKS_PER_S / 2.0,
            REFERENCE_LOOPBACK_ROUNDTRIPS_PER_S / 2.0,
        );
        assert!((half.index - 50.0).abs() < 1e-9);
    }

    #[test]
    fn a_short_calibration_measures_both_loops() {
        let speed = measure(Duration::from_millis(50)).unwrap();
        assert!(speed.cpu_blocks_per_s > 0.0);
        assert!(speed.loopback_roundtrips_per_s > 0.0);
        assert!(speed.index > 0.0);
    }

    #[test]
    fn cpuinfo_gives_the_model_and_frequency_of_the_first_core() {
        let text = "processor\t: 0\nmodel name\t: AMD EPYC 7B13\ncpu MHz\t\t: 2450.000\n\nprocessor\t: 1\nmodel name\t: AMD EPYC 7B13\n";
        assert_eq!(
            parse_cpuinfo(text),
            (Some("AMD EPYC 7B13".to_string()), Some(2450.0))
        );
        assert_eq!(parse_cpuinfo(""), (None, None));
    }
}
