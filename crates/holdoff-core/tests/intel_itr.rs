//! The Intel 700/800 Series parts (X710/XL710 under Linux i40e, E810 under
//! Linux ice) at saturation: the tuning guides' stated baselines and the
//! interrupt rate limit (INTRL, `rx-usecs-high`) as closed forms (issue 34).
//!
//! Closed forms. At saturation a receive cause is pending whenever a
//! vector's countdown ends, so a vector asserts once per interval I: over a
//! run of T with the first frame at t0 ~ 0 it takes floor((T - t0) / I) + 1
//! interrupts, i.e. 1e6 / I [us] per second. The Intel "700 Series Linux
//! Performance Tuning Guide" (334019) states rx-usecs 84 "approximately
//! 12,000 interrupts/s" (1e6 / 84 = 11 905) and 62 about 16,000 (16 129);
//! the "800 Series Linux Performance Tuning Guide" (636781) states 80 about
//! 12,500 (1e6 / 80 = 12 500). Both guides: rx-usecs-high (INTRL) caps the
//! vector at 1e6 / value interrupts/s, independent of adaptive moderation
//! on the 700 Series; the register counts 4 us (i40e INTRL_REG_TO_USEC,
//! ice ice_write_intrl), so a value is held rounded down to 4 us. With both
//! an ITR and an INTRL the spacing is the larger of the two (the model's
//! minimum-spacing reading of the rate limit; docs/models/ice.md).
//!
//! The host is `ideal` (every CPU cost 0): interrupts never wait for a CPU.

mod common;
use common::run;
use holdoff_core::packet::Packet;
use holdoff_core::units::{BitsPerSec, Nanos, SimTime};
use holdoff_core::wire::LinkDir;
use serde_json::Value;

/// One port of `chip` on an ideal Linux NAPI host with 4 queues, fed 1
/// Mpps of 64-B frames over 4 flows (250 kpps a queue: at least 12 frames
/// in any interval of 50 us or more, so every vector is saturated), for
/// `ms`, under the moderation table `moderation`.
fn scenario(chip: &str, rate: &str, moderation: &str, ms: u64) -> Value {
    let toml = format!(
        r#"
name = "intel-itr"
seed = 1
duration_ms = {ms}
sample_interval_us = 100000

[[hosts]]
name = "dut"
profile = "ideal"
driver = "napi"

[[hosts.nics]]
name = "eth0"
chip = "{chip}"
queues = 4

[hosts.nics.moderation]
{moderation}

[[generators]]
name = "gen"
pattern = "constant"
rate_pps = 1000000
frame_bytes = 64
flows = 4

[[links]]
a = "gen"
b = "dut.eth0"
rate = "{rate}"

[[apps]]
kind = "udp_sink"
name = "sink"
host = "dut"
"#
    );
    run(&toml)
}

/// Per-vector interrupt counts of the first port.
fn vector_counts(r: &Value) -> Vec<u64> {
    r["summary"]["ports"][0]["vectors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["interrupts"].as_u64().unwrap())
        .collect()
}

/// floor(T / I) and floor(T / I) + 1: the counts a saturated vector with
/// spacing `interval_ns` can take over `ms` (the first frame arrives a
/// fraction of an interval after 0).
fn saturated(ms: u64, interval_ns: u64) -> std::ops::RangeInclusive<u64> {
    let k = ms * 1_000_000 / interval_ns;
    k..=k + 1
}

fn assert_rate(r: &Value, ms: u64, interval_ns: u64, what: &str) {
    let ok = saturated(ms, interval_ns);
    for (i, n) in vector_counts(r).into_iter().enumerate() {
        assert!(
            ok.contains(&n),
            "{what}: vector {i} took {n} interrupts in {ms} ms, closed form {ok:?}"
        );
    }
    assert_eq!(
        r["summary"]["drops"]["rx_ring_full"].as_u64().unwrap_or(0),
        0
    );
}

#[test]
fn the_700_series_guide_baselines_84_and_62_us() {
    // 84 us: floor(20 ms / 84 us) = 238 -> 238..239 per vector, i.e.
    // 11 900..11 950/s against the guide's 1e6 / 84 = 11 905 ("about
    // 12,000"). 62 us: floor(20 ms / 62 us) = 322 -> 16 100..16 150/s
    // against 1e6 / 62 = 16 129 ("about 16,000").
    for (us, rate_per_s) in [(84u64, 11_905u64), (62, 16_129)] {
        assert_eq!((1_000_000 + us / 2) / us, rate_per_s, "rounded");
        let m = format!("kind = \"i40e\"\nadaptive_rx = false\nadaptive_tx = false\nrx_usecs = {us}\ntx_usecs = {us}");
        let r = scenario("x710", "10G", &m, 20);
        assert_rate(&r, 20, us * 1000, &format!("x710 rx-usecs {us}"));
    }
}

#[test]
fn the_800_series_guide_baseline_80_us() {
    // 80 us: floor(20 ms / 80 us) = 250 -> 250..251 per vector, 12 500/s
    // (the guide: "80 ... approximately 12,500 interrupts/s"). The same on
    // the 25G and the 100G part: the ITR counts 2 us on both.
    for (chip, rate) in [("e810-c", "100G"), ("e810-xxv", "25G")] {
        let m = "kind = \"ice\"\nadaptive_rx = false\nadaptive_tx = false\nrx_usecs = 80\ntx_usecs = 80";
        let r = scenario(chip, rate, m, 20);
        assert_rate(&r, 20, 80_000, chip);
    }
}

#[test]
fn rx_usecs_high_caps_the_rate_at_one_over_the_limit() {
    // ITR off (rx-usecs 0), INTRL 100 us: the vector is spaced by the rate
    // limit alone, 1e6 / 100 = 10 000/s: 200..201 in 20 ms. With rx-usecs
    // 50 under it the larger spacing (100 us) still holds; with rx-usecs
    // 120 over it the ITR does (8 333/s: floor(20 ms / 120 us) = 166).
    for (itr, high, spacing_us) in [(0u64, 100u64, 100u64), (50, 100, 100), (120, 100, 120)] {
        let m = format!(
            "kind = \"ice\"\nadaptive_rx = false\nadaptive_tx = false\nrx_usecs = {itr}\ntx_usecs = {itr}\nrx_usecs_high = {high}"
        );
        let r = scenario("e810-c", "100G", &m, 20);
        assert_rate(
            &r,
            20,
            spacing_us * 1000,
            &format!("ice itr {itr} intrl {high}"),
        );
    }
}

#[test]
fn i40e_rate_limit_holds_under_adaptive_itr_and_rounds_down_to_4_us() {
    // The 700 Series guide: rx-usecs-high is independent of adaptive-rx.
    // 236 us (the largest, 0x3B x 4) caps every vector at 1e6 / 236 = 4 237/s
    // however short the adaptive ITR (2 to 126 us): floor(20 ms / 236 us) =
    // 84 -> 84..85. 62 us is held as 60 (15 x 4 us): 1e6 / 60 = 16 667/s,
    // floor(20 ms / 60 us) = 333 -> 333..334 with the ITR off.
    let r = scenario("xl710", "40G", "kind = \"i40e\"\nrx_usecs_high = 236", 20);
    assert_rate(&r, 20, 236_000, "i40e adaptive + intrl 236");
    let m = "kind = \"i40e\"\nadaptive_rx = false\nadaptive_tx = false\nrx_usecs = 0\ntx_usecs = 0\nrx_usecs_high = 62";
    let r = scenario("x710", "10G", m, 20);
    assert_rate(&r, 20, 60_000, "i40e intrl 62 held as 60");
}

#[test]
fn a_100g_link_carries_148_8_million_64_byte_frames_a_second() {
    // 64-B frames take 84 B of line (preamble, SFD, IFG): 672 bits / 100e9
    // = 6.72 ns each. 10 000 000 back to back end at exactly 67.2 ms, i.e.
    // 1e9 / 6.72 = 148 809 523.8 frames/s; every frame ends within 1 ns of
    // its exact time (the remainder is carried, never lost).
    let mut l = LinkDir::new(BitsPerSec(100_000_000_000), Nanos(0));
    let frame = Packet {
        frame_bytes: 64,
        ..Packet::EMPTY
    };
    let n = 10_000_000u64;
    let mut end = SimTime::ZERO;
    for i in 1..=n {
        end = l.send(SimTime::ZERO, frame).end;
        l.arrived();
        if i % 1_000_003 == 0 {
            let exact_ps = i * 6720;
            assert!(exact_ps / 1000 - end.as_ns() <= 1, "frame {i}: {end:?}");
        }
    }
    assert_eq!(end, SimTime(67_200_000));
    let fps = n as f64 * 1e9 / end.as_ns() as f64;
    assert!((fps - 148_809_523.8).abs() < 1.0, "{fps}");
}
