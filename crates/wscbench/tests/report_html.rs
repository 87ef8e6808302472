//! `wscbench report --format html`: the page goes to a file, never to a terminal.

mod common;

use assert_cmd::prelude::*;
use predicates::prelude::*;

#[test]
fn report_writes_the_html_page_to_the_output_file() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("page.html");
    common::wscbench()
        .args([
            "report",
            "results/",
            "--run",
            "20261122-005656",
            "--format",
            "html",
            "-o",
        ])
        .arg(&page)
        .assert()
        .success()
        .stdout(predicate::str::is_empty())
        .stderr(predicate::str::contains("wrote"));
    let text = std::fs::read_to_string(&page).unwrap();
    assert!(text.starts_with("<!DOCTYPE html>"));
    assert!(text.contains("id=\"scenario-saturation\""));
}

#[test]
fn report_writes_text_formats_to_the_output_file_when_given_one() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("tables.md");
    common::wscbench()
        .args(["report", "results/", "--format", "markdown", "--output"])
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::is_empty());
    assert!(
        std::fs::read_to_string(&out)
            .unwrap()
            .contains("### Profile A")
    );
}
