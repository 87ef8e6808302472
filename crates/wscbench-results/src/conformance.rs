//! A server's RFC 6455 conformance, as `wscbench verify --conformance` found it: one file
//! per server and transport, stored with a run's results, so the report can set it beside
//! the performance tables and `compare` can say when it changed between two runs.
//!
//! The cases follow Autobahn|Testsuite's categories 1–7, sent on raw frames through the chat
//! protocol. Each ends with one [`CaseVerdict`]: strict (the MUST and the close code the RFC
//! names), non-strict (the connection failed, but without that code), ignored (a MUST
//! skipped: the connection stays usable), failed (not delivered, or the server stopped
//! answering), or not run (the server had died on an earlier case).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::Transport;

/// Bumped whenever a field changes meaning or is removed.
///
/// - 1: the first schema.
pub const CONFORMANCE_SCHEMA_VERSION: u32 = 1;

/// The directory of a run that holds its servers' conformance files.
pub const CONFORMANCE_DIR: &str = "conformance";

/// Every case run against one server over one transport.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerConformance {
    /// Version of this schema; see [`CONFORMANCE_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The server, e.g. `profile-b/go`, or the URL of a server `verify --url` was given.
    pub server: String,
    /// How the cases reached the server (wss, permessage-deflate).
    pub transport: Transport,
    /// Whether permessage-deflate was in force on the cases' connections (RSV1 then marks
    /// a compressed message, and the reserved-bit cases change accordingly).
    pub deflate_negotiated: bool,
    /// The cases, in the order they ran.
    pub cases: Vec<CaseResult>,
}

/// One case and what the server did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseResult {
    /// Stable name, e.g. `close_code_1004`.
    pub id: String,
    /// Autobahn's category of the case.
    pub category: Category,
    /// The section of RFC 6455 the case checks, e.g. `7.4.1`.
    pub rfc_section: String,
    /// What is sent and what must happen, in words.
    pub rule: String,
    /// How the server kept the rule.
    pub verdict: CaseVerdict,
    /// What the server did, e.g. `closed with 1000 (RFC names 1002)`.
    pub evidence: String,
    /// How long the case took, in milliseconds.
    pub duration_ms: u64,
}

/// Autobahn|Testsuite's categories 1–7, by RFC 6455 section.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Category {
    /// 1: framing (lengths, masking; section 5.2, 5.3).
    Framing,
    /// 2: pings and pongs (section 5.5.2, 5.5.3).
    Pings,
    /// 3: reserved bits (section 5.2).
    ReservedBits,
    /// 4: reserved opcodes (section 5.2).
    Opcodes,
    /// 5: fragmentation (section 5.4).
    Fragmentation,
    /// 6: UTF-8 handling (section 8.1).
    Utf8,
    /// 7: close handling (section 5.5.1, 7.4).
    Close,
}

impl Category {
    /// Every category, in Autobahn's order.
    pub const ALL: [Category; 7] = [
        Category::Framing,
        Category::Pings,
        Category::ReservedBits,
        Category::Opcodes,
        Category::Fragmentation,
        Category::Utf8,
        Category::Close,
    ];

    /// The category's heading, e.g. `reserved bits`.
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Framing => "framing",
            Category::Pings => "pings",
            Category::ReservedBits => "reserved bits",
            Category::Opcodes => "opcodes",
            Category::Fragmentation => "fragmentation",
            Category::Utf8 => "UTF-8",
            Category::Close => "close",
        }
    }
}

/// How a server kept one case's rule, best first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CaseVerdict {
    /// The MUST and the SHOULD: delivered, echoed, or failed with the close code named.
    Strict,
    /// The connection was failed, but without a close frame or with another code.
    NonStrict,
    /// A MUST skipped: the invalid input was accepted and the connection stays usable.
    Ignored,
    /// Not delivered, not answered, or the server stopped answering.
    Failed,
    /// Not run: the server had stopped answering on an earlier case.
    NotRun,
}

impl CaseVerdict {
    /// The verdict as the tables show it, e.g. `non-strict`.
    pub fn as_str(self) -> &'static str {
        match self {
            CaseVerdict::Strict => "strict",
            CaseVerdict::NonStrict => "non-strict",
            CaseVerdict::Ignored => "ignored",
            CaseVerdict::Failed => "failed",
            CaseVerdict::NotRun => "not run",
        }
    }

    /// True for a verdict that fails `verify`: a MUST ignored, a case failed or not run.
    pub fn fails(self) -> bool {
        matches!(
            self,
            CaseVerdict::Ignored | CaseVerdict::Failed | CaseVerdict::NotRun
        )
    }
}

impl ServerConformance {
    /// The cases that fail `verify` (ignored, failed, not run).
    pub fn failing(&self) -> impl Iterator<Item = &CaseResult> {
        self.cases.iter().filter(|c| c.verdict.fails())
    }

    /// True when no case was ignored, failed or left unrun.
    pub fn passed(&self) -> bool {
        !self.cases.is_empty() && self.failing().next().is_none()
    }

    /// The worst verdict among a category's cases, and the cases that have it; `None` when
    /// the category had no case.
    pub fn worst_in(&self, category: Category) -> Option<(CaseVerdict, Vec<&CaseResult>)> {
        let cases: Vec<&CaseResult> = self
            .cases
            .iter()
            .filter(|c| c.category == category)
            .collect();
        let worst = cases.iter().map(|c| c.verdict).max()?;
        Some((
            worst,
            cases.into_iter().filter(|c| c.verdict == worst).collect(),
        ))
    }

    /// Where this file goes, relative to its run directory:
    /// `conformance/profile-b/go/ws.json`.
    pub fn relative_path(&self) -> PathBuf {
        Self::relative_path_of(&self.server, self.transport)
    }

    /// Where the file of `server` (a row's label, e.g. `profile-b/go@no-utf8-check`) over
    /// `transport` goes, relative to its run directory.
    pub fn relative_path_of(server: &str, transport: Transport) -> PathBuf {
        PathBuf::from(CONFORMANCE_DIR)
            .join(server)
            .join(format!("{}.json", transport.as_str()))
    }

    /// The categories in which a MUST was ignored (the connection stayed usable), in
    /// Autobahn's order.
    pub fn ignored_categories(&self) -> Vec<Category> {
        Category::ALL
            .into_iter()
            .filter(|c| {
                self.cases
                    .iter()
                    .any(|case| case.category == *c && case.verdict == CaseVerdict::Ignored)
            })
            .collect()
    }

    /// The file's text: pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a conformance record serializes")
    }

    /// Reads a file written by [`ServerConformance::to_json`], refusing one of a newer schema.
    pub fn from_json(text: &str) -> Result<Self, String> {
        let found: Self = serde_json::from_str(text).map_err(|e| e.to_string())?;
        if found.schema_version > CONFORMANCE_SCHEMA_VERSION {
            return Err(format!(
                "schema version {} is newer than this wscbench's {CONFORMANCE_SCHEMA_VERSION}",
                found.schema_version
            ));
        }
        Ok(found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(id: &str, category: Category, verdict: CaseVerdict) -> CaseResult {
        CaseResult {
            id: id.into(),
            category,
            rfc_section: "5.2".into(),
            rule: "r".into(),
            verdict,
            evidence: "e".into(),
            duration_ms: 1,
        }
    }

    fn conformance(cases: Vec<CaseResult>) -> ServerConformance {
        ServerConformance {
            schema_version: CONFORMANCE_SCHEMA_VERSION,
            server: "profile-b/go".into(),
            transport: Transport::Ws,
            deflate_negotiated: false,
            cases,
        }
    }

    #[test]
    fn a_category_shows_its_worst_verdict_with_the_cases_behind_it() {
        let c = conformance(vec![
            case("rsv1", Category::ReservedBits, CaseVerdict::Strict),
            case("rsv2", Category::ReservedBits, CaseVerdict::Ignored),
            case("rsv3", Category::ReservedBits, CaseVerdict::Ignored),
            case("close_1", Category::Close, CaseVerdict::NonStrict),
        ]);
        let (worst, cases) = c.worst_in(Category::ReservedBits).unwrap();
        assert_eq!(worst, CaseVerdict::Ignored);
        assert_eq!(
            cases.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(),
            ["rsv2", "rsv3"]
        );
        assert!(c.worst_in(Category::Utf8).is_none());
        assert!(!c.passed());
    }

    #[test]
    fn non_strict_passes_but_ignored_failed_and_not_run_do_not() {
        assert!(conformance(vec![case("a", Category::Close, CaseVerdict::NonStrict)]).passed());
        for v in [
            CaseVerdict::Ignored,
            CaseVerdict::Failed,
            CaseVerdict::NotRun,
        ] {
            assert!(!conformance(vec![case("a", Category::Close, v)]).passed());
        }
        assert!(!conformance(vec![]).passed());
    }

    #[test]
    fn a_conformance_file_round_trips_and_lives_under_its_server_and_transport() {
        let c = conformance(vec![case("x", Category::Utf8, CaseVerdict::NotRun)]);
        let json = serde_json::to_string(&c).unwrap();
        assert!(
            json.contains("\"not-run\"") && json.contains("\"utf8\""),
            "{json}"
        );
        assert_eq!(serde_json::from_str::<ServerConformance>(&json).unwrap(), c);
        assert_eq!(
            c.relative_path(),
            PathBuf::from("conformance/profile-b/go/ws.json")
        );
    }

    #[test]
    fn ignored_categories_name_only_where_a_must_was_skipped_and_a_newer_file_is_refused() {
        let c = conformance(vec![
            case("rsv2", Category::ReservedBits, CaseVerdict::NonStrict),
            case("utf8_single_frame", Category::Utf8, CaseVerdict::Ignored),
            case("close_1", Category::Close, CaseVerdict::Failed),
        ]);
        assert_eq!(c.ignored_categories(), [Category::Utf8]);
        assert_eq!(ServerConformance::from_json(&c.to_json()).unwrap(), c);
        let newer = ServerConformance {
            schema_version: CONFORMANCE_SCHEMA_VERSION + 1,
            ..c
        };
        let err = ServerConformance::from_json(&newer.to_json()).unwrap_err();
        assert!(err.contains("newer"), "{err}");
    }
}
