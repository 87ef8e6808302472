//! One decision of the summary: a headline dimension in one profile, every server's figure
//! (with its 95 % interval, or the bound, the load generator or the failure that stands in
//! for it) and the verdict drawn from them. The summary builds the decisions and lays each
//! out as one row (best, margin, reasons); the scorecards lay the same decisions out as one
//! row of figures each, with a sentence under them. Neither builder imports the other: both
//! import this file, so a dimension added to the summary is in the scorecards too.

use crate::metrics::{Better, Metric};
use crate::stats::Summary;

/// A headline dimension in one profile, decided.
#[derive(Debug, Clone)]
pub(crate) struct Decision {
    /// The dimension as the summary names it: `Cost per delivery at 100k/s (CPU per 1k
    /// deliveries, load curve)`.
    pub name: String,
    /// The profile its servers belong to (`a`, `b`).
    pub profile: String,
    /// How its figures print and which way they improve.
    pub metric: &'static Metric,
    /// Each server's figure, in row order (go, rust, zig).
    pub figures: Vec<(String, Figure)>,
    /// What the figures decide.
    pub verdict: Verdict,
    /// How a sentence says the best's figure: `spent` … `of CPU per 1,000 deliveries at
    /// 100k/s`. Without it the sentence names the dimension.
    pub wording: Option<Wording>,
    /// A figure the sentence sets beside the decided one, each server's: latency p99 beside
    /// the cost of a delivery at the same step.
    pub beside: Option<Beside>,
    /// The summary row's texts, as the summary has always worded them.
    pub summary: SummaryTexts,
}

/// The summary row's cells after the dimension and the profile.
#[derive(Debug, Clone)]
pub(crate) struct SummaryTexts {
    /// `profile-b/rust`, `tie`, `load generator`, `undecided`.
    pub best: String,
    /// `1.10 ± 0.03× profile-b/go`, `profile-a/zig = profile-a/rust`.
    pub margin: String,
    /// The reasons, `; `-separated.
    pub note: String,
}

/// How a sentence words a dimension's figure: `{server} {verb} {figure} {after}`.
#[derive(Debug, Clone)]
pub(crate) struct Wording {
    /// `spent`, `carried`, `peaked at`.
    pub verb: &'static str,
    /// What follows the figure: `of CPU per 1,000 deliveries at 400k/s`.
    pub after: String,
}

/// Another figure of each server, said beside the decided one.
#[derive(Debug, Clone)]
pub(crate) struct Beside {
    /// `latency p99`.
    pub what: &'static str,
    /// Each server's figure as text.
    pub figures: Vec<(String, String)>,
}

/// One server's figure in a dimension.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Figure {
    /// Measured over the rounds free of the load generator: mean and, over more than one
    /// round, its 95 % interval.
    Measured(Summary),
    /// At least this much: the curve's top step, or the step after which k6 became the limit.
    AtLeast(f64),
    /// Less than this: not even the curve's first step.
    Below(f64),
    /// Every round measured the load generator, not the server.
    LoadGenerator,
    /// No round ended ok.
    Failed,
}

/// What a dimension's figures decide.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Verdict {
    /// One server is best by a margin its interval clears (or by a step of the curve).
    Best {
        /// The best server.
        server: String,
        /// The next best.
        runner_up: String,
        /// Best over runner-up in the direction that favours the best (≥ 1), with its
        /// propagated spread when both have one.
        factor: Option<(f64, Option<f64>)>,
    },
    /// The best and these others are within noise of one another: none is named.
    Tie {
        /// The tied servers, the best by mean first.
        servers: Vec<String>,
        /// Why they tie: `their 95 % intervals overlap`, `equal`.
        why: String,
    },
    /// Too few rounds for an interval: nothing can be decided.
    Undecided,
    /// The load generator was the limit: the figures measure k6.
    LoadGenerator,
    /// One server measured: it ranks against nobody.
    Alone,
}

impl Figure {
    /// As a scorecard cell says it, hyperfine's way: `8.59 ± 0.58 ms`, `≥ 400,000`, `k6`,
    /// `failed`.
    pub fn text(&self, metric: &Metric) -> String {
        match self {
            Figure::Measured(s) => with_interval(s, metric.format),
            Figure::AtLeast(v) => format!("≥ {}", (metric.format)(*v)),
            Figure::Below(v) => format!("< {}", (metric.format)(*v)),
            Figure::LoadGenerator => LOADGEN_CELL.to_string(),
            Figure::Failed => FAILED_CELL.to_string(),
        }
    }

    /// The summary behind a measured figure.
    pub fn measured(&self) -> Option<&Summary> {
        match self {
            Figure::Measured(s) => Some(s),
            _ => None,
        }
    }
}

/// Where the load generator was the limit.
pub(crate) const LOADGEN_CELL: &str = "k6";
/// Where no round ended ok.
pub(crate) const FAILED_CELL: &str = "failed";

/// `8.59 ± 0.58 ms`: the mean and the half-width of its 95 % interval, the unit once when
/// both carry the same one; the mean alone without an interval (or with an empty one).
pub(crate) fn with_interval(s: &Summary, format: fn(f64) -> String) -> String {
    let mean = format(s.mean);
    let Some((lo, hi)) = s.ci95.filter(|(lo, hi)| hi > lo) else {
        return mean;
    };
    let half = format((hi - lo) / 2.0);
    match (mean.rsplit_once(' '), half.rsplit_once(' ')) {
        (Some((m, unit)), Some((h, same)))
            if unit == same && !unit.starts_with(char::is_numeric) =>
        {
            format!("{m} ± {h} {unit}")
        }
        _ => format!("{mean} ± {half}"),
    }
}

/// `less` or `more`: how the best compares in the metric's direction.
pub(crate) fn comparative(better: Better) -> &'static str {
    match better {
        Better::Lower => "less",
        Better::Higher => "more",
    }
}
