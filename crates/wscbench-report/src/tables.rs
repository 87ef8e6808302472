//! The format-neutral report: which tables there are, their rows and columns, each
//! cell's text and value, which cell is best, and the footnotes. Every decision about
//! content is made here, so the renderers only lay it out.

use serde::Serialize;
use wscbench_results::RunResult;

use crate::load::latest_of_each;
use crate::units;

/// Marks a number that measures the load generator rather than the server.
const LOADGEN_BOUND_MARK: &str = "†";
/// Marks a row whose run did not end `ok`.
const FAILED_MARK: &str = "‡";
/// Shown where a figure was not measured.
const ABSENT: &str = "—";

/// Languages in the order rows appear; others follow alphabetically.
const LANGUAGES: [&str; 3] = ["go", "rust", "zig"];
/// Profiles in the order tables appear; others follow alphabetically.
const PROFILES: [&str; 2] = ["a", "b"];
/// Scenarios in the order the load-generator table lists them.
const SCENARIOS: [&str; 4] = ["steady", "burst", "churn", "saturation"];

/// Every table made from a set of results, in reading order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// The tables; one without rows is never included.
    pub tables: Vec<Table>,
}

/// One comparison table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Table {
    /// What the table compares, e.g. `Profile A (frameworks) — Steady`.
    pub title: String,
    /// The columns, left to right.
    pub columns: Vec<Column>,
    /// The rows, one cell per column.
    pub rows: Vec<Row>,
    /// Notes explaining the marks in the cells, each starting with its mark.
    pub footnotes: Vec<String>,
}

/// A column heading and how its values compare.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Column {
    /// The heading.
    pub name: String,
    /// Whether a lower or a higher value is better; `None` when values are not ranked.
    pub better: Option<Better>,
    /// True for figures (right-aligned), false for labels.
    pub numeric: bool,
}

/// Which way a column's values improve.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Better {
    /// Less is better: memory, CPU, errors, latency, drop rate, sizes.
    Lower,
    /// More is better: throughput, deliveries, connections.
    Higher,
}

/// One row of a table.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(transparent)]
pub struct Row {
    /// One cell per column.
    pub cells: Vec<Cell>,
}

/// One cell: the text to show and the number behind it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cell {
    /// The text as shown, units and marks included.
    pub text: String,
    /// The figure in the result's own unit (bytes, percent of one core, ms, per second,
    /// ratio, count); `None` for labels and for figures that were not measured.
    pub value: Option<f64>,
    /// True for the best value of its column (see [`Better`]).
    pub best: bool,
    /// False when the value must not compete for best: its run failed, or it measures
    /// the load generator.
    #[serde(skip)]
    pub comparable: bool,
}

impl Cell {
    fn label(text: impl Into<String>) -> Self {
        Cell {
            text: text.into(),
            value: None,
            best: false,
            comparable: false,
        }
    }

    fn figure(text: String, value: f64) -> Self {
        Cell {
            text,
            value: Some(value),
            best: false,
            comparable: true,
        }
    }

    fn absent() -> Self {
        Cell::label(ABSENT)
    }

    fn marked(mut self, mark: &str) -> Self {
        self.text = format!("{} {mark}", self.text);
        self.comparable = false;
        self
    }
}

impl Report {
    /// Builds every table from results. When a server × scenario appears more than
    /// once, its latest result is used.
    pub fn from_results(results: &[RunResult]) -> Report {
        let (results, _) = latest_of_each(results.iter().collect());
        let mut tables = Vec::new();
        for profile in ordered(results.iter().map(|r| r.server.profile.as_str()), &PROFILES) {
            let in_profile: Vec<&RunResult> = results
                .iter()
                .copied()
                .filter(|r| r.server.profile == profile)
                .collect();
            let title = profile_title(profile);
            for scenario in &SCENARIO_TABLES {
                let rows = in_profile
                    .iter()
                    .copied()
                    .filter(|r| r.scenario.as_str() == scenario.name);
                let rows = by_language(rows).map(|r| (vec![Cell::label(language(r))], r));
                tables.push(metric_table(
                    format!("{title} — {}", scenario.title),
                    &["Language"],
                    scenario.metrics,
                    rows,
                    false,
                ));
            }
            let mut by_scenario: Vec<&RunResult> = by_language(in_profile.into_iter()).collect();
            by_scenario.sort_by_key(|r| rank(r.scenario.as_str(), &SCENARIOS));
            let rows = by_scenario.into_iter().map(|r| {
                (
                    vec![
                        Cell::label(capitalized(r.scenario.as_str())),
                        Cell::label(language(r)),
                    ],
                    r,
                )
            });
            tables.push(metric_table(
                format!("{title} — Load generator"),
                &["Scenario", "Language"],
                &LOADGEN_METRICS,
                rows,
                true,
            ));
        }
        tables.push(binary_sizes(&results));
        tables.retain(|table| !table.rows.is_empty());
        for table in &mut tables {
            table.mark_best();
        }
        Report { tables }
    }

    /// True when there is nothing to show.
    pub fn is_empty(&self) -> bool {
        self.tables.is_empty()
    }
}

impl Table {
    /// Marks the best comparable value of each ranked column, when there are at least
    /// two and they are not all equal (a column of zero errors has no winner).
    fn mark_best(&mut self) {
        for (index, column) in self.columns.iter().enumerate() {
            let Some(better) = column.better else {
                continue;
            };
            let values: Vec<f64> = self
                .rows
                .iter()
                .filter_map(|row| row.cells.get(index))
                .filter(|cell| cell.comparable)
                .filter_map(|cell| cell.value)
                .collect();
            if values.len() < 2 {
                continue;
            }
            let pick = match better {
                Better::Lower => f64::min,
                Better::Higher => f64::max,
            };
            let best = values.iter().copied().fold(values[0], pick);
            if values.iter().all(|&value| value == best) {
                continue;
            }
            for row in &mut self.rows {
                if let Some(cell) = row.cells.get_mut(index) {
                    cell.best = cell.comparable && cell.value == Some(best);
                }
            }
        }
    }
}

/// One figure of a result as a column.
struct Metric {
    name: &'static str,
    better: Option<Better>,
    /// Right-aligned; false for a yes/no.
    numeric: bool,
    /// The figure measures the load generator when the run was load-generator bound:
    /// how much was sent, delivered or dropped, and how long a busy k6 took to read it.
    loadgen_sensitive: bool,
    cell: fn(&RunResult) -> Cell,
}

/// A scenario's comparison table.
struct ScenarioTable {
    name: &'static str,
    title: &'static str,
    metrics: &'static [Metric],
}

const THROUGHPUT: Metric = Metric {
    name: "Throughput (msg/s)",
    better: Some(Better::Higher),
    numeric: true,
    loadgen_sensitive: true,
    cell: |r| {
        Cell::figure(
            units::rate(r.derived.throughput_msgs_per_s),
            r.derived.throughput_msgs_per_s,
        )
    },
};
const DELIVERIES: Metric = Metric {
    name: "Deliveries/s",
    better: Some(Better::Higher),
    numeric: true,
    loadgen_sensitive: true,
    cell: |r| {
        Cell::figure(
            units::rate(r.derived.deliveries_per_s),
            r.derived.deliveries_per_s,
        )
    },
};
const CONNECTIONS: Metric = Metric {
    name: "Total connections",
    better: Some(Better::Higher),
    numeric: true,
    loadgen_sensitive: true,
    cell: |r| match &r.server_stats {
        Some(stats) => Cell::figure(
            units::count(stats.connections_total),
            stats.connections_total as f64,
        ),
        None => Cell::absent(),
    },
};
const PEAK_MEMORY: Metric = Metric {
    name: "Peak memory",
    better: Some(Better::Lower),
    numeric: true,
    loadgen_sensitive: false,
    cell: |r| {
        Cell::figure(
            units::mib(r.derived.server.peak_mem_bytes),
            r.derived.server.peak_mem_bytes as f64,
        )
    },
};
const PEAK_CPU: Metric = Metric {
    name: "Peak CPU",
    better: Some(Better::Lower),
    numeric: true,
    loadgen_sensitive: false,
    cell: |r| {
        Cell::figure(
            units::cpu(r.derived.server.peak_cpu_percent),
            r.derived.server.peak_cpu_percent,
        )
    },
};
const K6_ERRORS: Metric = Metric {
    name: "k6 errors",
    better: Some(Better::Lower),
    numeric: true,
    loadgen_sensitive: false,
    cell: |r| Cell::figure(units::count(r.errors.total()), r.errors.total() as f64),
};
const LATENCY_P95: Metric = Metric {
    name: "Latency p95",
    better: Some(Better::Lower),
    numeric: true,
    loadgen_sensitive: true,
    cell: |r| match &r.k6 {
        // Without a received chat there is no latency sample, only k6's zero.
        Some(k6) if k6.chat_received > 0 => {
            Cell::figure(units::ms(k6.latency.p95_ms), k6.latency.p95_ms)
        }
        _ => Cell::absent(),
    },
};
const DROP_RATE: Metric = Metric {
    name: "Drop rate",
    better: Some(Better::Lower),
    numeric: true,
    loadgen_sensitive: true,
    cell: |r| {
        Cell::figure(
            units::ratio_percent(r.derived.drop_rate_ratio),
            r.derived.drop_rate_ratio,
        )
    },
};

const STEADY_METRICS: [Metric; 6] = [
    THROUGHPUT,
    PEAK_MEMORY,
    PEAK_CPU,
    K6_ERRORS,
    LATENCY_P95,
    DELIVERIES,
];
const SCENARIO_TABLES: [ScenarioTable; 4] = [
    ScenarioTable {
        name: "steady",
        title: "Steady",
        metrics: &STEADY_METRICS,
    },
    ScenarioTable {
        name: "burst",
        title: "Burst",
        metrics: &STEADY_METRICS,
    },
    ScenarioTable {
        name: "churn",
        title: "Churn",
        metrics: &[CONNECTIONS, PEAK_MEMORY, PEAK_CPU, K6_ERRORS],
    },
    ScenarioTable {
        name: "saturation",
        title: "Saturation",
        metrics: &[THROUGHPUT, DROP_RATE, PEAK_MEMORY, PEAK_CPU, K6_ERRORS],
    },
];

/// Which side was the bottleneck: k6's own CPU, and whether it read every chat the
/// server says it delivered.
const LOADGEN_METRICS: [Metric; 4] = [
    Metric {
        name: "k6 peak CPU",
        better: None,
        numeric: true,
        loadgen_sensitive: false,
        cell: |r| {
            Cell::figure(
                units::cpu(r.derived.loadgen.peak_cpu_percent),
                r.derived.loadgen.peak_cpu_percent,
            )
        },
    },
    Metric {
        name: "k6 mean CPU",
        better: None,
        numeric: true,
        loadgen_sensitive: false,
        cell: |r| {
            Cell::figure(
                units::cpu(r.derived.loadgen.mean_cpu_percent),
                r.derived.loadgen.mean_cpu_percent,
            )
        },
    },
    Metric {
        name: "k6 chat received / server deliveries",
        better: None,
        numeric: true,
        loadgen_sensitive: false,
        cell: |r| match (&r.k6, &r.server_stats) {
            (Some(k6), Some(stats)) if stats.deliveries > 0 => {
                let ratio = k6.chat_received as f64 / stats.deliveries as f64;
                let text = format!(
                    "{} / {} ({:.1}%)",
                    units::count(k6.chat_received),
                    units::count(stats.deliveries),
                    ratio * 100.0
                );
                Cell::figure(text, ratio)
            }
            (Some(k6), Some(stats)) => Cell::label(format!(
                "{} / {}",
                units::count(k6.chat_received),
                units::count(stats.deliveries)
            )),
            _ => Cell::absent(),
        },
    },
    Metric {
        name: "Load-generator bound?",
        better: None,
        numeric: false,
        loadgen_sensitive: false,
        cell: |r| {
            if r.loadgen_bound {
                Cell::label(format!("yes {LOADGEN_BOUND_MARK}"))
            } else {
                Cell::label("no")
            }
        },
    },
];

/// A table of figures, one row per result. A failed run shows its outcome in place of
/// every figure; a load-generator bound run has its sensitive figures marked. With
/// `per_scenario`, rows span scenarios, and a footnote names the scenarios it covers.
fn metric_table<'a>(
    title: String,
    labels: &[&str],
    metrics: &[Metric],
    rows: impl Iterator<Item = (Vec<Cell>, &'a RunResult)>,
    per_scenario: bool,
) -> Table {
    let mut columns: Vec<Column> = labels
        .iter()
        .map(|name| Column {
            name: name.to_string(),
            better: None,
            numeric: false,
        })
        .collect();
    columns.extend(metrics.iter().map(|m| Column {
        name: m.name.to_string(),
        better: m.better,
        numeric: m.numeric,
    }));

    let mut table = Table {
        title,
        columns,
        rows: Vec::new(),
        footnotes: Vec::new(),
    };
    let mut notes: Vec<Note> = Vec::new();
    for (mut cells, result) in rows {
        let note = if !result.is_ok() {
            let outcome = result.outcome.as_str();
            if let Some(last) = cells.pop() {
                cells.push(last.marked(FAILED_MARK));
            }
            cells.extend(metrics.iter().map(|_| Cell::label(outcome)));
            Some(failed_note(result))
        } else {
            let bound = result.loadgen_bound;
            cells.extend(metrics.iter().map(|m| {
                let mut cell = (m.cell)(result);
                // The server saw less load than the others did: none of its figures compete.
                cell.comparable &= !bound;
                if bound && m.loadgen_sensitive {
                    cell.marked(LOADGEN_BOUND_MARK)
                } else {
                    cell
                }
            }));
            bound.then(|| bound_note(result))
        };
        if let Some(mut note) = note {
            if per_scenario {
                note.scenarios.push(result.scenario.to_string());
            }
            match notes
                .iter_mut()
                .find(|n| (n.mark, &n.subject, &n.body) == (note.mark, &note.subject, &note.body))
            {
                Some(same) => same.scenarios.append(&mut note.scenarios),
                None => notes.push(note),
            }
        }
        table.rows.push(Row { cells });
    }
    table.footnotes = notes.iter().map(Note::text).collect();
    table
}

/// A footnote before it is written out: notes that differ only in scenario merge.
struct Note {
    mark: &'static str,
    subject: String,
    scenarios: Vec<String>,
    body: String,
}

impl Note {
    fn text(&self) -> String {
        let scenarios = if self.scenarios.is_empty() {
            String::new()
        } else {
            format!(" ({})", self.scenarios.join(", "))
        };
        format!("{} {}{scenarios}: {}", self.mark, self.subject, self.body)
    }
}

fn failed_note(result: &RunResult) -> Note {
    let detail = result
        .outcome_detail
        .as_deref()
        .map(|d| format!(" ({d})"))
        .unwrap_or_default();
    Note {
        mark: FAILED_MARK,
        subject: language(result),
        scenarios: Vec::new(),
        body: format!(
            "the run ended `{}`{detail}; it has no comparable figures.",
            result.outcome.as_str()
        ),
    }
}

fn bound_note(result: &RunResult) -> Note {
    let reason = crate::wording::reasons(&result.loadgen_bound_reasons);
    Note {
        mark: LOADGEN_BOUND_MARK,
        subject: language(result),
        scenarios: Vec::new(),
        body: format!(
            "load-generator bound ({reason}). The marked figures measure the load generator, not the server, \
             and none of this run's figures compete for best."
        ),
    }
}

/// Binary (and image) sizes of every server: one row per language, one column per
/// profile. Sizes come from the build, so a failed run still has them.
fn binary_sizes(results: &[&RunResult]) -> Table {
    let profiles = ordered(results.iter().map(|r| r.server.profile.as_str()), &PROFILES);
    let languages = ordered(
        results.iter().map(|r| r.server.language.as_str()),
        &LANGUAGES,
    );
    let mut columns = vec![Column {
        name: "Language".into(),
        better: None,
        numeric: false,
    }];
    columns.extend(profiles.iter().map(|profile| Column {
        name: format!("Profile {}", profile.to_uppercase()),
        better: Some(Better::Lower),
        numeric: true,
    }));

    let mut rows = Vec::new();
    for language in &languages {
        let mut cells = vec![Cell::label(capitalized(language))];
        let mut any = false;
        for profile in &profiles {
            let server = results
                .iter()
                .filter(|r| r.server.language == *language && r.server.profile == *profile)
                .max_by(|a, b| (&a.started_at, &a.run_id).cmp(&(&b.started_at, &b.run_id)))
                .map(|r| &r.server);
            let cell = match server.map(|s| (s.binary_size_bytes, s.image_size_bytes)) {
                Some((Some(binary), image)) => {
                    let image = image
                        .map(|i| format!(" (image {})", units::size(i)))
                        .unwrap_or_default();
                    Cell::figure(format!("{}{image}", units::size(binary)), binary as f64)
                }
                Some((None, Some(image))) => {
                    Cell::label(format!("{ABSENT} (image {})", units::size(image)))
                }
                _ => Cell::absent(),
            };
            any |= cell.text != ABSENT;
            cells.push(cell);
        }
        if any {
            rows.push(Row { cells });
        }
    }
    Table {
        title: "Binary sizes".into(),
        columns,
        rows,
        footnotes: Vec::new(),
    }
}

/// Results in row order: go, rust, zig, then other languages, then by server id.
fn by_language<'a>(
    results: impl Iterator<Item = &'a RunResult>,
) -> impl Iterator<Item = &'a RunResult> {
    let mut results: Vec<&RunResult> = results.collect();
    results.sort_by(|a, b| {
        let key = |r: &'a RunResult| (rank(&r.server.language, &LANGUAGES), r.server.id.as_str());
        key(a).cmp(&key(b))
    });
    results.into_iter()
}

/// A value's place in a known order; unknown values come after, alphabetically.
fn rank<'a>(value: &'a str, known: &[&str]) -> (usize, &'a str) {
    (
        known
            .iter()
            .position(|k| *k == value)
            .unwrap_or(known.len()),
        value,
    )
}

/// The distinct values, in their known order first.
fn ordered<'a>(values: impl Iterator<Item = &'a str>, known: &[&str]) -> Vec<&'a str> {
    let mut distinct: Vec<&str> = values.collect();
    distinct.sort_by_key(|value| rank(value, known));
    distinct.dedup();
    distinct
}

fn profile_title(profile: &str) -> String {
    match profile {
        "a" => "Profile A (frameworks)".into(),
        "b" => "Profile B (minimal / stdlib)".into(),
        other => format!("Profile {}", other.to_uppercase()),
    }
}

fn language(result: &RunResult) -> String {
    capitalized(&result.server.language)
}

fn capitalized(word: &str) -> String {
    let mut chars = word.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}
