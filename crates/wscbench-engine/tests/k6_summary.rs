//! Reading a real `handleSummary` output (recorded from a smoke run of scenarios/steady.js
//! against the profile-b Go server on this machine).

use wscbench_engine::k6::parse_summary;

#[test]
fn a_recorded_steady_smoke_summary_gives_sessions_chats_latency_and_errors() {
    let text = std::fs::read_to_string(format!("{}/tests/fixtures/k6-summary-steady-smoke.json", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let summary = parse_summary(&text).unwrap();
    let m = &summary.metrics;
    assert_eq!((m.sessions, m.chat_sent, m.chat_received), (10, 69, 621));
    assert_eq!((m.ws_msgs_sent, m.ws_msgs_received), (89, 721));
    assert!((m.connect_p95_ms - 74.67987224999999).abs() < 1e-9);
    assert!((m.latency.p95_ms - 8.831787109375).abs() < 1e-9);
    assert!((m.latency.p50_ms - 1.453125).abs() < 1e-9);
    assert!((m.latency.p99_ms - 26.785449218749985).abs() < 1e-9);
    assert!((m.latency.max_ms - 27.333251953125).abs() < 1e-9);
    assert_eq!(summary.errors.total(), 0);
    assert_eq!(summary.test_run_duration_ms.map(|d| d.round()), Some(8044.0));
}
