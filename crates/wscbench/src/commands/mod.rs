//! One module per subcommand; each turns parsed arguments into engine calls and prints the outcome.

pub mod idle_memory;
pub mod list;
pub mod verify;

use std::path::Path;

use anyhow::{Context, Result};
use wscbench_engine::catalog::{self, Server};

/// Every server with a manifest under `root/servers`.
pub fn discover(root: &Path) -> Result<Vec<Server>> {
    catalog::discover(&root.join("servers")).context("reading the server manifests")
}
