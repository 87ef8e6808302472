//! The precision goal's verdicts on synthetic rounds: which points are precise, decided
//! against their neighbours, or still undecided.

mod common;

use wscbench_report::precision::verdicts;
use wscbench_results::{Outcome, RunResult, StopReason};

/// Saturation rounds of one server whose deliveries/s and deliveries per CPU-second both
/// take these values.
fn saturation(server: &str, values: &[f64]) -> Vec<RunResult> {
    common::repetitions(common::RUN, server, "saturation", values)
        .into_iter()
        .zip(values)
        .map(|(mut r, &v)| {
            r.derived.deliveries_per_s = v;
            r.derived.deliveries_per_server_cpu_s = Some(v);
            r
        })
        .collect()
}

fn verdict_of(results: &[RunResult], server: &str) -> Option<StopReason> {
    let point = results
        .iter()
        .find(|r| r.server.id == server)
        .unwrap()
        .point();
    verdicts(results, 5.0)[&point]
}

#[test]
fn a_point_whose_rounds_agree_within_the_goal_is_precise() {
    let results = saturation("profile-b/go", &[1000.0, 1005.0, 995.0]);
    assert_eq!(
        verdict_of(&results, "profile-b/go"),
        Some(StopReason::Precise)
    );
}

#[test]
fn a_noisy_point_far_from_its_neighbour_is_decided() {
    let mut results = saturation("profile-b/go", &[1000.0, 1150.0, 900.0]);
    results.extend(saturation("profile-b/rust", &[3000.0, 3300.0, 2800.0]));
    assert_eq!(
        verdict_of(&results, "profile-b/go"),
        Some(StopReason::Decided)
    );
    assert_eq!(
        verdict_of(&results, "profile-b/rust"),
        Some(StopReason::Decided)
    );
}

#[test]
fn noisy_points_whose_intervals_overlap_are_undecided() {
    let mut results = saturation("profile-b/go", &[1000.0, 1150.0, 900.0]);
    results.extend(saturation("profile-b/rust", &[1050.0, 1200.0, 950.0]));
    results.extend(saturation("profile-b/zig", &[5000.0, 5010.0, 4990.0]));
    assert_eq!(verdict_of(&results, "profile-b/go"), None);
    assert_eq!(verdict_of(&results, "profile-b/rust"), None);
    assert_eq!(
        verdict_of(&results, "profile-b/zig"),
        Some(StopReason::Precise)
    );
}

#[test]
fn one_good_round_decides_nothing_and_failed_rounds_do_not_count() {
    let mut results = saturation("profile-b/go", &[1000.0, 1001.0, 999.0]);
    results[1].outcome = Outcome::ServerCrashed;
    results[2].outcome = Outcome::ServerCrashed;
    assert_eq!(verdict_of(&results, "profile-b/go"), None);
}

#[test]
fn latency_may_be_twice_as_wide_as_the_goal() {
    // Steady p95 over three rounds: ±7.5 % at 95 %, inside 2 × 5 %; memory and CPU
    // efficiency are the same every round.
    let mut results = common::repetitions(common::RUN, "profile-b/go", "steady", &[1.0; 3]);
    for (r, p95) in results.iter_mut().zip([10.0, 10.3, 9.7]) {
        r.k6.as_mut().unwrap().latency.p95_ms = p95;
    }
    assert_eq!(
        verdict_of(&results, "profile-b/go"),
        Some(StopReason::Precise)
    );
}

#[test]
fn a_point_bound_by_the_load_generator_in_every_round_gets_no_more_rounds() {
    let mut results = saturation("profile-b/go", &[1000.0, 1300.0]);
    for r in &mut results {
        r.loadgen_bound = true;
    }
    assert_eq!(
        verdict_of(&results, "profile-b/go"),
        Some(StopReason::LoadgenBound)
    );
    // One round of the server's own among them: judged on its figures again.
    results[1].loadgen_bound = false;
    assert_ne!(
        verdict_of(&results, "profile-b/go"),
        Some(StopReason::LoadgenBound)
    );
}

#[test]
fn a_round_bound_by_the_load_generator_is_left_out_of_the_figures_it_moves_as_in_the_tables() {
    // Deliveries/s (k6 moves it) over three tight rounds of its own and one far off that
    // k6 bounded; its CPU efficiency the same every round.
    let mut results = saturation("profile-b/go", &[1000.0, 1005.0, 995.0, 700.0]);
    for r in &mut results {
        r.derived.deliveries_per_server_cpu_s = Some(1000.0);
    }
    results[3].loadgen_bound = true;
    assert_eq!(
        verdict_of(&results, "profile-b/go"),
        Some(StopReason::Precise),
        "precise on its own rounds, as the tables read them"
    );
    // One round of its own: undecided, whatever the bound rounds say.
    for r in &mut results[..3] {
        r.loadgen_bound = true;
    }
    results[3].loadgen_bound = false;
    assert_eq!(verdict_of(&results, "profile-b/go"), None);
}

/// Population rounds of one server: memory per user and CPU per 1,000 users each round.
fn population(server: &str, per_round: &[(f64, f64)]) -> Vec<RunResult> {
    let values: Vec<f64> = per_round.iter().map(|_| 1.0).collect();
    common::repetitions(common::RUN, server, "steady", &values)
        .into_iter()
        .zip(per_round)
        .map(|(mut r, &(bytes, cpu))| {
            r.scenario = wscbench_results::Scenario::Population;
            r.population = Some(wscbench_results::Population {
                mem_bytes_per_user: Some(bytes),
                cpu_ms_per_s_per_1k_users: Some(cpu),
                ..Default::default()
            });
            r
        })
        .collect()
}

#[test]
fn memory_per_user_is_settled_by_its_interval_only_not_by_ranking_apart() {
    // gorilla's memory per user in 20261128-130727 (±7 % over four rounds) far below Zig
    // std's, their CPU per 1,000 users far apart: decided, were memory a ranking only.
    let gorilla = [16_940.0, 17_148.0, 17_992.0, 18_536.0];
    let mut results = population("profile-b/go", &gorilla.map(|b| (b, 10.0 + b / 10_000.0)));
    results.extend(population(
        "profile-b/zig",
        &[(81_062.0, 40.0), (81_020.0, 40.1), (80_987.0, 39.9)],
    ));
    assert_eq!(verdict_of(&results, "profile-b/go"), None, "another round");
    assert_eq!(
        verdict_of(&results, "profile-b/zig"),
        Some(StopReason::Precise)
    );
    // Within ±5 %, the memory settles; its CPU, far from Zig std's, is decided.
    let tight = population(
        "profile-b/go",
        &[(17_500.0, 20.0), (17_600.0, 30.0), (17_550.0, 25.0)],
    );
    let results: Vec<RunResult> = tight
        .into_iter()
        .chain(results.into_iter().skip(4))
        .collect();
    assert_eq!(
        verdict_of(&results, "profile-b/go"),
        Some(StopReason::Decided)
    );
}
