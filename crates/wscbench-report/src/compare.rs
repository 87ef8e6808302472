//! `wscbench compare A B`: every point (server, variant, scenario, load parameters) the two
//! runs share, each headline metric of it, A's and B's means, the change, hyperfine's ratio
//! with its uncertainty, and a verdict from Welch's t-test. Conditions that differ between
//! A and B are named first: allowed, never silent.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use wscbench_results::{PointKey, RunResult};

use crate::metrics::{self, Better};
use crate::stats::{self, Summary};
use crate::table::{Cell, Column, Report, Row, Table};

/// Why two sets of results cannot be compared.
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    /// No point was measured (with an `ok` outcome) in both.
    #[error("{a} and {b} share no measured point (server, variant, scenario, load parameters)")]
    NothingShared {
        /// A's name.
        a: String,
        /// B's name.
        b: String,
    },
}

/// What `compare` decided about one metric of one point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// B is significantly better than A.
    Better,
    /// B is significantly worse than A.
    Worse,
    /// The test found no significant difference.
    WithinNoise,
    /// A side had a single value: nothing can be tested.
    Untested,
    /// The change is significant, but the two machines' speed indexes differ by more than
    /// it: the runs measured different machines, not a different server.
    MachineDiffers,
}

impl Verdict {
    fn text(self) -> &'static str {
        match self {
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::WithinNoise => "within noise",
            Verdict::Untested => "n=1: no test",
            Verdict::MachineDiffers => "machine differs",
        }
    }
}

/// One metric of one point in both A and B.
#[derive(Debug, Clone, Serialize)]
pub struct Change {
    /// `profile-b/go steady`, with variant and load parameters when there are any.
    pub point: String,
    /// The metric's key (see [`metrics::ALL`]).
    pub metric: &'static str,
    /// The metric's heading.
    pub metric_name: &'static str,
    /// Which way the metric improves.
    pub better: Better,
    /// A's repetitions.
    pub a: Summary,
    /// B's repetitions.
    pub b: Summary,
    /// (B − A) ÷ A, in percent; `None` when A's mean is 0.
    pub change_percent: Option<f64>,
    /// B's mean ÷ A's mean, and its standard deviation when both sides have one.
    pub ratio: Option<(f64, Option<f64>)>,
    /// Welch's two-sided p-value, when both sides have n ≥ 2.
    pub p_value: Option<f64>,
    /// The verdict at the chosen level.
    pub verdict: Verdict,
}

impl Change {
    /// True when B is significantly worse than A by more than `percent` %.
    pub fn regressed_by_more_than(&self, percent: f64) -> bool {
        self.verdict == Verdict::Worse
            && self.change_percent.is_some_and(|c| match self.better {
                Better::Higher => -c > percent,
                Better::Lower => c > percent,
            })
    }

    /// "1.23 ± 0.04× higher", hyperfine's wording with the metric's direction.
    pub fn ratio_text(&self) -> String {
        let Some((ratio, spread)) = self.ratio else {
            return "—".into();
        };
        let (factor, spread, word) = if ratio == 1.0 {
            (ratio, spread, "the same")
        } else if ratio > 1.0 {
            (ratio, spread, "higher")
        } else {
            // 0.8× is "1.25× lower": the factor reads the same both ways.
            (1.0 / ratio, spread.map(|s| s / (ratio * ratio)), "lower")
        };
        match spread {
            Some(s) => format!("{factor:.2} ± {s:.2}× {word}"),
            None => format!("{factor:.2}× {word}"),
        }
    }
}

/// Everything `compare` found.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    /// A's name (a run id or folder).
    pub a: String,
    /// B's name.
    pub b: String,
    /// The significance level of the test, e.g. 0.05.
    pub level: f64,
    /// Each run's machine-speed index (the median of its rounds' calibrations), when both
    /// recorded one: a change smaller than the indexes' difference is not called a change.
    pub machine_speed: Option<(f64, f64)>,
    /// Conditions that differ between A and B, one line each.
    pub differences: Vec<String>,
    /// One entry per point × headline metric present in both.
    pub changes: Vec<Change>,
    /// Points measured in A only.
    pub only_in_a: usize,
    /// Points measured in B only.
    pub only_in_b: usize,
}

/// The `ok` results of each point.
fn points(results: &[RunResult]) -> BTreeMap<PointKey, Vec<&RunResult>> {
    let mut points: BTreeMap<PointKey, Vec<&RunResult>> = BTreeMap::new();
    for r in results.iter().filter(|r| r.is_ok()) {
        points.entry(r.point()).or_default().push(r);
    }
    points
}

/// `profile-b/go@v steady clients=500`.
pub fn point_label(point: &PointKey) -> String {
    let mut label = format!("{} {}", point.server_label(), point.scenario);
    for (k, v) in &point.load_params {
        label.push_str(&format!(" {k}={v}"));
    }
    label
}

/// Compares B against A at significance `level`.
pub fn compare(
    a_name: &str,
    a: &[RunResult],
    b_name: &str,
    b: &[RunResult],
    level: f64,
) -> Result<Comparison, CompareError> {
    let (points_a, points_b) = (points(a), points(b));
    let shared: Vec<&PointKey> = points_a
        .keys()
        .filter(|k| points_b.contains_key(*k))
        .collect();
    if shared.is_empty() {
        return Err(CompareError::NothingShared {
            a: a_name.into(),
            b: b_name.into(),
        });
    }
    let machine_speed = median_index(a).zip(median_index(b));
    let machine_change = machine_speed.map(|(ia, ib)| 100.0 * (ib - ia) / ia);
    let mut changes = Vec::new();
    for point in &shared {
        let (ra, rb) = (&points_a[*point], &points_b[*point]);
        for metric in metrics::headline(point.scenario) {
            let values = |rs: &[&RunResult]| -> Vec<f64> {
                rs.iter().filter_map(|r| (metric.value)(r)).collect()
            };
            let (Some(sa), Some(sb)) = (Summary::of(&values(ra)), Summary::of(&values(rb))) else {
                continue;
            };
            let p_value = stats::welch(&sa, &sb).map(|w| w.p);
            let verdict = match p_value {
                None => Verdict::Untested,
                Some(p) if p >= level => Verdict::WithinNoise,
                Some(_) if metric.improves(sa.mean, sb.mean) => Verdict::Better,
                Some(_) => Verdict::Worse,
            };
            let change_percent = (sa.mean != 0.0).then(|| 100.0 * (sb.mean - sa.mean) / sa.mean);
            let verdict = match (verdict, change_percent, machine_change) {
                (Verdict::Better | Verdict::Worse, Some(c), Some(m)) if m.abs() >= c.abs() => {
                    Verdict::MachineDiffers
                }
                (verdict, ..) => verdict,
            };
            changes.push(Change {
                point: point_label(point),
                metric: metric.key,
                metric_name: metric.name,
                better: metric.better,
                change_percent,
                ratio: stats::ratio(&sa, &sb),
                p_value,
                verdict,
                a: sa,
                b: sb,
            });
        }
    }
    let mut differences = differences(a, b);
    if let Some((ia, ib)) = machine_speed {
        differences.insert(
            0,
            format!(
                "machine speed index: {ia:.1} → {ib:.1} ({:+.1} %); changes smaller than that are \"machine differs\", not better or worse",
                100.0 * (ib - ia) / ia
            ),
        );
    }
    Ok(Comparison {
        a: a_name.into(),
        b: b_name.into(),
        level,
        machine_speed,
        differences,
        only_in_a: points_a.len() - shared.len(),
        only_in_b: points_b
            .keys()
            .filter(|k| !points_a.contains_key(*k))
            .count(),
        changes,
    })
}

/// The median of a run's round calibrations, if it recorded any.
fn median_index(results: &[RunResult]) -> Option<f64> {
    let indexes: Vec<f64> = crate::rounds::speeds(results)
        .values()
        .map(|s| s.index)
        .collect();
    Summary::of(&indexes).map(|s| s.median)
}

/// Conditions whose values differ between A and B, as `what: a-values → b-values`.
pub fn differences(a: &[RunResult], b: &[RunResult]) -> Vec<String> {
    type Field = (&'static str, fn(&RunResult) -> String);
    const FIELDS: [Field; 11] = [
        ("mode", |r| r.mode.to_string()),
        ("load path", |r| r.load_path.to_string()),
        ("machine cores", |r| r.conditions.machine_cores.to_string()),
        ("kernel", |r| r.conditions.kernel.clone()),
        ("CPU model", |r| {
            r.conditions
                .cpu_model
                .clone()
                .unwrap_or("unrecorded".into())
        }),
        ("Docker", |r| r.conditions.docker_version.clone()),
        ("k6", |r| r.conditions.k6_version.clone()),
        ("server CPUs", |r| r.conditions.server_cpus.to_string()),
        ("server memory", |r| {
            crate::units::size(r.conditions.server_memory_bytes)
        }),
        ("server cpuset", |r| {
            r.conditions.cpuset_server.clone().unwrap_or("none".into())
        }),
        ("load-generator cpuset", |r| {
            r.conditions.cpuset_loadgen.clone().unwrap_or("none".into())
        }),
    ];
    let values = |rs: &[RunResult], f: fn(&RunResult) -> String| -> Vec<String> {
        let set: BTreeSet<String> = rs.iter().map(f).collect();
        set.into_iter().collect()
    };
    let mut lines = Vec::new();
    for (what, f) in FIELDS {
        let (va, vb) = (values(a, f), values(b, f));
        if va != vb {
            lines.push(format!("{what}: {} → {}", va.join(", "), vb.join(", ")));
        }
    }
    // Source hashes, per server both measured.
    let hashes = |rs: &[RunResult]| -> BTreeMap<String, BTreeSet<String>> {
        let mut map: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for r in rs {
            map.entry(r.server.id.clone())
                .or_default()
                .insert(r.server.source_hash.clone());
        }
        map
    };
    let (ha, hb) = (hashes(a), hashes(b));
    for (server, sa) in &ha {
        if let Some(sb) = hb.get(server).filter(|sb| *sb != sa) {
            let join = |s: &BTreeSet<String>| s.iter().cloned().collect::<Vec<_>>().join(", ");
            lines.push(format!("{server} sources: {} → {}", join(sa), join(sb)));
        }
    }
    lines
}

impl Comparison {
    /// The changes that got significantly worse by more than `percent` %.
    pub fn regressions(&self, percent: f64) -> Vec<&Change> {
        self.changes
            .iter()
            .filter(|c| c.regressed_by_more_than(percent))
            .collect()
    }

    /// The comparison as a report, for the terminal and Markdown renderers.
    pub fn to_report(&self) -> Report {
        let mut notes = vec![format!("Comparing {} (A) with {} (B).", self.a, self.b)];
        if self.differences.is_empty() {
            notes.push("Conditions: the same in A and B.".into());
        } else {
            notes.push(
                "Conditions that differ (allowed, but read the changes with them in mind):".into(),
            );
            notes.extend(self.differences.iter().map(|d| format!("  {d}")));
        }
        if self.only_in_a + self.only_in_b > 0 {
            notes.push(format!(
                "{} points only in A and {} only in B are left out.",
                self.only_in_a, self.only_in_b
            ));
        }
        let columns = Column::unranked(&[
            ("Point", false),
            ("Metric", false),
            ("A", true),
            ("B", true),
            ("Change", true),
            ("B ÷ A", true),
            ("Verdict", false),
        ]);
        let rows = self
            .changes
            .iter()
            .map(|c| {
                let metric = metrics::find(c.metric).expect("a known metric");
                let side = |s: &Summary| -> Cell {
                    let mut cell = Cell::summary(s, metric.format);
                    cell.comparable = false;
                    cell
                };
                let verdict = match (c.verdict, c.p_value) {
                    (Verdict::Untested, _) | (_, None) => c.verdict.text().to_string(),
                    (v, Some(p)) if p < 0.001 => format!("{} (p < 0.001)", v.text()),
                    (v, Some(p)) => format!("{} (p = {p:.3})", v.text()),
                };
                Row {
                    cells: vec![
                        Cell::label(c.point.clone()),
                        Cell::label(c.metric_name),
                        side(&c.a),
                        side(&c.b),
                        match c.change_percent {
                            Some(pct) => Cell::figure(format!("{pct:+.1}%"), pct),
                            None => Cell::absent(),
                        },
                        Cell::label(c.ratio_text()),
                        Cell::label(verdict),
                    ],
                }
            })
            .collect();
        Report {
            notes,
            scorecards: Vec::new(),
            tables: vec![Table {
                title: format!("{} → {}", self.a, self.b),
                columns,
                rows,
                scenario: None,
                axis: None,
                footnotes: vec![format!(
                    "Verdicts: Welch's t-test (two-sided, level {}) where both sides have n ≥ 2; \
                     \"n=1: no test\" where a side has a single run. \"within noise\": no significant difference.",
                    self.level
                )],
            }],
        }
    }
}
