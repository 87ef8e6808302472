//! The process's exit codes, all in one place (nextest's `exit_codes`); which error ends
//! with which code is decided in `errors.rs`.
//!
//! | code | meaning |
//! | ---: | --- |
//! | 0 | everything asked for succeeded |
//! | 1 | some server × scenario failed (its result is still written) or a verify check failed |
//! | 2 | usage: the command line or its arguments are wrong (clap's own code too) |
//! | 3 | set-up: the Docker engine is unreachable, or k6 or a toolchain is missing |
//! | 130 | interrupted by SIGINT (Ctrl-C) |
//! | 143 | terminated by SIGTERM |

use wscbench_engine::ErrorClass;

/// What the process tells its caller when it ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum ExitCode {
    /// Everything asked for succeeded.
    Ok = 0,
    /// Some server × scenario failed (results still written), or a verify check failed.
    Failure = 1,
    /// The command line or its arguments are wrong.
    Usage = 2,
    /// The engine is unreachable or the set-up is missing (k6, a toolchain).
    Setup = 3,
    /// Interrupted by SIGINT: 128 + 2, as shells report it.
    Interrupted = 130,
    /// Terminated by SIGTERM: 128 + 15.
    Terminated = 143,
}

impl ExitCode {
    /// Every code, in the order `--help` lists them.
    pub const ALL: [ExitCode; 6] = [
        Self::Ok,
        Self::Failure,
        Self::Usage,
        Self::Setup,
        Self::Interrupted,
        Self::Terminated,
    ];

    /// The number the process exits with.
    pub fn code(self) -> i32 {
        self as i32
    }

    /// 0 when nothing failed, else 1: for commands whose outcome is a count of failures.
    pub fn from_failures(failed: usize) -> Self {
        if failed == 0 { Self::Ok } else { Self::Failure }
    }

    /// What the code means, in one line.
    pub fn meaning(self) -> &'static str {
        match self {
            Self::Ok => "everything asked for succeeded",
            Self::Failure => {
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

    /// The section `wscbench --help` ends with.
    pub fn help_section() -> String {
        let mut text = String::from("Exit codes:\n");
        for code in Self::ALL {
            text.push_str(&format!("  {:>3}  {}\n", code.code(), code.meaning()));
        }
        text
    }
}

impl From<ErrorClass> for ExitCode {
    fn from(class: ErrorClass) -> Self {
        match class {
            ErrorClass::Failure => Self::Failure,
            ErrorClass::Usage => Self::Usage,
            ErrorClass::Setup => Self::Setup,
        }
    }
}

impl From<ExitCode> for std::process::ExitCode {
    fn from(code: ExitCode) -> Self {
        std::process::ExitCode::from(code as u8)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_codes_are_the_documented_numbers() {
        let codes: Vec<i32> = ExitCode::ALL.iter().map(|c| c.code()).collect();
        assert_eq!(codes, [0, 1, 2, 3, 130, 143]);
        assert!(ExitCode::help_section().contains("  3  set-up"));
    }
}
