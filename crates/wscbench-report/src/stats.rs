//! Statistics over the repetitions of one point: the summary of a metric (mean, sample
//! standard deviation, coefficient of variation, extremes, median, Student-t interval of
//! the mean), Welch's t-test between two such summaries, and hyperfine's ratio with its
//! propagated uncertainty. The t distribution comes from `statrs`; nothing here
//! approximates a special function by hand.

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

/// Above this coefficient of variation (5 %) a metric is called noisy: its repetitions
/// disagree too much for small differences to mean anything.
pub const NOISY_CV: f64 = 0.05;

/// What a noisy metric's reader should do, worded once for every output.
pub const NOISY_HINT: &str =
    "the repetitions vary by more than 5 % (CV); raise --runs or the duration";

/// The confidence level of every interval a table shows.
pub const CONFIDENCE: f64 = 0.95;

/// One metric over the repetitions of one point.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    /// How many values.
    pub n: usize,
    /// Arithmetic mean.
    pub mean: f64,
    /// Sample standard deviation (n − 1 in the denominator); `None` for a single value.
    pub std_dev: Option<f64>,
    /// Coefficient of variation, standard deviation ÷ |mean|; `None` for a single value or a
    /// zero mean.
    pub cv: Option<f64>,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// Median (the mean of the middle two for an even count).
    pub median: f64,
    /// The 95 % confidence interval of the mean (Student t, n − 1 degrees of freedom);
    /// `None` for a single value.
    pub ci95: Option<(f64, f64)>,
}

impl Summary {
    /// Summarizes the values; `None` when there are none (or any is not finite).
    pub fn of(values: &[f64]) -> Option<Summary> {
        if values.is_empty() || values.iter().any(|v| !v.is_finite()) {
            return None;
        }
        let n = values.len();
        let mean = values.iter().sum::<f64>() / n as f64;
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let median = if n % 2 == 1 {
            sorted[n / 2]
        } else {
            (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
        };
        let std_dev = (n > 1).then(|| {
            let ss: f64 = values.iter().map(|v| (v - mean).powi(2)).sum();
            (ss / (n - 1) as f64).sqrt()
        });
        let cv = std_dev.filter(|_| mean != 0.0).map(|s| s / mean.abs());
        let ci95 = std_dev.map(|s| {
            let half =
                t_quantile(1.0 - (1.0 - CONFIDENCE) / 2.0, (n - 1) as f64) * s / (n as f64).sqrt();
            (mean - half, mean + half)
        });
        Some(Summary {
            n,
            mean,
            std_dev,
            cv,
            min: sorted[0],
            max: sorted[n - 1],
            median,
            ci95,
        })
    }

    /// True when the CV exceeds [`NOISY_CV`].
    pub fn is_noisy(&self) -> bool {
        self.cv.is_some_and(|cv| cv > NOISY_CV)
    }

    /// True when both have intervals and they overlap: the difference is within noise.
    /// Without intervals (a single run) nothing can be said, and this is false.
    pub fn overlaps(&self, other: &Summary) -> bool {
        match (self.ci95, other.ci95) {
            (Some((lo_a, hi_a)), Some((lo_b, hi_b))) => lo_a <= hi_b && lo_b <= hi_a,
            _ => false,
        }
    }

    /// Sample variance, 0 for a single value.
    fn variance(&self) -> f64 {
        self.std_dev.map_or(0.0, |s| s * s)
    }
}

/// The `p` quantile of Student's t distribution with `df` degrees of freedom.
pub fn t_quantile(p: f64, df: f64) -> f64 {
    StudentsT::new(0.0, 1.0, df)
        .expect("degrees of freedom are positive")
        .inverse_cdf(p)
}

/// Welch's unequal-variances t-test of two means.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Welch {
    /// The t statistic, (mean of b − mean of a) ÷ its standard error.
    pub t: f64,
    /// Welch–Satterthwaite degrees of freedom.
    pub df: f64,
    /// Two-sided p-value.
    pub p: f64,
}

/// Welch's t-test of `b` against `a`; `None` unless both have n ≥ 2.
pub fn welch(a: &Summary, b: &Summary) -> Option<Welch> {
    if a.n < 2 || b.n < 2 {
        return None;
    }
    let (va, vb) = (a.variance() / a.n as f64, b.variance() / b.n as f64);
    let se2 = va + vb;
    let diff = b.mean - a.mean;
    if se2 == 0.0 {
        // No spread at all: equal means are the same, different ones certainly differ.
        let p = if diff == 0.0 { 1.0 } else { 0.0 };
        let t = if diff == 0.0 {
            0.0
        } else {
            diff.signum() * f64::INFINITY
        };
        return Some(Welch {
            t,
            df: (a.n + b.n - 2) as f64,
            p,
        });
    }
    let df = se2 * se2 / (va * va / (a.n - 1) as f64 + vb * vb / (b.n - 1) as f64);
    let t = diff / se2.sqrt();
    let dist = StudentsT::new(0.0, 1.0, df).expect("degrees of freedom are positive");
    let p = (2.0 * (1.0 - dist.cdf(t.abs()))).clamp(0.0, 1.0);
    Some(Welch { t, df, p })
}

/// `b ÷ a` and its standard deviation, propagated from both relative standard deviations
/// as hyperfine does (`src/benchmark/relative_speed.rs`). `None` when `a`'s mean is 0.
pub fn ratio(a: &Summary, b: &Summary) -> Option<(f64, Option<f64>)> {
    if a.mean == 0.0 {
        return None;
    }
    let ratio = b.mean / a.mean;
    let spread = match (a.std_dev, b.std_dev) {
        (Some(sa), Some(sb)) if b.mean != 0.0 => {
            Some(ratio.abs() * ((sa / a.mean).powi(2) + (sb / b.mean).powi(2)).sqrt())
        }
        _ => None,
    };
    Some((ratio, spread))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_single_value_has_no_spread_and_no_interval() {
        let s = Summary::of(&[4.0]).unwrap();
        assert_eq!(
            (s.n, s.mean, s.median, s.min, s.max),
            (1, 4.0, 4.0, 4.0, 4.0)
        );
        assert_eq!((s.std_dev, s.cv, s.ci95), (None, None, None));
        assert!(!s.is_noisy());
        assert!(!s.overlaps(&s));
        assert!(Summary::of(&[]).is_none());
    }

    #[test]
    fn intervals_that_touch_overlap_and_apart_ones_do_not() {
        let a = Summary::of(&[10.0, 11.0, 12.0]).unwrap();
        let b = Summary::of(&[11.0, 12.0, 13.0]).unwrap();
        let far = Summary::of(&[100.0, 101.0, 102.0]).unwrap();
        assert!(a.overlaps(&b));
        assert!(!a.overlaps(&far));
    }
}
