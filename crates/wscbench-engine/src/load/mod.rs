//! The load and what measures it: the scenarios and their shapes ([`scenarios`]), sweeps
//! of load parameters ([`sweep`]), k6's summary ([`k6`]) and the native load path's report
//! ([`native`]), a load split over several k6 ([`split`]), the host limits a run needs
//! ([`host_limits`]), the machine-speed index ([`calibrate`]), the load generator's own
//! limit ([`loadgen_capacity`]) and a local server's idle memory ([`idle_memory`]).
//!
//! Uses `net/`, `docker/`, `catalog/` and `verify/`; never `judge/` nor `runner/`.

pub mod calibrate;
pub mod host_limits;
pub mod idle_memory;
pub mod k6;
pub mod loadgen_capacity;
pub mod native;
pub mod scenarios;
pub mod split;
pub mod sweep;
