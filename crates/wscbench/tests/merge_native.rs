//! `wscbench merge-native`: k6 instances' native reports merged from files, as k6-operator's
//! runners leave them.

mod common;

use common::wscbench;

fn report(instance: u32, received: u64, own: &str, cross: &str) -> String {
    let histogram = |buckets: &str| {
        format!(
            r#"{{"lowest_trackable_us":1,"highest_trackable_us":60000000,"significant_figures":3,"buckets":[{buckets}]}}"#
        )
    };
    format!(
        r#"{{"format":"wscbench-native/1","instance":"runner-{instance}","instance_id":{instance},"process_cpu_ns":2000000000,
        "counters":{{"sessions":5,"sessions_closed":5,"chat_sent":30,"chat_received":{received}}},
        "latency_us":{},"cross_instance_latency_us":{}}}"#,
        histogram(own),
        histogram(cross)
    )
}

#[test]
fn merging_two_runners_reports_adds_counters_and_keeps_cross_instance_latency_apart() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    std::fs::write(&a, report(1, 100, "[1000,2],[2000,1]", "[9000,4]")).unwrap();
    std::fs::write(&b, report(2, 200, "[3000,1]", "[8000,2]")).unwrap();
    let out = wscbench()
        .arg("merge-native")
        .args([&a, &b])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let merged: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(merged["chat_received"], 300);
    assert_eq!(merged["chat_sent"], 60);
    assert_eq!(merged["sessions"], 10);
    assert_eq!(merged["process_cpu_s"], 4.0);
    assert_eq!(merged["latency"]["count"], 4, "own-instance chats only");
    // Within the histogram's 3 significant figures.
    let max_ms = merged["latency"]["max_ms"].as_f64().unwrap();
    assert!((max_ms - 3.0).abs() < 0.01, "{max_ms}");
    assert_eq!(merged["cross_instance_latency"]["count"], 6);
    assert_eq!(merged["instances"][1]["instance_id"], 2);
}

#[test]
fn a_missing_or_foreign_report_is_one_error_line() {
    let dir = tempfile::tempdir().unwrap();
    let foreign = dir.path().join("summary.json");
    std::fs::write(&foreign, r#"{"metrics":{}}"#).unwrap();
    for file in [dir.path().join("absent.json"), foreign] {
        let out = wscbench().arg("merge-native").arg(&file).output().unwrap();
        assert!(!out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.starts_with("error: "), "{stderr}");
    }
}
