//! What the population scenario found: per level, what the server held and used, and from
//! the levels what one connected user costs (memory as a slope, CPU at the full level).

use serde::{Deserialize, Serialize};

use crate::IdleLimit;

/// What a population of users cost the server, from the levels it was brought up through
/// inside one point (a third, two thirds, all).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Population {
    /// Users planned at the full level.
    pub users_planned: u64,
    /// The most users the server held at once (its `connections_current`).
    pub users_held: u64,
    /// Each level's hold, in order; a level the run did not reach is absent.
    pub levels: Vec<PopulationLevel>,
    /// Server memory per user: the least-squares slope of the levels' mean memory against
    /// their mean connections, in bytes (absent: fewer than two levels held).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mem_bytes_per_user: Option<f64>,
    /// Of that, user space (the cgroup's anonymous memory), in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_bytes_per_user: Option<f64>,
    /// Of that, the kernel's share charged to the server (sockets, slab, stacks), in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_bytes_per_user: Option<f64>,
    /// Server CPU per 1,000 users at the highest level held: CPU milliseconds per second of
    /// its hold (millicores), per 1,000 connections, heartbeats, chats and churn running.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_ms_per_s_per_1k_users: Option<f64>,
    /// Latency p99 of chats at the highest level held, from their intended times, in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chat_p99_ms: Option<f64>,
    /// Latency p99 of pongs at the highest level held, from their pings' intended times, in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pong_p99_ms: Option<f64>,
    /// The connects a second each level's ramp asked at most.
    pub connects_per_s: u64,
    /// The load generator's memory per user: the same slope of every k6's memory, in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loadgen_bytes_per_user: Option<f64>,
    /// The load generator's CPU per 1,000 users at the highest level held, in CPU ms per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loadgen_cpu_ms_per_s_per_1k_users: Option<f64>,
    /// The server's highest memory, in bytes.
    pub peak_mem_bytes: u64,
    /// The server's memory limit, in bytes.
    pub memory_limit_bytes: u64,
    /// What ended the levels (every level held, memory near the limit, client errors with
    /// the side that failed, the server or the load generator dying).
    pub limited_by: IdleLimit,
}

/// One level's hold: the means of the samples inside it (connections and memory over its
/// later half, where the level has settled; CPU over the whole hold).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PopulationLevel {
    /// Users planned at this level.
    pub users_planned: u64,
    /// The hold's window, in milliseconds since the load started.
    pub from_ms: u64,
    /// Its end, in milliseconds since the load started.
    pub to_ms: u64,
    /// The server's mean `connections_current` over the hold's later half.
    pub connections: f64,
    /// The server's mean memory over the hold's later half, in bytes.
    pub mem_bytes: f64,
    /// Of that, user space, in bytes (absent where the cgroup does not say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_bytes: Option<f64>,
    /// Of that, the kernel's share, in bytes (absent where the cgroup does not say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_bytes: Option<f64>,
    /// Every k6's memory, summed, over the hold's later half, in bytes.
    pub loadgen_mem_bytes: f64,
    /// The server's CPU over the hold, in CPU milliseconds per second (absent: not read twice).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_cpu_ms_per_s: Option<f64>,
    /// Every k6's mean CPU over the hold, in CPU milliseconds per second.
    pub loadgen_cpu_ms_per_s: f64,
    /// Latency p99 of the chats received in the hold, from intended times, in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chat_p99_ms: Option<f64>,
    /// Latency p99 of the pongs received in the hold, from intended times, in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pong_p99_ms: Option<f64>,
}
