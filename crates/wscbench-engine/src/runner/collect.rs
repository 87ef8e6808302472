//! Phase 4, collecting: what k6, its reports and the engine left at a point's end, turned
//! into the result's k6 figures and the point's outcome. Pure: it reads no file and asks no
//! engine (the phases read the outputs and stop the containers), so every way a point can
//! end is tested here with made-up outputs.

use std::time::Duration;

use wscbench_results::{Outcome, RunResult, Scenario};

use crate::docker::ContainerState;
use crate::load::k6;
use crate::load::native::{self, NativeReport};

/// How long k6 may run past its scenario before it is stopped and the point fails.
pub(super) const K6_OVERRUN: Duration = Duration::from_secs(90);

/// How the load phase ended.
pub(super) enum LoadEnd {
    K6Exited(ContainerState),
    /// One k6 of a split run ended badly (killed, failed) while others still ran.
    InstanceFailed(usize, ContainerState),
    ServerDied(ContainerState),
    Cancelled,
    TimedOut,
    /// The idle-capacity scenario reached its end: the server's memory neared its limit.
    MemoryNearLimit,
}

/// What stopping the point's containers revealed.
#[derive(Default)]
pub(super) struct Teardown {
    /// The server's state just before it was stopped: a server that died after the last
    /// sample is still a dead server.
    pub(super) server_before_stop: Option<ContainerState>,
    /// The last lines k6 printed (with several, the one that failed, or the first).
    pub(super) k6_logs: String,
    /// k6 was killed for its memory limit.
    pub(super) loadgen_oom: bool,
}

/// What the load generators wrote, as read from their output folders.
pub(super) struct Outputs {
    /// k6's summary (several instances' combined); `None` when one wrote none.
    pub(super) summary: Option<Result<k6::Summary, k6::SummaryError>>,
    /// The native reports and their merge, on the native load path; `None` on the js path.
    pub(super) native: Option<Result<(native::Merged, Vec<NativeReport>), native::NativeError>>,
}

/// What the plan says about the point that collecting needs.
pub(super) struct Context<'a> {
    /// The load generators' engine endpoints, one per k6 (empty: one k6 on the server's).
    pub(super) loadgens: Vec<&'a str>,
    /// k6's memory limit (`--loadgen-memory`), in bytes.
    pub(super) loadgen_memory_bytes: Option<u64>,
    /// A stepped scenario (capacity, idle capacity), which stops itself at the step that broke.
    pub(super) stepped: bool,
}

/// The point's outcome and the merged native report, for the figures derived from it.
pub(super) struct Collected {
    /// How the point ended.
    pub(super) outcome: Outcome,
    /// Why, for a non-`ok` outcome.
    pub(super) detail: Option<String>,
    /// The merged native report, if the load path has one.
    pub(super) native: Option<Result<native::Merged, native::NativeError>>,
}

/// Phase 4: k6's summary (and the native report) into the result, and the outcome.
pub(super) fn collect(
    result: &mut RunResult,
    outputs: Outputs,
    end: LoadEnd,
    teardown: &Teardown,
    context: &Context<'_>,
) -> Collected {
    let Outputs { summary, native } = outputs;
    let instances = context.loadgens.len().max(1);
    if let Some(Ok(summary)) = &summary {
        result.k6 = Some(summary.metrics.clone());
        result.errors = summary.errors.clone();
    }
    if let (Some(Ok((merged, reports))), Some(Ok(summary))) = (&native, &summary) {
        // The native report counts every message exactly; k6's summary only has what the
        // extension pushed before the test ended. Latency comes from the full histogram.
        let (metrics, errors) = merged.k6_metrics(summary.metrics.connect_p95_ms);
        result.k6 = Some(metrics);
        result.errors = errors;
        result.negotiated = merged.negotiated.clone();
        if let Some(distributed) = &mut result.distributed {
            distributed.cross_instance_latency = merged.cross_latency_ms();
            for (instance, report) in distributed.instances.iter_mut().zip(reports) {
                instance.chat_sent = Some(report.counters.chat_sent);
                instance.chat_received = Some(report.counters.chat_received);
            }
        }
    }
    // An instance that did not stamp its own number ran a k6 without split-run support
    // (k6/x/chat older than its `instance` option): its chats and latencies cannot be told apart.
    let unstamped = match (&native, instances > 1) {
        (Some(Ok((_, reports))), true) => reports
            .iter()
            .enumerate()
            .find(|(i, r)| r.instance_id as usize != i + 1)
            .map(|(i, r)| {
                format!(
                    "k6 {} reported instance {} instead of {}: its k6/x/chat predates split runs (run scripts/build-k6, then wscbench build --rebuild)",
                    i + 1,
                    r.instance_id,
                    i + 1
                )
            }),
        _ => None,
    };
    // A slow-consumers run always has slow clients: a report without them came from a k6
    // whose k6/x/chat predates slow readers, and its figures would be the healthy ones alone.
    let no_slow = match &native {
        Some(Ok((merged, _))) if result.scenario == Scenario::SlowConsumers && merged.slow.is_none() => Some(
            "the native report has no slow clients: this k6's k6/x/chat predates slow readers (run scripts/build-k6, then wscbench build --rebuild)"
                .to_string(),
        ),
        _ => None,
    };
    let unstamped = unstamped.or(no_slow);
    let native = native.map(|n| n.map(|(merged, _)| merged));
    let (outcome, detail) = match end {
        LoadEnd::K6Exited(state) if !(state.oom_killed || teardown.loadgen_oom) => k6_outcome(
            result,
            state.exit_code,
            &summary,
            &native,
            teardown,
            context.stepped,
        ),
        end => ended_early(end, teardown, context, instances),
    };
    let (outcome, detail) = match (outcome, unstamped) {
        (Outcome::Ok, Some(why)) => (Outcome::LoadgenFailed, Some(why)),
        (outcome, _) => (outcome, detail),
    };
    // A server that died after k6's last sample is still a dead server.
    let outcome = match (outcome, teardown.server_before_stop) {
        (Outcome::Ok, Some(state)) if !state.running => died(state),
        (outcome, _) => outcome,
    };
    Collected {
        outcome,
        detail,
        native,
    }
}

/// The outcome of a load that did not end with k6 exiting on its own (or that ended with k6
/// killed at its memory limit).
fn ended_early(
    end: LoadEnd,
    teardown: &Teardown,
    context: &Context<'_>,
    instances: usize,
) -> (Outcome, Option<String>) {
    match end {
        LoadEnd::Cancelled => (
            Outcome::Interrupted,
            Some("interrupted by the user".to_string()),
        ),
        // The idle ramp's planned end: k6 is stopped with the clients it holds.
        LoadEnd::MemoryNearLimit => (Outcome::Ok, None),
        LoadEnd::ServerDied(state) => (
            died(state),
            Some(match died(state) {
                Outcome::OomKilled => {
                    "the server was killed for exceeding its memory limit".to_string()
                }
                _ => format!(
                    "the server exited with {:?} during the load",
                    state.exit_code
                ),
            }),
        ),
        LoadEnd::TimedOut => (
            Outcome::LoadgenFailed,
            Some(format!(
                "k6 did not finish within {} s of its scenario's end",
                K6_OVERRUN.as_secs()
            )),
        ),
        LoadEnd::InstanceFailed(i, state) => (
            Outcome::LoadgenFailed,
            Some(format!(
                "k6 {} of {} on {} {} mid-run; every instance was stopped: {}",
                i + 1,
                instances,
                context.loadgens.get(i).copied().unwrap_or("?"),
                if state.oom_killed {
                    "was killed at its memory limit".to_string()
                } else {
                    format!("exited with {:?}", state.exit_code)
                },
                last_lines(&teardown.k6_logs, 3)
            )),
        ),
        LoadEnd::K6Exited(_) => (
            Outcome::LoadgenFailed,
            Some(format!(
                "k6 was killed at its memory limit ({} MiB; --loadgen-memory)",
                context.loadgen_memory_bytes.unwrap_or(0) >> 20
            )),
        ),
    }
}

/// The outcome of a k6 that exited on its own.
fn k6_outcome(
    result: &mut RunResult,
    code: Option<i64>,
    summary: &Option<Result<k6::Summary, k6::SummaryError>>,
    native: &Option<Result<native::Merged, native::NativeError>>,
    teardown: &Teardown,
    stepped: bool,
) -> (Outcome, Option<String>) {
    // A native run whose report is missing or unreadable has no trustworthy counters.
    if let (Some(Ok(_)), Some(Err(e))) = (summary, native) {
        return (Outcome::LoadgenFailed, Some(e.to_string()));
    }
    match (summary, code) {
        (Some(Ok(_)), Some(0) | Some(k6::THRESHOLDS_CROSSED)) => (Outcome::Ok, None),
        // A stepped scenario stops itself at the step that broke: its end, not a failure
        // (the result's capacity says which step and why).
        (Some(Ok(_)), Some(k6::SCRIPT_ABORTED)) if stepped => (Outcome::Ok, None),
        (Some(Ok(_)), code) => {
            result.errors.script_errors += 1;
            (
                Outcome::LoadgenFailed,
                Some(format!(
                    "k6 exited with {code:?}: {}",
                    last_lines(&teardown.k6_logs, 3)
                )),
            )
        }
        (Some(Err(e)), _) => (Outcome::LoadgenFailed, Some(e.to_string())),
        (None, code) => (
            Outcome::LoadgenFailed,
            Some(format!(
                "k6 exited with {code:?} and wrote no summary: {}",
                last_lines(&teardown.k6_logs, 3)
            )),
        ),
    }
}

/// The outcome of a server container that is no longer running.
pub(super) fn died(state: ContainerState) -> Outcome {
    if state.oom_killed {
        Outcome::OomKilled
    } else {
        Outcome::ServerCrashed
    }
}

/// The last `n` non-blank lines of `text`, joined on one line.
pub(super) fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join(" | ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use wscbench_results::K6Metrics;

    fn blank() -> RunResult {
        super::super::fixtures::blank("steady")
    }

    fn summary(chat_received: u64) -> k6::Summary {
        k6::Summary {
            metrics: K6Metrics {
                chat_received,
                ..K6Metrics::default()
            },
            errors: Default::default(),
            test_run_duration_ms: None,
        }
    }

    fn exited(code: i64) -> ContainerState {
        ContainerState {
            running: false,
            exit_code: Some(code),
            oom_killed: false,
        }
    }

    fn js(summary: Option<k6::Summary>) -> Outputs {
        Outputs {
            summary: summary.map(Ok),
            native: None,
        }
    }

    fn one_k6() -> Context<'static> {
        Context {
            loadgens: Vec::new(),
            loadgen_memory_bytes: Some(1 << 30),
            stepped: false,
        }
    }

    #[test]
    fn a_k6_that_exits_cleanly_with_a_summary_is_ok_and_its_figures_are_kept() {
        let mut result = blank();
        let got = collect(
            &mut result,
            js(Some(summary(42))),
            LoadEnd::K6Exited(exited(0)),
            &Teardown::default(),
            &one_k6(),
        );
        assert_eq!(got.outcome, Outcome::Ok);
        assert_eq!(got.detail, None);
        assert_eq!(result.k6.unwrap().chat_received, 42);
    }

    #[test]
    fn a_k6_that_wrote_no_summary_failed_the_load_and_says_what_it_printed() {
        let teardown = Teardown {
            k6_logs: "line one\n\nlast words\n".into(),
            ..Teardown::default()
        };
        let got = collect(
            &mut blank(),
            js(None),
            LoadEnd::K6Exited(exited(107)),
            &teardown,
            &one_k6(),
        );
        assert_eq!(got.outcome, Outcome::LoadgenFailed);
        let detail = got.detail.unwrap();
        assert!(
            detail.contains("Some(107)") && detail.contains("last words"),
            "{detail}"
        );
    }

    #[test]
    fn a_stepped_scenario_that_aborts_itself_at_its_breaking_step_is_ok() {
        let context = Context {
            stepped: true,
            ..one_k6()
        };
        let got = collect(
            &mut blank(),
            js(Some(summary(1))),
            LoadEnd::K6Exited(exited(k6::SCRIPT_ABORTED)),
            &Teardown::default(),
            &context,
        );
        assert_eq!(got.outcome, Outcome::Ok);
    }

    #[test]
    fn a_server_that_died_after_the_last_sample_is_recorded_as_crashed() {
        let teardown = Teardown {
            server_before_stop: Some(exited(2)),
            ..Teardown::default()
        };
        let got = collect(
            &mut blank(),
            js(Some(summary(1))),
            LoadEnd::K6Exited(exited(0)),
            &teardown,
            &one_k6(),
        );
        assert_eq!(got.outcome, Outcome::ServerCrashed);
    }

    #[test]
    fn an_oom_killed_server_during_the_load_is_recorded_as_such() {
        let state = ContainerState {
            oom_killed: true,
            ..exited(137)
        };
        let got = collect(
            &mut blank(),
            js(None),
            LoadEnd::ServerDied(state),
            &Teardown::default(),
            &one_k6(),
        );
        assert_eq!(got.outcome, Outcome::OomKilled);
        assert!(got.detail.unwrap().contains("memory limit"));
    }

    #[test]
    fn a_native_run_whose_report_is_unreadable_has_no_trustworthy_counters() {
        let outputs = Outputs {
            summary: Some(Ok(summary(1))),
            native: Some(NativeReport::from_json("{").map(|_| unreachable!())),
        };
        let got = collect(
            &mut blank(),
            outputs,
            LoadEnd::K6Exited(exited(0)),
            &Teardown::default(),
            &one_k6(),
        );
        assert_eq!(got.outcome, Outcome::LoadgenFailed);
        assert!(matches!(got.native, Some(Err(_))));
    }

    #[test]
    fn a_failed_instance_of_a_split_run_names_its_engine() {
        let context = Context {
            loadgens: vec!["unix:///a.sock", "tcp://10.0.0.2:2375"],
            ..one_k6()
        };
        let got = collect(
            &mut blank(),
            js(Some(summary(1))),
            LoadEnd::InstanceFailed(1, exited(1)),
            &Teardown::default(),
            &context,
        );
        assert_eq!(got.outcome, Outcome::LoadgenFailed);
        let detail = got.detail.unwrap();
        assert!(
            detail.starts_with("k6 2 of 2 on tcp://10.0.0.2:2375"),
            "{detail}"
        );
    }

    #[test]
    fn a_slow_consumers_run_whose_k6_ran_no_slow_clients_failed_the_load() {
        let report = |slow: &str| {
            NativeReport::from_json(&format!(
                r#"{{"format":"{}","counters":{{}},"latency_us":{{"lowest_trackable_us":1,"highest_trackable_us":60000000,"significant_figures":3,"buckets":[]}}{slow}}}"#,
                native::FORMAT
            ))
            .unwrap()
        };
        let run = |slow: &str| {
            let mut result = blank();
            result.scenario = Scenario::SlowConsumers;
            let reports = vec![report(slow)];
            let outputs = Outputs {
                summary: Some(Ok(summary(1))),
                native: Some(Ok((native::merge(&reports).unwrap(), reports))),
            };
            collect(
                &mut result,
                outputs,
                LoadEnd::K6Exited(exited(0)),
                &Teardown::default(),
                &one_k6(),
            )
        };
        let got = run("");
        assert_eq!(got.outcome, Outcome::LoadgenFailed);
        assert!(got.detail.unwrap().contains("predates slow readers"));
        let got = run(r#","slow":{"clients":4,"start_ms":1000}"#);
        assert_eq!(got.outcome, Outcome::Ok);
    }

    #[test]
    fn an_interrupted_point_is_interrupted_whatever_k6_left() {
        let got = collect(
            &mut blank(),
            js(None),
            LoadEnd::Cancelled,
            &Teardown::default(),
            &one_k6(),
        );
        assert_eq!(got.outcome, Outcome::Interrupted);
    }
}
