//! Judgements of a result, each a pure function of its per-second samples, the native
//! report's windows and its counters, with its rule in docs/methodology.md: whether the load
//! generator was the limit ([`loadgen_bound`]), the capacity step that held ([`capacity`]),
//! idle capacity ([`idle`]), what a connected user costs ([`population`]), the soak KPIs
//! ([`soak`]), slow consumers ([`slow_consumers`]), and the series arithmetic they share
//! ([`series`]).
//!
//! Uses `load/` (the native report's windows, the scenarios' shapes); never `runner/`.

pub mod capacity;
pub mod idle;
pub mod loadgen_bound;
pub mod population;
pub mod series;
pub mod slow_consumers;
pub mod soak;
