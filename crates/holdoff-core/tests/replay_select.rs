//! Latency of selected traffic: a replay's `latency_of` selector marks the
//! frames it matches and the sink reports their latency apart. The captures
//! are written here, so every expected count follows from how the file was
//! built; bad selectors are validation errors naming the key.

mod common;

use common::capture::{ip_frame, replay_scenario, tmp, LE};
use holdoff_core::api;
use serde_json::Value;

/// 400 frames, 20 us apart (50 000 frames/s, a light load: nothing is
/// dropped). Frame i, by i mod 4:
/// 0: UDP 10.0.1.1:40000 -> 10.0.0.2:5000, DSCP 46 (EF), 200 bytes;
/// 1: TCP 10.0.1.7:5000 -> 10.0.0.2:80, DSCP 0, 200 bytes;
/// 2: UDP 10.0.1.1:40001 -> 10.0.0.3:9000, DSCP 10, 1000 bytes;
/// 3: UDP 10.0.1.9:40002 -> 10.0.0.2:9001, DSCP 0, 1514 bytes.
/// So: port 5000 matches kinds 0 and 1 (100 + 100), DSCP 46 kind 0 (100),
/// address 10.0.0.3 kind 2 (100), size [100, 1000] kinds 0-2 (300).
fn capture(name: &str) -> String {
    let mut b = LE.header();
    for i in 0..400u64 {
        let f = match i % 4 {
            0 => ip_frame(200, 17, 46, [10, 0, 1, 1], [10, 0, 0, 2], 40000, 5000),
            1 => ip_frame(200, 6, 0, [10, 0, 1, 7], [10, 0, 0, 2], 5000, 80),
            2 => ip_frame(1000, 17, 10, [10, 0, 1, 1], [10, 0, 0, 3], 40001, 9000),
            _ => ip_frame(1514, 17, 0, [10, 0, 1, 9], [10, 0, 0, 2], 40002, 9001),
        };
        b.extend(LE.record(1_000_000 + i * 20_000, &f, None));
    }
    let path = tmp(name);
    std::fs::write(&path, &b).unwrap();
    path.display().to_string()
}

fn scenario(capture: &str, latency_of: &str) -> String {
    replay_scenario(capture, 20, "", "", latency_of)
}

fn run(capture: &str, latency_of: &str) -> Value {
    let out = api::run_toml(&scenario(capture, latency_of), None).unwrap();
    let r: Value = serde_json::from_str(&out.report_json).unwrap();
    let s = &r["summary"];
    // The counts below assume every frame reached the sink.
    assert_eq!(s["ledger"]["injected"], 400);
    assert_eq!(s["ledger"]["delivered"], 400, "{}", s["ledger"]);
    s.clone()
}

#[test]
fn each_selector_counts_the_frames_the_capture_was_built_with() {
    let cap = capture("select.pcap");
    for (sel, want, text) in [
        ("latency_of = { port = 5000 }", 200, "port 5000"),
        ("latency_of = { dscp = 46 }", 100, "dscp 46"),
        (
            "latency_of = { address = \"10.0.0.3\" }",
            100,
            "address 10.0.0.3",
        ),
        (
            "latency_of = { size = [100, 1000] }",
            300,
            "size 100-1000 bytes",
        ),
        // Both keys must match: port 5000 and DSCP 46 is kind 0 only.
        (
            "latency_of = { port = 5000, dscp = 46 }",
            100,
            "port 5000, dscp 46",
        ),
    ] {
        let s = run(&cap, sel);
        let sink = &s["apps"][0];
        let got = &sink["latency_selected"];
        assert_eq!(got["selector"], text, "{sel}");
        assert_eq!(got["packets"], want, "{sel}");
        assert_eq!(got["latency_us"]["count"], want, "{sel}");
        assert_eq!(sink["latency_us"]["count"], 400, "{sel}");
        assert_eq!(
            s["generators"][0]["capture"]["selected_frames"], want,
            "{sel}"
        );
    }
}

#[test]
fn a_selector_matching_every_frame_reports_the_same_latency_as_all_traffic() {
    // Every frame is 200 to 1514 bytes: the selected histogram receives the
    // same values as the all-traffic one, so every figure is equal.
    let cap = capture("all.pcap");
    let s = run(&cap, "latency_of = { size = [0, 1514] }");
    let sink = &s["apps"][0];
    assert_eq!(sink["latency_selected"]["latency_us"], sink["latency_us"]);
}

#[test]
fn a_selector_that_matches_nothing_is_reported_as_zero() {
    let cap = capture("none.pcap");
    let s = run(&cap, "latency_of = { port = 1 }");
    let got = &s["apps"][0]["latency_selected"];
    assert_eq!(got["packets"], 0);
    assert!(got["latency_us"].is_null());
    assert_eq!(s["generators"][0]["capture"]["selected_frames"], 0);
}

#[test]
fn without_a_selector_no_selected_fields_appear() {
    let cap = capture("plain.pcap");
    let s = run(&cap, "");
    assert!(s["apps"][0].get("latency_selected").is_none());
    assert!(s["generators"][0]["capture"]
        .get("selected_frames")
        .is_none());
}

#[test]
fn bad_selectors_are_errors_naming_the_key() {
    let cap = capture("bad.pcap");
    for (sel, field, says) in [
        ("{ port = 70000 }", "latency_of.port", "0 to 65535"),
        ("{ dscp = 64 }", "latency_of.dscp", "0 to 63"),
        ("{ size = [300, 64] }", "latency_of.size", "reversed"),
        ("{ size = [64] }", "latency_of.size", "give two"),
        (
            "{ address = \"10.0.0.300\" }",
            "latency_of.address",
            "IPv4 or IPv6",
        ),
        ("{}", "latency_of", "at least one of"),
        ("{ prot = 5000 }", "prot", "unknown field"),
    ] {
        let text = scenario(&cap, &format!("latency_of = {sel}"));
        let e = api::validate_toml(&text).unwrap_err().to_string();
        assert!(e.contains(field), "{sel}: {e}");
        assert!(e.contains(says), "{sel}: {e}");
    }
    // Only for replay.
    let text = scenario(&cap, "latency_of = { port = 5000 }")
        .replace(
            "pattern = \"replay\"",
            "pattern = \"constant\"\nrate_pps = 1000",
        )
        .replace(&format!("capture = \"{cap}\""), "");
    assert!(text.contains("rate_pps = 1000"), "{text}");
    let e = api::validate_toml(&text).unwrap_err().to_string();
    assert!(e.contains("generators[0].latency_of"), "{e}");
}
