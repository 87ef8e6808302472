//! One module per subcommand; each turns parsed arguments into engine calls and prints the outcome.
//! `run` checks its command line first, in `run_request`.

pub mod build;
pub mod calibrate;
pub mod clean;
pub mod compare;
pub mod doctor;
pub mod external;
pub mod idle_memory;
pub mod list;
pub mod loadgen_capacity;
pub mod merge_native;
pub mod report;
pub mod run;
pub mod run_request;
pub mod verify;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use wscbench_engine::catalog::images::{self, Image};
use wscbench_engine::catalog::local::{self, LocalServer};
use wscbench_engine::catalog::{self, Server};
use wscbench_engine::docker::daemon::DockerEngine;

use crate::errors::{Doing, ExpectedError};

/// Every server with a manifest under `root/servers`.
pub fn discover(root: &Path) -> Result<Vec<Server>, ExpectedError> {
    catalog::discover(&root.join("servers")).doing(|| "reading the server manifests")
}

/// The servers `select` picks from those with a manifest.
pub fn select(root: &Path, select: &crate::args::SelectArgs) -> Result<Vec<Server>, ExpectedError> {
    select
        .selection()
        .apply(&discover(root)?)
        .doing(|| "selecting servers")
}

/// Starts a server's `binary` on a free loopback port and waits until it answers /health.
pub async fn start_local(
    server: &Server,
    binary: &Path,
    show_logs: bool,
) -> Result<LocalServer, ExpectedError> {
    start_local_with(server, binary, &[], None, show_logs).await
}

/// [`start_local`] with `extra` arguments (a transport's), its /health over TLS trusting
/// `tls` when given.
pub async fn start_local_with(
    server: &Server,
    binary: &Path,
    extra: &[String],
    tls: Option<std::sync::Arc<wscbench_engine::net::tls::ClientConfig>>,
    show_logs: bool,
) -> Result<LocalServer, ExpectedError> {
    let starting = || format!("starting {}", server.id);
    let port = local::free_port().doing(starting)?;
    let mut process = LocalServer::spawn_with(binary, port, extra, show_logs).doing(starting)?;
    if let Some(tls) = tls {
        process = process.with_tls(tls);
    }
    process
        .wait_healthy(Duration::from_secs(10))
        .await
        .doing(starting)?;
    Ok(process)
}

/// Every toolchain the servers need answers: asked before any engine, so a missing one is
/// named at once and with its remedy, with or without Docker.
pub async fn check_toolchains(servers: &[Server]) -> Result<(), ExpectedError> {
    local::check_toolchains(servers)
        .await
        .doing(|| "checking the toolchains")
}

/// Connects to the engine; the error names the remedy.
pub async fn connect() -> Result<DockerEngine, ExpectedError> {
    DockerEngine::connect()
        .await
        .doing(|| "connecting to the Docker engine")
}

/// An environment variable, as `std::env::var_os` reads it (tests pass their own).
type Env<'a> = &'a dyn Fn(&str) -> Option<OsString>;

/// A tool that `scripts/setup` builds into its cache (`~/.cache/wscbench/bin/NAME`).
pub fn cached_tool(name: &str) -> PathBuf {
    tool_in_cache(&|var| std::env::var_os(var), name)
}

/// Where k6 is: `WSCBENCH_K6`, the set-up's cache, or `k6` on the PATH.
pub fn k6_path() -> PathBuf {
    k6_path_in(&|var| std::env::var_os(var), &|path| path.is_file())
}

/// `bin/NAME` in the set-up's cache.
fn tool_in_cache(env: Env, name: &str) -> PathBuf {
    cache_dir_in(env).join("bin").join(name)
}

/// The set-up's cache, found as `scripts/env` finds it: `WSCBENCH_CACHE`, else
/// `$XDG_CACHE_HOME/wscbench`, else `~/.cache/wscbench`.
pub fn cache_dir() -> PathBuf {
    cache_dir_in(&|var| std::env::var_os(var))
}

fn cache_dir_in(env: Env) -> PathBuf {
    env("WSCBENCH_CACHE")
        .map(PathBuf::from)
        .or_else(|| env("XDG_CACHE_HOME").map(|c| PathBuf::from(c).join("wscbench")))
        .or_else(|| env("HOME").map(|h| PathBuf::from(h).join(".cache/wscbench")))
        .unwrap_or_else(|| PathBuf::from(".cache/wscbench"))
}

fn k6_path_in(env: Env, is_file: &dyn Fn(&Path) -> bool) -> PathBuf {
    if let Some(path) = env("WSCBENCH_K6") {
        return PathBuf::from(path);
    }
    let cached = tool_in_cache(env, "k6");
    if is_file(&cached) {
        return cached;
    }
    env("PATH")
        .and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|p| p.join("k6"))
                .find(|p| is_file(p))
        })
        .unwrap_or_else(|| PathBuf::from("k6"))
}

/// Builds (or reuses) the image of every server, printing one line each.
pub async fn build_images(
    engine: &dyn wscbench_engine::docker::Engine,
    servers: &[Server],
    rebuild: bool,
) -> Result<Vec<Image>, ExpectedError> {
    // A first build compiles the server on the host and shows only its tag meanwhile: say
    // how long that takes before the first one starts.
    eprintln!(
        "images of {} server(s): about a minute each the first time, seconds while their sources are unchanged",
        servers.len()
    );
    let mut built = Vec::new();
    for server in servers {
        let started = Instant::now();
        eprint!("image {:<16} ", server.tag);
        let image = images::build_server_image(engine, server, rebuild)
            .await
            .doing(|| format!("building the image of {}", server.id))?;
        eprintln!("{}", describe(&image, started));
        built.push(image);
    }
    Ok(built)
}

/// Builds (or reuses) the k6 image.
pub async fn build_k6_image(
    engine: &dyn wscbench_engine::docker::Engine,
    rebuild: bool,
) -> Result<Image, images::ImageError> {
    let started = Instant::now();
    eprint!("image {:<16} ", images::K6_TAG);
    let image = images::build_k6_image(engine, &k6_path(), rebuild).await?;
    eprintln!("{}", describe(&image, started));
    Ok(image)
}

fn describe(image: &Image, started: Instant) -> String {
    format!(
        "{} in {:.1} s: binary {:.1} MiB, image {:.1} MiB{}",
        if image.rebuilt { "built" } else { "up to date" },
        started.elapsed().as_secs_f64(),
        image.binary_size_bytes as f64 / 1048576.0,
        image.image_size_bytes as f64 / 1048576.0,
        image
            .version
            .as_ref()
            .map(|v| format!(", {v}"))
            .unwrap_or_default(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<OsString> {
        |var| {
            vars.iter()
                .find(|(name, _)| *name == var)
                .map(|(_, value)| OsString::from(value))
        }
    }

    #[test]
    fn k6_is_found_in_the_cache_that_wscbench_cache_names() {
        let env = env(&[
            ("WSCBENCH_CACHE", "/srv/wscbench-cache"),
            ("HOME", "/home/someone"),
            ("PATH", "/usr/bin"),
        ]);
        let every_file = |_: &Path| true;
        assert_eq!(
            k6_path_in(&env, &every_file),
            PathBuf::from("/srv/wscbench-cache/bin/k6")
        );
        assert_eq!(
            tool_in_cache(&env, "blaster"),
            PathBuf::from("/srv/wscbench-cache/bin/blaster")
        );
    }

    #[test]
    fn k6_is_wscbench_k6_first_then_the_cache_then_the_path() {
        let only = |file: &'static str| move |path: &Path| path == Path::new(file);
        let home = env(&[("HOME", "/home/someone"), ("PATH", "/opt/k6:/usr/bin")]);
        assert_eq!(
            k6_path_in(&home, &only("/home/someone/.cache/wscbench/bin/k6")),
            PathBuf::from("/home/someone/.cache/wscbench/bin/k6")
        );
        assert_eq!(
            k6_path_in(&home, &only("/usr/bin/k6")),
            PathBuf::from("/usr/bin/k6")
        );
        assert_eq!(k6_path_in(&home, &|_| false), PathBuf::from("k6"));
        let given = env(&[("WSCBENCH_K6", "/tmp/my-k6"), ("HOME", "/home/someone")]);
        assert_eq!(k6_path_in(&given, &|_| true), PathBuf::from("/tmp/my-k6"));
    }
}
