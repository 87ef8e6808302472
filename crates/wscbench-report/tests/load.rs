//! Loading result files: which result wins, choosing a run, and what is skipped.

mod common;

use std::fs;

use common::{RUN, result, write};
use wscbench_report::{LoadError, load_results};
use wscbench_results::SCHEMA_VERSION;

const OLDER: &str = "20261120-090000";
const NEWER: &str = "20261122-180000";

fn ids(loaded: &wscbench_report::Loaded) -> Vec<(String, String, String)> {
    loaded
        .results
        .iter()
        .map(|r| {
            (
                r.server.id.clone(),
                r.scenario.to_string(),
                r.run_id.clone(),
            )
        })
        .collect()
}

#[test]
fn keeps_the_latest_result_of_each_server_and_scenario() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        &[
            result(OLDER, "profile-b/go", "steady"),
            result(OLDER, "profile-b/rust", "steady"),
            result(NEWER, "profile-b/go", "steady"),
            result(OLDER, "profile-b/go", "burst"),
        ],
    );

    let loaded = load_results(dir.path(), None).unwrap();

    assert_eq!(
        ids(&loaded),
        [
            ("profile-b/go".into(), "steady".into(), NEWER.into()),
            ("profile-b/go".into(), "burst".into(), OLDER.into()),
            ("profile-b/rust".into(), "steady".into(), OLDER.into()),
        ]
    );
    assert_eq!(loaded.superseded, 1);
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
}

#[test]
fn equal_start_times_are_settled_by_the_later_run_id() {
    let dir = tempfile::tempdir().unwrap();
    let mut first = result(OLDER, "profile-a/go", "steady");
    let mut second = result(NEWER, "profile-a/go", "steady");
    first.started_at = "2026-11-21T10:00:00Z".into();
    second.started_at = first.started_at.clone();
    write(dir.path(), &[second, first]);

    let loaded = load_results(dir.path(), None).unwrap();

    assert_eq!(loaded.results.len(), 1);
    assert_eq!(loaded.results[0].run_id, NEWER);
}

#[test]
fn choosing_a_run_keeps_only_that_runs_results() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        &[
            result(OLDER, "profile-b/go", "steady"),
            result(OLDER, "profile-b/zig", "steady"),
            result(NEWER, "profile-b/go", "steady"),
        ],
    );

    let loaded = load_results(dir.path(), Some(OLDER)).unwrap();

    assert_eq!(
        ids(&loaded),
        [
            ("profile-b/go".into(), "steady".into(), OLDER.into()),
            ("profile-b/zig".into(), "steady".into(), OLDER.into()),
        ]
    );
}

#[test]
fn choosing_a_run_by_id_works_when_its_directory_is_named_otherwise() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        &[
            result(OLDER, "profile-b/go", "steady"),
            result(NEWER, "profile-b/go", "steady"),
        ],
    );
    fs::rename(dir.path().join(OLDER), dir.path().join("renamed")).unwrap();

    let loaded = load_results(dir.path(), Some(OLDER)).unwrap();

    assert_eq!(
        ids(&loaded),
        [("profile-b/go".into(), "steady".into(), OLDER.into())]
    );
}

#[test]
fn an_unknown_run_is_an_error_listing_the_runs_found() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        &[
            result(OLDER, "profile-b/go", "steady"),
            result(NEWER, "profile-b/go", "steady"),
        ],
    );

    let error = load_results(dir.path(), Some("20990101-000000")).unwrap_err();

    assert!(matches!(&error, LoadError::RunNotFound { run, .. } if run == "20990101-000000"));
    let message = error.to_string();
    assert!(
        message.contains(&format!("runs found: {OLDER}, {NEWER}")),
        "{message}"
    );
}

#[test]
fn pointing_at_one_run_directory_loads_that_run() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        &[
            result(OLDER, "profile-a/rust", "churn"),
            result(NEWER, "profile-a/rust", "burst"),
        ],
    );

    let loaded = load_results(&dir.path().join(OLDER), None).unwrap();

    assert_eq!(
        ids(&loaded),
        [("profile-a/rust".into(), "churn".into(), OLDER.into())]
    );
}

#[test]
fn a_malformed_file_is_skipped_with_a_warning_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), &[result(RUN, "profile-b/go", "steady")]);
    let broken = dir.path().join(RUN).join("profile-b/rust/steady.json");
    fs::create_dir_all(broken.parent().unwrap()).unwrap();
    fs::write(&broken, "{ \"schema_version\": 1, \"server\": ").unwrap();

    let loaded = load_results(dir.path(), None).unwrap();

    assert_eq!(loaded.results.len(), 1);
    assert_eq!(loaded.warnings.len(), 1);
    let warning = &loaded.warnings[0];
    assert!(warning.contains(&broken.display().to_string()), "{warning}");
    assert!(warning.contains("not valid JSON"), "{warning}");
}

#[test]
fn a_result_missing_a_field_is_skipped_as_malformed() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        &[
            result(RUN, "profile-b/go", "steady"),
            result(RUN, "profile-b/zig", "steady"),
        ],
    );
    let zig = dir.path().join(RUN).join("profile-b/zig/steady.json");
    let text = fs::read_to_string(&zig)
        .unwrap()
        .replace("\"duration_ms\"", "\"duration\"");
    fs::write(&zig, text).unwrap();

    let loaded = load_results(dir.path(), None).unwrap();

    assert_eq!(loaded.results.len(), 1);
    assert!(
        loaded.warnings[0].contains("malformed result: missing field `duration_ms`"),
        "{:?}",
        loaded.warnings
    );
}

#[test]
fn a_newer_schema_is_skipped_with_a_warning_giving_its_version() {
    let dir = tempfile::tempdir().unwrap();
    let mut future = result(RUN, "profile-a/go", "steady");
    future.schema_version = SCHEMA_VERSION + 1;
    write(dir.path(), &[future, result(RUN, "profile-a/go", "burst")]);

    let loaded = load_results(dir.path(), None).unwrap();

    assert_eq!(loaded.results.len(), 1);
    assert_eq!(loaded.results[0].scenario.as_str(), "burst");
    let warning = &loaded.warnings[0];
    assert!(warning.contains("steady.json"), "{warning}");
    assert!(
        warning.contains(&format!("schema_version {} is newer", SCHEMA_VERSION + 1)),
        "{warning}"
    );
}

#[test]
fn run_metadata_and_raw_k6_output_are_skipped_silently_but_a_stray_json_file_is_named() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), &[result(RUN, "profile-a/go", "steady")]);
    fs::write(
        dir.path().join(RUN).join("run.json"),
        r#"{"run_id":"x","servers":[]}"#,
    )
    .unwrap();
    let raw = dir.path().join(RUN).join("raw/profile-a/go/steady");
    fs::create_dir_all(&raw).unwrap();
    fs::write(raw.join("summary.json"), r#"{"metrics":{}}"#).unwrap();
    fs::write(
        dir.path().join(RUN).join("notes.json"),
        r#"{"note":"by hand"}"#,
    )
    .unwrap();
    fs::write(dir.path().join(RUN).join("k6.log"), "not json at all").unwrap();
    fs::write(dir.path().join("README.md"), "# results").unwrap();

    let loaded = load_results(dir.path(), None).unwrap();

    assert_eq!(loaded.results.len(), 1);
    assert_eq!(loaded.warnings.len(), 1, "{:?}", loaded.warnings);
    assert!(
        loaded.warnings[0].contains("notes.json"),
        "{:?}",
        loaded.warnings
    );
    assert!(
        loaded.warnings[0].contains("not a wscbench result"),
        "{:?}",
        loaded.warnings
    );
}

#[test]
fn an_empty_directory_is_a_no_results_error() {
    let dir = tempfile::tempdir().unwrap();

    let error = load_results(dir.path(), None).unwrap_err();

    assert!(matches!(&error, LoadError::NoResults { skipped, .. } if skipped.is_empty()));
    assert!(
        error.to_string().starts_with("no wscbench results in"),
        "{error}"
    );
}

#[test]
fn a_directory_of_unreadable_files_is_a_no_results_error_that_keeps_the_reasons() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("steady.json"), "[]").unwrap();

    let error = load_results(dir.path(), None).unwrap_err();

    match &error {
        LoadError::NoResults { skipped, .. } => assert_eq!(skipped.len(), 1),
        other => panic!("expected NoResults, got {other:?}"),
    }
    assert!(error.to_string().ends_with("(1 file skipped)"), "{error}");
}

#[test]
fn a_missing_directory_is_an_unreadable_error_with_its_cause() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("results");

    let error = load_results(&missing, None).unwrap_err();

    match &error {
        LoadError::Unreadable { dir, source } => {
            assert_eq!(dir, &missing);
            assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
        }
        other => panic!("expected Unreadable, got {other:?}"),
    }
    assert!(std::error::Error::source(&error).is_some());
}

#[test]
fn the_summary_line_names_the_run_and_counts_what_was_skipped() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        &[
            result(RUN, "profile-a/go", "steady"),
            result(RUN, "profile-b/go", "steady"),
        ],
    );
    fs::write(dir.path().join(RUN).join("broken.json"), "{").unwrap();

    let loaded = load_results(dir.path(), None).unwrap();

    assert_eq!(
        loaded.summary_line(),
        format!("2 results from run {RUN} (1 skipped)")
    );
}

#[test]
fn a_newer_run_of_another_mode_does_not_supersede_an_older_one() {
    let dir = tempfile::tempdir().unwrap();
    let mut smoke = result(NEWER, "profile-b/go", "steady");
    smoke.mode = wscbench_results::Mode::Smoke;
    write(
        dir.path(),
        &[
            result(OLDER, "profile-b/go", "steady"),
            result(OLDER, "profile-b/zig", "steady"),
            smoke,
        ],
    );

    let loaded = load_results(dir.path(), None).unwrap();

    assert_eq!(
        loaded.summary_line(),
        format!(
            "3 results from runs {OLDER} to {NEWER}, the latest run of each point \
             (mixed modes: quick, smoke)"
        )
    );
}

#[test]
fn repetitions_of_one_point_in_one_run_are_kept_together_not_superseded() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        &common::repetitions(OLDER, "profile-b/go", "steady", &[1.0, 2.0]),
    );
    write(
        dir.path(),
        &common::repetitions(NEWER, "profile-b/go", "steady", &[3.0, 4.0, 5.0]),
    );

    let loaded = load_results(dir.path(), None).unwrap();

    let reps: Vec<(String, u32)> = loaded
        .results
        .iter()
        .map(|r| (r.run_id.clone(), r.repetition.index))
        .collect();
    assert_eq!(
        reps,
        [(NEWER.into(), 1), (NEWER.into(), 2), (NEWER.into(), 3)]
    );
    assert_eq!(loaded.superseded, 2);
}

/// `profile-b/go`'s result as if measured by `run --url` under the name `local-go`, with
/// nothing watching its CPU and memory.
fn external(run_id: &str, scenario: &str) -> wscbench_results::RunResult {
    let mut r = result(run_id, "profile-b/go", scenario);
    r.server.id = "external/local-go".into();
    r.server.profile = "external".into();
    r.server.language = String::new();
    r.external_url = Some("ws://127.0.0.1:9000/ws".into());
    r.server_usage_source = wscbench_results::UsageSource::Absent;
    r.derived.server = None;
    // Not built by wscbench: no sizes.
    r.server.binary_size_bytes = None;
    r.server.image_size_bytes = None;
    r
}

#[test]
fn external_servers_never_share_a_table_with_managed_ones() {
    let managed = [
        result(OLDER, "profile-b/go", "steady"),
        result(OLDER, "profile-b/rust", "steady"),
    ];
    let all: Vec<_> = managed
        .iter()
        .cloned()
        .chain([external(NEWER, "steady")])
        .collect();

    // The latest run is the external one: it stands alone.
    let chosen = wscbench_report::select(&all, &Default::default());
    let ids: Vec<&str> = chosen
        .results
        .iter()
        .map(|r| r.server.id.as_str())
        .collect();
    assert_eq!(ids, ["external/local-go"]);
    assert!(
        chosen
            .left_out
            .as_deref()
            .unwrap()
            .contains("managed servers"),
        "{:?}",
        chosen.left_out
    );
    // Choosing the managed run leaves the external one out, and says so.
    let choice = wscbench_report::Choice {
        run: Some(OLDER.into()),
        ..Default::default()
    };
    let chosen = wscbench_report::select(&all, &choice);
    assert_eq!(chosen.results.len(), 2);
    assert!(chosen.results.iter().all(|r| r.external_url.is_none()));
}

#[test]
fn an_external_server_has_a_table_of_its_own_named_by_its_name_and_absent_usage_shows_as_absent() {
    let report = wscbench_report::Report::from_selected(&[external(NEWER, "steady")]);
    let text = wscbench_report::Format::Markdown.render(&report);
    assert!(text.contains("External servers (by URL)"), "{text}");
    assert!(text.contains("| local-go"), "{text}");
    assert!(
        text.contains("| Server |"),
        "rows named by server, not language: {text}"
    );
    assert!(!text.contains("| Language |"), "{text}");
    assert!(!text.contains("Profile B"), "{text}");
    let table = report
        .tables
        .iter()
        .find(|t| t.columns.iter().any(|c| c.name == "Peak memory"))
        .expect("a table with the server's memory");
    let at = table
        .columns
        .iter()
        .position(|c| c.name == "Peak memory")
        .unwrap();
    assert_eq!(table.rows[0].cells[at].text, "—", "absent, never 0");
}
