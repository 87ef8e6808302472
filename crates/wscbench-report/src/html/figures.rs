//! What the page's charts show, taken from results: a scenario's points grouped by
//! profile (repetitions folded into a mean and a 95 % interval), the per-second series of
//! each server, and the latency percentiles. Each figure is either a chart or a note saying
//! why there is none, so a partial run never shows an empty chart.

use std::collections::BTreeMap;

use wscbench_results::{LoadParam, PointKey, RunResult, Scenario};

use super::charts::{self, Bar, BarGroup, Line, Panel, Whisker};
use crate::rows::{capitalized, language_rank, profile_name};
use crate::table::{Axis, Table};
use crate::units;

const MIB: f64 = 1024.0 * 1024.0;

/// A chart ready to inline, or the reason it was left out.
#[derive(Debug, Clone)]
pub(crate) enum Figure {
    /// The chart's SVG, and what it shows.
    Chart { svg: String, caption: String },
    /// Why there is no chart.
    Note(String),
}

/// Every repetition of one measured point that ended `ok`.
#[derive(Debug, Clone)]
pub(crate) struct Point<'a> {
    pub key: PointKey,
    pub results: Vec<&'a RunResult>,
}

impl Point<'_> {
    fn first(&self) -> &RunResult {
        self.results[0]
    }

    pub fn language(&self) -> &str {
        &self.first().server.language
    }

    pub fn profile(&self) -> &str {
        &self.first().server.profile
    }

    /// `Go`, `Go@gomaxprocs-1`, `Go clients=500`: the server within its profile.
    pub fn label(&self) -> String {
        let mut label = capitalized(self.language());
        if let Some(variant) = &self.key.variant {
            label.push_str(&format!("@{variant}"));
        }
        for (k, v) in &self.key.load_params {
            label.push_str(&format!(" {k}={v}"));
        }
        // A transport's point is its own bar or curve, never mistaken for the ws one.
        if !self.key.transport.is_ws() {
            label.push_str(&format!(" {}", self.key.transport));
        }
        label
    }

    /// `Profile A · Go`.
    pub fn full_label(&self) -> String {
        format!("{} · {}", profile_name(self.profile()), self.label())
    }

    /// The point's colour: its language's.
    pub fn color(&self, index: usize) -> plotters::style::RGBColor {
        charts::language_color(self.language(), index)
    }

    /// True when any repetition measured the load generator rather than the server.
    pub fn bound(&self) -> bool {
        self.results.iter().any(|r| r.loadgen_bound)
    }
}

/// The points of one scenario that ended `ok`, in page order: profile, language, label.
pub(crate) fn points_of(results: &[RunResult], scenario: Scenario) -> Vec<Point<'_>> {
    let mut by_key: BTreeMap<PointKey, Vec<&RunResult>> = BTreeMap::new();
    for result in results
        .iter()
        .filter(|r| r.scenario == scenario && r.is_ok())
    {
        by_key.entry(result.point()).or_default().push(result);
    }
    let mut points: Vec<Point> = by_key
        .into_iter()
        .map(|(key, mut results)| {
            results.sort_by_key(|r| (r.repetition, r.started_at.clone()));
            Point { key, results }
        })
        .collect();
    points.sort_by_key(|p| {
        (
            p.profile().to_string(),
            language_rank(p.language()),
            p.label(),
        )
    });
    points
}

/// One bar chart's figure: what it measures and whether a load-generator bound run
/// makes it measure the load generator (the same figures the tables mark).
struct BarMetric {
    title: &'static str,
    unit: &'static str,
    loadgen_sensitive: bool,
    value: fn(&RunResult) -> Option<f64>,
    text: fn(f64) -> String,
}

fn latency(r: &RunResult) -> Option<&wscbench_results::LatencyMs> {
    // Without a received chat there is no latency sample, only k6's zero.
    r.k6.as_ref()
        .filter(|k6| k6.chat_received > 0)
        .map(|k6| &k6.latency)
}

const BAR_METRICS: [BarMetric; 6] = [
    BarMetric {
        title: "Throughput",
        unit: "accepted chats/s",
        loadgen_sensitive: true,
        value: |r| Some(r.derived.throughput_msgs_per_s),
        text: units::rate,
    },
    BarMetric {
        title: "Deliveries/s",
        unit: "deliveries/s",
        loadgen_sensitive: true,
        value: |r| Some(r.derived.deliveries_per_s),
        text: units::rate,
    },
    BarMetric {
        title: "Peak server CPU",
        unit: "% of one core",
        loadgen_sensitive: false,
        value: |r| r.derived.server.as_ref().map(|u| u.peak_cpu_percent),
        text: |v| format!("{v:.0}%"),
    },
    BarMetric {
        title: "Peak server memory",
        unit: "MiB",
        loadgen_sensitive: false,
        value: |r| {
            r.derived
                .server
                .as_ref()
                .map(|u| u.peak_mem_bytes as f64 / MIB)
        },
        text: |v| format!("{v:.1}"),
    },
    BarMetric {
        title: "Latency p95",
        unit: "ms",
        loadgen_sensitive: true,
        value: |r| latency(r).map(|l| l.p95_ms),
        text: |v| format!("{v:.0}"),
    },
    BarMetric {
        title: "Latency p99",
        unit: "ms",
        loadgen_sensitive: true,
        value: |r| latency(r).map(|l| l.p99_ms),
        text: |v| format!("{v:.0}"),
    },
];

/// One grouped bar chart per figure: groups are profiles, bars are servers.
pub(crate) fn bar_figures(points: &[Point]) -> Vec<Figure> {
    BAR_METRICS
        .iter()
        .map(|metric| {
            let mut groups: Vec<BarGroup> = Vec::new();
            for (index, point) in points.iter().enumerate() {
                let values: Vec<f64> = point
                    .results
                    .iter()
                    .filter_map(|r| (metric.value)(r))
                    .collect();
                let Some((mean, interval)) = mean_and_interval(&values) else {
                    continue;
                };
                let name = profile_name(point.profile());
                let bar = Bar {
                    color: point.color(index),
                    mean,
                    interval,
                    bound: metric.loadgen_sensitive && point.bound(),
                };
                match groups.iter_mut().find(|g| g.name == name) {
                    Some(group) => group.bars.push(bar),
                    None => groups.push(BarGroup {
                        name,
                        bars: vec![bar],
                    }),
                }
            }
            if groups.is_empty() {
                return Figure::Note(format!(
                    "{}: no run of this scenario measured it.",
                    metric.title
                ));
            }
            Figure::Chart {
                svg: charts::bar_chart(metric.title, metric.unit, &groups, metric.text),
                caption: metric.title.to_string(),
            }
        })
        .collect()
}

/// The mean of a point's repetitions and, with two or more, the 95 % confidence interval
/// of that mean ([`crate::stats::Summary`]).
fn mean_and_interval(values: &[f64]) -> Option<(f64, Option<(f64, f64)>)> {
    let summary = crate::stats::Summary::of(values)?;
    Some((summary.mean, interval(&summary)))
}

/// The 95 % interval of a summary's mean as a chart draws it: none for a single value, and
/// none for identical ones, where a whisker of no length would only draw its caps.
fn interval(summary: &crate::stats::Summary) -> Option<(f64, f64)> {
    summary.ci95.filter(|(low, high)| high > low)
}

/// A whisker at `x` for the interval of `summary`, if it has one.
fn whisker(x: f64, summary: &crate::stats::Summary) -> Option<Whisker> {
    interval(summary).map(|(low, high)| Whisker { x, low, high })
}

/// The per-second figures of a scenario: one small-multiples figure per point (its first
/// repetition), every figure on the same axes so that servers compare at a glance.
pub(crate) fn series_figures(points: &[Point]) -> Vec<(String, Figure)> {
    let shown: Vec<(&Point, &RunResult)> = points.iter().map(|p| (p, p.first())).collect();
    let samples = || shown.iter().flat_map(|(_, r)| &r.series);
    let most = |values: &mut dyn Iterator<Item = f64>| values.fold(0.0, f64::max);
    let t_max = most(&mut samples().map(|s| s.t_ms as f64 / 1000.0));
    let cpu_max = most(&mut samples().map(|s| {
        s.server_cpu_percent
            .unwrap_or(0.0)
            .max(s.loadgen_cpu_percent)
    }));
    let mem_max = most(&mut samples().filter_map(|s| Some(s.server_mem_bytes? as f64 / MIB)));
    let rates: Vec<Vec<(f64, f64)>> = shown.iter().map(|(_, r)| deliveries_per_s(r)).collect();
    let rate_max = rates.iter().flatten().map(|p| p.1).fold(0.0, f64::max);

    shown
        .iter()
        .zip(rates)
        .enumerate()
        .map(|(index, ((point, result), rates))| {
            let name = point.full_label();
            if result.series.len() < 2 {
                let note = format!("{name}: fewer than two per-second samples were recorded.");
                return (name, Figure::Note(note));
            }
            let color = point.color(index);
            let at = |s: &wscbench_results::Sample| s.t_ms as f64 / 1000.0;
            let mut panels = vec![
                Panel {
                    unit: "CPU (% of a core)".into(),
                    y_max: cpu_max,
                    lines: vec![
                        Line {
                            label: "server CPU".into(),
                            color,
                            points: result
                                .series
                                .iter()
                                .filter_map(|s| Some((at(s), s.server_cpu_percent?)))
                                .collect(),
                            dashed: false,
                            whiskers: Vec::new(),
                        },
                        Line {
                            label: "k6 CPU".into(),
                            color: plotters::style::RGBColor(0x55, 0x55, 0x55),
                            points: result
                                .series
                                .iter()
                                .map(|s| (at(s), s.loadgen_cpu_percent))
                                .collect(),
                            dashed: true,
                            whiskers: Vec::new(),
                        },
                    ],
                },
                Panel {
                    unit: "memory (MiB)".into(),
                    y_max: mem_max,
                    lines: vec![Line {
                        label: "server memory".into(),
                        color,
                        points: result
                            .series
                            .iter()
                            .filter_map(|s| Some((at(s), s.server_mem_bytes? as f64 / MIB)))
                            .collect(),
                        dashed: false,
                        whiskers: Vec::new(),
                    }],
                },
            ];
            if rates.len() >= 2 {
                panels.push(Panel {
                    unit: "deliveries/s".into(),
                    y_max: rate_max,
                    lines: vec![Line {
                        label: "deliveries/s".into(),
                        color,
                        points: rates,
                        dashed: false,
                        whiskers: Vec::new(),
                    }],
                });
            }
            let mut caption = name.clone();
            if result.repetition.of > 1 {
                caption.push_str(&format!(
                    " (repetition {} of {})",
                    result.repetition.index, result.repetition.of
                ));
            }
            if point.bound() {
                caption.push_str(&format!(" {} load-generator bound", charts::BOUND_MARK));
            }
            let svg = charts::small_multiples(&panels, t_max);
            (name, Figure::Chart { svg, caption })
        })
        .collect()
}

/// Deliveries per second: the difference of the server's cumulative `deliveries` between
/// consecutive samples, over the time between them.
fn deliveries_per_s(result: &RunResult) -> Vec<(f64, f64)> {
    result
        .series
        .windows(2)
        .filter_map(|pair| {
            let (a, b) = (&pair[0], &pair[1]);
            let (da, db) = (a.deliveries?, b.deliveries?);
            let dt = b.t_ms.checked_sub(a.t_ms)? as f64 / 1000.0;
            (db >= da && dt > 0.0).then(|| (b.t_ms as f64 / 1000.0, (db - da) as f64 / dt))
        })
        .collect()
}

/// The latency percentiles of a scenario, one line per point: the full curve when the
/// native load path recorded one, else p50, p95, p99 (p99.9) and the maximum.
pub(crate) fn latency_figure(points: &[Point], title: &str) -> Figure {
    // The first profile's lines are solid, the others' dashed.
    let points_profile_first = points
        .first()
        .map(|p| p.profile().to_string())
        .unwrap_or_default();
    let lines: Vec<Line> = points
        .iter()
        .enumerate()
        .filter_map(|(index, point)| {
            let latency = latency(point.first())?;
            let mut points: Vec<(f64, f64)> = if latency.curve.is_empty() {
                let mut marks = vec![(50.0, latency.p50_ms), (95.0, latency.p95_ms)];
                marks.push((99.0, latency.p99_ms));
                marks.extend(latency.p999_ms.map(|p| (99.9, p)));
                marks
                    .into_iter()
                    .map(|(p, ms)| (charts::nines(p), ms))
                    .collect()
            } else {
                latency
                    .curve
                    .iter()
                    .filter(|[p, _]| charts::nines(*p) < charts::MAX_AT - 0.05)
                    .map(|[p, ms]| (charts::nines(*p), *ms))
                    .collect()
            };
            points.push((charts::MAX_AT, latency.max_ms));
            // The log axis has no zero.
            points.retain(|p| p.1 > 0.0);
            let mut label = point.full_label();
            if point.bound() {
                label.push_str(&format!(" {}", charts::BOUND_MARK));
            }
            Some(Line {
                label,
                color: point.color(index),
                points,
                dashed: point.profile() != points_profile_first,
                whiskers: Vec::new(),
            })
        })
        .filter(|line| !line.points.is_empty())
        .collect();
    if lines.is_empty() {
        return Figure::Note("Latency: no run of this scenario received a chat.".into());
    }
    Figure::Chart {
        svg: charts::latency_chart(title, &lines),
        caption: "Latency percentiles".into(),
    }
}

/// The load-generator reasons of a scenario's points, one entry per reason kind with the
/// points it applies to, in the order first met.
pub(crate) fn reasons_by_kind(points: &[Point]) -> Vec<(&'static str, Vec<String>)> {
    let mut kinds: Vec<(&'static str, Vec<String>)> = Vec::new();
    for point in points {
        for reason in point.results.iter().flat_map(|r| &r.loadgen_bound_reasons) {
            let kind = crate::wording::reason_kind(reason);
            let label = point.full_label();
            match kinds.iter_mut().find(|(k, _)| *k == kind) {
                Some((_, labels)) if labels.contains(&label) => {}
                Some((_, labels)) => labels.push(label),
                None => kinds.push((kind, vec![label])),
            }
        }
    }
    kinds
}

/// A colour per line: its language's, or the next free one when another line has it.
fn free_color(
    language: &str,
    used: &mut Vec<plotters::style::RGBColor>,
) -> plotters::style::RGBColor {
    let mut color = charts::language_color(language, 0);
    let mut other = 0;
    while used.contains(&color) && other <= 8 {
        color = charts::language_color("", other);
        other += 1;
    }
    used.push(color);
    color
}

/// A chart the page leads with, under the scorecards, and the scenario it is drawn from (whose
/// section then links to it rather than drawing it twice).
pub(crate) struct Headline {
    /// The scenario the chart is drawn from.
    pub scenario: Scenario,
    /// The chart.
    pub figure: Figure,
}

/// The headline charts, in the order the page shows them: the population's memory against
/// connected users, then the load curve's latency p99 and cost per 1,000 deliveries against
/// offered load. This list is the place for every chart that shows the answer.
pub(crate) fn headline_figures(results: &[RunResult]) -> Vec<Headline> {
    let mut headline = Vec::new();
    let population = points_of(results, Scenario::Population);
    if !population.is_empty() {
        headline.push(Headline {
            scenario: Scenario::Population,
            figure: population_figure(&population),
        });
    }
    let curve = points_of(results, Scenario::LoadCurve);
    if !curve.is_empty() {
        headline.extend(curve_figures(&curve).into_iter().map(|figure| Headline {
            scenario: Scenario::LoadCurve,
            figure,
        }));
    }
    headline
}

/// The figures only some scenarios have: fan-out's latency p99 against room size, and slow
/// consumers' healthy p99 second by second with the slow phase shaded.
pub(crate) fn scenario_figures(points: &[Point], scenario: Scenario) -> Vec<Figure> {
    match scenario {
        Scenario::Fanout => vec![fanout_figure(points)],
        Scenario::SlowConsumers => vec![slow_consumers_figure(points)],
        Scenario::LoadCurve => curve_figures(points),
        Scenario::Population => vec![population_figure(points)],
        _ => Vec::new(),
    }
}

/// Memory against connected users: one line per server through its population's levels
/// (each level's mean connections and memory, averaged over the rounds, with the memory's
/// 95 % interval over them), so the slope a reader sees is the memory per user the tables
/// give.
pub(crate) fn population_figure(points: &[Point]) -> Figure {
    let mut lines: Vec<Line> = Vec::new();
    let mut used = Vec::new();
    for point in points {
        let mut levels: BTreeMap<usize, (Vec<f64>, Vec<f64>)> = BTreeMap::new();
        for r in &point.results {
            for (i, l) in r
                .population
                .iter()
                .flat_map(|p| p.levels.iter())
                .enumerate()
            {
                let (connections, mem) = levels.entry(i).or_default();
                connections.push(l.connections);
                mem.push(l.mem_bytes / MIB);
            }
        }
        let (mut line_points, mut whiskers) = (Vec::new(), Vec::new());
        for (connections, mem) in levels.values() {
            let summaries = (
                crate::stats::Summary::of(connections),
                crate::stats::Summary::of(mem),
            );
            let (Some(connections), Some(mem)) = summaries else {
                continue;
            };
            line_points.push((connections.mean, mem.mean));
            whiskers.extend(whisker(connections.mean, &mem));
        }
        if line_points.is_empty() {
            continue;
        }
        lines.push(Line {
            color: free_color(point.language(), &mut used),
            label: point.full_label(),
            points: line_points,
            dashed: false,
            whiskers,
        });
    }
    if lines.is_empty() {
        return Figure::Note("Population: no level measured, so no memory to draw.".to_string());
    }
    let title = "Population: server memory against connected users";
    Figure::Chart {
        svg: charts::users_chart(title, "memory (MiB)", &lines),
        caption: format!(
            "{title}. Each dot is a level's mean over its hold (rounds averaged, whiskers their \
             95 % interval); the slope is the memory per user."
        ),
    }
}

/// Latency p99 against room size: one line per server (and other load parameters), each
/// room size's rounds folded into their mean.
fn fanout_figure(points: &[Point]) -> Figure {
    let mut lines: Vec<Line> = Vec::new();
    let mut used = Vec::new();
    for point in points {
        let size = crate::rows::room_size(point.first()) as f64;
        let p99s: Vec<f64> = point
            .results
            .iter()
            .filter_map(|r| latency(r).map(|l| l.p99_ms))
            .collect();
        let Some((mean, _)) = mean_and_interval(&p99s) else {
            continue;
        };
        let mut label = format!(
            "{} · {}",
            profile_name(point.profile()),
            capitalized(point.language())
        );
        if let Some(variant) = &point.key.variant {
            label.push_str(&format!("@{variant}"));
        }
        for (k, v) in point
            .key
            .load_params
            .iter()
            .filter(|(k, _)| *k != LoadParam::RoomSize)
        {
            label.push_str(&format!(" {k}={v}"));
        }
        match lines.iter_mut().find(|l| l.label == label) {
            Some(line) => line.points.push((size, mean)),
            None => lines.push(Line {
                color: free_color(point.language(), &mut used),
                label,
                points: vec![(size, mean)],
                dashed: false,
                whiskers: Vec::new(),
            }),
        }
    }
    if lines.is_empty() {
        return Figure::Note("Fan-out: no latency to draw against room size.".to_string());
    }
    for line in &mut lines {
        line.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    let title = "Fan-out: chat latency p99 against room size";
    Figure::Chart {
        svg: charts::room_size_chart(title, "latency p99 (ms)", &lines),
        caption: title.to_string(),
    }
}

/// The load curve: latency p99 and server CPU per 1,000 deliveries against offered load,
/// one line per server (its steps' means over the rounds free of the load generator, each
/// with its 95 % interval as a whisker), the steps where k6 was the limit as rings.
fn curve_figures(points: &[Point]) -> Vec<Figure> {
    let results: Vec<&RunResult> = points
        .iter()
        .flat_map(|p| p.results.iter().copied())
        .collect();
    let curves = crate::curve::curves(&results);
    if curves.is_empty() {
        return vec![Figure::Note("Load curve: no step to draw.".to_string())];
    }
    let mut used = Vec::new();
    let colors: Vec<_> = curves
        .iter()
        .map(|c| free_color(&c.first.server.language, &mut used))
        .collect();
    let chart = |metric: &crate::metrics::Metric, title: &str, y_desc: &str| {
        let lines: Vec<charts::CurveLine> = curves
            .iter()
            .zip(&colors)
            .map(|(curve, &color)| {
                let mut line = charts::CurveLine {
                    line: Line {
                        label: curve_label(curve.first),
                        color,
                        points: Vec::new(),
                        dashed: false,
                        whiskers: Vec::new(),
                    },
                    capped: Vec::new(),
                };
                for step in &curve.steps {
                    let Some(s) = step.summary(metric) else {
                        continue;
                    };
                    if step.carried == crate::curve::Carried::LoadGenerator {
                        line.capped.push((step.offered, s.mean));
                    } else {
                        line.line.points.push((step.offered, s.mean));
                        line.line.whiskers.extend(whisker(step.offered, &s));
                    }
                }
                line
            })
            .collect();
        Figure::Chart {
            svg: charts::load_curve_chart(title, y_desc, &lines),
            caption: format!(
                "{title}. Each dot is a step's mean over its rounds, its whisker that mean's \
                 95 % interval."
            ),
        }
    };
    vec![
        chart(
            &crate::metrics::LATENCY_P99,
            "Load curve: chat latency p99 against offered load",
            "latency p99 (ms)",
        ),
        chart(
            &crate::metrics::CPU_PER_1K_DELIVERIES,
            "Load curve: server CPU per 1,000 deliveries against offered load",
            "CPU per 1k deliveries (ms)",
        ),
    ]
}

/// `B · Rust`, `A · Zig@no-utf8-check`: a curve's server in a chart's key.
fn curve_label(result: &RunResult) -> String {
    let mut label = format!(
        "{} · {}",
        profile_name(&result.server.profile),
        capitalized(&result.server.language)
    );
    if let Some(variant) = &result.variant {
        label.push_str(&format!("@{variant}"));
    }
    label
}

/// The healthy clients' p99 second by second, one line per server (its last round), the slow
/// phase shaded.
fn slow_consumers_figure(points: &[Point]) -> Figure {
    let mut lines: Vec<Line> = Vec::new();
    let mut used = Vec::new();
    let mut shaded = None;
    for point in points {
        let Some(slow) = point
            .results
            .iter()
            .rev()
            .find_map(|r| r.slow_consumers.as_ref())
        else {
            continue;
        };
        let series: Vec<(f64, f64)> = slow
            .healthy_p99_per_s_ms
            .iter()
            .enumerate()
            .filter_map(|(i, p)| p.map(|ms| (slow.per_s_start_s + i as f64, ms)))
            .collect();
        if series.is_empty() {
            continue;
        }
        shaded.get_or_insert((slow.slow_phase_s[0], slow.slow_phase_s[1], "slow phase"));
        lines.push(Line {
            color: free_color(point.language(), &mut used),
            label: point.full_label(),
            points: series,
            dashed: false,
            whiskers: Vec::new(),
        });
    }
    if lines.is_empty() {
        return Figure::Note(
            "Slow consumers: no per-second latency of the healthy clients to draw.".to_string(),
        );
    }
    let title = "Slow consumers: healthy clients' latency p99, second by second";
    Figure::Chart {
        svg: charts::over_time_chart(title, "latency p99 (ms)", &lines, shaded),
        caption: title.to_string(),
    }
}

/// A knob table as a line chart: one line per row (server) through the columns it has a
/// value in, coloured by language (a second row of the same language takes the next free
/// colour).
pub(crate) fn knob_figure(table: &Table, axis: &Axis) -> Figure {
    let names: Vec<String> = table.columns[1..].iter().map(|c| c.name.clone()).collect();
    let (unit, scale) = knob_unit(axis.metric);
    let mut lines: Vec<Line> = Vec::new();
    let mut used: Vec<plotters::style::RGBColor> = Vec::new();
    for (row, language) in table.rows.iter().zip(&axis.languages) {
        let label = row.cells[0].text.clone();
        let points: Vec<(f64, f64)> = row.cells[1..]
            .iter()
            .zip(&axis.xs)
            .filter_map(|(cell, &x)| cell.value.map(|v| (x, v / scale)))
            .collect();
        if points.is_empty() {
            continue;
        }
        let mut color = charts::language_color(language, 0);
        let mut other = 0;
        while used.contains(&color) {
            color = charts::language_color("", other);
            other += 1;
            if other > 8 {
                break;
            }
        }
        used.push(color);
        lines.push(Line {
            label,
            color,
            points,
            dashed: false,
            whiskers: Vec::new(),
        });
    }
    if lines.is_empty() {
        return Figure::Note(format!("{}: no value to draw.", table.title));
    }
    let title = format!("{} across {}", axis.metric.name, axis.knob);
    Figure::Chart {
        svg: charts::knob_chart(
            &title,
            &axis.knob.to_string(),
            unit,
            &names,
            &axis.xs,
            axis.knob.is_numeric(),
            &lines,
        ),
        caption: table.title.clone(),
    }
}

/// The y axis of a knob chart: the unit its values are drawn in, and what to divide the
/// table's values (in the result's own unit) by.
fn knob_unit(metric: &crate::metrics::Metric) -> (&'static str, f64) {
    use crate::metrics;
    match metric {
        m if *m == metrics::THROUGHPUT => ("chats/s", 1.0),
        m if *m == metrics::DELIVERIES => ("deliveries/s", 1.0),
        m if *m == metrics::LATENCY_P95 || *m == metrics::LATENCY_P99 => ("ms", 1.0),
        m if *m == metrics::PEAK_CPU => ("% of one core", 1.0),
        m if *m == metrics::PEAK_MEMORY => ("MiB", MIB),
        _ => ("", 1.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_value_has_no_interval_and_more_have_a_t_interval() {
        assert_eq!(mean_and_interval(&[]), None);
        assert_eq!(mean_and_interval(&[4.0]), Some((4.0, None)));
        let (mean, interval) = mean_and_interval(&[1.0, 3.0]).unwrap();
        assert_eq!(mean, 2.0);
        // s = √2, n = 2: half width t(0.975, 1) · √2/√2 = 12.7062.
        let (lo, hi) = interval.unwrap();
        assert!((hi - mean - 12.7062).abs() < 1e-4 && (mean - lo - 12.7062).abs() < 1e-4);
    }
}
