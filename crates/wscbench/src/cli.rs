//! The command line: clap definitions, buildable from any argument list so tests can drive it.

use std::ffi::OsString;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};

use crate::commands;

/// Compare WebSocket public-chat server stacks fairly.
///
/// wscbench verifies that every server speaks the same chat protocol, builds each into a
/// FROM-scratch Docker image, runs it under identical limits while k6 drives one of four load
/// shapes, samples docker stats, and stores every run as JSON in results/.
#[derive(Debug, Parser)]
#[command(name = "wscbench", version, propagate_version = true, max_term_width = 100)]
pub struct Cli {
    /// The project directory holding servers/ and scenarios/ [default: found upwards from the current directory]
    #[arg(long, global = true, env = "WSCBENCH_ROOT", value_name = "DIR")]
    pub root: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List the servers found through their server.toml manifests.
    List,
    /// Prove that a server speaks the chat protocol (docs/protocol.md), check by named check.
    ///
    /// With --url, checks a server that is already running. With --server/--profile/--lang/--all,
    /// builds each selected server from its manifest, runs it as a local process on a free
    /// loopback port, checks it (including its SIGTERM shutdown), and stops it.
    /// Exits 1 if any check fails.
    Verify(VerifyArgs),
    /// Measure a server's resident memory with N idle joined clients, and after they leave.
    IdleMemory(IdleMemoryArgs),
}

/// Which servers a command applies to.
#[derive(Debug, Clone, Args, Default)]
pub struct SelectArgs {
    /// A server id such as profile-b/go (repeatable)
    #[arg(long = "server", value_name = "ID")]
    pub servers: Vec<String>,
    /// Only servers of this profile: a (frameworks) or b (minimal / stdlib) (repeatable)
    #[arg(long = "profile", value_name = "a|b", value_parser = ["a", "b", "A", "B"])]
    pub profiles: Vec<String>,
    /// Only servers in this language: go, rust or zig (repeatable)
    #[arg(long = "lang", value_name = "LANG", value_parser = ["go", "rust", "zig"])]
    pub langs: Vec<String>,
}

impl SelectArgs {
    pub fn is_empty(&self) -> bool {
        self.servers.is_empty() && self.profiles.is_empty() && self.langs.is_empty()
    }

    pub fn selection(&self) -> wscbench_engine::catalog::Selection {
        wscbench_engine::catalog::Selection {
            ids: self.servers.clone(),
            profiles: self.profiles.iter().map(|p| p.to_ascii_lowercase()).collect(),
            languages: self.langs.clone(),
        }
    }
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// Verify a running server at this URL, e.g. ws://127.0.0.1:8080/ws
    #[arg(long, value_name = "URL", conflicts_with_all = ["servers", "profiles", "langs", "all"])]
    pub url: Option<String>,
    #[command(flatten)]
    pub select: SelectArgs,
    /// Verify every server that has a manifest
    #[arg(long)]
    pub all: bool,
    /// Run only this check (repeatable); see the check names in the output
    #[arg(long = "only", value_name = "CHECK")]
    pub only: Vec<String>,
    /// Use this binary instead of building the server (with exactly one --server)
    #[arg(long, value_name = "PATH", requires = "servers")]
    pub binary: Option<PathBuf>,
    /// Print machine-readable JSON instead of the check list
    #[arg(long)]
    pub json: bool,
    /// Pass the server's own log (stderr) through
    #[arg(long)]
    pub server_logs: bool,
}

#[derive(Debug, Args)]
pub struct IdleMemoryArgs {
    /// The server to measure, e.g. profile-b/rust
    #[arg(long = "server", value_name = "ID", required = true)]
    pub servers: Vec<String>,
    /// Idle joined clients to hold
    #[arg(long, default_value_t = 1000)]
    pub clients: usize,
    /// Print JSON
    #[arg(long)]
    pub json: bool,
}

/// Parses `args` and runs the command; returns the process exit code.
pub fn run<I, T>(args: I) -> Result<i32>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = Cli::parse_from(args);
    let root = project_root(cli.root.clone())?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting the async runtime")?;
    runtime.block_on(async move {
        match cli.command {
            Command::List => commands::list::run(&root),
            Command::Verify(args) => commands::verify::run(&root, args).await,
            Command::IdleMemory(args) => commands::idle_memory::run(&root, args).await,
        }
    })
}

/// The directory holding `servers/`: the one given, or the nearest one upwards from here.
fn project_root(given: Option<PathBuf>) -> Result<PathBuf> {
    if let Some(dir) = given {
        anyhow::ensure!(dir.join("servers").is_dir(), "{} has no servers/ directory", dir.display());
        return Ok(dir);
    }
    let here = std::env::current_dir().context("reading the current directory")?;
    here.ancestors()
        .find(|dir| dir.join("servers").is_dir() && dir.join("scenarios").is_dir())
        .map(PathBuf::from)
        .with_context(|| {
            format!("no wscbench project (a directory with servers/ and scenarios/) at or above {}; pass --root", here.display())
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn verify_takes_a_url_or_a_selection_but_not_both() {
        assert!(Cli::try_parse_from(["wscbench", "verify", "--url", "ws://127.0.0.1:1/ws"]).is_ok());
        assert!(Cli::try_parse_from(["wscbench", "verify", "--server", "profile-b/go", "--server", "profile-a/go"]).is_ok());
        assert!(Cli::try_parse_from(["wscbench", "verify", "--url", "ws://h:1/ws", "--server", "profile-b/go"]).is_err());
        assert!(Cli::try_parse_from(["wscbench", "verify", "--lang", "cobol"]).is_err());
    }
}
