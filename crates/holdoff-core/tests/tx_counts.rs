//! The TX counts a moderation sample carries are the frames the driver's CPU
//! posted since the previous call (FreeBSD em/igc AIM counts at encap,
//! `*_isc_txd_encap`: "Sent data accounting for AIM"). A CPU posts one
//! frame per send-path cost at most, so on a one-core host with no
//! service-time variance a sample taken `gap` after the previous one counts
//! at most `gap / c + 1` frames, `c` the cheapest send (the profile's TX
//! cost of a pure ACK or a data segment, whichever is less, plus the TDT
//! write, plus the per-packet hook). Before the counts followed the CPU, a
//! segment's sends were all counted when it started: a CPU-bound iperf
//! sender's samples then held 36 to 45 frames 300 to 400 us apart, where
//! the bound with the siftr hook below (about 11.1 us a frame) is 28 to 37,
//! and AIM went from bulk to low on them (bulk -> low needs more than 35
//! packets in one interval).

use holdoff_core::api;
use holdoff_core::host::profile;

const HOOK_NS: u64 = 10_990;

/// One of the two hosts: an 82546 port with FreeBSD AIM (enable_aim 1),
/// FreeBSD TCP accounting, and `load` (the sender's siftr hook).
fn host(name: &str, variance: &str, load: &str) -> String {
    format!(
        r#"
[[hosts]]
name = "{name}"
profile = "p4-xeon-2004"
driver = "napi"
variance = "{variance}"
[hosts.tcp]
skb_truesize_bytes = 0
{load}
[[hosts.nics]]
name = "em2"
chip = "82546"
rx_ring = 1024
tx_ring = 1024
[hosts.nics.moderation]
kind = "freebsd-aim"
enable_aim = 1
"#
    )
}

fn scenario(variance: &str) -> String {
    let hook = format!("[hosts.load]\npacket_hook_ns = {HOOK_NS}");
    format!(
        r#"
name = "cpu-bound-sender"
seed = 3
duration_ms = 300
sample_interval_us = 100000
{}{}
[[links]]
a = "sender.em2"
b = "receiver.em2"
rate = "1G"

[[apps]]
kind = "iperf"
name = "iperf3"
host = "sender"
to = "receiver"
"#,
        host("sender", variance, &hook),
        host("receiver", variance, "")
    )
}

/// The cheapest send on the sender [ns].
fn cheapest_send_ns() -> u64 {
    let p = profile::by_name("p4-xeon-2004").expect("preset");
    let tx = p.tx_packet_ns.as_ns();
    let ack = p.tx_ack_ns.map_or(tx, |a| a.as_ns());
    tx.min(ack) + p.mmio_write_ns.as_ns() + HOOK_NS
}

#[test]
fn no_sample_counts_more_frames_than_the_cpu_could_post() {
    let out = api::run_toml_recorded_in(&scenario("none"), None, None, &mut |_| true, None, true)
        .expect("runs");
    let (rows, _) = out.samples.expect("recorded");
    let c = cheapest_send_ns();
    let mut prev = 0u64;
    let mut checked = 0;
    let mut busiest = 0.0f64;
    for r in rows.iter().filter(|r| r.port == 0) {
        let now = r.sample.now.as_ns();
        let bound = (now - prev) / c + 1;
        assert!(
            r.sample.tx_packets <= bound,
            "{} frames counted in the {} ns before {now}: the CPU posts at most {bound}",
            r.sample.tx_packets,
            now - prev
        );
        busiest = busiest.max(r.sample.tx_packets as f64 / bound as f64);
        prev = now;
        checked += 1;
    }
    // The sender is CPU-bound: thousands of calls, and some intervals full.
    assert!(checked > 500, "{checked} calls");
    assert!(busiest > 0.5, "no interval near the bound ({busiest:.2})");
}

#[test]
fn a_cpu_bound_sender_stays_in_the_bulk_class() {
    // With the counts at the CPU's pace a 250 us bulk interval holds at most
    // 250 / 11.1 + 1 = 23 frames; AIM leaves bulk only on more than 35
    // packets and 25000 bytes in one interval (em_newitr), so once bulk the
    // sender stays bulk and its readback is 4002 (1e9 / (976 * 256)).
    let out = api::run_toml_recorded_in(&scenario("none"), None, None, &mut |_| true, None, true)
        .expect("runs");
    let (rows, _) = out.samples.expect("recorded");
    let leaves_bulk = rows
        .iter()
        .filter(|r| r.port == 0)
        .filter(|r| {
            let s = &r.sample;
            s.tx_packets.max(s.rx_packets) > 35 && s.tx_bytes.max(s.rx_bytes) > 25_000
        })
        .count();
    assert_eq!(leaves_bulk, 0, "intervals that would move bulk -> low");
    let report: serde_json::Value = serde_json::from_str(&out.report_json).unwrap();
    let sender = &report["summary"]["ports"][0];
    assert_eq!(sender["port"], "sender.em2");
    assert_eq!(sender["vectors"][0]["freebsd_interrupt_rate"], 4002);
}
