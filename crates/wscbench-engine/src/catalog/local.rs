//! Servers as local processes: checking their toolchains, building them from their
//! manifests, starting them on a free loopback port, reading their memory, and stopping them
//! the way Docker would.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::task::JoinHandle;
use wscbench_results::{Language, ServerStats};

use crate::catalog::Server;
use crate::net::http;

/// Why a local server could not be built or run.
#[derive(Debug, thiserror::Error)]
pub enum LocalError {
    /// The build command could not be started.
    #[error("{id}: could not run the build command `{command}`: {source}")]
    BuildSpawn {
        id: String,
        command: String,
        #[source]
        source: std::io::Error,
    },
    /// The build command failed.
    #[error("{id}: build failed ({status}) running `{command}` in {}:\n{output}", dir.display())]
    BuildFailed {
        id: String,
        command: String,
        dir: PathBuf,
        status: String,
        output: String,
    },
    /// The build command needs a program that is not installed (the shell's exit 127).
    #[error("{id}: the build needs a tool that is not installed ({said}); run scripts/setup")]
    ToolMissing { id: String, said: String },
    /// The server's language toolchain does not answer.
    #[error(
        "{id} is built with {toolchain}, which is not installed here (`{command}`: {said}); {remedy}"
    )]
    ToolchainMissing {
        id: String,
        toolchain: &'static str,
        command: String,
        said: String,
        remedy: &'static str,
    },
    /// The build succeeded but left no binary where the manifest says.
    #[error("{id}: the build left no binary at {}", path.display())]
    NoBinary { id: String, path: PathBuf },
    /// The binary could not be started.
    #[error("starting {}: {source}", binary.display())]
    Spawn {
        binary: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The server never answered `/health`.
    #[error("the server on port {port} did not answer /health within {timeout:?}{}", exited.as_ref().map(|s| format!(" (it exited: {s})")).unwrap_or_default())]
    NotHealthy {
        port: u16,
        timeout: Duration,
        exited: Option<String>,
    },
    /// No free port could be found.
    #[error("no free loopback port: {0}")]
    NoPort(#[source] std::io::Error),
    /// A runtime server's runtime does not answer.
    #[error(transparent)]
    Runtime(#[from] crate::catalog::runtime::RuntimeError),
}

impl LocalError {
    /// A missing toolchain is set-up; a build or a server that fails is a failure.
    pub fn class(&self) -> crate::ErrorClass {
        use crate::ErrorClass::*;
        match self {
            Self::ToolMissing { .. } | Self::ToolchainMissing { .. } => Setup,
            Self::Runtime(e) => e.class(),
            Self::BuildSpawn { .. }
            | Self::BuildFailed { .. }
            | Self::NoBinary { .. }
            | Self::Spawn { .. }
            | Self::NotHealthy { .. }
            | Self::NoPort(_) => Failure,
        }
    }
}

/// A language's build toolchain: a command that succeeds only when it is installed, and how
/// to install it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Toolchain {
    /// Its name, e.g. `cargo`.
    pub name: &'static str,
    /// The `language` of the manifests it builds.
    pub language: Language,
    /// The program and arguments that print its version.
    pub version_command: &'static [&'static str],
    /// How to install it.
    pub remedy: &'static str,
}

/// The toolchain of each language the servers are written in.
pub const TOOLCHAINS: [Toolchain; 3] = [
    Toolchain {
        name: "go",
        language: Language::Go,
        version_command: &["go", "version"],
        remedy: "install Go 1.26",
    },
    Toolchain {
        name: "cargo",
        language: Language::Rust,
        version_command: &["cargo", "--version"],
        remedy: "install Rust with rustup",
    },
    Toolchain {
        name: "zig",
        language: Language::Zig,
        version_command: &["python3", "-m", "ziglang", "version"],
        remedy: "run scripts/setup (pip install ziglang==0.17.1)",
    },
];

impl Toolchain {
    /// The toolchain that builds servers in `language`, if one is known.
    pub fn of(language: &str) -> Option<&'static Toolchain> {
        TOOLCHAINS.iter().find(|t| t.language.as_str() == language)
    }

    /// The first line its version command prints, or why it did not answer.
    pub async fn version(&self) -> Result<String, String> {
        let [program, args @ ..] = self.version_command else {
            return Err("no version command".into());
        };
        let output = Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .await
            .map_err(|e| e.to_string())?;
        let first_line = |bytes: &[u8]| {
            String::from_utf8_lossy(bytes)
                .lines()
                .next()
                .unwrap_or_default()
                .trim()
                .to_string()
        };
        if output.status.success() {
            Ok(first_line(&output.stdout))
        } else {
            let said = first_line(&output.stderr);
            Err(if said.is_empty() {
                output.status.to_string()
            } else {
                said
            })
        }
    }

    /// Fails with [`LocalError::ToolchainMissing`] for `server` unless it answers.
    async fn check_for(&self, server: &Server) -> Result<(), LocalError> {
        self.version()
            .await
            .map(drop)
            .map_err(|said| LocalError::ToolchainMissing {
                id: server.id.clone(),
                toolchain: self.name,
                command: self.version_command.join(" "),
                said,
                remedy: self.remedy,
            })
    }
}

/// Checks that the toolchain of every server answers, each toolchain once, and the runtime of
/// every runtime server, before anything is built or any engine is asked: a missing one is
/// named with its remedy at once.
pub async fn check_toolchains(servers: &[Server]) -> Result<(), LocalError> {
    let mut checked = Vec::new();
    for server in servers {
        if let Some(spec) = &server.runtime {
            crate::catalog::runtime::probe(&server.id, &server.dir, spec).await?;
        }
        if let Some(toolchain) = Toolchain::of(&server.language)
            && !checked.contains(&toolchain.name)
        {
            toolchain.check_for(server).await?;
            checked.push(toolchain.name);
        }
    }
    Ok(())
}

/// A finished build.
#[derive(Debug, Clone)]
pub struct Built {
    /// The binary.
    pub binary: PathBuf,
    /// Its size in bytes.
    pub size_bytes: u64,
    /// How long the build command took.
    pub took: Duration,
}

/// Runs the manifest's build command (`sh -c`, in the server's directory), once its
/// toolchain answers.
pub async fn build(server: &Server) -> Result<Built, LocalError> {
    check_toolchains(std::slice::from_ref(server)).await?;
    let started = Instant::now();
    let output = Command::new("sh")
        .arg("-c")
        .arg(&server.build)
        .current_dir(&server.dir)
        // The manifest's `binary` is relative to the server's directory: a target
        // directory set for the workspace would build it elsewhere.
        .env_remove("CARGO_TARGET_DIR")
        .stdin(Stdio::null())
        .output()
        .await
        .map_err(|source| LocalError::BuildSpawn {
            id: server.id.clone(),
            command: server.build.clone(),
            source,
        })?;
    if output.status.code() == Some(127) {
        let said = String::from_utf8_lossy(&output.stderr)
            .lines()
            .last()
            .unwrap_or("command not found")
            .trim()
            .to_string();
        return Err(LocalError::ToolMissing {
            id: server.id.clone(),
            said,
        });
    }
    if !output.status.success() {
        let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
        text.push_str(&String::from_utf8_lossy(&output.stderr));
        let tail: Vec<&str> = text.lines().rev().take(30).collect();
        return Err(LocalError::BuildFailed {
            id: server.id.clone(),
            command: server.build.clone(),
            dir: server.dir.clone(),
            status: output.status.to_string(),
            output: tail.into_iter().rev().collect::<Vec<_>>().join("\n"),
        });
    }
    let binary = server.binary_path();
    let size_bytes = std::fs::metadata(&binary)
        .map_err(|_| LocalError::NoBinary {
            id: server.id.clone(),
            path: binary.clone(),
        })?
        .len();
    Ok(Built {
        binary,
        size_bytes,
        took: started.elapsed(),
    })
}

/// A free TCP port on 127.0.0.1 (free when asked; the caller binds it soon after).
pub fn free_port() -> Result<u16, LocalError> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(LocalError::NoPort)?;
    Ok(listener.local_addr().map_err(LocalError::NoPort)?.port())
}

/// A server running as a child process on 127.0.0.1. Killed if dropped.
pub struct LocalServer {
    child: Child,
    /// The port it listens on.
    pub port: u16,
    stdout: JoinHandle<Vec<String>>,
    /// The client TLS configuration when it serves wss (its /health is https then).
    tls: Option<std::sync::Arc<rustls::ClientConfig>>,
}

/// How a local server ended when asked to stop.
#[derive(Debug, Clone)]
pub struct Stopped {
    /// Time from SIGTERM to exit, if it exited within the grace period.
    pub exited_after: Option<Duration>,
    /// Exit code, if it exited normally.
    pub exit_code: Option<i32>,
    /// The last line of its standard output.
    pub last_line: Option<String>,
}

impl Stopped {
    /// The final stats line, parsed, if it was one.
    pub fn final_stats(&self) -> Option<ServerStats> {
        serde_json::from_str(self.last_line.as_deref()?).ok()
    }
}

impl LocalServer {
    /// Starts `binary --host 127.0.0.1 --port PORT`; its stderr is passed through to ours when `show_logs`.
    pub fn spawn(binary: &Path, port: u16, show_logs: bool) -> Result<Self, LocalError> {
        Self::spawn_with(binary, port, &[], show_logs)
    }

    /// [`LocalServer::spawn`] with `extra` arguments after `--port` (a transport's:
    /// `--tls-cert F --tls-key F`, `--deflate`).
    pub fn spawn_with(
        binary: &Path,
        port: u16,
        extra: &[String],
        show_logs: bool,
    ) -> Result<Self, LocalError> {
        let mut child = Command::new(binary)
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(if show_logs {
                Stdio::inherit()
            } else {
                Stdio::null()
            })
            .kill_on_drop(true)
            .spawn()
            .map_err(|source| LocalError::Spawn {
                binary: binary.to_owned(),
                source,
            })?;
        let out = child.stdout.take().expect("stdout is piped");
        let stdout = tokio::spawn(async move {
            let mut lines = BufReader::new(out).lines();
            let mut kept = Vec::new();
            while let Ok(Some(line)) = lines.next_line().await {
                kept.push(line);
                if kept.len() > 100 {
                    kept.remove(0);
                }
            }
            kept
        });
        Ok(Self {
            child,
            port,
            stdout,
            tls: None,
        })
    }

    /// The TLS client configuration of a server that serves wss.
    pub fn tls(&self) -> Option<&std::sync::Arc<rustls::ClientConfig>> {
        self.tls.as_ref()
    }

    /// Says the server serves wss, trusting `tls`: its /health is asked over https.
    pub fn with_tls(mut self, tls: std::sync::Arc<rustls::ClientConfig>) -> Self {
        self.tls = Some(tls);
        self
    }

    /// Waits until `/health` answers 200.
    pub async fn wait_healthy(&mut self, timeout: Duration) -> Result<(), LocalError> {
        let port = self.port;
        let child = &mut self.child;
        let exited = async || {
            child
                .try_wait()
                .ok()
                .flatten()
                .map(|status| status.to_string())
        };
        let addr = format!("127.0.0.1:{port}");
        http::wait_healthy_over(&addr, self.tls.as_ref(), timeout, exited)
            .await
            .map_err(|not| LocalError::NotHealthy {
                port,
                timeout,
                exited: match not {
                    http::NotHealthy::Gone(status) => Some(status),
                    http::NotHealthy::TimedOut => None,
                },
            })
    }

    /// The process id.
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// Resident memory (VmRSS) of the process, in bytes.
    pub fn rss_bytes(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid()?)).ok()?;
        let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
        let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kib * 1024)
    }

    /// Sends SIGTERM and waits up to `grace` for the exit; kills it after that.
    pub async fn stop(mut self, grace: Duration) -> Stopped {
        let started = Instant::now();
        if let Some(pid) = self
            .child
            .id()
            .and_then(|pid| rustix::process::Pid::from_raw(pid as i32))
        {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
        }
        let (exited_after, exit_code) = match tokio::time::timeout(grace, self.child.wait()).await {
            Ok(Ok(status)) => (Some(started.elapsed()), status.code()),
            _ => {
                let _ = self.child.kill().await;
                (None, None)
            }
        };
        let lines = tokio::time::timeout(Duration::from_secs(1), &mut self.stdout)
            .await
            .ok()
            .and_then(Result::ok);
        let last_line =
            lines.and_then(|l| l.into_iter().rev().find(|line| !line.trim().is_empty()));
        Stopped {
            exited_after,
            exit_code,
            last_line,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(build: &str) -> (tempfile::TempDir, Server) {
        let dir = tempfile::tempdir().unwrap();
        let server = Server {
            id: "profile-x/test".into(),
            tag: "x".into(),
            // No known toolchain: the build command alone decides.
            language: "sh".into(),
            profile: "x".into(),
            framework: "x".into(),
            build: build.into(),
            binary: "bin/server".into(),
            test: "true".into(),
            exclude: vec![],
            shared: vec![],
            variants: Default::default(),
            runtime: None,
            transports: vec![wscbench_results::Transport::Ws],
            not_offered: Default::default(),
            dir: dir.path().to_owned(),
        };
        (dir, server)
    }

    #[tokio::test]
    async fn a_toolchain_that_does_not_answer_is_named_with_its_remedy_and_is_set_up() {
        let (_dir, server) = manifest("true");
        for (command, said) in [
            (
                &["no-such-toolchain-xyz", "version"][..],
                "No such file or directory",
            ),
            (
                &["sh", "-c", "echo 'No module named ziglang' >&2; exit 1"][..],
                "No module named ziglang",
            ),
        ] {
            let zig = Toolchain {
                name: "zig",
                language: Language::Zig,
                version_command: command,
                remedy: "run scripts/setup",
            };
            let err = zig.check_for(&server).await.unwrap_err();
            assert_eq!(err.class(), crate::ErrorClass::Setup);
            let text = err.to_string();
            assert!(
                text.starts_with("profile-x/test is built with zig, which is not installed here")
                    && text.contains(said)
                    && text.ends_with("; run scripts/setup"),
                "{text}"
            );
        }
    }

    #[test]
    fn every_server_has_a_toolchain_or_a_runtime_to_check() {
        let servers_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../servers");
        for server in crate::catalog::discover(&servers_dir).unwrap() {
            assert!(
                Toolchain::of(&server.language).is_some() || server.runtime.is_some(),
                "{}",
                server.id
            );
        }
    }

    #[tokio::test]
    async fn a_missing_toolchain_is_named_with_the_remedy() {
        let (_dir, server) = manifest("no-such-compiler-xyz build");
        let err = build(&server).await.unwrap_err().to_string();
        assert!(
            err.contains("not installed")
                && err.contains("no-such-compiler-xyz")
                && err.contains("scripts/setup"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn a_failing_build_shows_its_output_and_a_missing_binary_is_named() {
        let (_dir, server) = manifest("echo 'syntax error at line 3' >&2; exit 1");
        let err = build(&server).await.unwrap_err().to_string();
        assert!(
            err.contains("build failed") && err.contains("syntax error at line 3"),
            "{err}"
        );
        let (_dir, server) = manifest("true");
        assert!(matches!(
            build(&server).await,
            Err(LocalError::NoBinary { .. })
        ));
    }
}
