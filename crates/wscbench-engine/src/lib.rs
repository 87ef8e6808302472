//! The wscbench engine: everything that touches servers, processes, Docker and k6.
//! It measures and records; it never formats tables (that is `wscbench-report`).

pub mod calibrate;
pub mod capacity;
pub mod catalog;
pub mod docker;
pub mod engine;
pub mod error_class;
pub mod host_limits;
pub mod http;
pub mod idle;
pub mod images;
pub mod k6;
pub mod loadgen_capacity;
pub mod local;
pub mod memory;
pub mod native;
pub mod population;
pub mod process;
pub mod runner;
pub mod runtime;
pub mod scenarios;
pub mod series;
pub mod slow_consumers;
pub mod soak;
pub mod split;
pub mod stats;
pub mod sweep;
pub mod tls;
pub mod verdict;
pub mod verify;

pub use error_class::ErrorClass;
