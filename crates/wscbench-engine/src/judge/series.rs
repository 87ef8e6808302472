//! Series arithmetic shared by capacity, soak and idle capacity: a counter read between
//! samples, and the least-squares slope of a series.

use wscbench_results::Sample;

/// A cumulative server counter at `t_ms`, interpolated linearly between the samples that
/// read it (the nearest one when `t_ms` is outside them).
pub fn at(series: &[Sample], t_ms: u64, field: fn(&Sample) -> Option<u64>) -> Option<f64> {
    let points: Vec<(u64, u64)> = series
        .iter()
        .filter_map(|s| field(s).map(|v| (s.t_ms, v)))
        .collect();
    let (first, last) = (points.first()?, points.last()?);
    if t_ms <= first.0 {
        return Some(first.1 as f64);
    }
    if t_ms >= last.0 {
        return Some(last.1 as f64);
    }
    let after = points.iter().position(|p| p.0 >= t_ms)?;
    let (a, b) = (points[after - 1], points[after]);
    let span = (b.0 - a.0) as f64;
    let share = if span > 0.0 {
        (t_ms - a.0) as f64 / span
    } else {
        1.0
    };
    Some(a.1 as f64 + share * (b.1 as f64 - a.1 as f64))
}

/// The least-squares slope of y over x; `None` with fewer than two distinct x.
pub fn least_squares_slope(points: &[(f64, f64)]) -> Option<f64> {
    let n = points.len() as f64;
    if points.len() < 2 {
        return None;
    }
    let mean_x = points.iter().map(|p| p.0).sum::<f64>() / n;
    let mean_y = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mean_x) * (p.1 - mean_y)).sum();
    (sxx > 0.0).then(|| sxy / sxx)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_least_squares_slope_of_a_line_is_its_slope() {
        let line: Vec<(f64, f64)> = (0..10).map(|x| (x as f64, 3.0 + 2.5 * x as f64)).collect();
        assert!((least_squares_slope(&line).unwrap() - 2.5).abs() < 1e-12);
        assert_eq!(least_squares_slope(&[(1.0, 1.0)]), None);
        assert_eq!(least_squares_slope(&[(1.0, 1.0), (1.0, 2.0)]), None);
    }

    #[test]
    fn a_counter_between_two_samples_is_interpolated() {
        let sample = |t_ms, deliveries| Sample {
            t_ms,
            deliveries: Some(deliveries),
            ..Sample::default()
        };
        let series = [sample(1_000, 100), sample(2_000, 300)];
        let field: fn(&Sample) -> Option<u64> = |s| s.deliveries;
        assert_eq!(at(&series, 1_500, field), Some(200.0));
        assert_eq!(at(&series, 0, field), Some(100.0));
        assert_eq!(at(&series, 9_000, field), Some(300.0));
        assert_eq!(at(&[], 1_000, field), None);
    }
}
