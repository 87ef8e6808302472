//! The load curve read across its steps: which steps a server carried, its capacity (the
//! load generator's cap said as such), and the summary's rows at the steps every server of
//! a profile carried.

mod common;

use common::{STEPS, curve_run, curve_step};
use wscbench_report::{Report, Table};
use wscbench_results::RunResult;

fn table<'r>(report: &'r Report, title: &str) -> &'r Table {
    report
        .tables
        .iter()
        .find(|t| t.title == title)
        .unwrap_or_else(|| panic!("no table {title:?}"))
}

fn summary_row(report: &Report, starts_with: &str) -> Vec<String> {
    table(report, "Summary")
        .rows
        .iter()
        .find(|r| r.cells[0].text.starts_with(starts_with))
        .unwrap_or_else(|| panic!("no summary row {starts_with:?}"))
        .cells
        .iter()
        .map(|c| c.text.clone())
        .collect()
}

#[test]
fn the_curve_table_says_which_steps_each_server_carried_and_why_not() {
    let report = Report::from_results(&curve_run());
    let curve = table(&report, "Profile B (minimal / stdlib) — Load curve");
    assert_eq!(curve.rows.len(), 12, "three servers × four steps");
    let carried: Vec<(String, String)> = curve
        .rows
        .iter()
        .map(|r| {
            (
                r.cells[0].text.clone(),
                r.cells.last().unwrap().text.clone(),
            )
        })
        .collect();
    assert_eq!(
        carried[2],
        ("profile-b/go".into(), "late (p99 > 50.0 ms)".into())
    );
    assert_eq!(carried[6], ("profile-b/rust".into(), "k6 †".into()));
    assert!(carried[8..].iter().all(|(_, c)| c == "yes"));
    // The load generator's steps are its figures, marked and never best.
    let bound: Vec<bool> = curve.rows[6]
        .cells
        .iter()
        .map(|c| c.loadgen_bound)
        .collect();
    assert!(bound.iter().any(|b| *b));
    let capacity = curve
        .footnotes
        .iter()
        .find(|f| f.starts_with("Capacity"))
        .unwrap();
    assert!(capacity.contains("profile-b/go 100,000;"), "{capacity}");
    assert!(
        capacity.contains("profile-b/rust ≥ 100,000 (load generator)"),
        "{capacity}"
    );
    assert!(
        capacity.contains("profile-b/zig ≥ 400,000 (top step)"),
        "{capacity}"
    );
}

#[test]
fn the_summary_compares_cost_only_at_steps_every_server_carried_and_names_the_capacity() {
    let report = Report::from_results(&curve_run());
    let rows: Vec<String> = table(&report, "Summary")
        .rows
        .iter()
        .map(|r| r.cells[0].text.clone())
        .collect();
    assert!(
        rows.iter()
            .any(|r| r.starts_with("Cost per delivery at 50k/s"))
    );
    assert!(
        rows.iter()
            .any(|r| r.starts_with("Cost per delivery at 100k/s"))
    );
    assert!(
        !rows
            .iter()
            .any(|r| r.starts_with("Cost per delivery at 200k/s")),
        "{rows:?}"
    );
    let cost = summary_row(&report, "Cost per delivery at 100k/s");
    assert_eq!(cost[2], "profile-b/zig", "{cost:?}");
    assert!(cost[4].starts_with("decided in 3 rounds"), "{cost:?}");
    let capacity = summary_row(&report, "Capacity at p99 ≤ 50.0 ms");
    assert_eq!(capacity[2], "profile-b/zig", "{capacity:?}");
    assert_eq!(capacity[3], "400k vs 100k profile-b/go", "{capacity:?}");
}

#[test]
fn a_capacity_that_only_the_curve_or_k6_stopped_ties_with_an_equal_one() {
    let results: Vec<RunResult> = (1..=3)
        .flat_map(|round| {
            STEPS.iter().flat_map(move |&offered| {
                ["profile-a/go", "profile-a/rust"]
                    .map(|id| curve_step(id, offered, (1.0, 3.0, 700_000.0), (round, 3)))
            })
        })
        .collect();
    let report = Report::from_results(&results);
    let capacity = summary_row(&report, "Capacity at p99 ≤ 50.0 ms");
    assert_eq!(capacity[2], "tie", "{capacity:?}");
}

#[test]
fn a_variant_of_the_curve_is_read_across_in_cpu_per_1k_deliveries() {
    let mut results = Vec::new();
    for round in 1..=3u32 {
        let jitter = f64::from(round) * 0.002;
        for (variant, per_cpu_s) in [(None, 600_000.0), (Some("no-utf8-check"), 660_000.0)] {
            let mut r = curve_step(
                "profile-b/go",
                100_000.0,
                (1.0, 5.0, per_cpu_s * (1.0 + jitter)),
                (round, 3),
            );
            r.variant = variant.map(String::from);
            results.push(r);
        }
    }
    let report = Report::from_results(&results);
    let across = table(&report, "Load curve — CPU per 1k deliveries across variant");
    let names: Vec<&str> = across.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["Server", "default", "no-utf8-check"]);
    let row: Vec<&str> = across.rows[0]
        .cells
        .iter()
        .map(|c| c.text.as_str())
        .collect();
    // 1,000 ÷ 600k and ÷ 660k deliveries per CPU-second (0.4 % more on average over the
    // rounds), in ms: 1.66 and 1.51.
    assert!(
        row[1].starts_with("1.66 ms") && row[2].starts_with("1.51 ms"),
        "{row:?}"
    );
}
