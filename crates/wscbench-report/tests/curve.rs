//! The load curve read across its steps: which steps a server carried, its capacity (the
//! load generator's cap said as such), and the summary's rows at the steps every server of
//! a profile carried.

mod common;

use common::{STEPS, curve_run, curve_step, loadgen_bound};
use wscbench_report::{Report, Table};
use wscbench_results::{BoundReason, LoadParam, RunResult};

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
    // Go's p99 passes 50 ms between 100k (5 ms) and 200k (80 ms), 45/75 of the way on the
    // log of the load: 100k × 2^0.6.
    assert!(capacity.contains("profile-b/go 151,572;"), "{capacity}");
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
    // Zig's "≥ 400k (top step)" clears Go's measured crossing but not Rust's lower bound:
    // Rust's k6 stopped at 100k, and its capacity may lie anywhere above.
    let capacity = summary_row(&report, "Capacity at p99 ≤ 50.0 ms");
    assert_eq!(capacity[2], "tie", "{capacity:?}");
    assert_eq!(
        capacity[3], "profile-b/zig = profile-b/rust",
        "{capacity:?}"
    );
    assert!(
        capacity[4].starts_with(
            "profile-b/zig and profile-b/rust are both lower bounds: neither is known higher; "
        ),
        "{capacity:?}"
    );
}

/// Three rounds of `ids`' curves, each step's latency p99 from `p99(id, offered, round)`
/// (everything delivered); `bound(id, offered)` marks a step k6 limited.
fn curves(
    ids: &[&str],
    p99: impl Fn(&str, f64, u32) -> f64,
    bound: impl Fn(&str, f64) -> bool,
) -> Vec<RunResult> {
    let mut results = Vec::new();
    for round in 1..=3u32 {
        for &offered in &STEPS {
            for &id in ids {
                let r = curve_step(
                    id,
                    offered,
                    (1.0, p99(id, offered, round), 700_000.0),
                    (round, 3),
                );
                results.push(if bound(id, offered) {
                    loadgen_bound(
                        r,
                        BoundReason::LoadgenCpuSaturated {
                            busy_s: 5,
                            measured_s: 7,
                            ceiling_percent: 200.0,
                        },
                    )
                } else {
                    r
                });
            }
        }
    }
    results
}

#[test]
fn lower_bounds_against_lower_bounds_are_a_tie_that_says_why() {
    // Run 20261128-062403's profile A: Rust carried every step, k6 stopped Go and Zig at
    // 400k after they carried 200k. Three lower bounds: no winner.
    let results = curves(
        &["profile-a/go", "profile-a/rust", "profile-a/zig"],
        |_, _, _| 20.0,
        |id, offered| id != "profile-a/rust" && offered == 400_000.0,
    );
    let capacity = summary_row(&Report::from_results(&results), "Capacity at p99 ≤ 50.0 ms");
    assert_eq!(capacity[2], "tie", "{capacity:?}");
    assert!(
        capacity[4].starts_with(
            "all carried every step k6 could drive; capacity ≥ 200k: lower bounds, none known higher; "
        ),
        "{capacity:?}"
    );
    assert!(
        capacity[4].contains("profile-a/rust ≥ 400,000 (top step)")
            && capacity[4].contains("profile-a/go ≥ 200,000 (load generator)"),
        "{capacity:?}"
    );
}

#[test]
fn a_measured_crossing_below_another_servers_lower_bound_decides_the_row() {
    // Go's p99 passes 50 ms between 100k and 200k in every round; Zig carries every step.
    let results = curves(
        &["profile-b/go", "profile-b/zig"],
        |id, offered, round| match (id, offered >= 200_000.0) {
            ("profile-b/go", true) => 70.0 + f64::from(round) * 5.0,
            _ => 10.0,
        },
        |_, _| false,
    );
    let capacity = summary_row(&Report::from_results(&results), "Capacity at p99 ≤ 50.0 ms");
    assert_eq!(capacity[2], "profile-b/zig", "{capacity:?}");
    assert_eq!(capacity[3], "≥ 400k vs 149k profile-b/go", "{capacity:?}");
}

#[test]
fn measured_crossings_are_decided_by_their_intervals() {
    // Go crosses between 100k and 200k, Rust between 200k and 400k, a little apart each
    // round: the intervals separate.
    let p99 = |id: &str, offered: f64, round: u32| {
        let knee = if id == "profile-b/go" {
            200_000.0
        } else {
            400_000.0
        };
        if offered >= knee {
            70.0 + f64::from(round) * 5.0
        } else {
            10.0
        }
    };
    let results = curves(&["profile-b/go", "profile-b/rust"], p99, |_, _| false);
    let capacity = summary_row(&Report::from_results(&results), "Capacity at p99 ≤ 50.0 ms");
    assert_eq!(capacity[2], "profile-b/rust", "{capacity:?}");
    assert!(capacity[3].starts_with("2.00 ± 0."), "{capacity:?}");
    assert!(capacity[3].ends_with("× profile-b/go"), "{capacity:?}");
    // The same knees with one round far off: the intervals overlap.
    let noisy = |id: &str, offered: f64, round: u32| {
        if round == 3 && offered >= 200_000.0 {
            90.0
        } else {
            p99(id, offered, round)
        }
    };
    let results = curves(&["profile-b/go", "profile-b/rust"], noisy, |_, _| false);
    let capacity = summary_row(&Report::from_results(&results), "Capacity at p99 ≤ 50.0 ms");
    assert_eq!(capacity[2], "tie", "{capacity:?}");
    assert!(
        capacity[4].starts_with("within noise of profile-b/go (95 % intervals overlap)"),
        "{capacity:?}"
    );
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
    assert!(
        capacity[4].starts_with("all carried every step of the curve; capacity ≥ 400k"),
        "{capacity:?}"
    );
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

#[test]
fn a_cost_row_names_the_latency_its_best_bought_it_at_when_that_is_significantly_worse() {
    // At every step Zig is a third cheaper than Rust, at p99 about 38 ms against 14 ms.
    let mut results = Vec::new();
    for round in 1..=3u32 {
        let jitter = f64::from(round);
        for &offered in &STEPS {
            results.push(curve_step(
                "profile-b/zig",
                offered,
                (1.0, 37.0 + jitter, 900_000.0 + jitter * 1_000.0),
                (round, 3),
            ));
            results.push(curve_step(
                "profile-b/rust",
                offered,
                (1.0, 13.0 + jitter, 600_000.0 + jitter * 1_000.0),
                (round, 3),
            ));
        }
    }
    let report = Report::from_results(&results);
    let cost = summary_row(&report, "Cost per delivery at 400k/s");
    assert_eq!(cost[2], "profile-b/zig", "{cost:?}");
    assert!(
        cost[4].ends_with(
            "; bought at latency p99 39.0 ms against 15.0 ms for profile-b/rust (95 % intervals apart)"
        ),
        "{cost:?}"
    );
    // Where the cheaper one is also the quicker, the row says nothing of latency.
    let latency = summary_row(&report, "Latency p99 at 400k/s");
    assert!(!latency[4].contains("bought at"), "{latency:?}");
    let report = Report::from_results(&curve_run());
    let cost = summary_row(&report, "Cost per delivery at 100k/s");
    assert!(!cost[4].contains("bought at"), "{cost:?}");
}

#[test]
fn a_server_k6_limited_at_its_first_step_and_carrying_the_rest_is_at_least_the_top_step() {
    // Zig std in run 20261128-031748 (not kept): its 50k step k6's in every round, then every step
    // carried. The curve goes on past the bound step.
    let results = curves(
        &["profile-b/zig"],
        |_, _, _| 40.0,
        |_, offered| offered == 50_000.0,
    );
    let report = Report::from_results(&results);
    let capacity = summary_row(&report, "Capacity at p99 ≤ 50.0 ms");
    assert!(
        capacity[4].contains("profile-b/zig ≥ 400,000 (top step)"),
        "{capacity:?}"
    );
}

#[test]
fn a_round_that_ran_only_some_steps_is_left_out_of_the_capacity() {
    // Go crosses half way between 100k and 200k in rounds 1-3; a fourth round, run only at
    // 200k, would read as carrying its top step if it counted.
    let mut results = curves(
        &["profile-b/go"],
        |_, offered, _| if offered >= 200_000.0 { 90.0 } else { 10.0 },
        |_, _| false,
    );
    results.push(curve_step(
        "profile-b/go",
        200_000.0,
        (1.0, 20.0, 700_000.0),
        (4, 4),
    ));
    let report = Report::from_results(&results);
    let capacity = summary_row(&report, "Capacity at p99 ≤ 50.0 ms");
    assert!(capacity[4].contains("profile-b/go 141,421"), "{capacity:?}");
}

#[test]
fn a_round_whose_curve_a_level_ended_is_read_up_to_that_level() {
    // Go is far too late at 200k in rounds 1 and 2 (its levels inside one point end there,
    // 400k not run) and carries 200k in round 3; Zig carries every step.
    let mut results = curves(
        &["profile-b/go", "profile-b/zig"],
        |id, offered, round| match (id, offered, round) {
            ("profile-b/go", 200_000.0, 3) => 40.0,
            ("profile-b/go", 200_000.0, _) | ("profile-b/go", 400_000.0, _) => 300.0,
            _ => 10.0,
        },
        |_, _| false,
    );
    let go_at = |r: &RunResult, offered: f64| {
        r.server.id == "profile-b/go"
            && r.load_params[&LoadParam::Deliveries] == offered
            && r.repetition.index < 3
    };
    results.retain(|r| !go_at(r, 400_000.0));
    for r in &mut results {
        if go_at(r, 200_000.0) {
            r.curve.as_mut().unwrap().ended_point = Some(
                "this level ended the point: response time p95 300.0 ms, over 4 × 50 ms; the level above was not run".into(),
            );
        }
    }
    // Rounds 1 and 2 cross at 100k × 2^(40/290), round 3 at 200k × 2^(10/260).
    let capacity = summary_row(&Report::from_results(&results), "Capacity at p99 ≤ 50.0 ms");
    assert!(capacity[4].contains("profile-b/go 141,8"), "{capacity:?}");
    // Without the mark, a round missing its top step says nothing of the capacity.
    for r in &mut results {
        if let Some(curve) = &mut r.curve {
            curve.ended_point = None;
        }
    }
    let capacity = summary_row(&Report::from_results(&results), "Capacity at p99 ≤ 50.0 ms");
    assert!(capacity[4].contains("profile-b/go 205,4"), "{capacity:?}");
}
