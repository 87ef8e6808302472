//! The host limits an idle-capacity or population run needs, planned before anything starts: the loopback
//! source addresses its clients connect from, the open files of the server's and the load
//! generators' containers, and the kernel settings that bound them. A run the machine cannot
//! serve is refused here, with what it would have needed, never discovered later as client
//! errors. [`plan`] is pure; [`HostFacts::read`] reads the machine.

use std::net::Ipv4Addr;

use wscbench_results::{HostLimits, Mode};

/// Open files a process holds besides its connections: listeners, epoll, pipes, logs,
/// libraries, the runtime's own. Generous: a step refused for want of a few files is better
/// than one whose last clients fail.
pub const FILES_HEADROOM: u64 = 1_024;

/// The first source address the clients connect from; 127.0.0.1 is left to everything else
/// on the host (the servers listen there).
const FIRST_SOURCE: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 2);

/// Source addresses available on loopback from [`FIRST_SOURCE`] on (127.0.0.2 to
/// 127.255.255.254).
const LOOPBACK_SOURCES: u64 = (1 << 24) - 3;

/// What the machine allows, as read before a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostFacts {
    /// The most open files one process may be given (the hard `RLIMIT_NOFILE` wscbench and the
    /// Docker engine run under; a container gets no more without `CAP_SYS_RESOURCE`).
    pub nofile_hard: u64,
    /// True when the capability bounding set holds `CAP_SYS_RESOURCE`, so a hard limit can be
    /// raised (up to `fs.nr_open`).
    pub can_raise_nofile: bool,
    /// `fs.nr_open`: the ceiling of any process's open files.
    pub nr_open: u64,
    /// `net.ipv4.ip_local_port_range`: the ephemeral ports one source address binds from.
    pub port_range: (u32, u32),
}

impl HostFacts {
    /// The ephemeral ports one source address has.
    pub fn ports_per_address(&self) -> u64 {
        u64::from(self.port_range.1.saturating_sub(self.port_range.0)) + 1
    }

    /// The most open files a container can be given on this machine.
    pub fn nofile_ceiling(&self) -> u64 {
        if self.can_raise_nofile {
            self.nr_open
        } else {
            self.nofile_hard.min(self.nr_open)
        }
    }

    /// Reads the facts of the machine wscbench runs on (the Docker engine's, on a local
    /// engine). `None` when `/proc` does not say.
    pub fn read() -> Option<HostFacts> {
        let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
        let status = std::fs::read_to_string("/proc/self/status").ok()?;
        let nr_open = std::fs::read_to_string("/proc/sys/fs/nr_open").ok()?;
        let range = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").ok()?;
        Some(HostFacts {
            nofile_hard: hard_open_files(&limits)?,
            can_raise_nofile: has_sys_resource(&status)?,
            nr_open: nr_open.trim().parse().ok()?,
            port_range: port_range(&range)?,
        })
    }
}

/// The hard "Max open files" of a `/proc/<pid>/limits`.
fn hard_open_files(limits: &str) -> Option<u64> {
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    let mut fields = line["Max open files".len()..].split_whitespace();
    let _soft = fields.next()?;
    match fields.next()? {
        "unlimited" => Some(u64::MAX),
        n => n.parse().ok(),
    }
}

/// `CAP_SYS_RESOURCE` (24) in the `CapBnd` of a `/proc/<pid>/status`.
fn has_sys_resource(status: &str) -> Option<bool> {
    let hex = status.lines().find_map(|l| l.strip_prefix("CapBnd:"))?;
    let caps = u64::from_str_radix(hex.trim(), 16).ok()?;
    Some(caps & (1 << 24) != 0)
}

/// `net.ipv4.ip_local_port_range`: two numbers.
fn port_range(text: &str) -> Option<(u32, u32)> {
    let mut it = text.split_whitespace().map(|n| n.parse::<u32>());
    match (it.next()?, it.next()?) {
        (Ok(lo), Ok(hi)) if lo <= hi => Some((lo, hi)),
        _ => None,
    }
}

/// Why the machine cannot serve a run's largest step.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostLimitError {
    /// A process would need more open files than the machine gives one.
    #[error(
        "{clients} clients need {needed} open files in the {side}'s container ({per_process} connections + {FILES_HEADROOM} for the rest), but this machine gives a process at most {ceiling}{why}; the largest step it can serve has {largest_step} clients"
    )]
    OpenFiles {
        /// The step's clients.
        clients: u64,
        /// `server` or `load generator`.
        side: &'static str,
        /// The connections that one process holds.
        per_process: u64,
        /// Open files it would need.
        needed: u64,
        /// What the machine gives.
        ceiling: u64,
        /// Why the ceiling cannot be raised, when it cannot.
        why: String,
        /// The most clients a step may have here.
        largest_step: u64,
    },
    /// More source addresses than loopback has.
    #[error(
        "{clients} clients need {needed} loopback source addresses at {ports} ports each, more than 127.0.0.0/8 has"
    )]
    SourceAddresses {
        /// The step's clients.
        clients: u64,
        /// Addresses needed.
        needed: u64,
        /// Ephemeral ports per address.
        ports: u64,
    },
}

/// Plans the largest step of `clients` idle clients, spread evenly over `loadgens` k6
/// processes, against the machine's `facts`: the source addresses (enough that no address
/// binds more than its port range), and the open files of the server (every client) and of
/// each load generator (its share).
pub fn plan(clients: u64, loadgens: u32, facts: &HostFacts) -> Result<HostLimits, HostLimitError> {
    let loadgens = u64::from(loadgens.max(1));
    let per_loadgen = clients.div_ceil(loadgens);
    let ceiling = facts.nofile_ceiling();
    let why = if facts.can_raise_nofile || facts.nofile_hard >= facts.nr_open {
        " (fs.nr_open)".to_string()
    } else {
        " (the hard RLIMIT_NOFILE; raising it needs CAP_SYS_RESOURCE, which this machine's capability bounding set lacks)".to_string()
    };
    let largest = ceiling.saturating_sub(FILES_HEADROOM);
    for (side, per_process) in [("server", clients), ("load generator", per_loadgen)] {
        let needed = per_process + FILES_HEADROOM;
        if needed > ceiling {
            return Err(HostLimitError::OpenFiles {
                clients,
                side,
                per_process,
                needed,
                ceiling,
                why: why.clone(),
                largest_step: if side == "server" {
                    largest
                } else {
                    largest * loadgens
                },
            });
        }
    }
    let ports = facts.ports_per_address();
    // Every k6 process connects from the same list, so one address serves all their clients.
    let needed = clients.div_ceil(ports).max(1);
    if needed > LOOPBACK_SOURCES {
        return Err(HostLimitError::SourceAddresses {
            clients,
            needed,
            ports,
        });
    }
    let first = u32::from(FIRST_SOURCE);
    Ok(HostLimits {
        clients,
        source_addresses: (0..needed as u32)
            .map(|i| Ipv4Addr::from(first + i).to_string())
            .collect(),
        ports_per_address: ports,
        ip_local_port_range: format!("{} {}", facts.port_range.0, facts.port_range.1),
        server_nofile: clients + FILES_HEADROOM,
        loadgen_nofile: per_loadgen + FILES_HEADROOM,
        nofile_ceiling: ceiling,
    })
}

/// The limits of an idle-capacity run in `mode` with `loadgens` k6 processes on this
/// machine, for its largest step, or the first step it cannot serve; `Ok(None)` when `/proc`
/// does not say (not Linux).
pub fn for_idle_capacity(mode: Mode, loadgens: u32) -> Result<Option<HostLimits>, HostLimitError> {
    let Some(facts) = HostFacts::read() else {
        return Ok(None);
    };
    for_steps(
        crate::load::scenarios::idle_capacity_steps(mode),
        loadgens,
        &facts,
    )
    .map(Some)
}

/// The limits of a population of `users` (its full level) with `loadgens` k6 processes on
/// this machine; `Ok(None)` when `/proc` does not say (not Linux).
pub fn for_population(users: u64, loadgens: u32) -> Result<Option<HostLimits>, HostLimitError> {
    let Some(facts) = HostFacts::read() else {
        return Ok(None);
    };
    plan(users, loadgens, &facts).map(Some)
}

/// [`plan`] for every step in order: the largest step's limits, or the first refusal.
pub fn for_steps(
    steps: &[u64],
    loadgens: u32,
    facts: &HostFacts,
) -> Result<HostLimits, HostLimitError> {
    let mut planned = plan(0, loadgens, facts)?;
    for &clients in steps {
        planned = plan(clients, loadgens, facts)?;
    }
    Ok(planned)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This machine: 20,000 files a process and no way to raise it, the default port range.
    fn here() -> HostFacts {
        HostFacts {
            nofile_hard: 20_000,
            can_raise_nofile: false,
            nr_open: 1_048_576,
            port_range: (32_768, 60_999),
        }
    }

    #[test]
    fn addresses_are_the_clients_over_the_ports_of_one() {
        let raised = HostFacts {
            can_raise_nofile: true,
            ..here()
        };
        assert_eq!(raised.ports_per_address(), 28_232);
        let one = plan(28_232, 1, &raised).unwrap();
        assert_eq!(one.source_addresses, vec!["127.0.0.2"]);
        let two = plan(28_233, 1, &raised).unwrap();
        assert_eq!(two.source_addresses, vec!["127.0.0.2", "127.0.0.3"]);
        let many = plan(200_000, 4, &raised).unwrap();
        assert_eq!(many.source_addresses.len(), 8, "200,000 / 28,232 = 7.08");
        assert_eq!(many.source_addresses[7], "127.0.0.9");
        let narrow = HostFacts {
            port_range: (60_000, 60_999),
            ..raised
        };
        let past_a_byte = plan(300_000, 4, &narrow).unwrap();
        assert_eq!(past_a_byte.source_addresses.len(), 300);
        assert_eq!(past_a_byte.source_addresses[254], "127.0.1.0");
    }

    #[test]
    fn files_are_the_connections_of_each_process_and_headroom() {
        let p = plan(10_000, 1, &here()).unwrap();
        assert_eq!((p.server_nofile, p.loadgen_nofile), (11_024, 11_024));
        let raised = HostFacts {
            can_raise_nofile: true,
            ..here()
        };
        let split = plan(100_000, 4, &raised).unwrap();
        assert_eq!(
            (split.server_nofile, split.loadgen_nofile),
            (101_024, 26_024)
        );
        assert_eq!(split.nofile_ceiling, 1_048_576);
    }

    #[test]
    fn a_step_past_the_machines_open_files_is_refused_with_what_it_needed() {
        let err = plan(25_000, 4, &here()).unwrap_err();
        assert_eq!(
            err,
            HostLimitError::OpenFiles {
                clients: 25_000,
                side: "server",
                per_process: 25_000,
                needed: 26_024,
                ceiling: 20_000,
                why: " (the hard RLIMIT_NOFILE; raising it needs CAP_SYS_RESOURCE, which this machine's capability bounding set lacks)".into(),
                largest_step: 18_976,
            }
        );
        assert!(
            err.to_string()
                .contains("need 26024 open files in the server's container")
        );
        // The server holds it, one k6 does not.
        let one_k6 = plan(18_976, 1, &here()).unwrap();
        assert_eq!(one_k6.loadgen_nofile, 20_000);
        let raised = HostFacts {
            can_raise_nofile: true,
            nr_open: 100_000,
            ..here()
        };
        assert!(matches!(
            plan(150_000, 8, &raised),
            Err(HostLimitError::OpenFiles {
                side: "server",
                ceiling: 100_000,
                ..
            })
        ));
        assert!(plan(90_000, 1, &raised).is_ok());
        assert!(matches!(
            plan(99_000, 1, &raised),
            Err(HostLimitError::OpenFiles { side: "server", .. })
        ));
    }

    #[test]
    fn a_run_is_refused_at_its_first_step_the_machine_cannot_serve() {
        let steps = [10_000, 25_000, 50_000, 100_000, 150_000, 200_000];
        assert!(matches!(
            for_steps(&steps, 1, &here()),
            Err(HostLimitError::OpenFiles {
                clients: 25_000,
                ..
            })
        ));
        assert_eq!(for_steps(&steps[..1], 1, &here()).unwrap().clients, 10_000);
    }

    #[test]
    fn the_facts_are_read_from_procs_own_words() {
        let limits = "Limit                     Soft Limit           Hard Limit           Units     \n\
                      Max processes             95284                95284                processes \n\
                      Max open files            1024                 20000                files     \n";
        assert_eq!(hard_open_files(limits), Some(20_000));
        assert_eq!(has_sys_resource("CapBnd:\t000001fffeffffff\n"), Some(false));
        assert_eq!(has_sys_resource("CapBnd:\t000001ffffffffff\n"), Some(true));
        assert_eq!(port_range("32768\t60999\n"), Some((32_768, 60_999)));
        assert_eq!(port_range("60999 32768"), None);
    }
}
