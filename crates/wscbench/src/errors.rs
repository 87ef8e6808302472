//! Every error a command ends with, and the one `match` that gives each its exit code
//! (nextest's `ExpectedError`). A library error carries its class itself (usage, set-up or
//! failure, see `wscbench_engine::ErrorClass`), so a new variant of one cannot silently exit
//! with the wrong code, and nothing here walks an error chain to guess.

use std::error::Error;

use wscbench_engine::catalog::CatalogError;
use wscbench_engine::catalog::images::{CleanError, ImageError};
use wscbench_engine::catalog::local::LocalError;
use wscbench_engine::docker::EngineError;
use wscbench_engine::load::idle_memory::MemoryError;
use wscbench_engine::load::loadgen_capacity::CapacityError;
use wscbench_engine::load::native::NativeError;
use wscbench_engine::net::tls::TlsError;
use wscbench_engine::runner::WriteError;
use wscbench_report::LoadError;

use crate::exit::ExitCode;

/// The arguments make no sense (together, or with what the project holds) in a way clap
/// could not tell. Ends the process with 2.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct UsageError {
    /// One line naming what to change.
    pub message: String,
}

impl UsageError {
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }
}

/// Why a command stopped. `doing` says what it was doing, `source` what went wrong (boxed:
/// some library errors are large, and this one travels up every command's result).
#[derive(Debug, thiserror::Error)]
pub enum ExpectedError {
    /// The command line or its arguments are wrong.
    #[error(transparent)]
    Usage(#[from] UsageError),
    /// Reading the manifests or selecting servers.
    #[error("{doing}")]
    Catalog {
        doing: String,
        #[source]
        source: Box<CatalogError>,
    },
    /// A call to a Docker engine.
    #[error("{doing}")]
    Engine {
        doing: String,
        #[source]
        source: Box<EngineError>,
    },
    /// Building an image (of a server, of k6, of the blaster).
    #[error("{doing}")]
    Image {
        doing: String,
        #[source]
        source: Box<ImageError>,
    },
    /// Building, starting or stopping a server as a local process.
    #[error("{doing}")]
    Local {
        doing: String,
        #[source]
        source: Box<LocalError>,
    },
    /// Removing what wscbench made.
    #[error("{doing}")]
    Clean {
        doing: String,
        #[source]
        source: Box<CleanError>,
    },
    /// Measuring idle memory.
    #[error("{doing}")]
    Memory {
        doing: String,
        #[source]
        source: Box<MemoryError>,
    },
    /// Measuring the load generator's own limit.
    #[error("{doing}")]
    LoadgenCapacity {
        doing: String,
        #[source]
        source: Box<CapacityError>,
    },
    /// Reading or merging the native load reports.
    #[error("{doing}")]
    Native {
        doing: String,
        #[source]
        source: Box<NativeError>,
    },
    /// Writing a result, the run log or a run's report.
    #[error("{doing}")]
    Write {
        doing: String,
        #[source]
        source: Box<WriteError>,
    },
    /// Reading stored results.
    #[error("{doing}")]
    Results {
        doing: String,
        #[source]
        source: Box<LoadError>,
    },
    /// The run's TLS certificate: made badly, or given files that cannot serve (expired,
    /// not for 127.0.0.1, or a key of another certificate).
    #[error("{doing}")]
    Tls {
        doing: String,
        #[source]
        source: Box<TlsError>,
    },
    /// Any other file, directory or system call.
    #[error("{doing}")]
    Io {
        doing: String,
        #[source]
        source: Box<std::io::Error>,
    },
    /// Nothing answers at the URL of `run --url`.
    #[error("nothing answers at {url} ({reason}); start the server, or check its host and port")]
    Unreachable { url: String, reason: String },
    /// The server of `run --url` failed verify: nothing was benchmarked.
    #[error(
        "{url} failed verify ({}): nothing was benchmarked; `wscbench verify --url {url}` shows every check",
        failed.join("; ")
    )]
    Unverified { url: String, failed: Vec<String> },
    /// The command found nothing to do what was asked with (no library error says why).
    #[error("{message}")]
    Failed { message: String },
}

impl ExpectedError {
    /// The code the process ends with: for every library error, the class it gives itself.
    pub fn process_exit_code(&self) -> ExitCode {
        match self {
            Self::Usage(_) => ExitCode::Usage,
            Self::Catalog { source, .. } => source.class().into(),
            Self::Engine { source, .. } => source.class().into(),
            Self::Image { source, .. } => source.class().into(),
            Self::Local { source, .. } => source.class().into(),
            Self::Clean { source, .. } => source.class().into(),
            Self::Memory { source, .. } => source.class().into(),
            Self::LoadgenCapacity { source, .. } => source.class().into(),
            Self::Native { source, .. } => source.class().into(),
            Self::Write { source, .. } => source.class().into(),
            Self::Tls { source, .. } => source.class().into(),
            // Results that cannot be read and a file that cannot be written fail the command.
            Self::Results { .. } | Self::Io { .. } | Self::Failed { .. } => ExitCode::Failure,
            // A server that does not answer is missing set-up, like an engine that does not;
            // one that answers and fails a check failed it.
            Self::Unreachable { .. } => ExitCode::Setup,
            Self::Unverified { .. } => ExitCode::Failure,
        }
    }

    /// The error and its causes in one line, each cause once: a cause whose text its
    /// parent already ends with is not repeated.
    pub fn one_line(&self) -> String {
        let mut line = self.to_string();
        let mut cause = self.source();
        while let Some(err) = cause {
            let text = err.to_string();
            if !line.ends_with(&text) {
                line.push_str(": ");
                line.push_str(&text);
            }
            cause = err.source();
        }
        line
    }
}

/// Says what a command was doing when a library call failed: the error becomes the one
/// [`ExpectedError`] variant its type belongs to (anyhow's `with_context`, typed).
pub trait Doing<T> {
    fn doing<S: Into<String>>(self, what: impl FnOnce() -> S) -> Result<T, ExpectedError>;
}

/// A library error type with its own [`ExpectedError`] variant.
pub trait Expected {
    fn while_doing(self, doing: String) -> ExpectedError;
}

impl<T, E: Expected> Doing<T> for Result<T, E> {
    fn doing<S: Into<String>>(self, what: impl FnOnce() -> S) -> Result<T, ExpectedError> {
        self.map_err(|err| err.while_doing(what().into()))
    }
}

macro_rules! expected {
    ($($source:ty => $variant:ident),* $(,)?) => {$(
        impl Expected for $source {
            fn while_doing(self, doing: String) -> ExpectedError {
                ExpectedError::$variant { doing, source: Box::new(self) }
            }
        }
    )*};
}

expected! {
    CatalogError => Catalog,
    EngineError => Engine,
    ImageError => Image,
    LocalError => Local,
    CleanError => Clean,
    MemoryError => Memory,
    CapacityError => LoadgenCapacity,
    NativeError => Native,
    WriteError => Write,
    TlsError => Tls,
    LoadError => Results,
    std::io::Error => Io,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image_of_zig(source: ImageError) -> ExpectedError {
        source.while_doing("building the image of profile-b/zig".into())
    }

    #[test]
    fn a_missing_toolchain_inside_an_image_build_exits_3() {
        let err = image_of_zig(ImageError::Local(LocalError::ToolMissing {
            id: "profile-b/zig".into(),
            said: "sh: 1: python3: not found".into(),
        }));
        assert_eq!(err.process_exit_code(), ExitCode::Setup);
        assert_eq!(
            err.one_line(),
            "building the image of profile-b/zig: profile-b/zig: the build needs a tool that is not installed (sh: 1: python3: not found); run scripts/setup"
        );
    }

    #[test]
    fn a_missing_blaster_exits_3() {
        let err = image_of_zig(ImageError::NoBlaster {
            path: "/cache/bin/blaster".into(),
        });
        assert_eq!(err.process_exit_code(), ExitCode::Setup);
    }

    #[test]
    fn an_unreachable_engine_exits_3_and_a_failed_docker_call_1() {
        let unreachable = EngineError::Unreachable {
            endpoint: "unix:///nonexistent.sock".into(),
            reason: "no such file".into(),
        };
        assert_eq!(
            unreachable
                .while_doing("connecting".into())
                .process_exit_code(),
            ExitCode::Setup
        );
        let failed = EngineError::Failed {
            action: "starting".into(),
            message: "out of disk".into(),
        };
        assert_eq!(
            failed
                .while_doing("starting the server".into())
                .process_exit_code(),
            ExitCode::Failure
        );
    }

    #[test]
    fn a_url_that_does_not_answer_exits_3_and_one_that_fails_verify_1() {
        let unreachable = ExpectedError::Unreachable {
            url: "ws://127.0.0.1:9/ws".into(),
            reason: "connection refused".into(),
        };
        assert_eq!(unreachable.process_exit_code(), ExitCode::Setup);
        let unverified = ExpectedError::Unverified {
            url: "ws://127.0.0.1:9/ws".into(),
            failed: vec!["join_ack: no ack within 2 s".into()],
        };
        assert_eq!(unverified.process_exit_code(), ExitCode::Failure);
        assert!(unverified.one_line().contains("join_ack: no ack"));
    }

    #[test]
    fn usage_exits_2_and_an_io_error_1() {
        let usage = ExpectedError::from(UsageError::new("say what"));
        assert_eq!(usage.process_exit_code(), ExitCode::Usage);
        assert_eq!(usage.one_line(), "say what");
        let io = std::io::Error::other("disk full").while_doing("writing report.html".into());
        assert_eq!(io.process_exit_code(), ExitCode::Failure);
        assert_eq!(io.one_line(), "writing report.html: disk full");
    }
}
