//! The machine's speed per round: the calibration each round started with, and a flag on
//! every round whose index moved away from the run's median by more than the calibration's
//! own noise — that round's figures measured a different machine.

use std::collections::BTreeMap;

use wscbench_results::{MachineSpeed, RunResult};

use crate::tables::{Cell, Column, Row, Table};

/// How far (as a share of the run's median) a round's index may sit before it is flagged:
/// the calibration repeats within about 3 % on a quiet machine (docs/methodology.md,
/// "The machine-speed index"), so 10 % is a real change.
pub const INDEX_MOVED_SHARE: f64 = 0.10;

/// Each round's calibration, by round number, from the results that carry one.
pub fn speeds(results: &[RunResult]) -> BTreeMap<(String, u32), MachineSpeed> {
    results
        .iter()
        .filter_map(|r| {
            let speed = r.round.as_ref()?.machine_speed?;
            Some(((r.run_id.clone(), r.repetition.index), speed))
        })
        .collect()
}

/// The rounds of each run whose index is more than [`INDEX_MOVED_SHARE`] from that run's
/// median, with how far (as a signed share).
pub fn moved(speeds: &BTreeMap<(String, u32), MachineSpeed>) -> BTreeMap<(String, u32), f64> {
    let mut by_run: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for ((run, _), speed) in speeds {
        by_run.entry(run).or_default().push(speed.index);
    }
    let medians: BTreeMap<&str, f64> = by_run
        .into_iter()
        .map(|(run, mut v)| {
            v.sort_by(f64::total_cmp);
            let n = v.len();
            let median = if n % 2 == 1 {
                v[n / 2]
            } else {
                (v[n / 2 - 1] + v[n / 2]) / 2.0
            };
            (run, median)
        })
        .collect();
    speeds
        .iter()
        .filter_map(|(key, speed)| {
            let median = medians[key.0.as_str()];
            let share = (speed.index - median) / median;
            (median > 0.0 && share.abs() > INDEX_MOVED_SHARE).then(|| (key.clone(), share))
        })
        .collect()
}

/// One row per round: the index, its two parts, and a flag where it moved.
pub(crate) fn machine_speed_table(results: &[RunResult]) -> Table {
    let speeds = speeds(results);
    let moved = moved(&speeds);
    let several_runs = speeds
        .keys()
        .map(|(run, _)| run)
        .collect::<std::collections::BTreeSet<_>>()
        .len()
        > 1;
    let rows = speeds
        .iter()
        .map(|((run, round), speed)| {
            let round_text = if several_runs {
                format!("{run} round {round}")
            } else {
                format!("round {round}")
            };
            let flag = moved.get(&(run.clone(), *round)).map_or(String::new(), |share| {
                format!(
                    "moved {:+.0} % from the run's median: this round's figures measured a {} machine",
                    share * 100.0,
                    if *share < 0.0 { "slower" } else { "faster" }
                )
            });
            Row {
                cells: vec![
                    Cell::label(round_text),
                    Cell::figure(format!("{:.1}", speed.index), speed.index),
                    Cell::figure(
                        format!("{:.2} M", speed.cpu_blocks_per_s / 1e6),
                        speed.cpu_blocks_per_s,
                    ),
                    Cell::figure(
                        format!("{:.1} k", speed.loopback_roundtrips_per_s / 1e3),
                        speed.loopback_roundtrips_per_s,
                    ),
                    Cell::label(flag),
                ],
            }
        })
        .collect();
    Table {
        title: "Machine speed per round".into(),
        columns: Column::unranked(&[
            ("Round", false),
            ("Index", true),
            ("CPU (SHA-256 blocks/s)", true),
            ("Loopback (round trips/s)", true),
            ("Flag", false),
        ]),
        rows,
        footnotes: vec![format!(
            "Measured at the start of each round with no container running; 100 = this project's reference machine. A round more than {:.0} % from the run's median is flagged.",
            INDEX_MOVED_SHARE * 100.0
        )],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn speed(index: f64) -> MachineSpeed {
        MachineSpeed {
            cpu_blocks_per_s: index,
            loopback_roundtrips_per_s: index,
            index,
        }
    }

    #[test]
    fn a_slowed_round_is_flagged_and_steady_ones_are_not() {
        let speeds: BTreeMap<(String, u32), MachineSpeed> = [
            (("r".to_string(), 1), speed(100.0)),
            (("r".to_string(), 2), speed(97.0)),
            (("r".to_string(), 3), speed(62.0)),
            (("r".to_string(), 4), speed(102.0)),
        ]
        .into();
        let moved = moved(&speeds);
        assert_eq!(moved.len(), 1, "{moved:?}");
        let share = moved[&("r".to_string(), 3)];
        assert!((share - (62.0 - 98.5) / 98.5).abs() < 1e-9, "{share}");
    }
}
