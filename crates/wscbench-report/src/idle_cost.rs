//! The idle-cost table: what one idle connection costs each server, split into its user-space
//! memory and the kernel's, and what it costs the load generator, beside how many the server
//! held and the host limits the run was planned with. It only words what the engine stored
//! (`wscbench_engine::idle`).

use wscbench_results::{RunResult, Scenario};

use crate::rows::{Group, language, latest};
use crate::table::{Cell, Column, Row, Table};
use crate::units;

/// The kernel's own floor for one idle TCP socket on loopback, about 3 KB (the socket, its
/// file and epoll entry), which the best total is read against.
const KERNEL_FLOOR_BYTES: u64 = 3_000;

/// One row per server with an idle-capacity result, the cheapest total first.
pub(crate) fn idle_cost_table(groups: &[Group]) -> Table {
    let mut idle = latest(groups, Scenario::IdleCapacity, |r| r.idle.is_some());
    let total = |r: &RunResult| {
        r.idle
            .as_ref()
            .and_then(|i| i.bytes_per_client)
            .unwrap_or(f64::MAX)
    };
    idle.sort_by(|a, b| total(a).total_cmp(&total(b)));
    let mut table = Table {
        title: "Capacity — what one idle connection costs".to_string(),
        columns: Column::unranked(&[
            ("Server", false),
            ("Idle clients held", true),
            ("User space per client", true),
            ("Kernel per client", true),
            ("Total per client", true),
            ("k6 per client", true),
            ("Host limits", false),
        ]),
        rows: Vec::new(),
        footnotes: Vec::new(),
        scenario: Some(Scenario::IdleCapacity),
        axis: None,
    };
    let bytes = |b: Option<f64>| match b {
        Some(b) => Cell::figure(units::size(b.max(0.0).round() as u64), b),
        None => Cell::absent(),
    };
    for r in idle {
        let Some(i) = &r.idle else { continue };
        let limits = r.conditions.host_limits.as_ref().map_or_else(
            || "—".to_string(),
            |h| {
                format!(
                    "{} source address(es), nofile {} / k6 {}",
                    h.source_addresses.len(),
                    units::count(h.server_nofile),
                    units::count(h.loadgen_nofile)
                )
            },
        );
        table.rows.push(Row {
            cells: vec![
                Cell::label(format!("{} ({})", r.server_label(), language(r))),
                Cell::figure(units::count(i.clients_held), i.clients_held as f64),
                bytes(i.user_bytes_per_client),
                bytes(i.kernel_bytes_per_client),
                bytes(i.bytes_per_client),
                bytes(i.loadgen_bytes_per_client),
                Cell::label(limits),
            ],
        });
    }
    if !table.rows.is_empty() {
        table.footnotes.push(format!(
            "Each figure is the least-squares slope of a memory against the server's connections \
             over the run. User space: the container's anonymous memory (cgroup anon, rss on v1); \
             kernel: what the kernel charges it (cgroup kernel, or on v1 its usage less anonymous \
             memory and page cache); total: its memory without page cache. The kernel's own floor \
             for an idle TCP socket is about {}; µWebSockets publishes 1M connections in about 128 \
             MB, nbio about 1 KB a connection.",
            units::size(KERNEL_FLOOR_BYTES)
        ));
    }
    table
}
