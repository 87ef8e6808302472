//! The wscbench engine: everything that touches servers, processes, Docker and k6.
//! It measures and records; it never formats tables (that is `wscbench-report`).
//!
//! Its folders, from the bottom up; each uses only those below it (the `no_circles` test in
//! crates/wscbench/tests holds them to it):
//! - [`net`]: `/health`, `/stats` and k6's API over HTTP, and the run's TLS certificate;
//! - [`docker`]: the `Engine` trait over Docker, the real daemon, Docker's stats arithmetic;
//! - [`catalog`]: the servers — their manifests, runtimes, local builds and processes, images;
//! - [`verify`]: the protocol checks against a running server;
//! - [`load`]: the scenarios and sweeps, k6 and its reports, the host plan, the machine's
//!   and the load generator's own speed;
//! - [`judge`]: pure judgements of a result (load-generator bound, capacity, idle capacity,
//!   population, soak, slow consumers);
//! - [`runner`]: a plan's points through their phases, and the rounds.

pub mod catalog;
pub mod docker;
pub mod error_class;
pub mod judge;
pub mod load;
pub mod net;
pub mod runner;
pub mod verify;

pub use error_class::ErrorClass;
