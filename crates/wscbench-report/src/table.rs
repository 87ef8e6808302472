//! The display primitives every table is made of: [`Report`], [`Table`], [`Column`], [`Row`]
//! and [`Cell`], the marks a cell can carry, and the rules that mark a column's best value.
//! A table knows what it shows (its scenario, which cells the load generator bounded) as
//! fields, so no reader has to parse its title or its text back. This module knows nothing of
//! results or of the tables built from them: the builders and the assembler import it, never
//! the other way round.

use serde::Serialize;
use wscbench_results::{LoadParam, Scenario};

use crate::metrics::{Better, Metric};
use crate::stats::Summary;

/// Marks a number that measures the load generator rather than the server.
pub(crate) const LOADGEN_BOUND_MARK: &str = "†";
/// Marks a row whose run did not end `ok`.
pub(crate) const FAILED_MARK: &str = "‡";
/// Marks values tied within noise.
pub(crate) const TIED_MARK: &str = "=";
/// Marks a figure whose repetitions vary by more than 5 %.
pub(crate) const NOISY_MARK: &str = "~";
/// Marks a row from an earlier run than the table's newest.
pub(crate) const OLDER_RUN_MARK: &str = "°";
/// Shown where a figure was not measured.
pub(crate) const ABSENT: &str = "—";

/// Every table made from a set of results, in reading order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// Lines to print before the tables: what was left out, which conditions differ.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The answer first: one scorecard per profile, made from the same decisions as the
    /// summary table. Empty for documents that decide nothing (a comparison, a history).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scorecards: Vec<Scorecard>,
    /// The tables, the overall summary first; one without rows is never included.
    pub tables: Vec<Table>,
}

/// One profile's answer on one screen: a table of each server's figure per headline dimension
/// (the best of a decided row and the tied marked in their text), and one sentence per row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scorecard {
    /// The profile (`a`, `b`).
    pub profile: String,
    /// One row per dimension, one column per server.
    #[serde(flatten)]
    pub table: Table,
    /// One sentence per dimension, in row order: what the best did and by how much, or why
    /// nothing was decided.
    pub sentences: Vec<String>,
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
    /// The one scenario the table compares, when it compares one: where the HTML page
    /// places it. `None` for tables across scenarios (the summary, a load generator's).
    #[serde(skip)]
    pub scenario: Option<Scenario>,
    /// For a table across a knob (its columns the knob's values): the axis a chart draws it
    /// on. `None` for every other table.
    #[serde(skip)]
    pub axis: Option<Axis>,
}

/// What the columns of a table across a knob are the values of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Knob {
    /// A load parameter a sweep set (`clients`, `rate`, ...).
    Param(LoadParam),
    /// The server's variant.
    Variant,
}

impl Knob {
    /// True for a load parameter, whose values are numbers (a numeric axis); false for
    /// variants, one slot per name.
    pub fn is_numeric(self) -> bool {
        matches!(self, Knob::Param(_))
    }
}

/// A knob by name, as table titles and the page say it: the parameter's, or `variant`.
impl std::fmt::Display for Knob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Knob::Param(param) => param.fmt(f),
            Knob::Variant => f.write_str("variant"),
        }
    }
}

/// The axis of a table across a knob (a sweep's load parameter or the server's variant): what
/// the HTML page draws it on.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// What the columns are the values of.
    pub knob: Knob,
    /// The metric the table shows.
    pub metric: &'static Metric,
    /// Where each column after the first sits on the x axis: the parameter's value, or the
    /// variant's index.
    pub xs: Vec<f64>,
    /// Each row's server language, in row order: the colour a chart draws its line in.
    pub languages: Vec<String>,
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
    /// True for a column a terminal shows only when asked for every column (`--wide`); the
    /// headline columns are false. Markdown, JSON and HTML show every column. A table whose
    /// every column is a detail (the summary, which the scorecards stand for) is shown by a
    /// terminal only with `--wide`.
    #[serde(skip)]
    pub detail: bool,
}

impl Column {
    /// Unranked columns from `(heading, numeric)` pairs: for tables that name no best.
    pub fn unranked(columns: &[(&str, bool)]) -> Vec<Column> {
        columns
            .iter()
            .map(|&(name, numeric)| Column {
                name: name.into(),
                better: None,
                numeric,
                detail: false,
            })
            .collect()
    }
}

/// One row of a table.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(transparent)]
pub struct Row {
    /// One cell per column.
    pub cells: Vec<Cell>,
}

/// One cell: the text to show, the number behind it and, over repetitions, its spread.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cell {
    /// The text as shown, units and marks included: `mean ± h` over more than one round, h
    /// the half-width of the 95 % interval of the mean.
    pub text: String,
    /// The figure (the mean over repetitions) in the result's own unit (bytes, percent of
    /// one core, ms, per second, ratio, count); `None` for labels and for figures that were
    /// not measured.
    pub value: Option<f64>,
    /// True for the best value of its column (see [`Better`]): best by a margin its 95 %
    /// interval clears.
    pub best: bool,
    /// True when this value and the column's best are tied within noise (their 95 %
    /// intervals overlap), so no best is named.
    #[serde(default, skip_serializing_if = "is_false")]
    pub tied: bool,
    /// Repetitions behind the figure (0 for labels).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub n: usize,
    /// Sample standard deviation over the repetitions, in the figure's unit (n > 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub std_dev: Option<f64>,
    /// Coefficient of variation, σ ÷ |mean| (n > 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cv: Option<f64>,
    /// The 95 % confidence interval of the mean, Student t (n > 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci95: Option<(f64, f64)>,
    /// True when the CV exceeds 5 %: raise `--runs` or the duration.
    #[serde(default, skip_serializing_if = "is_false")]
    pub noisy: bool,
    /// False when the value must not compete for best: its run failed, or it measures
    /// the load generator.
    #[serde(skip)]
    pub comparable: bool,
    /// True when the figure measures the load generator rather than the server (shown with
    /// [`LOADGEN_BOUND_MARK`]).
    #[serde(skip)]
    pub loadgen_bound: bool,
}

fn is_false(b: &bool) -> bool {
    !b
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Cell {
    pub(crate) fn label(text: impl Into<String>) -> Self {
        Cell {
            text: text.into(),
            value: None,
            best: false,
            tied: false,
            n: 0,
            std_dev: None,
            cv: None,
            ci95: None,
            noisy: false,
            comparable: false,
            loadgen_bound: false,
        }
    }

    pub(crate) fn figure(text: String, value: f64) -> Self {
        Cell {
            value: Some(value),
            comparable: true,
            n: 1,
            ..Cell::label(text)
        }
    }

    /// A figure over rounds: `mean ± h` (h the 95 % interval's half-width) when there is more
    /// than one, marked when noisy.
    pub(crate) fn summary(s: &Summary, format: fn(f64) -> String) -> Self {
        let text = match s.ci95 {
            Some((lo, hi)) => format!("{} ± {}", format(s.mean), format((hi - lo) / 2.0)),
            None => format(s.mean),
        };
        let mut cell = Cell {
            n: s.n,
            std_dev: s.std_dev,
            cv: s.cv,
            ci95: s.ci95,
            noisy: s.is_noisy(),
            ..Cell::figure(text, s.mean)
        };
        if cell.noisy {
            cell.text = format!("{} {NOISY_MARK}", cell.text);
        }
        cell
    }

    pub(crate) fn absent() -> Self {
        Cell::label(ABSENT)
    }

    /// The cell with `mark` after its text, out of the competition for best.
    pub(crate) fn marked(mut self, mark: &str) -> Self {
        self.text = format!("{} {mark}", self.text);
        self.comparable = false;
        self
    }

    /// The cell marked as measuring the load generator: [`LOADGEN_BOUND_MARK`] after its
    /// text, and never best.
    pub(crate) fn bound(self) -> Self {
        Cell {
            loadgen_bound: true,
            ..self.marked(LOADGEN_BOUND_MARK)
        }
    }

    /// The figure as a summary again, for comparing intervals.
    fn as_summary(&self) -> Option<Summary> {
        let mean = self.value?;
        Some(Summary {
            n: self.n,
            mean,
            std_dev: self.std_dev,
            cv: self.cv,
            min: mean,
            max: mean,
            median: mean,
            ci95: self.ci95,
        })
    }
}

impl Column {
    /// A ranked column of a metric's figures.
    pub(crate) fn metric(metric: &Metric) -> Column {
        Column {
            name: metric.name.to_string(),
            better: Some(metric.better),
            numeric: true,
            detail: false,
        }
    }
}

impl Table {
    /// Marks the best comparable value of each ranked column, when there are at least two
    /// and they are not all equal (a column of zero errors has no winner). When the best's
    /// 95 % interval overlaps the runner-up's, no best is named: the values within noise of
    /// it are marked tied instead.
    pub(crate) fn mark_best(&mut self) {
        let mut any_tied = false;
        for (index, column) in self.columns.iter().enumerate() {
            let Some(better) = column.better else {
                continue;
            };
            let mut ranked: Vec<(usize, Summary)> = self
                .rows
                .iter()
                .enumerate()
                .filter_map(|(row, r)| r.cells.get(index).map(|c| (row, c)))
                .filter(|(_, cell)| cell.comparable)
                .filter_map(|(row, cell)| cell.as_summary().map(|s| (row, s)))
                .collect();
            if ranked.len() < 2 {
                continue;
            }
            ranked.sort_by(|(_, a), (_, b)| match better {
                Better::Higher => b.mean.total_cmp(&a.mean),
                Better::Lower => a.mean.total_cmp(&b.mean),
            });
            let best = ranked[0].1.clone();
            if ranked.iter().all(|(_, s)| s.mean == best.mean) {
                continue;
            }
            let within_noise: Vec<usize> = ranked[1..]
                .iter()
                .filter(|(_, s)| s.mean == best.mean || s.overlaps(&best))
                .map(|(row, _)| *row)
                .collect();
            let exact_ties = ranked[1..]
                .iter()
                .all(|(_, s)| s.mean == best.mean || !s.overlaps(&best));
            if within_noise.is_empty() || exact_ties {
                for (row, s) in &ranked {
                    if s.mean == best.mean {
                        self.rows[*row].cells[index].best = true;
                    }
                }
            } else {
                any_tied = true;
                for row in std::iter::once(ranked[0].0).chain(within_noise) {
                    let cell = &mut self.rows[row].cells[index];
                    cell.tied = true;
                    cell.text = format!("{} {TIED_MARK}", cell.text);
                }
            }
        }
        if any_tied {
            self.footnotes.push(format!(
                "{TIED_MARK} tied within noise: the 95 % intervals of these values overlap the best one's, so none is named best."
            ));
        }
    }

    /// Adds a "% of best" column after the named one: each comparable value as a share of
    /// the column's best (go-websocket-benchmark style).
    pub(crate) fn add_percent_of_best(&mut self, after: &str) {
        let Some(index) = self.columns.iter().position(|c| c.name == after) else {
            return;
        };
        let better = self.columns[index].better.unwrap_or(Better::Higher);
        let values = self
            .rows
            .iter()
            .filter_map(|r| r.cells.get(index))
            .filter(|c| c.comparable)
            .filter_map(|c| c.value);
        let best = match better {
            Better::Higher => values.fold(f64::NAN, f64::max),
            Better::Lower => values.fold(f64::NAN, f64::min),
        };
        self.columns.insert(
            index + 1,
            Column {
                name: "% of best".into(),
                better: None,
                numeric: true,
                detail: false,
            },
        );
        for row in &mut self.rows {
            let cell = match row.cells.get(index) {
                Some(c) if c.comparable && best.is_finite() && best != 0.0 => {
                    let v = c.value.unwrap_or(0.0);
                    let share = match better {
                        Better::Higher => v / best,
                        Better::Lower if v != 0.0 => best / v,
                        Better::Lower => 1.0,
                    };
                    Cell {
                        comparable: false,
                        ..Cell::figure(format!("{:.0}%", share * 100.0), share * 100.0)
                    }
                }
                // A failed row shows its outcome here too.
                Some(c) if c.value.is_none() => Cell::label(c.text.clone()),
                _ => Cell::absent(),
            };
            row.cells.insert(index + 1, cell);
        }
    }
}
