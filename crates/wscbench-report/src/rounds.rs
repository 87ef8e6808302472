//! The machine's speed per round: the calibration each round started with, and a flag on
//! every round whose index fell below the run's fastest round by more than the
//! calibration's own noise — that round's figures measured a slower machine (a neighbour, a
//! hog, a throttled host). The fastest round stands for the machine undisturbed: measured
//! against the median, a run with half its rounds disturbed would flag every round.

use std::collections::BTreeMap;

use wscbench_results::{MachineSpeed, RunResult};

use crate::table::{Cell, Column, Row, Table};

/// How far below the run's fastest round (as a share of it) a round's index may sit before
/// it is flagged: the calibration repeats within about 1 % on a quiet machine
/// (docs/methodology.md, "The machine-speed index"), so 10 % is a real change.
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

/// The rounds of each run whose index is more than [`INDEX_MOVED_SHARE`] below that run's
/// fastest round, with how far (as a signed share).
pub fn moved(speeds: &BTreeMap<(String, u32), MachineSpeed>) -> BTreeMap<(String, u32), f64> {
    let mut by_run: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for ((run, _), speed) in speeds {
        by_run.entry(run).or_default().push(speed.index);
    }
    let fastest: BTreeMap<&str, f64> = by_run
        .into_iter()
        .map(|(run, v)| (run, v.into_iter().fold(f64::MIN, f64::max)))
        .collect();
    speeds
        .iter()
        .filter_map(|(key, speed)| {
            let fastest = fastest[key.0.as_str()];
            let share = (speed.index - fastest) / fastest;
            (fastest > 0.0 && -share > INDEX_MOVED_SHARE).then(|| (key.clone(), share))
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
                    "{:.0} % below the run's fastest round: this round's figures measured a slower machine",
                    -share * 100.0
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
        scenario: None,
        axis: None,
        footnotes: vec![format!(
            "Measured at the start of each round with no container running; 100 = this project's reference machine. A round more than {:.0} % below the run's fastest round is flagged.",
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
    fn slowed_rounds_are_flagged_and_steady_ones_are_not_even_when_half_are_slowed() {
        // The hog run 20261126-143739: two of four rounds with one core busy.
        let speeds: BTreeMap<(String, u32), MachineSpeed> = [
            (("r".to_string(), 1), speed(94.3)),
            (("r".to_string(), 2), speed(67.4)),
            (("r".to_string(), 3), speed(66.1)),
            (("r".to_string(), 4), speed(99.8)),
        ]
        .into();
        let moved = moved(&speeds);
        let flagged: Vec<u32> = moved.keys().map(|(_, round)| *round).collect();
        assert_eq!(flagged, [2, 3], "{moved:?}");
        let share = moved[&("r".to_string(), 2)];
        assert!((share - (67.4 - 99.8) / 99.8).abs() < 1e-9, "{share}");
    }
}
