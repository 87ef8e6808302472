//! The population scenario's judgement: from the per-second samples and the k6 hold windows
//! of its levels, each level's means, and from the levels what one connected user costs
//! (memory as the slope across the levels, user space and kernel apart; CPU per 1,000 users
//! at the highest level held). Pure functions; the rule is in docs/methodology.md ("The
//! population").

use wscbench_results::{IdleLimit, Population, PopulationLevel, Sample};

use crate::idle::Ending;
use crate::native::MergedWindow;

/// A level counts as held when the server's mean connections over its hold reach this share
/// of the level's users (churn keeps a few away for a moment).
pub const HELD_SHARE: f64 = 0.97;

/// What the judgement reads besides the series.
pub struct Inputs<'a> {
    /// The per-second samples of the point.
    pub series: &'a [Sample],
    /// The k6 hold windows of the levels, in order (epoch ms), merged over instances.
    pub holds: &'a [MergedWindow],
    /// When the load started, epoch ms: the origin of the samples' `t_ms`.
    pub load_started_epoch_ms: u64,
    /// The users planned at each level.
    pub levels: &'a [u64],
    /// The connects a second a level's ramp asked at most.
    pub connects_per_s: u64,
    /// The server's memory limit, in bytes.
    pub memory_limit_bytes: u64,
}

/// The mean of `field` over `samples` where it was read; `None` when nowhere.
fn mean(samples: &[&Sample], field: impl Fn(&Sample) -> Option<f64>) -> Option<f64> {
    let values: Vec<f64> = samples.iter().filter_map(|s| field(s)).collect();
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// The server's CPU over a window, in CPU ms per second: from its cumulative CPU time at the
/// first and last reading inside the window (exact, whatever the sampler missed), or the mean
/// of its per-second readings where no cumulative figure was read.
fn server_cpu_ms_per_s(samples: &[&Sample]) -> Option<f64> {
    let read: Vec<(i64, f64)> = samples
        .iter()
        .filter_map(|s| Some((s.server_cpu_read_ms?, s.server_cpu_used_ms?)))
        .collect();
    if let (Some(first), Some(last)) = (read.first(), read.last())
        && last.0 > first.0
    {
        return Some((last.1 - first.1) / (last.0 - first.0) as f64 * 1000.0);
    }
    mean(samples, |s| s.server_cpu_percent.map(|p| p * 10.0))
}

/// The p99 of a histogram in ms, `None` when empty.
fn p99_ms(h: &hdrhistogram::Histogram<u64>) -> Option<f64> {
    (h.len() > 0).then(|| h.value_at_quantile(0.99) as f64 / 1000.0)
}

/// Each level's hold, as the samples inside its window read it.
pub fn levels(inputs: &Inputs) -> Vec<PopulationLevel> {
    inputs
        .holds
        .iter()
        .zip(inputs.levels)
        .filter_map(|(w, &users)| {
            let from = w.from_ms.saturating_sub(inputs.load_started_epoch_ms);
            let to = w.to_ms.saturating_sub(inputs.load_started_epoch_ms);
            let inside: Vec<&Sample> = inputs
                .series
                .iter()
                .filter(|s| s.t_ms >= from && s.t_ms <= to)
                .filter(|s| s.server_mem_bytes.is_some_and(|m| m > 0))
                .collect();
            Some(PopulationLevel {
                users_planned: users,
                from_ms: from,
                to_ms: to,
                connections: mean(&inside, |s| s.connections.map(|c| c as f64))?,
                mem_bytes: mean(&inside, |s| s.server_mem_bytes.map(|m| m as f64))?,
                user_bytes: mean(&inside, |s| s.server_anon_bytes.map(|m| m as f64)),
                kernel_bytes: mean(&inside, |s| s.server_kernel_bytes.map(|m| m as f64)),
                loadgen_mem_bytes: mean(&inside, |s| Some(s.loadgen_mem_bytes as f64))?,
                server_cpu_ms_per_s: server_cpu_ms_per_s(&inside),
                loadgen_cpu_ms_per_s: mean(&inside, |s| Some(s.loadgen_cpu_percent * 10.0))?,
                chat_p99_ms: p99_ms(&w.response_time_us),
                pong_p99_ms: p99_ms(&w.pong_latency_us),
            })
        })
        .collect()
}

/// True when a level's hold had (nearly) all its users connected.
pub fn held(level: &PopulationLevel) -> bool {
    level.connections >= HELD_SHARE * level.users_planned as f64
}

/// The slope of `y` against the levels' connections, over the held levels.
fn slope(held: &[&PopulationLevel], y: impl Fn(&PopulationLevel) -> Option<f64>) -> Option<f64> {
    let points: Option<Vec<(f64, f64)>> = held.iter().map(|l| Some((l.connections, y(l)?))).collect();
    crate::series::least_squares_slope(&points?)
}

/// What the population cost the server, from its series, its levels' holds and how it ended.
pub fn population(inputs: &Inputs, ending: &Ending) -> Population {
    let levels = levels(inputs);
    let held: Vec<&PopulationLevel> = levels.iter().filter(|l| held(l)).collect();
    let top = held.last();
    let per_1k = |cpu: Option<f64>, l: &PopulationLevel| {
        cpu.filter(|_| l.connections > 0.0)
            .map(|c| c / l.connections * 1000.0)
    };
    let users_held = inputs
        .series
        .iter()
        .filter_map(|s| s.connections)
        .max()
        .unwrap_or(0);
    let idle = crate::idle::idle_capacity(inputs.series, inputs.memory_limit_bytes, ending);
    let limited_by = match idle.limited_by {
        // Every level reached, yet one not held: the server did not keep its users.
        IdleLimit::AllHeld if held.len() < inputs.levels.len() => IdleLimit::ClientErrors {
            errors: 0,
            side: wscbench_results::FailedSide::Server,
            evidence: format!(
                "{} of {} levels held {:.0} % of their users",
                held.len(),
                inputs.levels.len(),
                HELD_SHARE * 100.0
            ),
        },
        other => other,
    };
    Population {
        users_planned: inputs.levels.last().copied().unwrap_or(0),
        users_held,
        mem_bytes_per_user: slope(&held, |l| Some(l.mem_bytes)),
        user_bytes_per_user: slope(&held, |l| l.user_bytes),
        kernel_bytes_per_user: slope(&held, |l| l.kernel_bytes),
        cpu_ms_per_s_per_1k_users: top.and_then(|l| per_1k(l.server_cpu_ms_per_s, l)),
        chat_p99_ms: top.and_then(|l| l.chat_p99_ms),
        pong_p99_ms: top.and_then(|l| l.pong_p99_ms),
        connects_per_s: inputs.connects_per_s,
        loadgen_bytes_per_user: slope(&held, |l| Some(l.loadgen_mem_bytes)),
        loadgen_cpu_ms_per_s_per_1k_users: top.and_then(|l| per_1k(Some(l.loadgen_cpu_ms_per_s), l)),
        peak_mem_bytes: idle.peak_mem_bytes,
        memory_limit_bytes: inputs.memory_limit_bytes,
        levels,
        limited_by,
    }
}
