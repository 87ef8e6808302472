//! k6: reading the JSON that the scenarios' `handleSummary` writes into a result's
//! k6 metrics and classified client errors.

use serde_json::Value;
use wscbench_results::{ErrorCounts, K6Metrics, LatencyMs};

/// A summary that is not k6's `handleSummary` data.
#[derive(Debug, thiserror::Error)]
pub enum SummaryError {
    #[error("the k6 summary is not JSON: {0}")]
    NotJson(#[source] serde_json::Error),
    #[error("the k6 summary has no metrics object")]
    NoMetrics,
}

/// What one k6 summary says.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// The metrics the result keeps.
    pub metrics: K6Metrics,
    /// Client-side errors, classified.
    pub errors: ErrorCounts,
    /// How long k6 says the test ran, in milliseconds.
    pub test_run_duration_ms: Option<f64>,
}

/// Parses `handleSummary(data)` JSON. Metrics a scenario never touched are simply zero.
pub fn parse_summary(text: &str) -> Result<Summary, SummaryError> {
    let data: Value = serde_json::from_str(text).map_err(SummaryError::NotJson)?;
    let metrics = data
        .get("metrics")
        .filter(|m| m.is_object())
        .ok_or(SummaryError::NoMetrics)?;
    let value = |metric: &str, stat: &str| {
        metrics
            .get(metric)
            .and_then(|m| m["values"].get(stat))
            .and_then(Value::as_f64)
    };
    let count = |metric: &str| value(metric, "count").unwrap_or(0.0).max(0.0).round() as u64;
    let ms = |stat: &str| value("chat_latency", stat).unwrap_or(0.0);
    Ok(Summary {
        metrics: K6Metrics {
            sessions: count("ws_sessions"),
            sessions_closed: count("sessions_closed"),
            connect_p95_ms: value("ws_connecting", "p(95)").unwrap_or(0.0),
            ws_msgs_sent: count("ws_msgs_sent"),
            ws_msgs_received: count("ws_msgs_received"),
            chat_sent: count("chat_sent"),
            chat_received: count("chat_received"),
            latency: LatencyMs {
                avg_ms: ms("avg"),
                p50_ms: value("chat_latency", "p(50)")
                    .or_else(|| value("chat_latency", "med"))
                    .unwrap_or(0.0),
                p95_ms: ms("p(95)"),
                p99_ms: ms("p(99)"),
                max_ms: ms("max"),
                ..LatencyMs::default()
            },
            latency_source: wscbench_results::LatencySource::K6Trend,
            latency_probe_every: 1,
            // The js path times each chat from its write only, and keeps no schedule.
            service_time: None,
            chats: None,
            malformed: 0,
        },
        errors: ErrorCounts {
            failed_connects: count("connect_errors"),
            abnormal_closes: count("abnormal_closes"),
            script_errors: count("ws_errors"),
            ..ErrorCounts::default()
        },
        test_run_duration_ms: data
            .pointer("/state/testRunDurationMs")
            .and_then(Value::as_f64),
    })
}

/// k6's exit code for "thresholds crossed": the run itself completed.
pub const THRESHOLDS_CROSSED: i64 = 99;

/// k6's exit code when the script stopped the test (`exec.test.abort()`), as the capacity
/// scenario does at the step that broke.
pub const SCRIPT_ABORTED: i64 = 108;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_summary_without_metrics_is_refused() {
        assert!(matches!(parse_summary("{}"), Err(SummaryError::NoMetrics)));
        assert!(matches!(
            parse_summary("not json"),
            Err(SummaryError::NotJson(_))
        ));
    }

    #[test]
    fn absent_metrics_are_zero() {
        let s = parse_summary(
            r#"{"metrics":{"chat_sent":{"type":"counter","values":{"count":5,"rate":1}}}}"#,
        )
        .unwrap();
        assert_eq!(s.metrics.chat_sent, 5);
        assert_eq!(s.metrics.chat_received, 0);
        assert_eq!(s.errors.total(), 0);
    }
}
