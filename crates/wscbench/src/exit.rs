//! The process's exit codes, one enum for every command, and the error class that picks one.
//!
//! | code | meaning |
//! | ---: | --- |
//! | 0 | everything asked for succeeded |
//! | 1 | some server × scenario failed (its result is still written) or a verify check failed |
//! | 2 | usage: the command line or its arguments are wrong (clap's own code too) |
//! | 3 | set-up: the Docker engine is unreachable, or k6 or a toolchain is missing |
//! | 130 | interrupted by SIGINT (Ctrl-C) |
//! | 143 | terminated by SIGTERM |

use wscbench_engine::catalog::CatalogError;
use wscbench_engine::engine::EngineError;
use wscbench_engine::images::ImageError;
use wscbench_engine::local::LocalError;

/// What the process tells its caller when it ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum ExitCode {
    /// Everything asked for succeeded.
    Ok = 0,
    /// Some server × scenario failed (results still written), or a verify check failed.
    SomeFailed = 1,
    /// The command line or its arguments are wrong.
    Usage = 2,
    /// The engine is unreachable or the set-up is missing (k6, a toolchain).
    Setup = 3,
    /// Interrupted by SIGINT.
    Interrupted = 130,
    /// Terminated by SIGTERM.
    Terminated = 143,
}

impl ExitCode {
    /// Every code, in the order `--help` lists them.
    pub const ALL: [ExitCode; 6] = [
        Self::Ok,
        Self::SomeFailed,
        Self::Usage,
        Self::Setup,
        Self::Interrupted,
        Self::Terminated,
    ];

    /// The number the process exits with.
    pub fn code(self) -> i32 {
        self as i32
    }

    /// The enum for a plain number (a command that still returns `i32`); an unknown number
    /// counts as [`ExitCode::SomeFailed`].
    pub fn from_code(code: i32) -> Self {
        Self::ALL
            .into_iter()
            .find(|c| c.code() == code)
            .unwrap_or(Self::SomeFailed)
    }

    /// 0 when nothing failed, else 1: for commands whose outcome is a count of failures.
    pub fn from_failures(failed: usize) -> Self {
        if failed == 0 {
            Self::Ok
        } else {
            Self::SomeFailed
        }
    }

    /// What the code means, in one line.
    pub fn meaning(self) -> &'static str {
        match self {
            Self::Ok => "everything asked for succeeded",
            Self::SomeFailed => {
                "some server × scenario failed (its result is still written) or a verify check failed"
            }
            Self::Usage => "usage: the command line or its arguments are wrong",
            Self::Setup => {
                "set-up: the Docker engine is unreachable, or k6 or a toolchain is missing (run scripts/setup)"
            }
            Self::Interrupted => "interrupted by SIGINT (Ctrl-C); containers removed",
            Self::Terminated => "terminated by SIGTERM; containers removed",
        }
    }

    /// The code an error ends the process with: [`ExitCode::Setup`] when anything in its chain
    /// says the engine or a tool is missing, [`ExitCode::Usage`] for a [`UsageError`], otherwise
    /// [`ExitCode::SomeFailed`].
    pub fn of_error(err: &anyhow::Error) -> Self {
        for cause in err.chain() {
            if cause.is::<SetupError>() {
                return Self::Setup;
            }
            if cause.is::<UsageError>() {
                return Self::Usage;
            }
            if let Some(e) = cause.downcast_ref::<CatalogError>()
                && matches!(
                    e,
                    CatalogError::NoMatch { .. } | CatalogError::UnknownVariant { .. }
                )
            {
                return Self::Usage;
            }
            if let Some(e) = cause.downcast_ref::<EngineError>()
                && matches!(e, EngineError::Unreachable { .. })
            {
                return Self::Setup;
            }
            if let Some(e) = cause.downcast_ref::<ImageError>()
                && matches!(e, ImageError::NoK6 { .. })
            {
                return Self::Setup;
            }
            if let Some(e) = cause.downcast_ref::<LocalError>()
                && matches!(e, LocalError::ToolMissing { .. })
            {
                return Self::Setup;
            }
        }
        Self::SomeFailed
    }

    /// The section `wscbench --help` ends with.
    pub fn help_section() -> String {
        let mut text = String::from("Exit codes:\n");
        for code in Self::ALL {
            text.push_str(&format!("  {:>3}  {}\n", code.code(), code.meaning()));
        }
        text
    }
}

impl From<ExitCode> for std::process::ExitCode {
    fn from(code: ExitCode) -> Self {
        std::process::ExitCode::from(code as u8)
    }
}

/// Something a run needs is not there: the engine, k6, a toolchain. Ends the process with 3.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct SetupError(pub String);

/// The arguments make no sense together (clap could not tell). Ends the process with 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_carry_their_class_to_the_exit_code() {
        let unreachable = anyhow::Error::new(EngineError::Unreachable {
            endpoint: "unix:///nonexistent.sock".into(),
            reason: "no such file".into(),
        })
        .context("connecting");
        assert_eq!(ExitCode::of_error(&unreachable), ExitCode::Setup);
        let setup = anyhow::Error::new(SetupError("no k6".into())).context("building");
        assert_eq!(ExitCode::of_error(&setup), ExitCode::Setup);
        let usage = anyhow::Error::new(UsageError("say what".into()));
        assert_eq!(ExitCode::of_error(&usage), ExitCode::Usage);
        assert_eq!(
            ExitCode::of_error(&anyhow::anyhow!("a server crashed")),
            ExitCode::SomeFailed
        );
    }

    #[test]
    fn the_codes_are_the_documented_numbers() {
        let codes: Vec<i32> = ExitCode::ALL.iter().map(|c| c.code()).collect();
        assert_eq!(codes, [0, 1, 2, 3, 130, 143]);
        assert!(ExitCode::help_section().contains("  3  set-up"));
    }
}
