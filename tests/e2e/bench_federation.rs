//! `flotilla bench federation` end to end with tiny parameters: it starts
//! its own hub and hosts, finishes, and emits `flotilla.bench.federation.v1`
//! with every figure present. Only the shape is checked, never timing.

use flotilla_tests::TestHome;
use serde_json::Value;

fn number(v: &Value, path: &[&str]) -> f64 {
    let mut at = v;
    for key in path {
        at = &at[*key];
    }
    at.as_f64()
        .unwrap_or_else(|| panic!("{} is not a number in {v}", path.join(".")))
}

#[test]
fn bench_federation_emits_its_figures_as_json() {
    let home = TestHome::new();
    let figures = home.json(&[
        "bench",
        "federation",
        "--messages",
        "5",
        "--hosts",
        "3",
        "--peers-per-host",
        "2",
    ]);
    assert_eq!(figures["schema"], "flotilla.bench.federation.v1");
    assert!(figures["machine"].is_string());
    for key in ["rtt_p50_us", "rtt_p99_us", "per_sec"] {
        assert!(number(&figures, &["echo", key]) > 0.0, "echo.{key}");
    }
    let cross = &figures["cross_host"];
    assert_eq!(cross["latency_messages"], 5);
    assert_eq!(cross["senders"], 4);
    assert_eq!(cross["messages"], 4);
    for key in [
        "latency_p50_us",
        "latency_p99_us",
        "latency_p50_ratio",
        "latency_p99_ratio",
        "per_sec",
        "throughput_ratio",
    ] {
        assert!(
            number(&figures, &["cross_host", key]) > 0.0,
            "cross_host.{key}"
        );
    }
    let scale = &figures["scale"];
    assert_eq!(scale["hosts"], 3);
    assert_eq!(scale["peers_per_host"], 2);
    for key in [
        "link_all_ms",
        "roster_whole_ms",
        "hub_rss_idle_kib",
        "hub_rss_linked_kib",
        "rss_per_host_kib",
        "roster_one_host_ms",
        "roster_all_ms",
        "roster_ratio",
        "roster_all_bytes",
        "reconnect_all_ms",
        "reconnect_roster_whole_ms",
    ] {
        assert!(number(&figures, &["scale", key]) >= 0.0, "scale.{key}");
    }
}
