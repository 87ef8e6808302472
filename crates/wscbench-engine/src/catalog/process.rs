//! A process wscbench did not start, watched through `/proc` (`run --url --pid`): whether
//! it still runs, and once a second its CPU (user and system time from `/proc/PID/stat`)
//! and its resident memory (`VmRSS` from `/proc/PID/status`), as the engine's per-second
//! usage of a container.

use std::time::{Duration, Instant};

use crate::docker::{ContainerState, Usage, UsageStream};

/// One reading of a process's counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reading {
    /// The state letter of `/proc/PID/stat` (`R`, `S`, `D`, `Z`, ...).
    pub state: char,
    /// User and system CPU time together, in clock ticks.
    pub cpu_ticks: u64,
    /// Resident set (`VmRSS`), in bytes.
    pub rss_bytes: u64,
}

impl Reading {
    /// A zombie or dead process no longer runs, though its `/proc` entry is still there.
    pub fn alive(&self) -> bool {
        !matches!(self.state, 'Z' | 'X' | 'x')
    }
}

/// Why a process cannot be watched.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    /// No such process, or its `/proc` entry cannot be read.
    #[error("process {pid}: {reason}")]
    Unreadable { pid: u32, reason: String },
}

impl ProcessError {
    /// A `--pid` that names no process to watch is the caller's usage.
    pub fn class(&self) -> crate::ErrorClass {
        crate::ErrorClass::Usage
    }
}

/// Reads the process's counters now.
pub fn read(pid: u32) -> Result<Reading, ProcessError> {
    let unreadable = |what: &str, reason: String| ProcessError::Unreadable {
        pid,
        reason: format!("{what}: {reason}"),
    };
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map_err(|e| unreadable("no such process (reading /proc/PID/stat)", e.to_string()))?;
    let (state, cpu_ticks) = parse_stat(&stat)
        .ok_or_else(|| unreadable("/proc/PID/stat", "not in the kernel's format".into()))?;
    // A zombie has no memory left, and no VmRSS line: 0 is then its true resident set.
    let rss_bytes = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|status| parse_rss_bytes(&status))
        .unwrap_or(0);
    Ok(Reading {
        state,
        cpu_ticks,
        rss_bytes,
    })
}

/// The state letter and user + system time (fields 3, 14 and 15) of a `/proc/PID/stat`
/// line. The command name (field 2) is in parentheses and may itself hold spaces and
/// parentheses, so the fields are counted after its last `)`.
pub fn parse_stat(text: &str) -> Option<(char, u64)> {
    let after_name = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    // fields[0] is field 3 (state); field N is fields[N - 3].
    let state = fields.first()?.chars().next()?;
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some((state, utime + stime))
}

/// `VmRSS` of a `/proc/PID/status`, in bytes (the kernel writes it in kB, meaning KiB).
pub fn parse_rss_bytes(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The process as the runner sees a container: running, or gone (a process that is not our
/// child leaves no exit code to read).
pub fn state(pid: u32) -> ContainerState {
    ContainerState {
        running: read(pid).is_ok_and(|r| r.alive()),
        exit_code: None,
        oom_killed: false,
    }
}

/// CPU in percent of one core between two readings `elapsed` apart.
pub fn cpu_percent(before: &Reading, after: &Reading, elapsed: Duration) -> f64 {
    let ticks = after.cpu_ticks.saturating_sub(before.cpu_ticks) as f64;
    let per_second = rustix::param::clock_ticks_per_second().max(1) as f64;
    let seconds = elapsed.as_secs_f64().max(1e-3);
    ticks / per_second / seconds * 100.0
}

/// One sample a second of the process's CPU and resident memory, until it exits.
pub fn usage(pid: u32) -> UsageStream {
    let first = read(pid).ok().map(|r| (r, Instant::now()));
    Box::pin(futures_util::stream::unfold(
        first,
        move |last| async move {
            let (before, at) = last?;
            tokio::time::sleep(Duration::from_secs(1)).await;
            let after = read(pid).ok().filter(Reading::alive)?;
            let now = Instant::now();
            let usage = Usage {
                cpu_percent: cpu_percent(&before, &after, now - at),
                mem_bytes: after.rss_bytes,
                read_epoch_ms: std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .ok()
                    .map(|d| d.as_millis() as u64),
                ..Usage::default()
            };
            Some((usage, Some((after, now))))
        },
    ))
}

#[cfg(test)]
mod tests {
    use futures_util::StreamExt;

    use super::*;

    #[test]
    fn a_stat_line_is_read_after_the_command_name_whatever_it_holds() {
        let line = "4242 (a (weird) name) S 1 4242 4242 0 -1 4194560 120 0 0 0 \
                    700 45 0 0 20 0 4 0 12345 2000000 300 18446744073709551615";
        assert_eq!(parse_stat(line), Some(('S', 745)));
        assert_eq!(parse_stat("4242 (x) Z"), None);
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn resident_memory_is_vmrss_in_bytes() {
        let status = "Name:\tx\nVmHWM:\t  9000 kB\nVmRSS:\t  4096 kB\nThreads:\t3\n";
        assert_eq!(parse_rss_bytes(status), Some(4096 * 1024));
        assert_eq!(parse_rss_bytes("Name:\tx\n"), None);
    }

    #[test]
    fn cpu_is_ticks_over_wall_time_in_percent_of_one_core() {
        let hz = rustix::param::clock_ticks_per_second();
        let reading = |cpu_ticks| Reading {
            state: 'R',
            cpu_ticks,
            rss_bytes: 0,
        };
        // Two seconds of CPU in one second of wall time: two cores busy.
        let busy = cpu_percent(&reading(0), &reading(2 * hz), Duration::from_secs(1));
        assert!((busy - 200.0).abs() < 1e-9, "{busy}");
    }

    #[tokio::test]
    async fn a_child_process_is_watched_while_it_runs_and_seen_gone_once_it_exits() {
        // A child that spins: its CPU must show, its memory is its own resident set.
        let mut child = std::process::Command::new("sh")
            .args(["-c", "while :; do :; done"])
            .spawn()
            .unwrap();
        let pid = child.id();
        let reading = read(pid).unwrap();
        assert!(reading.alive() && reading.rss_bytes > 0, "{reading:?}");
        assert!(state(pid).running);
        let sample = usage(pid).next().await.expect("a sample while it runs");
        assert!(sample.cpu_percent > 10.0, "{sample:?}");
        assert!(sample.mem_bytes > 0, "{sample:?}");
        child.kill().unwrap();
        // Not yet reaped: a zombie, which no longer runs.
        std::thread::sleep(Duration::from_millis(100));
        assert!(!state(pid).running, "a killed child reads as gone");
        child.wait().unwrap();
        assert!(!state(pid).running);
        assert!(
            usage(pid).next().await.is_none(),
            "no sample of a gone process"
        );
        assert!(matches!(read(pid), Err(ProcessError::Unreadable { .. })));
    }
}
