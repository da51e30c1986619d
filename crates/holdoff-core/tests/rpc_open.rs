//! The open-loop request/response load (`rpc_open`): at low load it sees
//! the unloaded round trip of the closed-loop `rpc` app on the same hosts;
//! past the server's capacity its achieved rate levels off and its latency
//! grows with the length of the run (requests queue).

mod common;

use common::TwoHosts;
use serde_json::Value;

/// Client and server: xeon-modern, NAPI, 2 cores, an i210 with EITR 0
/// each, linked at 1 Gb/s. Runs application `name` of `kind` from "client"
/// to "server" with its other `settings` lines; returns its summary.
fn run(duration_ms: u64, kind: &str, name: &str, settings: &str) -> Value {
    let app = format!(
        "kind = \"{kind}\"\nname = \"{name}\"\nhost = \"client\"\nto = \"server\"\n{settings}"
    );
    let text = TwoHosts {
        head: &format!("name = \"t\"\nseed = 3\nduration_ms = {duration_ms}"),
        hosts: ["client", "server"],
        profile: "xeon-modern",
        chip: "i210",
        host_extra: ["driver = \"napi\"\ncores = 2"; 2],
        nic_extra: "[hosts.nics.moderation]\nkind = \"static\"\neitr_us = 0",
        link_extra: "rate = \"1G\"",
        apps: &format!("[[apps]]\n{app}"),
        ..TwoHosts::default()
    }
    .toml();
    common::summary(&text)["apps"][0].clone()
}

fn p(app: &Value, q: &str) -> f64 {
    app["latency_us"][q].as_f64().unwrap()
}

#[test]
fn low_load_sees_the_closed_loop_round_trip() {
    let rpc = run(50, "rpc", "rr", "");
    // 2000 requests/s with a round trip near 30 us: the chance that another
    // request is in flight during one (1 - exp(-rate x rtt)) is about 6 %,
    // so the median is an unloaded round trip. The open-loop client measures
    // from the intended send time, which adds its own wake-up (timer ->
    // context switch, a few us on this profile) that the closed-loop
    // client, already running when it writes, does not pay.
    let open = run(200, "rpc_open", "load", "rate_rps = 2000\nconnections = 64");
    let (a, b) = (p(&rpc, "p50"), p(&open, "p50"));
    assert!(
        b >= a * 0.95 && b <= a * 1.10 + 5.0,
        "rpc p50 {a} us, rpc_open p50 {b} us"
    );
    let ro = &open["rpc_open"];
    // Poisson count over 0.2 s at 2000/s: mean 400, sd 20.
    let done = ro["completed"].as_f64().unwrap();
    assert!((done - 400.0).abs() < 5.0 * 20.0, "{ro}");
    assert_eq!(ro["dropped"], 0);
}

#[test]
fn past_saturation_throughput_levels_off_and_latency_grows() {
    // One server thread computing 50 us per request serves at most 20 000
    // requests/s. Offered 30 000/s and 40 000/s, the achieved rates stay
    // at or below that and within a few percent of each other; requests
    // wait in the connections' queues, so the median latency of a 100 ms
    // run is larger than that of a 50 ms run (the queue grows by ~10 000
    // requests/s at 30 000/s offered).
    let app = |duration_ms: u64, rate: u32| {
        let settings = format!(
            "rate_rps = {rate}\nconnections = 32\nmax_outstanding = 4096\nservice_ns = 50000"
        );
        run(duration_ms, "rpc_open", "load", &settings)
    };
    let a30 = app(100, 30_000);
    let a40 = app(100, 40_000);
    let r30 = a30["rpc_open"]["achieved_rps"].as_f64().unwrap();
    let r40 = a40["rpc_open"]["achieved_rps"].as_f64().unwrap();
    assert!(r30 <= 20_000.0 && r40 <= 20_000.0, "{r30} {r40}");
    assert!(r30 > 15_000.0, "{r30}");
    assert!((r40 - r30).abs() / r30 < 0.05, "{r30} {r40}");
    let short = app(50, 30_000);
    assert!(
        p(&a30, "p50") > 1.5 * p(&short, "p50"),
        "{} vs {}",
        p(&a30, "p50"),
        p(&short, "p50")
    );
}

#[test]
fn drawn_sizes_agree_between_client_and_server() {
    // Requests of 64 or 300 bytes and responses of 64 or 1400 bytes, drawn
    // per request: the server must find each request's end where the client
    // put it, or the connection stalls. At 5000 requests/s (far below
    // capacity) every request but those in flight at the end completes, and
    // the mean response size is (64 + 1400) / 2 = 732 bytes (1000 samples:
    // sd of the mean 668 / sqrt(1000) = 21; 5 sd).
    let a = run(
        200,
        "rpc_open",
        "load",
        r#"rate_rps = 5000
connections = 8
request_sizes = [{ bytes = 64, weight = 1 }, { bytes = 300, weight = 1 }]
response_sizes = [{ bytes = 64, weight = 1 }, { bytes = 1400, weight = 1 }]"#,
    );
    let ro = &a["rpc_open"];
    let done = ro["completed"].as_u64().unwrap();
    assert!(ro["outstanding"].as_u64().unwrap() <= 8, "{ro}");
    assert_eq!(
        done + ro["outstanding"].as_u64().unwrap(),
        ro["issued"].as_u64().unwrap()
    );
    let mean = a["rx_bytes"].as_f64().unwrap() / done as f64;
    assert!((mean - 732.0).abs() < 5.0 * 21.0, "mean response {mean}");
}
