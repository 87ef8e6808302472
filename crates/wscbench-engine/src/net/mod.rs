//! The network clients every other folder shares: GET `/health` and `/stats` (and k6's REST
//! API) over HTTP ([`http`]), and the run's TLS certificate with a connection that trusts it
//! ([`tls`]).
//!
//! Uses no other folder of this crate (only [`crate::ErrorClass`]).

pub mod http;
pub mod tls;
