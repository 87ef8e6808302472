//! What kind of fault an error of this crate is, from the caller's side: every error type a
//! command can receive says its own class, in one exhaustive `match` per type, so the binary
//! picks its exit code from the type and never from a guess over an error chain.

/// The kind of fault an error is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorClass {
    /// Something measured or checked failed, or the work could not be finished.
    Failure,
    /// The caller asked for something that cannot be done as asked: a selection that matches
    /// nothing, a flag a scenario does not take.
    Usage,
    /// Something the work needs is missing from this machine: the Docker engine, k6, the
    /// blaster, a toolchain.
    Setup,
}

#[cfg(test)]
mod tests {
    use super::ErrorClass;
    use crate::catalog::CatalogError;
    use crate::catalog::images::{CleanError, Cleaned, ImageError};
    use crate::catalog::local::LocalError;
    use crate::docker::EngineError;

    fn tool_missing() -> LocalError {
        LocalError::ToolMissing {
            id: "profile-b/zig".into(),
            said: "sh: 1: python3: not found".into(),
        }
    }

    fn unreachable() -> EngineError {
        EngineError::Unreachable {
            endpoint: "unix:///nonexistent.sock".into(),
            reason: "no such file".into(),
        }
    }

    #[test]
    fn an_image_build_takes_the_class_of_what_failed_inside_it() {
        assert_eq!(ImageError::Local(tool_missing()).class(), ErrorClass::Setup);
        assert_eq!(ImageError::Engine(unreachable()).class(), ErrorClass::Setup);
        let failed_build = LocalError::BuildFailed {
            id: "profile-b/zig".into(),
            command: "zig build".into(),
            dir: "servers/profile-b/zig".into(),
            status: "exit status: 1".into(),
            output: "error: expected ';'".into(),
        };
        assert_eq!(ImageError::Local(failed_build).class(), ErrorClass::Failure);
    }

    #[test]
    fn a_missing_k6_or_blaster_is_set_up() {
        for missing in [
            ImageError::NoK6 { path: "k6".into() },
            ImageError::NoBlaster {
                path: "blaster".into(),
            },
        ] {
            assert_eq!(missing.class(), ErrorClass::Setup, "{missing}");
        }
    }

    #[test]
    fn a_selection_matching_nothing_is_usage_and_a_broken_manifest_a_failure() {
        let no_match = CatalogError::NoMatch {
            selection: "--server profile-x/go".into(),
            known: "profile-b/go".into(),
        };
        let unknown_variant = CatalogError::UnknownVariant {
            name: "turbo".into(),
            known: "none".into(),
        };
        let mismatch = CatalogError::IdMismatch {
            path: "servers/profile-b/go/server.toml".into(),
            id: "profile-b/rust".into(),
            expected: "profile-b/go".into(),
        };
        assert_eq!(no_match.class(), ErrorClass::Usage);
        assert_eq!(unknown_variant.class(), ErrorClass::Usage);
        assert_eq!(mismatch.class(), ErrorClass::Failure);
    }

    #[test]
    fn a_clean_up_that_cannot_reach_the_engine_is_set_up() {
        let stopped = CleanError {
            done: Cleaned::default(),
            source: unreachable(),
        };
        assert_eq!(stopped.class(), ErrorClass::Setup);
    }
}
