//! Reading real `handleSummary` outputs, recorded from smoke runs of each scenario against
//! the profile-b Go server on this machine (tests/fixtures/k6/).

use wscbench_engine::load::k6::{Summary, parse_summary};

fn fixture(scenario: &str) -> Summary {
    let path = format!(
        "{}/tests/fixtures/k6/{scenario}-smoke.json",
        env!("CARGO_MANIFEST_DIR")
    );
    parse_summary(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn a_recorded_steady_summary_gives_sessions_chats_messages_latency_and_errors() {
    let summary = fixture("steady");
    let m = &summary.metrics;
    assert_eq!(
        (m.sessions, m.sessions_closed, m.chat_sent, m.chat_received),
        (10, 10, 69, 621)
    );
    assert_eq!((m.ws_msgs_sent, m.ws_msgs_received), (89, 721));
    assert!(
        (m.latency.p95_ms - 1.921875).abs() < 1e-9,
        "{}",
        m.latency.p95_ms
    );
    assert!(
        (m.connect_p95_ms - 5.5090995).abs() < 1e-6,
        "{}",
        m.connect_p95_ms
    );
    assert!(
        m.latency.p50_ms <= m.latency.p95_ms
            && m.latency.p95_ms <= m.latency.p99_ms
            && m.latency.p99_ms <= m.latency.max_ms
    );
    assert_eq!(summary.errors.total(), 0);
    assert!(summary.test_run_duration_ms.unwrap() > 5000.0);
}

#[test]
fn every_recorded_scenario_summary_parses_with_the_counts_k6_printed() {
    // (scenario, sessions, chat_sent, chat_received, p95 latency ms)
    let expected = [
        ("burst", 100, 100, 4951, 10.725341796875),
        ("churn", 80, 80, 1343, 30.390356445312484),
        ("saturation", 100, 924, 49218, 332.11851806640595),
    ];
    for (scenario, sessions, sent, received, p95) in expected {
        let m = fixture(scenario).metrics;
        assert_eq!(
            (m.sessions, m.sessions_closed, m.chat_sent, m.chat_received),
            (sessions, sessions, sent, received),
            "{scenario}"
        );
        assert!(
            (m.latency.p95_ms - p95).abs() < 1e-9,
            "{scenario}: {}",
            m.latency.p95_ms
        );
    }
}
