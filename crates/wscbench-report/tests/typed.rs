//! A table carries its scenario, its knob axis and its bound cells as fields; on the committed
//! reference runs they say what the titles and the marks say (the page once read them there).

mod common;

use std::path::Path;

use wscbench_report::{Report, Table, load_results};
use wscbench_results::{LoadParam, Scenario};

fn reference_reports() -> Vec<(String, Report)> {
    let results = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../results");
    std::fs::read_to_string(results.join("reference-runs"))
        .unwrap()
        .lines()
        .filter(|line| !line.trim().is_empty() && !line.starts_with('#'))
        .map(|line| line.split_whitespace().next().unwrap().to_string())
        .map(|run| {
            let loaded = load_results(&results.join(&run), None).unwrap();
            (run, Report::from_results(&loaded.results))
        })
        .collect()
}

/// The scenario a title names, as the HTML page used to find it.
fn scenario_in_title(table: &Table) -> Option<Scenario> {
    let title = table.title.to_lowercase();
    let words: Vec<&str> = title.split(|c: char| !c.is_alphanumeric()).collect();
    let named: Vec<Scenario> = Scenario::ALL
        .iter()
        .copied()
        .filter(|s| {
            words.contains(&s.as_str())
                || (*s == Scenario::Fanout && title.contains("fan-out"))
                || (*s == Scenario::SlowConsumers && title.contains("slow consumers"))
                || (*s == Scenario::LoadCurve && title.contains("load curve"))
        })
        .collect();
    match named[..] {
        [one] => Some(one),
        _ => None,
    }
}

#[test]
fn every_table_knows_the_scenario_its_title_names() {
    for (run, report) in reference_reports() {
        for table in &report.tables {
            assert_eq!(
                table.scenario,
                scenario_in_title(table),
                "{run}: {}",
                table.title
            );
        }
    }
}

#[test]
fn a_cell_is_load_generator_bound_exactly_where_it_shows_the_mark() {
    let mut bound = 0;
    for (run, report) in reference_reports() {
        for table in &report.tables {
            for cell in table.rows.iter().flat_map(|r| &r.cells) {
                assert_eq!(
                    cell.loadgen_bound,
                    cell.text.contains('†'),
                    "{run}: {}: {}",
                    table.title,
                    cell.text
                );
                bound += usize::from(cell.loadgen_bound);
            }
        }
    }
    assert!(bound > 0, "the reference runs have bound cells");
}

/// A saturation sweep over clients of two servers: knob tables whether or not a committed
/// reference run has any.
fn swept_report() -> (String, Report) {
    let mut results = Vec::new();
    for server in ["profile-b/go", "profile-b/rust"] {
        for clients in [100.0, 500.0, 1000.0] {
            let mut r = common::result(common::RUN, server, "saturation");
            r.load_params.insert(LoadParam::Clients, clients);
            results.push(r);
        }
    }
    (
        "a clients sweep".to_string(),
        Report::from_results(&results),
    )
}

#[test]
fn a_knob_table_carries_the_axis_its_title_and_columns_name() {
    let mut knobs = 0;
    for (run, report) in reference_reports().into_iter().chain([swept_report()]) {
        for table in &report.tables {
            let Some(axis) = &table.axis else {
                assert!(!table.title.contains(" across "), "{run}: {}", table.title);
                continue;
            };
            knobs += 1;
            assert!(
                table
                    .title
                    .ends_with(&format!("{} across {}", axis.metric.name, axis.knob)),
                "{run}: {}",
                table.title
            );
            assert_eq!(
                axis.xs.len(),
                table.columns.len() - 1,
                "{run}: {}",
                table.title
            );
            if axis.knob.is_numeric() {
                for (x, column) in axis.xs.iter().zip(&table.columns[1..]) {
                    let value: f64 = column.name.split_once('=').unwrap().1.parse().unwrap();
                    assert_eq!(*x, value, "{run}: {}", table.title);
                }
            }
        }
    }
    assert!(knobs > 0, "the sweep has knob tables");
}
